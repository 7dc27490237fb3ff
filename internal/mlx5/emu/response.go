package emu

import (
	"encoding/binary"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// response is a frame for a requester (ACK, NAK, READ response, ATOMIC
// ACK), queued by the wire handler and processed by the engine.
type response struct {
	qpn     uint32
	srcQPN  uint32
	srcGID  wire.GID
	op      wire.Opcode
	psn     uint32
	syn     wire.Syndrome
	msn     uint32 // AETH MSN; of a remote access NAK, the responder's vendor syndrome (nakCause)
	orig    uint64
	payload []byte // a copy (READ responses)
}

// queueResponse copies f into the inbox. Consecutive plain ACKs for one QP
// from one source collapse into the newest (ACKs are cumulative).
func (n *NIC) queueResponse(f *wire.Frame) {
	n.inboxMu.Lock()
	if f.Opcode == wire.OpAck && f.AETH.Syndrome.Kind() == wire.KindACK && len(n.inbox) > 0 {
		if l := &n.inbox[len(n.inbox)-1]; l.op == wire.OpAck && l.qpn == f.DstQPN && l.syn.Kind() == wire.KindACK &&
			l.srcQPN == f.SrcQPN && l.srcGID == f.SrcGID && psnLE(l.psn, f.PSN) {
			l.psn = f.PSN
			n.inboxMu.Unlock()
			return
		}
	}
	rsp := response{qpn: f.DstQPN, srcQPN: f.SrcQPN, srcGID: f.SrcGID, op: f.Opcode, psn: f.PSN, syn: f.AETH.Syndrome, msn: f.AETH.MSN, orig: f.AtomicAck}
	if len(f.Payload) > 0 {
		rsp.payload = append([]byte(nil), f.Payload...)
	}
	n.inbox = append(n.inbox, rsp)
	n.queued.Store(true)
	n.inboxMu.Unlock()
	n.kick()
}

// drainInbox processes the queued responses. A response is applied only
// to a QP in RTS, from the QP's remote QPN at its remote GID; anything else
// is dropped and counted, as a NIC drops packets of no connection.
func (n *NIC) drainInbox(now time.Time, spare []response) ([]response, bool) {
	if !n.queued.Load() {
		return spare, false // nothing queued: no lock, no store (see queued)
	}
	n.inboxMu.Lock()
	batch := n.inbox
	n.inbox = spare[:0]
	n.queued.Store(false)
	n.inboxMu.Unlock()
	for i := range batch {
		rsp := &batch[i]
		applied := false
		if q := n.qpByNum(rsp.qpn); q != nil {
			q.mu.Lock()
			if !q.dead && q.state.Load() == stRTS && rsp.srcQPN == q.remoteQPN && rsp.srcGID == wire.GID(q.rgid) {
				applied = q.onResponse(rsp, now)
			}
			q.mu.Unlock()
		}
		if !applied {
			n.stats.responsesDropped.Add(1)
		}
		rsp.payload = nil
	}
	if len(batch) > 0 {
		noteSince("responses", 0, int64(len(batch)), 0, time.Time{})
	}
	return batch, len(batch) > 0
}

// entryOf finds the outstanding entry whose PSN range holds psn.
func (q *qp) entryOf(psn uint32) *outEntry {
	r := &q.req
	for i := r.ci; i != r.send; {
		e := &r.ent[q.slot(i)]
		if psnLE(e.first, psn) && psnLE(psn, e.last) && e.kind != kLocal {
			return e
		}
		i += e.bbs
	}
	return nil
}

// nakEntry finds the message a fatal NAK (access, invalid request,
// operational error) names. Go-back-N may have rewound the send index below
// messages whose frames the responder still had to process: the responder
// NAKs the first of those that fails, and that NAK ends the message, since
// the requester keeps the PSN range of every message it started. So the
// search runs over whole messages up to the furthest WQE ever started; a
// message found beyond the send index is taken back into the outstanding
// window together with those before it.
func (q *qp) nakEntry(psn uint32) *outEntry {
	r := &q.req
	for i := r.ci; i != r.hsend; {
		e := &r.ent[q.slot(i)]
		if e.kind != kLocal && psnLE(e.first, psn) && psnLE(psn, e.end) {
			if dist(r.ci, i) >= dist(r.ci, r.send) {
				q.restore(i + e.bbs)
			}
			return e
		}
		i += e.bbs
	}
	return nil
}

// restore moves the send index forward to to over WQEs that go-back-N
// rewound: their entries still describe what was transmitted the first
// time.
func (q *qp) restore(to uint16) {
	r := &q.req
	if r.partial { // the message being sent again: its first transmission went further
		e := &r.ent[q.slot(r.cur)]
		e.last, e.partial = e.end, false
	}
	for i := r.send; i != to; {
		e := &r.ent[q.slot(i)]
		e.last, e.partial = e.end, false
		if !e.done && (e.kind == kRead || e.kind == kAtomic) {
			r.nRA++
		}
		r.npsn = (e.end + 1) & mask24
		i += e.bbs
	}
	r.send, r.partial = to, false
}

// ackUpTo marks WRITE/SEND (and local) entries whose last PSN is <= psn as
// done. The acknowledged PSN (lastAcked, the bottom of the response window)
// stops short of a READ or atomic still waiting for its response: an ACK
// that passes one means its response is late or lost, and the response
// must still be accepted (or the READ retried after the timeout).
func (q *qp) ackUpTo(psn uint32, now time.Time) {
	r := &q.req
	progressed := false
	ackTo, held := psn, false
	for i := r.ci; i != r.send; {
		e := &r.ent[q.slot(i)]
		if e.kind != kLocal && !psnLE(e.last, psn) {
			break
		}
		if e.partial {
			break // its frames so far are acknowledged, the message is not done
		}
		if !e.done {
			switch e.kind {
			case kAcked, kLocal:
				e.done = true
				progressed = true
			case kRead, kAtomic:
				if !held {
					ackTo, held = (e.first-1)&mask24, true
				}
			}
		}
		i += e.bbs
	}
	if progressed || (ackTo != r.lastAcked && psnLE(r.lastAcked, ackTo)) {
		if psnLE(r.lastAcked, ackTo) {
			r.lastAcked = ackTo
		}
		r.retries = 0
		r.rnrRetries = 0
		r.lastProgress = now
	}
}

// onResponse applies one response to the requester; q.mu held. It
// reports false for a response that names no packet in flight (an ACK
// beyond the highest PSN sent, a NAK, READ response or ATOMIC ACK of no
// outstanding request), which it ignores.
func (q *qp) onResponse(rsp *response, now time.Time) bool {
	r := &q.req
	if !r.inWindow(rsp.psn, rsp.op == wire.OpAck && rsp.syn.Kind() == wire.KindACK) {
		return false
	}
	switch rsp.op {
	case wire.OpAck:
		switch rsp.syn.Kind() {
		case wire.KindACK:
			q.ackUpTo(rsp.psn, now)
		case wire.KindRNRNak:
			e := q.entryOf(rsp.psn)
			if e == nil {
				return false
			}
			q.ackUpTo((rsp.psn-1)&mask24, now)
			r.rnrRetries++
			if q.rnrRetry != 7 && r.rnrRetries > int(q.rnrRetry) {
				q.fail(e, mlx5.SyndromeRNRRetryExcErr)
				break
			}
			r.rnrUntil = now.Add(rnrDelay(rsp.syn.Value()))
			q.goBack()
		case wire.KindNak:
			var e *outEntry
			if rsp.syn.Code() == wire.NakPSNSequenceError {
				e = q.entryOf(rsp.psn)
			} else {
				e = q.nakEntry(rsp.psn)
			}
			if e == nil {
				return false
			}
			q.ackUpTo((rsp.psn-1)&mask24, now)
			switch rsp.syn.Code() {
			case wire.NakPSNSequenceError:
				r.retries++
				if r.retries > int(q.retryCount) {
					q.fail(e, mlx5.SyndromeTransportRetryExcErr)
				} else {
					q.goBack()
				}
			case wire.NakInvalidRequest:
				q.fail(e, mlx5.SyndromeRemoteInvalReqErr)
			case wire.NakRemoteAccess:
				if c := rsp.msn; c >= uint32(mlx5.VendorSynEmuKey) && c <= uint32(mlx5.VendorSynEmuQPAccess) {
					e.vendor = uint8(c)
				}
				q.fail(e, mlx5.SyndromeRemoteAccessErr)
			default:
				q.fail(e, mlx5.SyndromeRemoteOpErr)
			}
		}
	case wire.OpReadResponseFirst, wire.OpReadResponseMiddle, wire.OpReadResponseLast, wire.OpReadResponseOnly:
		e := q.entryOf(rsp.psn)
		if e == nil || e.kind != kRead || e.done {
			return false
		}
		off := uint64((rsp.psn-e.first)&mask24) * uint64(q.mtu)
		if off+uint64(len(rsp.payload)) > uint64(e.byteCnt) {
			return false // more data than the READ asked for: not ours
		}
		q.ackUpTo((e.first-1)&mask24, now)
		if scatter(e.sg, off, rsp.payload) != nil {
			q.fail(e, mlx5.SyndromeLocalProtErr)
			break
		}
		e.got += uint64(len(rsp.payload))
		r.lastProgress = now
		if rsp.op == wire.OpReadResponseLast || rsp.op == wire.OpReadResponseOnly {
			if e.got != uint64(e.byteCnt) {
				q.fail(e, mlx5.SyndromeBadRespErr)
				break
			}
			e.done = true
			r.nRA--
		}
	case wire.OpAtomicAck:
		e := q.entryOf(rsp.psn)
		if e == nil || e.kind != kAtomic || e.done {
			return false
		}
		q.ackUpTo((e.first-1)&mask24, now)
		var b [8]byte
		if e.masked {
			if e.size == 4 {
				binary.BigEndian.PutUint32(b[:], uint32(rsp.orig))
			} else {
				binary.BigEndian.PutUint64(b[:], rsp.orig)
			}
		} else {
			binary.LittleEndian.PutUint64(b[:], rsp.orig)
		}
		if e.res.mem.write(e.res.off, b[:e.size]) != nil {
			q.fail(e, mlx5.SyndromeLocalProtErr)
			break
		}
		e.done = true
		r.nRA--
	default:
		return false
	}
	q.complete(now)
	return true
}

// scatter writes p at message offset off across the targets; it stops at
// the first target that fails (a deregistered buffer).
func scatter(sg []target, off uint64, p []byte) error {
	for _, t := range sg {
		if len(p) == 0 {
			return nil
		}
		if off >= t.len {
			off -= t.len
			continue
		}
		k := t.len - off
		if k > uint64(len(p)) {
			k = uint64(len(p))
		}
		if err := t.mem.write(t.off+off, p[:k]); err != nil {
			return err
		}
		p = p[k:]
		off = 0
	}
	return nil
}

// rnrDelay decodes the RNR NAK timer (the IBA min_rnr_nak encoding).
func rnrDelay(code uint8) time.Duration {
	us := [32]int{655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
		5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520}
	return time.Duration(us[code&31]) * time.Microsecond
}
