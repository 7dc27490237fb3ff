package emu

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Tests of the device-memory paths: rings, DBRs, CQs and buffers in fake
// GPU memory that the emulator reaches only through batches of copies.

// accessLog counts the copies that touch each of an endpoint's areas.
type accessLog struct {
	mu                              sync.Mutex
	ringReads, dbrReads, cqDBRReads int
	cqWrites, dataReads, dataWrites int
	areas                           [5][2]uintptr // sq, qp DBR, cq DBR, cq ring, data
	ops                             []string
	record                          bool
}

func (l *accessLog) in(i int, addr uintptr) bool {
	return addr >= l.areas[i][0] && addr < l.areas[i][1]
}

// watch installs a hook on g that classifies every copy touching e.
func watch(t *testing.T, g *fakeGPU, e *endpoint) *accessLog {
	l := &accessLog{}
	for i, b := range [][]byte{e.sq, e.qpDBR, e.cqDBR, e.cqRing, e.data} {
		a := e.addr(b)
		l.areas[i] = [2]uintptr{a, a + uintptr(len(b))}
	}
	h := func(write bool, addr uintptr, n int) {
		l.mu.Lock()
		defer l.mu.Unlock()
		switch {
		case l.in(0, addr) && !write:
			l.ringReads++
		case l.in(1, addr) && !write:
			l.dbrReads++
		case l.in(2, addr) && !write:
			l.cqDBRReads++
		case l.in(3, addr) && write:
			l.cqWrites++
		case l.in(4, addr) && !write:
			l.dataReads++
		case l.in(4, addr) && write:
			l.dataWrites++
		}
		if l.record {
			l.ops = append(l.ops, fmt.Sprintf("%v %#x+%d", write, addr, n))
		}
	}
	g.hook.Store(&h)
	t.Cleanup(func() { g.hook.Store(nil) })
	return l
}

func (l *accessLog) snapshot() accessLog {
	l.mu.Lock()
	defer l.mu.Unlock()
	return accessLog{ringReads: l.ringReads, dbrReads: l.dbrReads, cqDBRReads: l.cqDBRReads, cqWrites: l.cqWrites,
		dataReads: l.dataReads, dataWrites: l.dataWrites}
}

func deviceSetup(t *testing.T, oa, ob qpOpts) (*fakeGPU, *endpoint, *endpoint) {
	g := useGPU(t, newFakeGPU())
	a, b := twoNICs(t)
	if oa.gpu == nil {
		oa.gpu = g
	}
	x, y := pair(t, a, b, oa, ob)
	return g, x, y
}

// A send DBR in device memory is read when a doorbell arrives, not on every
// round of the engine: an idle QP costs no copy, and a DBR updated without a
// doorbell is not seen (as on a ConnectX), until a doorbell comes.
func TestDeviceDBRReadOnDoorbell(t *testing.T) {
	g, x, y := deviceSetup(t, qpOpts{}, qpOpts{})
	time.Sleep(20 * time.Millisecond) // the reads the transitions to RTS ask for
	l := watch(t, g, x)
	time.Sleep(30 * time.Millisecond)
	if s := l.snapshot(); s.dbrReads != 0 || s.ringReads != 0 {
		t.Fatalf("an idle QP read its DBR %d times and its ring %d times", s.dbrReads, s.ringReads)
	}
	// Publish a WQE in the DBR, ring no doorbell.
	x.postNoDB(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{7}))
	x.lock()
	x.qpDBR[4], x.qpDBR[5], x.qpDBR[6], x.qpDBR[7] = 0, 0, byte(x.pi>>8), byte(x.pi)
	x.unlock()
	if _, err := x.poll(30 * time.Millisecond); err == nil {
		t.Fatal("a WQE executed without a doorbell")
	}
	x.ring(mlx5.CtrlSeg{})
	if c := x.mustPoll(); c.Opcode != mlx5.CQEReq || y.data[0] != 7 {
		t.Fatalf("after the doorbell: %v, data %d", c.Opcode, y.data[0])
	}
	if s := l.snapshot(); s.dbrReads < 1 || s.dbrReads > 3 {
		t.Fatalf("%d DBR reads for one doorbell", s.dbrReads)
	}
}

