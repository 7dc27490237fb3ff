package emugpu

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5/emu"
)

// hostRange is a DeviceRange over Go memory, for the fake copier.
type hostRange struct{ b []byte }

func (r hostRange) Base() uintptr { return uintptr(unsafe.Pointer(&r.b[0])) }

// fakeGPU runs copier.cu's protocol in goroutines, on host memory.
type fakeGPU struct {
	c        *copier
	idle     time.Duration
	mu       sync.Mutex
	launches int
	wg       sync.WaitGroup
	// hooks
	noStart   bool // launched instances never begin
	stall     bool // instances take batches but never finish them
	ran       atomic.Int64
	endRacing atomic.Bool // the next instance ends after its next look at seq, even if a batch is there
	bufs      [][]byte    // the memory fake device addresses point into
	afterMu   sync.Mutex
	after     []bool        // per descriptor of the last batch: it carried descAfter
	lastPost  atomic.Uint64 // the posted word of the last batch run
}

// at is the n bytes at the fake device address a.
func (f *fakeGPU) at(a, n uint64) []byte {
	for _, b := range f.bufs {
		base := uint64(uintptr(unsafe.Pointer(&b[0])))
		if a >= base && a+n <= base+uint64(len(b)) {
			return b[a-base : a-base+n]
		}
	}
	panic("fake copier: an address outside every buffer")
}

func (f *fakeGPU) launch(epoch uint32) error {
	f.mu.Lock()
	f.launches++
	f.mu.Unlock()
	if f.noStart {
		return nil
	}
	f.begin(epoch)
	return nil
}

// begin runs an instance of epoch, as a launch does (or, for one launched
// while noStart was set, as the GPU would have once it had room).
func (f *fakeGPU) begin(epoch uint32) {
	f.wg.Add(1)
	go f.instance(epoch)
}

// awaitExit waits until c's newest instance has ended.
func awaitExit(t *testing.T, c *copier) {
	t.Helper()
	require.Eventually(t, func() bool { return atomic.LoadUint32(c.word(ctlExited)) == c.epoch }, time.Second, time.Millisecond)
}

func (f *fakeGPU) w(off uintptr) *uint32 { return f.c.word(off) }

func (f *fakeGPU) instance(epoch uint32) {
	defer f.wg.Done()
	seen := atomic.LoadUint32(f.w(ctlDone))
	atomic.StoreUint32(f.w(ctlStarted), epoch)
	last := time.Now()
	racing := f.endRacing.Swap(false)
	for {
		if atomic.LoadUint32(f.w(ctlCancel)) == epoch {
			break
		}
		post := atomic.LoadUint64((*uint64)(f.c.ctl))
		s := uint32(post)
		if racing {
			// As if the instance had seen nothing new an instant before
			// the host posted, and ended.
			break
		}
		if s == seen {
			if time.Since(last) > f.idle {
				break
			}
			time.Sleep(10 * time.Microsecond)
			continue
		}
		if f.stall {
			time.Sleep(time.Millisecond)
			continue
		}
		n, inWords := uint32(post>>32)&0xffff, int(post>>48&0xff)
		if inWords > maxInline || descWord+3*int(n)+inWords > lookWords {
			panic(fmt.Sprintf("batch %d: %d descriptors and %d inline words do not fit in the look", s, n, inWords))
		}
		f.afterMu.Lock()
		f.after = f.after[:0]
		f.afterMu.Unlock()
		for k := uintptr(0); k < uintptr(n); k++ {
			p := unsafe.Add(f.c.ctl, ctlDesc+k*descSize)
			src, dst, word := *(*uint64)(p), *(*uint64)(unsafe.Add(p, 8)), *(*uint64)(unsafe.Add(p, 16))
			if tag := uint32(word >> 32); tag > s || tag == 0 {
				panic(fmt.Sprintf("descriptor %d of batch %d carries the number %d", k, s, tag))
			}
			ln := word & (descInline - 1)
			if word>>32<<32|ln != word&^(descAfter|descInline) {
				panic(fmt.Sprintf("descriptor %d of batch %d: length word %#x", k, s, word))
			}
			f.afterMu.Lock()
			f.after = append(f.after, word&descAfter != 0)
			f.afterMu.Unlock()
			if word&descInline == 0 {
				copy(f.at(dst, ln), f.at(src, ln))
				continue
			}
			// Inline bytes: four to a word from word src, each word
			// showing the batch's number (the host stored them before
			// the posted word).
			first := descWord + 3*int(n)
			if src < uint64(first) || src+uint64(inlineWords(int(ln))) > uint64(first+inWords) {
				panic(fmt.Sprintf("descriptor %d of batch %d: inline words %d+%d outside %d+%d", k, s, src, ln, first, inWords))
			}
			// As the kernel, wait until every word shows the number.
			out := f.at(dst, ln)
			for i := 0; i < len(out); {
				v := atomic.LoadUint64((*uint64)(unsafe.Add(f.c.ctl, (int(src)+i/4)*8)))
				if uint32(v>>32) != s {
					time.Sleep(10 * time.Microsecond)
					i = 0
					continue
				}
				out[i] = byte(v >> (8 * (i % 4)))
				i++
			}
		}
		f.lastPost.Store(post)
		f.ran.Add(1)
		seen = s
		atomic.StoreUint32(f.w(ctlDone), s)
		last = time.Now()
	}
	atomic.StoreUint32(f.w(ctlExited), epoch)
}

