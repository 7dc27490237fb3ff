package devhost

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/devstruct"
)

// bound is how long a device wait may take to give up on a failed QP. The
// waits return after a few loads; the margin is for a loaded CI machine.
const bound = 2 * time.Second

// returnsWithin runs f (a device call that used to spin forever) on its own
// goroutine and fails the test when it has not returned after d. A call that
// never returns stays blocked in C: the test still fails instead of hanging.
func returnsWithin(t *testing.T, d time.Duration, what string, f func()) time.Duration {
	t.Helper()
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
		return time.Since(start)
	case <-time.After(d):
		// The call still runs in C on memory the test's clean-up would free: stop here.
		t.Errorf("%s did not return within %v", what, d)
		fmt.Fprintf(os.Stderr, "FAIL: %s: %s did not return within %v; stopping the test binary\n", t.Name(), what, d)
		os.Exit(1)
		return 0
	}
}

// errCQE writes a complete requester-error CQE for WQE index idx, as a NIC
// does: syndromes in bytes 52..55, the WQE opcode in byte 56, the WQE counter
// in 60..61, op_own (REQ_ERR, owner of the lap) last.
func errCQE(q *HostQP, idx uint64, opcode, syndrome, vendor uint8) {
	var b [64]byte
	b[52], b[53], b[54], b[55] = 0x21, 0x22, vendor, syndrome
	b[56] = 0x08 // RDMA write
	b[60], b[61] = byte(idx>>8), byte(idx)
	x := idx + q.cqRsvd()
	owner := byte(0)
	if x&uint64(q.cfg.CQEs) != 0 {
		owner = 1
	}
	b[63] = opcode<<4 | owner
	q.WriteCQERaw(uint32(x), b)
}

// TestErrorRecordFromCQE: the poll that sees an error CQE records it (status,
// every syndrome, WQE opcode, counter and 64-bit index); later errors do not
// overwrite the first.
func TestErrorRecordFromCQE(t *testing.T) {
	for _, s := range []Sharing{SharingExclusive, SharingCTA, SharingGPU} {
		q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
		assert.Equal(t, devstruct.QPError{}, q.Error(), "a fresh QP has no record")
		for i := uint64(0); i < 19; i++ { // into the second lap of the CQ
			q.Complete(i, CQEOpReq, 0)
			require.NoError(t, q.PollCQAtDirect(i, s))
		}
		errCQE(q, 19, CQEOpReqErr, 0x13, 0x88)
		require.ErrorIs(t, q.PollCQAtDirect(19, s), syscall.EIO)
		want := devstruct.QPError{Status: devstruct.QPErrCQE, Syndrome: 0x13, VendorSyndrome: 0x88, HWSyndrome: 0x21,
			HWSyndromeType: 0x22, CQEOpcode: 13, WQEOpcode: 0x08, WQECounter: 19, WQEIndex: 19}
		assert.Equal(t, want, q.Error())
		assert.Equal(t, uint64(19), q.CQConsumerIndex(), "the error CQE is not consumed")

		errCQE(q, 20, CQEOpReqErr, 0x05, 0) // the flush that follows
		require.ErrorIs(t, q.PollCQAtDirect(20, s), syscall.EIO)
		assert.Equal(t, want, q.Error(), "the first failure stays recorded")
	}
}

// TestFlushRecordsTheCause: a poll that sees a flushed WQE (WR_FLUSH_ERR)
// records the error CQE of the WQE that failed before it, which says why;
// with no such CQE in the ring it records the flush.
func TestFlushRecordsTheCause(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
	for i := uint64(0); i < 3; i++ {
		q.Complete(i, CQEOpReq, 0)
	}
	errCQE(q, 3, CQEOpReqErr, 0x13, 0x77)
	errCQE(q, 4, CQEOpReqErr, 0x05, 0)
	errCQE(q, 5, CQEOpReqErr, 0x05, 0)
	require.ErrorIs(t, q.PollCQAtDirect(5, SharingGPU), syscall.EIO)
	e := q.Error()
	assert.Equal(t, [3]uint64{3, 0x13, 0x77}, [3]uint64{e.WQEIndex, uint64(e.Syndrome), uint64(e.VendorSyndrome)})

	// Moved to ERR by the host: nothing but flushes.
	r := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
	errCQE(r, 0, CQEOpReqErr, 0x05, 0)
	errCQE(r, 1, CQEOpReqErr, 0x05, 0)
	require.ErrorIs(t, r.PollCQAtDirect(1, SharingGPU), syscall.EIO)
	assert.Equal(t, [2]uint64{0, 0x05}, [2]uint64{r.Error().WQEIndex, uint64(r.Error().Syndrome)},
		"the earliest flush in the ring")
}