// QPs sharing a UAR page with their DBRs in device memory: a doorbell that
// another QP's doorbell overwrote before the engine saw it still takes
// effect, since every doorbell on a page makes the engine read the DBRs of
// the page's QPs.
func TestDeviceDBROverwrittenDoorbell(t *testing.T) {
	g := useGPU(t, newFakeGPU())
	a, b := twoNICs(t)
	x1, y1, x2, y2 := pagePairs(t, a, b, qpOpts{gpu: g})
	x1.postNoDB(mlx5.NewRDMAWriteInline(signaled, y1.raddr(0), []byte{1}))
	x2.postNoDB(mlx5.NewRDMAWriteInline(signaled, y2.raddr(0), []byte{2}))
	a.uarPollMu.Lock()
	x1.ring(mlx5.CtrlSeg{})
	x2.ring(mlx5.CtrlSeg{}) // the same register: x1's doorbell is gone
	a.uarPollMu.Unlock()
	x1.mustPoll()
	x2.mustPoll()
	if y1.data[0] != 1 || y2.data[0] != 2 {
		t.Fatalf("data %d %d", y1.data[0], y2.data[0])
	}
}

// Every WQE published by one doorbell is read from a ring in device memory
// with one batch (one copy, two where the range wraps), and the mirror the
// engine decodes from stays right across many wraps with WQEs of several
// WQEBBs.
func TestDeviceRingBatchRead(t *testing.T) {
	g, x, y := deviceSetup(t, qpOpts{logSQ: 6}, qpOpts{})
	l := watch(t, g, x)
	payload := func(k, i int) []byte {
		b := make([]byte, 1+(k*7+i)%150) // 1..150 bytes inline: WQEs of 1 to 4 WQEBBs
		for j := range b {
			b[j] = byte(k + i + j)
		}
		return b
	}
	for k := 0; k < 40; k++ {
		const n = 12
		before := l.snapshot()
		var want [n][]byte
		for i := 0; i < n; i++ {
			want[i] = payload(k, i)
			x.postNoDB(mlx5.NewRDMAWriteInline(signaled, y.raddr(i*256), want[i]))
		}
		x.ring(mlx5.CtrlSeg{})
		for i := 0; i < n; i++ {
			if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
				t.Fatalf("round %d WQE %d: %v %v", k, i, c.Opcode, c.Syndrome)
			}
		}
		for i := 0; i < n; i++ {
			if got := y.data[i*256 : i*256+len(want[i])]; !bytes.Equal(got, want[i]) {
				t.Fatalf("round %d WQE %d: data %x, want %x", k, i, got, want[i])
			}
		}
		if d := l.snapshot().ringReads - before.ringReads; d > 2 {
			t.Fatalf("round %d: %d ring copies for one doorbell", k, d)
		}
	}
}

// The payloads of WRITEs posted together from adjacent device memory are
// read with one copy, also when they are posted out of order (the threads
// of a kernel win the SQ in any order), or spread over a range at most
// twice their size (one copy of the range); from places spread wider, with
// one copy each, in one batch.
func TestDevicePayloadsCoalesced(t *testing.T) {
	for _, c := range []struct {
		stride int
		order  func(i int) int
		copies int
	}{
		{64, func(i int) int { return i }, 1},
		{64, func(i int) int { return (i * 37) % 64 }, 1},
		{128, func(i int) int { return i }, 1},
		{256, func(i int) int { return i }, 64},
	} {
		stride := c.stride
		t.Run(fmt.Sprintf("stride%d_%d", stride, c.order(1)), func(t *testing.T) {
			g, x, y := deviceSetup(t, qpOpts{logSQ: 7, logCQ: 8, mtu: mlx5.MTU4096}, qpOpts{})
			x.lock()
			fill(x.data, byte(stride))
			x.unlock()
			l := watch(t, g, x)
			const n = 64
			calls := g.calls.Load()
			for i := 0; i < n; i++ {
				k := c.order(i)
				x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(k*64), x.sge(k*stride, 64)))
			}
			x.ring(mlx5.CtrlSeg{})
			for i := 0; i < n; i++ {
				if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
					t.Fatalf("WQE %d: %v %v", i, c.Opcode, c.Syndrome)
				}
			}
			x.lock()
			for i := 0; i < n; i++ {
				if !bytes.Equal(y.data[i*64:i*64+64], x.data[i*stride:i*stride+64]) {
					x.unlock()
					t.Fatalf("message %d differs", i)
				}
			}
			x.unlock()
			if s := l.snapshot(); s.dataReads != c.copies {
				t.Fatalf("%d payload copies, want %d", s.dataReads, c.copies)
			}
			if c := g.calls.Load() - calls; c > 8 {
				t.Fatalf("%d batches for %d WRITEs", c, n)
			}
		})
	}
}

