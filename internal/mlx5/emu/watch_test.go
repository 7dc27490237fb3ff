package emu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Tests of the send-queue watch (watch.go) on the CPU. The fake GPU memory
// gets an opt-in SQWatcher whose watches do what the GPU's will: look at
// the QP's send counter in (fake) device memory and, when told to (manual
// mode) or whenever it moves (automatic mode), copy the new WQE slots and
// the guess's bytes into host memory of their own, then publish the
// counter. The engine must serve doorbells from those pushes, fall back to
// batches when none covers a doorbell, and never execute what software did
// not post.

// watchConfig turns the fake's watches on (fakeGPU.watches).
type watchConfig struct {
	auto bool // every watch pushes by itself whenever the counter changes

	mu      sync.Mutex
	watches []*fakeWatch // in the order WatchSQ started them
	calls   int          // WatchSQ calls
}

// enableWatches lets g start watches from now on (before the QPs are
// created: a QP asks for its watch once). Test cleanup stops every watch
// still running and reports what the fake saw go wrong.
func enableWatches(t testing.TB, g *fakeGPU, auto bool) *watchConfig {
	c := &watchConfig{auto: auto}
	g.watches.Store(c)
	t.Cleanup(func() {
		g.watches.Store(nil)
		for _, w := range c.all() {
			w.Close()
			for _, v := range w.violations() {
				t.Errorf("fake watch: %s", v)
			}
		}
	})
	return c
}

func (c *watchConfig) all() []*fakeWatch {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*fakeWatch(nil), c.watches...)
}

