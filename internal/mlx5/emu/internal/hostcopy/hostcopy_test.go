package hostcopy

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hostMem maps n bytes outside the Go heap (the emulator's payloads live
// in mapped memory, not in Go slices).
func hostMem(tb testing.TB, n int) []byte {
	tb.Helper()
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		tb.Fatalf("mmap %d: %v", n, err)
	}
	tb.Cleanup(func() { syscall.Munmap(b) })
	return b
}

func random(b []byte, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}

// sizes are lengths around every threshold of the split: Threshold, the
// length at which k parts start (k*(MinChunk+line)), and odd lengths.
func sizes() []int {
	var s []int
	for _, c := range []int{0, 1, 64, 4096, MinChunk, Threshold} {
		for _, d := range []int{-65, -64, -1, 0, 1, 63, 64} {
			if c+d >= 0 {
				s = append(s, c+d)
			}
		}
	}
	for k := 2; k <= 9; k++ {
		c := k * (MinChunk + line)
		s = append(s, c-1, c, c+1, c+line+7)
	}
	return append(s, 1<<20, 1<<20+13, 4<<20-5)
}

// TestCopySameAsBuiltin: for every length around a threshold, every
// alignment of dst and src (relative to a cache line and to each other),
// with 1 to 8 workers and a dst shorter, equal or longer than src, CopyN
// returns what copy() returns and leaves dst byte for byte as copy()
// does, the bytes around the copied range untouched.
func TestCopySameAsBuiltin(t *testing.T) {
	const pad = 256
	maxN := 4<<20 + 4*pad
	src := hostMem(t, maxN)
	got := hostMem(t, maxN)
	want := make([]byte, maxN)
	noise := make([]byte, maxN+4096)
	random(src, 1)
	random(noise, 2)
	cases := 0
	for _, n := range sizes() {
		for _, al := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {63, 17}, {64, 0}, {5, 70}} {
			for _, extra := range []int{-1, 0, 1} {
				for _, w := range []int{1, 2, 3, 4, 8} {
					dn := n + extra
					if dn < 0 {
						continue
					}
					// Fresh bytes in the window the copy may touch and its
					// surroundings, different for every case.
					cases++
					win := 2*pad + al[0] + dn
					copy(got[:win], noise[cases%4096:])
					copy(want[:win], got[:win])
					d, s := got[pad+al[0]:pad+al[0]+dn], src[al[1]:al[1]+n]
					r := CopyN(d, s, w)
					wr := copy(want[pad+al[0]:pad+al[0]+dn], s)
					if r != wr {
						t.Fatalf("n=%d dst+%d src+%d dst len %d, %d workers: returned %d, copy() %d", n, al[0], al[1], dn, w, r, wr)
					}
					if !bytes.Equal(got[:win], want[:win]) {
						i := 0
						for got[i] == want[i] {
							i++
						}
						t.Fatalf("n=%d dst+%d src+%d dst len %d, %d workers: first differing byte at %d of the buffer (copy at %d)", n, al[0], al[1], dn, w, i, pad+al[0])
					}
				}
			}
		}
	}
}

// TestNonTemporalPart: the non-temporal copy of a part gives copy()'s
// bytes for every length up to a few cache lines and a few larger ones,
// at every alignment of dst and src within a cache line, and stores
// nothing outside dst.
func TestNonTemporalPart(t *testing.T) {
	if !haveNT {
		t.Skip("no non-temporal stores on " + runtime.GOARCH + ": parts are copy()")
	}
	const pad = 128
	src := hostMem(t, 1<<20)
	got := hostMem(t, 1<<20)
	want := make([]byte, 1<<20)
	random(src, 3)
	lengths := []int{}
	for n := 0; n <= 4*line+1; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 4096-1, 4096, 4096+65, 256<<10+17)
	for _, n := range lengths {
		for da := 0; da < line; da += 7 {
			for sa := 0; sa < line; sa += 13 {
				win := 2*pad + line + n
				copy(got[:win], src[1000:])
				copy(want[:win], got[:win])
				ntPart(got[pad+da:pad+da+n], src[sa:sa+n])
				copy(want[pad+da:pad+da+n], src[sa:sa+n])
				if !bytes.Equal(got[:win], want[:win]) {
					t.Fatalf("%d bytes, dst+%d src+%d: result differs from copy()", n, da, sa)
				}
			}
		}
	}
}