func newFake(t *testing.T, idle time.Duration, dev []byte) (*fakeGPU, *copier) {
	t.Helper()
	mem := make([]uint64, (ctlSize+copierArena)/8)
	base := unsafe.Pointer(&mem[0])
	f := &fakeGPU{idle: idle}
	c := newCopier(base, uintptr(base), len(mem)*8, f)
	f.c = c
	f.bufs = [][]byte{c.arena, dev}
	t.Cleanup(func() {
		c.stop(time.Second)
		f.wg.Wait()
		runtimeKeep(mem)
	})
	return f, c
}

//go:noinline
func runtimeKeep(any) {}

func shortWaits(t *testing.T) {
	t.Helper()
	sw, bw, of := startWait, batchWait, offFor
	startWait, batchWait, offFor = 20*time.Millisecond, 50*time.Millisecond, 30*time.Millisecond
	t.Cleanup(func() { startWait, batchWait, offFor = sw, bw, of })
}

func batch(dev, host []byte, in []byte) []emu.DeviceCopy {
	return []emu.DeviceCopy{
		{Kind: emu.CopyToDevice, Dst: hostRange{dev}, DstOff: 64, Host: in},
		{Kind: emu.CopyDeviceToDevice, Src: hostRange{dev}, SrcOff: 64, Dst: hostRange{dev}, DstOff: 256, Len: uint64(len(in))},
		{Kind: emu.CopyToHost, Src: hostRange{dev}, SrcOff: 256, Host: host},
	}
}

var okCheck = func(uint32) error { return nil }

// A batch of the three kinds runs in order on the copier, through its
// staging arena, and the reads land in the caller's slices.
func TestCopierBatch(t *testing.T) {
	dev := make([]byte, 1024)
	f, c := newFake(t, time.Second, dev)
	host := make([]byte, 13)
	in := []byte("thirteen byte")
	ran, err := c.run(batch(dev, host, in), okCheck)
	require.NoError(t, err)
	assert.True(t, ran)
	assert.Equal(t, in, host)
	assert.Equal(t, in, dev[256:269])
	assert.Equal(t, 1, f.launches)
	// The running instance takes the next batch: no new launch.
	host2 := make([]byte, 5)
	ran, err = c.run(batch(dev, host2, []byte("again")), okCheck)
	require.NoError(t, err)
	assert.True(t, ran)
	assert.Equal(t, "again", string(host2))
	assert.Equal(t, 1, f.launches)
	assert.EqualValues(t, 2, f.ran.Load())
}

