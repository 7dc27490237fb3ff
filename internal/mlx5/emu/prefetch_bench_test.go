package emu

import (
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// BenchmarkWalk512: the read-ahead's walk over 512 posted 64-byte WRITEs
// whose payloads are the slices of one device buffer in a scattered order
// (a kernel's threads posting puts), and its one covering copy (the fake
// GPU's memcpy): put_bw's burst before its first frame. ns/WQE is the walk's
// cost per WQE.
func BenchmarkWalk512(b *testing.B) {
	g := useGPU(b, newFakeGPU())
	na, nb := twoNICs(b)
	x, y := pair(b, na, nb, qpOpts{gpu: g, logSQ: 10, logCQ: 10, dataLen: 512 * 64}, qpOpts{dataLen: 512 * 64})
	q := x.qpObj()
	for j := 0; j < 512; j++ {
		k := (j * 37) % 512
		x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(k*64), x.sge(k*64, 64)))
	}
	defer readPosted(x)()
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
