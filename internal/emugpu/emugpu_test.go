package emugpu

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/gpuskip"
	"github.com/gdaki/gpunetio/internal/mlx5/emu"
)

func TestFits(t *testing.T) {
	tests := []struct {
		start, size, addr, n uint64
		want                 bool
	}{
		{0x1000, 0x100, 0x1000, 0x100, true},
		{0x1000, 0x100, 0x1080, 0x80, true},
		{0x1000, 0x100, 0x1080, 0x81, false},
		{0x1000, 0x100, 0xfff, 1, false},
		{0x1000, 0x100, 0x1100, 0, true},
		{0x1000, 0x100, 0x1101, 0, false},
		{0x1000, 0x100, 0x1000, ^uint64(0), false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, fits(tc.start, tc.size, tc.addr, tc.n), "%+v", tc)
	}
}

// A context that is not usable (nil) claims nothing, and install/uninstall
// keep the count right without a driver.
func TestInstallWithoutDriver(t *testing.T) {
	before := Installed()
	un1 := Install(nil)
	un2 := Install(nil)
	assert.Equal(t, before+2, Installed())
	a := installed
	require.NotNil(t, a)
	_, ok := a.Claim(0x1000, 8)
	assert.False(t, ok)
	err := a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToHost, Src: foreign{}, Host: make([]byte, 8)}})
	assert.ErrorContains(t, err, "a range this adapter did not claim")
	// A range of a context that is gone fails its copies, naming the copy.
	r := &devRange{d: &device{closed: true}, base: 0x1000}
	err = a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToDevice, Dst: r, Host: []byte{1}}})
	assert.ErrorIs(t, err, errUninstalled)
	r = &devRange{d: &device{}, base: 0x1000}
	err = a.Copy([]emu.DeviceCopy{{Kind: emu.CopyDeviceToDevice, Dst: r, Src: foreign{}, Len: 8}})
	assert.ErrorContains(t, err, "copy 1 of 1 (device to device)")
	_, err = a.PinHost(nil)
	assert.Error(t, err, "an empty range")
	_, err = a.PinHost(make([]byte, 4096))
	assert.ErrorContains(t, err, "no CUDA context", "nil contexts cannot pin")
	un1()
	un1()
	assert.Equal(t, before+1, Installed())
	un2()
	assert.Equal(t, before, Installed())
}