// only returns the one watch started, waiting for the engine to start it
// (it does on its first look at the QP after a transition).
func (c *watchConfig) only(t testing.TB) *fakeWatch {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		switch ws := c.all(); {
		case len(ws) == 1:
			return ws[0]
		case len(ws) > 1:
			t.Fatalf("%d watches started, want 1", len(ws))
		case time.Now().After(deadline):
			t.Fatal("no watch started")
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// WatchSQ makes fakeGPU an SQWatcher. It fails unless a test turned
// watches on, so that every other test keeps the batch path and its
// counts of copies.
func (g *fakeGPU) WatchSQ(spec SQWatchSpec) (SQWatch, error) {
	c := g.watches.Load()
	if c == nil {
		return nil, errors.New("fake GPU: send-queue watches are off")
	}
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	if spec.LogSize > 15 {
		return nil, fmt.Errorf("fake GPU: watch: ring of 2^%d slots", spec.LogSize)
	}
	size := 1 << spec.LogSize
	g.mu.Lock()
	_, errD := g.bytesAt(spec.DBR, spec.DBROff, 4)
	_, errR := g.bytesAt(spec.Ring, spec.RingOff, size*wqebb)
	g.mu.Unlock()
	if err := errors.Join(errD, errR); err != nil {
		return nil, fmt.Errorf("fake GPU: watch: %w", err)
	}
	w := &fakeWatch{g: g, spec: spec, size: size, ring: make([]byte, size*wqebb), live: true,
		stop: make(chan struct{}), done: make(chan struct{})}
	c.mu.Lock()
	c.watches = append(c.watches, w)
	c.mu.Unlock()
	if c.auto {
		go w.run()
	} else {
		close(w.done)
	}
	return w, nil
}

// bytesAt maps n bytes at off of a range this fake claimed; g.mu held.
func (g *fakeGPU) bytesAt(r DeviceRange, off uint64, n int) ([]byte, error) {
	f, ok := r.(*fakeRange)
	if !ok || f.g != g {
		return nil, errors.New("a range this fake did not claim")
	}
	b, ok := g.find(f.base+uintptr(off), uint64(n))
	if !ok {
		return nil, fmt.Errorf("0x%x+%d outside any allocation", f.base+uintptr(off), n)
	}
	return b, nil
}

// fakeWatch is one watch. Reads of the fake's device memory happen under
// g.mu; the watch's own state is guarded by mu, and g.mu is never taken
// while mu is held. pushMu makes pushes one at a time (one watcher per
// send queue on the GPU).
type fakeWatch struct {
	g    *fakeGPU
	spec SQWatchSpec
	size int

	pushMu sync.Mutex

	mu       sync.Mutex
	ring     []byte      // the ring as pushed (the watch's host memory)
	counter  uint32      // the newest counter pushed
	live     bool        // Latest's live (setLive)
	reads    []GuessRead // the current guess: a copy of SetGuess's reads
	gen      int         // SetGuess calls so far
	guess    []byte      // the guess's bytes of the last push that copied them
	guessGen int         // the SetGuess generation guess was copied for
	guessAt  uint32      // the counter of that push
	lag      bool        // pushes leave guess as it was (setLagGuess)
	pushes   int
	ringGets int // ReadRing calls
	guesses  int // Guess calls that returned bytes
	closes   int // Close calls
	bad      []string

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// push does what the GPU does when it sees the counter move: it reads the
// counter, then copies the WQE slots from the last counter pushed up to it
// (the whole ring at most), then the guess's bytes, and only then
// publishes all of it.
func (w *fakeWatch) push() {
	w.pushMu.Lock()
	defer w.pushMu.Unlock()
	w.mu.Lock()
	if w.closes > 0 {
		w.bad = append(w.bad, "a push after Close")
		w.mu.Unlock()
		return
	}
	from := w.counter
	reads := append([]GuessRead(nil), w.reads...)
	gen, lag := w.gen, w.lag
	w.mu.Unlock()

	g := w.g
	g.mu.Lock()
	b, err := g.bytesAt(w.spec.DBR, w.spec.DBROff, 4)
	var c uint32
	if err == nil {
		c = binary.BigEndian.Uint32(b)
	}
	g.mu.Unlock()
	if err != nil {
		w.fail("counter: %v", err)
		return
	}

	n := min(int(uint16(c)-uint16(from)), w.size)
	first := uint16(c) - uint16(n)
	slots := make([]byte, n*wqebb)
	g.mu.Lock()
	ring, err := g.bytesAt(w.spec.Ring, w.spec.RingOff, w.size*wqebb)
	if err == nil {
		for k := 0; k < n; k++ {
			s := int(first+uint16(k)) & (w.size - 1)
			copy(slots[k*wqebb:(k+1)*wqebb], ring[s*wqebb:])
		}
	}
	g.mu.Unlock()
	if err != nil {
		w.fail("ring: %v", err)
		return
	}

	var gb []byte
	if len(reads) > 0 && !lag {
		g.mu.Lock()
		for _, r := range reads {
			src, err := g.bytesAt(r.Src, r.Off, r.N)
			if err != nil {
				g.mu.Unlock()
				w.fail("guess read %+v: %v", r, err)
				return
			}
			gb = append(gb, src...)
		}
		g.mu.Unlock()
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	for k := 0; k < n; k++ {
		s := int(first+uint16(k)) & (w.size - 1)
		copy(w.ring[s*wqebb:(s+1)*wqebb], slots[k*wqebb:])
	}
	w.counter = c
	if gb != nil {
		w.guess, w.guessGen, w.guessAt = gb, gen, c
	}
	w.pushes++
}

func (w *fakeWatch) fail(format string, args ...any) {
	w.mu.Lock()
	w.bad = append(w.bad, fmt.Sprintf(format, args...))
	w.mu.Unlock()
}

// run is the automatic mode: push whenever the counter differs from the
// one pushed last, until Close.
func (w *fakeWatch) run() {
	defer close(w.done)
	g := w.g
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		g.mu.Lock()
		b, err := g.bytesAt(w.spec.DBR, w.spec.DBROff, 4)
		var c uint32
		if err == nil {
			c = binary.BigEndian.Uint32(b)
		}
		g.mu.Unlock()
		if err != nil {
			w.fail("the DBR, while the watch runs: %v", err) // a GPU would fault here
			return
		}
		w.mu.Lock()
		last := w.counter
		w.mu.Unlock()
		if c != last {
			w.push()
			continue
		}
		runtime.Gosched()
	}
}

func (w *fakeWatch) Latest() (uint32, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counter, w.live && w.closes == 0
}

func (w *fakeWatch) ReadRing(from, to uint16, mirror []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ringGets++
	if d := dist(from, to); d > w.size || d > dist(from, uint16(w.counter)) {
		w.bad = append(w.bad, fmt.Sprintf("ReadRing(%d, %d) past the counter %d or the ring", from, to, uint16(w.counter)))
		return
	}
	if len(mirror) != len(w.ring) {
		w.bad = append(w.bad, fmt.Sprintf("ReadRing into a mirror of %d bytes, want %d", len(mirror), len(w.ring)))
		return
	}
	for i := from; i != to; i++ {
		s := int(i) & (w.size - 1)
		copy(mirror[s*wqebb:(s+1)*wqebb], w.ring[s*wqebb:])
	}
}

func (w *fakeWatch) SetGuess(reads []GuessRead) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reads = append([]GuessRead(nil), reads...) // reads is not kept
	w.gen++
}

func (w *fakeWatch) Guess(dst []byte) (uint32, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.guess == nil || w.guessGen != w.gen {
		return 0, false
	}
	if len(dst) < len(w.guess) {
		w.bad = append(w.bad, fmt.Sprintf("Guess into %d bytes, the guess has %d", len(dst), len(w.guess)))
		return 0, false
	}
	copy(dst, w.guess)
	w.guesses++
	return w.guessAt, true
}

func (w *fakeWatch) Close() {
	w.mu.Lock()
	w.closes++
	w.mu.Unlock()
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

// setLive makes Latest report live (the default) or not.
func (w *fakeWatch) setLive(live bool) {
	w.mu.Lock()
	w.live = live
	w.mu.Unlock()
}

// setLagGuess makes the pushes that follow leave the guess's bytes those
// of an earlier push (a GPU whose guess copies lag its counter): Guess
// then returns them with that push's counter.
func (w *fakeWatch) setLagGuess(lag bool) {
	w.mu.Lock()
	w.lag = lag
	w.mu.Unlock()
}

// watchStats is what a watch did, for the tests' checks.
type watchStats struct {
	counter                          uint32
	pushes, ringGets, guesses, close int
	reads                            []GuessRead
}

func (w *fakeWatch) stats() watchStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return watchStats{counter: w.counter, pushes: w.pushes, ringGets: w.ringGets, guesses: w.guesses,
		close: w.closes, reads: append([]GuessRead(nil), w.reads...)}
}

func (w *fakeWatch) violations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.bad...)
}

