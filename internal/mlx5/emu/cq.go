package emu

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

var cqf = mlx5.CQCFields

// cqcByte is the cqc's position in CREATE_CQ and QUERY_CQ mailboxes.
const cqcByte = mlx5.CQCMailboxBit / 8

// The CREATE_CQ input field the kernel writes; firmware reads the decoded
// CreateCQIn.
var fCQUMEMValid = mlx5.CreateCQInFields.CQUMEMValid

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

	mu       sync.Mutex
	pc       uint32          // producer counter (free-running)
	status   uint8           // 0 OK, 9 overflow, 0xa write failure
	eqn      uint32          // c_eqn: the EQ of its COMP events
	armed    mlx5.CQArmState // cqc.st
	armSN    uint8           // sn of the last arm taken
	firedSN  int             // sn of the arm that last fired, -1 before any
	solPC    uint32          // producer counter after the last solicited or error CQE
	evDue    bool            // fired with CQEs still pending: the event follows their flush
	flushing bool            // a flush is writing CQEs taken from pend
	errored  bool
	ci       uint32    // consumer counter last read from a DBR in device memory
	pend     []cqeSlot // produced CQEs not yet written to a ring in device memory
	queued   bool      // the CQ is on its NIC's list of CQs to flush

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
	pre   []preWrite // written before the CQEs of the flush
}

// CQ status values (cqc.status).
const (
	cqStatusOK       = uint8(mlx5.CQStatusOK)
	cqStatusOverflow = uint8(mlx5.CQStatusOverflow)
	cqStatusWriteErr = uint8(mlx5.CQStatusWriteFail)
)

// eqnDword is the whole dword c_eqn sits in (the kernel's
// c_eqn_or_apu_element): a value in its upper bits is no EQ of the device.
var eqnDword = mlx5.F(cqf.CEQN.Bit&^31, 32)

