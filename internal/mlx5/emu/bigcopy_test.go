package emu

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/internal/hostcopy"
)

// TestLargeLandings: payloads that land in host memory on several
// goroutines (above hostcopy.Threshold: WRITEs, a SEND's scatter, a READ
// response at the requester) arrive byte for byte, at odd offsets, in one
// frame or several, and nothing around them changes; the CQE comes after
// the bytes (the check reads them once the completion is polled).
func TestLargeLandings(t *testing.T) {
	defer hostcopy.SetThreads(hostcopy.DefaultThreads)() // split on small hosts too
	const dataLen = 8 << 20
	a, b := twoNICs(t)
	o := qpOpts{mtu: mlx5.MTU4096, rq: true, logRQ: 4, dataLen: dataLen}
	x, y := pair(t, a, b, o, o)
	check := func(t *testing.T, what string, got, want []byte, guard []byte, guardWant []byte) {
		t.Helper()
		if !bytes.Equal(got, want) {
			i := 0
			for got[i] == want[i] {
				i++
			}
			t.Fatalf("%s: first wrong byte at %d of %d", what, i, len(want))
		}
		if !bytes.Equal(guard, guardWant) {
			t.Fatalf("%s: bytes around the landing changed", what)
		}
	}
	for i, n := range []int{hostcopy.Threshold + 1, 1 << 20, 3<<20 + 5} {
		t.Run(fmt.Sprintf("write%d", n), func(t *testing.T) {
			src, dst := 4096+i, 64*1024+17*i+1
			fill(x.data[src:src+n], byte(i+1))
			fill(y.data, 0xa5)
			before := append([]byte(nil), y.data...)
			idx := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(dst), x.sge(src, uint32(n))))
			expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, idx)
			want := append([]byte(nil), before...)
			copy(want[dst:], x.data[src:src+n])
			check(t, "WRITE", y.data[dst:dst+n], want[dst:dst+n], y.data, want)
		})
	}
	t.Run("send", func(t *testing.T) {
		const n, at = 1<<20 + 3, 2<<20 + 7
		fill(y.data, 0x3c)
		before := append([]byte(nil), y.data...)
		y.postRecv(y.va(at), 2<<20)
		fill(x.data[100:100+n], 9)
		idx := x.post(mlx5.NewSend(signaled, x.sge(100, n)))
		expectOK(t, x.mustPoll(), mlx5.WQEOpSend, idx)
		if c := y.mustPoll(); c.Opcode != mlx5.CQERespSend || c.ByteCnt != n {
			t.Fatalf("responder CQE %v, %d bytes", c.Opcode, c.ByteCnt)
		}
		want := append([]byte(nil), before...)
		copy(want[at:], x.data[100:100+n])
		check(t, "SEND", y.data[at:at+n], want[at:at+n], y.data, want)
	})
	t.Run("read", func(t *testing.T) {
		const n, at = 2<<20 + 9, 5<<20 + 3
		fill(y.data[1000:1000+n], 77)
		fill(x.data, 0x11)
		before := append([]byte(nil), x.data...)
		idx := x.post(mlx5.NewRDMARead(signaled, y.raddr(1000), x.sge(at, n)))
		expectOK(t, x.mustPoll(), mlx5.WQEOpRDMARead, idx)
		want := append([]byte(nil), before...)
		copy(want[at:], y.data[1000:1000+n])
		check(t, "READ", x.data[at:at+n], want[at:at+n], x.data, want)
	})
}

// TestOverlappingWriteLands: a WRITE whose destination overlaps its source
// (two NICs of one process, the responder's MR over the requester's
// buffer shifted by 64 bytes either way) lands a one-frame message as
// copy() would, with memmove semantics: the split landing must not run
// its parts at once on overlapping memory.
func TestOverlappingWriteLands(t *testing.T) {
	defer hostcopy.SetThreads(hostcopy.DefaultThreads)() // split on small hosts too
	const dataLen, n = 2 << 20, 1 << 20
	shared := hostMem(t, dataLen+4096)
	on := func(off int) func(testing.TB, int) []byte {
		return func(tb testing.TB, k int) []byte {
			if k == dataLen {
				return shared[off : off+k]
			}
			return hostMem(tb, k)
		}
	}
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{mtu: mlx5.MTU4096, dataLen: dataLen, mem: on(0)}, qpOpts{mtu: mlx5.MTU4096, dataLen: dataLen, mem: on(64)})
	for _, c := range []struct {
		name     string
		src, dst int // offsets in x's and y's MR; y's starts 64 bytes after x's
	}{{"dst after src", 0, 0}, {"dst before src", 128, 0}} {
		t.Run(c.name, func(t *testing.T) {
			fill(shared, 0x5a)
			want := append([]byte(nil), shared...)
			copy(want[64+c.dst:64+c.dst+n], want[c.src:c.src+n])
			idx := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(c.dst), x.sge(c.src, n)))
			expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, idx)
			if !bytes.Equal(shared, want) {
				t.Fatal("overlapping WRITE landed differently from copy()")
			}
		})
	}
}

// writeStream posts n signaled WRITEs of size bytes from x's buffer to
// raddr, keeping depth in flight, and waits for all of them.
func writeStream(tb testing.TB, x *endpoint, raddr mlx5.RAddrSeg, size uint32, n, depth int) {
	inflight := 0
	wait := func() {
		if c, err := x.poll(10 * time.Second); err != nil || c.Opcode != mlx5.CQEReq {
			tb.Fatalf("CQE: %v %v", err, c.Syndrome)
		}
		inflight--
	}
	for i := 0; i < n; i++ {
		if inflight == depth {
			wait()
		}
		x.post(mlx5.NewRDMAWrite(signaled, raddr, x.sge(0, size)))
		inflight++
	}
	for inflight > 0 {
		wait()
	}
}

// BenchmarkWrite1MiBCrossProcess: 1 MiB RDMA WRITE bandwidth to a peer NIC
// in another process of this host, four WRITEs in flight: each frame is
// copied into the shared-memory ring by the sender and out of it into the
// MR by the peer, the two host copies of the two-process examples. The
// shm-links metric says whether the link was shared memory (1) or TCP (0).
// GDAKI_EMU_COPY_THREADS=1 gives the single-core reference, =4 the split
// on a host of fewer than four processors (where it is off by default),
// in the child too (it inherits the environment).
func BenchmarkWrite1MiBCrossProcess(b *testing.B) {
	e, c := connectChildWith(b, qpOpts{mtu: mlx5.MTU4096, dataLen: 1 << 20, logSQ: 6, logCQ: 7, ackTO: 16})
	fill(e.data, 3)
	raddr := mlx5.RAddrSeg{Addr: c.info.va, RKey: c.info.rkey}
	writeStream(b, e, raddr, 1<<20, 16, 4) // warm up (and the link set up)
	b.SetBytes(1 << 20)
	b.ResetTimer()
	writeStream(b, e, raddr, 1<<20, b.N, 4)
	b.StopTimer()
	b.ReportMetric(float64(e.nic.port.Stats().SharedMemory), "shm-links")
}
