package devhost

import (
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeNIC completes WQEs in order as they are announced (sq_wqe_pi), checking each slot's ctrl
// index and recording the local address of every WRITE it executes.
func fakeNIC(t *testing.T, q *HostQP, stop <-chan struct{}, seen map[uint64]int) (done chan struct{}, errs *atomic.Int64) {
	done = make(chan struct{})
	errs = &atomic.Int64{}
	go func() {
		defer close(done)
		var next uint64
		for {
			_, _, pi := q.Indexes()
			if next == pi {
				runtime.Gosched()
			}
			for ; next < pi; next++ {
				w := q.WQE(next)
				idx := uint16(binary.BigEndian.Uint32(w[0:4]) >> 8)
				if idx != uint16(next) {
					errs.Add(1)
				}
				seen[binary.BigEndian.Uint64(w[40:48])]++
				q.Complete(next, CQEOpReq, 0)
			}
			select {
			case <-stop:
				_, _, pi = q.Indexes()
				if next == pi {
					return
				}
			default:
			}
		}
	}()
	return done, errs
}

func TestManyThreadsOneQP(t *testing.T) {
	const (
		threads = 6
		perThr  = 1000
	)
	for _, tc := range []struct {
		name    string
		sharing Sharing
		handler Handler
	}{
		{"gpu/db", SharingGPU, HandlerGPUSMDB},
		{"gpu/no-dbr", SharingGPU, HandlerGPUSMNoDBR},
		{"cta/db", SharingCTA, HandlerGPUSMDB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newHostQP(t, HostConfig{SQWQEs: 64, CQEs: 64, Handler: tc.handler})
			m := Mode{Sharing: tc.sharing, Handler: HandlerAuto}
			seen := map[uint64]int{}
			stop := make(chan struct{})
			nicDone, nicErrs := fakeNIC(t, q, stop, seen)

			// Monitor: sq_wqe_pi and the DBR never go backwards.
			monStop := make(chan struct{})
			var monErr atomic.Int64
			var monWG sync.WaitGroup
			monWG.Add(1)
			go func() {
				defer monWG.Done()
				var lastPI uint64
				var lastDBR uint32
				for {
					select {
					case <-monStop:
						return
					default:
					}
					_, _, pi := q.Indexes()
					d := q.DBR()
					dv := uint32(d>>24) | uint32(d>>8)&0xff00 // BE16 in the low half-word
					if pi < lastPI || dv < lastDBR {
						monErr.Add(1)
					}
					lastPI, lastDBR = pi, dv
				}
			}()

			var stores []Store
			var wg sync.WaitGroup
			tickets := make([][]uint64, threads)
			run := func() {
				for th := 0; th < threads; th++ {
					wg.Add(1)
					go func(th int) {
						defer wg.Done()
						for k := 0; k < perThr; k++ {
							tk, err := q.Put(Addr{Addr: 0x1000, Key: 1}, Addr{Addr: uint64(th)<<32 | uint64(k), Key: 2}, 64, m)
							if err != nil {
								t.Error(err)
								return
							}
							tickets[th] = append(tickets[th], tk)
						}
					}(th)
				}
				finished := make(chan struct{})
				go func() { wg.Wait(); close(finished) }()
				select {
				case <-finished:
				case <-time.After(60 * time.Second):
					t.Fatal("deadlock: threads did not finish")
				}
			}
			if tc.handler == HandlerGPUSMDB {
				stores = captureStores(t, run)
			} else {
				run()
			}
			close(stop)
			<-nicDone
			close(monStop)
			monWG.Wait()

			total := uint64(threads * perThr)
			rsvd, ready, pi := q.Indexes()
			assert.Equal(t, [3]uint64{total, total, total}, [3]uint64{rsvd, ready, pi})
			assert.Zero(t, nicErrs.Load(), "ctrl index mismatches")
			assert.Zero(t, monErr.Load(), "sq_wqe_pi or DBR went backwards")
			require.Len(t, seen, int(total), "every put executed exactly once")
			for laddr, n := range seen {
				if n != 1 {
					t.Fatalf("laddr %#x executed %d times", laddr, n)
				}
			}
			for th := range tickets {
				for k := 1; k < len(tickets[th]); k++ {
					require.Less(t, tickets[th][k-1], tickets[th][k], "tickets of one thread increase")
				}
			}
			require.NoError(t, q.PollCQAt(total-1, tc.sharing, time.Second))
			if tc.handler == HandlerGPUSMDB {
				// Under the lock, each advancing submit logs DBR, DB with one PI (our doorbell order);
				// PIs increase.
				require.Zero(t, len(stores)%2)
				var last uint64
				for i := 0; i < len(stores); i += 2 {
					require.Equal(t, q.DBRAddr(), stores[i].Addr, "store %d is the DBR", i)
					require.Equal(t, q.DoorbellAddr(), stores[i+1].Addr, "store %d is the doorbell", i+1)
					hi, _ := DecodeDoorbell(stores[i+1].Value)
					p := uint64(hi >> 8)
					require.Equal(t, uint64(PrepareDBR(uint32(p))), stores[i].Value)
					require.Greater(t, p, last)
					last = p
				}
				assert.Equal(t, total, last)
			}
		})
	}
}