// createCQ executes CREATE_CQ; n.mu held. The mailbox is decoded by
// mlx5.UnmarshalCreateCQIn (firmware reads no further than its 272 bytes).
func (c *devCtx) createCQ(in, out []byte) fwError {
	n := c.nic
	cmd, err := mlx5.UnmarshalCreateCQIn(in[:mlx5.CreateCQInLen])
	if err != nil {
		return fwError(SynBadInLen) // not reached: checkLen ran
	}
	x := &cmd.CQC
	ctxb := in[cqcByte : cqcByte+mlx5.CQCLen]
	if x.Status != 0 || x.ST != 0 || x.ProducerCounter != 0 || x.ConsumerCounter != 0 || x.LastNotifiedIndex != 0 || x.LastSolicitIndex != 0 {
		return fwError(SynReserved)
	}
	if x.CQESz != mlx5.CQESize64 {
		return fwError(SynCQESize)
	}
	if x.CQECompEn || x.MiniCQEResFormat != 0 || x.MiniCQEResFormatExt != 0 {
		return fwError(SynCQCompression)
	}
	if x.PageOffset != 0 {
		return fwError(SynCQPageOffset)
	}
	log := x.LogCQSize
	if log > capLogMaxCQSz {
		return fwError(SynCQSize)
	}
	u := n.uars[x.UARPage]
	if u == nil || u.ctx != c {
		return fwError(SynCQUAR)
	}
	if !validEQN(mlx5.Get32(ctxb, eqnDword)) {
		return fwError(SynCQEQN)
	}
	ring := c.umemOf(cmd.CQUMEMID)
	if ring == nil {
		return fwError(SynCQUMEM)
	}
	roff := cmd.CQUMEMOffset
	if !ring.fits(roff, 64<<log, 64) || (ring.mem.base+uintptr(roff))%4096 != 0 {
		return fwError(SynCQUMEMRange)
	}
	if e := checkRingOwned(ring.mem, roff, log, x.CC); e != 0 {
		return e
	}
	dbr := c.umemOf(x.DBRUMEMID)
	if dbr == nil {
		return fwError(SynCQDBRUMEM)
	}
	doff := x.DBRAddr
	if !dbr.fits(doff, 8, 8) {
		return fwError(SynCQDBRRange)
	}
	if len(n.cqs) >= 1<<capLogMaxCQ {
		return fwError(SynLimitCQ)
	}
	cqn, _, ok := n.ids.cq.alloc(func(i uint32) bool { return n.cqs[i] != nil })
	if !ok {
		return fwError(SynLimitCQ)
	}
	q := &cq{ctx: c, cqn: cqn, ring: ring, roff: roff, dbr: dbr, doff: doff, log: log,
		cc: x.CC, oi: x.OI, uar: u, eqn: mlx5.Get32(ctxb, eqnDword), firedSN: -1}
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

// query fills QUERY_CQ's output (out holds QueryCQOutLen bytes: checkLen
// ran): the context as created, reserved bits included, with the live
// status, arm state and counters.
func (q *cq) query(out []byte) {
	c, _ := mlx5.DecodeCQContext(q.cqc[:])
	q.mu.Lock()
	c.Status, c.ST, c.ProducerCounter = q.status, uint8(q.armed), q.pc&mask24
	q.mu.Unlock()
	if ci, err := q.dbr.mem.load32(q.doff + mlx5.CQDBRCIOffset); err == nil {
		c.ConsumerCounter = ci & mask24
	}
	c.DBRUMEMValid = true
	copy(out[cqcByte:], q.cqc[:]) // the bits no member names
	_ = mlx5.QueryCQOut{CQC: c}.MarshalTo(out)
}

// CQE opcodes (op_own >> 4), mlx5's, as the cqe record holds them.
const (
	cqeReq         = uint8(mlx5.CQEReq)
	cqeRespWrImm   = uint8(mlx5.CQERespWrImm)
	cqeRespSend    = uint8(mlx5.CQERespSend)
	cqeRespSendImm = uint8(mlx5.CQERespSendImm)
	cqeRespSendInv = uint8(mlx5.CQERespSendInv)
	cqeReqErr      = uint8(mlx5.CQEReqErr)
	cqeRespErr     = uint8(mlx5.CQERespErr)
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
	ts       uint64 // the timestamp, ns since epoch; 0: the time of the push
	// A receive scattered into the CQE (qpc.cs_res): bytes 0..31 are the
	// payload (inl, zero after byteCnt) and the format is Inline32.
	inline bool
	inl    [mlx5.CQEInlineMax]byte
	// pre are payload pieces that land with the CQE, in device memory of
	// the ring's GPUMemory: the CQ's flush writes them in its batch before
	// any CQE of the batch (onSend's one batch per receive).
	pre []preWrite
}

// preWrite is one piece of a payload that lands in the flush of its CQE:
// b goes to offset off of device span mem.
type preWrite struct {
	mem *span
	off uint64
	b   []byte
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
		Timestamp: e.ts, WQEOpcode: mlx5.WQEOpcode(e.wqeOp), QPN: e.qpn, WQECounter: e.wqeCount,
	}
	if c.Timestamp == 0 {
		c.Timestamp = uint64(time.Since(epoch))
	}
	if e.opcode == cqeReqErr || e.opcode == cqeRespErr {
		c.ByteCnt, c.Timestamp = 0, 0
		c.VendorSyndrome, c.Syndrome = e.vendor, mlx5.Syndrome(e.syndrome)
	}
	if e.inline {
		c.Format = mlx5.CQEFormatInline32
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
		s := cqeSlot{slot: slot, owner: c.Owner, req: e.opcode == cqeReq, qpn: e.qpn, idx: e.wqeCount, pre: e.pre}
		c.Encode(s.b[:])
		if e.inline {
			copy(s.b[:mlx5.CQEInlineMax], e.inl[:])
		}
		q.pend = append(q.pend, s)
		q.pc++
		q.fired(e.se || e.opcode == cqeReqErr || e.opcode == cqeRespErr, true)
		if !q.queued {
			q.queued = true
			q.ctx.nic.queueFlush(q)
		}
		return true
	}
	c.Encode(b[:])
	if e.inline {
		copy(b[:mlx5.CQEInlineMax], e.inl[:])
	}
	if err := q.ring.mem.storeLast(q.roff+uint64(slot)*64, b[:]); err != nil {
		q.fault(cqStatusWriteErr)
		return false
	}
	if e.opcode == cqeReq {
		traceAt(traceKey{gid: wire.GID(q.ctx.nic.gid), qpn: e.qpn}, stageCQE, e.wqeCount)
	}
	q.pc++
	q.fired(e.se || e.opcode == cqeReqErr || e.opcode == cqeRespErr, false)
	return true
}

