package gpunetio

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/verbs"
)

// BenchmarkQPPairCreateRTSExport: two high-level QPs (emu0, emu1) created,
// connected to RTS and their device QPs materialised, on the host test GPU.
func BenchmarkQPPairCreateRTSExport(b *testing.B) {
	g, _ := hostGPU(b)
	sa, sb := newSide(b, "emu0"), newSide(b, "emu1")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		qa, err := NewQPHL(QPHLConfig{GPU: g, PD: sa.pd, SQWQEs: 64, NICHandler: NICHandlerCPUProxy})
		require.NoError(b, err)
		qb, err := NewQPHL(QPHLConfig{GPU: g, PD: sb.pd, SQWQEs: 64, NICHandler: NICHandlerAuto})
		require.NoError(b, err)
		connectQP(b, qa.QP(), qb.QP().QPN(), sb.gid)
		connectQP(b, qb.QP(), qa.QP().QPN(), sa.gid)
		for _, q := range []*QPHL{qa, qb} {
			_, err := q.GPUQP().DeviceQP()
			require.NoError(b, err)
		}
		b.StopTimer()
		require.NoError(b, qa.Close())
		require.NoError(b, qb.Close())
		b.StartTimer()
	}
}

// BenchmarkProxyProgress: one ProgressProxy call that finds a new producer
// index and rings (DB, DBR, barrier, DB) on an emulated UAR.
func BenchmarkProxyProgress(b *testing.B) {
	q, _, _ := proxyHL(b, 64)
	x := q.GPUQP()
	if q.QP().State() != verbs.QPStateRST {
		b.Fatal("QP should stay in RST: doorbells are ignored there")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		storeMailbox(x, uint64(i+1))
		if p, err := x.ProgressProxy(); err != nil || !p {
			b.Fatalf("progress %d: %v %v", i, p, err)
		}
	}
}

// BenchmarkProxyProgressIdle: a call that finds nothing new.
func BenchmarkProxyProgressIdle(b *testing.B) {
	q, _, _ := proxyHL(b, 64)
	x := q.GPUQP()
	for i := 0; i < b.N; i++ {
		if _, err := x.ProgressProxy(); err != nil {
			b.Fatal(err)
		}
	}
}
