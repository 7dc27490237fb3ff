package emu

import (
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// burst512 posts put_bw's burst on a QP of a NIC whose ring and data are
// in fake device memory: 512 64-byte WRITEs of the slices of one buffer in
// a scattered order (a kernel's threads posting puts), to a QP of nb. The
// WQEs are in the QP's ring mirror, as after the doorbell.
func burst512(b *testing.B) (nb *NIC, q *qp) {
	g := useGPU(b, newFakeGPU())
	na, nb := twoNICs(b)
	x, y := pair(b, na, nb, qpOpts{gpu: g, logSQ: 10, logCQ: 10, dataLen: 512 * 64}, qpOpts{dataLen: 512 * 64})
	for j := 0; j < 512; j++ {
		k := (j * 37) % 512
		x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(k*64), x.sge(k*64, 64)))
	}
	b.Cleanup(readPosted(x))
	return nb, x.qpObj()
}

// BenchmarkWalk512: the read-ahead's walk over 512 posted 64-byte WRITEs
// whose payloads are the slices of one device buffer in a scattered order
// (a kernel's threads posting puts), and its one covering copy (the fake
// GPU's memcpy): put_bw's burst before its first frame. ns/WQE is the walk's
// cost per WQE.
func BenchmarkWalk512(b *testing.B) {
	_, q := burst512(b)
	if q.req.pi != 512 {
		b.Fatalf("pi %d", q.req.pi)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q.req.pf.clear()
		q.prefetchFrom(0)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/WQE")
}

// BenchmarkTransmit512: the requester's whole CPU for put_bw's burst of
// 512 posted 64-byte WRITEs from device memory, the walk above included:
// the read-ahead, then each WQE's entry, checks and frame, and the port's
// in-process Send. The frames go to a QPN the peer does not have, so the
// responder's share is a lookup and a drop; each round starts again from
// the first WQE (go-back-N) with the read-ahead window cleared. ns/WQE is
// the requester's cost per message.
func BenchmarkTransmit512(b *testing.B) {
	nb, q := burst512(b)
	q.remoteQPN = 0xfffff0 // dropped by the peer
	dropped := nb.stats.requestsDropped.Load()
	r := &q.req
	now := time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.pf.clear()
		q.goBack()
		q.transmit(now)
		if r.send != 512 {
			b.Fatalf("transmit stopped at %d", r.send)
		}
	}
	b.StopTimer()
	if d := nb.stats.requestsDropped.Load() - dropped; d != uint64(b.N)*512 {
		b.Fatalf("the peer dropped %d frames, want %d", d, b.N*512)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/WQE")
}