// roomLocked reports whether the CQ (oi = 0) has room for one more CQE,
// reading the consumer counter from the CQ DBR; it puts the CQ in error
// when it has none or the DBR cannot be read. q.mu held. A DBR in device
// memory is read only when the last value read leaves no room: the
// consumer counter only grows, so a stale value errs on the full side.
func (q *cq) roomLocked(n uint32) bool {
	if q.dbr.mem.gpu == nil || (q.pc-q.ci)&0xffffff >= n {
		ci, err := q.dbr.mem.load32(q.doff + mlx5.CQDBRCIOffset)
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

// fired is called for every CQE produced; sol reports a solicited or an
// error CQE (both fire a CQ armed for solicited completions, as the IBA
// asks). An armed CQ moves to FIRED and writes a COMP event to its EQ:
// at once for a ring in host memory, after the flush that makes the CQE
// visible for one in device memory (pending). q.mu held.
func (q *cq) fired(sol, pending bool) {
	if sol {
		q.solPC = q.pc
	}
	if q.armed == mlx5.CQArmed || (q.armed == mlx5.CQSolicitedArmed && sol) {
		q.fire(pending)
	}
}

// fire moves the CQ to FIRED and raises its COMP event, or leaves it due
// to the next flush when CQEs are pending. q.mu held.
func (q *cq) fire(pending bool) {
	q.armed = mlx5.CQFired
	q.firedSN = int(q.armSN)
	if pending {
		q.evDue = true
		return
	}
	q.ctx.nic.raise(q.eqn, mlx5.CompEQE(q.cqn))
}

// flush writes the pending CQEs of a ring in device memory with one batch
// of copies: first every CQE with an op_own that no poller takes for a
// completion of its pass (opcode INVALID, the previous pass's owner bit),
// then every CQE again with its final op_own. The second copy rewrites
// bytes 0..62 with the values they already have, so a poller that sees a
// CQE's new owner bit sees all of its other bytes, whichever order the
// bytes of one copy land in: the last dword is visible last, as a ConnectX
// writes it. A lone CQE's second copy is its last byte alone (the copies
// of one batch land in order: GPUMemory.Copy). (CQEs of one batch may become visible in any order among
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
	q.flushing = len(p) > 0 && !dead
	q.mu.Unlock()
	if len(p) == 0 || dead {
		q.unref(p)
		return
	}
	all := p
	defer q.unref(all)
	b := &q.batch
	// Payloads that land with their CQEs first: a poller that sees a CQE
	// sees its data (the copies of a batch land in order).
	for i := range p {
		for _, w := range p[i].pre {
			b.write(w.mem, w.off, w.b)
		}
	}
	if q.cc {
		p = p[len(p)-1:]
	}
	t0 := timelineStart()
	defer noteSince("cq-flush", q.cqn, int64(len(p)), 0, t0)
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
	if len(p) == 1 {
		// One CQE (a lone message's, or a collapsed CQ's): its body, then
		// its last byte alone. The copies of a batch land in order, so
		// the body is visible first all the same, and 65 bytes fit in
		// the GPU copier's look (copied without a round trip for staged
		// bytes) where 128 do not.
		off := q.roff + uint64(p[0].slot)*64
		b.write(q.ring.mem, off, body)
		b.write(q.ring.mem, off+mlx5.CQESize-1, fin[mlx5.CQESize-1:])
	} else {
		// Runs of consecutive slots: one, or two where the batch wraps.
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
	}
	err := b.run()
	if err != nil {
		q.mu.Lock()
		q.fault(cqStatusWriteErr)
		q.flushing, q.evDue = false, false
		q.mu.Unlock()
	} else if q.takeDue() {
		q.ctx.nic.raise(q.eqn, mlx5.CompEQE(q.cqn))
	}
	if err == nil && tracing.Load() != nil {
		for i := range p {
			if p[i].req {
				traceAt(traceKey{gid: wire.GID(q.ctx.nic.gid), qpn: p[i].qpn}, stageCQE, p[i].idx)
			}
		}
	}
}

// unref drops the flushed slots' references to payloads and gives their
// list back for reuse.
func (q *cq) unref(p []cqeSlot) {
	for i := range p {
		p[i].pre = nil
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
// it from QUERY_CQ and QUERY_QP, and from the events: CQ_ERROR (syndrome
// CQ_OVERRUN, or CQ_ACCESS_VIOLATION for a failed write) on the CQ, then
// WQ_CATAS_ERROR on each QP it moved to ERR.
func (q *cq) fault(status uint8) {
	if q.errored {
		return
	}
	q.status, q.errored = status, true
	syn := mlx5.CQErrorOverrun
	if status == cqStatusWriteErr {
		syn = mlx5.CQErrorAccessViolation
	}
	q.ctx.nic.raiseAsync(mlx5.CQErrorEQE(q.cqn, syn))
	for _, p := range *q.ctx.nic.qpSnap.Load() {
		if (p.scq == q || p.rcq == q) && p.state.Load() != stRST {
			p.toError(mlx5.EventWQCatasError)
		}
	}
}

// produced returns the producer counter (CQEs written so far).
func (q *cq) produced() uint32 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pc
}

// takeDue ends a flush whose CQEs are written, and reports (and clears) an
// event due after it. CQEs produced meanwhile (pending, for the next
// flush) may include the one that fired: the event then waits for that
// flush.
func (q *cq) takeDue() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.flushing = false
	if len(q.pend) > 0 {
		return false
	}
	due := q.evDue && !q.errored
	q.evDue = false
	return due
}

// unflushed reports whether CQEs produced are not yet visible in a ring in
// device memory: pending, or being written by a flush. q.mu held.
func (q *cq) unflushed() bool { return len(q.pend) > 0 || q.flushing }

// arm records a CQ arm doorbell (UAR offset 0x20): {sn<<28 | cmd | ci, cqn}.
//
// One event per arm: an arm whose sequence number is that of the arm that
// last fired is a repeat of it (software increments sn for each event it
// takes) and is ignored, so a CQ fires again only after software took the
// event and armed anew. An arm whose consumer index is behind the producer
// fires at once: completions software has not consumed are there (for a
// solicited arm, a solicited or error completion among them), so an event
// is never lost between software's last poll and its arm. A CQ in error
// takes no arm. A ring in device memory counts its pending CQEs as
// produced; their event follows their flush.
func (q *cq) arm(word uint32) {
	q.mu.Lock()
	defer q.mu.Unlock()
	sn, cmd, ci := mlx5.DecodeCQArmWord(word)
	if q.errored || (q.armed == mlx5.CQFired && int(sn) == q.firedSN) {
		return
	}
	q.armSN = sn
	if cmd == mlx5.CQArmSolicited {
		q.armed = mlx5.CQSolicitedArmed
	} else {
		q.armed = mlx5.CQArmed
	}
	ahead := (q.pc - ci) & mask24
	if q.cc {
		ahead = 0 // a collapsed CQ keeps no index to compare
	}
	sol := (q.solPC - ci) & mask24
	if ahead != 0 && (q.armed == mlx5.CQArmed || (sol != 0 && sol <= ahead)) {
		q.fire(q.unflushed())
	}
}
