package devhost

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The store log is process-global: tests that use it must not run in parallel.
var storeLogMu sync.Mutex

func captureStores(t *testing.T, f func()) []Store {
	t.Helper()
	storeLogMu.Lock()
	defer storeLogMu.Unlock()
	ResetStoreLog()
	EnableStoreLog(true)
	f()
	EnableStoreLog(false)
	log, n := StoreLog()
	require.Equal(t, len(log), n, "store log overflow")
	return log
}

// postWrite reserves one slot, builds a WRITE, publishes it; returns the index.
func postWrite(t *testing.T, q *HostQP, m Mode) uint64 {
	t.Helper()
	idx, err := q.Reserve(1, m)
	require.NoError(t, err)
	q.PrepareWrite(q.WQEPtr(idx), uint16(idx), OpRDMAWrite, CtrlCQUpdate, 0, Addr{Addr: 0x1000, Key: 1}, Addr{Addr: 0x2000, Key: 2}, 64)
	require.NoError(t, q.MarkReady(idx, idx, m.Sharing, ReadyAtomicCAS))
	return idx
}

func db(q *HostQP, pi uint64) Store {
	return Store{Addr: q.DoorbellAddr(), Value: q.PrepareDB(pi), Bytes: 8}
}

func dbr(q *HostQP, pi uint64) Store {
	return Store{Addr: q.DBRAddr(), Value: uint64(PrepareDBR(uint32(pi))), Bytes: 4}
}

func mailbox(q *HostQP, pi uint64) Store {
	return Store{Addr: q.MailboxAddr(), Value: pi, Bytes: 8}
}

func TestSubmitSequences(t *testing.T) {
	type want func(q *HostQP, pi uint64) []Store
	// GPU_SM_DB (our doorbell order): the DBR, then one doorbell.
	dbSeq := func(q *HostQP, pi uint64) []Store { return []Store{dbr(q, pi), db(q, pi)} }
	noDBRSeq := func(q *HostQP, pi uint64) []Store { return []Store{db(q, pi)} }
	proxySeq := func(q *HostQP, pi uint64) []Store { return []Store{mailbox(q, pi)} }
	// A non-proxy QP reached through the proxy path: the raw PI lands on its doorbell (reference table).
	rawPISeq := func(q *HostQP, pi uint64) []Store { return []Store{{Addr: q.DoorbellAddr(), Value: pi, Bytes: 8}} }
	none := func(*HostQP, uint64) []Store { return nil }

	cases := []struct {
		name     string
		stored   Handler // runtime handler in the QP
		template Handler
		opt      CodeOpt
		want     want
		piMoves  bool
	}{
		{"auto/db", HandlerGPUSMDB, HandlerAuto, 0, dbSeq, true},
		{"auto/no-dbr", HandlerGPUSMNoDBR, HandlerAuto, 0, noDBRSeq, true},
		{"auto/proxy", HandlerCPUProxy, HandlerAuto, 0, proxySeq, false},
		{"auto/proxy update PI", HandlerCPUProxy, HandlerAuto, CodeOptCPUProxyUpdatePI, proxySeq, true},
		{"auto/bf is db", HandlerGPUSMBF, HandlerAuto, 0, dbSeq, true},
		{"template bf is db", HandlerCPUProxy, HandlerGPUSMBF, 0, func(q *HostQP, pi uint64) []Store {
			m := Store{Addr: q.MailboxAddr(), Value: q.PrepareDB(pi), Bytes: 8}
			d := Store{Addr: q.DBRAddr(), Value: uint64(PrepareDBR(uint32(pi))), Bytes: 4}
			return []Store{d, m}
		}, true},
		{"template db ignores runtime", HandlerGPUSMNoDBR, HandlerGPUSMDB, 0, dbSeq, true},
		{"template proxy, runtime no-dbr", HandlerGPUSMNoDBR, HandlerCPUProxy, 0, noDBRSeq, true},
		{"template no-dbr, runtime db goes proxy", HandlerGPUSMDB, HandlerGPUSMNoDBR, 0, rawPISeq, false},
		{"db skip ringing", HandlerGPUSMDB, HandlerAuto, CodeOptSkipDBRinging, none, false},
		{"no-dbr skip ringing", HandlerGPUSMNoDBR, HandlerAuto, CodeOptSkipDBRinging, none, false},
		{"proxy ignores skip ringing", HandlerCPUProxy, HandlerAuto, CodeOptSkipDBRinging, proxySeq, false},
	}
	for _, tc := range cases {
		for _, s := range []Sharing{SharingExclusive, SharingCTA, SharingGPU} {
			q := newHostQP(t, HostConfig{SQWQEs: 16, Handler: tc.stored})
			m := Mode{Sharing: s, Handler: tc.template, Opt: tc.opt}
			var pis []uint64
			got := captureStores(t, func() {
				for k := 0; k < 3; k++ {
					idx := postWrite(t, q, m)
					require.NoError(t, q.Submit(idx+1, m))
					pis = append(pis, idx+1)
				}
				// A stale submit (PI not advanced) rings nothing on the DB paths.
				if tc.piMoves && !(tc.stored == HandlerCPUProxy && tc.template == HandlerAuto) {
					require.NoError(t, q.Submit(2, m))
				}
			})
			var want []Store
			for _, pi := range pis {
				want = append(want, tc.want(q, pi)...)
			}
			if tc.stored == HandlerCPUProxy && tc.template == HandlerAuto {
				// EXCLUSIVE stores the mailbox directly; shared modes fetch-max it: one logged store each.
				assert.Equal(t, uint64(3), q.Mailbox(), "%s/%d mailbox", tc.name, s)
			}
			if len(want) == 0 {
				assert.Emptyf(t, got, "%s sharing %d", tc.name, s)
			} else {
				assert.Equalf(t, want, got, "%s sharing %d", tc.name, s)
			}
			_, _, pi := q.Indexes()
			if tc.piMoves {
				assert.Equalf(t, uint64(3), pi, "%s sharing %d: sq_wqe_pi", tc.name, s)
			} else {
				assert.Equalf(t, uint64(0), pi, "%s sharing %d: sq_wqe_pi", tc.name, s)
			}
		}
	}
}