// publishDBR writes the producer index to the send DBR without ringing
// the doorbell (a kernel between its DBR store and its doorbell).
func (e *endpoint) publishDBR() {
	e.lock()
	defer e.unlock()
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&e.qpDBR[4])), mlx5.BE32Native(uint32(e.pi)))
}

// setDBR writes v to the send DBR (a counter software should not write).
func (e *endpoint) setDBR(v uint32) {
	e.lock()
	defer e.unlock()
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&e.qpDBR[4])), mlx5.BE32Native(v))
}

// doorbell rings a doorbell that announces pi, whatever the DBR holds.
func (e *endpoint) doorbell(pi uint16) {
	d := mlx5.SQDoorbellPI(e.qpn, uint32(pi))
	atomic.StoreUint64(ptr64(e.uar.RegAddr()), d.Uint64())
}

// watchSetup is deviceSetup with the fake's watches on (auto: automatic
// pushes) for x, the endpoint in fake device memory; y is in host memory.
func watchSetup(t *testing.T, auto bool, oa qpOpts) (*fakeGPU, *watchConfig, *endpoint, *endpoint) {
	g := useGPU(t, newFakeGPU())
	c := enableWatches(t, g, auto)
	a, b := twoNICs(t)
	oa.gpu = g
	x, y := pair(t, a, b, oa, qpOpts{})
	return g, c, x, y
}

// startWatch rings x's first doorbell, for a NOP, and returns the QP's
// watch once it started. The NOP does not wait for a push that covers it
// (it has none; in manual mode none comes) longer than watchWait before a
// batch reads it.
//
// It first lets the engine take the DBR read that the QP's last state
// change asked for. Otherwise that read can find the NOP and complete it
// before the engine even took the doorbell, which it then serves later,
// from the watch, as a hardware NIC serves a doorbell it takes late: with
// the newest counter, so that a WQE the test posts next without a doorbell
// would run on it.
func startWatch(t *testing.T, c *watchConfig, x *endpoint) *fakeWatch {
	t.Helper()
	settle(t, x)
	idx := x.post(mlx5.NewNOP(signaled))
	expectOK(t, x.mustPoll(), mlx5.WQEOpNop, idx)
	return c.only(t)
}

// settle waits until the engine has taken every DBR read asked of x's QP
// (a state change or a doorbell asks for one) and finished it: the engine
// takes the request and reads the DBR under the QP's mu, so a request seen
// gone under mu is done.
func settle(t testing.TB, x *endpoint) {
	t.Helper()
	q := x.qpObj()
	deadline := time.Now().Add(5 * time.Second)
	for {
		q.mu.Lock()
		pending := q.dbrKick.Load()
		q.mu.Unlock()
		if !pending {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the engine did not read the DBR within 5 s")
		}
		time.Sleep(10 * time.Microsecond)
	}
}

// watchDelta is the change of WatchCounts since a snapshot.
type watchDelta struct{ hits, misses uint64 }

func watchSince() func() watchDelta {
	h0, m0 := WatchCounts()
	return func() watchDelta {
		h, m := WatchCounts()
		return watchDelta{h - h0, m - m0}
	}
}

// inlinePayload is the bytes of WQE i of round k: 1 to 150 bytes inline,
// so WQEs of 1 to 4 WQEBBs.
func inlinePayload(k, i int) []byte {
	b := make([]byte, 1+(k*7+i)%150)
	for j := range b {
		b[j] = byte(k + i + j)
	}
	return b
}

// Doorbells served from pushes: with the WQEs and the counter pushed before
// the doorbell, the engine reads neither the DBR nor a ring slot through
// Copy, across many wraps of a 64-slot ring, with several WQEs of 1 to 4
// WQEBBs per doorbell; every WRITE lands its bytes and completes in order.
// It fails if the engine ignores the pushes (DBR and ring reads show up) or
// takes the wrong slots from them (wrong data, error CQEs, the fake's
// complaint about a ReadRing past the counter).
func TestWatchServesDoorbells(t *testing.T) {
	g, c, x, y := watchSetup(t, false, qpOpts{logSQ: 6})
	w := startWatch(t, c, x)
	l := watch(t, g, x)
	since := watchSince()
	const rounds, n = 40, 12
	for k := 0; k < rounds; k++ {
		var want [n][]byte
		var idx [n]uint16
		for i := 0; i < n; i++ {
			want[i] = inlinePayload(k, i)
			idx[i] = x.postNoDB(mlx5.NewRDMAWriteInline(signaled, y.raddr(i*256), want[i]))
		}
		x.publishDBR()
		w.push()
		x.ring(mlx5.CtrlSeg{})
		for i := 0; i < n; i++ {
			if cq := x.mustPoll(); cq.Opcode != mlx5.CQEReq || cq.WQECounter != idx[i] {
				t.Fatalf("round %d WQE %d: %v %v counter %d, want REQ counter %d", k, i, cq.Opcode, cq.Syndrome, cq.WQECounter, idx[i])
			}
		}
		for i := 0; i < n; i++ {
			if got := y.data[i*256 : i*256+len(want[i])]; string(got) != string(want[i]) {
				t.Fatalf("round %d WQE %d: data %x, want %x", k, i, got, want[i])
			}
		}
	}
	if s := l.snapshot(); s.dbrReads != 0 || s.ringReads != 0 {
		t.Fatalf("%d DBR and %d ring copies with every doorbell pushed", s.dbrReads, s.ringReads)
	}
	if d := since(); d.hits < rounds || d.misses != 0 {
		t.Fatalf("watch hits %d, misses %d for %d pushed doorbells", d.hits, d.misses, rounds)
	}
	if s := w.stats(); s.ringGets < rounds || s.pushes != rounds {
		t.Fatalf("%d pushes, %d ring reads from the watch for %d doorbells", s.pushes, s.ringGets, rounds)
	}
}

