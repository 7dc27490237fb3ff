package emugpu

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/mlx5/emu"
)

// Send-queue watches (emu.SQWatcher), run by block 1 of the copier kernel,
// one warp beside the copier's block, so that no batch waits for a push
// (copier.cu has the GPU half).
//
// The table. The control block holds two copies of a table of maxWatch
// entries; watch_gen picks the current one (gen & 1). The host writes the
// other copy and then stores gen+1; block 1 loads that copy into shared
// memory and stores gen+1 in watch_ack. The host rewrites a copy only
// once the GPU acknowledged the generation after it, or while no instance
// runs, so the GPU never loads a copy being written.
//
// Memory safety, as for batches (copier.go): the GPU loads from the ranges
// of a table (DBR, ring, guess sources), so a table that names any is
// published only to an instance seen running, after its ranges were found
// allocated under that instance's epoch; a free waits for the running
// kernel. Before each launch the host publishes an empty table: a new
// instance starts with no watch, and gets the real table once it is seen
// running and the ranges were checked again. Close and SetGuess(nil)
// return only once the GPU has loaded a table without what they removed
// (or no instance runs), so that memory software frees right after a QP's
// destroy or an MR's deregistration is never read, whatever way it is
// freed (an asynchronous free does not wait for the kernel).
//
// Each watch has a slot of pinned host memory mapped for the GPU: the state
// word the GPU stores last in each push (the producer index, the push's
// number, the guess generation it copied), two guess areas (the push's
// number picks one) and the copy of the ring. Slots are allocated with the
// first watch and kept until the context's copier goes: freeing pinned
// memory may wait for the GPU, which the engine must never do. A slot is
// given to a new watch only once no instance can still be pushing into it
// for the old one.
const (
	ctlWatchGen   = 12             // uint32, host: the table's generation
	ctlWatchAck   = 28             // uint32, GPU: the generation block 1 loaded
	ctlWatchExit  = ctlStamps + 24 // uint32, GPU: the epoch whose block 1 ended
	ctlWatch      = ctlStamps + 32
	watchEntSize  = 128
	maxWatch      = 8 // GDAKI_WATCH_MAX
	watchGuessOps = 4 // GDAKI_WATCH_GUESS_OPS
	watchGuessMax = 4096
	watchMaxLog   = 12 // rings up to 4096 slots (256 KiB)

	slotGuess = 64
	slotRing  = slotGuess + 2*watchGuessMax
	slotSize  = slotRing + 64<<watchMaxLog
)

// Entry field offsets (struct gdaki_watch).
const (
	weDBR = 8 * iota
	weRing
	weMirror
	weState
	weGuess
	weLog // log_size, nguess
	weGen // guess_gen, pad
	weOps // GDAKI_WATCH_GUESS_OPS x {src, len}
)

// watchEnabled: GDAKI_EMU_WATCH=0 turns watches off (the engine then reads
// every DBR with a batch, as before them).
var watchEnabled = os.Getenv("GDAKI_EMU_WATCH") != "0"

// errNoWatch is why WatchSQ cannot watch a queue.
var errNoWatch = errors.New("emugpu: cannot watch the send queue")

// sqWatch is one watched send queue.
type sqWatch struct {
	d      *device
	slot   int
	mem    unsafe.Pointer // the slot (host)
	dev    uintptr        // the slot (GPU)
	cp     *copier        // the context's copier (its control block outlives the watch's uses: enter)
	dbr    *devRange
	dbrOff uint64
	ring   *devRange
	ringOf uint64
	log    uint8

	// inGen is the generation of the newest table that holds the entry
	// (0: none since the last empty table); live needs watch_ack there.
	inGen atomic.Uint32
	// Guess: the copies (d.mu), their generation (bumped by SetGuess),
	// their length in bytes (the engine's).
	guess    []emu.GuessRead
	guessGen atomic.Uint32
	guessLen int

	closed bool // d.mu
}

