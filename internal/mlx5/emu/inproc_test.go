package emu

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// Tests of the one-process path for large payloads in device memory
// (inproc.go): frames carried by reference and landed with one batch of
// copies, and the page-locking of host MRs for them.

// refGPU is a fake GPU that can page-lock host memory (HostPinner) and
// sorts the copies that read the test's source range: bytes landed in the
// destination range (by reference) or read anywhere else (read ahead,
// gathered), device-to-host copies into pinned host memory, and device to
// device copies.
type refGPU struct {
	*fakeGPU

	mu       sync.Mutex
	src, dst [2]uintptr // the payload source and destination ranges (watchRange)
	pinned   [][2]uintptr
	pinErr   error         // PinHost fails with it
	pinGate  chan struct{} // PinHost waits for it to close, when set
	pinCalls atomic.Int64
	unpins   atomic.Int64

	landed, elsewhere, direct, dtod atomic.Int64 // bytes
}

func newRefGPU(t testing.TB) *refGPU {
	g := &refGPU{fakeGPU: newFakeGPU()}
	SetGPUMemory(g)
	t.Cleanup(func() { SetGPUMemory(nil) })
	return g
}

func (g *refGPU) PinHost(b []byte) (func(), error) {
	g.pinCalls.Add(1)
	g.mu.Lock()
	gate, err := g.pinGate, g.pinErr
	g.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if err != nil {
		return nil, err
	}
	r := [2]uintptr{addrOf(b), addrOf(b) + uintptr(len(b))}
	g.mu.Lock()
	g.pinned = append(g.pinned, r)
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.unpins.Add(1)
			g.mu.Lock()
			defer g.mu.Unlock()
			for i, p := range g.pinned {
				if p == r {
					g.pinned = append(g.pinned[:i], g.pinned[i+1:]...)
					return
				}
			}
		})
	}, nil
}

func (g *refGPU) isPinned(b []byte) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.pinned {
		if addrOf(b) >= p[0] && addrOf(b)+uintptr(len(b)) <= p[1] {
			return true
		}
	}
	return false
}

func (g *refGPU) pinnedRanges() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pinned)
}

func (g *refGPU) Copy(ops []DeviceCopy) error {
	g.mu.Lock()
	src, dst := g.src, g.dst
	g.mu.Unlock()
	for i := range ops {
		o := &ops[i]
		switch o.Kind {
		case CopyToHost:
			a := o.Src.Base() + uintptr(o.SrcOff)
			if a < src[0] || a >= src[1] {
				continue
			}
			if h := addrOf(o.Host); h >= dst[0] && h < dst[1] {
				g.landed.Add(int64(len(o.Host)))
			} else {
				g.elsewhere.Add(int64(len(o.Host)))
			}
			if g.isPinned(o.Host) {
				g.direct.Add(int64(len(o.Host)))
			}
		case CopyDeviceToDevice:
			g.dtod.Add(int64(o.Len))
		}
	}
	return g.fakeGPU.Copy(ops)
}

// watchRange points g's sorting at the payload source and destination.
func (g *refGPU) watchRange(x, y *endpoint) {
	s, d := x.addr(x.data), y.addr(y.data)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.src = [2]uintptr{s, s + uintptr(len(x.data))}
	g.dst = [2]uintptr{addrOf(y.data), addrOf(y.data) + uintptr(len(y.data))}
	if y.o.gpu != nil {
		g.dst = [2]uintptr{d, d + uintptr(len(y.data))}
	}
}

// noise fills b with bytes that do not repeat with any short period, so
// that a piece landed at a wrong offset shows.
func noise(b []byte, seed uint32) {
	v := seed*2654435761 + 1
	for i := range b {
		v ^= v << 13
		v ^= v >> 17
		v ^= v << 5
		b[i] = byte(v)
	}
}

