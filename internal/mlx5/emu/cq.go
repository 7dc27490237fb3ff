package emu

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

var cqf = mlx5.CQCFields

// CREATE_CQ input fields beyond the cqc.
var (
	fCQUMEMOffset = mlx5.CreateCQInFields.CQUMEMOffset
	fCQUMEMID     = mlx5.CreateCQInFields.CQUMEMID
	fCQUMEMValid  = mlx5.CreateCQInFields.CQUMEMValid
)

// cq is a completion queue: a ring of 64-byte CQEs in a UMEM and a doorbell
// record in a UMEM.
type cq struct {
	ctx  *devCtx
	cqn  uint32
	ring *umem
	roff uint64
	dbr  *umem
	doff uint64
	log  uint8
	cc   bool
	oi   bool
	uar  *uar
	cqc  [mlx5.CQCLen]byte // as created; QUERY_CQ overlays the live fields
	refs int               // QPs using the CQ; n.mu

	mu      sync.Mutex
	pc      uint32 // producer counter (free-running)
	status  uint8  // 0 OK, 9 overflow, 0xa write failure
	armed   uint8  // cqc.st: 0, 0x6 solicited-armed, 0x9 armed, 0xa fired
	armSN   uint32
	errored bool
	ci      uint32    // consumer counter last read from a DBR in device memory
	pend    []cqeSlot // produced CQEs not yet written to a ring in device memory
	queued  bool      // the CQ is on its NIC's list of CQs to flush

	fmu        sync.Mutex // serialises flushes, held across the copies
	wbuf, wfin []byte     // the flush's staging: bodies first, then final
	batch      batch
}

// cqeSlot is an encoded CQE waiting for a flush.
type cqeSlot struct {
	slot  uint32
	owner uint8
	req   bool // a requester CQE (of qpn, for WQE idx): followed by the stage timing
	qpn   uint32
	idx   uint16
	b     [mlx5.CQESize]byte
}

// CQ status values (cqc.status).
const (
	cqStatusOK       = 0x0
	cqStatusOverflow = 0x9
	cqStatusWriteErr = 0xa
)

// createCQ executes CREATE_CQ; n.mu held.
func (c *devCtx) createCQ(in, out []byte) fwError {
	n := c.nic
	ctxb := in[16:80]
	if mlx5.Get(ctxb, cqf.Status) != 0 || mlx5.Get(ctxb, cqf.ST) != 0 || mlx5.Get(ctxb, cqf.ProducerCounter) != 0 ||
		mlx5.Get(ctxb, cqf.ConsumerCounter) != 0 || mlx5.Get(ctxb, cqf.LastNotifiedIndex) != 0 || mlx5.Get(ctxb, cqf.LastSolicitIndex) != 0 {
		return fwError(SynReserved)
	}
	if mlx5.Get(ctxb, cqf.CQESz) != mlx5.CQESize64 {
		return fwError(SynCQESize)
	}
	if mlx5.GetBool(ctxb, cqf.CQECompEn) || mlx5.Get(ctxb, cqf.MiniCQEResFormat) != 0 || mlx5.Get(ctxb, cqf.MiniCQEResFormatExt) != 0 {
		return fwError(SynCQCompression)
	}
	if mlx5.Get(ctxb, cqf.PageOffset) != 0 {
		return fwError(SynCQPageOffset)
	}
	log := uint8(mlx5.Get(ctxb, cqf.LogCQSize))
	if log > capLogMaxCQSz {
		return fwError(SynCQSize)
	}
	u := n.uars[mlx5.Get32(ctxb, cqf.UARPage)]
	if u == nil || u.ctx != c {
		return fwError(SynCQUAR)
	}
	if !validEQN(mlx5.Get32(ctxb, mlx5.F(0xa0, 32))) {
		return fwError(SynCQEQN)
	}
	ring := c.umemOf(mlx5.Get32(in, fCQUMEMID))
	if ring == nil {
		return fwError(SynCQUMEM)
	}
	roff := mlx5.Get(in, fCQUMEMOffset)
	if !ring.fits(roff, 64<<log, 64) || (ring.mem.base+uintptr(roff))%4096 != 0 {
		return fwError(SynCQUMEMRange)
	}
	if e := checkRingOwned(ring.mem, roff, log, mlx5.GetBool(ctxb, cqf.CC)); e != 0 {
		return e
	}
	dbr := c.umemOf(mlx5.Get32(ctxb, cqf.DBRUMEMID))
	if dbr == nil {
		return fwError(SynCQDBRUMEM)
	}
	doff := mlx5.Get(ctxb, cqf.DBRAddr)
	if !dbr.fits(doff, 8, 8) {
		return fwError(SynCQDBRRange)
	}
	if len(n.cqs) >= 1<<capLogMaxCQ {
		return fwError(SynLimit)
	}
	cqn, _, ok := n.ids.cq.alloc(func(i uint32) bool { return n.cqs[i] != nil })
	if !ok {
		return fwError(SynLimit)
	}
	q := &cq{ctx: c, cqn: cqn, ring: ring, roff: roff, dbr: dbr, doff: doff, log: log,
		cc: mlx5.GetBool(ctxb, cqf.CC), oi: mlx5.GetBool(ctxb, cqf.OI), uar: u}
	copy(q.cqc[:], ctxb)
	n.cqs[q.cqn] = q
	n.refreshCQs()
	ring.refs++
	dbr.refs++
	u.refs++
	c.live++
	mlx5.Set(out, mlx5.ObjIDField, uint64(q.cqn))
	return 0
}