func TestGPUAdapter(t *testing.T) {
	if err := cuda.Init(); err != nil {
		if errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, cuda.ErrNoDevice) {
			gpuskip.Skipf(t, "no CUDA driver: %v", err)
		}
		require.NoError(t, err)
	}
	d, err := cuda.DeviceGet(0)
	require.NoError(t, err)
	c, err := d.PrimaryContext()
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Release()) }()
	p, err := c.MemAlloc(4096)
	require.NoError(t, err)
	defer c.MemFree(p)
	un := Install(c)
	defer un()
	a := installed
	r, ok := a.Claim(uintptr(p), 4096)
	require.True(t, ok)
	_, ok = a.Claim(uintptr(p)+100, 8)
	assert.True(t, ok)
	_, ok = a.Claim(uintptr(p)+4000, 200)
	assert.False(t, ok)
	// One batch: write, copy within the allocation, read both back.
	got, moved := make([]byte, 9), make([]byte, 9)
	require.NoError(t, a.Copy([]emu.DeviceCopy{
		{Kind: emu.CopyToDevice, Dst: r, DstOff: 16, Host: []byte("gpu bytes")},
		{Kind: emu.CopyDeviceToDevice, Dst: r, DstOff: 1024, Src: r, SrcOff: 16, Len: 9},
		{Kind: emu.CopyToHost, Src: r, SrcOff: 16, Host: got},
		{Kind: emu.CopyToHost, Src: r, SrcOff: 1024, Host: moved},
	}))
	assert.Equal(t, "gpu bytes", string(got))
	assert.Equal(t, "gpu bytes", string(moved))
	// A batch larger than the largest staging buffer runs in pieces.
	const bigLen = maxStage + maxStage/2
	q, err := c.MemAlloc(bigLen)
	require.NoError(t, err)
	defer c.MemFree(q)
	rq, ok := a.Claim(uintptr(q), bigLen)
	require.True(t, ok)
	big := make([]byte, bigLen)
	for i := range big {
		big[i] = byte(i * 7)
	}
	back := make([]byte, bigLen)
	require.NoError(t, a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToDevice, Dst: rq, Host: big}, {Kind: emu.CopyToHost, Src: rq, Host: back}}))
	assert.Equal(t, big, back)

	// Pinned host memory is copied to and from without the staging buffer.
	hm, err := syscall.Mmap(-1, 0, 1<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer syscall.Munmap(hm)
	unpin, err := a.PinHost(hm)
	require.NoError(t, err)
	assert.True(t, a.isPinned(hm[100:200]))
	assert.False(t, a.isPinned(big[:10]))
	copy(hm, big[:1<<19])
	require.NoError(t, a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToDevice, Dst: rq, Host: hm[:1<<19]}, {Kind: emu.CopyToHost, Src: rq, Host: hm[1<<19:]}}))
	assert.Equal(t, big[:1<<19], hm[1<<19:])
	unpin()
	unpin()
	assert.False(t, a.isPinned(hm[100:200]))

	// A range the program registered with CUDA itself is taken as pinned
	// and left registered: the program's own unregistration still works.
	require.NoError(t, c.MemHostRegister(unsafe.Pointer(&hm[0]), uintptr(len(hm)), cuda.HostRegisterPortable))
	unpin, err = a.PinHost(hm)
	require.NoError(t, err, "a range registered by the program")
	assert.True(t, a.isPinned(hm[100:200]))
	copy(hm, big[1<<19:1<<20])
	require.NoError(t, a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToDevice, Dst: rq, Host: hm[:1<<19]}, {Kind: emu.CopyToHost, Src: rq, Host: hm[1<<19:]}}))
	assert.Equal(t, big[1<<19:1<<20], hm[1<<19:])
	unpin()
	assert.False(t, a.isPinned(hm[100:200]))
	assert.NoError(t, c.MemHostUnregister(unsafe.Pointer(&hm[0])), "the adapter unregistered the program's registration")
}

// gpuSetup installs GPU 0's primary context in the adapter and claims a
// MiB of device memory in it; all of it goes at the end of the test. It
// skips (through gpuskip) without a CUDA driver.
func gpuSetup(t testing.TB) (*cuda.Context, *adapter, emu.DeviceRange) {
	t.Helper()
	if err := cuda.Init(); err != nil {
		if errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, cuda.ErrNoDevice) {
			gpuskip.Skipf(t, "no CUDA driver: %v", err)
		}
		require.NoError(t, err)
	}
	d, err := cuda.DeviceGet(0)
	require.NoError(t, err)
	c, err := d.PrimaryContext()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Release()) })
	p, err := c.MemAlloc(1 << 20)
	require.NoError(t, err)
	t.Cleanup(func() { c.MemFree(p) })
	t.Cleanup(Install(c))
	r, ok := installed.Claim(uintptr(p), 1<<20)
	require.True(t, ok)
	return c, installed, r
}

// foreign is a DeviceRange the adapter did not make.
type foreign struct{}

func (foreign) Base() uintptr { return 0x1000 }