// A copy that follows one into device memory carries descAfter, so that
// the kernel makes the earlier writes visible first (a CQE's op_own after
// its body); reads that follow only reads do not wait for each other.
func TestCopierOrderFlags(t *testing.T) {
	dev := make([]byte, 1024)
	f, c := newFake(t, time.Second, dev)
	lastAfter := func() []bool {
		f.afterMu.Lock()
		defer f.afterMu.Unlock()
		return append([]bool(nil), f.after...)
	}
	host := make([]byte, 13)
	ran, err := c.run(batch(dev, host, []byte("thirteen byte")), okCheck)
	require.NoError(t, err)
	require.True(t, ran)
	assert.Equal(t, []bool{false, true, true}, lastAfter(), "write, device copy, read")
	assert.NotZero(t, f.lastPost.Load()&postToHost, "a batch that reads into the arena writes host memory")

	a, b := make([]byte, 8), make([]byte, 8)
	reads := []emu.DeviceCopy{
		{Kind: emu.CopyToHost, Src: hostRange{dev}, SrcOff: 0, Host: a},
		{Kind: emu.CopyToHost, Src: hostRange{dev}, SrcOff: 64, Host: b},
		{Kind: emu.CopyToDevice, Dst: hostRange{dev}, DstOff: 128, Host: []byte("body")},
		{Kind: emu.CopyToDevice, Dst: hostRange{dev}, DstOff: 128, Host: []byte("fin!")},
	}
	ran, err = c.run(reads, okCheck)
	require.NoError(t, err)
	require.True(t, ran)
	assert.Equal(t, []bool{false, false, false, true}, lastAfter(), "read, read, write, write")
	assert.Equal(t, "fin!", string(dev[128:132]))

	ran, err = c.run(reads[2:], okCheck)
	require.NoError(t, err)
	require.True(t, ran)
	assert.Zero(t, f.lastPost.Load()&postToHost, "writes to device memory alone")
}

// Small writes travel inline, in the words the kernel reads with its look,
// when every write of the batch fits there with the descriptors; a batch
// with one write too many for the look stages all of them. Each byte lands
// where it should at every length and alignment, and a CQE's shape (its
// body, then its last byte ordered after it) goes inline whole.
func TestCopierInline(t *testing.T) {
	dev := make([]byte, 4096)
	_, c := newFake(t, time.Second, dev)
	fill := func(n, seed int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*29 + seed)
		}
		return b
	}
	run := func(ops []emu.DeviceCopy) bool {
		t.Helper()
		before := CopyStats().InlineBatches
		ran, err := c.run(ops, okCheck)
		require.NoError(t, err)
		require.True(t, ran)
		return CopyStats().InlineBatches == before+1
	}
	for n := 1; n <= 4*maxInline; n++ {
		for _, off := range []int{0, 1, 3, 8} {
			in := fill(n, n+off)
			clear(dev)
			inl := run([]emu.DeviceCopy{{Kind: emu.CopyToDevice, Dst: hostRange{dev}, DstOff: uint64(off), Host: in}})
			assert.Equal(t, descWord+3+inlineWords(n) <= lookWords, inl, "%d bytes at %d", n, off)
			require.Equal(t, in, dev[off:off+n], "%d bytes at %d", n, off)
			assert.Zero(t, dev[off+n], "%d bytes at %d: nothing past the end", n, off)
		}
	}
	body, own := fill(63, 1), []byte{0xf1}
	cqe := []emu.DeviceCopy{
		{Kind: emu.CopyToDevice, Dst: hostRange{dev}, DstOff: 1024, Host: body},
		{Kind: emu.CopyToDevice, Dst: hostRange{dev}, DstOff: 1024 + 63, Host: own},
	}
	assert.True(t, run(cqe), "a CQE travels inline")
	assert.Equal(t, append(append([]byte(nil), body...), own...), dev[1024:1088])
	assert.Equal(t, uint64(1|descAfter|descInline), c.descs[1].n, "the last byte waits for the body")

	// Two CQEs: 32 inline words and 4 descriptors do not fit: staged.
	two := append(append([]emu.DeviceCopy(nil), cqe...), emu.DeviceCopy{Kind: emu.CopyToDevice, Dst: hostRange{dev}, DstOff: 2048, Host: body},
		emu.DeviceCopy{Kind: emu.CopyToDevice, Dst: hostRange{dev}, DstOff: 2048 + 63, Host: own})
	clear(dev)
	assert.False(t, run(two), "two CQEs are staged")
	assert.Equal(t, body, dev[2048:2048+63])
	assert.Equal(t, body, dev[1024:1024+63])

	// A batch of reads only has nothing inline; a read beside an inline
	// write still lands in the caller's slice.
	got := make([]byte, 7)
	assert.False(t, run([]emu.DeviceCopy{{Kind: emu.CopyToHost, Src: hostRange{dev}, SrcOff: 2048, Host: got}}))
	assert.Equal(t, body[:7], got)
	assert.True(t, run([]emu.DeviceCopy{
		{Kind: emu.CopyToDevice, Dst: hostRange{dev}, DstOff: 3000, Host: []byte("inline")},
		{Kind: emu.CopyToHost, Src: hostRange{dev}, SrcOff: 3000, Host: got[:6]},
	}))
	assert.Equal(t, "inline", string(got[:6]))

	// An inline word that does not show the batch's number yet is not
	// taken: the copy waits for it.
	staleInline(t, 200*time.Microsecond)
	clear(dev)
	assert.True(t, run(cqe))
	assert.Equal(t, body, dev[1024:1024+63])

	// GDAKI_EMU_COPIER_INLINE=0: everything staged.
	inlineOn = false
	t.Cleanup(func() { inlineOn = true })
	clear(dev)
	assert.False(t, run(cqe))
	assert.Equal(t, own, dev[1024+63:1024+64])
}