// refPair is two NICs of this process with x's buffers in the fake GPU
// memory of g and y's in host memory (or g's, devDst).
func refPair(t *testing.T, g *refGPU, devDst bool, oy qpOpts) (*endpoint, *endpoint) {
	t.Helper()
	a, b := twoNICs(t)
	const dataLen = 8 << 20
	oy.mtu, oy.dataLen = mlx5.MTU4096, dataLen
	if devDst {
		oy.gpu = g.fakeGPU
	}
	x, y := pair(t, a, b, qpOpts{gpu: g.fakeGPU, mtu: mlx5.MTU4096, dataLen: dataLen, rnrRetry: 7}, oy)
	g.watchRange(x, y)
	return x, y
}

// expectErr fails unless c is an error CQE with syndrome syn.
func expectErr(t *testing.T, c mlx5.CQE, syn mlx5.Syndrome) {
	t.Helper()
	if c.Opcode != mlx5.CQEReqErr || c.Syndrome != syn {
		t.Fatalf("CQE %v %v, want REQ_ERR %v", c.Opcode, c.Syndrome, syn)
	}
}

// A WRITE of 256 KiB or more from device memory to a NIC of this process
// goes by reference, frame by frame: every byte is copied once, from the
// source straight into its destination (host memory, or device memory of
// the same GPU: device to device), never read ahead; a last frame under
// 256 KiB goes by value, and so does a message posted behind a small one
// only from where it starts. With GDAKI_EMU_BYREF=0 the same WRITEs take
// the read-ahead path and land the same bytes.
func TestByRefWrite(t *testing.T) {
	for _, devDst := range []bool{false, true} {
		name := map[bool]string{false: "host", true: "device"}[devDst]
		t.Run(name, func(t *testing.T) {
			g := newRefGPU(t)
			x, y := refPair(t, g, devDst, qpOpts{})
			for _, tc := range []struct {
				name        string
				src, dst, n int
				frames      uint64
				small       bool // a small WRITE posted first, with the same doorbell
			}{
				{"256KiB", 0, 0, inPlaceMin, 1, false},
				{"1MiB odd", 4097, 1<<20 + 5, 1 << 20, 1, false},
				{"3MiB+5", 13, 2<<20 + 1, 3<<20 + 5, 3, false},
				{"behind a small one", 8, 64, 1 << 20, 1, true},
				{"under 256KiB", 100, 200, inPlaceMin - 1, 0, false},
			} {
				t.Run(tc.name, func(t *testing.T) {
					frames, landed, dtod, elsewhere := byRefFrames.Load(), g.landed.Load(), g.dtod.Load(), g.elsewhere.Load()
					x.lock()
					noise(x.data[tc.src:tc.src+tc.n], uint32(tc.n))
					noise(x.data[6<<20:6<<20+100], 7)
					x.unlock()
					var idx []uint16
					if tc.small {
						idx = append(idx, x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(7<<20), x.sge(6<<20, 100))))
					}
					idx = append(idx, x.post(mlx5.NewRDMAWrite(signaled, y.raddr(tc.dst), x.sge(tc.src, uint32(tc.n)))))
					for _, i := range idx {
						expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, i)
					}
					x.lock() // y's memory is in host memory or behind the same lock
					same := bytes.Equal(y.data[tc.dst:tc.dst+tc.n], x.data[tc.src:tc.src+tc.n]) &&
						(!tc.small || bytes.Equal(y.data[7<<20:7<<20+100], x.data[6<<20:6<<20+100]))
					x.unlock()
					if !same {
						t.Fatal("the landing differs")
					}
					if got := byRefFrames.Load() - frames; got != tc.frames {
						t.Fatalf("%d frames by reference, want %d", got, tc.frames)
					}
					byRef := int64(tc.frames) << 20
					if tc.n < 1<<20 {
						byRef = int64(tc.n) * int64(tc.frames)
					}
					moved := g.landed.Load() - landed
					if devDst {
						moved = g.dtod.Load() - dtod
					}
					if moved < byRef {
						t.Fatalf("%d bytes moved straight to the destination, want at least %d", moved, byRef)
					}
					if e := g.elsewhere.Load() - elsewhere; e+byRef > int64(tc.n)+200 {
						t.Fatalf("%d payload bytes read somewhere else too (read ahead)", e)
					}
				})
			}
			t.Run("off", func(t *testing.T) {
				byRefOn.Store(false)
				defer byRefOn.Store(true)
				frames := byRefFrames.Load()
				x.lock()
				noise(x.data[:2<<20], 99)
				x.unlock()
				i := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(3<<20), x.sge(0, 2<<20)))
				expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, i)
				x.lock()
				same := bytes.Equal(y.data[3<<20:5<<20], x.data[:2<<20])
				x.unlock()
				if !same || byRefFrames.Load() != frames {
					t.Fatalf("by reference off: landing same %v, %d frames by reference", same, byRefFrames.Load()-frames)
				}
			})
		})
	}
}

