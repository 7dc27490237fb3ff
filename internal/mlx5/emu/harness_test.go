package emu

import (
	"encoding/binary"
	"errors"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// This file is the test harness: it drives the emulator exactly as the
// verbs layer will, through the driver boundary and the PRM builders of
// internal/mlx5.

// hostMem maps n bytes of anonymous memory (never Go heap).
func hostMem(t testing.TB, n int) []byte {
	t.Helper()
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap %d: %v", n, err)
	}
	t.Cleanup(func() { syscall.Munmap(b) })
	return b
}

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

// newNIC creates a NIC closed at the end of the test.
func newNIC(t testing.TB, cfg Config) *NIC {
	t.Helper()
	n, err := NewNIC(cfg)
	if err != nil {
		t.Fatalf("NewNIC: %v", err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("close NIC: %v", err)
		}
	})
	return n
}

// newManualNIC creates a NIC without its engine goroutine: the test drives
// it with round (fuzz targets, to run each input to its end at once).
func newManualNIC(t testing.TB, cfg Config) *NIC {
	t.Helper()
	n, err := makeNIC(cfg, true)
	if err != nil {
		t.Fatalf("makeNIC: %v", err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("close NIC: %v", err)
		}
	})
	return n
}

// qpOpts configures an endpoint.
type qpOpts struct {
	logSQ    uint8
	logCQ    uint8
	logRQ    uint8 // with rq: regular RQ of 2^logRQ entries, 64-byte stride
	rq       bool
	uc       bool
	noDBR    bool
	cdMaster bool
	oi       bool
	cc       bool
	mtu      mlx5.MTU
	retry    uint8
	ackTO    uint8
	noAckTO  bool // ack_timeout 0: no ACK timer, never a retransmission
	rnrRetry uint8
	minRNR   uint8
	sra      uint8
	noAccess bool // rre/rwe/rae off on the QP (on by default)
	atomic   mlx5.AtomicMode
	dataLen  int
	share    *endpoint // use this endpoint's context, PD and UAR page
	gpu      *fakeGPU  // rings, DBRs and data live in this fake GPU memory
	iova     uint64    // the data MR's iova (default: its address)
	srqn     uint32    // receive from this RMP (rq_type SRQ); needs share
	cs32     bool      // cs_res: receives of at most 32 bytes land in the CQE
	mem      func(t testing.TB, n int) []byte
}

func (o *qpOpts) defaults() {
	if o.logSQ == 0 {
		o.logSQ = 6
	}
	if o.logCQ == 0 {
		o.logCQ = 7
	}
	if o.mtu == 0 {
		o.mtu = mlx5.MTU1024
	}
	if o.retry == 0 {
		o.retry = 3
	}
	if o.ackTO == 0 {
		// ~1.07 s, (retry+1) of them before an error: a loaded machine
		// that runs a peer late must not look like a dead peer. Tests of
		// the timers set their own, or step the NIC's clock (hol_test.go).
		o.ackTO = 18
	}
	if o.atomic == 0 {
		o.atomic = mlx5.AtomicMode8B
	}
	if o.dataLen == 0 {
		o.dataLen = 1 << 16
	}
	if o.mem == nil {
		o.mem = hostMem
		if o.gpu != nil {
			o.mem = o.gpu.alloc
		}
	}
	if o.sra == 0 {
		o.sra = 4
	}
}

// endpoint is one QP with its CQs, rings and a data MR.
type endpoint struct {
	t    testing.TB
	nic  *NIC
	dev  mlx5.Device
	pd   mlx5.PD
	uar  mlx5.UAR
	o    qpOpts
	mem  []byte // rings and DBRs
	um   mlx5.UMEM
	cq   mlx5.Obj
	cqn  uint32
	qp   mlx5.Obj
	qpn  uint32
	data []byte
	mr   mlx5.MR

	sq     []byte
	rq     []byte
	cqRing []byte
	qpDBR  []byte
	cqDBR  []byte
	pi     uint16
	rqHead uint32
	ci     uint32
}

