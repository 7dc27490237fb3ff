package emu

import (
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// writeRate posts n 8-byte RDMA WRITEs from x to y in batches of batch
// WQEs per doorbell, the last of each batch signaled, keeping two batches
// in flight, and waits for all of them.
func writeRate(tb testing.TB, x *endpoint, raddr mlx5.RAddrSeg, n, batch int) {
	inflight := 0
	for done := 0; done < n; {
		k := batch
		if n-done < k {
			k = n - done
		}
		for j := 0; j < k; j++ {
			h := mlx5.WQEHead{}
			if j == k-1 {
				h = signaled
			}
			x.postNoDB(mlx5.NewRDMAWrite(h, raddr, x.sge(0, 8)))
		}
		x.ring(mlx5.CtrlSeg{})
		done += k
		inflight++
		if inflight == 2 {
			c, err := x.poll(10 * time.Second)
			if err != nil || c.Opcode != mlx5.CQEReq {
				tb.Fatalf("write CQE: %v %v", err, c.Syndrome)
			}
			inflight--
		}
	}
	for ; inflight > 0; inflight-- {
		if c, err := x.poll(10 * time.Second); err != nil || c.Opcode != mlx5.CQEReq {
			tb.Fatalf("write CQE: %v %v", err, c.Syndrome)
		}
	}
}

// BenchmarkWrite8BInProcess: 8-byte RDMA WRITE message rate between two
// emulated NICs of one process.
func BenchmarkWrite8BInProcess(b *testing.B) {
	na, nb := twoNICs(b)
	x, y := pair(b, na, nb, qpOpts{logSQ: 9, logCQ: 9}, qpOpts{})
	writeRate(b, x, y.raddr(0), 1024, 64) // warm up
	b.ResetTimer()
	start := time.Now()
	writeRate(b, x, y.raddr(0), b.N, 64)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
}

// BenchmarkWrite1MiB: 1 MiB RDMA WRITE bandwidth in process (path MTU 4096).
func BenchmarkWrite1MiB(b *testing.B) {
	na, nb := twoNICs(b)
	o := qpOpts{mtu: mlx5.MTU4096, dataLen: 2 << 20}
	x, y := pair(b, na, nb, o, o)
	fill(x.data[:1<<20], 1) // a real payload: untouched pages read as the shared zero page, from cache
	b.SetBytes(1 << 20)
	const depth = 4 // writes in flight, as a bandwidth test keeps its queue full
	inflight := 0
	wait := func() {
		if c, err := x.poll(10 * time.Second); err != nil || c.Opcode != mlx5.CQEReq {
			b.Fatalf("CQE: %v %v", err, c.Syndrome)
		}
		inflight--
	}
	x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 1<<20)))
	inflight++
	wait()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if inflight == depth {
			wait()
		}
		x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 1<<20)))
		inflight++
	}
	for inflight > 0 {
		wait()
	}
}

// BenchmarkMemcpy1MiB: a plain copy of the same bytes, for comparison with
// BenchmarkWrite1MiB.
func BenchmarkMemcpy1MiB(b *testing.B) {
	src, dst := hostMem(b, 1<<20), hostMem(b, 1<<20)
	fill(src, 1)
	copy(dst, src)
	b.SetBytes(1 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(dst, src)
	}
}

// BenchmarkBurst64B is put_bw's shape on the CPU: bursts of 512 signaled
// 64-byte WRITEs from rings and data in (fake) device memory, one doorbell
// per burst, all 512 CQEs awaited before the next burst, between two NICs
// of one process, in process or linked by a shared-memory ring (as two
// processes are). The metric is messages per second; a CPU profile of it
// shows the engine's cost per message without a GPU.
func BenchmarkBurst64B(b *testing.B) {
	overLinks(b, func(b *testing.B, shm bool) { burst64(b, shm, false) })
}

// BenchmarkBurst64BSend is BenchmarkBurst64B with SENDs into receives:
// twosided_bw's shape on the CPU. Both sides' rings, receive queue and data
// are in (fake) device memory; per burst the receiver posts 512 receives,
// the sender posts 512 signaled 64-byte SENDs with one doorbell, and both
// wait for their 512 CQEs. Set beside BenchmarkBurst64B, it prices what a
// receive adds to a WRITE on the emulator's side: the receive queue's read
// and the receive CQEs.
func BenchmarkBurst64BSend(b *testing.B) {
	overLinks(b, func(b *testing.B, shm bool) { burst64(b, shm, true) })
}

