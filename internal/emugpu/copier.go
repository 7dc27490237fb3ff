package emugpu

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5/emu"
	"github.com/gdaki/gpunetio/internal/spin"
)

// The copier runs short batches on the GPU instead of the copy engines.
//
// Measured on an H100 (driver 580, no MPS): a 64-byte cuMemcpyDtoHAsync
// followed by a stream wait takes about 6 us, of which 1.6 us is the call;
// each further copy in one batch adds 2 to 3 us. A kernel that polls a word
// in pinned host memory, copies 64 bytes and publishes a flag answers in
// about 3 us, however many small copies the batch holds. The emulated NIC's
// latency is a chain of such batches (the WQE, the payload, the remote
// write), so the copier roughly halves it. Large batches still go to the
// copy engines, which move about 390 Gbps where one block does not.
//
// Protocol, over a control block in pinned host memory mapped for the GPU
// (copier.cu has the GPU half):
//   - the host writes the descriptors, each length word last and carrying
//     the batch's sequence number in its upper half, then one 64-bit word
//     with the sequence number, the descriptor count and the count of
//     inline words (post). The kernel's warp 0 looks with one read of the
//     first 256 bytes, which hold the posted word and the first fastDesc
//     descriptors; when every descriptor it needs shows the posted number
//     it has them, otherwise all threads load them in one more round trip
//     over PCIe. It runs them, fences, and stores the number in done;
//   - a batch whose writes to device memory are small travels whole in
//     those 256 bytes: the bytes of each write follow the descriptors,
//     four to a 64-bit word whose upper half is the sequence number (an
//     aligned 64-bit store of the host and load of the GPU are single
//     copies, so a word that shows the number holds its bytes). The kernel
//     then reads no staged bytes over PCIe: a landing of a small message
//     or a CQE costs the look alone, about one round trip less;
//   - an instance has an epoch. It stores its epoch in started when it
//     begins and in exited when it ends: after idleNS without a batch, after
//     lifeNS in all, or at once when the host stores its epoch in cancel. A
//     new instance starts from done, so a batch posted while the old one was
//     ending is run by the next; the host launches the next one only after
//     it saw the old one's exited (the stream orders them anyway);
//   - a batch is posted only to an instance seen running, after the ranges
//     it touches were checked to be still allocated. A running kernel holds
//     off every implicitly synchronizing free of its context, so memory
//     checked while it runs cannot go before it has run the batch; after an
//     instance ended, the ranges are checked again before the next one gets
//     the batch. A copy engine copy of freed memory fails with an error; a
//     kernel's load from it would end the context, so this check matters.
//   - an instance that does not start within startWait (the GPU is full of
//     the user's blocks, say) is cancelled, and the copy engines serve for
//     offFor before the copier is tried again; a batch not finished within
//     batchWait fails, and the copier is not used again on that context.
const (
	ctlPost    = 0 // uint64: sequence number | descriptor count << 32
	ctlCancel  = 8
	ctlDone    = 16
	ctlStarted = 20
	ctlExited  = 24
	ctlDesc    = 32
	descSize   = 24
	maxDesc    = 64                                 // GDAKI_COPIER_MAX_DESC
	fastDesc   = 9                                  // GDAKI_COPIER_FAST_DESC: descriptors read with the posted word
	ctlStamps  = ctlDesc + maxDesc*descSize         // 3 x uint64: t_seen, t_desc, t_copied
	lookWords  = 32                                 // 64-bit words of the control block warp 0 reads with each look
	descWord   = ctlDesc / 8                        // GDAKI_COPIER_DESC_WORD: the first descriptor's word
	maxInline  = lookWords - descWord - 3           // GDAKI_COPIER_INLINE_WORDS: inline words a batch may carry
	ctlSize    = ctlWatch + 2*maxWatch*watchEntSize // the watch table (watch.go) ends the block
)

