package emu

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Pushed send queues. With the SQ ring and the DBR in device memory, every
// doorbell costs the engine a batch of copies (the DBR and the new WQEs,
// readDBR) before it can send anything: a round trip to the GPU on the
// critical path of every message. A GPUMemory that can run code next to the
// memory offers a watch instead: the GPU itself looks at the QP's send
// counter and, each time it moves, copies the new WQEs (and the bytes of
// the current guess, prefetch.go) into host memory and then publishes the
// counter it saw. When the engine takes a doorbell, the WQEs are usually
// already on the host.
//
// What a ConnectX guarantees is kept: the engine still acts on a doorbell
// only (a DBR written without one is not executed), the DBR stays the
// authority for the producer index (a push is a snapshot of it, taken
// before the WQEs it covers were copied), and a WQE is read after software
// published it (software writes the WQE, fences, then the DBR). When no
// push covers a doorbell within watchWait, or the watch is not running,
// the engine reads the DBR with a batch as before.
//
// A QP's watch starts with its first doorbell and ends when the QP is
// destroyed or reset (2RST): the pushes of a reset queue are stale (their
// counter would run the old WQEs again), so a new watch starts with the
// first doorbell after the reset, when software has zeroed its DBR. Every
// watch thus starts from a send counter of 0.

// SQWatcher is implemented by a GPUMemory that can watch send queues (see
// above).
type SQWatcher interface {
	// WatchSQ starts watching the send queue of spec. It fails when the
	// ranges are not its own, the ring is too large or no watch is free;
	// the emulator then reads the DBR with batches. The watch starts from
	// a counter of 0: until its first push Latest returns 0, and its first
	// push copies at least the slots from 0 up to the counter it read.
	WatchSQ(spec SQWatchSpec) (SQWatch, error)
}

// SQWatchSpec names a send queue in device memory.
type SQWatchSpec struct {
	DBR     DeviceRange // holds the send counter (32 bits, big-endian)
	DBROff  uint64
	Ring    DeviceRange // holds the ring: 1<<LogSize slots of 64 bytes
	RingOff uint64
	LogSize uint8
}

// GuessRead is one copy of a guess: N bytes at Off of Src.
type GuessRead struct {
	Src DeviceRange
	Off uint64
	N   int
}

// SQWatch is a running watch. Its methods are called by one goroutine at a
// time (the QP's engine, under the QP's lock).
type SQWatch interface {
	// Latest returns the newest send counter pushed; live is false when
	// no push can come now (the watch is not running), so that waiting
	// for one is pointless.
	Latest() (counter uint32, live bool)
	// ReadRing copies the ring slots from index from up to index to (mod
	// the ring's size), as pushed, into mirror, a host copy of the ring
	// with the same layout. Slots up to the counter Latest returned are
	// complete.
	ReadRing(from, to uint16, mirror []byte)
	// SetGuess makes reads the copies that each push makes after the
	// WQEs (nil: none); their bytes go back to back. reads is not kept
	// after the call. When an MR that reads name is deregistered, the
	// emulator replaces them (nil) before Dereg returns: software may
	// free the memory then, and the watch must not copy from it after
	// that free.
	SetGuess(reads []GuessRead)
	// Guess copies into dst the bytes of the current guess from one push
	// made after the last SetGuess and returns that push's counter; ok
	// is false when there is none.
	Guess(dst []byte) (counter uint32, ok bool)
	// Close ends the watch. Pushes may still land in the watch's own
	// memory for a while; the emulator's memory is never written.
	// Software may deregister and free the DBR and the ring as soon as the
	// QP is destroyed: the watch must not read them after that free.
	Close()
}

// watchWait is how long a doorbell waits for a push that covers it before
// the DBR is read with a batch.
const watchWait = 50 * time.Microsecond

// watchState is the QP's watch state, guarded by mu.
type watchState struct {
	w       SQWatch
	tried   bool        // WatchSQ was called (once per QP, again after a reset)
	since   time.Time   // the first look for the current doorbell's push; zero when not waiting
	guess   []GuessRead // what the watch was last given (SetGuess)
	scratch []GuessRead
}

// Watch counters (tests, benchmarks): doorbells served from a push, and
// doorbells that fell back to a batch while a watch ran.
var watchHits, watchMisses atomic.Uint64

// WatchCounts returns how many doorbells of QPs with a watch were served
// from a push (hits) and how many fell back to a batch (misses) since the
// process started.
func WatchCounts() (hits, misses uint64) { return watchHits.Load(), watchMisses.Load() }