// A push is not a doorbell: a WQE whose counter the watch pushed executes
// only once its doorbell rings (as a DBR written without one is not
// executed on a ConnectX). Fails if the engine acts on pushes by itself.
func TestWatchNeedsDoorbell(t *testing.T) {
	_, c, x, y := watchSetup(t, false, qpOpts{})
	w := startWatch(t, c, x)
	idx := x.postNoDB(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{7}))
	x.publishDBR()
	w.push()
	if s := w.stats(); s.counter != uint32(x.pi) {
		t.Fatalf("pushed counter %d, want %d", s.counter, x.pi)
	}
	if cq, err := x.poll(30 * time.Millisecond); err == nil {
		t.Fatalf("a pushed WQE executed without a doorbell: %v", cq.Opcode)
	}
	x.ring(mlx5.CtrlSeg{})
	if cq := x.mustPoll(); cq.Opcode != mlx5.CQEReq || cq.WQECounter != idx || y.data[0] != 7 {
		t.Fatalf("after the doorbell: %v counter %d, data %d", cq.Opcode, cq.WQECounter, y.data[0])
	}
}

// The wait for a push, on a clock the test drives (manual NICs): a
// doorbell no push covers yet waits (no batch) and is served by a push
// that comes within watchWait; one that none covers for watchWait is
// served by a batch that reads the DBR; with the watch not live, the first
// look falls back, without waiting. Fails if the engine never waits
// (a DBR read before the push), waits forever, or waits on a dead watch.
func TestWatchWaitsForPush(t *testing.T) {
	g := useGPU(t, newFakeGPU())
	c := enableWatches(t, g, false)
	na := newManualNIC(t, Config{Name: "emuWa"})
	nb := newManualNIC(t, Config{Name: "emuWb"})
	x, y := pair(t, na, nb, qpOpts{gpu: g}, qpOpts{})
	q := x.qpObj()
	t0 := time.Now()
	at := func(d time.Duration) {
		now := t0.Add(d)
		na.round(now)
		nb.round(now)
	}
	sent := func() uint16 {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.req.send
	}
	// complete drives rounds from d on until the WQE at idx completes
	// (a WRITE of data to y's byte 0; data 0: a NOP).
	complete := func(what string, d time.Duration, idx uint16, data byte) {
		t.Helper()
		for k := 0; k < 1000; k++ {
			at(d + time.Duration(k)*10*time.Microsecond)
			if cq, ok := x.tryPoll(); ok {
				if cq.Opcode != mlx5.CQEReq || cq.WQECounter != idx || (data != 0 && y.data[0] != data) {
					t.Fatalf("%s: %v %v counter %d data %d, want REQ counter %d data %d", what, cq.Opcode, cq.Syndrome, cq.WQECounter, y.data[0], idx, data)
				}
				return
			}
		}
		t.Fatalf("%s: WQE %d did not complete", what, idx)
	}
	// The first doorbell starts the watch, which has pushed nothing.
	complete("first doorbell", 0, x.post(mlx5.NewNOP(signaled)), 0)
	w := c.only(t)
	w.push() // up to date: what follows waits for a push of a new counter
	l := watch(t, g, x)
	since := watchSince()

	// A doorbell no push covers yet: the engine waits.
	i0 := x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{1}))
	at(time.Microsecond)
	at(watchWait / 2)
	if s := l.snapshot(); sent() != i0 || s.dbrReads != 0 || s.ringReads != 0 {
		t.Fatalf("before any push: sent to %d (WQE %d), %d DBR and %d ring copies; want a wait", sent(), i0, s.dbrReads, s.ringReads)
	}
	w.push()
	complete("pushed within watchWait", watchWait*3/4, i0, 1)
	if s, d := l.snapshot(), since(); s.dbrReads != 0 || s.ringReads != 0 || d.hits != 1 || d.misses != 0 {
		t.Fatalf("pushed within watchWait: %d DBR and %d ring copies, hits %d misses %d", s.dbrReads, s.ringReads, d.hits, d.misses)
	}

	// No push for watchWait: a batch reads the DBR and the WQE.
	base := 10 * time.Millisecond
	i1 := x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{2}))
	at(base)
	at(base + watchWait - time.Microsecond)
	if s := l.snapshot(); sent() != i1 || s.dbrReads != 0 {
		t.Fatalf("within watchWait: sent to %d (WQE %d), %d DBR copies; want a wait", sent(), i1, s.dbrReads)
	}
	at(base + watchWait + time.Microsecond)
	if s := l.snapshot(); sent() == i1 || s.dbrReads == 0 {
		t.Fatalf("after watchWait: sent to %d, %d DBR copies; want a batch and the WRITE sent", sent(), s.dbrReads)
	}
	complete("no push", base+watchWait+10*time.Microsecond, i1, 2)
	if d := since(); d.misses != 1 {
		t.Fatalf("no push: %d misses, want 1", d.misses)
	}

	// The watch not live: no wait at all.
	w.setLive(false)
	dbr := l.snapshot().dbrReads
	base = 20 * time.Millisecond
	i2 := x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{3}))
	at(base)
	if s := l.snapshot(); sent() == i2 || s.dbrReads == dbr {
		t.Fatalf("not live: after one look sent to %d (WQE %d), %d DBR copies; want the batch at once", sent(), i2, s.dbrReads-dbr)
	}
	complete("not live", base+10*time.Microsecond, i2, 3)
	if d := since(); d.misses != 2 {
		t.Fatalf("not live: %d misses in all, want 2", d.misses)
	}
}

