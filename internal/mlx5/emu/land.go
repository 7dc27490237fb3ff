package emu

import (
	"sync/atomic"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// Deferred landing. Each small WRITE packet that lands in device memory
// costs the responder one batch of copies, and a batch is a round trip to
// the GPU (a copier batch waited 5.9 us on the host, median, in the
// write_lat timelines of an H100 host: many times the CPU work of the
// packet), so a burst of puts into a peer's GPU memory was paced by those
// round trips. While the connection already holds the next
// request for the QP (Frame.More), the responder copies the payload of a
// plain WRITE packet (no immediate, carried in the frame) into a buffer of
// its own and adds its copy to a batch, and lands the batch at once when
// anything else must happen:
//
//   - before any response of the QP leaves (an ACK, a NAK, a READ
//     response, an ATOMIC ACK): an acknowledged WRITE has landed;
//   - before the QP handles a request of another kind, or a WRITE packet
//     that is not deferred (one with an immediate, one carried by
//     reference, one into host memory or another GPU's memory, one that
//     does not fit): the responder's effects on memory, CQs and the wire
//     keep the order of the packets;
//   - when the burst ends (a request without More) or the buffer is full.
//
// Packets of one QP are held at most until the next request of the
// burst, which the port hands over right after (Frame.More promises it).
// If the connection breaks in between, the packets wait for the QP's next
// request, which is at the latest the requester's retransmission of them:
// they were never acknowledged, and as duplicates they are acknowledged
// only after the held packets landed.
//
// A batch that fails (a region deregistered under the burst, a failed
// copy) is run again packet by packet: the packets before the one that
// fails land, that one is NAKed as it would have been at once (its PSN,
// the MSN of its time, remote access error for a retired region, remote
// operational error otherwise), the held ACK is dropped (the NAK
// acknowledges what came before it) and the packets after it are
// discarded, as a QP in ERR discards what follows an error.

// landMax is the payload a QP's deferred batch holds: its buffer, at most
// a quick batch for the GPU adapter (a few tens of KiB).
const landMax = 60 << 10

// landBatches counts the batches of deferred packets run, landRetries
// those run again a packet at a time (tests).
var landBatches, landRetries atomic.Uint64

// landing is a QP's deferred WRITE packets; guarded by rmu.
type landing struct {
	buf  []byte // landMax bytes once used; the packets' payloads back to back
	used int
	b    batch // the copies, adjacent ones merged
	ents []landEnt
	gpu  GPUMemory // of every span in b
}

// landEnt is one deferred packet: n payload bytes at buf[at:] for offset
// off of mem. psn and msn are the responder's PSN and MSN for the packet
// (for a NAK), last says it ended its message (the landed stamp).
type landEnt struct {
	mem   *span
	off   uint64
	at, n int
	psn   uint32
	msn   uint32
	route wire.Route
	last  bool
}

// pending reports whether packets wait to land.
func (l *landing) pending() bool { return len(l.ents) > 0 }

// placeWrite lands the payload of WRITE packet f (at offset off of mem) or
// defers it: it may wait when more of the burst follows or packets already
// wait, it is a plain WRITE's (imm false) and carries its payload, mem is
// device memory of the batch's GPU and the payload fits. A packet that
// lands now lands after the ones that wait. msn is the responder's MSN
// before the packet, last says it ends its message. It reports false when
// the QP failed (this packet or one before it was NAKed).
func (q *qp) placeWrite(f *wire.Frame, mem *span, off uint64, msn uint32, last, imm bool) bool {
	l := &q.resp.land
	n := len(f.Payload)
	if imm || f.Ref != nil || (!f.More && !l.pending()) || n > landMax || mem.gpu == nil || (l.gpu != nil && mem.gpu != l.gpu) {
		if !q.landPending() {
			return false
		}
		if err := landWrite(mem, off, f); err != nil {
			q.nakCause(f, accessNak(err), mlx5.VendorSynEmuKey)
			return false
		}
		if last {
			traceLanded(f.SrcGID, f.SrcQPN)
		}
		return true
	}
	if l.used+n > landMax && !q.landPending() {
		return false
	}
	if l.buf == nil {
		l.buf = make([]byte, landMax)
	}
	at := l.used
	copy(l.buf[at:at+n], f.Payload)
	l.used += n
	l.gpu = mem.gpu
	// Set in place (grow: an appended literal was an eighth of the
	// responder's time per packet).
	e := grow(&l.ents)
	e.mem, e.off, e.at, e.n = mem, off, at, n
	e.psn, e.msn, e.route, e.last = f.PSN, msn, f.Route, last
	b := &l.b
	if k := len(b.ops) - 1; k >= 0 {
		// A packet that continues the last copy in device memory (the
		// packets of one message) extends it; its bytes follow the
		// last copy's in buf as well.
		if o := &b.ops[k]; o.Dst == mem.dev && o.DstOff+uint64(len(o.Host)) == off && offsetIn(l.buf, o.Host)+len(o.Host) == at {
			o.Host = o.Host[:len(o.Host)+n]
			return true
		}
	}
	b.write(mem, off, l.buf[at:at+n])
	return true
}

// landPending lands the deferred packets; rmu held. It reports false when
// one of them failed: the QP then is in ERR and that packet was NAKed.
func (q *qp) landPending() bool {
	l := &q.resp.land
	// Staged receives (responder.go) are older than any deferred WRITE
	// packet: a SEND lands what waits before it is staged.
	if !q.flushStaged() {
		return false
	}
	if !l.pending() {
		return true
	}
	defer l.clear()
	if q.dead {
		return true // destroyed: nothing lands and nothing answers
	}
	t0 := timelineStart()
	landBatches.Add(1)
	err := l.b.run()
	if !t0.IsZero() {
		noteSince("land", q.qpn, int64(len(l.ents)), int64(l.used), t0)
	}
	if err == nil {
		q.landedStamps(l.ents)
		return true
	}
	// Once more, a packet at a time, to find the one that fails.
	landRetries.Add(1)
	for i := range l.ents {
		e := l.ents[i]
		err := e.mem.write(e.off, l.buf[e.at:e.at+e.n])
		if err == nil {
			q.landedStamps(l.ents[i : i+1])
			continue
		}
		r := &q.resp
		r.holds = 0                  // the NAK acknowledges the packets before it
		r.msn, r.epsn = e.msn, e.psn // as when the packet failed at once
		l.clear()                    // nothing left to land when the NAK leaves
		q.nakCause(&wire.Frame{SrcQPN: q.remoteQPN, SrcGID: wire.GID(q.rgid), PSN: e.psn, Route: e.route}, accessNak(err), mlx5.VendorSynEmuKey)
		return false
	}
	return true // the batch failed and every packet alone landed
}

// landedStamps stamps the messages whose last packets are among ents as
// landed (tracing).
func (q *qp) landedStamps(ents []landEnt) {
	for i := range ents {
		if ents[i].last {
			traceLanded(wire.GID(q.rgid), q.remoteQPN)
		}
	}
}

// clear forgets the deferred packets, keeping the buffer.
func (l *landing) clear() {
	l.b.reset()
	clear(l.ents)
	l.ents, l.used, l.gpu = l.ents[:0], 0, nil
}