// postRecvSegs posts a receive WQE with the given data segments of e's MR.
func (e *endpoint) postRecvSegs(segs ...[2]int) {
	e.lock()
	defer e.unlock()
	slot := e.rq[int(e.rqHead&(1<<e.o.logRQ-1))*64:][:64]
	for i, s := range segs {
		mlx5.DataSeg{ByteCount: uint32(s[1]), LKey: e.mr.LKey(), Addr: e.va(s[0])}.Put(slot[16*i:])
	}
	if len(segs) < 4 {
		mlx5.DataSeg{LKey: mlx5.InvalidLKey}.Put(slot[16*len(segs):])
	}
	e.rqHead++
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&e.qpDBR[0])), mlx5.BE32Native(e.rqHead&0xffff))
}

// A SEND gathered from two device buffers lands by reference across the
// two buffers of its receive WQE, the pieces cut where either side's
// buffers end; both frames go by reference.
func TestByRefSend(t *testing.T) {
	g := newRefGPU(t)
	x, y := refPair(t, g, false, qpOpts{rq: true, logRQ: 2})
	const s1, s2 = 800 << 10, 736 << 10 // one frame of 1 MiB across both, one of 512 KiB
	x.lock()
	noise(x.data[:s1], 1)
	noise(x.data[2<<20:2<<20+s2], 2)
	want := append(append([]byte(nil), x.data[:s1]...), x.data[2<<20:2<<20+s2]...)
	x.unlock()
	y.postRecvSegs([2]int{100, 700 << 10}, [2]int{4 << 20, 1 << 20})
	frames := byRefFrames.Load()
	i := x.post(mlx5.NewSend(signaled, x.sge(0, s1), x.sge(2<<20, s2)))
	expectOK(t, x.mustPoll(), mlx5.WQEOpSend, i)
	c := y.mustPoll()
	if c.Opcode != mlx5.CQERespSend || c.ByteCnt != s1+s2 {
		t.Fatalf("receive CQE %v, %d bytes", c.Opcode, c.ByteCnt)
	}
	got := append(append([]byte(nil), y.data[100:100+700<<10]...), y.data[4<<20:4<<20+s1+s2-700<<10]...)
	if !bytes.Equal(got, want) {
		t.Fatal("the SEND landed differently")
	}
	if n := byRefFrames.Load() - frames; n != 2 {
		t.Fatalf("%d frames by reference, want 2", n)
	}
}

// blockLanding makes the first copy that reads n bytes at src of g wait
// until release is closed; landing is closed when it starts waiting.
func blockLanding(t *testing.T, g *refGPU, src uintptr, n int) (landing, release chan struct{}) {
	landing, release = make(chan struct{}), make(chan struct{})
	var once atomic.Bool
	h := func(write bool, addr uintptr, k int) {
		if !write && addr == src && k == n && once.CompareAndSwap(false, true) {
			close(landing)
			<-release
		}
	}
	g.hook.Store(&h)
	t.Cleanup(func() { g.hook.Store(nil) })
	return landing, release
}