// TestWaitsReturnOnFailedQP: once the QP recorded an error, every blocking
// wait whose completion is not visible returns at once, including indexes
// more than one CQ lap ahead of the (stuck) consumer index, which DOCA would
// spin on forever.
func TestWaitsReturnOnFailedQP(t *testing.T) {
	for _, s := range []Sharing{SharingExclusive, SharingGPU} {
		q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
		m := Mode{Sharing: s, Handler: HandlerGPUSMDB, Opt: CodeOptSkipAvailabilityCheck}
		for i := 0; i < 40; i++ {
			_, err := q.Put(Addr{Addr: 0x1000, Key: 1}, Addr{Addr: 0x2000, Key: 2}, 8, m)
			require.NoError(t, err)
		}
		q.Complete(0, CQEOpReq, 0)
		errCQE(q, 1, CQEOpReqErr, 0x15, 0x81)
		require.ErrorIs(t, q.PollOneCQAt(1, s), syscall.EIO) // the probe records it

		for _, w := range []struct {
			name string
			f    func() error
		}{
			{"poll_cq_at(next)", func() error { return q.PollCQAtDirect(2, s) }},
			{"poll_cq_at(a lap ahead)", func() error { return q.PollCQAtDirect(1+16+3, s) }},
			{"poll_one_cq_at(next)", func() error { return q.PollOneCQAt(5, s) }},
			{"wait(ticket)", func() error { q.WaitDirect(7, s); return syscall.EIO }},
			{"wait(qp)", func() error { q.WaitAllDirect(s); return syscall.EIO }},
			{"get_wait(ticket)", func() error { return errOr(q.GetWaitDirect(Addr{}, 9, false, m), syscall.EIO) }},
			{"get_wait(mcst)", func() error { return errOr(q.GetWaitDirect(Addr{Addr: 0x3000, Key: 3}, 9, true, m), syscall.EIO) }},
			{"poll_cq(count)", func() error { return q.PollCQ(3, s, bound) }},
		} {
			var err error
			took := returnsWithin(t, bound, w.name, func() { err = w.f() })
			assert.ErrorIsf(t, err, syscall.EIO, "%s on a failed QP", w.name)
			t.Logf("%s returned after %v", w.name, took)
		}
		assert.Equal(t, uint8(0x15), q.Error().Syndrome, "still the first error")
	}
}

func errOr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// TestReserveReturnsOnFailedQP: the availability check of a full ring polls
// the CQE of the slot it reuses; on a failed QP it returns instead of
// spinning, so the high-level calls that reserve return too.
func TestReserveReturnsOnFailedQP(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
	m := Mode{Sharing: SharingGPU, Handler: HandlerGPUSMDB}
	for i := 0; i < 16; i++ {
		_, err := q.Put(Addr{Addr: 0x1000, Key: 1}, Addr{Addr: 0x2000, Key: 2}, 8, m)
		require.NoError(t, err)
	}
	for i := uint64(0); i < 3; i++ {
		q.Complete(i, CQEOpReq, 0)
	}
	errCQE(q, 3, CQEOpReqErr, 0x13, 0)
	// Slots 0..2 are free (their CQEs are visible); slot 3's CQE is the error; 4.. never complete.
	for i := 0; i < 8; i++ {
		var err error
		returnsWithin(t, bound, "put on a full ring of a failed QP", func() {
			_, err = q.Put(Addr{Addr: 0x1000, Key: 1}, Addr{Addr: 0x2000, Key: 2}, 8, m)
		})
		require.NoError(t, err)
	}
	assert.Equal(t, devstruct.QPErrCQE, q.Error().Status)
	assert.Equal(t, uint64(3), q.Error().WQEIndex)
}

// TestPollTimeout: with a bound set, a poll whose completion never shows up
// returns ETIMEDOUT after the bound and records it; every later wait on the
// QP returns at once. Without a bound (the default) nothing is recorded.
func TestPollTimeout(t *testing.T) {
	const ns = 30 * time.Millisecond
	q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
	require.ErrorIs(t, q.PollOneCQAt(0, SharingGPU), syscall.EBUSY)
	assert.Zero(t, q.Error().Status, "no bound: nothing recorded")

	q.SetPollTimeout(uint64(ns))
	var err error
	took := returnsWithin(t, ns+bound, "poll_cq_at with a bound", func() { err = q.PollCQAtDirect(4, SharingGPU) })
	require.ErrorIs(t, err, syscall.ETIMEDOUT)
	assert.GreaterOrEqual(t, took, ns, "returned after the bound, not before")
	assert.Equal(t, devstruct.QPError{Status: devstruct.QPErrTimeout, WQECounter: 4, WQEIndex: 4}, q.Error())

	took = returnsWithin(t, bound, "wait after a timeout", func() { q.WaitDirect(5, SharingGPU) })
	assert.Less(t, took, ns, "a failed QP's waits do not wait for the bound again")
	require.ErrorIs(t, q.PollOneCQAt(6, SharingGPU), syscall.ETIMEDOUT)
	require.ErrorIs(t, q.PollCQAtDirect(6, SharingGPU), syscall.ETIMEDOUT)

	// A completion that is visible still completes.
	q.Complete(0, CQEOpReq, 0)
	require.NoError(t, q.PollCQAtDirect(0, SharingGPU))
}