// WatchSQ implements emu.SQWatcher.
func (a *adapter) WatchSQ(s emu.SQWatchSpec) (emu.SQWatch, error) {
	dbr, ok1 := s.DBR.(*devRange)
	ring, ok2 := s.Ring.(*devRange)
	switch {
	case !ok1 || !ok2 || dbr == nil || ring == nil || dbr.d != ring.d:
		return nil, fmt.Errorf("%w: ranges this adapter did not claim, or of two contexts", errNoWatch)
	case s.LogSize > watchMaxLog:
		return nil, fmt.Errorf("%w: a ring of 2^%d slots (at most 2^%d)", errNoWatch, s.LogSize, watchMaxLog)
	case !watchEnabled:
		return nil, fmt.Errorf("%w: watches are off (GDAKI_EMU_WATCH=0)", errNoWatch)
	}
	d := dbr.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.setup(); err != nil {
		return nil, err
	}
	if d.cp == nil || d.cp.dead != nil {
		return nil, fmt.Errorf("%w: no copier on the context", errNoWatch)
	}
	if d.wMem == nil {
		p, err := d.own.MemAllocHost(slotSize*maxWatch, cuda.HostAllocDeviceMap|cuda.HostAllocPortable)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errNoWatch, err)
		}
		dev, err := d.own.HostGetDevicePointer(p)
		if err != nil {
			d.own.MemFreeHost(p)
			return nil, fmt.Errorf("%w: %w", errNoWatch, err)
		}
		clear(unsafe.Slice((*byte)(p), slotSize*maxWatch))
		d.wMem, d.wDev = p, uintptr(dev)
	}
	slot := -1
	for i, w := range d.watches {
		if w == nil && d.slotFree(i) {
			slot = i
			break
		}
	}
	if slot < 0 {
		return nil, fmt.Errorf("%w: all %d watches of the context are in use", errNoWatch, maxWatch)
	}
	w := &sqWatch{
		d: d, slot: slot, cp: d.cp,
		mem: unsafe.Add(d.wMem, slot*slotSize), dev: d.wDev + uintptr(slot*slotSize),
		dbr: dbr, dbrOff: s.DBROff, ring: ring, ringOf: s.RingOff, log: s.LogSize,
	}
	// A slot starts with state 0: guess generation 0 is never current.
	clear(unsafe.Slice((*byte)(w.mem), slotRing))
	w.guessGen.Store(1)
	d.watches[slot] = w
	d.publish()
	return w, nil
}

// slotFree reports whether no instance can still push into slot i for a
// watch that was closed; d.mu held.
func (d *device) slotFree(i int) bool {
	if !d.slotUsed[i] || !d.cp.running() {
		return true
	}
	g := d.slotFreeAt[i] // the table that no longer had it
	return g != 0 && int32(d.cp.load(ctlWatchAck)-g) >= 0
}

// enter starts a lock-free use of the watch memory; false once the copier
// and its memory are gone (or going). leave ends it.
func (d *device) enter() bool {
	d.wUsers.Add(1)
	if d.wGone.Load() {
		d.wUsers.Add(-1)
		return false
	}
	return true
}

func (d *device) leave() { d.wUsers.Add(-1) }

// freeWatches ends every watch and waits until no lock-free use is in
// progress; freeCopier frees their memory after the copier's stream. d.mu
// held.
func (d *device) freeWatches() {
	d.wGone.Store(true)
	for d.wUsers.Load() != 0 {
		runtime.Gosched()
	}
	for i, w := range d.watches {
		if w != nil {
			w.closed = true
			w.inGen.Store(0)
			d.watches[i] = nil
		}
	}
}

func (c *copier) load(off uintptr) uint32 { return atomic.LoadUint32(c.word(off)) }

// running reports whether a block of an instance the host launched may be
// running: block 0 (started, exited) or block 1 (watch_exited).
func (c *copier) running() bool {
	s := c.load(ctlStarted)
	return s != c.load(ctlExited) || s != c.load(ctlWatchExit)
}

// publish writes the table to the GPU when it may; otherwise it leaves it
// pending (dirty), for the next call under d.mu. While no instance is seen
// running the table it writes is empty. d.mu held.
func (d *device) publish() {
	c := d.cp
	if c == nil {
		return
	}
	live := c.live && c.load(ctlExited) != c.epoch && c.load(ctlStarted) == c.epoch
	if live && c.load(ctlWatchAck) != d.wGen {
		d.wDirty.Store(true) // the GPU has not loaded the last one yet
		return
	}
	d.wDirty.Store(!live)
	if !live && d.wEmpty {
		return
	}
	d.wEmpty = !live
	gen := d.wGen + 1
	if gen == 0 {
		gen = 1
	}
	tab := unsafe.Add(c.ctl, ctlWatch+uintptr(gen&1)*maxWatch*watchEntSize)
	clear(unsafe.Slice((*byte)(tab), maxWatch*watchEntSize))
	for i, w := range d.watches {
		if w == nil {
			continue
		}
		if !live || !w.write(unsafe.Add(tab, i*watchEntSize), c.epoch) {
			w.inGen.Store(0)
			continue
		}
		w.inGen.Store(gen)
	}
	for i := range d.slotFreeAt {
		if d.slotFreeAt[i] == 0 && d.watches[i] == nil && d.slotUsed[i] {
			d.slotFreeAt[i] = gen
		}
	}
	d.wGen = gen
	atomic.StoreUint32(c.word(ctlWatchGen), gen)
}