// deregDuring deregisters mr while the first frame of a message lands:
// Dereg marks the span dead at once and returns only after the landing
// (which holds the span) is through; then the message goes on.
func deregDuring(t *testing.T, landing, release chan struct{}, mr mlx5.MR, mem *span) {
	t.Helper()
	select {
	case <-landing:
	case <-time.After(5 * time.Second):
		t.Fatal("the first frame never landed")
	}
	done := make(chan error, 1)
	go func() { done <- mr.Dereg() }()
	for !mem.dead.Load() {
		time.Sleep(10 * time.Microsecond)
	}
	time.Sleep(5 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("Dereg returned while a frame of its memory was landing")
	default:
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A local buffer deregistered while a message's first frame lands by
// reference fails the WQE with LOCAL_PROT_ERR: the frames after it never
// leave; a remote one deregistered then gets the remote access NAK before
// a byte of the next frame lands. Both Deregs wait for the landing in
// progress.
func TestByRefDeregMidMessage(t *testing.T) {
	for _, local := range []bool{true, false} {
		name := map[bool]string{true: "local", false: "remote"}[local]
		t.Run(name, func(t *testing.T) {
			g := newRefGPU(t)
			x, y := refPair(t, g, false, qpOpts{})
			const n = 3 << 20
			x.lock()
			noise(x.data[:n], 5)
			x.unlock()
			noise(y.data[:n], 6)
			before := append([]byte(nil), y.data[:n]...)
			landing, release := blockLanding(t, g, x.addr(x.data), 1<<20)
			mr, mem := x.mr, x.nic.lookupMR(x.mr.LKey()).mem
			syn := mlx5.SyndromeLocalProtErr
			if !local {
				mr, mem, syn = y.mr, y.nic.lookupMR(y.mr.LKey()).mem, mlx5.SyndromeRemoteAccessErr
			}
			x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, n)))
			deregDuring(t, landing, release, mr, mem)
			expectErr(t, x.mustPoll(), syn)
			x.lock()
			first := bytes.Equal(y.data[:1<<20], x.data[:1<<20])
			x.unlock()
			if !first {
				t.Fatal("the first frame did not land")
			}
			if !bytes.Equal(y.data[1<<20:n], before[1<<20:n]) {
				t.Fatal("bytes of the frames after the Dereg landed")
			}
		})
	}
}

// A source buffer gone before the message starts: LOCAL_PROT_ERR, no frame.
// The responder's checks come before a byte lands: a bad rkey, a range
// beyond the MR, a QP without remote write are NAKed and land nothing.
func TestByRefChecksFirst(t *testing.T) {
	g := newRefGPU(t)
	x, y := refPair(t, g, false, qpOpts{})
	noise(y.data, 3)
	before := append([]byte(nil), y.data...)
	x.lock()
	noise(x.data[:1<<20], 4)
	x.unlock()
	m := x.nic.lookupMR(x.mr.LKey())
	m.mem.dead.Store(true) // what Dereg does first, while the key is still found
	frames := byRefFrames.Load()
	x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 1<<20)))
	expectErr(t, x.mustPoll(), mlx5.SyndromeLocalProtErr)
	m.mem.dead.Store(false)
	if byRefFrames.Load() != frames {
		t.Fatal("a frame left from a retired buffer")
	}
	for _, tc := range []struct {
		name string
		r    func(y *endpoint) mlx5.RAddrSeg
	}{
		{"bad rkey", func(y *endpoint) mlx5.RAddrSeg { return mlx5.RAddrSeg{Addr: y.va(0), RKey: y.mr.RKey() ^ 0x100} }},
		{"beyond the MR", func(y *endpoint) mlx5.RAddrSeg { return y.raddr(len(y.data) - 1<<19) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x2, y2 := refPair(t, g, false, qpOpts{})
			noise(y2.data, 3)
			before := append([]byte(nil), y2.data...)
			x2.post(mlx5.NewRDMAWrite(signaled, tc.r(y2), x2.sge(0, 1<<20)))
			expectErr(t, x2.mustPoll(), mlx5.SyndromeRemoteAccessErr)
			if !bytes.Equal(y2.data, before) {
				t.Fatal("bytes landed despite the NAK")
			}
		})
	}
	t.Run("no remote write", func(t *testing.T) {
		x2, y2 := refPair(t, g, false, qpOpts{noAccess: true})
		noise(y2.data, 3)
		before := append([]byte(nil), y2.data...)
		x2.post(mlx5.NewRDMAWrite(signaled, y2.raddr(0), x2.sge(0, 1<<20)))
		expectErr(t, x2.mustPoll(), mlx5.SyndromeRemoteAccessErr)
		if !bytes.Equal(y2.data, before) {
			t.Fatal("bytes landed despite the NAK")
		}
	})
	if !bytes.Equal(y.data, before) {
		t.Fatal("bytes landed from a retired buffer")
	}
}