// checkRingOwned refuses a CQ ring that software has not handed to the
// NIC: every entry (entry 0 of a collapsed CQ) must be one no poller takes
// for a completion on the first pass, with the owner bit 1 (the first pass
// is written with owner 0) or the opcode INVALID (0xF, which rdma-core's
// poller skips). A ConnectX reads nothing at CREATE_CQ and would let a
// zeroed ring (opcode REQ, owner 0) pass for 2^log_cq_size successful
// completions that never happened; the emulator refuses it instead, so the
// bug shows where it is (SynCQRingOwned). Initialise op_own to 0xF1
// (mlx5.InitCQEs).
func checkRingOwned(mem *span, off uint64, log uint8, collapsed bool) fwError {
	entries := uint64(1) << log
	if collapsed {
		entries = 1
	}
	const chunk = 1 << 20
	var buf []byte
	for first := uint64(0); first < entries; first += chunk / 64 {
		n := min(entries-first, chunk/64)
		if cap(buf) < int(n*64) {
			buf = make([]byte, n*64)
		}
		b := buf[:n*64]
		if mem.read(b, off+first*64) != nil {
			return fwError(SynCQUMEMRange)
		}
		for i := uint64(0); i < n; i++ {
			if op := b[i*64+63]; op&1 == 0 && op>>4 != uint8(mlx5.CQEInvalid) {
				return fwError(SynCQRingOwned)
			}
		}
	}
	return 0
}

// destroyCQ executes DESTROY_CQ; n.mu held.
func (c *devCtx) destroyCQ(q *cq) fwError {
	if q.refs > 0 {
		return fwError(SynCQBusy)
	}
	q.flush() // what its QPs produced before they went
	n := c.nic
	delete(n.cqs, q.cqn)
	n.refreshCQs()
	q.ring.refs--
	q.dbr.refs--
	q.uar.refs--
	c.live--
	return 0
}

// queryCQ fills QUERY_CQ's output with the live context.
func (q *cq) query(out []byte) {
	b := out[16:80]
	copy(b, q.cqc[:])
	q.mu.Lock()
	mlx5.Set(b, cqf.Status, uint64(q.status))
	mlx5.Set(b, cqf.ST, uint64(q.armed))
	mlx5.Set(b, cqf.ProducerCounter, uint64(q.pc&0xffffff))
	q.mu.Unlock()
	if ci, err := q.dbr.mem.load32(q.doff); err == nil {
		mlx5.Set(b, cqf.ConsumerCounter, uint64(ci&0xffffff))
	}
	mlx5.SetBool(b, cqf.DBRUMEMValid, true)
}