// readPosted keeps x's engine away from its QP (it returns the function
// that lets it go) and has the QP read its DBR, which it sets to the WQEs
// x posted: a test then drives the requester's steps by hand.
func readPosted(x *endpoint) (release func()) {
	q := x.qpObj()
	x.nic.uarPollMu.Lock() // keep the engine off the doorbell
	q.mu.Lock()
	x.lock()
	x.qpDBR[6], x.qpDBR[7] = byte(x.pi>>8), byte(x.pi)
	x.unlock()
	q.dbrKick.Store(true)
	q.readDBR()
	return func() {
		q.mu.Unlock()
		x.nic.uarPollMu.Unlock()
	}
}

// A payload read ahead whose buffer is deregistered before its message
// leaves is not sent: the view is handed out only while the memory lives.
func TestDevicePrefetchAfterDereg(t *testing.T) {
	_, x, y := deviceSetup(t, qpOpts{}, qpOpts{})
	q := x.qpObj()
	x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 64)))
	x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(64), x.sge(64, 64)))
	defer readPosted(x)()
	var w wqe
	if syn := q.readWQE(0, &q.req.buf, &w); syn != 0 || !q.resolve(&w, 0) {
		t.Fatalf("WQE 0: %v", syn)
	}
	q.prefetchFrom(0)
	if len(q.req.pf.recs) != 2 {
		t.Fatalf("%d payloads read ahead, want 2", len(q.req.pf.recs))
	}
	if _, ok, hit := q.prefetched(&w, 0, 64); !ok || !hit {
		t.Fatalf("prefetched: ok %v hit %v", ok, hit)
	}
	q.req.tg[0].mem.dead.Store(true) // what Dereg does first
	defer q.req.tg[0].mem.dead.Store(false)
	if _, ok, hit := q.prefetched(&w, 0, 64); ok || !hit {
		t.Fatalf("after dereg: ok %v hit %v; want a hit that fails", ok, hit)
	}
}

// CQEs written in batches to a ring in device memory never show a CQE of
// the current pass with bytes of an older one, even when each copy's bytes
// land last to first: the fake tears every copy and checks the ring after
// every piece.
func TestDeviceCQEsNeverTorn(t *testing.T) {
	g := useGPU(t, newFakeGPU())
	a, b := twoNICs(t)
	x := newEndpoint(t, a, qpOpts{gpu: g, logCQ: 5, logSQ: 6})
	y := newEndpoint(t, b, qpOpts{})
	x.connect(y, 1, 1)
	y.connect(x, 1, 1)
	var bad atomic.Value
	checks := 0
	g.tear = func() {
		checks++
		for slot := 0; slot < 32; slot++ {
			c := x.cqRing[slot*64 : slot*64+64]
			if c[63]>>4 == byte(mlx5.CQEInvalid) {
				continue
			}
			d, err := mlx5.DecodeCQE(c)
			pass := uint8(d.WQECounter>>5) & 1
			if err != nil || d.QPN != x.qpn || int(d.WQECounter)%32 != slot || d.Owner != pass || d.ByteCnt != 1 || d.Timestamp == 0 {
				bad.CompareAndSwap(nil, fmt.Sprintf("slot %d: %+v %v", slot, d, err))
			}
		}
	}
	for k := 0; k < 5; k++ {
		for i := 0; i < 24; i++ {
			x.postNoDB(mlx5.NewRDMAWriteInline(signaled, y.raddr(i), []byte{byte(i)}))
		}
		x.ring(mlx5.CtrlSeg{})
		for i := 0; i < 24; i++ {
			if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
				t.Fatalf("%v %v", c.Opcode, c.Syndrome)
			}
		}
	}
	// Lone CQEs (a flush of one: its body, then its last byte alone).
	before := checks
	for i := 0; i < 40; i++ {
		x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(i), []byte{byte(i)}))
		if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
			t.Fatalf("%v %v", c.Opcode, c.Syndrome)
		}
	}
	if v := bad.Load(); v != nil {
		t.Fatalf("a poller could see a torn CQE: %s", v)
	}
	if checks == 0 || checks == before {
		t.Fatal("the ring was never checked")
	}
}