const (
	offWQ    = 0
	offCQ    = 1 << 20
	offQPDBR = 3 << 20
	offCQDBR = offQPDBR + 64
	memSize  = 4 << 20
)

func newEndpoint(t testing.TB, nic *NIC, o qpOpts) *endpoint {
	t.Helper()
	o.defaults()
	e := &endpoint{t: t, nic: nic, o: o}
	var err error
	if o.share != nil {
		e.dev, e.pd, e.uar = o.share.dev, o.share.pd, o.share.uar
	} else {
		e.dev, err = nic.Open()
		must(t, err)
		e.pd, err = e.dev.AllocPD()
		must(t, err)
		e.uar, err = e.dev.AllocUAR(mlx5.UARTypeNCDedicated)
		must(t, err)
	}
	dev := e.dev
	e.mem = o.mem(t, memSize)
	e.um, err = dev.RegUMEM(e.addr(e.mem), memSize, mlx5.AccessLocalWrite)
	must(t, err)
	rqBytes := 0
	if o.rq {
		rqBytes = 64 << o.logRQ
	}
	e.rq = e.mem[offWQ : offWQ+rqBytes]
	e.sq = e.mem[offWQ+rqBytes : offWQ+rqBytes+64<<o.logSQ]
	e.cqRing = e.mem[offCQ : offCQ+64<<o.logCQ]
	e.qpDBR = e.mem[offQPDBR : offQPDBR+8]
	e.cqDBR = e.mem[offCQDBR : offCQDBR+8]
	mlx5.InitCQEs(e.cqRing)
	eqn, err := dev.QueryEQN(0)
	must(t, err)
	cin := mlx5.CreateCQIn{CQC: mlx5.CQContext{LogCQSize: o.logCQ, UARPage: e.uar.PageID(), CEQN: uint8(eqn),
		DBRUMEMID: e.um.ID(), DBRUMEMValid: true, DBRAddr: offCQDBR, OI: o.oi, CC: o.cc},
		CQUMEMID: e.um.ID(), CQUMEMOffset: offCQ, CQUMEMValid: true}
	e.cq, e.cqn = e.create(cin.Marshal())
	qpc := mlx5.QPContext{ST: mlx5.STRC, PMState: mlx5.PMStateMigrated, PD: e.pd.PDN(), UARPage: e.uar.PageID(),
		CQNSnd: e.cqn, CQNRcv: e.cqn, LogSQSize: o.logSQ, RQType: mlx5.RQTypeZeroSize, TSFormat: mlx5.TSDefault,
		DBRUMEMValid: true, DBRUMEMID: e.um.ID(), DBRAddr: offQPDBR, CDMaster: o.cdMaster}
	if o.uc {
		qpc.ST = mlx5.STUC
	}
	if o.rq {
		qpc.RQType, qpc.LogRQSize, qpc.LogRQStride = mlx5.RQTypeRegular, o.logRQ, 2
	}
	if o.noDBR {
		qpc.SendDBRMode = mlx5.SendDBRNoDBRExt
	}
	if o.cs32 {
		qpc.CSRes = mlx5.ResScatData32CQE
	}
	if o.srqn != 0 {
		qpc.RQType, qpc.SRQNRMPNXRQN = mlx5.RQTypeSRQ, o.srqn
	}
	qin := mlx5.CreateQPIn{QPC: qpc, WQUMEMID: e.um.ID(), WQUMEMValid: true}
	e.qp, e.qpn = e.create(qin.Marshal())
	if e.data = o.mem(t, o.dataLen); true {
		acc := mlx5.AccessLocalWrite | mlx5.AccessRemoteWrite | mlx5.AccessRemoteRead | mlx5.AccessRemoteAtomic
		iova := o.iova
		if iova == 0 {
			iova = uint64(e.addr(e.data))
		}
		e.mr, err = dev.RegMR(e.pd, e.addr(e.data), uint64(o.dataLen), iova, acc)
		must(t, err)
	}
	t.Cleanup(e.close)
	return e
}