// overLinks runs f between two NICs of one process ("inproc") and over a
// shared-memory link ("shm").
func overLinks(b *testing.B, f func(b *testing.B, shm bool)) {
	for _, shm := range []bool{false, true} {
		name := "inproc"
		if shm {
			name = "shm"
		}
		b.Run(name, func(b *testing.B) { f(b, shm) })
	}
}

// burst64 runs BenchmarkBurst64B (send false: WRITEs into host memory) or
// BenchmarkBurst64BSend (SENDs into receives in device memory).
func burst64(b *testing.B, shm, send bool) {
	g := useGPU(b, newFakeGPU())
	prefix := "emuB"
	if send {
		prefix = "emuS"
	}
	na := newNIC(b, Config{Name: prefix + "a", Wire: wire.Config{ForceShm: shm}})
	nb := newNIC(b, Config{Name: prefix + "b", Wire: wire.Config{ForceShm: shm}})
	const burst = 512
	oy := qpOpts{dataLen: burst * 64}
	if send {
		oy = qpOpts{gpu: g, rq: true, logRQ: 10, logCQ: 10, dataLen: burst * 64}
	}
	x, y := pair(b, na, nb, qpOpts{gpu: g, logSQ: 10, logCQ: 10, dataLen: burst * 64}, oy)
	run := func(n int) {
		for done := 0; done < n; done += burst {
			for j := 0; send && j < burst; j++ {
				y.postRecv(y.va(j*64), 64)
			}
			for j := 0; j < burst; j++ {
				if send {
					x.postNoDB(mlx5.NewSend(signaled, x.sge(j*64, 64)))
				} else {
					x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(j*64), x.sge(j*64, 64)))
				}
			}
			x.ring(mlx5.CtrlSeg{})
			for j := 0; j < burst; j++ {
				if c, err := x.poll(10 * time.Second); err != nil || c.Opcode != mlx5.CQEReq {
					b.Fatalf("send-side CQE: %v %v", err, c.Syndrome)
				}
			}
			for j := 0; send && j < burst; j++ {
				if c, err := y.poll(10 * time.Second); err != nil || c.Opcode != mlx5.CQERespSend {
					b.Fatalf("receive CQE: %v %v (opcode %d)", err, c.Syndrome, c.Opcode)
				}
			}
		}
	}
	run(8 * burst) // warm up (a shared-memory link comes up)
	b.ResetTimer()
	start := time.Now()
	run(b.N)
	b.ReportMetric(float64((b.N+burst-1)/burst*burst)/time.Since(start).Seconds(), "msgs/s")
}

// BenchmarkRespondWrite64 is the responder's CPU per request of put_bw's
// shape: 64-byte WRITE ONLY packets into host memory, handed over as a
// shared-memory link does (More set but on every 64th), so that ACKs are
// coalesced; the ACKs go to the requester NIC in process.
func BenchmarkRespondWrite64(b *testing.B) { respondWrite64(b, nil) }

// BenchmarkRespondWrite64Device is BenchmarkRespondWrite64 into device
// memory (a fake GPU): put_bw's shape on a GPU host, where the responder
// defers the packets of a burst and lands them in batches (land.go), one
// batch before each ACK.
func BenchmarkRespondWrite64Device(b *testing.B) { respondWrite64(b, useGPU(b, newFakeGPU())) }

// respondWrite64 runs BenchmarkRespondWrite64 into the responder's data in
// host memory (g nil) or in g's memory.
func respondWrite64(b *testing.B, g *fakeGPU) {
	na, nb := twoNICs(b)
	x, y := pair(b, na, nb, qpOpts{}, qpOpts{gpu: g, dataLen: 512 * 64})
	q := y.qpObj()
	q.rmu.Lock()
	psn := q.resp.epsn
	q.rmu.Unlock()
	f := wire.Frame{Opcode: wire.OpWriteOnly, AckReq: true, DstQPN: y.qpn, SrcQPN: x.qpn,
		SrcGID: wire.GID(na.GID()), DstGID: wire.GID(nb.GID()), Payload: make([]byte, 64)}
	f.Payload[0] = 0x5a
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ra := y.raddr((i % 512) * 64)
		f.RETH = wire.RETH{VA: ra.Addr, RKey: ra.RKey, DMALength: 64}
		f.PSN, psn = psn, (psn+1)&mask24
		f.More = i%64 != 63
		nb.respond(&f)
	}
	b.StopTimer()
	q.rmu.Lock()
	q.flushHeld() // the last packets, when the last had More
	q.rmu.Unlock()
	if q.state.Load() != stRTS {
		b.Fatalf("the QP left RTS (state %d)", q.state.Load())
	}
	y.lock()
	defer y.unlock()
	if y.data[64*((b.N-1)%512)] != 0x5a {
		b.Fatal("the requests did not all land")
	}
}