// The same fallbacks with the engine running: a doorbell never pushed, and
// one on a watch that is not live, complete through batches (a DBR copy
// each), counted as misses.
func TestWatchFallbacks(t *testing.T) {
	for _, live := range []bool{true, false} {
		t.Run(fmt.Sprintf("live=%v", live), func(t *testing.T) {
			g, c, x, y := watchSetup(t, false, qpOpts{})
			w := startWatch(t, c, x)
			w.setLive(live)
			l := watch(t, g, x)
			since := watchSince()
			for i := 0; i < 3; i++ {
				idx := x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{byte(10 + i)}))
				if cq := x.mustPoll(); cq.Opcode != mlx5.CQEReq || cq.WQECounter != idx || y.data[0] != byte(10+i) {
					t.Fatalf("WRITE %d: %v counter %d data %d", i, cq.Opcode, cq.WQECounter, y.data[0])
				}
			}
			if s, d := l.snapshot(), since(); s.dbrReads < 3 || d.misses < 3 || d.hits != 0 {
				t.Fatalf("%d DBR copies, hits %d misses %d for 3 doorbells never pushed", s.dbrReads, d.hits, d.misses)
			}
		})
	}
}

// Guessed payloads through pushes: a latency loop from one device buffer
// with fresh bytes every message lands the fresh bytes every time, and
// only the first message's payload is read through Copy: the others come
// from the guess's bytes that each push copied after the counter. Fails if
// a push's guess bytes are not used (payload copies per message) or used
// when stale (old bytes land).
func TestWatchGuessedPayload(t *testing.T) {
	g, c, x, y := watchSetup(t, false, qpOpts{})
	w := startWatch(t, c, x)
	l := watch(t, g, x)
	hits := guessHits.Load()
	const n = 50
	for i := 0; i < n; i++ {
		pushedWrite(t, x, y, w, byte(i*8))
	}
	s := l.snapshot()
	if s.dbrReads != 0 || s.ringReads != 0 {
		t.Fatalf("%d DBR and %d ring copies with every doorbell pushed", s.dbrReads, s.ringReads)
	}
	if s.dataReads < 1 || s.dataReads > 2 {
		t.Fatalf("%d payload copies for %d WRITEs, want the first message's only", s.dataReads, n)
	}
	if h := guessHits.Load() - hits; h < n-2 {
		t.Fatalf("%d of %d payloads served from the guess", h, n)
	}
	if ws := w.stats(); ws.guesses < n-2 || len(ws.reads) != 1 || ws.reads[0].N != 8 {
		t.Fatalf("the watch served %d guesses, holds reads %+v", ws.guesses, ws.reads)
	}
}

// pushedWrite writes v, v+1, ... v+7 into x's buffer, posts a WRITE of
// them to y, publishes the DBR, has w push and rings the doorbell; the
// WRITE must complete and land the buffer's bytes as of its doorbell.
func pushedWrite(t *testing.T, x, y *endpoint, w *fakeWatch, v byte) {
	t.Helper()
	x.lock()
	for k := 0; k < 8; k++ {
		x.data[k] = v + byte(k)
	}
	x.unlock()
	idx := x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 8)))
	x.publishDBR()
	w.push()
	x.ring(mlx5.CtrlSeg{})
	if cq := x.mustPoll(); cq.Opcode != mlx5.CQEReq || cq.WQECounter != idx {
		t.Fatalf("WRITE of %d: %v %v", v, cq.Opcode, cq.Syndrome)
	}
	for k := 0; k < 8; k++ {
		if y.data[k] != v+byte(k) {
			t.Fatalf("WRITE of %d: landed % x, want the buffer's bytes as of its doorbell", v, y.data[:8])
		}
	}
}

