package emu

import (
	"sync/atomic"

	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// Speculative payload reads. A latency-bound requester (write_lat: one
// WRITE, wait for the answer, the next WRITE from the same buffer) pays
// two dependent device copies before its first frame leaves: the WQE
// (with the DBR), then the payload the WQE points at. When the QP was idle
// and its last message came from one small buffer in device memory, the
// batch that reads the DBR and the new WQEs also reads that buffer again,
// after them, on the same stream. If the first new WQE turns out to send
// from inside those bytes, the payload is already read: one copy latency
// less. Otherwise the bytes are dropped and the payload is read as usual.
//
// Why the early bytes are the WQE's: software writes a payload before it
// writes the WQE and rings the doorbell, and may not change it until the
// completion; the copies of one batch run in order, so the payload read
// that follows the WQE read sees at least what the WQE saw. The bytes are
// used only for the first WQE of the batch that read them, and only while
// its buffer is still registered (as for the read-ahead, the view is
// handed out only while the WQE's memory is live). A QP whose peer is in
// this process does not speculate: its responder copies the payload from
// where it is (local.go).

// specMax is the largest payload read speculatively; the last specMax
// bytes of the read-ahead buffer hold it.
const (
	specMax = 4 << 10
	specAt  = prefetchMax - specMax
)

// noSpeculation turns speculation off (the cost model's benchmarks measure
// what it saves).
var noSpeculation atomic.Bool

// specRead is the speculative read of the last doorbell batch.
type specRead struct {
	ok  bool
	idx uint16 // the WQE it may serve: the first one the batch read
	mem *span
	off uint64
	n   uint64
}

// notePayload remembers the buffer of a WQE about to be sent, one SGE in
// device memory of at most specMax bytes (r.tg resolved), as the guess
// for the next doorbell.
func (q *qp) notePayload(w *wqe) {
	r := &q.req
	if w.isInl || w.nsge != 1 || w.length == 0 || w.length > specMax || r.tg[0].mem.gpu == nil {
		r.lastPay = target{}
		return
	}
	r.lastPay = r.tg[0]
}

// speculate adds to b, after the reads of the WQEs from idx on, a read of
// the last payload's buffer, when the QP was idle (everything before idx
// sent) and its peer is not in this process.
func (q *qp) speculate(b *batch, idx uint16) {
	r := &q.req
	t := r.lastPay
	if t.mem == nil || noSpeculation.Load() || r.send != idx || r.partial || t.mem.gpu != q.wq.mem.gpu || t.mem.dead.Load() {
		return
	}
	if q.nic.port.Local(wire.GID(q.rgid)) {
		return
	}
	if r.pf.buf == nil && !r.pf.alloc() {
		return
	}
	for _, rc := range r.pf.recs {
		if rc.off >= specAt { // an earlier speculative read, about to be overwritten
			r.pf.clear()
			break
		}
	}
	b.read(t.mem, t.off, r.pf.buf[specAt:specAt+int(t.len)])
	r.spec = specRead{ok: true, idx: idx, mem: t.mem, off: t.off, n: t.len}
}

// takeSpec uses the speculative read for w (r.tg resolved) when it holds
// w's payload: the read-ahead window then holds w alone. It consumes the
// read either way.
func (q *qp) takeSpec(w *wqe) bool {
	r := &q.req
	s := r.spec
	r.spec = specRead{}
	if !s.ok || w.idx != s.idx || w.isInl || w.nsge != 1 || dist(r.send, r.pi) != w.bbs {
		return false
	}
	t := r.tg[0]
	if t.mem != s.mem || t.off < s.off || t.off+w.length > s.off+s.n {
		return false
	}
	p := &r.pf
	p.clear()
	p.recs = append(p.recs, pfRec{idx: w.idx, off: specAt + int(t.off-s.off), len: w.length})
	return true
}