// The copier kernel on a real GPU: short batches run on it (CopyStats),
// byte for byte; a freed range fails its batch with an error and leaves the
// context usable; a context synchronization waits for the running copier
// at most its life; the copy engines still take large batches.
func TestGPUCopier(t *testing.T) {
	if !copierEnabled {
		t.Skip("GDAKI_EMU_COPIER=0")
	}
	c, a, r := gpuSetup(t)
	s0 := CopyStats()
	// Unaligned, word-aligned and 16-byte-aligned copies of every kind.
	for _, tc := range []struct{ off, n int }{{3, 5}, {16, 64}, {100, 4096}, {4, 12}, {0, 16 << 10}} {
		in := make([]byte, tc.n)
		for i := range in {
			in[i] = byte(i*13 + tc.off)
		}
		got, moved := make([]byte, tc.n), make([]byte, tc.n)
		err := a.Copy([]emu.DeviceCopy{
			{Kind: emu.CopyToDevice, Dst: r, DstOff: uint64(tc.off), Host: in},
			{Kind: emu.CopyDeviceToDevice, Dst: r, DstOff: uint64(tc.off + 512<<10), Src: r, SrcOff: uint64(tc.off), Len: uint64(tc.n)},
			{Kind: emu.CopyToHost, Src: r, SrcOff: uint64(tc.off + 512<<10), Host: moved},
			{Kind: emu.CopyToHost, Src: r, SrcOff: uint64(tc.off), Host: got},
		})
		require.NoError(t, err, "%+v", tc)
		assert.Equal(t, in, got, "%+v", tc)
		assert.Equal(t, in, moved, "%+v", tc)
	}
	s1 := CopyStats()
	dev := a.devs[len(a.devs)-1]
	require.NoError(t, dev.cpErr)
	assert.Equal(t, s0.CopierBatches+4, s1.CopierBatches, "small batches ran on the copier")
	assert.Equal(t, s0.EngineBatches+1, s1.EngineBatches, "the 16 KiB case moves 64 KiB: copy engines")

	// Batches whose descriptors all come with the posted word (up to
	// fastDesc) and batches that need a second read for them.
	for _, n := range []int{1, fastDesc, fastDesc + 1, 40} {
		var w, rd []emu.DeviceCopy
		for k := 0; k < n; k++ {
			in := make([]byte, 8+k)
			for i := range in {
				in[i] = byte(n + k*7 + i)
			}
			w = append(w, emu.DeviceCopy{Kind: emu.CopyToDevice, Dst: r, DstOff: uint64(256<<10 + 64*k), Host: in})
			rd = append(rd, emu.DeviceCopy{Kind: emu.CopyToHost, Src: r, SrcOff: uint64(256<<10 + 64*k), Host: make([]byte, len(in))})
		}
		before := CopyStats()
		require.NoError(t, a.Copy(w), "%d descriptors", n)
		require.NoError(t, a.Copy(rd), "%d descriptors", n)
		assert.Equal(t, before.CopierBatches+2, CopyStats().CopierBatches, "%d descriptors: on the copier", n)
		for k := range w {
			assert.Equal(t, w[k].Host, rd[k].Host, "%d descriptors: copy %d", n, k)
		}
	}

	// A context synchronization returns although the copier is running.
	start := time.Now()
	require.NoError(t, c.Synchronize())
	assert.Less(t, time.Since(start), 100*time.Millisecond)

	// Freed memory: the batch fails with an error, the context lives on.
	q, err := c.MemAlloc(4096)
	require.NoError(t, err)
	rq, ok := a.Claim(uintptr(q), 4096)
	require.True(t, ok)
	require.NoError(t, c.MemFree(q))
	err = a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToHost, Src: rq, Host: make([]byte, 8)}})
	assert.Error(t, err)
	got := make([]byte, 3)
	require.NoError(t, a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToDevice, Dst: r, Host: []byte("ok!")}, {Kind: emu.CopyToHost, Src: r, Host: got}}))
	assert.Equal(t, "ok!", string(got))
	require.NoError(t, c.Synchronize())
}

