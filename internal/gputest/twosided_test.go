package gputest

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"testing"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

// Two-sided QPs: rings (receive ring first, send ring after it) and both
// CQs in GPU memory, the doorbell record in CPU_GPU memory (the GPU writes
// the receive word with every handler; a CPU proxy writes the send word),
// exported with the receive CQ.
const (
	tsSQ   = 512 // send ring: above the most SENDs a case has in flight
	tsRQ   = 512 // receive ring and receive CQ
	tsSize = 1024
)

// tsPair is the sending QP on emu0 and the receiving QP on emu1 of one
// handler case, each with a receive queue, connected both ways.
type tsPair struct {
	send, recv *gpunetio.QP
	sendArr    *gpunetio.Mem // device array {send's device QP}
	recvArr    *gpunetio.Mem // device array {recv's device QP}
	closers    []func() error
	monitored  []*gpunetio.QP
}

func (p *tsPair) close(e *env) error {
	var errs []error
	for _, q := range p.monitored {
		errs = append(errs, e.svc.Unmonitor(q))
	}
	for i := len(p.closers) - 1; i >= 0; i-- {
		errs = append(errs, p.closers[i]())
	}
	p.closers = nil
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// gpuUMem registers GPU memory m on d: dma-buf, else nvidia-peermem.
func (e *env) gpuUMem(d *verbs.Dev, m *gpunetio.Mem) (*verbs.UMem, error) {
	fd, err := e.gpu.GetDmabufFD(m.Dev, m.Size)
	if err != nil {
		return d.NewUMem(uintptr(m.Dev), uint64(m.Size), verbs.AccessLocalWrite, nil)
	}
	defer syscall.Close(fd)
	return d.NewUMem(uintptr(m.Dev), uint64(m.Size), verbs.AccessLocalWrite, &verbs.Dmabuf{FD: fd, GPU: e.gpu.VerbsRef()})
}

// tsCQ makes a CQ of n entries whose ring and doorbell record share one GPU
// buffer (every CQE op_own 0xF1, the record zero).
func (e *env) tsCQ(p *tsPair, d *verbs.Dev, n uint32) (*verbs.CQ, error) {
	size := uintptr((int(n)*64 + 8 + 4095) &^ 4095)
	m, err := e.gpu.MemAlloc(size, 4096, gpunetio.MemGPU)
	if err != nil {
		return nil, fmt.Errorf("CQ ring: %w", err)
	}
	p.closers = append(p.closers, m.Free)
	init := make([]byte, size)
	for i := 0; i < int(n); i++ {
		init[i*64+63] = 0xF1
	}
	if err := e.ctx.MemcpyHtoD(cuda.DevPtr(m.Dev), init); err != nil {
		return nil, fmt.Errorf("initialise the CQ ring: %w", err)
	}
	u, err := e.gpuUMem(d, m)
	if err != nil {
		return nil, fmt.Errorf("CQ ring UMEM: %w", err)
	}
	p.closers = append(p.closers, u.Close)
	cq, err := d.NewCQ(verbs.CQConfig{Size: n, UMem: u, Overrun: true})
	if err != nil {
		return nil, err
	}
	p.closers = append(p.closers, cq.Close)
	return cq, nil
}

// tsQP makes and exports one two-sided QP on side s.
func (e *env) tsQP(p *tsPair, s *side, hc handlerCase) (*gpunetio.QP, error) {
	d, err := verbs.OpenDev(s.pd)
	if err != nil {
		return nil, err
	}
	p.closers = append(p.closers, d.Close)
	uar, err := d.NewUAR(verbs.UARNonCacheDedicated)
	if err != nil {
		if uar, err = d.NewUAR(verbs.UARNonCache); err != nil {
			return nil, fmt.Errorf("UAR: %w", err)
		}
	}
	p.closers = append(p.closers, uar.Close)
	scq, err := e.tsCQ(p, d, tsSQ)
	if err != nil {
		return nil, fmt.Errorf("send CQ: %w", err)
	}
	rcq, err := e.tsCQ(p, d, tsRQ)
	if err != nil {
		return nil, fmt.Errorf("receive CQ: %w", err)
	}
	wqSize := uintptr((tsRQ*16 + tsSQ*64 + 4095) &^ 4095)
	wq, err := e.gpu.MemAlloc(wqSize, 4096, gpunetio.MemGPU)
	if err != nil {
		return nil, fmt.Errorf("work-queue buffer: %w", err)
	}
	p.closers = append(p.closers, wq.Free)
	if err := e.ctx.MemsetD8(cuda.DevPtr(wq.Dev), 0, wqSize); err != nil {
		return nil, err
	}
	wqU, err := e.gpuUMem(d, wq)
	if err != nil {
		return nil, fmt.Errorf("work-queue UMEM: %w", err)
	}
	p.closers = append(p.closers, wqU.Close)
	dbr, err := e.gpu.MemAlloc(4096, 4096, gpunetio.MemCPUGPU)
	if err != nil {
		return nil, fmt.Errorf("doorbell record: %w", err)
	}
	p.closers = append(p.closers, dbr.Free)
	if uintptr(dbr.Dev) != dbr.Host {
		return nil, fmt.Errorf("CPU_GPU memory at host %#x is device %#x: the shared doorbell record needs unified addressing", dbr.Host, dbr.Dev)
	}
	hb, err := dbr.HostBytes()
	if err != nil {
		return nil, err
	}
	clear(hb)
	dbrU, err := d.NewUMem(dbr.Host, 4096, verbs.AccessLocalWrite, nil)
	if err != nil {
		return nil, fmt.Errorf("doorbell-record UMEM: %w", err)
	}
	p.closers = append(p.closers, dbrU.Close)
	cfg := verbs.QPConfig{SendCQ: scq, RecvCQ: rcq, SQWR: tsSQ, RQWR: tsRQ, SendMaxSGE: 1, RecvMaxSGE: 1,
		UMem: wqU, DBRUMem: dbrU, UAR: uar}
	if hc.ext == gpunetio.SendNoDBRHW {
		cfg.SendDBRMode = verbs.SendNoDBRExt
	}
	qp, err := d.NewQP(cfg)
	if err != nil {
		return nil, err
	}
	p.closers = append(p.closers, qp.Close)
	h := hc.qp
	if hc.ext == gpunetio.SendNoDBRHW {
		// Export names the handler of a no-DBR SQ (only AUTO resolves to
		// it; the high-level QP does the same).
		h = gpunetio.NICHandlerGPUSMNoDBR
	}
	x, err := e.gpu.ExportQP(qp, scq, rcq, gpunetio.ExportConfig{NICHandler: h, SendDBRModeExt: hc.ext})
	if err != nil {
		return nil, err
	}
	p.closers = append(p.closers, x.Close)
	if hc.want != gpunetio.NICHandlerAuto && x.NICHandler() != hc.want {
		return nil, fmt.Errorf("QP resolved to NIC handler %v, the %s kernels need %v", x.NICHandler(), hc.kernel, hc.want)
	}
	if x.CPUAssisted() {
		if err := e.svc.Monitor(x); err != nil {
			return nil, err
		}
		p.monitored = append(p.monitored, x)
	}
	return x, nil
}

func (e *env) newTSPair(t *testing.T, hc handlerCase) *tsPair {
	t.Helper()
	p := &tsPair{}
	t.Cleanup(func() {
		if !e.abandoned {
			if err := p.close(e); err != nil {
				t.Errorf("release the two-sided QPs: %v", err)
			}
		}
	})
	var err error
	if p.send, err = e.tsQP(p, e.loc, hc); err != nil {
		t.Fatalf("handler %s: sending QP on %s: %v", hc.name, e.loc.name, err)
	}
	if p.recv, err = e.tsQP(p, e.rem, hc); err != nil {
		t.Fatalf("handler %s: receiving QP on %s: %v", hc.name, e.rem.name, err)
	}
	rnr, minRNR := uint8(7), uint8(1)
	for _, c := range []struct {
		qp, peer *verbs.QP
		gid      verbs.GID
	}{{p.send.VerbsQP(), p.recv.VerbsQP(), e.rem.gid}, {p.recv.VerbsQP(), p.send.VerbsQP(), e.loc.gid}} {
		local, err := c.qp.LocalEndpoint(1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.qp.ConnectRC(local, verbs.Endpoint{QPN: c.peer.QPN(), GID: c.gid},
			&verbs.ConnectOptions{PathMTU: verbs.Ptr(verbs.MTU1024), RNRRetry: &rnr, MinRNRTimer: &minRNR}); err != nil {
			t.Fatalf("connect QP 0x%x to 0x%x: %v", c.qp.QPN(), c.peer.QPN(), err)
		}
	}
	f := &fixture{}
	for _, x := range []struct {
		q   *gpunetio.QP
		dst **gpunetio.Mem
	}{{p.send, &p.sendArr}, {p.recv, &p.recvArr}} {
		dp, err := x.q.DeviceQP()
		if err != nil {
			t.Fatal(err)
		}
		if *x.dst, err = e.devArray(f, []cuda.DevPtr{cuda.DevPtr(dp)}); err != nil {
			t.Fatal(err)
		}
	}
	p.closers = append(p.closers, f.closers...)
	return p
}

// twosidedLen and twosidedByte mirror gt_ts_len and gt_ts_byte.
func twosidedLen(idx, size uint32) uint32 { return 8 + (idx*37)%(size-7) }
func twosidedByte(idx, j uint32) byte     { return byte(idx*7 + j*13 + 1) }

// TestTwoSidedGPU runs gt_twosided_<rsm>_<scope>_<nic>: GPU threads post
// receives on the emu1 QP's receive ring in GPU memory, send on the emu0 QP,
// wait for both and check every message that landed (opcode, length, bytes;
// the kernel checks, the host checks the buffer again), in thread scope on a
// GPU-shared QP (2 blocks of 64), warp scope (2 blocks of 64), and block scope
// (one block of 256 threads on a CTA-shared QP), each with and without the
// MCST DUMP, for every NIC handler.
func TestTwoSidedGPU(t *testing.T) {
	e := getEnv(t)
	shapes := []struct {
		rsm, scope  string
		grid, block uint32
	}{
		{"gpu", "thread", 2, 64},
		{"gpu", "warp", 2, 64},
		{"cta", "thread", 1, 256},
	}
	for _, hc := range handlerCases {
		t.Run(hc.name, func(t *testing.T) {
			hc.skipUnsupported(t)
			for _, sh := range shapes {
				for _, mcst := range []uint32{0, 1} {
					name := fmt.Sprintf("%s_%s_mcst%d", sh.rsm, sh.scope, mcst)
					t.Run(name, func(t *testing.T) {
						p := e.newTSPair(t, hc)
						n := sh.grid * sh.block
						if n*tsSize > dataSize {
							t.Fatalf("%d messages of %d bytes do not fit the data region", n, tsSize)
						}
						e.load(t, newImages(byte(mcst)))
						a := e.baseArgs()
						a.qps, a.cqps, a.nqps, a.op = uint64(p.sendArr.Dev), uint64(p.recvArr.Dev), 1, mcst
						a.rkey = be32(e.rem.mr.LKey()) // the receiver's own key, for its receive WQEs and DUMP
						a.size, a.iters = tsSize, 1
						st := e.run(t, launch{kernel: fmt.Sprintf("gt_twosided_%s_%s_%s", sh.rsm, sh.scope, hc.kernel),
							grid: sh.grid, block: sh.block, args: a})
						if st.failures != 0 {
							t.Fatalf("kernel reported %v", st)
						}
						im := e.read(t)
						seen := map[uint32]bool{}
						for i := uint32(0); i < n; i++ {
							b := im.rem[dataOff+int(i)*tsSize:]
							from := binary.LittleEndian.Uint32(b)
							if from >= n || seen[from] {
								t.Fatalf("receive buffer %d holds message %d (twice, or out of range)", i, from)
							}
							seen[from] = true
							for j := uint32(4); j < twosidedLen(from, tsSize); j++ {
								if b[j] != twosidedByte(from, j) {
									t.Fatalf("receive buffer %d (message %d): byte %d is %#x, want %#x", i, from, j, b[j], twosidedByte(from, j))
								}
							}
						}
					})
				}
			}
		})
	}
}
