package wire

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func write8() Frame {
	return Frame{
		Opcode: OpWriteOnly, AckReq: true, DstQPN: 0x123, PSN: 1, SrcQPN: 0x456, SrcGID: gidA, DstGID: gidB,
		RETH: RETH{VA: 0x7f0000001000, RKey: 0x1234, DMALength: 8}, Payload: make([]byte, 8),
	}
}

// BenchmarkEncodeDecodeWrite8: encode and decode an 8-byte RDMA WRITE.
func BenchmarkEncodeDecodeWrite8(b *testing.B) {
	f := write8()
	buf := make([]byte, 0, 256)
	var g Frame
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = f.AppendEncode(buf[:0])
		if err := DecodeInto(&g, buf); err != nil {
			b.Fatal(err)
		}
	}
}

func benchPorts(b *testing.B, force bool) (a, d *Port, n *atomic.Int64) {
	n = new(atomic.Int64)
	var err error
	if a, err = Listen(Config{ForceTCP: force}); err != nil {
		b.Fatal(err)
	}
	if d, err = Listen(Config{ForceTCP: force, Handler: func(*Frame) { n.Add(1) }}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close(); d.Close() })
	return a, d, n
}

// BenchmarkSendInProcess: Send of an 8-byte WRITE to a port of the same
// process (the handler counts it).
func BenchmarkSendInProcess(b *testing.B) {
	a, d, n := benchPorts(b, false)
	f := write8()
	f.DstGID = d.GID()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := a.Send(&f); err != nil {
			b.Fatal(err)
		}
	}
	if n.Load() != int64(b.N) {
		b.Fatalf("%d delivered of %d", n.Load(), b.N)
	}
}

// BenchmarkSendInProcessParallel: the same from GOMAXPROCS goroutines.
func BenchmarkSendInProcessParallel(b *testing.B) {
	a, d, _ := benchPorts(b, false)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		f := write8()
		f.DstGID = d.GID()
		for pb.Next() {
			if err := a.Send(&f); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSendTCP: pipelined Sends of 8-byte WRITEs over a TCP connection
// between two ports of this process; the time includes the receiver
// draining every frame.
func BenchmarkSendTCP(b *testing.B) {
	a, d, n := benchPorts(b, true)
	f := write8()
	f.SrcGID, f.DstGID = a.GID(), d.GID() // TCP admits only frames from the connection's peer
	if err := a.Send(&f); err != nil {    // dial outside the timing
		b.Fatal(err)
	}
	awaitDelivered(b, n, 1, 10*time.Second)
	b.ReportAllocs()
	b.ResetTimer()
	pause := func() { time.Sleep(20 * time.Microsecond) } // the queue is full: let the writer drain it
	for i := 0; i < b.N; i++ {
		sendQueued(b, a, &f, pause)
	}
	awaitDelivered(b, n, int64(b.N)+1, 30*time.Second)
}

// sendQueued sends f from a until its connection takes it, calling pause
// between tries while the queue is full (ErrCongested).
func sendQueued(b *testing.B, a *Port, f *Frame, pause func()) {
	for {
		err := a.Send(f)
		if err == nil {
			return
		}
		if err != ErrCongested {
			b.Fatal(err)
		}
		pause()
	}
}

// awaitDelivered waits until n counts want frames, failing after within.
func awaitDelivered(b *testing.B, n *atomic.Int64, want int64, within time.Duration) {
	for deadline := time.Now().Add(within); n.Load() != want; {
		if time.Now().After(deadline) {
			b.Fatalf("%d frames delivered of %d within %v", n.Load(), want, within)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// BenchmarkSendShm64: Sends of 64-byte WRITEs through a shared-memory link
// between two ports of this process (ForceShm), the receiver counting them;
// the time includes the receiver draining every frame. It is the per-frame
// cost of a link, both ends (put_bw's 64-byte messages between processes).
func BenchmarkSendShm64(b *testing.B) {
	var got atomic.Int64
	a, d := shmPorts(b, &got)
	f := write8()
	f.Payload = make([]byte, 64)
	f.RETH.DMALength = 64
	f.SrcGID, f.DstGID = a.GID(), d.GID()
	pause := func() { runtime.Gosched() } // the ring is full: let the reader drain it
	base := int64(0)                      // frames sent before the timing: each is delivered before it starts
	for a.Stats().SharedMemory == 0 {
		sendQueued(b, a, &f, pause) // the link comes up in the background
		base++
		awaitDelivered(b, &got, base, 10*time.Second)
		time.Sleep(time.Millisecond)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sendQueued(b, a, &f, pause)
	}
	awaitDelivered(b, &got, base+int64(b.N), 30*time.Second)
}

// shmPorts returns two ports of this process that reach each other only
// through a shared-memory link (ForceShm), d counting what it receives in
// got; both close with b.
func shmPorts(b *testing.B, got *atomic.Int64) (a, d *Port) {
	d, err := Listen(Config{ForceShm: true, Handler: func(*Frame) { got.Add(1) }})
	if err != nil {
		b.Fatal(err)
	}
	a, err = Listen(Config{ForceShm: true})
	if err != nil {
		d.Close()
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close(); d.Close() })
	return a, d
}
