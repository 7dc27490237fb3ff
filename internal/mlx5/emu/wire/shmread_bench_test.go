package wire

import (
	"net/netip"
	"testing"
)

// BenchmarkShmRead64 is a link's reader alone, per frame: the records of a
// burst of 512 64-byte WRITE ONLY requests (put_bw's shape) are written
// once into the ring, and the reader takes them again and again (its
// position rewound to their start), decoding each, admitting it and
// delivering it to a handler that only counts. The producer's side and
// the waits of an empty ring are not in it (BenchmarkSendShm64 has both).
func BenchmarkShmRead64(b *testing.B) {
	n := 0
	p, err := Listen(Config{Handler: func(*Frame) { n++ }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	w, r := linkPair(b, DefaultShmRing)
	peer := GIDFromIPv4(netip.MustParseAddr("127.0.0.2"))
	c := newConn(p, false, peer)
	f := write8()
	f.Payload = make([]byte, 64)
	f.RETH.DMALength = 64
	f.SrcGID, f.DstGID = peer, p.GID()
	const burst = 512
	for i := 0; i < burst; i++ {
		f.PSN, f.Hold = uint32(i), i < burst-1
		if err := w.put(&f); err != nil {
			b.Fatal(err)
		}
	}
	var rd shmReader
	b.ReportAllocs()
	b.ResetTimer()
	for n < b.N {
		r.head, r.seenTail = 0, 0 // the same burst again
		rec, err := r.next()
		if err != nil || rec == nil {
			b.Fatalf("no record at the start of the ring (%v)", err)
		}
		if err := c.shmBurst(r, rec, &rd); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if n%burst != 0 || p.Stats().Rejected != 0 {
		b.Fatalf("%d frames delivered, %d rejected: want whole bursts of %d", n, p.Stats().Rejected, burst)
	}
}

// BenchmarkSendShm64Spin is BenchmarkSendShm64 with the reader polling
// an empty ring for shmSpinFor before it sleeps, as it does on a host of
// shmSpinCPUs processors or more (an H100 host): on a smaller one the
// reader sleeps at once, and the benchmark times its futex wake-ups more
// than the link (a faster reader empties the ring sooner and sleeps more
// often). It needs two idle processors to mean anything.
func BenchmarkSendShm64Spin(b *testing.B) {
	old := shmSpin
	shmSpin = shmSpinFor // before the ports' readers start; restored after they ended
	b.Cleanup(func() { shmSpin = old })
	BenchmarkSendShm64(b)
}