// TestCollapsedPollErrorsAndTimeout: the collapsed poll returns on an error
// CQE in entry 0 whatever WQE it names, and bounds both of its loops (the
// sq_wqe_pi gate and the CQE).
func TestCollapsedPollErrorsAndTimeout(t *testing.T) {
	m := Mode{Sharing: SharingGPU, Handler: HandlerGPUSMNoDBR}
	q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16, Handler: HandlerGPUSMNoDBR})
	require.NoError(t, q.Submit(10, m))
	q.CompleteCollapsed(2, CQEOpReqErr) // WQE 2 failed; index 9 will never be counted
	var err error
	returnsWithin(t, bound, "collapsed poll behind an error", func() { err = q.PollCQCollapsedAtDirect(9, SharingGPU) })
	require.ErrorIs(t, err, syscall.EIO)
	assert.Equal(t, devstruct.QPErrCQE, q.Error().Status)
	assert.Equal(t, uint16(2), q.Error().WQECounter)
	assert.Equal(t, uint64(9), q.Error().WQEIndex)

	const ns = 20 * time.Millisecond
	for _, gate := range []bool{true, false} {
		p := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16, Handler: HandlerGPUSMNoDBR})
		p.SetPollTimeout(uint64(ns))
		if !gate {
			require.NoError(t, p.Submit(10, m)) // past the gate; entry 0 stays INVALID
		}
		took := returnsWithin(t, ns+bound, "bounded collapsed poll", func() { err = p.PollCQCollapsedAtDirect(5, SharingGPU) })
		require.ErrorIs(t, err, syscall.ETIMEDOUT, "sq_wqe_pi gate %v", gate)
		assert.GreaterOrEqual(t, took, ns)
		assert.Equal(t, devstruct.QPErrTimeout, p.Error().Status)
	}
}

// TestConcurrentPollersOneRecord: threads polling different indexes of one
// failed QP all return, and exactly the error CQE's poller's record stays.
func TestConcurrentPollersOneRecord(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 64, CQEs: 64})
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = q.PollCQAtDirect(uint64(i), SharingGPU)
		}(i)
	}
	time.Sleep(10 * time.Millisecond) // let them spin
	for i := uint64(0); i < 5; i++ {
		q.Complete(i, CQEOpReq, 0)
	}
	errCQE(q, 5, CQEOpReqErr, 0x13, 0x42)
	returnsWithin(t, bound, "16 pollers of a failed QP", wg.Wait)
	for i, err := range errs {
		if i < 5 {
			assert.NoErrorf(t, err, "index %d completed", i)
		} else {
			assert.ErrorIsf(t, err, syscall.EIO, "index %d", i)
		}
	}
	e := q.Error()
	assert.Equal(t, devstruct.QPErrCQE, e.Status)
	assert.Equal(t, uint64(5), e.WQEIndex)
	assert.Equal(t, uint8(0x42), e.VendorSyndrome)
}

// TestUnmarkedCQPollsAsDOCA: a CQ that is not marked as embedded in an
// exported QP (a QP image the host did not fill) keeps DOCA's behaviour:
// errors are returned but not recorded, and no bound applies.
func TestUnmarkedCQPollsAsDOCA(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
	q.SetPollTimeout(1) // would fire at once if it applied
	q.clearCQFlags()
	require.ErrorIs(t, q.PollOneCQAt(0, SharingGPU), syscall.EBUSY)
	errCQE(q, 0, CQEOpReqErr, 0x13, 0)
	require.ErrorIs(t, q.PollCQAtDirect(0, SharingGPU), syscall.EIO)
	assert.Equal(t, devstruct.QPError{}, q.Error(), "nothing recorded")
	require.ErrorIs(t, q.PollOneCQAt(1, SharingGPU), syscall.EBUSY, "no failure known: still pending")
}