// sqWatch returns the QP's watch, starting it with the first doorbell
// since the QP was created or reset; nil when the QP's send queue cannot be
// watched, or before that doorbell (a batch reads the DBR then). mu held.
func (q *qp) sqWatch() SQWatch {
	if q.wt.tried {
		return q.wt.w
	}
	if q.dbHint.Load()&hintValid == 0 {
		return nil
	}
	q.wt.tried = true
	g := q.wq.mem.gpu
	sw, ok := g.(SQWatcher)
	if !ok || q.dbr.mem.gpu != g {
		return nil
	}
	w, err := sw.WatchSQ(SQWatchSpec{
		DBR: q.dbr.mem.dev, DBROff: q.doff + mlx5.QPDBRSendOffset,
		Ring: q.wq.mem.dev, RingOff: q.sqOff, LogSize: q.sqLog,
	})
	if err != nil {
		return nil
	}
	q.wt.w = w
	return w
}

// closeWatch ends the QP's watch (destroy); mu held.
func (q *qp) closeWatch() {
	if q.wt.w != nil {
		q.wt.w.Close()
	}
	q.wt = watchState{tried: true}
}

// resetWatch ends the watch of a QP whose queues are reset (2RST). Its
// pushes are of the send queue as it was: its newest counter would run the
// old WQEs again once the QP is back in RTS, and a watch pushes only when
// the counter moves (software may post up to the same counter again). A
// new watch starts with the first doorbell after the reset, by which time
// software has zeroed its DBR; both locks held.
func (q *qp) resetWatch() {
	q.closeWatch()
	q.wt.tried = false
}

// readPushed serves a doorbell from the watch: it takes the newest pushed
// counter as the DBR, the pushed WQEs into the mirror and the pushed guess.
// It reports false when the caller must read the DBR with a batch; true
// when it is done, or wants to look again in a later round (dbrKick set).
func (q *qp) readPushed(now time.Time) bool {
	w := q.sqWatch()
	if w == nil {
		return false
	}
	r := &q.req
	size := 1 << q.sqLog
	counter, live := w.Latest()
	pi := uint16(counter)
	room := size - dist(r.ci, r.mirEnd)
	want := 0 // WQEs the doorbell announced beyond what the mirror holds
	if h := q.dbHint.Load(); h&hintValid != 0 {
		if d := dist(r.mirEnd, uint16(h)); d <= room {
			want = d
		}
	}
	have := dist(r.mirEnd, pi)
	if !live || dist(r.ci, pi) > size || have > room || have < want {
		// Not pushed yet (or a counter software should not have
		// written, which the batch then reads the same way).
		if live && now.Sub(q.waitFrom(now)) < watchWait {
			q.dbrKick.Store(true) // not pushed yet: look again
			return true
		}
		q.wt.since = time.Time{}
		watchMisses.Add(1)
		return false
	}
	q.wt.since = time.Time{}
	if have > 0 {
		w.ReadRing(r.mirEnd, pi, r.mirror)
		r.mirEnd = pi
	}
	r.pi = pi
	noteSince("pushed", q.qpn, int64(pi), int64(have), time.Time{})
	g := &r.pf.g
	g.valid = false
	if len(q.wt.guess) > 0 {
		if g.buf == nil {
			g.buf = make([]byte, guessMax)
		}
		if c, ok := w.Guess(g.buf); ok {
			g.valid, g.limit = true, uint16(c)
		}
	}
	watchHits.Add(1)
	return true
}

// waitFrom returns when the engine started waiting for the current
// doorbell's push (now, on the first look).
func (q *qp) waitFrom(now time.Time) time.Time {
	if q.wt.since.IsZero() {
		q.wt.since = now
	}
	return q.wt.since
}

// setWatchGuess hands the guess's copies to the watch when they changed
// (after note); mu held.
func (q *qp) setWatchGuess(g *guess) {
	w := q.wt.w
	if w == nil {
		return
	}
	reads := q.wt.scratch[:0]
	for _, o := range g.ops {
		if o.mem.gpu != q.wq.mem.gpu {
			reads = reads[:0]
			break
		}
		reads = append(reads, GuessRead{Src: o.mem.dev, Off: o.off, N: o.n})
	}
	q.wt.scratch = reads
	if slices.Equal(reads, q.wt.guess) {
		return
	}
	q.wt.guess = append(q.wt.guess[:0], reads...)
	if len(reads) == 0 {
		w.SetGuess(nil)
		return
	}
	w.SetGuess(q.wt.guess)
}

// forgetGuesses takes the guess away from every watch of n that copies
// from s, an MR's memory being deregistered (retired): Dereg promises that
// the NIC never touches the memory after it returns, and a GPU that copies
// from memory software freed faults.
func (n *NIC) forgetGuesses(s *span) {
	for _, q := range *n.qpSnap.Load() {
		q.mu.Lock()
		if w := q.wt.w; w != nil {
			for _, r := range q.wt.guess {
				if r.Src == s.dev {
					q.wt.guess = q.wt.guess[:0]
					w.SetGuess(nil)
					break
				}
			}
		}
		q.mu.Unlock()
	}
}
