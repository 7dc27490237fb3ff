// Package hostcopy copies large ranges of host memory on several cores.
//
// The emulated NIC moves a message's payload through host memory with
// plain copies: into a shared-memory ring (or a TCP queue) when a frame
// leaves for another process, and from a frame into the responder's memory
// region when it lands. One core copies 1 MiB in 40-70 us, so a bandwidth
// test at 1 MiB is bound by these copies long before the wire or the GPU.
// Copy splits a large copy over a few goroutines. That pays where one core
// cannot use the host's memory bandwidth (a server core moves about
// 15 GB/s, its socket ten times that); on a host where one core already
// saturates it (a 2-core VM here: about 27 GB/s with one core or two) the
// split gains nothing and costs 3-4% (the starting of helpers).
//
// # What Copy does
//
// Copy has the contract of the built-in copy (it copies min(len(dst),
// len(src)) bytes and returns that count):
//
//   - up to Threshold bytes it is copy() itself, and so is every copy when
//     only one goroutine may run it (see below);
//   - above, the range is cut into k parts, k = min(2*workers,
//     n/(MinChunk+64)): every part at least MinChunk bytes, every cut on a
//     64-byte (cache-line) boundary of dst, so that no two goroutines store
//     into one cache line. The caller starts up to workers-1 helper
//     goroutines, and it and the helpers take parts in turn until none is
//     left; the caller returns once every part is copied;
//   - overlapping ranges (a loopback WRITE can land on its own source) are
//     copied by copy() alone, with its memmove semantics: parts copied at
//     once would read bytes another part has already overwritten.
//
// workers is min(GOMAXPROCS, DefaultThreads) on a host with MinProcs (4)
// processors or more, 1 on a smaller one (the split's helpers would take
// the processors of the emulator's own goroutines: the wire's readers
// stop polling below four processors for the same reason).
// GDAKI_EMU_COPY_THREADS=N replaces DefaultThreads by N and lifts
// MinProcs (1 turns the split off: every copy is then copy(), as before
// this package). GOMAXPROCS bounds N too: more goroutines than processors
// cannot copy faster.
//
// # Stores
//
// For a copy of NonTemporal (1 MiB) bytes or more, copy() on amd64 (with
// AVX, as on every current x86 server) stores non-temporally, bypassing the caches; its parts, smaller, would not. So
// the parts of such a copy are stored non-temporally too (SSE2 MOVNTDQ,
// one cache line at a time, fenced before the part counts as done; the
// bytes before dst's first cache line and after its last by copy()), and
// a split copy treats the caches as copy() would have. It matters: put_bw
// and write_bw at 1 MiB write the slices of a 512 MiB buffer, far more
// than a last-level cache, and there (2-core AMD EPYC, 1 MiB into a
// destination moving through 256 MiB) ordinary stores took 64 us against
// copy()'s 40 us, non-temporal parts 39 us. (A destination that stays in
// the cache favours ordinary stores, 24 us against 40; the emulator's
// large destinations seldom do.) Under the race detector, and on other
// architectures, parts are copy().
//
// # Goroutines
//
// A helper copies parts of one copy and exits; no goroutine lives on
// between copies (no pool: the emulator's and the wire's leak checks see
// none, and an idle process has none), and none touches dst or src after
// Copy returned. The caller never waits for a helper to start: on busy
// cores a helper may start only after its call returned, find every part
// taken and exit at once. (Waiting for the helpers to start would make a
// copy on loaded cores slower than copy(): measured 1.5 times slower for
// the two-process 1 MiB WRITE on two cores.) When helpers started earlier
// have still not run, Copy starts no more.
//
// A warm call allocates nothing: a job (the parts and their counters)
// comes from a free list and goes back to it when the last of its caller
// and helpers lets go of it, jobs travel to the helpers on one buffered
// channel, and helpers run a function without arguments.
//
// # Why here
//
// The package sits under the emulator (internal/mlx5/emu/internal), not at
// the top of internal/: its callers are the emulator's landing code and
// its wire, and the tuning (parts of 128 KiB and more, four goroutines,
// the environment variable) is chosen for the emulator's frames of up to
// 1 MiB.
package hostcopy

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"
)