// A WRITE with immediate by reference to a QP without a receive WQE gets
// an RNR NAK before a byte lands, and lands once a receive is posted.
func TestByRefRNR(t *testing.T) {
	g := newRefGPU(t)
	x, y := refPair(t, g, false, qpOpts{rq: true, logRQ: 2, minRNR: 1})
	x.lock()
	noise(x.data[:1<<20], 8)
	x.unlock()
	noise(y.data[:1<<20], 9)
	before := append([]byte(nil), y.data[:1<<20]...)
	i := x.post(mlx5.NewRDMAWriteImm(signaled, 0x1234, y.raddr(0), x.sge(0, 1<<20)))
	time.Sleep(20 * time.Millisecond)
	if _, err := x.poll(0); err == nil {
		t.Fatal("completed without a receive WQE")
	}
	if !bytes.Equal(y.data[:1<<20], before) {
		t.Fatal("bytes landed before the receive WQE")
	}
	y.postRecv(y.va(6<<20), 64)
	expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWriteImm, i)
	if c := y.mustPoll(); c.Opcode != mlx5.CQERespWrImm || c.ByteCnt != 1<<20 {
		t.Fatalf("receive CQE %v, %d bytes", c.Opcode, c.ByteCnt)
	}
	x.lock()
	same := bytes.Equal(y.data[:1<<20], x.data[:1<<20])
	x.unlock()
	if !same {
		t.Fatal("the landing differs")
	}
}

// Go-back-N with frames by reference: the responder loses the second
// frame of a message once; the third is NAKed as out of sequence, the
// requester sends the message again and it lands whole.
func TestByRefGoBackN(t *testing.T) {
	g := newRefGPU(t)
	x, y := refPair(t, g, false, qpOpts{})
	const n = 3 << 20
	x.lock()
	noise(x.data[:n], 10)
	x.unlock()
	var dropped atomic.Bool
	b := y.nic
	b.port.SetHandler(func(f *wire.Frame) {
		if f.Opcode == wire.OpWriteMiddle && f.Ref != nil && dropped.CompareAndSwap(false, true) {
			return
		}
		b.deliver(f)
	})
	frames := byRefFrames.Load()
	i := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, n)))
	expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, i)
	x.lock()
	same := bytes.Equal(y.data[:n], x.data[:n])
	x.unlock()
	if !dropped.Load() || !same {
		t.Fatalf("dropped %v, landing same %v", dropped.Load(), same)
	}
	if got := byRefFrames.Load() - frames; got < 5 {
		t.Fatalf("%d frames by reference for a message of 3 sent again", got)
	}
}

// Frames to a NIC over TCP (another process, or forced) never go by
// reference: the same large WRITE goes by value and lands.
func TestByRefNotOverTCP(t *testing.T) {
	g := newRefGPU(t)
	a := newNIC(t, Config{Name: "emuRa", Wire: wire.Config{ForceTCP: true}})
	b := newNIC(t, Config{Name: "emuRb", Wire: wire.Config{ForceTCP: true}})
	x, y := pair(t, a, b, qpOpts{gpu: g.fakeGPU, mtu: mlx5.MTU4096, dataLen: 2 << 20}, qpOpts{mtu: mlx5.MTU4096, dataLen: 2 << 20})
	x.lock()
	noise(x.data[:1<<20], 11)
	x.unlock()
	frames := byRefFrames.Load()
	i := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 1<<20)))
	expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, i)
	x.lock()
	same := bytes.Equal(y.data[:1<<20], x.data[:1<<20])
	x.unlock()
	if !same || byRefFrames.Load() != frames {
		t.Fatalf("landing same %v, %d frames by reference", same, byRefFrames.Load()-frames)
	}
}