// A CQ DBR in device memory is read only when the CQ looks full, and a CQ
// without room still overruns as on a ConnectX: its consumer counter is
// read again before the CQ is declared full.
func TestDeviceCQDBRLazy(t *testing.T) {
	g, x, y := deviceSetup(t, qpOpts{logCQ: 3}, qpOpts{})
	l := watch(t, g, x)
	for i := 0; i < 6; i++ {
		x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(i), []byte{1}))
		x.mustPoll()
	}
	if s := l.snapshot(); s.cqDBRReads != 0 {
		t.Fatalf("%d CQ DBR reads with room to spare", s.cqDBRReads)
	}
	for i := 0; i < 12; i++ { // consumed: 6 more fit only after reading the DBR again
		x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(i), []byte{1}))
		x.mustPoll()
	}
	if s := l.snapshot(); s.cqDBRReads == 0 || s.cqDBRReads > 4 {
		t.Fatalf("%d CQ DBR reads for 18 CQEs on an 8-entry CQ", s.cqDBRReads)
	}
	for i := 0; i < 16; i++ { // never consumed: overrun
		x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(i), []byte{1}))
	}
	deadline := time.Now().Add(5 * time.Second)
	for x.queryCQ().Status != cqStatusOverflow {
		if time.Now().After(deadline) {
			t.Fatalf("no overrun: CQ status %#x", x.queryCQ().Status)
		}
		time.Sleep(time.Millisecond)
	}
}

// A copy that fails fails what it was for: a ring that cannot be read
// completes its WQE with LOCAL_PROT_ERR, a CQ ring that cannot be written
// puts the CQ in error (status 0xa).
func TestDeviceCopyFailures(t *testing.T) {
	t.Run("ring", func(t *testing.T) {
		g, x, y := deviceSetup(t, qpOpts{}, qpOpts{})
		ring := [2]uintptr{x.addr(x.sq), x.addr(x.sq) + uintptr(len(x.sq))}
		f := func(o *DeviceCopy) error {
			if a := o.Src; o.Kind == CopyToHost && a.Base()+uintptr(o.SrcOff) >= ring[0] && a.Base()+uintptr(o.SrcOff) < ring[1] {
				return errors.New("injected")
			}
			return nil
		}
		g.fail.Store(&f)
		defer g.fail.Store(nil)
		x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{1}))
		if c := x.mustPoll(); c.Opcode != mlx5.CQEReqErr || c.Syndrome != mlx5.SyndromeLocalProtErr {
			t.Fatalf("%v %v, want REQ_ERR LOCAL_PROT_ERR", c.Opcode, c.Syndrome)
		}
	})
	t.Run("cq", func(t *testing.T) {
		g, x, y := deviceSetup(t, qpOpts{}, qpOpts{})
		cq := [2]uintptr{x.addr(x.cqRing), x.addr(x.cqRing) + uintptr(len(x.cqRing))}
		f := func(o *DeviceCopy) error {
			if a := o.Dst; o.Kind == CopyToDevice && a.Base()+uintptr(o.DstOff) >= cq[0] && a.Base()+uintptr(o.DstOff) < cq[1] {
				return errors.New("injected")
			}
			return nil
		}
		g.fail.Store(&f)
		defer g.fail.Store(nil)
		x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{1}))
		deadline := time.Now().Add(5 * time.Second)
		for x.queryCQ().Status != cqStatusWriteErr {
			if time.Now().After(deadline) {
				t.Fatalf("CQ status %#x, want 0xa", x.queryCQ().Status)
			}
			time.Sleep(time.Millisecond)
		}
		if s := x.queryQP().State; s != mlx5.QPStateERR {
			t.Fatalf("QP state %v after its CQ failed, want ERR", s)
		}
	})
}

// The stage breakdown attributes each device copy of a ping-pong to its
// stage: on the cost model (5 us per batch) the DBR and WQE read, the
// payload read (never guessed here) and the write at the responder each take at least one
// batch's cost, and every stage follows the one before.
func TestBreakdownStages(t *testing.T) {
	cost := &copyCost{call: 5 * time.Microsecond, op: time.Microsecond, bw: 25e9, dtod: 1e12}
	g := useGPU(t, newModelGPU(cost))
	a, b := twoNICs(t)
	o := qpOpts{gpu: g, mtu: mlx5.MTU4096, logSQ: 6, logCQ: 7}
	x, y := pair(t, a, b, o, o)
	StartBreakdown()
	for i := 0; i < 20; i++ {
		s, r := x, y
		if i%2 == 1 {
			s, r = y, x
		}
		// Each message from another offset: a guessed payload (from the
		// buffer of the side's last message) would make the payload read
		// free.
		s.post(mlx5.NewRDMAWrite(signaled, r.raddr(4096), s.sge(64*i, 8)))
		s.mustPoll()
	}
	bd := StopBreakdown()
	t.Logf("%+v", bd)
	if bd.Messages < 15 {
		t.Fatalf("%d messages followed of 20", bd.Messages)
	}
	for name, d := range map[string]time.Duration{"doorbell to WQE": bd.DoorbellToWQE, "WQE to payload": bd.WQEToPayload, "payload to landed": bd.PayloadToLand} {
		if d < 5*time.Microsecond {
			t.Errorf("%s: %v, less than the one batch it costs", name, d)
		}
	}
	if bd.LandToCQE < 0 || bd.DoorbellToLand < bd.DoorbellToWQE+bd.WQEToPayload+bd.PayloadToLand-time.Microsecond {
		t.Errorf("stages out of order: %+v", bd)
	}
	if StopBreakdown() != (Breakdown{}) {
		t.Error("a second stop returned figures")
	}
}

