package emu

import (
	"bytes"
	"encoding/binary"
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

// FuzzPlainWQE: the walk's direct decoder (plainWQE) agrees with readWQE
// on any bytes of a device SQ ring's mirror. Whatever it accepts, readWQE
// decodes with syndrome 0 to the record keep makes of it; and every WQE
// that keep records and the mirror holds whole, it accepts (the fast path
// does not quietly stop serving put_bw's WQEs). Input: data[0] picks the
// ring (2, 4 or 16 WQEBBs; bits 0-1), UC (bit 2) and whether the ctrl
// segments keep their own wqe_index and qpn (bit 3; otherwise they are
// fixed up, walking by each WQE's ds, from the first slot); data[1] is how
// many WQEBBs the mirror holds past the first index; data[2:4] the first
// index (big endian); the rest the ring.
func FuzzPlainWQE(f *testing.F) {
	na := newManualNIC(f, Config{Name: "emuPa"})
	nb := newManualNIC(f, Config{Name: "emuPb"})
	g := useGPU(f, newFakeGPU())
	var xs []*endpoint
	for _, l := range []uint8{1, 2, 4} {
		x, _ := pair(f, na, nb, qpOpts{gpu: g, logSQ: l, logCQ: 6, dataLen: 4096}, qpOpts{dataLen: 4096})
		xs = append(xs, x)
	}
	for _, s := range fuzzSeeds() {
		n := s[0]
		for _, base := range []uint16{0, 0xfffe} {
			for _, cfg := range []byte{2, 2 | 4, 1} {
				f.Add(append([]byte{cfg, n, byte(base >> 8), byte(base)}, s[1:]...))
			}
		}
	}
	// The plain shapes and their near misses, one after the other.
	ring := make([]byte, 16*wqebb)
	h := mlx5.WQEHead{Flags: mlx5.MakeCtrlFlags(mlx5.FenceStrongOrdering, mlx5.CompletionAlways, true)}
	l := func(n uint32) mlx5.DataSeg {
		return mlx5.DataSeg{ByteCount: n, LKey: 0x1234, Addr: 0x10000 + uint64(n)}
	}
	r := mlx5.RAddrSeg{Addr: 0x20000, RKey: 0x5678}
	inval := mlx5.NewSendImm(h, 0xabcd, l(8))
	inval.Ctrl.Opcode = mlx5.WQEOpSendInval
	pi := uint16(0)
	for _, w := range []mlx5.WQE{
		mlx5.NewRDMAWrite(h, r, l(64)),
		mlx5.NewRDMAWriteImm(h, 0x01020304, r, l(1), l(2)),
		mlx5.NewRDMAWrite(h, r, l(1), l(2), l(3)),
		mlx5.NewRDMAWrite(h, r),
		mlx5.NewSend(h),
		mlx5.NewSendImm(h, 9, l(5), l(6)),
		inval,
		mlx5.NewNOP(h),
		mlx5.NewRDMAWriteInline(h, r, []byte("abc")),
		mlx5.NewRDMAWrite(h, r, l(7)), // byte_count patched to 0 below
	} {
		w.Ctrl.WQEIndex = pi
		n, err := w.Encode(ring)
		must(f, err)
		pi += uint16(n)
	}
	binary.BigEndian.PutUint32(ring[q16(pi-1)*wqebb+2*dsSize:], 0)
	for _, cfg := range []byte{2, 2 | 4, 2 | 8} {
		f.Add(append([]byte{cfg, 16, 0, 0}, ring...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		x := xs[min(int(data[0]&3), 2)]
		q := x.qpObj()
		size := 1 << q.sqLog
		base := uint16(data[2])<<8 | uint16(data[3])
		ring := make([]byte, size*wqebb)
		copy(ring, data[4:])
		if data[0]&8 == 0 {
			for i := 0; i < size; {
				c := ring[q.slot(base+uint16(i))*wqebb:]
				binary.BigEndian.PutUint32(c[0:], uint32(c[0])<<24|uint32(base+uint16(i))<<8|uint32(c[3]))
				binary.BigEndian.PutUint32(c[4:], q.qpn<<8|uint32(c[7]&0x3f))
				i += max((int(c[7]&0x3f)+3)/4, 1)
			}
		}
		// The device ring holds the mirror's bytes and the producer index
		// is the mirror's end: readWQE reads nothing that would change the
		// mirror, and what it reads from the device is the same bytes.
		x.lock()
		copy(x.sq, ring)
		x.unlock()
		q.mu.Lock()
		defer q.mu.Unlock()
		r := &q.req
		uc := q.uc
		defer func() { q.uc = uc }()
		q.uc = data[0]&4 != 0
		copy(r.mirror, ring)
		held := int(data[1]) % (size + 2)
		r.mirEnd, r.pi = base+uint16(held), base+uint16(held)
		for j := 0; j < size; j++ {
			idx := base + uint16(j)
			var d dwqe
			plain := q.plainWQE(idx, &d)
			var w wqe
			var buf [localBBs * wqebb]byte
			syn := q.readWQE(idx, &buf, &w)
			var p prefetch
			if syn == 0 {
				p.keep(&w)
			}
			kept := len(p.dec) == 1
			switch {
			case plain && syn != 0:
				t.Fatalf("WQE %d: plainWQE accepts what readWQE fails with %v", idx, syn)
			case plain && !kept:
				t.Fatalf("WQE %d: plainWQE accepts what keep does not record (opcode %#x, inline %v, %d SGEs)", idx, w.opcode, w.isInl, w.nsge)
			case plain && p.dec[0] != d:
				t.Fatalf("WQE %d: plainWQE decodes\n%+v\nreadWQE and keep\n%+v", idx, d, p.dec[0])
			case !plain && kept && j+w.bbs <= held && held <= size:
				t.Fatalf("WQE %d: plainWQE refuses a WQE keep records, held whole in the mirror: %+v", idx, p.dec[0])
			}
		}
	})
}

// q16 is the slot of index i in a 16-WQEBB ring.
func q16(i uint16) int { return int(i) & 15 }

// The MR cache of a requester's L_Keys and a responder's R_Keys, which
// saves the map lookup while the NIC's map is the one of its last lookup,
// finds what the NIC's own lookup finds after every change: a
// registration, a deregistration, the key's index registered again (a new
// key), and an invalidation (which changes no map).
func TestMRCache(t *testing.T) {
	a, b := twoNICs(t)
	x, _ := pair(t, a, b, qpOpts{}, qpOpts{})
	var r mrCache
	mem := hostMem(t, 4096)
	acc := mlx5.AccessLocalWrite
	check := func(step string, keys ...uint32) {
		t.Helper()
		for _, k := range keys {
			for range 2 { // the second lookup of a key is the saved one
				if got, want := r.lookup(a, k), a.lookupMR(k); got != want {
					t.Fatalf("%s: key 0x%x: the cache finds %p, the NIC %p", step, k, got, want)
				}
			}
		}
	}
	m1, err := x.dev.RegMR(x.pd, addrOf(mem), 4096, 0x1000, acc)
	must(t, err)
	k1 := m1.LKey()
	check("registered", k1, x.mr.LKey(), k1)
	m2, err := x.dev.RegMR(x.pd, addrOf(mem), 4096, 0x2000, acc)
	must(t, err)
	defer m2.Dereg()
	check("another registered", k1, m2.LKey())
	check("again", k1)
	must(t, m1.Dereg())
	check("deregistered", k1)
	setNext(a, &a.ids.mkey, k1>>8, 1)
	m3, err := x.dev.RegMR(x.pd, addrOf(mem), 4096, 0x3000, acc)
	must(t, err)
	defer m3.Dereg()
	if m3.LKey()>>8 != k1>>8 || m3.LKey() == k1 {
		t.Fatalf("test setup: key 0x%x after 0x%x", m3.LKey(), k1)
	}
	check("index registered again", k1, m3.LKey(), k1)
	r.lookup(a, m2.LKey())
	m2.(*mr).invalid.Store(true)
	check("invalidated", m2.LKey())
	if r.lookup(a, m2.LKey()) != nil {
		t.Fatal("an invalidated key was found")
	}
}

// A burst from the buffer the last burst's read-ahead covered is read with
// that covering copy again, before any walk, and its bytes are those
// software wrote before the doorbell; a WQE whose payload lies elsewhere
// ends it, and the read-ahead walks from there. Every WRITE lands.
func TestCoverAgain(t *testing.T) {
	const burst = 512
	g, x, y := deviceSetup(t, qpOpts{logSQ: 10, logCQ: 10, dataLen: 2 * burst * 64}, qpOpts{dataLen: 2 * burst * 64})
	l := watch(t, g, x)
	// run posts WQEs of 64 bytes from x.data at src[j] to y.data at j*64,
	// rings once, awaits them, checks what landed and returns the sizes of
	// the payload copies.
	run := func(seed byte, src []int) []int {
		t.Helper()
		x.lock()
		fill(x.data, seed)
		x.unlock()
		clear(y.data)
		l.mu.Lock()
		l.record, l.ops = true, nil
		l.mu.Unlock()
		for j, s := range src {
			x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(j*64), x.sge(s, 64)))
		}
		x.ring(mlx5.CtrlSeg{})
		for j := range src {
			if e := x.mustPoll(); e.Opcode != mlx5.CQEReq {
				t.Fatalf("WQE %d: %v %v", j, e.Opcode, e.Syndrome)
			}
		}
		x.lock()
		for j, s := range src {
			if !bytes.Equal(y.data[j*64:j*64+64], x.data[s:s+64]) {
				x.unlock()
				t.Fatalf("seed %d, WQE %d: other bytes landed than its payload's", seed, j)
			}
		}
		x.unlock()
		l.mu.Lock()
		defer l.mu.Unlock()
		l.record = false
		var sizes []int
		for _, o := range l.ops {
			var w bool
			var a uintptr
			var n int
			if _, err := fmt.Sscanf(o, "%v %v+%d", &w, &a, &n); err == nil && !w && l.in(4, a) {
				sizes = append(sizes, n)
			}
		}
		return sizes
	}
	order := func(f func(j int) int) []int {
		s := make([]int, burst)
		for j := range s {
			s[j] = f(j)
		}
		return s
	}
	scattered := order(func(j int) int { return (j * 37 % burst) * 64 })
	h0 := specHits.Load()
	if got := run(1, scattered); !slices.Equal(got, []int{burst * 64}) {
		t.Fatalf("first burst: payload copies %v, want one of %d bytes", got, burst*64)
	}
	if specHits.Load() != h0 {
		t.Fatal("the first burst was read with a cover it had not walked")
	}
	// The same buffer in another order, with new bytes: one copy, no walk.
	w0 := walkDecoded.Load()
	if got := run(2, order(func(j int) int { return (burst - 1 - j) * 64 })); !slices.Equal(got, []int{burst * 64}) {
		t.Fatalf("second burst: payload copies %v, want one of %d bytes", got, burst*64)
	}
	if specHits.Load() != h0+1 || walkDecoded.Load() != w0 {
		t.Fatalf("second burst: %d reads of the cover again, %d WQEs from a walk; want 1 and 0", specHits.Load()-h0, walkDecoded.Load()-w0)
	}
	// WQE 100 names a slice past the cover: the first 100 from the cover
	// again, then a walk from WQE 100 (its own copies).
	third := order(func(j int) int { return j * 64 })
	third[100] = burst*64 + 640
	got := run(3, third)
	if specHits.Load() != h0+2 || len(got) < 2 || got[0] != burst*64 {
		t.Fatalf("third burst: payload copies %v after %d reads of the cover again; want the cover, then the walk's", got, specHits.Load()-h0)
	}
}