const (
	// Threshold is the largest copy that Copy leaves to copy() alone.
	Threshold = 256 << 10
	// MinChunk is the smallest part a goroutine copies.
	MinChunk = 128 << 10
	// DefaultThreads is the default bound on the goroutines of one copy,
	// the caller's included.
	DefaultThreads = 4
	// NonTemporal is the size from which a split copy stores
	// non-temporally (bypassing the caches), as copy() itself does on
	// amd64 from this size on.
	NonTemporal = 1 << 20
	// MaxThreads is the largest value EnvThreads accepts.
	MaxThreads = 64
	// MinProcs is the fewest processors (GOMAXPROCS) on which Copy splits
	// by default: with fewer, the helpers would take the processors of
	// the emulator's engine, readers and pollers (measured on two: the
	// split made the 1 MiB WRITE of the CPU model 10-25% slower).
	// EnvThreads overrides it.
	MinProcs = 4
	// EnvThreads, set to N in 1..MaxThreads, replaces DefaultThreads (and
	// lifts MinProcs); 1 turns the split off.
	EnvThreads = "GDAKI_EMU_COPY_THREADS"

	line = 64 // cut parts on cache-line boundaries of dst
)

// threads reads EnvThreads once: the bound, and whether it was set.
var threads = sync.OnceValues(func() (int, error) {
	n, set, err := parseThreads()
	if set {
		explicit.Store(true)
	}
	return n, err
})

// explicit is set when EnvThreads set the bound.
var explicit atomic.Bool

// parseThreads reads EnvThreads: the bound, whether the variable set it,
// and an error naming it when it is malformed (the bound is then 1).
func parseThreads() (n int, set bool, err error) {
	s, ok := os.LookupEnv(EnvThreads)
	if !ok || s == "" {
		return DefaultThreads, false, nil
	}
	n, err = strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxThreads {
		return 1, true, fmt.Errorf("%s=%q is not a thread count in 1..%d", EnvThreads, s, MaxThreads)
	}
	return n, true, nil
}

// Threads returns the bound on the goroutines of one copy, before
// GOMAXPROCS bounds it: DefaultThreads or the value of EnvThreads. A
// malformed EnvThreads is an error (copies then run on one goroutine); the
// emulator's wire refuses to open a port with it, so that the mistake
// shows.
func Threads() (int, error) { return threads() }

// Workers is the number of goroutines Copy splits a large copy over now:
// min(GOMAXPROCS, Threads()), or 1 when GOMAXPROCS is below MinProcs and
// EnvThreads does not set the bound.
func Workers() int {
	p := runtime.GOMAXPROCS(0)
	if o := override.Load(); o > 0 {
		return min(int(o), p)
	}
	n, _ := threads()
	if p < MinProcs && !explicit.Load() {
		return 1
	}
	return min(n, p)
}

// override, when positive, replaces Threads() and MinProcs (SetThreads).
var override atomic.Int32

// SetThreads makes Copy split over min(n, GOMAXPROCS) goroutines whatever
// EnvThreads and MinProcs say, until the returned function restores the
// previous setting; n < 1 restores the default. For tests of the callers,
// which must exercise the split on hosts with few cores too.
func SetThreads(n int) (restore func()) {
	old := override.Swap(int32(max(0, min(n, MaxThreads))))
	return func() { override.Store(old) }
}

// Copy copies min(len(dst), len(src)) bytes from src to dst, as copy()
// does, on Workers() goroutines when the copy is larger than Threshold,
// and returns the number of bytes copied. See the package documentation.
func Copy(dst, src []byte) int {
	if min(len(dst), len(src)) <= Threshold {
		return copy(dst, src)
	}
	return CopyN(dst, src, Workers())
}

// CopyN is Copy on at most workers goroutines (the caller's included),
// whatever GOMAXPROCS and EnvThreads say; workers < 2 is copy().
func CopyN(dst, src []byte, workers int) int {
	n := min(len(dst), len(src))
	if workers < 2 {
		return copy(dst, src)
	}
	k := split(n, partsPer*workers)
	if k < 2 || overlap(dst[:n], src[:n]) {
		return copy(dst, src)
	}
	helpers := min(workers, k) - 1
	if waiting.Load() >= int32(workers) {
		// Helpers of earlier copies still wait for a processor: the
		// cores are busy, and more goroutines would only queue up.
		helpers = 0
	}
	var j *job
	select {
	case j = <-free:
	default:
		j = new(job)
	}
	j.dst, j.src, j.n, j.k = dst[:n], src[:n], n, int32(k)
	j.base = uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
	j.next.Store(0)
	j.refs.Store(int32(helpers) + 1)
	j.parts.Add(k)
	for i := 0; i < helpers; i++ {
		spawn()
		handoff <- j
	}
	j.run()
	j.parts.Wait()
	j.release()
	return n
}