// Small writes travel inline in the copier's look (copier.go): every length
// the look holds, at every alignment, lands byte for byte and nothing past
// it; a CQE's shape (body, then its last byte ordered after) goes inline;
// an inline word that shows another batch's number is waited for, not
// taken (the slow path's guard).
func TestGPUCopierInline(t *testing.T) {
	if !copierEnabled || !inlineOn {
		t.Skip("GDAKI_EMU_COPIER=0 or GDAKI_EMU_COPIER_INLINE=0")
	}
	_, a, r := gpuSetup(t)
	s0 := CopyStats()
	batches, inline := 0, 0
	for n := 1; n <= 4*maxInline; n++ {
		for off := 0; off < 4; off++ {
			in := make([]byte, n)
			for i := range in {
				in[i] = byte(i*31 + n + off + 1)
			}
			at := uint64(128<<10 + 256*(n*4+off))
			got := make([]byte, n+2)
			require.NoError(t, a.Copy([]emu.DeviceCopy{
				{Kind: emu.CopyToDevice, Dst: r, DstOff: at - 1, Host: make([]byte, n+2)},
				{Kind: emu.CopyToDevice, Dst: r, DstOff: at, Host: in},
			}), "%d bytes at +%d", n, off)
			require.NoError(t, a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToHost, Src: r, SrcOff: at - 1, Host: got}}))
			assert.Equal(t, in, got[1:n+1], "%d bytes at +%d", n, off)
			assert.Zero(t, got[0], "%d bytes at +%d: the byte before", n, off)
			assert.Zero(t, got[n+1], "%d bytes at +%d: the byte after", n, off)
			batches += 2
			if descWord+3*2+inlineWords(n+2)+inlineWords(n) <= lookWords {
				inline++
			}
		}
	}
	s1 := CopyStats()
	assert.Equal(t, s0.CopierBatches+uint64(batches), s1.CopierBatches, "on the copier")
	assert.Equal(t, s0.InlineBatches+uint64(inline), s1.InlineBatches, "the writes that fit travelled inline")
	assert.NotZero(t, inline)

	body := make([]byte, 63)
	for i := range body {
		body[i] = byte(200 - i)
	}
	for round := 0; round < 20; round++ {
		own := []byte{byte(round)}
		cqe := []emu.DeviceCopy{
			{Kind: emu.CopyToDevice, Dst: r, DstOff: 64 << 10, Host: body},
			{Kind: emu.CopyToDevice, Dst: r, DstOff: 64<<10 + 63, Host: own},
		}
		if round == 10 {
			staleInline(t, 300*time.Microsecond)
		}
		before := CopyStats().InlineBatches
		require.NoError(t, a.Copy(cqe), "round %d", round)
		assert.Equal(t, before+1, CopyStats().InlineBatches, "round %d: inline", round)
		got := make([]byte, 64)
		require.NoError(t, a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToHost, Src: r, SrcOff: 64 << 10, Host: got}}))
		require.Equal(t, append(append([]byte(nil), body...), own...), got, "round %d", round)
	}
}

// The copies of one batch run in order on the copier, as Copy promises,
// also where a later copy's threads read what other threads of the block
// wrote in an earlier one: 16-byte chunks written, then read back byte by
// byte from an odd offset. Without the wait between them (descAfter), a
// warp that finished its chunk of the first copy reads bytes another warp,
// still waiting for its load over PCIe, has not stored yet.
func TestGPUCopierOrder(t *testing.T) {
	if !copierEnabled {
		t.Skip("GDAKI_EMU_COPIER=0")
	}
	_, a, r := gpuSetup(t)
	s0 := CopyStats()
	const n = 4096
	for round := 0; round < 50; round++ {
		in := make([]byte, n)
		for i := range in {
			in[i] = byte(i*7 + round*31 + 1)
		}
		got := make([]byte, n-1)
		require.NoError(t, a.Copy([]emu.DeviceCopy{
			{Kind: emu.CopyToDevice, Dst: r, DstOff: 256 << 10, Host: in},
			{Kind: emu.CopyDeviceToDevice, Src: r, SrcOff: 256<<10 + 1, Dst: r, DstOff: 384<<10 + 1, Len: n - 1},
			{Kind: emu.CopyToHost, Src: r, SrcOff: 384<<10 + 1, Host: got},
		}), "round %d", round)
		require.Equal(t, in[1:], got, "round %d", round)
	}
	assert.Equal(t, s0.CopierBatches+50, CopyStats().CopierBatches, "the batches ran on a copier")
}