// A guess's bytes are current only for the WQEs before the counter of the
// push that copied them. Here the pushes' guess copies lag: the doorbell
// of a WRITE whose payload changed is covered by a push of its counter,
// but the guess's bytes are those of the push before, made before the
// payload changed. The WRITE must carry its own bytes, read through Copy.
// Fails if the engine takes the guess up to the newest counter instead of
// up to the counter of the guess's push.
func TestWatchGuessLimit(t *testing.T) {
	g, c, x, y := watchSetup(t, false, qpOpts{})
	w := startWatch(t, c, x)
	l := watch(t, g, x)
	write := func(v byte) { t.Helper(); pushedWrite(t, x, y, w, v) }
	write(10) // the read-ahead's copy becomes the guess
	write(20) // served from the push's guess bytes
	write(30)
	hits, reads, guesses := guessHits.Load(), l.snapshot().dataReads, w.stats().guesses
	w.setLagGuess(true)
	write(40) // pushed; the guess's bytes stay 30's, of the push before
	if ws := w.stats(); ws.guesses == guesses {
		t.Fatal("the watch offered no guess: the test proves nothing")
	}
	if h, r := guessHits.Load()-hits, l.snapshot().dataReads-reads; h != 0 || r != 1 {
		t.Fatalf("a WRITE past the guess's push: %d guess hits, %d payload copies; want 0 and 1", h, r)
	}
	w.setLagGuess(false)
	write(50)
	if h := guessHits.Load() - hits; h != 1 {
		t.Fatalf("fresh guess bytes again: %d guess hits, want 1", h)
	}
}

// Counters software did not post are not taken from a push: one behind
// what the engine already read (a push older than a batch the engine ran),
// and one more than the ring ahead of the consumer index (a bogus DBR the
// watch pushed as it found it). The engine falls back to the batch, which
// ignores them as well, and nothing executes until a right counter is
// pushed and rung. Fails if a stale or bogus push makes the engine execute
// slots (CQEs appear) or read the watch's ring past its counter.
func TestWatchStaleCounters(t *testing.T) {
	t.Run("behind", func(t *testing.T) {
		_, c, x, y := watchSetup(t, false, qpOpts{})
		w := startWatch(t, c, x)
		x.postNoDB(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{1}))
		x.publishDBR()
		w.push()
		x.ring(mlx5.CtrlSeg{})
		x.mustPoll()
		x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{2})) // never pushed: a batch reads it
		x.mustPoll()
		since := watchSince()
		x.doorbell(x.pi) // again: the newest push (1) is behind the mirror (2)
		if cq, err := x.poll(30 * time.Millisecond); err == nil {
			t.Fatalf("a stale push executed a WQE: %v counter %d", cq.Opcode, cq.WQECounter)
		}
		if d := since(); d.misses != 1 || d.hits != 0 {
			t.Fatalf("stale push: hits %d misses %d, want a miss", d.hits, d.misses)
		}
		idx := x.postNoDB(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{3}))
		x.publishDBR()
		w.push()
		x.ring(mlx5.CtrlSeg{})
		if cq := x.mustPoll(); cq.Opcode != mlx5.CQEReq || cq.WQECounter != idx || y.data[0] != 3 {
			t.Fatalf("after a right push: %v counter %d data %d", cq.Opcode, cq.WQECounter, y.data[0])
		}
		if cq, err := x.poll(20 * time.Millisecond); err == nil {
			t.Fatalf("an extra CQE: %v counter %d", cq.Opcode, cq.WQECounter)
		}
	})
	t.Run("behind_outstanding", func(t *testing.T) {
		// The push is behind what a batch read, but not behind the
		// consumer index: a WAIT (cd_master) holds the WQEs the batch
		// read back until another QP's CQ produces a CQE.
		g, c, x, y := watchSetup(t, false, qpOpts{cdMaster: true})
		data, _ := pair(t, x.nic, y.nic, qpOpts{}, qpOpts{})
		q := x.qpObj()
		state := func() (ci, send, pi, mirEnd uint16) {
			q.mu.Lock()
			defer q.mu.Unlock()
			return q.req.ci, q.req.send, q.req.pi, q.req.mirEnd
		}
		w := startWatch(t, c, x)
		w.push() // counter 1
		iW := x.postNoDB(mlx5.NewWait(mlx5.WQEHead{}, data.cqn, 0))
		iA := x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{5})) // never pushed: a batch reads both
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Microsecond) {
			if _, _, pi, mirEnd := state(); pi == x.pi && mirEnd == x.pi {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the batch never read the WAIT and the WRITE")
			}
		}
		l := watch(t, g, x)
		since := watchSince()
		x.doorbell(x.pi) // again: the newest push (1) is behind the mirror (3)
		if cq, err := x.poll(30 * time.Millisecond); err == nil {
			t.Fatalf("a CQE while the WAIT holds: %v counter %d", cq.Opcode, cq.WQECounter)
		}
		if ci, send, pi, _ := state(); ci != iW || send != iW || pi != x.pi {
			t.Fatalf("after a stale push: consumer %d send %d producer %d; want %d %d %d", ci, send, pi, iW, iW, x.pi)
		}
		if d := since(); d.misses == 0 || d.hits != 0 {
			t.Fatalf("stale push: hits %d misses %d, want misses", d.hits, d.misses)
		}
		if s := l.snapshot(); s.dbrReads == 0 {
			t.Fatal("no batch read the DBR after the stale push")
		}
		data.post(mlx5.NewNOP(signaled))
		data.mustPoll()
		if cq := x.mustPoll(); cq.Opcode != mlx5.CQEReq || cq.WQECounter != iA || y.data[0] != 5 {
			t.Fatalf("WRITE %d after the WAIT: %v %v counter %d, data %d", iA, cq.Opcode, cq.Syndrome, cq.WQECounter, y.data[0])
		}
		if cq, err := x.poll(20 * time.Millisecond); err == nil {
			t.Fatalf("an extra CQE: %v counter %d", cq.Opcode, cq.WQECounter)
		}
	})
	t.Run("beyond", func(t *testing.T) {
		_, c, x, y := watchSetup(t, false, qpOpts{logSQ: 4})
		w := startWatch(t, c, x)
		idx := x.postNoDB(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{4}))
		since := watchSince()
		bogus := uint16(x.pi) + 16 + 3 // 19 ahead of the consumer index, on a ring of 16
		x.setDBR(uint32(bogus))
		w.push()
		x.doorbell(bogus)
		if cq, err := x.poll(30 * time.Millisecond); err == nil {
			t.Fatalf("a bogus counter executed a WQE: %v counter %d", cq.Opcode, cq.WQECounter)
		}
		if d := since(); d.misses == 0 || d.hits != 0 {
			t.Fatalf("bogus push: hits %d misses %d, want misses", d.hits, d.misses)
		}
		x.publishDBR()
		w.push()
		x.ring(mlx5.CtrlSeg{})
		if cq := x.mustPoll(); cq.Opcode != mlx5.CQEReq || cq.WQECounter != idx || y.data[0] != 4 {
			t.Fatalf("after a right push: %v counter %d data %d", cq.Opcode, cq.WQECounter, y.data[0])
		}
		if cq, err := x.poll(20 * time.Millisecond); err == nil {
			t.Fatalf("an extra CQE: %v counter %d", cq.Opcode, cq.WQECounter)
		}
	})
}