// partsPer is how many parts per goroutine a copy is cut into (as far as
// MinChunk allows): a goroutine that runs late, or on a busy core, leaves
// parts that the others take, so that the copy never waits long for one
// goroutine.
const partsPer = 2

// split is the number of parts of an n-byte copy into at most max parts:
// 1 up to Threshold, else as many as max allows with every part longer
// than MinChunk+line.
func split(n, max int) int {
	if n <= Threshold {
		return 1
	}
	return min(max, n/(MinChunk+line))
}

// cut is the offset where part i of k of an n-byte copy to base starts
// (0 for the first, n for the end of the last): the first cache-line
// boundary of dst at or after i*(n/k). Every part is
// then longer than n/k-line, which is at least MinChunk when
// k <= n/(MinChunk+line).
func cut(base uintptr, n, k, i int) int {
	switch i {
	case 0:
		return 0
	case k:
		return n
	}
	at := base + uintptr(i*(n/k))
	return int((at+line-1)&^(line-1) - base)
}

// job is one copy in parts. The caller and its helpers take parts in turn
// (next) until none is left; parts counts the parts not yet copied, and
// the caller returns once it is zero. refs counts the caller and the
// helpers that have not yet let go of the job: the last one puts it back
// in the free list, so that a helper that starts late (every part taken, the
// call perhaps returned) only finds next past k and never sees the job
// reused under it.
type job struct {
	dst, src []byte
	n        int
	k        int32
	base     uintptr
	next     atomic.Int32
	refs     atomic.Int32
	parts    sync.WaitGroup
}

// run copies parts until none is left to take.
func (j *job) run() {
	for {
		i := j.next.Add(1) - 1
		if i >= j.k {
			return
		}
		from, to := cut(j.base, j.n, int(j.k), int(i)), cut(j.base, j.n, int(j.k), int(i)+1)
		copyPart(j.dst[from:to], j.src[from:to], j.n >= NonTemporal)
		j.parts.Done()
	}
}

// copyPart copies src to dst (of one length): with non-temporal stores
// when nt is set and the build has them (the whole cache lines of dst, the
// bytes before the first and after the last by copy()), otherwise by
// copy().
func copyPart(dst, src []byte, nt bool) {
	if !nt || !haveNT || raceEnabled {
		copy(dst, src)
		return
	}
	ntPart(dst, src)
}

// ntPart copies src to dst (of one length) with non-temporal stores for
// the whole cache lines of dst; amd64 only.
func ntPart(dst, src []byte) {
	if len(dst) < 2*line {
		copy(dst, src)
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
	head := int(-p & (line - 1))
	body := (len(dst) - head) &^ (line - 1)
	copy(dst[:head], src[:head])
	ntcopy(unsafe.Pointer(&dst[head]), unsafe.Pointer(&src[head]), uintptr(body))
	copy(dst[head+body:], src[head+body:])
}

// release lets go of the job; the last holder returns it to the pool.
func (j *job) release() {
	if j.refs.Add(-1) == 0 {
		j.dst, j.src = nil, nil
		select {
		case free <- j:
		default:
		}
	}
}

// free holds jobs for reuse. (Not a sync.Pool: a job often goes back from
// a helper's processor, and a Pool would hide it in that processor's
// private slot from the next caller, which would allocate.)
var free = make(chan *job, 4*MaxThreads)

// handoff carries a job to each helper a call starts (a helper takes
// whichever job comes next, perhaps another call's: every call starts as
// many helpers as it sends jobs, so each is taken). Its buffer saves a
// caller from waiting for a helper to be scheduled before it goes on.
var handoff = make(chan *job, 4*MaxThreads)

// spawn starts a helper (tests replace it to hold helpers back).
var spawn = func() {
	waiting.Add(1)
	go helper()
}

// waiting counts the helpers started and not yet running.
var waiting atomic.Int32

// helper takes one job, copies parts of it while any is left, and exits.
func helper() {
	waiting.Add(-1)
	j := <-handoff
	j.run()
	j.release()
}

// overlap reports whether a and b (of one length, not empty) share a byte.
func overlap(a, b []byte) bool {
	pa := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	pb := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	n := uintptr(len(a))
	return pa < pb+n && pb < pa+n
}