// A descriptor's length word: the byte count in its low 30 bits,
// descInline, descAfter, and the batch's sequence number in its upper
// half. The kernel runs the copies of a batch in order, as Copy promises,
// but only a copy marked descAfter waits until the earlier copies' writes
// to device memory are visible to the whole GPU (the copies of a batch
// otherwise run as they come: the reads of several payloads need no order
// among them). A copy marked descInline takes its bytes from the inline
// words of the control block: its source is the index of its first word.
const (
	descAfter  = 1 << 31
	descInline = 1 << 30
)

// postToHost marks a posted batch that writes host memory (reads into the
// arena): the kernel then publishes done after a system-scope fence, where
// a batch that wrote device memory alone may take one of GPU scope.
const postToHost = 1 << 56

// Copier limits and waits; variables so that tests can shorten them.
var (
	copierArena = 64 << 10 // staging bytes of one batch
	// copierMax is the bytes a batch may move and still go to the copier:
	// 60 KiB, most of the arena. With 16 KiB, put_bw's bursts of 512
	// messages sent their read-ahead of the payloads (24 to 32 KiB) and
	// their CQ flushes (up to 48 KiB of CQEs) to the copy engines, at 31
	// to 104 us a batch on an H100 (the copier's time for such a batch was
	// not measured alone; the launches' rates were). put_bw 64 B between two processes, alternating
	// with 16 KiB: 0.97 M msgs/s median against 0.85 in one call (8
	// rounds, 4 runs at 1 M or more against none), 0.76 against 0.76 in
	// another (6 rounds); 0.83 against 0.78 over the 14. write_lat,
	// write_bw and the 1 MiB rows unchanged beyond the spread.
	copierMax     = min(envInt("GDAKI_EMU_COPIER_MAX", 60<<10), descInline-1)
	inlineOn      = os.Getenv("GDAKI_EMU_COPIER_INLINE") != "0" // small writes travel in the look (above)
	startWait     = 200 * time.Millisecond
	batchWait     = time.Second
	offFor        = 100 * time.Millisecond
	copierEnabled = os.Getenv("GDAKI_EMU_COPIER") != "0"
	sideCopiers   = os.Getenv("GDAKI_EMU_SIDE_COPIER") != "0"
	copierThreads = threadsOf(envInt("GDAKI_EMU_COPIER_THREADS", 256)) // threads of the block
	// An instance ends after idleNS without a batch and after lifeNS in
	// all (GDAKI_EMU_COPIER_IDLE_US, GDAKI_EMU_COPIER_LIFE_US: diagnostics,
	// at least 100 us each). The life bounds how long a context
	// synchronization by the user (cuCtxSynchronize, a synchronizing
	// cuMemFree) can wait for the copier.
	idleNS = envMicros("GDAKI_EMU_COPIER_IDLE_US", 1000)
	lifeNS = envMicros("GDAKI_EMU_COPIER_LIFE_US", 5000)
)

// envMicros reads a duration in microseconds from the environment (def
// when unset or not a number, at least 100) and returns it in nanoseconds.
func envMicros(name string, def int) uint64 {
	return uint64(max(envInt(name, def), 100)) * 1000
}