func (e *endpoint) create(in []byte, err error) (mlx5.Obj, uint32) {
	e.t.Helper()
	must(e.t, err)
	out := make([]byte, 16)
	obj, err := e.dev.CreateObj(in, out)
	must(e.t, err)
	return obj, obj.ID()
}

func (e *endpoint) close() {
	for _, f := range []func() error{e.qp.Destroy, e.cq.Destroy, e.mr.Dereg, e.um.Dereg} {
		if err := f(); err != nil {
			e.t.Errorf("teardown: %v", err)
		}
	}
	if e.o.share != nil {
		return
	}
	if err := e.uar.Free(); err != nil {
		e.t.Errorf("free uar: %v", err)
	}
	if err := e.pd.Dealloc(); err != nil {
		e.t.Errorf("dealloc pd: %v", err)
	}
	if err := e.dev.Close(); err != nil {
		e.t.Errorf("close device: %v", err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// modify runs one transition with the builders' input.
func (e *endpoint) modify(in mlx5.ModifyQPIn) error {
	b, err := in.Marshal()
	if err != nil {
		return err
	}
	return e.qp.Modify(b, make([]byte, 16))
}

// connect brings e and p (its peer) through RST -> INIT -> RTR -> RTS with
// the given PSNs.
func (e *endpoint) connect(p *endpoint, sendPSN, rcvPSN uint32) {
	e.t.Helper()
	acc := !e.o.noAccess
	in := mlx5.NewModifyQPIn(mlx5.OpRST2INIT, e.qpn)
	in.QPC.PrimaryAddressPath.VHCAPortNum = 1
	in.QPC.PMState = mlx5.PMStateMigrated
	in.QPC.RRE, in.QPC.RWE, in.QPC.RAE = acc, acc, acc && !e.o.uc
	if acc && !e.o.uc {
		in.QPC.AtomicMode = e.o.atomic
	}
	if e.o.uc {
		in.QPC.RRE = false
	}
	must(e.t, e.modify(in))
	in = mlx5.NewModifyQPIn(mlx5.OpINIT2RTR, e.qpn)
	in.QPC.MTU, in.QPC.LogMsgMax, in.QPC.RemoteQPN, in.QPC.NextRcvPSN = e.o.mtu, 30, p.qpn, rcvPSN
	in.QPC.MinRNRNak, in.QPC.LogRRAMax = e.o.minRNR, 4
	ap := &in.QPC.PrimaryAddressPath
	ap.RGID = p.nic.GID()
	ap.HopLimit, ap.UDPSport, ap.VHCAPortNum = 64, 0xc123, 1
	copy(ap.RMAC[:], p.nic.mac())
	must(e.t, e.modify(in))
	in = mlx5.NewModifyQPIn(mlx5.OpRTR2RTS, e.qpn)
	in.QPC.NextSendPSN, in.QPC.RetryCount, in.QPC.RNRRetry, in.QPC.LogSRAMax = sendPSN, e.o.retry, e.o.rnrRetry, e.o.sra
	in.QPC.PrimaryAddressPath.AckTimeout = e.o.ackTO
	if e.o.noAckTO {
		in.QPC.PrimaryAddressPath.AckTimeout = 0
	}
	must(e.t, e.modify(in))
}

// emuQP returns the emulator's QP behind the endpoint.
func (e *endpoint) emuQP() *qp {
	e.t.Helper()
	e.nic.mu.Lock()
	defer e.nic.mu.Unlock()
	q := e.nic.qps[e.qpn]
	if q == nil {
		e.t.Fatalf("QP 0x%x is not on %s", e.qpn, e.nic.Name())
	}
	return q
}

// pair creates two endpoints on a and b and connects them.
func pair(t testing.TB, a, b *NIC, oa, ob qpOpts) (*endpoint, *endpoint) {
	t.Helper()
	x := newEndpoint(t, a, oa)
	y := newEndpoint(t, b, ob)
	x.connect(y, 0x100, 0x200)
	y.connect(x, 0x200, 0x100)
	return x, y
}

// pagePairs returns two connected pairs whose a-side QPs (options o) share
// one UAR page: x2 rings on x1's.
func pagePairs(t testing.TB, a, b *NIC, o qpOpts) (x1, y1, x2, y2 *endpoint) {
	t.Helper()
	x1, y1 = pair(t, a, b, o, qpOpts{})
	o.share = x1
	x2, y2 = pair(t, a, b, o, qpOpts{})
	return x1, y1, x2, y2
}

// post encodes w at the producer index, publishes it in the DBR (or not,
// DBR-less) and rings the doorbell. It returns the WQE's index.
func (e *endpoint) post(w mlx5.WQE) uint16 {
	e.t.Helper()
	idx := e.postNoDB(w)
	e.ring(w.Ctrl)
	return idx
}

func (e *endpoint) postNoDB(w mlx5.WQE) uint16 {
	e.t.Helper()
	e.lock()
	defer e.unlock()
	w.Ctrl.WQEIndex, w.Ctrl.QPN = e.pi, e.qpn
	idx := e.pi
	if !e.o.noDBR {
		n, err := w.Encode(e.sq)
		must(e.t, err)
		e.pi += uint16(n)
		return idx
	}
	// DBR-less QPs may share a page whose doorbells overwrite each other:
	// publish the WQE with its first 8 ctrl bytes stored last, the order
	// the emulator's recovery scan relies on (doc.go).
	scratch := make([]byte, len(e.sq))
	n, err := w.Encode(scratch)
	must(e.t, err)
	start := int(idx) * 64 % len(e.sq)
	for k := 8; k < n*64; k++ {
		j := (start + k) % len(e.sq)
		e.sq[j] = scratch[j]
	}
	atomic.StoreUint64((*uint64)(unsafe.Pointer(&e.sq[start])), *(*uint64)(unsafe.Pointer(&scratch[start])))
	e.pi += uint16(n)
	return idx
}

// ring publishes the producer index: DBR then doorbell (DBR mode), or a
// doorbell carrying the new PI at 0x600 (DBR-less).
func (e *endpoint) ring(c mlx5.CtrlSeg) {
	e.lock()
	defer e.unlock()
	if e.o.noDBR {
		d := mlx5.SQDoorbellPI(e.qpn, uint32(e.pi))
		atomic.StoreUint64(ptr64(e.uar.BaseAddr()+mlx5.UAROffsetNoDBR), d.Uint64())
		return
	}
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&e.qpDBR[4])), mlx5.BE32Native(uint32(e.pi)))
	c.WQEIndex, c.QPN = e.pi, e.qpn
	d := mlx5.SQDoorbellPI(e.qpn, uint32(e.pi))
	atomic.StoreUint64(ptr64(e.uar.RegAddr()), d.Uint64())
}