// staleInline makes the next batch with inline words post them with its
// first word changed (its bytes and its number), as if the look had read
// it before the host stored it, and restores the word after d.
func staleInline(t *testing.T, d time.Duration) {
	t.Helper()
	var once sync.Once
	postHook = func(c *copier) {
		if c.inWords == 0 {
			return
		}
		once.Do(func() {
			p := (*uint64)(unsafe.Add(c.ctl, c.inlines[0].word*8))
			good := atomic.LoadUint64(p)
			atomic.StoreUint64(p, ^good)
			time.AfterFunc(d, func() { atomic.StoreUint64(p, good) })
		})
	}
	t.Cleanup(func() { postHook = nil })
}

// Batches that are not the copier's go to the copy engines untouched.
func TestCopierPlanRefuses(t *testing.T) {
	dev := make([]byte, copierMax+64)
	f, c := newFake(t, time.Second, dev)
	tooBig := []emu.DeviceCopy{{Kind: emu.CopyToHost, Src: hostRange{dev}, Host: make([]byte, copierMax+1)}}
	tooMany := make([]emu.DeviceCopy, maxDesc+1)
	for i := range tooMany {
		tooMany[i] = emu.DeviceCopy{Kind: emu.CopyToHost, Src: hostRange{dev}, Host: make([]byte, 1)}
	}
	empty := []emu.DeviceCopy{{Kind: emu.CopyDeviceToDevice, Src: hostRange{dev}, Dst: hostRange{dev}}}
	for name, ops := range map[string][]emu.DeviceCopy{"bytes": tooBig, "copies": tooMany, "empty": empty} {
		ran, err := c.run(ops, okCheck)
		assert.NoError(t, err, name)
		assert.False(t, ran, name)
	}
	assert.Zero(t, f.launches)
}

// An idle instance ends; the next batch starts another, which checks the
// ranges again.
func TestCopierRelaunchAfterIdle(t *testing.T) {
	dev := make([]byte, 1024)
	f, c := newFake(t, 5*time.Millisecond, dev)
	checks := 0
	check := func(uint32) error { checks++; return nil }
	for i := 0; i < 3; i++ {
		host := make([]byte, 4)
		ran, err := c.run(batch(dev, host, []byte{1, 2, 3, byte(i)}), check)
		require.NoError(t, err)
		require.True(t, ran)
		assert.Equal(t, []byte{1, 2, 3, byte(i)}, host)
		awaitExit(t, c)
	}
	assert.Equal(t, 3, f.launches)
	// Batches 2 and 3 are posted to the instance the host last saw running,
	// found it ended, were taken back and checked again for the next one.
	assert.Equal(t, 5, checks)
}

