package emu

import (
	"errors"

	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// In-process payloads left in device memory. When the responder is a NIC
// of this process (the frame is delivered in-process, synchronously) and a
// WRITE or SEND's data is in device memory, the requester need not read
// the data at all: the frame carries a description of it (wire's Local
// payload) and the responder copies it straight into its own buffer:
// device to device into device memory, device to host into host memory.
// One copy instead of two, and none on the requester's side.
//
// The requester takes this path for a message that is the last one
// published (latency: nothing to batch its read with) or at least
// localMin bytes (bandwidth); small messages posted together keep the
// read-ahead, whose one copy serves them all. The requester pins its
// buffer across the Send (the responder's copy runs inside it), so a
// deregistration waits for the copy, and a buffer already deregistered
// fails the WQE with LOCAL_PROT_ERR at the requester, as before.

// localMin is the message size from which a payload in device memory is
// left for an in-process responder even when more WQEs wait to be sent.
const localMin = 64 << 10

// devPayload is a frame's payload left in device memory (wire.Frame.Local).
type devPayload struct {
	mem *span
	off uint64
	n   int
}

func (d *devPayload) Len() int { return d.n }

var _ wire.LocalPayload = (*devPayload)(nil)

// errLocalPayload is a Local payload the responder cannot copy from.
var errLocalPayload = errors.New("emu: a local payload that is not in this process's device memory")

// wantLocal reports whether the WQE w (at the send index) should leave its
// payload in device memory for an in-process responder.
func (q *qp) wantLocal(w *wqe) bool {
	r := &q.req
	if w.isInl || w.nsge != 1 || w.length == 0 || r.tg[0].mem.gpu == nil {
		return false
	}
	if w.length < localMin && dist(r.send, r.pi) > w.bbs {
		return false // more WQEs wait: the read-ahead batches their payloads
	}
	return q.nic.port.Local(wire.GID(q.rgid))
}

// localPayload describes n bytes at message offset off of w's one SGE and
// pins its memory; ok is false when the buffer was deregistered.
func (q *qp) localPayload(w *wqe, off, n uint64) (*devPayload, bool) {
	t := q.req.tg[0]
	if !t.mem.pin() {
		return nil, false
	}
	d := &q.req.local
	*d = devPayload{mem: t.mem, off: t.off + off, n: int(n)}
	return d, true
}

// copyLocal copies a local payload into n bytes at offset off of dst (the
// responder's buffer).
func (q *qp) copyLocal(dst *span, off uint64, lp wire.LocalPayload) error {
	d, ok := lp.(*devPayload)
	if !ok || d.mem.gpu == nil || (dst.gpu != nil && dst.gpu != d.mem.gpu) {
		return errLocalPayload
	}
	b := &q.resp.b
	if dst.gpu == nil {
		b.use(dst) // pinned while the copy writes into it
		b.read(d.mem, d.off, dst.host[off:off+uint64(d.n)])
	} else {
		b.copyDev(dst, off, d.mem, d.off, uint64(d.n))
	}
	return b.run()
}

// scatterLocal is scatter for a local payload: its bytes at message offset
// off across the targets, one batch.
func (q *qp) scatterLocal(sg []target, off uint64, lp wire.LocalPayload) error {
	d, ok := lp.(*devPayload)
	if !ok || d.mem.gpu == nil {
		return errLocalPayload
	}
	b := &q.resp.b
	src, left := d.off, uint64(d.n)
	for _, t := range sg {
		if left == 0 {
			break
		}
		if off >= t.len {
			off -= t.len
			continue
		}
		k := min(t.len-off, left)
		if t.mem.gpu != nil && t.mem.gpu != d.mem.gpu {
			b.reset()
			return errLocalPayload
		}
		if t.mem.gpu == nil {
			b.use(t.mem)
			b.read(d.mem, src, t.mem.host[t.off+off:t.off+off+k])
		} else {
			b.copyDev(t.mem, t.off+off, d.mem, src, k)
		}
		src += k
		left -= k
		off = 0
	}
	return b.run()
}
