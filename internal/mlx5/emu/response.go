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
	op      wire.Opcode
	psn     uint32
	syn     wire.Syndrome
	orig    uint64
	payload []byte // a copy (READ responses)
}

// queueResponse copies f into the inbox. Consecutive plain ACKs for one QP
// collapse into the newest (ACKs are cumulative).
func (n *NIC) queueResponse(f *wire.Frame) {
	n.inboxMu.Lock()
	if f.Opcode == wire.OpAck && f.AETH.Syndrome.Kind() == wire.KindACK && len(n.inbox) > 0 {
		if l := &n.inbox[len(n.inbox)-1]; l.op == wire.OpAck && l.qpn == f.DstQPN && l.syn.Kind() == wire.KindACK {
			l.psn = f.PSN
			n.inboxMu.Unlock()
			return
		}
	}
	rsp := response{qpn: f.DstQPN, op: f.Opcode, psn: f.PSN, syn: f.AETH.Syndrome, orig: f.AtomicAck}
	if len(f.Payload) > 0 {
		rsp.payload = append([]byte(nil), f.Payload...)
	}
	n.inbox = append(n.inbox, rsp)
	n.inboxMu.Unlock()
	n.kick()
}

// drainInbox processes the queued responses.
func (n *NIC) drainInbox(now time.Time, spare []response) ([]response, bool) {
	n.inboxMu.Lock()
	batch := n.inbox
	n.inbox = spare[:0]
	n.inboxMu.Unlock()
	for i := range batch {
		rsp := &batch[i]
		if q := n.qpByNum(rsp.qpn); q != nil {
			q.mu.Lock()
			if !q.dead && q.state.Load() == stRTS {
				q.onResponse(rsp, now)
			}
			q.mu.Unlock()
		}
		rsp.payload = nil
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

// ackUpTo marks WRITE/SEND (and local) entries whose last PSN is <= psn as
// done.
func (q *qp) ackUpTo(psn uint32, now time.Time) {
	r := &q.req
	progressed := false
	for i := r.ci; i != r.send; {
		e := &r.ent[q.slot(i)]
		if e.kind != kLocal && !psnLE(e.last, psn) {
			break
		}
		if !e.done && (e.kind == kAcked || e.kind == kLocal) {
			e.done = true
			progressed = true
		}
		i += e.bbs
	}
	if progressed || (psn != r.lastAcked && psnLE(r.lastAcked, psn)) {
		r.lastAcked = psn
		r.retries = 0
		r.rnrRetries = 0
		r.lastProgress = now
	}
}

// onResponse applies one response to the requester; q.mu held.
func (q *qp) onResponse(rsp *response, now time.Time) {
	r := &q.req
	switch rsp.op {
	case wire.OpAck:
		switch rsp.syn.Kind() {
		case wire.KindACK:
			q.ackUpTo(rsp.psn, now)
		case wire.KindRNRNak:
			q.ackUpTo((rsp.psn-1)&mask24, now)
			e := q.entryOf(rsp.psn)
			if e == nil {
				break
			}
			r.rnrRetries++
			if q.rnrRetry != 7 && r.rnrRetries > int(q.rnrRetry) {
				q.fail(e, mlx5.SyndromeRNRRetryExcErr)
				break
			}
			r.rnrUntil = now.Add(rnrDelay(rsp.syn.Value()))
			q.goBack()
		case wire.KindNak:
			q.ackUpTo((rsp.psn-1)&mask24, now)
			e := q.entryOf(rsp.psn)
			if e == nil {
				break
			}
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
				q.fail(e, mlx5.SyndromeRemoteAccessErr)
			default:
				q.fail(e, mlx5.SyndromeRemoteOpErr)
			}
		}
	case wire.OpReadResponseFirst, wire.OpReadResponseMiddle, wire.OpReadResponseLast, wire.OpReadResponseOnly:
		e := q.entryOf(rsp.psn)
		if e == nil || e.kind != kRead || e.done {
			break
		}
		q.ackUpTo((e.first-1)&mask24, now)
		off := uint64((rsp.psn-e.first)&mask24) * uint64(q.mtu)
		scatter(e.sg, off, rsp.payload)
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
			break
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
	}
	q.complete(now)
}

// scatter writes p at message offset off across the targets.
func scatter(sg []target, off uint64, p []byte) {
	for _, t := range sg {
		if len(p) == 0 {
			return
		}
		if off >= t.len {
			off -= t.len
			continue
		}
		k := t.len - off
		if k > uint64(len(p)) {
			k = uint64(len(p))
		}
		t.mem.write(t.off+off, p[:k])
		p = p[k:]
		off = 0
	}
}

// rnrDelay decodes the RNR NAK timer (mlx5-prm.md 2.9), in microseconds.
func rnrDelay(code uint8) time.Duration {
	us := [32]int{655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
		5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520}
	return time.Duration(us[code&31]) * time.Microsecond
}
