package verbs

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkCQWakeup times, on the emulator (emu0 to emu1), how long after
// an 8-byte RDMA WRITE is posted a waiting goroutine learns of its
// completion: "channel", a goroutine blocked in CompChannel.GetEvent (it
// then acknowledges, polls the completion and re-arms, as a program
// does); "poll", a goroutine spinning on CQ.Poll. Both run in the same
// process on the same pair; the difference is what blocking costs in
// wake-up latency (ns/op is the mean; p50-ns and p99-ns the percentiles).
// The blocked goroutine holds no thread and burns no CPU while it waits.
func BenchmarkCQWakeup(b *testing.B) {
	o := defaultPairOpts()
	o.compChannel = true
	a, peer := newPair(b, o)
	post := func() {
		if err := a.qp.PostSend(SendWR{Opcode: WRRDMAWrite, Signaled: true,
			SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: peer.addr(0), RKey: peer.mr.RKey()}); err != nil {
			b.Fatal(err)
		}
	}
	run := func(b *testing.B, wait func(wcs []WC) error) {
		lat := make([]time.Duration, 0, b.N)
		woke := make(chan time.Time)
		fail := make(chan error, 1)
		start := make(chan struct{})
		go func() {
			wcs := make([]WC, 1)
			for range start {
				if err := wait(wcs); err != nil {
					fail <- err
					return
				}
				woke <- time.Now()
			}
		}()
		b.ResetTimer()
		for n := 0; n < b.N; n++ {
			start <- struct{}{}
			time.Sleep(20 * time.Microsecond) // let the waiter block or spin first
			t0 := time.Now()
			post()
			select {
			case t1 := <-woke:
				lat = append(lat, t1.Sub(t0))
			case err := <-fail:
				b.Fatal(err)
			}
		}
		b.StopTimer()
		close(start)
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		var sum time.Duration
		for _, d := range lat {
			sum += d
		}
		b.ReportMetric(float64(sum.Nanoseconds())/float64(len(lat)), "ns/op")
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	}
	b.Run("channel", func(b *testing.B) {
		require.NoError(b, a.cq.ReqNotify(false))
		run(b, func(wcs []WC) error {
			if _, err := a.ch.GetEvent(context.Background()); err != nil {
				return err
			}
			if err := a.cq.AckEvents(1); err != nil {
				return err
			}
			// Consume, then re-arm: an arm behind a completion fires at once.
			if _, err := a.cq.PollWaitContext(context.Background(), wcs, 1); err != nil {
				return err
			}
			return a.cq.ReqNotify(false)
		})
		// The last re-arm stays armed: take its event if it fired.
		if q, err := a.ch.TryGetEvent(); err == nil {
			require.NoError(b, q.AckEvents(1))
		}
	})
	b.Run("poll", func(b *testing.B) {
		run(b, func(wcs []WC) error {
			for {
				n, err := a.cq.Poll(wcs)
				if err != nil || n > 0 {
					return err
				}
			}
		})
	})
}