// ready never waits: with no instance it launches one and reports false;
// it reports true once that instance began, false again (and launches the
// next) once it ended. A batch posted while an instance is pending waits for
// that one instead of launching another. Epochs step by 2 from the first.
func TestCopierReady(t *testing.T) {
	dev := make([]byte, 1024)
	f, c := newFake(t, 5*time.Millisecond, dev)
	c.epoch = 1
	f.noStart = true
	assert.False(t, c.ready(), "no instance")
	assert.Equal(t, 1, f.launches)
	assert.EqualValues(t, 3, c.epoch)
	assert.False(t, c.ready(), "launched, not started")
	assert.Equal(t, 1, f.launches, "the pending one is not launched again")

	// The pending instance begins (as the fake would have): ready.
	f.noStart = false
	f.begin(c.epoch)
	require.Eventually(t, c.ready, time.Second, 100*time.Microsecond)
	host := make([]byte, 4)
	ran, err := c.run(batch(dev, host, []byte("live")), okCheck)
	require.NoError(t, err)
	require.True(t, ran)
	assert.Equal(t, "live", string(host))
	assert.Equal(t, 1, f.launches)

	// It idles out: the next look launches another, which becomes ready.
	awaitExit(t, c)
	assert.False(t, c.ready(), "ended")
	assert.Equal(t, 2, f.launches)
	assert.EqualValues(t, 5, c.epoch)
	require.Eventually(t, c.ready, time.Second, 100*time.Microsecond)

	// A pending instance that began and already ended is not ready: the
	// look launches the next one.
	c.stop(time.Second)
	f.noStart = true
	assert.False(t, c.ready())
	launches := f.launches
	f.noStart = false
	f.begin(c.epoch)
	awaitExit(t, c)
	assert.False(t, c.ready(), "began and ended while pending")
	assert.Equal(t, launches+1, f.launches)
	require.Eventually(t, c.ready, time.Second, 100*time.Microsecond)

	// A run while an instance is pending takes that instance.
	c.stop(time.Second)
	f.noStart = true
	assert.False(t, c.ready())
	launches = f.launches
	f.noStart = false
	f.begin(c.epoch)
	ran, err = c.run(batch(dev, host, []byte("pend")), okCheck)
	require.NoError(t, err)
	require.True(t, ran)
	assert.Equal(t, "pend", string(host))
	assert.Equal(t, launches, f.launches, "run waited for the pending instance")
}

// A pending instance that never begins is cancelled after startWait, and
// the copier rests for offFor; stop cancels a pending one too.
func TestCopierReadyGivesUp(t *testing.T) {
	shortWaits(t)
	dev := make([]byte, 1024)
	f, c := newFake(t, time.Second, dev)
	f.noStart = true
	assert.False(t, c.ready())
	time.Sleep(startWait + 5*time.Millisecond)
	assert.False(t, c.ready())
	assert.Equal(t, c.epoch, atomic.LoadUint32(c.word(ctlCancel)), "the late instance is told to end")
	assert.False(t, c.ready(), "resting")
	assert.Equal(t, 1, f.launches)
	time.Sleep(offFor + 5*time.Millisecond)
	assert.False(t, c.ready())
	assert.Equal(t, 2, f.launches, "tried again after offFor")
	c.stop(10 * time.Millisecond)
	assert.Equal(t, c.epoch, atomic.LoadUint32(c.word(ctlCancel)), "stop cancels the pending instance")
	assert.False(t, c.pending)
}

// An instance that ends just as a batch is posted never runs it: the host
// takes it back, checks the ranges again and posts it to the next instance;
// it runs once.
func TestCopierEndRacesPost(t *testing.T) {
	dev := make([]byte, 1024)
	f, c := newFake(t, time.Second, dev)
	checks := 0
	check := func(uint32) error { checks++; return nil }
	f.endRacing.Store(true)
	host := make([]byte, 3)
	ran, err := c.run(batch(dev, host, []byte("abc")), check)
	require.NoError(t, err)
	require.True(t, ran)
	assert.Equal(t, "abc", string(host))
	assert.Equal(t, 2, f.launches)
	assert.Equal(t, 2, checks, "the ranges are checked again for the second instance")
	assert.EqualValues(t, 1, f.ran.Load())
}

// Memory freed since registration fails the batch before any copy, and
// after an instance ended the check runs again before the batch is reposted.
func TestCopierCheckFails(t *testing.T) {
	dev := make([]byte, 1024)
	f, c := newFake(t, time.Second, dev)
	gone := errors.New("freed")
	host := make([]byte, 3)
	ran, err := c.run(batch(dev, host, []byte("abc")), func(uint32) error { return gone })
	assert.True(t, ran)
	assert.ErrorIs(t, err, gone)
	assert.Zero(t, f.ran.Load())
	assert.Equal(t, make([]byte, 1024), dev, "nothing was written")
	// The failure is the batch's, not the copier's: the next one runs.
	ran, err = c.run(batch(dev, host, []byte("xyz")), okCheck)
	require.NoError(t, err)
	assert.True(t, ran)
	assert.Equal(t, "xyz", string(host))

	c.stop(time.Second) // the next batch starts an instance, which ends racing it
	f.endRacing.Store(true)
	calls := 0
	ran, err = c.run(batch(dev, host, []byte("123")), func(uint32) error {
		if calls++; calls == 2 {
			return gone
		}
		return nil
	})
	assert.True(t, ran)
	assert.ErrorIs(t, err, gone, "the second check, after the instance ended")
	assert.Equal(t, "xyz", string(host))
	assert.EqualValues(t, 1, f.ran.Load())
}

