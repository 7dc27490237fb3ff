package emu

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// fakeGPU is a GPUMemory backed by private host buffers that the emulator
// may only reach through Read and Write: each buffer gets a "GPU virtual
// address" far from any host mapping, so a direct access would fault.
type fakeGPU struct {
	mu     sync.Mutex
	bufs   [][]byte
	bases  []uintptr
	next   uintptr
	reads  atomic.Int64
	writes atomic.Int64
	// hook, if set, runs before every access (outside mu).
	hook atomic.Pointer[func(write bool, addr uintptr, n int)]
	// cost, if set, makes every batch cost what the model says (outside
	// mu, after the copies).
	cost *copyCost
	// calls counts Copy calls.
	calls atomic.Int64
	// fail, if set, decides whether a copy fails (outside mu).
	fail atomic.Pointer[func(o *DeviceCopy) error]
	// tear, if set, makes every copy into device memory land in pieces of
	// 8 bytes from the last to the first, calling tear (mu held) after
	// each: the worst order a DMA engine may write one copy's bytes in.
	tear func()
	// watches, if set, lets WatchSQ start fake send-queue watches
	// (watch_test.go); while it is nil WatchSQ fails, and every DBR in
	// this memory is read with batches of copies.
	watches atomic.Pointer[watchConfig]
}

func newFakeGPU() *fakeGPU { return &fakeGPU{next: 0x7f0000000000 ^ 0x0a0000000000} }

// alloc returns a buffer the test (the "kernel") reads and writes directly;
// the NIC knows it by va(b).
func (g *fakeGPU) alloc(t testing.TB, n int) []byte {
	b := hostMem(t, n)
	g.mu.Lock()
	g.bufs = append(g.bufs, b)
	g.bases = append(g.bases, g.next)
	g.next += uintptr(n+1<<20) &^ (1<<20 - 1)
	g.mu.Unlock()
	// Freed before it is unmapped (cleanups run last first): a late
	// access fails as one to freed device memory would, without a fault.
	t.Cleanup(func() { g.free(b) })
	return b
}

// free forgets the buffer b: no copy reaches it any more.
func (g *fakeGPU) free(b []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, buf := range g.bufs {
		if addrOf(buf) == addrOf(b) {
			g.bufs = append(g.bufs[:i], g.bufs[i+1:]...)
			g.bases = append(g.bases[:i], g.bases[i+1:]...)
			return
		}
	}
}

func (g *fakeGPU) va(b []byte) uintptr {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := addrOf(b)
	for i, buf := range g.bufs {
		if s := addrOf(buf); p >= s && p < s+uintptr(len(buf)) {
			return g.bases[i] + (p - s)
		}
	}
	panic("not a fake GPU buffer")
}

// find maps [addr, addr+n) to a buffer slice; mu held.
func (g *fakeGPU) find(addr uintptr, n uint64) ([]byte, bool) {
	for i, base := range g.bases {
		if addr >= base && uint64(addr-base)+n <= uint64(len(g.bufs[i])) {
			off := addr - base
			return g.bufs[i][off : uint64(off)+n], true
		}
	}
	return nil, false
}

// fakeRange is the fake's DeviceRange.
type fakeRange struct {
	g    *fakeGPU
	base uintptr
}

func (r *fakeRange) Base() uintptr { return r.base }

func (g *fakeGPU) Claim(addr uintptr, n uint64) (DeviceRange, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.find(addr, n); !ok {
		return nil, false
	}
	return &fakeRange{g: g, base: addr}, true
}

// Copy runs the copies in order under the fake's lock (one at a time, as
// one stream), then charges the model's cost of the whole batch.
func (g *fakeGPU) Copy(ops []DeviceCopy) error {
	start := time.Now()
	g.calls.Add(1)
	var bytes, dtod int
	for i := range ops {
		o := &ops[i]
		var err error
		if f := g.fail.Load(); f != nil {
			err = (*f)(o)
		}
		if err == nil {
			err = g.copyOne(o)
		}
		if err != nil {
			return fmt.Errorf("fake GPU: copy %d of %d (%v): %w", i+1, len(ops), o.Kind, err)
		}
		if o.Kind == CopyDeviceToDevice {
			dtod += int(o.Len)
		} else {
			bytes += len(o.Host)
		}
	}
	if c := g.cost; c != nil {
		c.calls.Add(1)
		c.ops.Add(int64(len(ops)))
		c.bytes.Add(int64(bytes + dtod))
		fixed := c.call + time.Duration(len(ops)-1)*c.op
		c.charge(start, fixed+time.Duration(float64(dtod)/c.dtod*1e9), bytes, c.bw)
	}
	return nil
}