// CQE opcodes (op_own >> 4).
const (
	cqeReq         = 0
	cqeRespWrImm   = 1
	cqeRespSend    = 2
	cqeRespSendImm = 3
	cqeRespSendInv = 4
	cqeReqErr      = 13
	cqeRespErr     = 14
)

var epoch = time.Now()

// cqe is one completion to write.
type cqe struct {
	opcode   uint8 // CQE opcode
	wqeOp    uint8 // WQE opcode (requester) or 0
	qpn      uint32
	wqeCount uint16
	byteCnt  uint32
	imm      [4]byte
	uidx     uint32
	se       bool
	syndrome uint8 // error CQEs
	vendor   uint8
}

// push produces one CQE at the producer position with the pass's owner
// bit. A ring in host memory is written at once; one in device memory
// takes the CQE into the CQ's pending list, which flush writes with the
// other CQEs of the same round in one batch (the NIC flushes at the end of
// every step of its engine and of every request it executes). It returns
// false when the CQ is in error (overflow with oi = 0, or a write to its
// ring failed): the CQE is lost, and every QP that uses the CQ has been
// moved to ERR (see fault).
func (q *cq) push(e cqe) bool {
	c := mlx5.CQE{
		Opcode: mlx5.CQEOpcode(e.opcode), Solicited: e.se, SRQNUIdx: e.uidx & mask24,
		ImmInvalPKey: binary.BigEndian.Uint32(e.imm[:]), ByteCnt: e.byteCnt,
		Timestamp: uint64(time.Since(epoch)), WQEOpcode: mlx5.WQEOpcode(e.wqeOp), QPN: e.qpn, WQECounter: e.wqeCount,
	}
	if e.opcode == cqeReqErr || e.opcode == cqeRespErr {
		c.ByteCnt, c.Timestamp = 0, 0
		c.VendorSyndrome, c.Syndrome = e.vendor, mlx5.Syndrome(e.syndrome)
	}
	var b [mlx5.CQESize]byte
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.errored {
		return false
	}
	n := uint32(1) << q.log
	if !q.oi && !q.roomLocked(n) {
		return false
	}
	slot := q.pc & (n - 1)
	if q.cc {
		slot = 0
	}
	c.Owner = mlx5.CQEOwnerBit(q.pc, uint(q.log))
	if q.ring.mem.gpu != nil {
		s := cqeSlot{slot: slot, owner: c.Owner, req: e.opcode == cqeReq, qpn: e.qpn, idx: e.wqeCount}
		c.Encode(s.b[:])
		q.pend = append(q.pend, s)
		q.pc++
		q.fired(e.se)
		if !q.queued {
			q.queued = true
			q.ctx.nic.queueFlush(q)
		}
		return true
	}
	c.Encode(b[:])
	if err := q.ring.mem.storeLast(q.roff+uint64(slot)*64, b[:]); err != nil {
		q.fault(cqStatusWriteErr)
		return false
	}
	if e.opcode == cqeReq {
		traceAt(traceKey{gid: wire.GID(q.ctx.nic.gid), qpn: e.qpn}, stageCQE, e.wqeCount)
	}
	q.pc++
	q.fired(e.se)
	return true
}

// roomLocked reports whether the CQ (oi = 0) has room for one more CQE,
// reading the consumer counter from the CQ DBR; it puts the CQ in error
// when it has none or the DBR cannot be read. q.mu held. A DBR in device
// memory is read only when the last value read leaves no room: the
// consumer counter only grows, so a stale value errs on the full side.
func (q *cq) roomLocked(n uint32) bool {
	if q.dbr.mem.gpu == nil || (q.pc-q.ci)&0xffffff >= n {
		ci, err := q.dbr.mem.load32(q.doff)
		if err != nil {
			q.fault(cqStatusWriteErr)
			return false
		}
		q.ci = ci
	}
	if (q.pc-q.ci)&0xffffff >= n {
		q.fault(cqStatusOverflow)
		return false
	}
	return true
}

