package verbs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkQPPairCreateConnectDestroy times the control path of one
// connection on the emulator: a CQ and an RC QP on each of emu0 and emu1
// (each with its own internal rings, UMEM and UAR), both QPs moved to RTS
// towards each other, then everything destroyed. Devices and PDs are opened
// once. One op is the whole pair; ns/qp is half of it.
func BenchmarkQPPairCreateConnectDestroy(b *testing.B) {
	o := defaultPairOpts()
	var ctx [2]*Context
	var pd [2]*PD
	var gid [2]GID
	for i, name := range []string{"emu0", "emu1"} {
		c, err := OpenDevice(name)
		require.NoError(b, err)
		b.Cleanup(func() { require.NoError(b, c.Close()) })
		p, err := c.AllocPD()
		require.NoError(b, err)
		b.Cleanup(func() { require.NoError(b, p.Close()) })
		g, err := c.QueryGID(1, 0)
		require.NoError(b, err)
		ctx[i], pd[i], gid[i] = c, p, g.GID
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		var cq [2]*CQ
		var qp [2]*QP
		for i := range ctx {
			var err error
			cq[i], err = NewCQ(ctx[i], CQConfig{Size: 64})
			if err != nil {
				b.Fatal(err)
			}
			qp[i], err = NewQP(ctx[i], QPConfig{PD: pd[i], SendCQ: cq[i], RecvCQ: cq[i], SQWR: 32, RQWR: 32, SendMaxSGE: 1, RecvMaxSGE: 1})
			if err != nil {
				b.Fatal(err)
			}
		}
		connectTo(b, qp[0], qp[1].QPN(), gid[1], o)
		connectTo(b, qp[1], qp[0].QPN(), gid[0], o)
		for i := range ctx {
			if err := qp[i].Close(); err != nil {
				b.Fatal(err)
			}
			if err := cq[i].Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/qp")
}

// benchWrites posts b.N 8-byte RDMA WRITEs from emu0 to emu1, batch WRs per
// doorbell with only the last signaled, and polls that completion before
// the next batch. It reports messages per second.
func benchWrites(b *testing.B, batch int) {
	o := defaultPairOpts()
	o.qp = QPConfig{SQWR: 256, RQWR: 16, SendMaxSGE: 1, RecvMaxSGE: 1}
	o.cqSize = 256
	a, peer := newPair(b, o)
	wrs := make([]SendWR, batch)
	for i := range wrs {
		wrs[i] = SendWR{WRID: uint64(i), Opcode: WRRDMAWrite,
			SGL:        []SGE{{Addr: a.addr(8 * i), Length: 8, LKey: a.mr.LKey()}},
			RemoteAddr: peer.addr(8 * i), RKey: peer.mr.RKey()}
	}
	wcs := make([]WC, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for sent := 0; sent < b.N; {
		k := batch
		if b.N-sent < k {
			k = b.N - sent
		}
		for i := 0; i < k; i++ {
			wrs[i].Signaled = i == k-1
		}
		if err := a.qp.PostSend(wrs[:k]...); err != nil {
			b.Fatal(err)
		}
		if _, err := a.cq.PollWait(wcs, 1, 5*time.Second); err != nil {
			b.Fatal(err)
		}
		if wcs[0].Status != WCSuccess {
			b.Fatalf("completion %v", wcs[0].Status)
		}
		sent += k
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkPostPollWrite8B: 32 WRITEs of 8 bytes per doorbell, the last
// one signaled.
func BenchmarkPostPollWrite8B(b *testing.B) { benchWrites(b, 32) }

// BenchmarkPostPollWrite8BUnbatched: one signaled 8-byte WRITE per
// doorbell, its completion polled before the next.
func BenchmarkPostPollWrite8BUnbatched(b *testing.B) { benchWrites(b, 1) }