// A kernel that writes from the same device buffer again and again (a
// latency loop) has its payload copied in the batch that reads the DBR and
// the WQE: the requester runs one batch per WRITE, not two, and every
// message carries the bytes the buffer held when its doorbell rang.
func TestDeviceGuessedPayload(t *testing.T) {
	g, x, y := deviceSetup(t, qpOpts{}, qpOpts{})
	l := watch(t, g, x)
	const n = 50
	hits := guessHits.Load()
	var batches int64
	for i := 0; i < n; i++ {
		x.lock()
		for k := 0; k < 8; k++ {
			x.data[k] = byte(i*8 + k)
		}
		x.unlock()
		c0 := g.calls.Load()
		x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 8)))
		if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
			t.Fatalf("WRITE %d: %v %v", i, c.Opcode, c.Syndrome)
		}
		if i >= 2 {
			batches += g.calls.Load() - c0
		}
		for k := 0; k < 8; k++ {
			if y.data[k] != byte(i*8+k) {
				t.Fatalf("WRITE %d: landed % x, want the buffer's bytes as of its doorbell", i, y.data[:8])
			}
		}
	}
	if h := guessHits.Load() - hits; h < n-2 {
		t.Fatalf("%d of %d payloads served from the guess", h, n)
	}
	// Per WRITE: the DBR, WQE and payload batch, and the CQE (with the
	// CQ's DBR when it is read); not a separate payload batch.
	if per := float64(batches) / (n - 2); per > 2.5 {
		t.Fatalf("%.1f batches of copies per WRITE, want at most 2.5 (DBR+WQE+payload, CQE)", per)
	}
	if s := l.snapshot(); s.dataReads < n-2 || s.dataReads > n+2 {
		t.Fatalf("%d payload copies for %d WRITEs", s.dataReads, n)
	}
}

// A guess is only a guess: a WRITE from another place of the buffer gets
// its own bytes, and a buffer deregistered after its bytes were guessed
// fails the next WRITE from it with LOCAL_PROT_ERR, as without the guess.
func TestDeviceGuessMisses(t *testing.T) {
	_, x, y := deviceSetup(t, qpOpts{}, qpOpts{})
	x.lock()
	for k := range x.data[:256] {
		x.data[k] = byte(k)
	}
	x.unlock()
	for _, off := range []int{0, 0, 64, 128, 128, 0} {
		x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(off, 8)))
		if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
			t.Fatalf("WRITE from %d: %v %v", off, c.Opcode, c.Syndrome)
		}
		for k := 0; k < 8; k++ {
			if y.data[k] != byte(off+k) {
				t.Fatalf("WRITE from %d: landed % x", off, y.data[:8])
			}
		}
	}
	// The guess now names the buffer; retire its span as a deregistration
	// does first, while the MR is still found.
	x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 8)))
	x.mustPoll()
	m := x.nic.lookupMR(x.mr.LKey())
	m.mem.dead.Store(true)
	defer m.mem.dead.Store(false)
	x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 8)))
	if c := x.mustPoll(); c.Opcode != mlx5.CQEReqErr || c.Syndrome != mlx5.SyndromeLocalProtErr {
		t.Fatalf("WRITE from a retired buffer: %v %v, want LOCAL_PROT_ERR", c.Opcode, c.Syndrome)
	}
}

