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
	epsn       uint32 // next expected PSN
	msn        uint32
	rqCI       uint32 // receive WQEs consumed
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
	if r.land.pending() && !plainWrite(f.Opcode) && !q.landPending() {
		return // the deferred packets land before anything else happens
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
		head, err := q.dbr.mem.load32(q.doff + mlx5.QPDBRRecvOffset)
		if err != nil || head&mlx5.DBRCounterMask == r.rqCI&mlx5.DBRCounterMask {
			q.rnr(f)
			return recvWQE{}, false
		}
		idx = r.rqCI
		stride := uint64(1) << q.rqStr
		sg = make([]byte, stride)
		if q.wq.mem.read(sg, q.rqOff+uint64(idx&(1<<q.rqLog-1))*stride) != nil {
			q.nak(f, wire.NakRemoteOperation)
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

// rnr answers with a receiver-not-ready NAK carrying min_rnr_nak.
func (q *qp) rnr(f *wire.Frame) {
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
	if land(r.sSG[:r.sN], r.sOff, f) != nil {
		// A receive buffer deregistered under the SEND.
		q.respErrorCause(r.sIdx, mlx5.SyndromeLocalProtErr, mlx5.VendorSynEmuKey)
		q.nak(f, wire.NakRemoteOperation)
		return
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
	traceLanded(f.SrcGID, f.SrcQPN)
	r.sActive = false
	r.msn++
	q.consumeRecv(recvWQE{idx: r.sIdx})
	q.rcq.push(c)
	if f.AckReq {
		q.ack(f, lastPSN)
	}
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