// An instance that never begins (a GPU full of the user's blocks) is
// cancelled, the copy engines take the batch, and the copier is not tried
// again for offFor.
func TestCopierNoStart(t *testing.T) {
	shortWaits(t)
	dev := make([]byte, 1024)
	f, c := newFake(t, time.Second, dev)
	f.noStart = true
	ran, err := c.run(batch(dev, make([]byte, 3), []byte("abc")), okCheck)
	assert.NoError(t, err)
	assert.False(t, ran)
	assert.Equal(t, c.epoch, atomic.LoadUint32(c.word(ctlCancel)), "the late instance is told to end")
	ran, _ = c.run(batch(dev, make([]byte, 3), []byte("abc")), okCheck)
	assert.False(t, ran)
	assert.Equal(t, 1, f.launches, "no launch while off")
	time.Sleep(offFor + 5*time.Millisecond)
	f.noStart = false
	host := make([]byte, 3)
	ran, err = c.run(batch(dev, host, []byte("abc")), okCheck)
	require.NoError(t, err)
	assert.True(t, ran)
	assert.Equal(t, "abc", string(host))
}

// A batch that does not finish fails with errCopierStuck, and the copier is
// not used again.
func TestCopierStuck(t *testing.T) {
	shortWaits(t)
	dev := make([]byte, 1024)
	f, c := newFake(t, time.Second, dev)
	f.stall = true
	ran, err := c.run(batch(dev, make([]byte, 3), []byte("abc")), okCheck)
	assert.True(t, ran)
	assert.ErrorIs(t, err, errCopierStuck)
	ran, err = c.run(batch(dev, make([]byte, 3), []byte("abc")), okCheck)
	assert.False(t, ran)
	assert.NoError(t, err)
}

// copier.ptx is copier.cu compiled by the nvcc that made it (CI installs
// nvcc 11.8): a stale PTX fails here. nvcc is the one scripts/cuda-env.sh
// finds, and the flags are those of the go:generate line in copier_ptx.go.
func TestCopierPTXCurrent(t *testing.T) {
	path, err := exec.Command("bash", "../../scripts/cuda-env.sh", "nvcc").Output()
	nvcc := strings.TrimSpace(string(path))
	if err != nil || nvcc == "" {
		t.Skip("no nvcc (scripts/cuda-env.sh found none): cannot rebuild copier.ptx")
	}
	ver, err := exec.Command(nvcc, "--version").Output()
	require.NoError(t, err)
	want := "release 11.8,"
	if !strings.Contains(string(ver), want) || !bytes.Contains(copierPTX, []byte(want)) {
		t.Skipf("copier.ptx is made with nvcc 11.8; this nvcc is another (%s)", strings.TrimSpace(string(ver)))
	}
	args := generateArgs(t)
	out := filepath.Join(t.TempDir(), "copier.ptx")
	for i, a := range args {
		if a == "-o" && i+1 < len(args) {
			args[i+1] = out
		}
	}
	b, err := exec.Command(nvcc, args...).CombinedOutput()
	require.NoError(t, err, "%s", b)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(got, copierPTX), "copier.ptx is stale: run go generate ./internal/emugpu")
}

// generateArgs returns nvcc's arguments from the go:generate line of
// copier_ptx.go.
func generateArgs(t *testing.T) []string {
	src, err := os.ReadFile("copier_ptx.go")
	require.NoError(t, err)
	for _, line := range strings.Split(string(src), "\n") {
		cmd, ok := strings.CutPrefix(line, "//go:generate sh -c \"nvcc ")
		if ok {
			return strings.Fields(strings.TrimSuffix(cmd, "\""))
		}
	}
	t.Fatal("copier_ptx.go has no go:generate line running nvcc")
	return nil
}

// The copier's idle time and life come from the environment in
// microseconds, at least 100 (an instance must live long enough to serve a
// batch), the defaults when unset or not a number.
func TestEnvMicros(t *testing.T) {
	const name = "GDAKI_EMU_COPIER_TEST_US"
	for _, tc := range []struct {
		v    string
		want uint64
	}{{"", 1_000_000}, {"x", 1_000_000}, {"-5", 1_000_000}, {"0", 100_000}, {"50", 100_000}, {"20000", 20_000_000}} {
		t.Setenv(name, tc.v)
		assert.Equal(t, tc.want, envMicros(name, 1000), "%q", tc.v)
	}
}