// threadsOf rounds a block size to whole warps, 32 to 1024: warp 0 polls.
func threadsOf(n int) uint32 {
	return uint32(min(max(n, 32), 1024) &^ 31)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

// Batch counts, bytes and times of each path, for benchmarks.
var (
	copierBatches, engineBatches, copierNanos, engineNanos atomic.Uint64
	sideBatches, inlineBatches                             atomic.Uint64
	engineBytes, engineStaged                              atomic.Uint64
	cpPrep, cpWait, cpDesc, cpCopy, cpStamped              atomic.Uint64
)

// Stats counts the batches of copies each path ran since the process
// started, the time they took (from the call to the last byte) and the
// bytes the copy engines moved. Subtract two of them for an interval.
type Stats struct {
	CopierBatches, EngineBatches uint64
	// SideBatches is the part of CopierBatches that the side copier ran
	// (a batch that came while the first copier ran another).
	SideBatches uint64
	// InlineBatches is the part of CopierBatches whose writes to device
	// memory travelled inline, in the kernel's look at the control block.
	InlineBatches          uint64
	CopierTime, EngineTime time.Duration
	// EngineBytes is what the copy engines moved; EngineStaged the part
	// of it whose host side was not pinned, so that it was copied once
	// more by the CPU, through the pinned staging buffer.
	EngineBytes, EngineStaged uint64
	// The copier's phases, summed over CopierStamped batches: on the
	// host, from the call to the posted word (Prep) and from there to
	// seeing done (Wait); on the GPU, from seeing the posted word to
	// having the descriptors (Desc) and from there to the copies fenced
	// (Copy). Wait less Desc and Copy is the round trip the protocol
	// itself costs (the kernel's poll and the store of done, over PCIe).
	CopierPrep, CopierWait, CopierDesc, CopierCopy time.Duration
	CopierStamped                                  uint64
}

// CopyStats returns the counters so far.
func CopyStats() Stats {
	return Stats{
		CopierBatches: copierBatches.Load(), EngineBatches: engineBatches.Load(), SideBatches: sideBatches.Load(),
		InlineBatches: inlineBatches.Load(),
		CopierTime:    time.Duration(copierNanos.Load()), EngineTime: time.Duration(engineNanos.Load()),
		EngineBytes: engineBytes.Load(), EngineStaged: engineStaged.Load(),
		CopierPrep: time.Duration(cpPrep.Load()), CopierWait: time.Duration(cpWait.Load()),
		CopierDesc: time.Duration(cpDesc.Load()), CopierCopy: time.Duration(cpCopy.Load()),
		CopierStamped: cpStamped.Load(),
	}
}

// Sub returns the counts of the interval from o to s.
func (s Stats) Sub(o Stats) Stats {
	return Stats{
		CopierBatches: s.CopierBatches - o.CopierBatches, EngineBatches: s.EngineBatches - o.EngineBatches,
		SideBatches: s.SideBatches - o.SideBatches, InlineBatches: s.InlineBatches - o.InlineBatches,
		CopierTime: s.CopierTime - o.CopierTime, EngineTime: s.EngineTime - o.EngineTime,
		EngineBytes: s.EngineBytes - o.EngineBytes, EngineStaged: s.EngineStaged - o.EngineStaged,
		CopierPrep: s.CopierPrep - o.CopierPrep, CopierWait: s.CopierWait - o.CopierWait,
		CopierDesc: s.CopierDesc - o.CopierDesc, CopierCopy: s.CopierCopy - o.CopierCopy,
		CopierStamped: s.CopierStamped - o.CopierStamped,
	}
}

// postHook, when a test sets it, runs after a batch's words were written
// and before it is posted.
var postHook func(c *copier)

// launcher starts an instance of the copier kernel with an epoch.
type launcher interface {
	launch(epoch uint32) error
}

// errCopierStuck fails a batch the copier did not finish in batchWait.
var errCopierStuck = errors.New("the copier kernel did not finish the batch")

// copier is one context's copier: its control block, staging arena and the
// instance it believes is running. Its owner serializes every call.
type copier struct {
	ctl      unsafe.Pointer // the control block, then the arena
	ctlDev   uintptr        // the control block's device address
	arena    []byte
	arenaDev uintptr
	l        launcher

	// epoch is the newest instance's; a copier's epochs step by 2 from
	// its first (0 or 1), so that the two copiers of a context never share
	// one (devRange.live keeps a checked epoch per parity).
	epoch    uint32
	live     bool // an instance of epoch was seen started and not seen exited
	pending  bool // an instance of epoch was launched and not seen started yet
	launched time.Time
	seq      uint32
	off      time.Time // not used before this
	dead     error     // a batch failed: never used again

	descs   []copyDesc
	reads   []stagedRead
	inlines []inlineWrite
	inWords int  // inline words of the batch planned
	toHost  bool // the batch planned writes host memory (the arena)

	lastStamp uint64 // the kernel's t_seen of the last batch stamped
}

type copyDesc struct{ src, dst, n uint64 }

type stagedRead struct {
	dst []byte
	off int
}

// inlineWrite is a write whose bytes travel in the control block's
// inline words, from word (an index of the block's 64-bit words) on.
type inlineWrite struct {
	src  []byte
	word int
}

// inlineWords is how many inline words n bytes take (four to a word).
func inlineWords(n int) int { return (n + 3) / 4 }

func newCopier(mem unsafe.Pointer, memDev uintptr, size int, l launcher) *copier {
	return &copier{
		ctl:      mem,
		ctlDev:   memDev,
		arena:    unsafe.Slice((*byte)(unsafe.Add(mem, ctlSize)), size-ctlSize),
		arenaDev: memDev + ctlSize,
		l:        l,
	}
}

func (c *copier) word(off uintptr) *uint32 { return (*uint32)(unsafe.Add(c.ctl, off)) }

// plan lays ops out as descriptors; false when the batch is not the
// copier's (too many copies, too many bytes, a copy of nothing).
func (c *copier) plan(ops []emu.DeviceCopy) bool {
	if len(ops) > maxDesc {
		return false
	}
	c.descs, c.reads, c.inlines, c.inWords, c.toHost = c.descs[:0], c.reads[:0], c.inlines[:0], 0, false
	// The writes travel inline when all of them fit in the look with the
	// descriptors (one staged write would cost the round trip anyway).
	inline := inlineOn && len(ops) <= fastDesc
	if inline {
		words := 0
		for i := range ops {
			if ops[i].Kind == emu.CopyToDevice {
				words += inlineWords(len(ops[i].Host))
			}
		}
		inline = words > 0 && words <= maxInline && descWord+3*len(ops)+words <= lookWords
	}
	word := descWord + 3*len(ops) // the next inline word
	moved, staged := 0, 0
	var after uint64 // descAfter once a copy of the batch wrote device memory
	for i := range ops {
		o := &ops[i]
		n := int(o.Bytes())
		if n == 0 {
			return false
		}
		moved += n
		if moved > copierMax {
			return false
		}
		first := len(c.descs)
		switch o.Kind {
		case emu.CopyToHost:
			off := staged
			staged = (staged + n + 15) &^ 15
			if staged > len(c.arena) {
				return false
			}
			c.descs = append(c.descs, copyDesc{src: uint64(o.Src.Base()) + o.SrcOff, dst: uint64(c.arenaDev) + uint64(off), n: uint64(n)})
			c.reads = append(c.reads, stagedRead{dst: o.Host, off: off})
			c.toHost = true
		case emu.CopyToDevice:
			if inline {
				c.descs = append(c.descs, copyDesc{src: uint64(word), dst: uint64(o.Dst.Base()) + o.DstOff, n: uint64(n) | descInline})
				c.inlines = append(c.inlines, inlineWrite{src: o.Host, word: word})
				word += inlineWords(n)
				break
			}
			off := staged
			staged = (staged + n + 15) &^ 15
			if staged > len(c.arena) {
				return false
			}
			copy(c.arena[off:off+n], o.Host)
			c.descs = append(c.descs, copyDesc{src: uint64(c.arenaDev) + uint64(off), dst: uint64(o.Dst.Base()) + o.DstOff, n: uint64(n)})
		case emu.CopyDeviceToDevice:
			c.descs = append(c.descs, copyDesc{src: uint64(o.Src.Base()) + o.SrcOff, dst: uint64(o.Dst.Base()) + o.DstOff, n: o.Len})
		default:
			return false
		}
		c.descs[first].n |= after
		if o.Kind != emu.CopyToHost {
			after = descAfter
		}
	}
	c.inWords = word - descWord - 3*len(ops)
	return true
}

// write stores the planned batch's descriptors and inline words in the
// control block, each with the number the batch is to be posted with
// (tag) in its upper half, stored last (see copier.cu).
func (c *copier) write(tag uint32) {
	t := uint64(tag) << 32
	for i, d := range c.descs {
		p := unsafe.Add(c.ctl, ctlDesc+i*descSize)
		*(*uint64)(p) = d.src
		*(*uint64)(unsafe.Add(p, 8)) = d.dst
		atomic.StoreUint64((*uint64)(unsafe.Add(p, 16)), d.n|t)
	}
	for _, in := range c.inlines {
		b := in.src
		for w := in.word; len(b) > 0; w++ {
			var v uint64
			for k := 0; k < 4 && k < len(b); k++ {
				v |= uint64(b[k]) << (8 * k)
			}
			atomic.StoreUint64((*uint64)(unsafe.Add(c.ctl, w*8)), v|t)
			b = b[min(4, len(b)):]
		}
	}
}

// run runs ops on the copier when they are its kind of batch and it is
// usable: ran reports whether it did (or failed trying: err). check
// reports whether every range the batch touches is still allocated; it is
// given the epoch of the instance seen running, and may skip a range it
// checked under the same epoch (no free of the context completes while
// that instance runs).
func (c *copier) run(ops []emu.DeviceCopy, check func(epoch uint32) error) (ran bool, err error) {
	t0 := time.Now()
	if c.dead != nil || t0.Before(c.off) || !c.plan(ops) {
		return false, nil
	}
	posted := false
	var tPost time.Time
	deadline := time.Now().Add(batchWait)
	for spins := 0; ; spins++ {
		if !posted {
			if !c.live && !c.start() {
				return false, nil
			}
			if err := check(c.epoch); err != nil {
				return true, err
			}
			// A batch posted again (its instance ended without it) is
			// written again: its words carry the new number.
			c.write(c.seq + 1)
			if postHook != nil {
				postHook(c)
			}
			c.seq++
			tPost = time.Now()
			post := uint64(c.seq) | uint64(len(c.descs))<<32 | uint64(c.inWords)<<48
			if c.toHost {
				post |= postToHost
			}
			atomic.StoreUint64((*uint64)(unsafe.Add(c.ctl, ctlPost)), post)
			posted = true
		}
		if atomic.LoadUint32(c.word(ctlDone)) == c.seq {
			break
		}
		if atomic.LoadUint32(c.word(ctlExited)) == c.epoch {
			// The instance ended. It publishes done before exited, so a
			// done still short of seq now means it never took the batch:
			// take the batch back (no instance runs) and post it again to
			// the next one, after checking its ranges again.
			if atomic.LoadUint32(c.word(ctlDone)) == c.seq {
				break
			}
			atomic.StoreUint32(c.word(ctlDone), c.seq)
			c.live, posted = false, false
			continue
		}
		if spins&1023 == 1023 {
			if time.Now().After(deadline) {
				atomic.StoreUint32(c.word(ctlCancel), c.epoch)
				c.live = false
				c.dead = fmt.Errorf("emugpu: %w within %v", errCopierStuck, batchWait)
				return true, c.dead
			}
			if spin.Crowded() {
				runtime.Gosched() // see package spin for why not always
			}
		}
	}
	c.stamp(t0, tPost, time.Now())
	for _, r := range c.reads {
		copy(r.dst, c.arena[r.off:r.off+len(r.dst)])
	}
	clear(c.reads)
	clear(c.inlines)
	if c.inWords > 0 {
		inlineBatches.Add(1)
	}
	copierBatches.Add(1)
	copierNanos.Add(uint64(time.Since(t0)))
	return true, nil
}

// stamp adds a finished batch's phases to the counters. The kernel stores
// its stamps before done; a thread's stores over PCIe arrive in order in
// practice, and a batch whose stamps do not follow the last ones (stale,
// or from another instance's clock origin) is left out of the phases.
func (c *copier) stamp(t0, tPost, tDone time.Time) {
	seen := atomic.LoadUint64((*uint64)(unsafe.Add(c.ctl, ctlStamps)))
	desc := atomic.LoadUint64((*uint64)(unsafe.Add(c.ctl, ctlStamps+8)))
	copied := atomic.LoadUint64((*uint64)(unsafe.Add(c.ctl, ctlStamps+16)))
	if seen <= c.lastStamp || desc < seen || copied < desc {
		return
	}
	c.lastStamp = seen
	cpStamped.Add(1)
	cpPrep.Add(uint64(tPost.Sub(t0)))
	cpWait.Add(uint64(tDone.Sub(tPost)))
	cpDesc.Add(desc - seen)
	cpCopy.Add(copied - desc)
	if !emu.TimelineStart().IsZero() {
		// The kernel's sight of the posted word and its copies fenced, as
		// globaltimer less the host's clock at the post. The two clocks
		// are not one (an H100 host's ran 2.6 ms apart, steady within a
		// few microseconds over a run): differences between the two
		// figures, and each figure less its smallest in a timeline, are
		// what mean something. The event's length is the host's wait for
		// done.
		at := tPost.UnixNano()
		emu.TimelineNote("copier-gpu", int64(seen)-at, int64(copied)-at, tPost)
	}
}

// start waits until an instance runs, launching one unless one was
// launched and is still expected; false (and the copy engines for offFor)
// when it cannot be launched or does not begin within startWait.
func (c *copier) start() bool {
	if !c.pending && !c.launch() {
		return false
	}
	deadline := c.launched.Add(startWait)
	for spins := 0; atomic.LoadUint32(c.word(ctlStarted)) != c.epoch; spins++ {
		if spins&1023 == 1023 {
			if time.Now().After(deadline) {
				c.giveUp()
				return false
			}
			runtime.Gosched()
		}
	}
	c.live, c.pending = true, false
	return true
}

// launch launches the next instance without waiting for it.
func (c *copier) launch() bool {
	c.epoch += 2
	if err := c.l.launch(c.epoch); err != nil {
		c.off = time.Now().Add(offFor)
		return false
	}
	c.pending, c.launched = true, time.Now()
	return true
}

// giveUp cancels an instance that did not begin in time.
func (c *copier) giveUp() {
	atomic.StoreUint32(c.word(ctlCancel), c.epoch)
	c.pending = false
	c.off = time.Now().Add(offFor)
}

// ready reports whether an instance runs now, without waiting: when none
// does (the last one ended, or none was launched), it launches one for a
// later batch and reports false.
func (c *copier) ready() bool {
	if c.dead != nil || time.Now().Before(c.off) {
		return false
	}
	if c.pending {
		if atomic.LoadUint32(c.word(ctlStarted)) != c.epoch {
			if time.Since(c.launched) > startWait {
				c.giveUp()
			}
			return false
		}
		c.live, c.pending = true, false
	}
	if c.live {
		// An instance seen started may have ended since (idleNS).
		if atomic.LoadUint32(c.word(ctlExited)) != c.epoch {
			return true
		}
		c.live = false
	}
	c.launch()
	return false
}

// stop ends the running instance, or the one launched and not yet seen
// started (if any), and waits up to wait for it.
func (c *copier) stop(wait time.Duration) {
	if !c.live && !c.pending {
		return
	}
	c.pending = false
	atomic.StoreUint32(c.word(ctlCancel), c.epoch)
	deadline := time.Now().Add(wait)
	for atomic.LoadUint32(c.word(ctlExited)) != c.epoch && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	c.live = false
}