// fired moves an armed CQ to fired; q.mu held.
func (q *cq) fired(se bool) {
	if q.armed == 0x9 || (q.armed == 0x6 && se) {
		q.armed = 0xa
	}
}

// flush writes the pending CQEs of a ring in device memory with one batch
// of copies: first every CQE with an op_own that no poller takes for a
// completion of its pass (opcode INVALID, the previous pass's owner bit),
// then every CQE again with its final op_own. The second copy rewrites
// bytes 0..62 with the values they already have, so a poller that sees a
// CQE's new owner bit sees all of its other bytes, whichever order the
// bytes of one copy land in: the last dword is visible last, as a ConnectX
// writes it. (CQEs of one batch may become visible in any order among
// themselves; each one is complete when it is visible.) A collapsed CQ
// writes only the newest. A failed write puts the CQ in error.
func (q *cq) flush() {
	q.fmu.Lock()
	defer q.fmu.Unlock()
	q.mu.Lock()
	p := q.pend
	q.pend = nil
	q.queued = false
	dead := q.errored && q.status == cqStatusWriteErr
	q.mu.Unlock()
	if len(p) == 0 || dead {
		return
	}
	if q.cc {
		p = p[len(p)-1:]
	}
	size := len(p) * mlx5.CQESize
	if cap(q.wbuf) < size {
		q.wbuf, q.wfin = make([]byte, size), make([]byte, size)
	}
	body, fin := q.wbuf[:size], q.wfin[:size]
	for i := range p {
		b := body[i*mlx5.CQESize : (i+1)*mlx5.CQESize]
		copy(b, p[i].b[:])
		b[mlx5.CQESize-1] = byte(mlx5.CQEInvalid)<<4 | (p[i].owner ^ 1)
		copy(fin[i*mlx5.CQESize:], p[i].b[:])
	}
	// Runs of consecutive slots: one, or two where the batch wraps.
	b := &q.batch
	for _, src := range [][]byte{body, fin} {
		for i := 0; i < len(p); {
			j := i + 1
			for j < len(p) && p[j].slot == p[j-1].slot+1 {
				j++
			}
			b.write(q.ring.mem, q.roff+uint64(p[i].slot)*64, src[i*mlx5.CQESize:j*mlx5.CQESize])
			i = j
		}
	}
	if err := b.run(); err != nil {
		q.mu.Lock()
		q.fault(cqStatusWriteErr)
		q.mu.Unlock()
	} else if tracing.Load() != nil {
		for i := range p {
			if p[i].req {
				traceAt(traceKey{gid: wire.GID(q.ctx.nic.gid), qpn: p[i].qpn}, stageCQE, p[i].idx)
			}
		}
	}
	q.mu.Lock()
	if q.pend == nil {
		q.pend = p[:0]
	}
	q.mu.Unlock()
}

// fault puts the CQ in error with a QUERY_CQ status (overflow 0x9, write
// failure 0xa), as a ConnectX does on a CQ error: it writes no CQE any
// more, and every QP that completes to it moves to ERR (QUERY_QP state
// ERR); their WQEs are flushed without CQEs. q.mu held. Software learns of
// it from QUERY_CQ and QUERY_QP (hardware also raises a CQ_ERROR event).
func (q *cq) fault(status uint8) {
	q.status, q.errored = status, true
	for _, p := range *q.ctx.nic.qpSnap.Load() {
		if (p.scq == q || p.rcq == q) && p.state.Load() != stRST {
			p.toError()
		}
	}
}

// produced returns the producer counter (CQEs written so far).
func (q *cq) produced() uint32 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pc
}

// arm records a CQ arm doorbell (UAR offset 0x20): {sn<<28 | cmd | ci, cqn}.
func (q *cq) arm(word uint32) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.armSN = word >> 28 & 3
	if word>>24&0xf == 1 {
		q.armed = 0x6
	} else {
		q.armed = 0x9
	}
}