// A WRITE whose destination overlaps its source in device memory (a
// second MR over the same memory) lands through a host buffer, with the
// bytes the source held when it was read, as a copy through the wire
// would.
func TestByRefOverlap(t *testing.T) {
	g := newRefGPU(t)
	x, y := refPair(t, g, true, qpOpts{})
	mr, err := y.dev.RegMR(y.pd, x.addr(x.data), uint64(len(x.data)), uint64(x.addr(x.data)), mlx5.AccessLocalWrite|mlx5.AccessRemoteWrite)
	must(t, err)
	defer mr.Dereg()
	x.lock()
	noise(x.data[:2<<20], 12)
	want := append([]byte(nil), x.data[:1<<20]...)
	x.unlock()
	bounced := byRefBounced.Load()
	i := x.post(mlx5.NewRDMAWrite(signaled, mlx5.RAddrSeg{Addr: uint64(x.addr(x.data)) + 1<<19, RKey: mr.RKey()}, x.sge(0, 1<<20)))
	expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, i)
	x.lock()
	same := bytes.Equal(x.data[1<<19:1<<19+1<<20], want)
	x.unlock()
	if !same || byRefBounced.Load() != bounced+1 {
		t.Fatalf("landing same %v, %d landings through a host buffer", same, byRefBounced.Load()-bounced)
	}
}

// lazyPair is refPair (host destination) with y's MR registered before g
// is installed: it is not pinned at registration.
func lazyPair(t *testing.T, g *refGPU) (*endpoint, *endpoint) {
	t.Helper()
	a, b := twoNICs(t)
	o := qpOpts{mtu: mlx5.MTU4096, dataLen: 8 << 20}
	y := newEndpoint(t, b, o)
	SetGPUMemory(g)
	t.Cleanup(func() { SetGPUMemory(nil) })
	o.gpu = g.fakeGPU
	x := newEndpoint(t, a, o)
	x.connect(y, 0x100, 0x200)
	y.connect(x, 0x200, 0x100)
	g.watchRange(x, y)
	return x, y
}

// writeMiB writes 1 MiB of fresh bytes from x's buffer to y's at 1 MiB
// and checks them.
func writeMiB(t *testing.T, x, y *endpoint, seed uint32) {
	t.Helper()
	x.lock()
	noise(x.data[:1<<20], seed)
	x.unlock()
	i := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(1<<20), x.sge(0, 1<<20)))
	expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, i)
	x.lock()
	same := bytes.Equal(y.data[1<<20:2<<20], x.data[:1<<20])
	x.unlock()
	if !same {
		t.Fatal("the landing differs")
	}
}