func TestSubmitMultiQPs(t *testing.T) {
	q0 := newHostQP(t, HostConfig{SQWQEs: 16, Handler: HandlerGPUSMDB})
	q1 := newHostQP(t, HostConfig{QPN: 0x77, SQWQEs: 16, Handler: HandlerGPUSMNoDBR})
	m := Mode{Sharing: SharingGPU, Handler: HandlerAuto}
	got := captureStores(t, func() { require.NoError(t, q0.SubmitMulti(q1.QP, 4, 9, m)) })
	// AUTO follows qps[0] (DB) for both QPs: every DBR, then every doorbell.
	assert.Equal(t, []Store{dbr(q0, 4), dbr(q1, 9), db(q0, 4), db(q1, 9)}, got)
	// A QP whose PI was already announced is left alone; the other one still rings.
	got = captureStores(t, func() { require.NoError(t, q0.SubmitMulti(q1.QP, 4, 12, m)) })
	assert.Equal(t, []Store{dbr(q1, 12), db(q1, 12)}, got)

	got = captureStores(t, func() { require.NoError(t, q1.SubmitMulti(q0.QP, 13, 5, m)) })
	assert.Equal(t, []Store{db(q1, 13), db(q0, 5)}, got, "no-DBR path: no locks, no DBR")

	p0 := newHostQP(t, HostConfig{SQWQEs: 16, Handler: HandlerCPUProxy})
	p1 := newHostQP(t, HostConfig{SQWQEs: 16, Handler: HandlerCPUProxy})
	got = captureStores(t, func() { require.NoError(t, p0.SubmitMulti(p1.QP, 3, 7, m)) })
	assert.Equal(t, []Store{mailbox(p0, 3), mailbox(p1, 7)}, got)

	got = captureStores(t, func() {
		require.NoError(t, q0.SubmitMulti(q1.QP, 20, 20, Mode{Sharing: SharingGPU, Opt: CodeOptSkipDBRinging}))
	})
	assert.Empty(t, got)
}

func TestAvailabilityCheck(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 4, CQEs: 4})
	m := Mode{Sharing: SharingGPU, Handler: HandlerGPUSMDB}
	for i := 0; i < 4; i++ {
		idx := postWrite(t, q, m)
		require.NoError(t, q.Submit(idx+1, m))
	}
	// The ring is full: slot 4 reuses slot 0, so the reservation waits for WQE 0's CQE.
	done := make(chan uint64)
	go func() {
		idx, err := q.Reserve(1, m)
		assert.NoError(t, err)
		done <- idx
	}()
	select {
	case <-done:
		t.Fatal("reserve returned while the slot was still in use")
	case <-time.After(50 * time.Millisecond):
	}
	q.Complete(0, CQEOpReq, 0)
	select {
	case idx := <-done:
		assert.Equal(t, uint64(4), idx)
	case <-time.After(5 * time.Second):
		t.Fatal("reserve did not return after the completion")
	}
	// With SKIP_AVAILABILITY_CHECK it returns at once even though WQE 1 has not completed.
	idx, err := q.Reserve(1, Mode{Sharing: SharingGPU, Opt: CodeOptSkipAvailabilityCheck})
	require.NoError(t, err)
	assert.Equal(t, uint64(5), idx)
}

func TestModeValidation(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 4})
	_, err := q.Put(Addr{}, Addr{}, 1, Mode{Sharing: 7})
	require.Error(t, err)
	_, err = q.Put(Addr{}, Addr{}, 1, Mode{Handler: 3})
	require.Error(t, err)
	_, err = NewHostQP(HostConfig{SQWQEs: 3, CQEs: 4, Handler: HandlerGPUSMDB})
	require.Error(t, err)
	_, err = NewHostQP(HostConfig{SQWQEs: 8, CQEs: 4, Handler: HandlerGPUSMDB})
	require.Error(t, err)
	_, err = FromPointer(nil)
	require.Error(t, err)
}