// A QP reset (2RST and back to RTS) forgets its send queue: the pushes
// made before it are stale, and software starts again from a zeroed DBR.
// Nothing may execute until software posts again, and a watch serves the
// QP's doorbells again after it did. Fails if the engine takes the counter
// pushed before the reset (the old WQEs run again).
func TestWatchAfterReset(t *testing.T) {
	_, c, x, y := watchSetup(t, false, qpOpts{})
	w := startWatch(t, c, x)
	for i := 0; i < 3; i++ {
		x.postNoDB(mlx5.NewRDMAWriteInline(signaled, y.raddr(i), []byte{byte(1 + i)}))
	}
	x.publishDBR()
	w.push()
	x.ring(mlx5.CtrlSeg{})
	for i := 0; i < 3; i++ {
		x.mustPoll()
	}
	x.setDBR(0) // software zeroes its DBR when the QP goes to RST
	x.resetFast()
	y.resetFast() // the PSNs start again on both sides
	if cq, err := x.poll(30 * time.Millisecond); err == nil {
		t.Fatalf("after the reset, with nothing posted: %v counter %d", cq.Opcode, cq.WQECounter)
	}
	// No watch starts before a doorbell: one started on the transitions'
	// looks could push a DBR software has not zeroed yet.
	if ws := c.all(); len(ws) != 1 || ws[0].stats().close != 1 {
		t.Fatalf("after the reset: %d watches, the old one closed %d times; want it closed and no new one", len(ws), ws[0].stats().close)
	}
	clear(y.data[:8])
	for i, want := range []byte{7, 8} {
		since := watchSince()
		idx := x.postNoDB(mlx5.NewRDMAWriteInline(signaled, y.raddr(4), []byte{want}))
		x.publishDBR()
		for _, w := range c.all() {
			if w.stats().close == 0 {
				w.push()
			}
		}
		x.ring(mlx5.CtrlSeg{})
		if cq := x.mustPoll(); cq.Opcode != mlx5.CQEReq || cq.WQECounter != idx || y.data[4] != want {
			t.Fatalf("WRITE %d after the reset: %v %v counter %d data %d", i, cq.Opcode, cq.Syndrome, cq.WQECounter, y.data[4])
		}
		if d := since(); i == 1 && d.hits != 1 {
			t.Fatalf("the second doorbell after the reset: hits %d misses %d, want it served from a push", d.hits, d.misses)
		}
	}
	if cq, err := x.poll(20 * time.Millisecond); err == nil {
		t.Fatalf("an extra CQE: %v counter %d", cq.Opcode, cq.WQECounter)
	}
	if got := y.data[:3]; got[0] != 0 || got[1] != 0 || got[2] != 0 {
		t.Fatalf("WQEs from before the reset ran again: % x", got)
	}
	if ws := c.all(); len(ws) != 2 || ws[0].stats().close != 1 || ws[1].stats().close != 0 {
		t.Fatalf("%d watches; want the first closed by the reset, a second serving the QP", len(ws))
	}
}

