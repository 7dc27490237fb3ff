package emu

import (
	"encoding/binary"
	"errors"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// responder is the receive side of a QP; guarded by qp.rmu.
type responder struct {
	epsn uint32 // next expected PSN
	msn  uint32
	rqCI uint32 // receive WQEs consumed
	// In ERR: when flushRecvs last looked for posted receives (zero: not
	// since the QP entered ERR).
	rqFlushAt  time.Time
	rre        bool
	rwe        bool
	rae        bool
	atomicMode uint8
	minRNR     uint8
	nakSent    bool

	// A WRITE in progress (after FIRST, before LAST).
	wActive bool
	wMem    *span
	wOff    uint64
	wLeft   uint64
	wTotal  uint64

	// A SEND in progress: the receive WQE being filled.
	sActive bool
	sIdx    uint32
	sSG     [maxSGEPerWQE]target
	sDS     [maxSGEPerWQE]mlx5.DataSeg // ParseRecvWQE's scratch
	sN      int
	sOff    uint64
	sCap    uint64

	// Receive WQEs read ahead from an RQ in device memory (rqEntry):
	// rqN entries from index rqBase, copied with the DBR that posted them.
	rqBuf  []byte
	rqBase uint32
	rqN    uint32
	rqDBR  [4]byte
	rqB    batch

	// SENDs whose payload lands with the CQE, in one batch for a burst
	// (stageRecv, flushStaged): their payload bytes, pieces and CQEs.
	staged []stagedRecv
	pre    []preWrite
	stBuf  []byte
	stUsed int

	// Replay of the last atomic for a duplicate request.
	atomicPSN  uint32
	atomicOrig uint64
	haveAtomic bool

	f wire.Frame

	// An ACK held back while a burst of requests from the same QP goes on
	// (Frame.More); guarded by rmu like the rest.
	held  wire.Frame
	holds int // requests whose ACK is held (0: none)

	// WRITE packets whose landing waits for the burst (land.go).
	land landing

	// The last lookup of an R_Key (mr.go).
	mrs mrCache
}

// maxHeldAcks bounds how many requests one ACK may cover: a long burst
// still ACKs every so often, so that the requester's window moves.
const maxHeldAcks = 16

// deliver is the NIC's wire handler.
func (n *NIC) deliver(f *wire.Frame) {
	if f.Opcode.IsRequest() {
		n.respond(f)
		return
	}
	n.queueResponse(f)
}

// reply sends a response frame from QP q; rmu held (responses never take
// rmu on the receiving side, so holding it across Send cannot deadlock).
func (q *qp) reply(req *wire.Frame, op wire.Opcode, psn uint32, syn wire.Syndrome) *wire.Frame {
	return q.replyIn(&q.resp.f, req, op, psn, syn)
}

// replyIn builds the response of reply in f (never req itself). It zeroes
// f and sets the fields one by one: a composite literal is built on the
// stack and copied into f with wide loads of its narrow stores, which
// stall (replyIn was about a quarter of BenchmarkRespondWrite64 so).
func (q *qp) replyIn(f *wire.Frame, req *wire.Frame, op wire.Opcode, psn uint32, syn wire.Syndrome) *wire.Frame {
	*f = wire.Frame{}
	f.Opcode, f.DstQPN, f.PSN, f.SrcQPN = op, req.SrcQPN, psn&mask24, q.qpn
	f.SrcGID, f.DstGID = wire.GID(q.nic.gid), req.SrcGID
	f.AETH.Syndrome, f.AETH.MSN = syn, q.resp.msn&mask24
	f.Route = req.Route
	return f
}

// ack acknowledges the requests up to psn. When the next request on the
// connection is already there and from the same QP (req.More), the ACK is
// held back and the next one covers it (ACKs are cumulative), up to
// maxHeldAcks requests; respond sends a held ACK once a request comes
// without More, and before any other response of the QP.
func (q *qp) ack(req *wire.Frame, psn uint32) {
	if q.uc {
		return
	}
	r := &q.resp
	if req.More && r.holds < maxHeldAcks {
		if h := &r.held; r.holds > 0 && h.DstQPN == req.SrcQPN && h.DstGID == req.SrcGID && h.Route == req.Route {
			// The held ACK goes to the same requester on the same route:
			// of what replyIn would build, only the PSN and the MSN
			// differ (the rest of it is the QP's or constant).
			h.PSN, h.AETH.MSN = psn&mask24, r.msn&mask24
		} else {
			q.replyIn(h, req, wire.OpAck, psn, wire.AckSyndrome(31))
		}
		r.holds++
		return
	}
	a := q.reply(req, wire.OpAck, psn, wire.AckSyndrome(31))
	r.holds = 0 // this ACK covers the held one
	if !q.landPending() {
		return // a packet before failed: its NAK went instead
	}
	noteSince("ack", q.qpn, int64(psn), 0, time.Time{})
	q.nic.port.Reply(a)
}

// send sends a response other than a plain ACK, after the deferred
// packets landed and the held ACK (if any) left; rmu held.
func (q *qp) send(f *wire.Frame) {
	if q.flushHeld() {
		q.nic.port.Reply(f)
	}
}

// flushHeld lands the deferred packets and sends the held ACK, if any; rmu
// held. It reports false when a deferred packet failed (and was NAKed in
// place of the ACK).
func (q *qp) flushHeld() bool {
	if !q.landPending() {
		return false
	}
	r := &q.resp
	if r.holds == 0 {
		return true
	}
	r.holds = 0
	if !q.dead {
		noteSince("ack-held", q.qpn, int64(r.held.PSN), 0, time.Time{})
		q.nic.port.Reply(&r.held)
	}
	return true
}

// nak answers a request with a NAK; class C errors (access, invalid
// request, operational) also move the responder QP to ERR, before the NAK
// leaves (a requester that sees its error can query the responder's state).
func (q *qp) nak(req *wire.Frame, code wire.NakCode) { q.nakCause(req, code, 0) }

// nakCause is nak with the vendor syndrome (mlx5.VendorSynEmu*) naming the
// check that failed. A remote access NAK carries it back to the requester
// in the AETH's MSN field, which is otherwise unused there: the responder
// is in ERR and the requester, which fails the request, reads no MSN of a
// NAK. The requester writes it into its REM_ACCESS_ERR completion. This is
// the emulator's own extension; a ConnectX says nothing of the cause.
func (q *qp) nakCause(req *wire.Frame, code wire.NakCode, cause uint8) {
	if code != wire.NakPSNSequenceError {
		q.resp.wActive, q.resp.sActive = false, false
		q.toError(nakEvent(code))
	}
	if q.uc {
		return
	}
	f := q.reply(req, wire.OpAck, req.PSN, wire.NakSyndrome(code))
	if code == wire.NakRemoteAccess && cause != 0 {
		f.AETH.MSN = uint32(cause)
	}
	q.send(f)
}

// nakEvent is the asynchronous event of a responder QP that a class C
// error moves to ERR: an access violation (WQ_ACCESS_ERROR), an invalid
// request (WQ_INVAL_REQ_ERROR), or an operational error of its own
// (WQ_CATAS_ERROR).
func nakEvent(code wire.NakCode) mlx5.EventType {
	switch code {
	case wire.NakRemoteAccess:
		return mlx5.EventWQAccessError
	case wire.NakInvalidRequest:
		return mlx5.EventWQInvalReqError
	}
	return mlx5.EventWQCatasError
}

// respErrorEvent is the event of a responder QP that a receive error
// moves to ERR: a local protection error on the receive buffer is an
// access violation, a message the receive cannot take an invalid request.
func respErrorEvent(syn mlx5.Syndrome) mlx5.EventType {
	switch syn {
	case mlx5.SyndromeLocalProtErr:
		return mlx5.EventWQAccessError
	case mlx5.SyndromeLocalLengthErr, mlx5.SyndromeRemoteInvalReqErr:
		return mlx5.EventWQInvalReqError
	}
	return mlx5.EventWQCatasError
}

// accessNak is the NAK for a failed access to responder memory: a
// deregistered (or invalidated) region is a remote access error, any other
// failure (a GPU copy) a remote operational error.
func accessNak(err error) wire.NakCode {
	if errors.Is(err, errRetired) {
		return wire.NakRemoteAccess
	}
	return wire.NakRemoteOperation
}

// respond executes a request packet at its destination QP. (No defers:
// with the returns of respondLocked they would not be open-coded, and
// their bookkeeping was about 15% of a small request's CPU in a profile of
// BenchmarkRespondWrite64.)
func (n *NIC) respond(f *wire.Frame) {
	q := n.qpByNum(f.DstQPN)
	if q == nil {
		n.stats.requestsDropped.Add(1)
		return
	}
	t0 := timelineStart()
	q.rmu.Lock()
	q.respondLocked(f)
	if !f.More {
		// The burst ends here (or this request came alone): its deferred
		// packets land, its held ACK leaves.
		q.flushHeld()
	}
	q.rmu.Unlock()
	n.flushCQs() // after rmu is released: the receive CQEs of this request
	if !t0.IsZero() {
		noteSince("request", f.DstQPN, int64(f.PSN), int64(f.PayloadLen()), t0)
	}
}

// respondLocked is respond's work on QP q; rmu held.
func (q *qp) respondLocked(f *wire.Frame) {
	n := q.nic
	st := q.state.Load()
	if q.dead || (st != stRTR && st != stRTS) || f.SrcQPN != q.remoteQPN || f.SrcGID != wire.GID(q.rgid) {
		n.stats.requestsDropped.Add(1)
		return // dropped, as a NIC drops packets for no matching connection
	}
	r := &q.resp
	if ((r.land.pending() && !plainWrite(f.Opcode)) || (len(r.staged) > 0 && !isSend(f.Opcode))) && !q.landPending() {
		return // the deferred packets and staged receives land before anything else happens
	}
	if d := (f.PSN - r.epsn) & mask24; d != 0 {
		if q.uc {
			r.wActive, r.sActive = false, false
			r.epsn = f.PSN
		} else if d < 1<<23 {
			if !r.nakSent {
				r.nakSent = true
				q.send(q.reply(f, wire.OpAck, r.epsn, wire.NakSyndrome(wire.NakPSNSequenceError)))
			}
			return
		} else {
			q.duplicate(f)
			return
		}
	}
	r.nakSent = false
	switch f.Opcode {
	case wire.OpWriteFirst, wire.OpWriteOnly, wire.OpWriteOnlyImm, wire.OpWriteMiddle, wire.OpWriteLast, wire.OpWriteLastImm:
		q.onWrite(f)
	case wire.OpSendFirst, wire.OpSendOnly, wire.OpSendOnlyImm, wire.OpSendMiddle, wire.OpSendLast, wire.OpSendLastImm,
		wire.OpSendOnlyInv, wire.OpSendLastInv:
		q.onSend(f)
	case wire.OpReadRequest:
		if q.onRead(f) {
			r.epsn = (r.epsn + uint32(packets(uint64(f.RETH.DMALength), q.mtu))) & mask24
			r.msn++
		}
	default:
		if q.onAtomic(f) {
			r.epsn = (r.epsn + 1) & mask24
			r.msn++
		}
	}
}

// duplicate answers a request whose PSN was already executed.
func (q *qp) duplicate(f *wire.Frame) {
	r := &q.resp
	switch {
	case f.Opcode == wire.OpReadRequest:
		q.onRead(f)
	case f.Opcode.HasAtomicETH():
		if r.haveAtomic && r.atomicPSN == f.PSN {
			a := q.reply(f, wire.OpAtomicAck, f.PSN, wire.AckSyndrome(31))
			a.AtomicAck = r.atomicOrig
			q.send(a)
		}
	case f.AckReq:
		q.ack(f, (r.epsn-1)&mask24)
	}
}

// plainWrite reports whether op is a WRITE packet without an immediate.
// isSend reports whether op is a SEND packet.
func isSend(op wire.Opcode) bool {
	switch op {
	case wire.OpSendFirst, wire.OpSendMiddle, wire.OpSendLast, wire.OpSendLastImm, wire.OpSendOnly, wire.OpSendOnlyImm,
		wire.OpSendLastInv, wire.OpSendOnlyInv:
		return true
	}
	return false
}

func plainWrite(op wire.Opcode) bool {
	switch op {
	case wire.OpWriteFirst, wire.OpWriteMiddle, wire.OpWriteLast, wire.OpWriteOnly:
		return true
	}
	return false
}

func (q *qp) onWrite(f *wire.Frame) {
	r := &q.resp
	op := f.Opcode
	first := op == wire.OpWriteFirst || op == wire.OpWriteOnly || op == wire.OpWriteOnlyImm
	last := op != wire.OpWriteFirst && op != wire.OpWriteMiddle
	if first {
		if !r.rwe {
			q.nakCause(f, wire.NakRemoteAccess, mlx5.VendorSynEmuQPAccess)
			return
		}
		n := uint64(f.RETH.DMALength)
		if n > 1<<q.logMsgMax {
			q.nak(f, wire.NakInvalidRequest)
			return
		}
		m := r.mrs.lookup(q.nic, f.RETH.RKey)
		off, ok := m.check(q.pd, f.RETH.VA, n, mlx5.AccessRemoteWrite)
		if !ok {
			q.nakCause(f, wire.NakRemoteAccess, m.cause(q.pd, f.RETH.VA, n, mlx5.AccessRemoteWrite))
			return
		}
		r.wActive, r.wMem, r.wOff, r.wLeft, r.wTotal = true, m.mem, off, n, n
	} else if !r.wActive {
		q.nak(f, wire.NakInvalidRequest)
		return
	}
	p := uint64(f.PayloadLen())
	if p > r.wLeft || (!last && !wholePackets(p, q.mtu)) || (last && p != r.wLeft) {
		q.nak(f, wire.NakInvalidRequest)
		return
	}
	imm := op == wire.OpWriteOnlyImm || op == wire.OpWriteLastImm
	var rw recvWQE
	if imm {
		var ok bool
		if rw, ok = q.takeRecv(f); !ok {
			return
		}
	}
	if p > 0 && !q.placeWrite(f, r.wMem, r.wOff, r.msn, last, imm) {
		return
	}
	r.wOff += p
	r.wLeft -= p
	lastPSN := (f.PSN + uint32(packets(p, q.mtu)) - 1) & mask24
	r.epsn = (lastPSN + 1) & mask24
	if last {
		if p == 0 {
			traceLanded(f.SrcGID, f.SrcQPN) // one with data is stamped as it lands
		}
		r.wActive = false
		r.msn++
		if imm {
			q.consumeRecv(rw)
			q.rcq.push(cqe{opcode: cqeRespWrImm, qpn: q.qpn, wqeCount: uint16(rw.idx), byteCnt: uint32(r.wTotal), imm: f.Imm, uidx: q.uidx, se: f.SE})
		}
	}
	if f.AckReq {
		q.ack(f, lastPSN)
	}
}

// recvWQE is a receive WQE taken from the RQ.
type recvWQE struct{ idx uint32 }

// takeRecv reads the next receive WQE (of the QP's RQ or its SRQ) into the
// SEND cursor. A zero-size RQ NAKs an invalid request, an empty RQ an RNR.
func (q *qp) takeRecv(f *wire.Frame) (recvWQE, bool) {
	r := &q.resp
	if q.rqT == 3 {
		q.nak(f, wire.NakInvalidRequest)
		return recvWQE{}, false
	}
	var idx uint32
	var sg []byte
	p := q.pd
	if q.srq != nil {
		p = q.srq.pd
		buf := make([]byte, 1<<q.srq.stride)
		var ok bool
		var err error
		if idx, sg, ok, err = q.srq.take(buf); err != nil {
			q.nak(f, wire.NakRemoteOperation)
			return recvWQE{}, false
		} else if !ok {
			q.rnr(f)
			return recvWQE{}, false
		}
	} else {
		idx = r.rqCI
		var ok bool
		var err error
		if sg, ok, err = q.rqEntry(idx); err != nil {
			q.nak(f, wire.NakRemoteOperation)
			return recvWQE{}, false
		} else if !ok {
			q.rnr(f)
			return recvWQE{}, false
		}
	}
	r.sN, r.sCap, r.sOff = 0, 0, 0
	segs, err := mlx5.ParseRecvWQE(r.sDS[:0], sg, uint16(idx))
	if err == nil && len(segs) > len(r.sSG) {
		err = mlx5.SyndromeLocalLengthErr
	}
	if err != nil {
		syn := mlx5.SyndromeLocalQPOpErr
		var we *mlx5.WQEError
		var s mlx5.Syndrome
		switch {
		case errors.As(err, &we):
			syn = we.Syndrome
		case errors.As(err, &s):
			syn = s
		}
		q.respError(idx, syn)
		q.nak(f, wire.NakRemoteOperation)
		return recvWQE{}, false
	}
	for _, d := range segs {
		m := q.nic.lookupMR(d.LKey)
		o, ok := m.check(p, d.Addr, uint64(d.ByteCount), mlx5.AccessLocalWrite)
		if !ok {
			q.respErrorCause(idx, mlx5.SyndromeLocalProtErr, m.cause(p, d.Addr, uint64(d.ByteCount), mlx5.AccessLocalWrite))
			q.nak(f, wire.NakRemoteOperation)
			return recvWQE{}, false
		}
		r.sSG[r.sN] = target{mem: m.mem, off: o, len: uint64(d.ByteCount)}
		r.sN++
		r.sCap += uint64(d.ByteCount)
	}
	return recvWQE{idx: idx}, true
}

// rqReadAhead and rqReadAheadBytes bound the receive WQEs one read of an
// RQ in device memory copies: a quick batch, a few tens of KiB.
const (
	rqReadAhead      = 1024
	rqReadAheadBytes = 32 << 10
)

// rqEntry returns receive WQE idx of the QP's RQ, ok false when software
// has not posted it (the DBR's receive counter is idx). An RQ in host
// memory costs a load of the DBR and a read of the WQE. An RQ in device
// memory is read ahead: when idx is not among the WQEs read last, one
// batch of copies reads the DBR and then up to rqReadAhead WQEs (at most
// rqReadAheadBytes) from idx
// (the copies of a batch run in order, so every WQE the DBR counts was
// written before it was read: software stores the WQE, fences, then the
// DBR), and the receives that follow cost no copy until those are used.
// A WQE software posts again by only advancing the DBR (its bytes the same)
// is read again, as a ConnectX reads every WQE when it comes to it.
func (q *qp) rqEntry(idx uint32) ([]byte, bool, error) {
	r := &q.resp
	stride := uint64(1) << q.rqStr
	size := uint32(1) << q.rqLog
	if q.wq.mem.gpu == nil {
		head, err := q.dbr.mem.load32(q.doff + mlx5.QPDBRRecvOffset)
		if err != nil || head&mlx5.DBRCounterMask == idx&mlx5.DBRCounterMask {
			return nil, false, nil // unreadable DBR: as if nothing was posted
		}
		sg := make([]byte, stride)
		if err := q.wq.mem.read(sg, q.rqOff+uint64(idx&(size-1))*stride); err != nil {
			return nil, false, err
		}
		return sg, true, nil
	}
	if d := idx - r.rqBase; d < r.rqN {
		return r.rqBuf[uint64(d)*stride:][:stride], true, nil
	}
	n := min(size, rqReadAhead, uint32(rqReadAheadBytes/stride))
	if r.rqBuf == nil {
		r.rqBuf = make([]byte, uint64(n)*stride)
	}
	b := &r.rqB
	sameGPU := q.dbr.mem.gpu == q.wq.mem.gpu
	var head uint32
	if sameGPU {
		b.read(q.dbr.mem, q.doff+mlx5.QPDBRRecvOffset, r.rqDBR[:])
	} else {
		h, err := q.dbr.mem.load32(q.doff + mlx5.QPDBRRecvOffset)
		if err != nil {
			return nil, false, nil
		}
		head = h
		if avail := (h - idx) & mlx5.DBRCounterMask; avail < n {
			n = avail
		}
		if n == 0 {
			r.rqBase, r.rqN = idx, 0
			return nil, false, nil
		}
	}
	// The WQEs from idx, in at most two pieces where the ring wraps; they
	// go to rqBuf from its start, so entry idx+k is at k (modulo the ring
	// size, which n never exceeds).
	first := idx & (size - 1)
	k := min(n, size-first)
	b.read(q.wq.mem, q.rqOff+uint64(first)*stride, r.rqBuf[:uint64(k)*stride])
	if k < n {
		b.read(q.wq.mem, q.rqOff, r.rqBuf[uint64(k)*stride:uint64(n)*stride])
	}
	t0 := timelineStart()
	err := b.run()
	if !t0.IsZero() {
		noteSince("rq-read", q.qpn, int64(idx), int64(n), t0)
	}
	if err != nil {
		r.rqN = 0
		return nil, false, err
	}
	if sameGPU {
		head = binary.BigEndian.Uint32(r.rqDBR[:])
	}
	avail := min((head-idx)&mlx5.DBRCounterMask, n)
	r.rqBase, r.rqN = idx, avail
	if avail == 0 {
		return nil, false, nil
	}
	return r.rqBuf[:stride], true, nil
}

// rqFlushEvery is how often a QP in ERR looks again for receives posted
// to an RQ in device memory, each look a batch of copies; an RQ in host
// memory costs a load and is looked at every round.
const rqFlushEvery = time.Millisecond

// flushRecvs completes the receive WQEs posted to the QP's own RQ with
// WR_FLUSH_ERR, one RESP_ERR CQE each on the receive CQ, in order, as a
// ConnectX does for a QP in ERR: those posted when it entered ERR and those
// posted while it stays there (rdma-core's drain relies on the latter). A
// SEND in progress loses its receive; SENDs that landed before the error
// (staged with their CQEs) complete first. The receives of an SRQ stay
// with the SRQ (the QP raised SRQ_LAST_WQE instead). It reports whether it
// flushed any, and when it wants to look again.
func (q *qp) flushRecvs(now time.Time) (bool, time.Time) {
	if q.srq != nil || q.rqT == uint8(mlx5.RQTypeZeroSize) || q.rcq == nil {
		return false, time.Time{}
	}
	q.rmu.Lock()
	defer q.rmu.Unlock()
	r := &q.resp
	if q.dead {
		return false, time.Time{}
	}
	onDevice := q.wq.mem.gpu != nil || q.dbr.mem.gpu != nil
	if onDevice && !r.rqFlushAt.IsZero() && now.Before(r.rqFlushAt.Add(rqFlushEvery)) {
		return false, r.rqFlushAt.Add(rqFlushEvery)
	}
	r.rqFlushAt = now
	q.flushStaged()
	r.sActive, r.wActive = false, false
	n := 0
	for {
		if _, ok, err := q.rqEntry(r.rqCI); err != nil || !ok {
			break
		}
		q.rcq.push(cqe{opcode: cqeRespErr, qpn: q.qpn, wqeCount: uint16(r.rqCI), uidx: q.uidx, syndrome: uint8(mlx5.SyndromeWRFlushErr)})
		r.rqCI++
		n++
	}
	if n > 0 {
		q.rcq.flush()
	}
	if onDevice {
		return n > 0, now.Add(rqFlushEvery)
	}
	return n > 0, time.Time{}
}

// rnr answers with a receiver-not-ready NAK carrying min_rnr_nak.
func (q *qp) rnr(f *wire.Frame) {
	noteSince("rnr-nak", q.qpn, int64(f.PSN), int64(q.resp.rqCI), time.Time{})
	if !q.uc {
		q.send(q.reply(f, wire.OpAck, f.PSN, wire.RNRNakSyndrome(q.resp.minRNR)))
	}
}

func (q *qp) consumeRecv(rw recvWQE) {
	if q.srq == nil {
		q.resp.rqCI = rw.idx + 1
	}
}

// respError writes a responder error CQE for receive WQE idx; the QP is
// in ERR before the CQE can be seen.
func (q *qp) respError(idx uint32, syn mlx5.Syndrome) { q.respErrorCause(idx, syn, 0) }

// respErrorCause is respError with the CQE's vendor syndrome naming the
// check that failed (mlx5.VendorSynEmu*, for LOC_PROT_ERR).
func (q *qp) respErrorCause(idx uint32, syn mlx5.Syndrome, cause uint8) {
	q.flushStaged() // the receives before this one complete first
	q.toError(respErrorEvent(syn))
	q.consumeRecv(recvWQE{idx: idx})
	q.rcq.push(cqe{opcode: cqeRespErr, qpn: q.qpn, wqeCount: uint16(idx), uidx: q.uidx, syndrome: uint8(syn), vendor: cause})
}

func (q *qp) onSend(f *wire.Frame) {
	r := &q.resp
	op := f.Opcode
	first := op == wire.OpSendFirst || op == wire.OpSendOnly || op == wire.OpSendOnlyImm || op == wire.OpSendOnlyInv
	last := op != wire.OpSendFirst && op != wire.OpSendMiddle
	if first {
		rw, ok := q.takeRecv(f)
		if !ok {
			return
		}
		r.sActive, r.sIdx = true, rw.idx
	} else if !r.sActive {
		q.nak(f, wire.NakInvalidRequest)
		return
	}
	p := uint64(f.PayloadLen())
	if r.sOff+p > r.sCap || (!last && !wholePackets(p, q.mtu)) {
		q.respError(r.sIdx, mlx5.SyndromeLocalLengthErr)
		q.nak(f, wire.NakInvalidRequest)
		return
	}
	// How the payload lands: in the CQE (scatter-to-CQE: a message of at
	// most 32 bytes, on a QP created with cs_res; the receive WQE is still
	// taken and its length checked, as for any receive, and the buffer is
	// left untouched), staged with its CQE (the last packet of a SEND with
	// or without immediate into device memory of the receive CQ's GPU:
	// payload and CQE land in the CQ's flush, with those of the SENDs of
	// the same burst), or now. Whatever is not staged waits for the
	// staged receives before it: their effects keep the packets' order.
	inline := q.cs32 && first && last && p <= mlx5.CQEInlineMax && f.Ref == nil
	stage := !inline && last && op != wire.OpSendOnlyInv && op != wire.OpSendLastInv && q.stageable(f)
	if !stage && len(r.staged) > 0 && !q.landPending() {
		return
	}
	if stage && r.stUsed+len(f.Payload) > landMax && !q.flushStaged() {
		return // a staged receive failed: its NAK went, the QP is in ERR
	}
	if !inline && !stage {
		if err := land(r.sSG[:r.sN], r.sOff, f); err != nil {
			// A receive buffer deregistered under the SEND.
			q.respErrorCause(r.sIdx, mlx5.SyndromeLocalProtErr, mlx5.VendorSynEmuKey)
			q.nak(f, wire.NakRemoteOperation)
			return
		}
	}
	r.sOff += p
	lastPSN := (f.PSN + uint32(packets(p, q.mtu)) - 1) & mask24
	r.epsn = (lastPSN + 1) & mask24
	if !last {
		if f.AckReq {
			q.ack(f, lastPSN)
		}
		return
	}
	c := cqe{opcode: cqeRespSend, qpn: q.qpn, wqeCount: uint16(r.sIdx), byteCnt: uint32(r.sOff), uidx: q.uidx, se: f.SE}
	switch op {
	case wire.OpSendOnlyImm, wire.OpSendLastImm:
		c.opcode, c.imm = cqeRespSendImm, f.Imm
	case wire.OpSendOnlyInv, wire.OpSendLastInv:
		if !q.invalidate(f.InvRKey) {
			// The named key cannot be invalidated here: the receive
			// completes in error and the request is refused as invalid
			// (the responder QP goes to ERR).
			q.respError(r.sIdx, mlx5.SyndromeRemoteInvalReqErr)
			q.nak(f, wire.NakInvalidRequest)
			return
		}
		c.opcode = cqeRespSendInv
		binary.BigEndian.PutUint32(c.imm[:], f.InvRKey)
	}
	if inline {
		copy(c.inl[:], f.Payload)
		c.inline = true
	}
	r.sActive = false
	msn := r.msn
	r.msn++
	q.consumeRecv(recvWQE{idx: r.sIdx})
	if stage {
		q.stageRecv(f, c, msn)
		if !f.More || len(r.staged) > maxHeldAcks {
			// The burst ends (or has staged enough): payloads and CQEs
			// land now, before the ACK leaves.
			if !q.flushStaged() {
				return
			}
		}
	} else {
		q.rcq.push(c)
		traceLanded(f.SrcGID, f.SrcQPN)
	}
	if f.AckReq {
		q.ack(f, lastPSN)
	}
}

// stagedRecv is a SEND whose payload lands with its CQE (onSend): the
// CQE, its payload pieces (in resp.stBuf) and what a NAK needs if the
// landing fails.
type stagedRecv struct {
	c     cqe
	psn   uint32 // the last packet's
	msn   uint32 // the responder's MSN before the message
	route wire.Route
	gid   wire.GID
	qpn   uint32
}

// stageable reports whether the last packet of a SEND can land with its
// CQE: its payload is in the frame and fits the staging buffer, and every
// receive buffer piece it lands in is device memory of the GPUMemory of
// the receive CQ's ring.
func (q *qp) stageable(f *wire.Frame) bool {
	r := &q.resp
	g := q.rcq.ring.mem.gpu
	if f.Ref != nil || len(f.Payload) == 0 || len(f.Payload) > landMax || g == nil {
		return false
	}
	off, n := r.sOff, uint64(len(f.Payload))
	for _, t := range r.sSG[:r.sN] {
		if n == 0 {
			break
		}
		if off >= t.len {
			off -= t.len
			continue
		}
		if t.mem.gpu != g {
			return false
		}
		k := min(t.len-off, n)
		n, off = n-k, 0
	}
	return true
}

// stageRecv keeps the last packet of a SEND (stageable) and its CQE c for
// flushStaged: its payload is copied into the QP's staging buffer (the
// frame's is not kept), which the caller made room in.
func (q *qp) stageRecv(f *wire.Frame, c cqe, msn uint32) {
	r := &q.resp
	if r.stBuf == nil {
		r.stBuf = make([]byte, landMax)
	}
	at := r.stUsed
	copy(r.stBuf[at:], f.Payload)
	r.stUsed += len(f.Payload)
	rest := r.stBuf[at:r.stUsed]
	first := len(r.pre)
	off := r.sOff - uint64(len(f.Payload))
	for _, t := range r.sSG[:r.sN] {
		if len(rest) == 0 {
			break
		}
		if off >= t.len {
			off -= t.len
			continue
		}
		k := min(t.len-off, uint64(len(rest)))
		r.pre = append(r.pre, preWrite{mem: t.mem, off: t.off + off, b: rest[:k]})
		rest, off = rest[k:], 0
	}
	c.pre = r.pre[first:len(r.pre):len(r.pre)]
	r.staged = append(r.staged, stagedRecv{c: c, psn: f.PSN, msn: msn, route: f.Route, gid: f.SrcGID, qpn: f.SrcQPN})
}

// flushStaged lands the staged receives: their CQEs go to the receive CQ
// with their payloads, and the CQ's flush writes each payload before the
// CQEs, one batch for all of them (rmu held). The receive buffers are
// pinned for it; if one was deregistered meanwhile, the receives before
// it land, its receive completes RESP_ERR LOCAL_PROT_ERR and its packet is
// NAKed (remote operational error, as a landing that fails at once), the
// held ACK is dropped (the NAK acknowledges what came before) and the
// receives after it are discarded, as a QP in ERR discards what follows
// an error. It reports false in that case.
func (q *qp) flushStaged() bool {
	r := &q.resp
	if len(r.staged) == 0 {
		return true
	}
	defer q.clearStaged()
	if q.dead {
		return true
	}
	ok := len(r.staged)
	var pinned []*span
	for i := range r.staged {
		good := true
		for _, w := range r.staged[i].c.pre {
			if !w.mem.pin() {
				good = false
				break
			}
			pinned = append(pinned, w.mem)
		}
		if !good {
			ok = i
			break
		}
	}
	for i := range r.staged[:ok] {
		q.rcq.push(r.staged[i].c)
	}
	if ok > 0 {
		q.rcq.flush()
	}
	for _, s := range pinned {
		s.unpin()
	}
	for i := range r.staged[:ok] {
		traceLanded(r.staged[i].gid, r.staged[i].qpn)
	}
	if ok == len(r.staged) {
		return true
	}
	st := r.staged[ok]
	r.holds = 0
	r.msn, r.epsn = st.msn, st.psn
	q.toError(respErrorEvent(mlx5.SyndromeLocalProtErr))
	// The region was deregistered: the vendor syndrome says so, as for a
	// landing that fails at once.
	q.rcq.push(cqe{opcode: cqeRespErr, qpn: q.qpn, wqeCount: st.c.wqeCount, uidx: q.uidx, syndrome: uint8(mlx5.SyndromeLocalProtErr), vendor: mlx5.VendorSynEmuKey})
	q.clearStaged()
	r.land.clear() // later than the staged receives: discarded with them
	r.wActive, r.sActive = false, false
	if !q.uc {
		q.nic.port.Reply(q.replyIn(&r.f, &wire.Frame{SrcQPN: st.qpn, SrcGID: st.gid, PSN: st.psn, Route: st.route},
			wire.OpAck, st.psn, wire.NakSyndrome(wire.NakRemoteOperation)))
	}
	return false
}

// clearStaged forgets the staged receives, keeping the buffers.
func (q *qp) clearStaged() {
	r := &q.resp
	clear(r.staged)
	r.staged = r.staged[:0]
	clear(r.pre)
	r.pre = r.pre[:0]
	r.stUsed = 0
}

// invalidate executes the invalidation a SEND with invalidate asks for:
// key must name a live MR of the responder QP's PD whose mkey allows remote
// invalidation (mr.rinval). It reports whether the key was invalidated.
func (q *qp) invalidate(key uint32) bool {
	m := q.nic.lookupMR(key)
	if m == nil || m.pd != q.pd || !m.rinval.Load() {
		return false
	}
	return m.invalid.CompareAndSwap(false, true)
}

// onRead answers a READ request with response packets.
func (q *qp) onRead(f *wire.Frame) bool {
	if !q.resp.rre {
		q.nakCause(f, wire.NakRemoteAccess, mlx5.VendorSynEmuQPAccess)
		return false
	}
	n := uint64(f.RETH.DMALength)
	if n > 1<<q.logMsgMax {
		q.nak(f, wire.NakInvalidRequest)
		return false
	}
	m := q.resp.mrs.lookup(q.nic, f.RETH.RKey)
	off, ok := m.check(q.pd, f.RETH.VA, n, mlx5.AccessRemoteRead)
	if !ok {
		q.nakCause(f, wire.NakRemoteAccess, m.cause(q.pd, f.RETH.VA, n, mlx5.AccessRemoteRead))
		return false
	}
	chunk := uint64(frameChunk(q.mtu))
	var scratch []byte
	for lo := uint64(0); lo < n || lo == 0; lo += chunk {
		hi := lo + chunk
		if hi > n {
			hi = n
		}
		first, last := lo == 0, hi == n
		var op wire.Opcode
		switch {
		case first && last:
			op = wire.OpReadResponseOnly
		case first:
			op = wire.OpReadResponseFirst
		case last:
			op = wire.OpReadResponseLast
		default:
			op = wire.OpReadResponseMiddle
		}
		rsp := q.reply(f, op, f.PSN+uint32(lo/uint64(q.mtu)), wire.AckSyndrome(31))
		pinned := false
		if hi > lo {
			if m.mem.gpu == nil {
				v, ok := m.mem.view(off+lo, hi-lo)
				if !ok {
					q.nak(f, wire.NakRemoteAccess)
					return false
				}
				rsp.Payload, pinned = v, true
			} else {
				if scratch == nil {
					scratch = make([]byte, chunk)
				}
				if err := m.mem.read(scratch[:hi-lo], off+lo); err != nil {
					q.nakCause(f, accessNak(err), mlx5.VendorSynEmuKey)
					return false
				}
				rsp.Payload = scratch[:hi-lo]
			}
		}
		q.send(rsp)
		rsp.Payload = nil
		if pinned {
			m.mem.unpin()
		}
		if last {
			break
		}
	}
	return true
}

// onAtomic executes an atomic request and answers with an ATOMIC ACK.
func (q *qp) onAtomic(f *wire.Frame) bool {
	r := &q.resp
	a := &f.Atomic
	masked := f.Opcode.IsMaskedAtomic()
	if !r.rae || r.atomicMode == 0 {
		q.nakCause(f, wire.NakRemoteAccess, mlx5.VendorSynEmuQPAccess)
		return false
	}
	size := uint64(8)
	if masked {
		if r.atomicMode < 3 {
			q.nak(f, wire.NakInvalidRequest)
			return false
		}
		size = uint64(a.Size)
	}
	if a.VA%size != 0 {
		q.nak(f, wire.NakInvalidRequest)
		return false
	}
	m := r.mrs.lookup(q.nic, a.RKey)
	off, ok := m.check(q.pd, a.VA, size, mlx5.AccessRemoteAtomic)
	if !ok {
		q.nakCause(f, wire.NakRemoteAccess, m.cause(q.pd, a.VA, size, mlx5.AccessRemoteAtomic))
		return false
	}
	orig, err := atomicOp(m.mem, off, f.Opcode, a, size)
	if err != nil {
		q.nakCause(f, accessNak(err), mlx5.VendorSynEmuKey)
		return false
	}
	r.atomicPSN, r.atomicOrig, r.haveAtomic = f.PSN, orig, true
	rsp := q.reply(f, wire.OpAtomicAck, f.PSN, wire.AckSyndrome(31))
	rsp.AtomicAck = orig
	q.send(rsp)
	return true
}

// atomicOp performs the operation on the target and returns the original
// value. Standard 8-byte atomics use the host's byte order
// (atomic_req_8B_endianness_mode = 1); masked atomics big-endian.
func atomicOp(mem *span, off uint64, op wire.Opcode, a *wire.AtomicETH, size uint64) (uint64, error) {
	apply := func(old uint64) uint64 {
		switch op {
		case wire.OpCompareSwap:
			if old == a.Compare {
				return a.SwapAdd
			}
			return old
		case wire.OpFetchAdd:
			return old + a.SwapAdd
		case wire.OpMaskedCompareSwap:
			if (old^a.Compare)&a.CompareMask == 0 {
				return old&^a.SwapMask | a.SwapAdd&a.SwapMask
			}
			return old
		default:
			return fieldAdd(old, a.SwapAdd, a.FieldBoundary, int(size*8))
		}
	}
	be := op == wire.OpMaskedCompareSwap || op == wire.OpMaskedFetchAdd
	if mem.gpu == nil {
		if !mem.pin() {
			return 0, errRetired
		}
		defer mem.unpin()
		p := unsafe.Pointer(&mem.host[off])
		if size == 8 {
			for {
				raw := atomic.LoadUint64((*uint64)(p))
				old := raw
				if be {
					old = bswap64(raw)
				}
				nv := apply(old)
				if be {
					nv = bswap64(nv)
				}
				if atomic.CompareAndSwapUint64((*uint64)(p), raw, nv) {
					return old, nil
				}
			}
		}
		for {
			raw := atomic.LoadUint32((*uint32)(p))
			old := uint64(bswap32(raw))
			nv := bswap32(uint32(apply(old)))
			if atomic.CompareAndSwapUint32((*uint32)(p), raw, nv) {
				return old, nil
			}
		}
	}
	var b [8]byte
	if err := mem.read(b[:size], off); err != nil {
		return 0, err
	}
	var old uint64
	switch {
	case size == 4:
		old = uint64(binary.BigEndian.Uint32(b[:]))
	case be:
		old = binary.BigEndian.Uint64(b[:])
	default:
		old = binary.LittleEndian.Uint64(b[:])
	}
	nv := apply(old)
	switch {
	case size == 4:
		binary.BigEndian.PutUint32(b[:], uint32(nv))
	case be:
		binary.BigEndian.PutUint64(b[:], nv)
	default:
		binary.LittleEndian.PutUint64(b[:], nv)
	}
	return old, mem.write(off, b[:size])
}

// fieldAdd adds b to a as independent fields: a 1 bit in boundary marks the
// most significant bit of a field, whose carry-out is discarded.
func fieldAdd(a, b, boundary uint64, bits int) uint64 {
	var r, carry uint64
	for i := 0; i < bits; i++ {
		s := a>>i&1 + b>>i&1 + carry
		r |= (s & 1) << i
		carry = s >> 1
		if boundary>>i&1 != 0 {
			carry = 0
		}
	}
	return r
}

func bswap64(v uint64) uint64 {
	return uint64(bswap32(uint32(v)))<<32 | uint64(bswap32(uint32(v>>32)))
}

// wholePackets reports whether a non-final frame of p bytes stands for a
// whole number of path-MTU packets.
func wholePackets(p uint64, mtu int) bool { return p > 0 && p%uint64(mtu) == 0 }