// postRecv posts a receive WQE with one data segment.
func (e *endpoint) postRecv(addr uint64, n uint32) {
	e.lock()
	defer e.unlock()
	slot := e.rq[int(e.rqHead&(1<<e.o.logRQ-1))*64:][:64]
	mlx5.DataSeg{ByteCount: n, LKey: e.mr.LKey(), Addr: addr}.Put(slot)
	mlx5.DataSeg{LKey: mlx5.InvalidLKey}.Put(slot[16:])
	e.rqHead++
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&e.qpDBR[0])), mlx5.BE32Native(e.rqHead&0xffff))
}

// poll waits for the next CQE.
func (e *endpoint) poll(timeout time.Duration) (mlx5.CQE, error) {
	deadline := time.Now().Add(timeout)
	log := uint(e.o.logCQ)
	spins := 0
	for {
		slot := e.cqRing[int(e.ci&(1<<log-1))*64:][:64]
		e.lock()
		own := atomic.LoadUint32((*uint32)(unsafe.Pointer(&slot[60])))
		if mlx5.CQEOwned(byte(own>>24), e.ci, log) {
			c, err := mlx5.DecodeCQE(slot)
			e.ci++
			binary.BigEndian.PutUint32(e.cqDBR[0:4], e.ci&0xffffff)
			e.unlock()
			return c, err
		}
		e.unlock()
		spins++
		if spins < 1<<14 {
			runtime.Gosched()
			continue
		}
		if time.Now().After(deadline) {
			return mlx5.CQE{}, errTimeout
		}
		time.Sleep(20 * time.Microsecond)
	}
}