// Deregistering an MR that the watch's guess reads takes the guess away
// before Dereg returns: software may free the memory then, and a GPU that
// copies from freed memory faults (here: the fake records a read outside
// its allocations). Fails if a push after Dereg still copies from the MR.
func TestWatchGuessDereg(t *testing.T) {
	g, c, x, y := watchSetup(t, false, qpOpts{})
	w := startWatch(t, c, x)
	for i := 0; i < 3; i++ {
		idx := x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 8)))
		x.publishDBR()
		w.push()
		x.ring(mlx5.CtrlSeg{})
		expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, idx)
	}
	if s := w.stats(); len(s.reads) == 0 || s.guesses == 0 {
		t.Fatalf("the guess was not in use (reads %+v, %d served): the test proves nothing", s.reads, s.guesses)
	}
	must(t, x.mr.Dereg())
	g.free(x.data) // as software may, once Dereg returned
	idx := x.postNoDB(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{6}))
	x.publishDBR()
	w.push()
	if v := w.violations(); len(v) != 0 {
		t.Fatalf("a push after Dereg copied from the freed MR: %v", v)
	}
	if s := w.stats(); len(s.reads) != 0 {
		t.Fatalf("after Dereg the watch still copies %+v on every push", s.reads)
	}
	x.ring(mlx5.CtrlSeg{})
	if cq := x.mustPoll(); cq.Opcode != mlx5.CQEReq || cq.WQECounter != idx || y.data[0] != 6 {
		t.Fatalf("a WRITE after the Dereg: %v %v counter %d data %d", cq.Opcode, cq.Syndrome, cq.WQECounter, y.data[0])
	}
}

// Automatic pushes under load: thousands of WRITEs from device memory,
// 1 to 8 per doorbell, each with fresh bytes, while the watch pushes by
// itself whenever the counter moves (racing the doorbells). Every WRITE
// lands its bytes, every CQE comes in order. Fails on any wrong byte or
// CQE, on a hang, or on what the fake saw go wrong (a push after Close, a
// ReadRing past the counter).
func TestWatchAutomaticStress(t *testing.T) {
	_, c, x, y := watchSetup(t, true, qpOpts{logSQ: 6, logCQ: 8})
	w := startWatch(t, c, x)
	since := watchSince()
	hits := guessHits.Load()
	writes, rounds := 0, 0
	for writes < 3000 {
		// The same layout for 4 doorbells in a row: the read-ahead's
		// copies repeat, so the guess is in play.
		n := 1 + rounds/4%8
		size := 8 + rounds/4%57
		x.lock()
		for i := 0; i < n; i++ {
			for k := 0; k < size; k++ {
				x.data[i*64+k] = byte(rounds*31 + i*7 + k)
			}
		}
		x.unlock()
		var idx [8]uint16
		for i := 0; i < n; i++ {
			idx[i] = x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(i*64), x.sge(i*64, uint32(size))))
		}
		x.ring(mlx5.CtrlSeg{})
		for i := 0; i < n; i++ {
			if cq := x.mustPoll(); cq.Opcode != mlx5.CQEReq || cq.WQECounter != idx[i] {
				t.Fatalf("round %d WRITE %d: %v %v counter %d, want REQ counter %d", rounds, i, cq.Opcode, cq.Syndrome, cq.WQECounter, idx[i])
			}
		}
		for i := 0; i < n; i++ {
			for k := 0; k < size; k++ {
				if got, want := y.data[i*64+k], byte(rounds*31+i*7+k); got != want {
					t.Fatalf("round %d WRITE %d byte %d: %d, want %d", rounds, i, k, got, want)
				}
			}
		}
		writes += n
		rounds++
	}
	d := since()
	t.Logf("%d WRITEs, %d doorbells: watch hits %d misses %d, guess hits %d, %d pushes", writes, rounds, d.hits, d.misses, guessHits.Load()-hits, w.stats().pushes)
	if d.hits == 0 {
		t.Fatal("no doorbell was served from a push")
	}
	if cq, err := x.poll(20 * time.Millisecond); err == nil {
		t.Fatalf("an extra CQE: %v counter %d", cq.Opcode, cq.WQECounter)
	}
}

// Destroying the QP ends its watch: the fake records one Close, after
// which no push comes (automatic mode: its goroutine has stopped).
func TestWatchClosedOnDestroy(t *testing.T) {
	g := useGPU(t, newFakeGPU())
	c := enableWatches(t, g, true)
	t.Run("qp", func(t *testing.T) {
		a, b := twoNICs(t)
		x, y := pair(t, a, b, qpOpts{gpu: g}, qpOpts{})
		x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{1}))
		x.mustPoll()
		if s := c.only(t).stats(); s.close != 0 {
			t.Fatalf("the watch was closed %d times while the QP lived", s.close)
		}
	}) // the endpoints' cleanup destroys the QP
	w := c.only(t)
	if s := w.stats(); s.close != 1 {
		t.Fatalf("the watch was closed %d times by the QP's destroy, want 1", s.close)
	}
	if _, live := w.Latest(); live {
		t.Fatal("a closed watch reports live")
	}
	select {
	case <-w.done:
	default:
		t.Fatal("the watch's goroutine still runs after Close")
	}
}