// TestCuts: for every length around a threshold, base alignment and
// worker count, the parts cover the range in order, each is at least
// MinChunk bytes and every cut is on a cache-line boundary of dst.
func TestCuts(t *testing.T) {
	for _, n := range sizes() {
		for _, base := range []uintptr{0x10000, 0x10001, 0x1003f, 0x10040, 0x7fff_ffff_f000 + 13} {
			for w := 2; w <= 16; w++ {
				k := split(n, partsPer*w)
				if n <= Threshold && k != 1 {
					t.Fatalf("n=%d (not above Threshold) split in %d", n, k)
				}
				if k < 2 {
					continue
				}
				if cut(base, n, k, 0) != 0 || cut(base, n, k, k) != n {
					t.Fatalf("n=%d base %#x k=%d: parts span [%d, %d)", n, base, k, cut(base, n, k, 0), cut(base, n, k, k))
				}
				for i := 0; i < k; i++ {
					from, to := cut(base, n, k, i), cut(base, n, k, i+1)
					if i > 0 && (base+uintptr(from))%line != 0 {
						t.Fatalf("n=%d base %#x k=%d: part %d starts at %d, not on a cache line of dst", n, base, k, i, from)
					}
					if to-from < MinChunk {
						t.Fatalf("n=%d base %#x k=%d: part %d is %d bytes [%d, %d), below MinChunk", n, base, k, i, to-from, from, to)
					}
				}
			}
		}
	}
}

// TestCopyDefault: Copy (Workers() goroutines, DefaultThreads at most)
// agrees with copy() just above Threshold, at 1 MiB and at 4 MiB.
func TestCopyDefault(t *testing.T) {
	defer SetThreads(DefaultThreads)() // split on hosts below MinProcs too
	for _, n := range []int{Threshold + 1, 1 << 20, 4 << 20} {
		src, dst := hostMem(t, n), hostMem(t, n)
		random(src, uint64(n))
		if r := Copy(dst, src); r != n || !bytes.Equal(dst, src) {
			t.Fatalf("Copy %d bytes: returned %d, equal %v", n, r, bytes.Equal(dst, src))
		}
	}
}

// TestCopyOverlap: overlapping dst and src, either way round and by any
// distance, give copy()'s memmove result (a split copy would read bytes
// another part already overwrote).
func TestCopyOverlap(t *testing.T) {
	const n = 1 << 20
	buf := hostMem(t, 2*n)
	want := make([]byte, 2*n)
	for _, shift := range []int{1, 64, 4096, MinChunk, n - 1} {
		for _, fwd := range []bool{true, false} {
			random(buf, uint64(shift))
			copy(want, buf)
			var d, s, wd, ws []byte
			if fwd {
				d, s, wd, ws = buf[shift:shift+n], buf[:n], want[shift:shift+n], want[:n]
			} else {
				d, s, wd, ws = buf[:n], buf[shift:shift+n], want[:n], want[shift:shift+n]
			}
			CopyN(d, s, 4)
			copy(wd, ws)
			if !bytes.Equal(buf, want) {
				t.Fatalf("overlap by %d (dst after src %v): result differs from copy()", n-shift, fwd)
			}
		}
	}
	if !overlap(buf[10:20], buf[19:29]) || overlap(buf[10:20], buf[20:30]) || overlap(buf[20:30], buf[10:20]) {
		t.Fatal("overlap misjudges adjacent or one-byte-overlapping ranges")
	}
}

// TestCopySplits: a large copy does run on several goroutines: a helper
// shows up as a goroutine running helper while copies are in progress.
func TestCopySplits(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("GOMAXPROCS 1: the helpers cannot run beside the caller")
	}
	src, dst := hostMem(t, 64<<20), hostMem(t, 64<<20)
	stop := make(chan struct{})
	seen := make(chan bool, 1)
	go func() {
		buf := make([]byte, 1<<20)
		for {
			select {
			case <-stop:
				seen <- false
				return
			default:
			}
			if strings.Contains(string(buf[:runtime.Stack(buf, true)]), "hostcopy.helper(") {
				seen <- true
				return
			}
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		CopyN(dst, src, 4)
		select {
		case ok := <-seen:
			if !ok {
				t.Fatal("no helper goroutine seen")
			}
			return
		default:
		}
		if time.Now().After(deadline) {
			close(stop)
			<-seen
			t.Fatal("no helper goroutine seen during 5 s of 64 MiB copies on 4 goroutines")
		}
	}
}

// helpersAlive counts the goroutines running helper now.
func helpersAlive() (int, string) {
	buf := make([]byte, 1<<20)
	all := string(buf[:runtime.Stack(buf, true)])
	n := 0
	var stacks []string
	for _, g := range strings.Split(all, "\n\n") {
		if strings.Contains(g, "hostcopy.helper(") {
			n++
			stacks = append(stacks, g)
		}
	}
	return n, strings.Join(stacks, "\n\n")
}

// TestConcurrentCopiesLeaveNoHelper: copies from many goroutines at once
// (jobs of different calls mix on the handoff channel, late helpers meet
// jobs that their call has finished), with GOMAXPROCS 1 (every helper
// runs after its caller did all the parts), 2 and 8, give the right bytes,
// and once they have returned every helper has exited (promptly: a helper
// never waits for anything but its job) and no job is left on the
// channel.
func TestConcurrentCopiesLeaveNoHelper(t *testing.T) {
	for _, procs := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			const n = 1 << 20
			var wg sync.WaitGroup
			for c := 0; c < 8; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					src, dst := make([]byte, n+c), make([]byte, n+c)
					random(src, uint64(c))
					for i := 0; i < 40; i++ {
						clear(dst)
						CopyN(dst[c:], src[c:], 2+c%4)
						if !bytes.Equal(dst[c:], src[c:]) {
							t.Errorf("caller %d, copy %d: wrong bytes", c, i)
							return
						}
					}
				}()
			}
			wg.Wait()
			deadline := time.Now().Add(2 * time.Second)
			for {
				k, stacks := helpersAlive()
				if k == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d helper goroutines still running 2 s after their copies returned:\n%s", k, stacks)
				}
				time.Sleep(time.Millisecond)
			}
			if len(handoff) != 0 {
				t.Fatalf("%d jobs left on the handoff channel", len(handoff))
			}
		})
	}
}