// A guess serves only WQEs before the producer index of the doorbell its
// bytes were copied after: not a WQE at or past it, not a window that
// reaches past it.
func TestGuessLimit(t *testing.T) {
	_, x, _ := deviceSetup(t, qpOpts{}, qpOpts{})
	q := x.qpObj()
	q.mu.Lock()
	defer q.mu.Unlock()
	p := &q.req.pf
	if p.buf == nil && !p.alloc() {
		t.Fatal("no read-ahead buffer")
	}
	mem := x.nic.lookupMR(x.mr.LKey()).mem
	for _, tc := range []struct {
		idx, end, limit uint16
		want            bool
	}{
		{3, 5, 5, true}, {3, 4, 5, true}, {3, 6, 5, false}, {5, 6, 5, false}, {7, 8, 5, false},
		{0xfffe, 2, 3, true}, {2, 3, 0xfffe, false},
	} {
		p.g = guess{ops: []guessOp{{mem: mem, off: 64, at: 0, n: 8}}, buf: make([]byte, guessMax), limit: tc.limit, valid: true}
		var b batch
		b.read(mem, 64, p.buf[:8])
		if got := q.takeGuess(&b, tc.idx, tc.end); got != tc.want {
			t.Errorf("WQEs %d..%d, guess before %d: served %v, want %v", tc.idx, tc.end, tc.limit, got, tc.want)
		}
	}
	p.g = guess{}
}

// The WQEs the read-ahead's walk decoded are not parsed again when they are
// sent: the plain ones (WRITE, NOP; at most two data segments, no inline
// data) come from the walk's records, the others are decoded again; every
// one completes in order, as posted, and the data lands.
func TestWalkDecodesOnce(t *testing.T) {
	_, x, y := deviceSetup(t, qpOpts{logSQ: 7, logCQ: 8, mtu: mlx5.MTU4096}, qpOpts{})
	x.lock()
	fill(x.data[:8192], 0x5d)
	x.unlock()
	inl := []byte("inline bytes, sent as they were posted")
	type post struct {
		w    mlx5.WQE
		op   mlx5.WQEOpcode
		kept bool // the walk keeps it (after the first WQE, which transmit parsed itself)
	}
	posts := []post{
		{mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 64)), mlx5.WQEOpRDMAWrite, false},
		{mlx5.NewNOP(signaled), mlx5.WQEOpNop, true},
		{mlx5.NewRDMAWrite(signaled, y.raddr(64), x.sge(64, 32), x.sge(1000, 32)), mlx5.WQEOpRDMAWrite, true},
		{mlx5.NewRDMAWrite(signaled, y.raddr(128), x.sge(128, 10), x.sge(2000, 10), x.sge(3000, 12)), mlx5.WQEOpRDMAWrite, false},
		{mlx5.NewRDMAWriteInline(signaled, y.raddr(256), inl), mlx5.WQEOpRDMAWrite, false},
		{mlx5.NewRDMARead(signaled, y.raddr(4096), x.sge(4096, 100)), mlx5.WQEOpRDMARead, false},
		{mlx5.NewRDMAWrite(signaled, y.raddr(512), x.sge(512, 64)), mlx5.WQEOpRDMAWrite, true},
	}
	y.lock()
	fill(y.data[4096:4196], 0xa7)
	y.unlock()
	want := 0
	for _, p := range posts {
		if p.kept {
			want++
		}
	}
	before := walkDecoded.Load()
	idx := make([]uint16, len(posts))
	for i, p := range posts {
		idx[i] = x.postNoDB(p.w)
	}
	x.ring(mlx5.CtrlSeg{})
	for i, p := range posts {
		expectOK(t, x.mustPoll(), p.op, idx[i])
	}
	if got := walkDecoded.Load() - before; got != uint64(want) {
		t.Fatalf("%d WQEs taken from the walk's records, want %d", got, want)
	}
	x.lock()
	y.lock()
	defer x.unlock()
	defer y.unlock()
	for _, c := range []struct {
		name     string
		got, exp []byte
	}{
		{"WRITE 1 SGE", y.data[0:64], x.data[0:64]},
		{"WRITE 2 SGEs", y.data[64:128], append(append([]byte{}, x.data[64:96]...), x.data[1000:1032]...)},
		{"WRITE 3 SGEs", y.data[128:160], append(append(append([]byte{}, x.data[128:138]...), x.data[2000:2010]...), x.data[3000:3012]...)},
		{"WRITE inline", y.data[256 : 256+len(inl)], inl},
		{"READ", x.data[4096:4196], y.data[4096:4196]},
		{"last WRITE", y.data[512:576], x.data[512:576]},
	} {
		if !bytes.Equal(c.got, c.exp) {
			t.Errorf("%s: landed bytes differ", c.name)
		}
	}
}
