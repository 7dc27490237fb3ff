package emu

import (
	"runtime"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// The examples' patterns on the CPU cost model (model_test.go): rings,
// doorbell records, CQs and source buffers in modelled device memory, as a
// GPU kernel has them, and two emulated NICs of one process. Each reports
// the modelled rate or latency (wall time: the model's costs are spun) and
// the copy calls per message, the figure that does not depend on the host:
//
//	go test -run xxx -bench Model -benchtime 20x ./internal/mlx5/emu/
//
// put64B: put_bw's round at 64 bytes: 512 WRITEs from adjacent 64-byte
// slices of device memory to host memory, each posted with its own DBR
// update and doorbell (512 threads), then every completion awaited.
// put64Bdev: the same into device memory of the peer, over a shared-memory
// link (the wire between two processes), as a kernel's puts to a peer
// GPU's buffer are. write1MiB: 16 WRITEs of 1 MiB from adjacent device memory to host memory,
// posted together, then awaited; write1MiBdev: the same into device memory
// of the peer, as put_bw and write_bw at 1 MiB do. pingpong:
// write_lat: a WRITE of n bytes into the peer's device memory, whose
// "kernel" spins on the last byte and answers; one-way latency is half the
// round trip.
func BenchmarkModel(b *testing.B) {
	cost := defaultCopyCost()
	b.Logf("copy cost model: %v", cost)
	b.Run("put64B", func(b *testing.B) { benchModelStream(b, cost, 512, 64, false, false) })
	b.Run("put64Bdev", func(b *testing.B) { benchModelStream(b, cost, 512, 64, true, true) })
	b.Run("write1MiB", func(b *testing.B) { benchModelStream(b, cost, 16, 1<<20, false, false) })
	b.Run("write1MiBdev", func(b *testing.B) { benchModelStream(b, cost, 16, 1<<20, true, false) })
	b.Run("pingpong8B", func(b *testing.B) { benchModelPingPong(b, cost, 8) })
	b.Run("pingpong64B", func(b *testing.B) { benchModelPingPong(b, cost, 64) })
}

// reportCopies adds the model's counters per message to the benchmark.
func reportCopies(b *testing.B, cost *copyCost, msgs int) {
	calls, ops, bytes := cost.counts()
	b.ReportMetric(float64(calls)/float64(msgs), "calls/msg")
	b.ReportMetric(float64(ops)/float64(msgs), "copies/msg")
	b.ReportMetric(float64(bytes)/float64(msgs), "B-copied/msg")
	b.ReportMetric(float64(cost.spent.Load())/1e3/float64(msgs), "device-us/msg")
}

// benchModelStream posts n WRITEs of size bytes per round, all at once,
// and waits for their completions; devDst puts the destination in device
// memory, shm links the NICs by a shared-memory ring.
func benchModelStream(b *testing.B, cost *copyCost, n, size int, devDst, shm bool) {
	g := useGPU(b, newModelGPU(cost))
	var dst *fakeGPU
	if devDst {
		dst = g
	}
	na := newNIC(b, Config{Name: "emuMa", Wire: wire.Config{ForceShm: shm}})
	nb := newNIC(b, Config{Name: "emuMb", Wire: wire.Config{ForceShm: shm}})
	logSQ := uint8(6)
	for 1<<logSQ < n {
		logSQ++
	}
	x, y := pair(b, na, nb,
		qpOpts{gpu: g, mtu: mlx5.MTU4096, logSQ: logSQ, logCQ: logSQ + 1, dataLen: n * size},
		qpOpts{gpu: dst, mtu: mlx5.MTU4096, dataLen: n * size})
	round := func() {
		for i := 0; i < n; i++ {
			x.post(mlx5.NewRDMAWrite(signaled, y.raddr(i*size), x.sge(i*size, uint32(size))))
		}
		for i := 0; i < n; i++ {
			if c, err := x.poll(10 * time.Second); err != nil || c.Opcode != mlx5.CQEReq {
				b.Fatalf("CQE %d: %v %v", i, err, c.Syndrome)
			}
		}
	}
	round() // warm up
	cost.reset()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		round()
	}
	d := time.Since(start)
	b.StopTimer()
	msgs := b.N * n
	b.ReportMetric(float64(msgs)/d.Seconds(), "msgs/s")
	b.ReportMetric(float64(msgs*size)*8/d.Seconds()/1e9, "Gbps")
	reportCopies(b, cost, msgs)
}

// benchModelPingPong runs write_lat's exchange: x writes size bytes into
// y's buffer, the last byte carrying a sequence number; y's kernel sees it
// and writes back. One goroutine plays both kernels.
func benchModelPingPong(b *testing.B, cost *copyCost, size int) {
	g := useGPU(b, newModelGPU(cost))
	na, nb := twoNICs(b)
	o := qpOpts{gpu: g, mtu: mlx5.MTU4096, logSQ: 6, logCQ: 7}
	x, y := pair(b, na, nb, o, o)
	const pollOff = 4096
	seq := byte(0)
	// leg posts from s to r's poll buffer and spins until it landed.
	leg := func(s, r *endpoint) {
		s.lock()
		s.data[size-1] = seq
		s.unlock()
		s.post(mlx5.NewRDMAWrite(signaled, r.raddr(pollOff), s.sge(0, uint32(size))))
		deadline := time.Now().Add(10 * time.Second)
		for {
			r.lock()
			got := r.data[pollOff+size-1]
			r.unlock()
			if got == seq {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("the message did not land")
			}
			runtime.Gosched()
		}
		for {
			if _, ok := s.tryPollLocked(); !ok {
				break
			}
		}
	}
	rt := func() {
		seq++
		if seq == 0 {
			seq = 1
		}
		leg(x, y)
		leg(y, x)
	}
	for i := 0; i < 16; i++ {
		rt()
	}
	cost.reset()
	StartBreakdown()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		rt()
	}
	d := time.Since(start)
	b.StopTimer()
	bd := StopBreakdown()
	b.ReportMetric(float64(d.Microseconds())/float64(2*b.N), "us-one-way")
	b.ReportMetric(float64(bd.DoorbellToLand.Nanoseconds())/1e3, "us-doorbell-to-landed")
	b.ReportMetric(float64(bd.DoorbellToWQE.Nanoseconds())/1e3, "us-wqe-read")
	b.ReportMetric(float64(bd.WQEToPayload.Nanoseconds())/1e3, "us-payload-read")
	b.ReportMetric(float64(bd.PayloadToLand.Nanoseconds())/1e3, "us-to-landed")
	reportCopies(b, cost, 2*b.N)
}

// tryPollLocked is tryPoll with the fake GPU's lock held around the ring
// access (the CQ lives in fake device memory).
func (e *endpoint) tryPollLocked() (mlx5.CQE, bool) {
	e.lock()
	defer e.unlock()
	return e.tryPoll()
}