func (g *fakeGPU) copyOne(o *DeviceCopy) error {
	at := func(r DeviceRange, off uint64, n int) ([]byte, error) {
		f, ok := r.(*fakeRange)
		if !ok || f.g != g {
			return nil, fmt.Errorf("a range this fake did not claim")
		}
		addr := f.base + uintptr(off)
		b, ok := g.find(addr, uint64(n))
		if !ok {
			return nil, fmt.Errorf("0x%x+%d outside any allocation", addr, n)
		}
		return b, nil
	}
	hook := func(write bool, r DeviceRange, off uint64, n int) {
		if h := g.hook.Load(); h != nil {
			(*h)(write, r.Base()+uintptr(off), n)
		}
	}
	switch o.Kind {
	case CopyToHost:
		hook(false, o.Src, o.SrcOff, len(o.Host))
		g.mu.Lock()
		defer g.mu.Unlock()
		src, err := at(o.Src, o.SrcOff, len(o.Host))
		if err != nil {
			return err
		}
		g.reads.Add(1)
		copy(o.Host, src)
	case CopyToDevice:
		hook(true, o.Dst, o.DstOff, len(o.Host))
		g.mu.Lock()
		defer g.mu.Unlock()
		dst, err := at(o.Dst, o.DstOff, len(o.Host))
		if err != nil {
			return err
		}
		g.writes.Add(1)
		if g.tear == nil {
			copy(dst, o.Host)
			break
		}
		for end := len(dst); end > 0; end -= 8 {
			from := max(end-8, 0)
			copy(dst[from:end], o.Host[from:end])
			g.tear()
		}
	case CopyDeviceToDevice:
		hook(false, o.Src, o.SrcOff, int(o.Len))
		hook(true, o.Dst, o.DstOff, int(o.Len))
		g.mu.Lock()
		defer g.mu.Unlock()
		src, err := at(o.Src, o.SrcOff, int(o.Len))
		if err != nil {
			return err
		}
		dst, err := at(o.Dst, o.DstOff, int(o.Len))
		if err != nil {
			return err
		}
		g.reads.Add(1)
		g.writes.Add(1)
		copy(dst, src)
	default:
		return fmt.Errorf("unknown kind %v", o.Kind)
	}
	return nil
}

// TestGPUMemorySeam puts rings, DBRs, CQs and data of both QPs in fake GPU
// memory: every byte the emulator touches goes through the seam.
func TestGPUMemorySeam(t *testing.T) {
	g := useGPU(t, newFakeGPU())
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{gpu: g, rq: true, logRQ: 2}, qpOpts{gpu: g, rq: true, logRQ: 2})
	r0, w0 := g.reads.Load(), g.writes.Load()

	x.lock()
	fill(x.data[0:9000], 3)
	binary.LittleEndian.PutUint64(y.data[20000:], 5)
	x.unlock()
	i1 := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(100), x.sge(0, 9000)))
	expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, i1)
	i2 := x.post(mlx5.NewRDMARead(signaled, y.raddr(100), x.sge(10000, 9000)))
	expectOK(t, x.mustPoll(), mlx5.WQEOpRDMARead, i2)
	i3 := x.post(mlx5.NewAtomicFA(signaled, y.raddr(20000), 10, x.sge(20008, 8)))
	expectOK(t, x.mustPoll(), mlx5.WQEOpAtomicFA, i3)
	y.postRecv(y.va(30000), 64)
	x.post(mlx5.NewSendInline(signaled, []byte("via the seam")))
	x.mustPoll()
	if c := y.mustPoll(); c.Opcode != mlx5.CQERespSend || c.ByteCnt != 12 {
		t.Fatalf("responder CQE %v", c.Opcode)
	}
	x.lock()
	defer x.unlock()
	if !bytes.Equal(y.data[100:9100], x.data[0:9000]) || !bytes.Equal(x.data[10000:19000], x.data[0:9000]) {
		t.Fatal("data moved through the seam differs")
	}
	if binary.LittleEndian.Uint64(y.data[20000:]) != 15 || binary.LittleEndian.Uint64(x.data[20008:]) != 5 {
		t.Fatal("atomic through the seam")
	}
	if string(y.data[30000:30012]) != "via the seam" {
		t.Fatal("SEND through the seam")
	}
	if g.reads.Load() == r0 || g.writes.Load() == w0 {
		t.Fatal("the seam was not used")
	}
}

// useGPU puts g behind the GPU memory seam for the rest of the test (or
// benchmark, or fuzz target) and returns it; the seam is cleared after the
// NICs the test makes later have closed.
func useGPU(t testing.TB, g *fakeGPU) *fakeGPU {
	SetGPUMemory(g)
	t.Cleanup(func() { SetGPUMemory(nil) })
	return g
}
