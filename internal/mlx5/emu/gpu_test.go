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
	// cost, if set, makes every access cost what the model says (outside
	// mu, after the copy).
	cost *copyCost
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
	return b
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

func (g *fakeGPU) Contains(addr uintptr, n uint64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.find(addr, n)
	return ok
}

func (g *fakeGPU) Read(dst []byte, addr uintptr) error {
	if h := g.hook.Load(); h != nil {
		(*h)(false, addr, len(dst))
	}
	start := time.Now()
	g.mu.Lock()
	src, ok := g.find(addr, uint64(len(dst)))
	if !ok {
		g.mu.Unlock()
		return fmt.Errorf("fake GPU: read 0x%x+%d outside any allocation", addr, len(dst))
	}
	g.reads.Add(1)
	copy(dst, src)
	g.mu.Unlock()
	g.charge(start, len(dst))
	return nil
}

// charge pays the model's cost of one access of n bytes (the old seam: one
// synchronous copy and an owner lookup per access).
func (g *fakeGPU) charge(start time.Time, n int) {
	if c := g.cost; c != nil {
		c.calls.Add(1)
		c.ops.Add(1)
		c.bytes.Add(int64(n))
		c.charge(start, c.call+c.lookup, n, c.bw)
	}
}

func (g *fakeGPU) Write(addr uintptr, src []byte) error {
	if h := g.hook.Load(); h != nil {
		(*h)(true, addr, len(src))
	}
	start := time.Now()
	g.mu.Lock()
	dst, ok := g.find(addr, uint64(len(src)))
	if !ok {
		g.mu.Unlock()
		return fmt.Errorf("fake GPU: write 0x%x+%d outside any allocation", addr, len(src))
	}
	g.writes.Add(1)
	copy(dst, src)
	g.mu.Unlock()
	g.charge(start, len(src))
	return nil
}

// TestGPUMemorySeam puts rings, DBRs, CQs and data of both QPs in fake GPU
// memory: every byte the emulator touches goes through the seam.
func TestGPUMemorySeam(t *testing.T) {
	g := newFakeGPU()
	SetGPUMemory(g)
	defer SetGPUMemory(nil)
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