// write fills the table entry at e; false (and no entry) when the ring or
// the DBR is no longer allocated. A guess range that is not is left out.
func (w *sqWatch) write(e unsafe.Pointer, epoch uint32) bool {
	if w.dbr.live(epoch) != nil || w.ring.live(epoch) != nil {
		return false
	}
	put := func(off uintptr, v uint64) { *(*uint64)(unsafe.Add(e, off)) = v }
	put(weRing, uint64(w.ring.base)+w.ringOf)
	put(weMirror, uint64(w.dev)+slotRing)
	put(weState, uint64(w.dev))
	put(weGuess, uint64(w.dev)+slotGuess)
	n := 0
	for i, g := range w.guess {
		if g.Src.(*devRange).live(epoch) != nil {
			n = 0
			break
		}
		put(weOps+uintptr(i)*16, uint64(g.Src.Base())+g.Off)
		put(weOps+uintptr(i)*16+8, uint64(g.N))
		n++
	}
	put(weLog, uint64(w.log)|uint64(n)<<32)
	put(weGen, uint64(w.guessGen.Load()))
	atomic.StoreUint64((*uint64)(unsafe.Add(e, weDBR)), uint64(w.dbr.base)+w.dbrOff)
	return true
}

// retry publishes a pending table when d.mu is free now.
func (d *device) retry() {
	if d.wDirty.Load() && d.mu.TryLock() {
		if d.cp != nil {
			d.publish()
		}
		d.mu.Unlock()
	}
}

func (w *sqWatch) state() uint64 { return atomic.LoadUint64((*uint64)(w.mem)) }

// Latest implements emu.SQWatch.
func (w *sqWatch) Latest() (uint32, bool) {
	if !w.d.enter() {
		return 0, false
	}
	defer w.d.leave()
	w.d.retry()
	st := w.state()
	g := w.inGen.Load()
	c := w.cp
	live := g != 0 && c.load(ctlStarted) != c.load(ctlExited) && int32(c.load(ctlWatchAck)-g) >= 0
	return uint32(st & 0xffff), live
}

// ReadRing implements emu.SQWatch.
func (w *sqWatch) ReadRing(from, to uint16, mirror []byte) {
	if !w.d.enter() {
		return
	}
	defer w.d.leave()
	size := 1 << w.log
	ring := unsafe.Slice((*byte)(unsafe.Add(w.mem, slotRing)), 64*size)
	for from != to {
		s := int(from) & (size - 1)
		n := min(int(to-from), size-s)
		copy(mirror[64*s:64*(s+n)], ring[64*s:64*(s+n)])
		from += uint16(n)
	}
}

// SetGuess implements emu.SQWatch: reads beyond watchGuessOps copies or
// watchGuessMax bytes, or of another context, clear the guess.
func (w *sqWatch) SetGuess(reads []emu.GuessRead) {
	total := 0
	ok := len(reads) <= watchGuessOps
	for _, r := range reads {
		dr, isDev := r.Src.(*devRange)
		total += r.N
		if !isDev || dr == nil || dr.d != w.d || r.N <= 0 {
			ok = false
		}
	}
	if !ok || total > watchGuessMax {
		reads, total = nil, 0
	}
	w.d.mu.Lock()
	defer w.d.mu.Unlock()
	if w.closed {
		return
	}
	w.guess = append(w.guess[:0], reads...)
	w.guessLen = total
	if w.guessGen.Add(1) == 0 {
		w.guessGen.Add(1) // 0 is a fresh slot's
	}
	if w.d.cp == nil {
		return
	}
	if len(reads) == 0 {
		w.d.syncTable() // an MR may be going: no push may read it after this
		return
	}
	w.d.publish()
}

// syncTable publishes the table and waits until the GPU has loaded it, or
// no instance runs, so that nothing it no longer names is read after the
// call. An instance that does not take the table within batchWait is
// cancelled and waited for as long again. d.mu held.
func (d *device) syncTable() {
	c := d.cp
	deadline := time.Now().Add(batchWait)
	for {
		d.publish()
		if !c.running() || c.load(ctlWatchAck) == d.wGen {
			return
		}
		if time.Now().After(deadline) {
			atomic.StoreUint32(c.word(ctlCancel), c.epoch)
			c.live = false
			for end := time.Now().Add(batchWait); c.running() && time.Now().Before(end); {
				runtime.Gosched()
			}
			return
		}
		runtime.Gosched()
	}
}

// Guess implements emu.SQWatch.
func (w *sqWatch) Guess(dst []byte) (uint32, bool) {
	if !w.d.enter() {
		return 0, false
	}
	defer w.d.leave()
	s1 := w.state()
	if w.guessLen == 0 || uint32(s1>>32) != w.guessGen.Load() || len(dst) < w.guessLen {
		return 0, false
	}
	half := uintptr((s1>>16)&1) * watchGuessMax
	copy(dst[:w.guessLen], unsafe.Slice((*byte)(unsafe.Add(w.mem, slotGuess+half)), w.guessLen))
	if w.state() != s1 {
		return 0, false
	}
	return uint32(s1 & 0xffff), true
}

// Close implements emu.SQWatch.
func (w *sqWatch) Close() {
	d := w.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	w.inGen.Store(0)
	if d.watches[w.slot] == w {
		d.watches[w.slot] = nil
		d.slotUsed[w.slot] = true
		d.slotFreeAt[w.slot] = 0
		if d.cp != nil {
			d.syncTable() // the QP's DBR and ring may be freed once Close returns
		}
	}
}