// The side copier takes a batch that comes while the first copier (or the
// copy engines) runs another, here while the test holds the device's lock:
// the first such batch finds it not running, launches it and waits for the
// lock; once it runs, the next one completes without the lock.
func TestGPUSideCopier(t *testing.T) {
	if !copierEnabled || !sideCopiers {
		t.Skip("GDAKI_EMU_COPIER=0 or GDAKI_EMU_SIDE_COPIER=0")
	}
	_, a, r := gpuSetup(t)
	require.NoError(t, a.Copy([]emu.DeviceCopy{{Kind: emu.CopyToDevice, Dst: r, Host: []byte("setup")}}))
	d := r.(*devRange).d
	d.side.mu.Lock()
	haveSide := d.side.cp != nil
	d.side.mu.Unlock()
	require.True(t, haveSide, "the side copier was set up")

	copyAsync := func(off uint64, in, out []byte) chan error {
		done := make(chan error, 1)
		go func() {
			done <- a.Copy([]emu.DeviceCopy{
				{Kind: emu.CopyToDevice, Dst: r, DstOff: off, Host: in},
				{Kind: emu.CopyToHost, Src: r, SrcOff: off, Host: out},
			})
		}()
		return done
	}
	// Not running yet: the batch launches it and waits for the lock.
	d.mu.Lock()
	out := make([]byte, 6)
	done := copyAsync(1024, []byte("first!"), out)
	select {
	case err := <-done:
		d.mu.Unlock()
		t.Fatalf("a batch completed on a side copier that was not running: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	d.mu.Unlock()
	require.NoError(t, <-done)
	assert.Equal(t, "first!", string(out))

	// Running (its instance idles out after idleNS; a batch that finds it
	// ended launches it again): a batch completes while the lock is held.
	s0 := CopyStats()
	ok := false
	for try := 0; try < 20 && !ok; try++ {
		// Look without sleeping: an instance with nothing to do ends
		// idleNS after it began, so it is caught running only by a look
		// soon after its start.
		running := false
		for deadline := time.Now().Add(time.Second); !running && time.Now().Before(deadline); {
			d.side.mu.Lock()
			running = d.side.cp.ready()
			d.side.mu.Unlock()
			runtime.Gosched()
		}
		if !running {
			continue
		}
		d.mu.Lock()
		in := []byte(fmt.Sprintf("side %02d", try))
		out := make([]byte, len(in))
		done := copyAsync(2048, in, out)
		select {
		case err := <-done:
			d.mu.Unlock()
			require.NoError(t, err)
			assert.Equal(t, in, out)
			ok = true
		case <-time.After(100 * time.Millisecond):
			d.mu.Unlock() // it ended between the look and the batch
			require.NoError(t, <-done)
		}
	}
	if !ok {
		d.side.mu.Lock()
		c := d.side.cp
		t.Errorf("no batch ran on the side copier while the lock was held: epoch %d live %v pending %v started %d exited %d done %d seq %d",
			c.epoch, c.live, c.pending, c.load(ctlStarted), c.load(ctlExited), c.load(ctlDone), c.seq)
		d.side.mu.Unlock()
		t.FailNow()
	}
	assert.GreaterOrEqual(t, CopyStats().SideBatches, s0.SideBatches+1)
}

// BenchmarkGPUBatch times the emulator's typical batches on the copier and
// on the copy engines (GDAKI_EMU_COPIER=0 for the second).
func BenchmarkGPUBatch(b *testing.B) {
	_, a, r := gpuSetup(b)
	dbr, wqe, payload := make([]byte, 4), make([]byte, 64), []byte("8 bytes!")
	ahead, cqes := make([]byte, 32<<10), make([]byte, 16<<10)
	for _, bc := range []struct {
		name string
		ops  []emu.DeviceCopy
	}{
		{"dbr+wqe", []emu.DeviceCopy{{Kind: emu.CopyToHost, Src: r, SrcOff: 4, Host: dbr}, {Kind: emu.CopyToHost, Src: r, SrcOff: 4096, Host: wqe}}},
		{"read64", []emu.DeviceCopy{{Kind: emu.CopyToHost, Src: r, SrcOff: 4096, Host: wqe}}},
		{"write8", []emu.DeviceCopy{{Kind: emu.CopyToDevice, Dst: r, DstOff: 8192, Host: payload}}},
		{"dtod8", []emu.DeviceCopy{{Kind: emu.CopyDeviceToDevice, Src: r, SrcOff: 8192, Dst: r, DstOff: 16384, Len: 8}}},
		// put_bw's read-ahead of a 512-message burst; a CQ flush of 256 CQEs.
		{"read32k", []emu.DeviceCopy{{Kind: emu.CopyToHost, Src: r, SrcOff: 64 << 10, Host: ahead}}},
		{"write16k", []emu.DeviceCopy{{Kind: emu.CopyToDevice, Dst: r, DstOff: 128 << 10, Host: cqes}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := a.Copy(bc.ops); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