var errTimeout = errors.New("timed out waiting for a CQE")

// tryPoll returns the next CQE if one is there, without waiting.
func (e *endpoint) tryPoll() (mlx5.CQE, bool) {
	log := uint(e.o.logCQ)
	slot := e.cqRing[int(e.ci&(1<<log-1))*64:][:64]
	own := atomic.LoadUint32((*uint32)(unsafe.Pointer(&slot[60])))
	if !mlx5.CQEOwned(byte(own>>24), e.ci, log) {
		return mlx5.CQE{}, false
	}
	c, err := mlx5.DecodeCQE(slot)
	if err != nil {
		e.t.Fatalf("undecodable CQE %d: %v", e.ci, err)
	}
	e.ci++
	binary.BigEndian.PutUint32(e.cqDBR[0:4], e.ci&0xffffff)
	return c, true
}

// resetFast puts the QP back to RTS with its connection as configured,
// without the command path: the NIC forgets its queue state as on 2RST,
// software's PI, DBR and receive head go back to zero. The CQ goes on.
func (e *endpoint) resetFast() {
	q := e.qpObj()
	q.lockBoth()
	q.reset()
	q.apply(stINIT, stRTR)
	q.apply(stRTR, stRTS)
	q.setState(stRTS)
	q.unlockBoth()
	e.pi, e.rqHead = 0, 0
	clear(e.qpDBR)
}

func (e *endpoint) mustPoll() mlx5.CQE {
	e.t.Helper()
	c, err := e.poll(5 * time.Second)
	must(e.t, err)
	return c
}

// queryQP returns the live QP context.
func (e *endpoint) queryQP() mlx5.QPContext {
	e.t.Helper()
	in, err := mlx5.QueryQPIn(e.qpn).Marshal()
	must(e.t, err)
	out := make([]byte, mlx5.QueryQPOutLen)
	must(e.t, e.qp.Query(in, out))
	o, err := mlx5.UnmarshalQueryQPOut(out)
	must(e.t, err)
	return o.QPC
}

func (e *endpoint) va(off int) uint64 { return e.mr.IOVA() + uint64(off) }

// addr is the address the NIC knows b by: its host address, or its fake
// GPU virtual address.
func (e *endpoint) addr(b []byte) uintptr {
	if e.o.gpu != nil {
		return e.o.gpu.va(b)
	}
	return addrOf(b)
}

// lock serialises the test's accesses to fake GPU memory with the
// emulator's copies (a GPU kernel and the NIC agree through the memory
// system; here through the fake's mutex).
func (e *endpoint) lock() {
	if e.o.gpu != nil {
		e.o.gpu.mu.Lock()
	}
}

func (e *endpoint) unlock() {
	if e.o.gpu != nil {
		e.o.gpu.mu.Unlock()
	}
}

func (e *endpoint) sge(off int, n uint32) mlx5.DataSeg {
	return mlx5.DataSeg{ByteCount: n, LKey: e.mr.LKey(), Addr: e.va(off)}
}

func (e *endpoint) raddr(off int) mlx5.RAddrSeg {
	return mlx5.RAddrSeg{Addr: e.va(off), RKey: e.mr.RKey()}
}

var signaled = mlx5.WQEHead{Flags: mlx5.MakeCtrlFlags(mlx5.FenceNone, mlx5.CompletionAlways, false)}

// ptr64 is the 8-byte doorbell register at addr (a UAR page, host memory).
func ptr64(addr uintptr) *uint64 { return (*uint64)(unsafe.Pointer(&hostBytes(addr, 8)[0])) }
