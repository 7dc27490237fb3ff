package emu

import (
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// Payload prefetch. A WRITE or SEND whose data is in device memory costs a
// copy to read it; many small messages posted together (every thread of a
// kernel posting its own put) would cost one copy each. Before it sends the
// first of them, the requester reads the payloads of the WQEs that follow,
// up to the producer index and prefetchMax bytes, with one batch: each
// message's bytes go to consecutive places of one buffer, and pieces that
// are adjacent in device memory as well become one copy (adjacent messages
// from adjacent buffers are one copy in all). The frames then carry views
// of that buffer.
//
// What it reads early software may not change anyway: a WQE's data
// belongs to the NIC from the doorbell until the completion. A buffer
// deregistered after its payload was read but before the message left is
// still caught: the message fails with LOCAL_PROT_ERR as before, since the
// view is handed out only while the WQE's memory is live.

// prefetchMax bounds the bytes read ahead for one QP (a message larger than
// this is read frame by frame).
const prefetchMax = 4 << 20

// prefetch is the window of WQEs whose payloads were read ahead.
type prefetch struct {
	buf   []byte // prefetchMax bytes of mmap'd memory, pinned when the GPUMemory can
	unpin func()
	recs  []pfRec // in posting order
	pos   int     // the record transmit is expected to ask for next
	used  int
	w     wqe // the WQE being looked at, and its scratch
	wbuf  [localBBs * wqebb]byte
	tg    [maxSGEPerWQE]target
	b     batch
	g     guess
	dec   []dwqe // the WQEs the walk decoded, in posting order
	dpos  int    // the one transmit is expected to ask for next
	// The last walk's covering copy (cover), kept when it was larger than
	// a guess: the next burst from the same buffer is read with that copy
	// again before any walk (again). While spec is set, buf holds it,
	// copied after the doorbell of the WQEs from specFrom up to specEnd.
	last              lastCover
	spec              bool
	specFrom, specEnd uint16
}

// lastCover is a range [lo, hi) of span mem that one copy read ahead.
type lastCover struct {
	mem    *span
	lo, hi uint64
}

// dwqe is a WQE the read-ahead's walk decoded, kept so that transmit does
// not parse it again: a WQE's bytes belong to the NIC from the doorbell to
// its completion, so they are the same when transmit reaches it. Only the
// plain shapes are kept (a WRITE, SEND or NOP without inline data and with
// at most dwqeSGEs data segments, as a kernel's puts are); the rest is
// decoded again, as are WQEs after a go-back-N rewind.
type dwqe struct {
	idx, bbs uint16
	opcode   uint8
	opmod    uint8
	fm, ce   uint8
	se       bool
	nsge     uint8
	imm      [4]byte
	rkey     uint32
	raddr    uint64
	length   uint64
	sges     [dwqeSGEs]sge
}

const dwqeSGEs = 2

// keep records w, decoded by the walk, for transmit when its shape allows.
func (p *prefetch) keep(w *wqe) {
	if w.isInl || w.nsge > dwqeSGEs || (!payloadOp(w.opcode) && w.opcode != uint8(mlx5.WQEOpNop)) {
		return
	}
	d := p.spare()
	p.dec = p.dec[:len(p.dec)+1]
	d.idx, d.bbs, d.opcode, d.opmod, d.fm, d.ce, d.se, d.nsge = w.idx, uint16(w.bbs), w.opcode, w.opmod, w.fm, w.ce, w.se, uint8(w.nsge)
	d.imm, d.rkey, d.raddr, d.length = w.imm, w.rkey, w.raddr, w.length
	copy(d.sges[:], w.sges[:w.nsge])
}

// spare returns the place after the last record of dec, where the next
// one is filled in place (a dwqe built aside and appended is copied twice);
// the caller counts it (extends dec) once it is filled.
func (p *prefetch) spare() *dwqe {
	if len(p.dec) == cap(p.dec) {
		p.dec = append(p.dec, dwqe{})[:len(p.dec)]
	}
	return &p.dec[:len(p.dec)+1][len(p.dec)]
}

// take fills w with the WQE at idx when the walk decoded it: transmit asks
// in posting order, so the record is at dpos, or after records transmit
// has gone past. It reports false when there is none (decode it).
func (p *prefetch) take(idx uint16, w *wqe) bool {
	for p.dpos < len(p.dec) {
		d := &p.dec[p.dpos]
		if d.idx != idx {
			if k := dist(d.idx, idx); k > 0 && k < 1<<15 {
				p.dpos++ // transmit is past this one
				continue
			}
			return false // before the window (a rewind): decode
		}
		p.dpos++
		walkDecoded.Add(1)
		d.fill(idx, w)
		return true
	}
	return false
}

// fill sets w to the WQE d records, at idx.
func (d *dwqe) fill(idx uint16, w *wqe) {
	w.idx, w.bbs, w.opcode, w.opmod = idx, int(d.bbs), d.opcode, d.opmod
	w.fm, w.ce, w.se, w.imm = d.fm, d.ce, d.se, d.imm
	w.raddr, w.rkey, w.length = d.raddr, d.rkey, d.length
	w.isInl, w.inline, w.masked, w.size = false, nil, false, 0
	w.nsge = int(d.nsge)
	// All of d.sges, a fixed size: a copy of nsge of them is a call of
	// memmove. Those past nsge are not read.
	*(*[dwqeSGEs]sge)(w.sges[:]) = d.sges
}

// Guessed payloads. A kernel that posts from the same buffer again (a
// latency loop; a thread that reuses its slot) makes the next read-ahead
// copy the same device bytes as the last one. When those were few,
// readDBR copies them again in the batch that reads the DBR and the WQEs a
// doorbell announced, and prefetchFrom takes them instead of running a
// batch of its own when its copies turn out to be exactly those: a write
// of a few bytes then costs the requester one batch of copies (DBR, WQE
// and payload) instead of two. The bytes are current for every
// WQE before the producer index of that doorbell: software writes a
// payload before the WQE, the DBR and the doorbell, with fences between,
// and the copy starts after the doorbell was seen. A ConnectX reads a
// WQE's buffers whenever the WQE is its; a guess that misses costs a few
// bytes of copy in a batch that runs anyway, and the read-ahead then runs
// as before.
const (
	guessMax = 4096 // bytes
	guessOps = 4    // copies
)

// guess is the last read-ahead's copies (when small) and, once readDBR
// copied them again, their bytes.
type guess struct {
	ops   []guessOp
	buf   []byte
	limit uint16 // the producer index of the doorbell they were copied after
	valid bool   // buf holds the bytes of ops, copied after limit's doorbell
}

// guessOp is one copy of a read-ahead: n bytes at off of mem into the
// read-ahead buffer at at.
type guessOp struct {
	mem   *span
	off   uint64
	at, n int
}

// note keeps the copies of the read-ahead batch b (into buf) as the next
// guess, when they are few and small.
func (g *guess) note(b *batch, buf []byte) {
	g.ops = g.ops[:0]
	total := 0
	for _, o := range b.ops {
		total += len(o.Host)
	}
	if len(b.ops) > guessOps || total > guessMax {
		return
	}
	for _, o := range b.ops {
		s := b.spanOf(o.Src)
		if s == nil {
			g.ops = g.ops[:0]
			return
		}
		g.ops = append(g.ops, guessOp{mem: s, off: o.SrcOff, at: offsetIn(buf, o.Host), n: len(o.Host)})
	}
}

// addGuess adds the guessed copies to b, the batch that reads the DBR and
// the WQEs up to limit; dev is the GPUMemory of that batch.
func (q *qp) addGuess(b *batch, limit uint16, dev GPUMemory) bool {
	g := &q.req.pf.g
	g.valid = false
	if len(g.ops) == 0 {
		return false
	}
	for _, o := range g.ops {
		if o.mem.gpu != dev || o.mem.dead.Load() {
			return false
		}
	}
	if g.buf == nil {
		g.buf = make([]byte, guessMax)
	}
	pos := 0
	for _, o := range g.ops {
		b.read(o.mem, o.off, g.buf[pos:pos+o.n])
		pos += o.n
	}
	g.limit = limit
	return true
}

// takeGuess serves the read-ahead batch b from the guess, when b is the
// guess's copies and every WQE it reads for (idx up to end) came before the
// guess's doorbell. It empties b when it did.
func (q *qp) takeGuess(b *batch, idx, end uint16) bool {
	p := &q.req.pf
	g := &p.g
	// The WQEs from idx up to end must lie before limit: limit ahead of idx
	// by at most the ring (otherwise idx is past it) and end not past it.
	ahead := dist(idx, g.limit)
	if !g.valid || len(b.ops) != len(g.ops) || ahead == 0 || ahead > 1<<q.sqLog || dist(idx, end) > ahead {
		return false
	}
	for i, o := range b.ops {
		e := g.ops[i]
		if o.Src != e.mem.dev || o.SrcOff != e.off || len(o.Host) != e.n || offsetIn(p.buf, o.Host) != e.at || e.mem.dead.Load() {
			return false
		}
	}
	pos := 0
	for _, e := range g.ops {
		copy(p.buf[e.at:e.at+e.n], g.buf[pos:pos+e.n])
		pos += e.n
	}
	b.reset()
	guessHits.Add(1)
	return true
}

// offsetIn is where v starts in buf (v is a slice of buf).
func offsetIn(buf, v []byte) int {
	return int(uintptr(unsafe.Pointer(unsafe.SliceData(v))) - uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
}

// spanOf returns the span of b whose device range is d.
func (b *batch) spanOf(d DeviceRange) *span {
	for _, s := range b.spans {
		if s.dev == d {
			return s
		}
	}
	return nil
}

// guessHits counts read-aheads served from a guess (tests, benchmarks).
var guessHits atomic.Uint64

// walkDecoded counts the WQEs transmit took from the walk's records instead
// of parsing them again (tests).
var walkDecoded atomic.Uint64

// pfRec is the payload of one WQE: buf[off:off+len].
type pfRec struct {
	idx uint16
	off int
	len uint64
	mem *span  // the span of its first piece
	src uint64 // where the payload starts in mem's device range
	one bool   // the payload is one range of mem
}

func (p *prefetch) clear() {
	clear(p.recs) // let go of the spans the records name
	p.recs, p.pos, p.used = p.recs[:0], 0, 0
	p.dec, p.dpos = p.dec[:0], 0
	p.spec = false
}

// Bursts from one buffer again. put_bw's kernel posts the slices of the
// same buffer in every launch, in an order that differs from launch to
// launch, and the walk over a burst (decode and check each WQE to plan
// the read-ahead) costs about 40 us on an H100 host before the first
// frame leaves. When the last walk's read-ahead was one covering copy
// larger than a guess, the first WQE of the next window whose payload lies
// in that range has the range copied again at once, without a walk, and
// every WQE up to the producer index of that moment whose payload lies in
// it is served from the copy (the bytes are current for those WQEs: the
// copy starts after their doorbell, as a walk's copy does). A WQE whose
// payload lies elsewhere ends it: the read-ahead walks from there as
// before. A range that no payload of the burst uses costs a copy of bytes
// nobody asked for, as a cover's gaps do.

// again serves w's payload from the last walk's cover copied again,
// copying it first when w is the first WQE of a burst that uses it. It
// reports false when the read-ahead must walk (w's payload is not one
// range within the cover, or the copy failed).
func (q *qp) again(w *wqe) bool {
	r := &q.req
	p := &r.pf
	if p.spec && dist(p.specFrom, w.idx) < dist(p.specFrom, p.specEnd) && p.inLast(w, r.tg[:w.nsge]) {
		return true
	}
	if p.find(w.idx) != nil || p.last.mem == nil || !p.inLast(w, r.tg[:w.nsge]) || p.last.mem.dead.Load() {
		return false
	}
	p.clear()
	n := p.last.hi - p.last.lo
	p.b.read(p.last.mem, p.last.lo, p.buf[:n])
	if p.b.run() != nil {
		p.clear()
		p.last = lastCover{}
		return false
	}
	p.g.valid = false
	p.spec, p.specFrom, p.specEnd = true, w.idx, r.pi
	specHits.Add(1)
	return true
}

// inLast reports whether the payload of w (its targets tg) is one range
// within the last cover.
func (p *prefetch) inLast(w *wqe, tg []target) bool {
	if len(tg) != 1 || tg[0].mem != p.last.mem || tg[0].len != w.length || w.length >= inPlaceMin {
		return false
	}
	return tg[0].off >= p.last.lo && tg[0].off+tg[0].len <= p.last.hi
}

// specHits counts bursts read with the last cover again (tests).
var specHits atomic.Uint64

// find returns the record of the WQE at idx, or nil.
func (p *prefetch) find(idx uint16) *pfRec {
	if p.pos < len(p.recs) && p.recs[p.pos].idx == idx {
		return &p.recs[p.pos]
	}
	for i := range p.recs {
		if p.recs[i].idx == idx {
			p.pos = i
			return &p.recs[i]
		}
	}
	return nil
}

// payloadOp reports whether a WQE opcode carries a gathered payload.
func payloadOp(op uint8) bool {
	switch mlx5.WQEOpcode(op) {
	case mlx5.WQEOpRDMAWrite, mlx5.WQEOpRDMAWriteImm, mlx5.WQEOpSend, mlx5.WQEOpSendImm, mlx5.WQEOpSendInval:
		return true
	}
	return false
}

// prefetchFrom reads ahead the device-memory payloads of the WQEs from idx
// on, unless the window already holds idx. It stops at the producer index,
// at prefetchMax bytes, at a WQE it cannot decode or whose data is not all
// in device memory of one GPUMemory, and at a message that does not fit.
//
// While every payload so far is one range of one buffer (put_bw's burst),
// the walk only records the payloads and adds no copies: at the end, one
// copy of the range that covers them serves them all (see cover). The first
// payload that breaks the pattern turns the records into the copies the
// walk would have made (lay), and the walk goes on adding a copy per piece.
func (q *qp) prefetchFrom(idx uint16) {
	r := &q.req
	p := &r.pf
	if p.find(idx) != nil {
		return
	}
	p.clear()
	b := &p.b
	var g GPUMemory
	var gs, lastSpan *span // the last span checked to be g's, the span of the last copy in b
	one := true            // every record so far is one range of span cs (b holds no copy)
	var cs *span
	var lo, hi uint64 // the device range the records of cs cover
	end := idx        // after the last WQE with a record
	for i := idx; i != r.pi; {
		var sg []sge // the WQE's data segments
		var length uint64
		var next uint16
		if d := p.spare(); q.plainWQE(i, d) {
			if dist(i, r.pi) < int(d.bbs) {
				break
			}
			p.dec = p.dec[:len(p.dec)+1]
			next = i + d.bbs
			if !payloadOp(d.opcode) || d.length == 0 {
				i = next
				continue
			}
			sg, length = d.sges[:d.nsge], d.length
		} else {
			w := &p.w
			if q.readWQE(i, &p.wbuf, w) != 0 || dist(i, r.pi) < w.bbs {
				break
			}
			p.keep(w)
			next = i + uint16(w.bbs)
			if !payloadOp(w.opcode) || w.isInl || w.length == 0 {
				i = next
				continue
			}
			sg, length = w.sges[:w.nsge], w.length
		}
		tg := p.tg[:len(sg)]
		if length > uint64(prefetchMax-p.used) || !q.resolveInto(sg, tg) {
			break
		}
		if length >= inPlaceMin && q.sendsLargeDirect(wire.GID(q.rgid)) {
			break // by reference or into the wire's ring as it is sent (sendInPlace)
		}
		ok := true
		for _, t := range tg {
			if t.mem == gs {
				continue // checked already (a pointer compare; GPUMemory is an interface)
			}
			if t.mem.gpu == nil || (g != nil && t.mem.gpu != g) {
				ok = false
				break
			}
			g, gs = t.mem.gpu, t.mem
		}
		if !ok {
			break
		}
		if p.buf == nil && !p.alloc() {
			break
		}
		// The payload's first piece, and whether it is one range of it.
		var mem *span
		var src, n uint64
		one1 := true
		for _, t := range tg {
			if t.len == 0 {
				continue
			}
			if mem == nil {
				mem, src = t.mem, t.off
			} else if t.mem != mem || t.off != src+n {
				one1 = false
			}
			n += t.len
		}
		off := p.used
		if one && one1 && (cs == nil || mem == cs) {
			if cs == nil {
				cs, lo, hi = mem, src, src+length
			}
			lo, hi = min(lo, src), max(hi, src+length)
			p.used += int(length)
			p.add(i, off, length, mem, src, one1)
			i, end = next, next
			continue
		}
		if one {
			lastSpan = p.lay()
			one = false
		}
		for _, t := range tg {
			if t.len == 0 {
				continue
			}
			lastSpan = p.piece(t.mem, t.off, int(t.len), lastSpan)
		}
		p.add(i, off, length, mem, src, one1)
		i, end = next, next
	}
	p.last = lastCover{}
	if one && len(p.recs) > 0 {
		if !p.cover(cs, lo, hi) {
			p.lay()
		} else if hi-lo > guessMax {
			p.last = lastCover{mem: cs, lo: lo, hi: hi}
		}
	}
	if b.empty() {
		p.clear()
		return
	}
	hit := q.takeGuess(b, idx, end)
	p.g.valid = false
	if hit {
		return
	}
	p.g.note(b, p.buf)
	if b.run() != nil {
		p.clear()
		p.g.ops = p.g.ops[:0]
	}
	q.setWatchGuess(&p.g)
}

// add appends the record of a payload to recs, filled in place (grow).
func (p *prefetch) add(idx uint16, off int, n uint64, mem *span, src uint64, one bool) {
	r := grow(&p.recs)
	r.idx, r.off, r.len, r.mem, r.src, r.one = idx, off, n, mem, src, one
}

// piece adds the copy of n bytes at off of span s to the read-ahead batch,
// landing at p.used in buf (the next place): a piece that continues the
// last copy in device memory (last is that copy's span) extends it. It
// returns the span of the last copy.
func (p *prefetch) piece(s *span, off uint64, n int, last *span) *span {
	b := &p.b
	if k := len(b.ops) - 1; k >= 0 && s == last {
		if o := &b.ops[k]; o.SrcOff+uint64(len(o.Host)) == off {
			o.Host = o.Host[:len(o.Host)+n]
			p.used += n
			return s
		}
	}
	b.read(s, off, p.buf[p.used:p.used+n])
	p.used += n
	return s
}

// lay adds the copies of the records so far, each one range of device
// memory, back to back in buf at their offsets (pieces adjacent in device
// memory as well make one copy), and returns the span of the last copy.
func (p *prefetch) lay() *span {
	var last *span
	p.used = 0
	for i := range p.recs {
		r := &p.recs[i]
		last = p.piece(r.mem, r.src, int(r.len), last)
	}
	return last
}

// cover makes one copy of [lo, hi) of span s serve every record (each one
// range of s), when the range is at most prefetchMax and at most twice the
// bytes the records hold: the threads of a kernel post the slices of one
// buffer in whatever order they win the SQ, and one copy of the buffer
// costs less than a copy per run of adjacent slices. The payloads then sit
// in buf at their offsets in the range. Records that are adjacent in
// posting order make the same single copy that lay would. It reports false
// (nothing added) when the range is too sparse.
func (p *prefetch) cover(s *span, lo, hi uint64) bool {
	if hi-lo > prefetchMax || hi-lo > 2*uint64(p.used) {
		return false
	}
	p.b.read(s, lo, p.buf[:hi-lo])
	for i := range p.recs {
		p.recs[i].off = int(p.recs[i].src - lo)
	}
	p.used = int(hi - lo)
	return true
}

// prefetched returns n bytes at message offset off of the WQE w from the
// window, if it holds w: hit is false when it does not (read them the
// usual way); ok is false when a buffer of the WQE was deregistered
// (LOCAL_PROT_ERR).
func (q *qp) prefetched(w *wqe, off, n uint64) (b []byte, ok, hit bool) {
	p := &q.req.pf
	rec := p.find(w.idx)
	if rec == nil && p.spec && dist(p.specFrom, w.idx) < dist(p.specFrom, p.specEnd) && p.inLast(w, q.req.tg[:w.nsge]) && off+n <= w.length {
		if q.req.tg[0].mem.dead.Load() {
			return nil, false, true
		}
		at := int(q.req.tg[0].off - p.last.lo + off)
		return p.buf[at : at+int(n)], true, true
	}
	if rec == nil || rec.len != w.length || off+n > rec.len {
		return nil, false, false
	}
	for _, t := range q.req.tg[:w.nsge] {
		if t.mem.dead.Load() {
			return nil, false, true
		}
	}
	if off+n == rec.len {
		p.pos++ // the last frame of the message: the next WQE's comes next
	}
	return p.buf[rec.off+int(off) : rec.off+int(off+n)], true, true
}

// alloc maps the read-ahead buffer and pins it for the GPU's copies.
func (p *prefetch) alloc() bool {
	b, err := syscall.Mmap(-1, 0, prefetchMax, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return false
	}
	p.buf, p.unpin = b, pinHost(b)
	return true
}

// release unpins and unmaps the buffer (the QP is destroyed; both its
// locks are held).
func (p *prefetch) release() {
	if p.buf != nil {
		p.unpin()
		syscall.Munmap(p.buf)
		p.buf, p.unpin = nil, nil
	}
	p.clear()
	p.last = lastCover{}
}

// resolveInto is resolve of the data segments sg into tg (the prefetch's
// targets), through the requester's MR cache (the posts of a burst name one
// or two keys): a region deregistered after the walk is still caught, by
// execute's own resolve when its WQE is sent.
func (q *qp) resolveInto(sg []sge, tg []target) bool {
	tg = tg[:len(sg)]
	for i := range sg {
		s := &sg[i]
		m := q.req.mrs.lookup(q.nic, s.lkey)
		if m == nil {
			return false
		}
		off, ok := m.check(q.pd, s.addr, s.len, 0)
		if !ok {
			return false
		}
		tg[i] = target{mem: m.mem, off: off, len: s.len}
	}
	return true
}
