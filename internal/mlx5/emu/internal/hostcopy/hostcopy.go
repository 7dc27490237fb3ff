// Package hostcopy copies large ranges of host memory on several cores.
//
// The emulated NIC moves a message's payload through host memory with
// plain copies: into a shared-memory ring when a frame leaves for another
// process, and from a frame into the responder's memory region when it
// lands. One core copies about 15-20 GB/s, so a 1 MiB message costs
// 60-70 us per copy; a bandwidth test at 1 MiB is bound by these copies
// long before the wire or the GPU. A host has more than one memory channel
// and core: splitting a large copy over a few goroutines multiplies its
// rate until the memory system, not the core, is the limit.
//
// # What Copy does
//
// Copy has the contract of the built-in copy (it copies min(len(dst),
// len(src)) bytes and returns that count) and, for large copies, runs it
// on several goroutines:
//
//   - up to Threshold bytes it is copy() itself;
//   - above, the range is cut into k parts, k = min(workers,
//     n/(MinChunk+64)), every part at least MinChunk bytes and every cut on
//     a 64-byte (cache-line) boundary of dst, so that no two goroutines
//     store into one cache line; the caller starts k-1 goroutines, copies
//     the last part itself and waits for the others;
//   - overlapping ranges (a loopback WRITE within one buffer can land on
//     its own source) are copied by copy() alone, with its memmove
//     semantics: parts copied at once would read bytes another part has
//     already overwritten.
//
// workers is min(GOMAXPROCS, DefaultThreads); GDAKI_EMU_COPY_THREADS=N
// replaces DefaultThreads by N (1 turns the split off). More goroutines
// than processors cannot copy faster, so GOMAXPROCS bounds N too.
//
// # Goroutines and allocation
//
// No goroutine outlives a call: each one Copy starts copies one part,
// signals the caller and exits, and Copy returns only after every part is
// done, so no goroutine touches dst or src after Copy returns and none is
// left behind between calls (the leak checks of the emulator and the wire
// see none). A persistent pool of workers would save the start of a
// goroutine (under a microsecond, against 10-60 us for a part) but would
// live for the whole process.
//
// A call allocates nothing once warm: the parts travel by value on one
// buffered channel (a started goroutine takes whichever part comes next,
// which may be another call's: every call starts exactly as many
// goroutines as it sends parts, so every part is taken), the wait group
// comes from a sync.Pool, and the goroutines run a function without
// arguments or captures (the runtime reuses the goroutines' stacks).
//
// # Why here
//
// The package sits under the emulator (internal/mlx5/emu/internal), not at
// the top of internal/: its only callers are the emulator's landing code
// and its wire, and the environment variable and the tuning (parts of
// 128 KiB and more, four goroutines) are the emulator's, chosen for its
// payloads of up to 1 MiB per frame.
package hostcopy

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
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
	// MaxThreads is the largest value EnvThreads accepts.
	MaxThreads = 64
	// EnvThreads, set to N in 1..MaxThreads, replaces DefaultThreads; 1
	// turns the split off.
	EnvThreads = "GDAKI_EMU_COPY_THREADS"

	line = 64 // cut parts on cache-line boundaries of dst
)

// threads reads EnvThreads once.
var threads = sync.OnceValues(parseThreads)

func parseThreads() (int, error) {
	s, ok := os.LookupEnv(EnvThreads)
	if !ok || s == "" {
		return DefaultThreads, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxThreads {
		return 1, fmt.Errorf("%s=%q is not a thread count in 1..%d", EnvThreads, s, MaxThreads)
	}
	return n, nil
}

// Threads returns the bound on the goroutines of one copy, before
// GOMAXPROCS bounds it: DefaultThreads or the value of EnvThreads. A
// malformed EnvThreads is an error (copies then run on one goroutine); the
// emulator's wire refuses to open a port with it, so that the mistake
// shows.
func Threads() (int, error) { return threads() }

// Workers is the number of goroutines Copy splits a large copy over now:
// min(GOMAXPROCS, Threads()).
func Workers() int {
	n, _ := threads()
	return min(n, runtime.GOMAXPROCS(0))
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
	k := split(n, workers)
	if k < 2 || overlap(dst[:n], src[:n]) {
		return copy(dst, src)
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
	wg := groups.Get().(*sync.WaitGroup)
	wg.Add(k - 1)
	from := 0
	for i := 1; i < k; i++ {
		to := cut(base, n, k, i)
		go worker()
		parts <- part{dst: dst[from:to], src: src[from:to], done: wg}
		from = to
	}
	copy(dst[from:n], src[from:n])
	wg.Wait()
	groups.Put(wg)
	return n
}

// split is the number of parts of an n-byte copy on at most workers
// goroutines: 1 up to Threshold, else as many as workers allows with every
// part longer than MinChunk+line.
func split(n, workers int) int {
	if n <= Threshold {
		return 1
	}
	return max(1, min(workers, n/(MinChunk+line)))
}

// cut is the offset where part i of k of an n-byte copy to base starts:
// the first cache-line boundary of dst at or after i*(n/k). Every part is
// then longer than n/k-line, which is at least MinChunk when
// k <= n/(MinChunk+line).
func cut(base uintptr, n, k, i int) int {
	at := base + uintptr(i*(n/k))
	return int((at+line-1)&^(line-1) - base)
}

// part is one goroutine's share of a copy.
type part struct {
	dst, src []byte
	done     *sync.WaitGroup
}

// parts carries the parts to the goroutines Copy starts; its buffer only
// saves a caller from waiting for a goroutine to be scheduled before it
// hands over the next part.
var parts = make(chan part, 4*MaxThreads)

var groups = sync.Pool{New: func() any { return new(sync.WaitGroup) }}

// worker copies one part and exits.
func worker() {
	p := <-parts
	copy(p.dst, p.src)
	p.done.Done()
}

// overlap reports whether a and b (of one length, not empty) share a byte.
func overlap(a, b []byte) bool {
	pa := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	pb := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	n := uintptr(len(a))
	return pa < pb+n && pb < pa+n
}