// A writable host MR of 256 KiB or more registered while a GPUMemory that
// can pin is installed is page-locked before RegMR returns; every landing
// by reference then moves into it by DMA (the fake counts copies into
// pinned memory); Dereg unlocks it, once. One registered before is pinned
// in the background at its first landing, which is staged. A pin that
// fails is not tried again and the landings stay right;
// GDAKI_EMU_PIN_MR=0 pins nothing.
func TestByRefPinsHostMR(t *testing.T) {
	waitPinned := func(t *testing.T, y *endpoint) {
		t.Helper()
		m := y.nic.lookupMR(y.mr.LKey())
		deadline := time.Now().Add(5 * time.Second)
		for m.mem.dmaState.Load() != dmaPinned {
			if time.Now().After(deadline) {
				t.Fatalf("MR not page-locked: state %d", m.mem.dmaState.Load())
			}
			time.Sleep(time.Millisecond)
		}
	}
	t.Run("at registration", func(t *testing.T) {
		g := newRefGPU(t)
		pins := mrPins.Load()
		x, y := refPair(t, g, false, qpOpts{})
		if s := y.nic.lookupMR(y.mr.LKey()).mem.dmaState.Load(); s != dmaPinned || g.pinCalls.Load() != 1 || mrPins.Load()-pins != 1 {
			t.Fatalf("after RegMR: state %d, %d pins asked for, %d counted", s, g.pinCalls.Load(), mrPins.Load()-pins)
		}
		for k := 0; k < 4; k++ {
			writeMiB(t, x, y, uint32(k+1))
		}
		if d := g.direct.Load(); d != 4<<20 {
			t.Fatalf("%d bytes landed by DMA into the pinned MR, want %d", d, 4<<20)
		}
		must(t, y.mr.Dereg())
		if g.unpins.Load() != 1 || g.pinnedRanges() != 0 {
			t.Fatalf("after Dereg: %d unpins, %d ranges pinned", g.unpins.Load(), g.pinnedRanges())
		}
		must(t, y.mr.Dereg())
		if g.unpins.Load() != 1 || g.pinCalls.Load() != 1 {
			t.Fatalf("%d pins, %d unpins after a second Dereg", g.pinCalls.Load(), g.unpins.Load())
		}
	})
	t.Run("lazily", func(t *testing.T) {
		g := &refGPU{fakeGPU: newFakeGPU()}
		x, y := lazyPair(t, g)
		if g.pinCalls.Load() != 0 {
			t.Fatal("an MR registered before the GPU was pinned")
		}
		writeMiB(t, x, y, 1)
		waitPinned(t, y)
		direct := g.direct.Load()
		for k := 0; k < 3; k++ {
			writeMiB(t, x, y, uint32(k+2))
		}
		if d := g.direct.Load() - direct; d != 3<<20 || g.pinCalls.Load() != 1 {
			t.Fatalf("%d bytes by DMA after the pin, want %d; %d pins", d, 3<<20, g.pinCalls.Load())
		}
		must(t, y.mr.Dereg())
		if g.unpins.Load() != 1 || g.pinnedRanges() != 0 {
			t.Fatalf("after Dereg: %d unpins, %d ranges pinned", g.unpins.Load(), g.pinnedRanges())
		}
	})
	t.Run("fails", func(t *testing.T) {
		g := newRefGPU(t)
		g.pinErr = errors.New("no pinning today")
		fails := mrPinFailures.Load()
		x, y := refPair(t, g, false, qpOpts{})
		for k := 0; k < 4; k++ {
			writeMiB(t, x, y, uint32(k+10))
		}
		if g.pinCalls.Load() != 1 || mrPinFailures.Load()-fails != 1 || g.direct.Load() != 0 {
			t.Fatalf("%d pins asked for, %d failures, %d bytes by DMA", g.pinCalls.Load(), mrPinFailures.Load()-fails, g.direct.Load())
		}
	})
	t.Run("off", func(t *testing.T) {
		pinMROn.Store(false)
		defer pinMROn.Store(true)
		g := newRefGPU(t)
		x, y := refPair(t, g, false, qpOpts{})
		writeMiB(t, x, y, 20)
		time.Sleep(5 * time.Millisecond)
		if g.pinCalls.Load() != 0 {
			t.Fatalf("%d pins with GDAKI_EMU_PIN_MR=0", g.pinCalls.Load())
		}
	})
	t.Run("not at registration", func(t *testing.T) {
		g := newRefGPU(t)
		n := newNIC(t, Config{Name: "emuRp"})
		dev, err := n.Open()
		must(t, err)
		defer dev.Close()
		pd, err := dev.AllocPD()
		must(t, err)
		defer pd.Dealloc()
		buf := hostMem(t, 1<<20)
		for _, r := range []struct {
			n      int
			access mlx5.Access
		}{
			{inPlaceMin - 4096, mlx5.AccessLocalWrite | mlx5.AccessRemoteWrite}, // too small for a payload by reference
			{1 << 20, mlx5.AccessRemoteRead},                                    // read-only: nothing lands in it
		} {
			mr, err := dev.RegMR(pd, addrOf(buf), uint64(r.n), uint64(addrOf(buf)), r.access)
			must(t, err)
			must(t, mr.Dereg())
		}
		if g.pinCalls.Load() != 0 {
			t.Fatalf("%d pins for MRs nothing large lands in", g.pinCalls.Load())
		}
	})
}

// Dereg while the MR's background pin is in progress waits for it and
// leaves nothing pinned: the caller may unmap the memory when Dereg
// returns.
func TestByRefDeregDuringPin(t *testing.T) {
	g := &refGPU{fakeGPU: newFakeGPU()}
	gate := make(chan struct{})
	g.pinGate = gate
	x, y := lazyPair(t, g)
	x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 1<<20)))
	x.mustPoll()
	deadline := time.Now().Add(5 * time.Second)
	for g.pinCalls.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no pin asked for")
		}
		time.Sleep(time.Millisecond)
	}
	done := make(chan error, 1)
	go func() { done <- y.mr.Dereg() }()
	time.Sleep(10 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("Dereg returned while its MR was being pinned")
	default:
	}
	close(gate)
	must(t, <-done)
	if g.pinnedRanges() != 0 || g.unpins.Load() != 1 {
		t.Fatalf("after Dereg: %d ranges pinned, %d unpins", g.pinnedRanges(), g.unpins.Load())
	}
}

