package emu

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// The read-ahead's walk records the payloads of a burst whose every
// payload is one range of one buffer without adding a copy per WQE, and
// then reads them with one copy of the range that covers them; a payload
// that breaks the pattern (two pieces apart in device memory) or a range
// too sparse for one copy turns the records into the copies a walk adds
// per piece (adjacent pieces merged). Either way every record's bytes in
// the read-ahead buffer are its payload, and the copies are those of a
// walk that adds one per piece and replaces them by the covering copy
// when it may (the reference below).
func TestWalkCopies(t *testing.T) {
	one := func(off int) []walkPiece { return []walkPiece{{off, 64}} }
	scrambled := func(n int) [][]walkPiece {
		var w [][]walkPiece
		for i := 0; i < n; i++ {
			w = append(w, one((i*37)%n*64))
		}
		return w
	}
	split := func(a, b int) []walkPiece { return []walkPiece{{a, 32}, {b, 32}} }
	for _, c := range []struct {
		name  string
		wqes  [][]walkPiece
		lazy  bool // the walk adds no copy per WQE
		total int  // copies expected (checked against the reference too)
	}{
		{"adjacent", func() [][]walkPiece {
			var w [][]walkPiece
			for i := 0; i < 64; i++ {
				w = append(w, one(i*64))
			}
			return w
		}(), true, 1},
		{"scrambled", scrambled(64), true, 1},
		{"sparse", func() [][]walkPiece {
			var w [][]walkPiece
			for i := 0; i < 32; i++ {
				w = append(w, one(i*256))
			}
			return w
		}(), false, 32},
		{"adjacent-pieces", append(scrambled(16), split(2048, 2080)), true, 1},
		{"split-after-8", append(append(scrambled(8), split(4096, 8192)), one(64*20), one(64*21), one(64*40)), false, 0},
		{"split-first", append([][]walkPiece{split(8192, 4096)}, scrambled(8)...), false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, x, y := deviceSetup(t, qpOpts{logSQ: 8, logCQ: 9, dataLen: 16 << 10}, qpOpts{dataLen: 16 << 10})
			x.lock()
			for i := range x.data {
				x.data[i] = byte(i*7 + i>>8)
			}
			x.unlock()
			for i, w := range c.wqes {
				var sg []mlx5.DataSeg
				for _, p := range w {
					sg = append(sg, x.sge(p.off, uint32(p.n)))
				}
				x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(i*64), sg...))
			}
			want := walkReference(x, c.wqes)
			if c.total != 0 && len(want) != c.total {
				t.Fatalf("the reference makes %d copies, the case says %d", len(want), c.total)
			}
			l := watch(t, g, x)
			q := x.qpObj()
			release := readPosted(x)
			l.mu.Lock()
			l.record, l.ops = true, nil
			l.mu.Unlock()
			q.prefetchFrom(0)
			l.mu.Lock()
			var got []string // the payload reads (the walk also reads the ring)
			for _, o := range l.ops {
				var w bool
				var a uintptr
				var n int
				if _, err := fmt.Sscanf(o, "%v %v+%d", &w, &a, &n); err == nil && l.in(4, a) {
					got = append(got, o)
				}
			}
			l.record = false
			l.mu.Unlock()
			p := &q.req.pf
			if len(p.recs) != len(c.wqes) {
				release()
				t.Fatalf("%d records for %d WQEs", len(p.recs), len(c.wqes))
			}
			x.lock()
			for i, w := range c.wqes {
				var payload []byte
				for _, s := range w {
					payload = append(payload, x.data[s.off:s.off+s.n]...)
				}
				r := p.recs[i]
				if !bytes.Equal(p.buf[r.off:r.off+int(r.len)], payload) {
					x.unlock()
					release()
					t.Fatalf("WQE %d: the read-ahead holds other bytes than its payload", i)
				}
			}
			x.unlock()
			lazy := cap(p.b.ops) < len(c.wqes)
			release()
			if !slices.Equal(got, want) {
				t.Fatalf("copies\n%v\nwant\n%v", got, want)
			}
			if c.lazy && !lazy {
				t.Fatalf("the walk added a copy per WQE (the batch grew to %d) where one copy covers them", cap(p.b.ops))
			}
			for i := range c.wqes {
				if e := x.mustPoll(); e.Opcode != mlx5.CQEReq {
					t.Fatalf("WQE %d: %v %v", i, e.Opcode, e.Syndrome)
				}
			}
		})
	}
}

// walkPiece is a data segment: n bytes at off of an endpoint's data.
type walkPiece struct{ off, n int }

// walkReference is the copies of a read-ahead that adds one copy per
// piece, merging a piece into the last copy when it continues it in device
// memory, and then replaces them by one copy of the range that holds every
// payload, when every payload is one range and the range is at most twice
// the bytes: in the watch hook's notation.
func walkReference(x *endpoint, wqes [][]walkPiece) []string {
	type cp = walkPiece
	var ops []cp
	total, ranges := 0, true
	lo, hi := 1<<62, 0
	for _, w := range wqes {
		for i, p := range w {
			if k := len(ops) - 1; k >= 0 && ops[k].off+ops[k].n == p.off {
				ops[k].n += p.n
			} else {
				ops = append(ops, p)
			}
			if i > 0 && w[i-1].off+w[i-1].n != p.off {
				ranges = false
			}
			total += p.n
		}
		lo, hi = min(lo, w[0].off), max(hi, w[len(w)-1].off+w[len(w)-1].n)
	}
	if len(ops) >= 2 && ranges && hi-lo <= 2*total {
		ops = []cp{{lo, hi - lo}}
	}
	var s []string
	for _, o := range ops {
		s = append(s, fmt.Sprintf("%v %#x+%d", false, x.va(o.off), o.n))
	}
	return s
}