// TestCallerNeedsNoHelper: a copy completes, with the right bytes, when
// none of its helpers runs before it ends (here they are held back until
// it has returned, as on cores busy with other work): the caller takes
// every part itself instead of waiting for a helper. The helpers, let go
// afterwards, find nothing left, touch neither buffer and exit.
func TestCallerNeedsNoHelper(t *testing.T) {
	gate := make(chan struct{})
	var held sync.WaitGroup
	old := spawn
	spawn = func() {
		held.Add(1)
		go func() {
			defer held.Done()
			<-gate
			helper()
		}()
	}
	defer func() { spawn = old }()
	src, dst := hostMem(t, 4<<20), hostMem(t, 4<<20)
	random(src, 9)
	done := make(chan struct{})
	go func() {
		defer close(done)
		CopyN(dst, src, 8)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		close(gate)
		t.Fatal("the copy waited for helpers that could not run")
	}
	if !bytes.Equal(dst, src) {
		t.Fatal("wrong bytes")
	}
	// The buffers are the caller's again: helpers let go now must not
	// touch them.
	clear(dst)
	close(gate)
	held.Wait()
	if !bytes.Equal(dst, make([]byte, len(dst))) {
		t.Fatal("a helper wrote into dst after the copy returned")
	}
	if len(handoff) != 0 {
		t.Fatalf("%d jobs left on the handoff channel", len(handoff))
	}
}

// TestCopyAllocs: a large copy allocates nothing once warm. (Warm means
// that the free list holds as many jobs as are ever held at once by
// helpers that start after their call returned: a few hundred calls.)
func TestCopyAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes goroutines and channels allocate: allocation counts mean nothing under -race")
	}
	src, dst := hostMem(t, 1<<20), hostMem(t, 1<<20)
	for i := 0; i < 1000; i++ {
		CopyN(dst, src, 4)
	}
	if a := testing.AllocsPerRun(500, func() { CopyN(dst, src, 4) }); a > 0.02 {
		t.Fatalf("%.3f allocations per 1 MiB copy on 4 goroutines, want 0", a)
	}
}

func TestThreadsEnv(t *testing.T) {
	for _, c := range []struct {
		v         string
		n         int
		set, fail bool
	}{{"", DefaultThreads, false, false}, {"1", 1, true, false}, {"8", 8, true, false}, {"64", 64, true, false},
		{"0", 1, true, true}, {"65", 1, true, true}, {"-2", 1, true, true}, {"four", 1, true, true}, {"4 ", 1, true, true}} {
		t.Run(fmt.Sprintf("%q", c.v), func(t *testing.T) {
			t.Setenv(EnvThreads, c.v)
			n, set, err := parseThreads()
			if n != c.n || set != c.set || (err != nil) != c.fail {
				t.Fatalf("%s=%q: %d, set %v, %v; want %d, set %v, error %v", EnvThreads, c.v, n, set, err, c.n, c.set, c.fail)
			}
			if err != nil && (!strings.Contains(err.Error(), EnvThreads) || !strings.Contains(err.Error(), c.v)) {
				t.Fatalf("error %q does not name the variable and its value", err)
			}
		})
	}
}

// TestWorkers: by default min(GOMAXPROCS, DefaultThreads) from MinProcs
// processors on, 1 below; SetThreads replaces both, GOMAXPROCS still
// bounding it, until restored. (This test binary runs without
// GDAKI_EMU_COPY_THREADS.)
func TestWorkers(t *testing.T) {
	if _, set, _ := parseThreads(); set {
		t.Skip(EnvThreads + " is set for this run")
	}
	for _, c := range []struct{ procs, want int }{{1, 1}, {2, 1}, {MinProcs - 1, 1}, {MinProcs, min(MinProcs, DefaultThreads)}, {16, DefaultThreads}} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.procs))
			if w := Workers(); w != c.want {
				t.Errorf("GOMAXPROCS %d: %d workers, want %d", c.procs, w, c.want)
			}
			restore := SetThreads(3)
			if w := Workers(); w != min(3, c.procs) {
				t.Errorf("GOMAXPROCS %d, SetThreads(3): %d workers, want %d", c.procs, w, min(3, c.procs))
			}
			restore()
			if w := Workers(); w != c.want {
				t.Errorf("GOMAXPROCS %d, restored: %d workers, want %d", c.procs, w, c.want)
			}
		}()
	}
}