// wantDMA asks nothing of a GPUMemory that cannot pin, nor for a span
// larger than pinMRMax; dropDMA on a span never asked is a no-op.
func TestWantDMALimits(t *testing.T) {
	g := &refGPU{fakeGPU: newFakeGPU()}
	host := make([]byte, 64)
	big := &span{size: pinMRMax + 1, host: host}
	big.wantDMA(g)
	plain := &span{size: 64, host: host}
	plain.wantDMA(g.fakeGPU) // not a HostPinner
	if g.pinCalls.Load() != 0 || big.dmaState.Load() != dmaNever || plain.dmaState.Load() != dmaNever {
		t.Fatalf("pins %d, states %d %d", g.pinCalls.Load(), big.dmaState.Load(), plain.dmaState.Load())
	}
	fresh := &span{size: 64, host: host}
	fresh.dropDMA()
	fresh.wantDMA(g)
	if g.pinCalls.Load() != 0 {
		t.Fatal("a dropped span was pinned")
	}
}

// A payload by reference of another kind than the emulator's is read with
// its ReadAt and scattered; its read error is the landing's.
func TestLandForeignRef(t *testing.T) {
	dst := hostMem(t, 4096)
	s := &span{size: 4096, host: dst}
	tg := []target{{mem: s, off: 10, len: 100}, {mem: s, off: 1000, len: 100}}
	want := []byte("a payload by reference of someone else's")
	f := wire.Frame{Opcode: wire.OpSendOnly, Ref: &sliceRef{b: want}}
	must(t, land(tg, 90, &f))
	if got := append(append([]byte(nil), dst[100:110]...), dst[1000:1000+len(want)-10]...); !bytes.Equal(got, want) {
		t.Fatalf("landed %q", got)
	}
	f.Ref = &sliceRef{b: want, err: io.ErrUnexpectedEOF}
	if err := land(tg, 0, &f); err != io.ErrUnexpectedEOF {
		t.Fatalf("land: %v", err)
	}
	// The emulator's own reference, used after its delivery, fails.
	var p refPayload
	if _, err := p.ReadAt(make([]byte, 1), 0); err != errRefGone {
		t.Fatalf("ReadAt after delivery: %v", err)
	}
	if err := p.landTo(tg, 0); err != errRefGone {
		t.Fatalf("landTo after delivery: %v", err)
	}
}

type sliceRef struct {
	b   []byte
	err error
}

func (r *sliceRef) Len() int { return len(r.b) }
func (r *sliceRef) ReadAt(p []byte, off int64) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	return copy(p, r.b[off:]), nil
}

// BenchmarkByRef: 1 MiB WRITEs between two NICs of this process from
// modelled device memory (model_test.go's cost model) into host memory and
// into device memory, by reference (one copy per frame, straight to the
// destination) and read ahead (GDAKI_EMU_BYREF=0: a device-to-host copy
// into the read-ahead buffer, then a host copy or a host-to-device copy),
// measured in the same run:
//
//	go test -run xxx -bench ByRef -benchtime 20x ./internal/mlx5/emu/
//
// The model charges each batch its fixed cost and its bytes at the modelled
// bus bandwidth; the fake's own copies and the host copies are real.
func BenchmarkByRef(b *testing.B) {
	cost := defaultCopyCost()
	b.Logf("copy cost model: %v", cost)
	for _, dev := range []bool{false, true} {
		for _, on := range []bool{true, false} {
			name := map[bool]string{false: "host", true: "device"}[dev] + "/" + map[bool]string{true: "byref", false: "readahead"}[on]
			b.Run(name, func(b *testing.B) {
				byRefOn.Store(on)
				defer byRefOn.Store(true)
				benchModelStream(b, cost, 16, 1<<20, dev, false)
			})
		}
	}
}
