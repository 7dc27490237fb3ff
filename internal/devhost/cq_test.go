package devhost

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const shortWait = 200 * time.Millisecond

func TestPollOneCQAtStates(t *testing.T) {
	for _, s := range []Sharing{SharingExclusive, SharingCTA, SharingGPU} {
		q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
		err := q.PollOneCQAt(0, s)
		require.ErrorIs(t, err, syscall.EBUSY, "fresh ring (op_own 0xF1) shows nothing")
		q.Complete(0, CQEOpReq, 0)
		require.NoError(t, q.PollOneCQAt(0, s))
		assert.Equal(t, uint64(1), q.CQConsumerIndex())
		require.NoError(t, q.PollOneCQAt(0, s), "already consumed")
		require.ErrorIs(t, q.PollOneCQAt(17, s), syscall.EBUSY, "more than one lap ahead")
		q.Complete(1, CQEOpReq, 0)
		q.Complete(2, CQEOpReq, 0)
		require.NoError(t, q.PollOneCQAt(2, s), "a later index can be observed directly")
		assert.Equal(t, uint64(3), q.CQConsumerIndex())
	}
}

func TestPollCQAtOwnerParityAndCounter(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
	// Run 16-bit wqe_counter past its wrap, completing and polling every index.
	const n = 70000
	for i := uint64(0); i < n; i++ {
		q.Complete(i, CQEOpReq, 0)
		if err := q.PollCQAt(i, SharingGPU, shortWait); err != nil {
			t.Fatalf("index %d: %v", i, err)
		}
	}
	assert.Equal(t, uint64(n), q.CQConsumerIndex())
	// The slot of index n still holds the CQE of n-16 (previous lap): owner parity rejects it.
	require.ErrorIs(t, q.PollOneCQAt(n, SharingGPU), syscall.EBUSY)
}

func TestPollRejectsWrongCounter(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
	// Right slot and owner parity, but the CQE completes another WQE index: before sm_90 (and in
	// the host build) the wqe_counter must match too.
	q.Complete(16, CQEOpReq, 0) // slot 0, parity 1: wrong lap for index 0
	require.ErrorIs(t, q.PollOneCQAt(0, SharingGPU), syscall.EBUSY)
}

func TestCQERsvdOffset(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
	m := Mode{Sharing: SharingGPU, Handler: HandlerGPUSMDB, Opt: CodeOptSkipAvailabilityCheck}
	for i := 0; i < 21; i++ {
		_, err := q.Put(Addr{Addr: 1}, Addr{Addr: 2}, 8, m)
		require.NoError(t, err)
	}
	q.ResetTracking()
	rsvd, ready, pi := q.Indexes()
	require.Equal(t, [3]uint64{0, 0, 0}, [3]uint64{rsvd, ready, pi})
	// Index 0 now maps to CQ index 21: slot 5, lap 1.
	require.ErrorIs(t, q.PollOneCQAt(0, SharingGPU), syscall.EBUSY, "reset ring (0xFF) shows nothing")
	q.Complete(0, CQEOpReq, 0)
	cqe := q.CQE(21)
	assert.Equal(t, uint8(0x01), cqe[63], "CQE written at slot (0+21)&15 with owner 1")
	require.NoError(t, q.PollCQAt(0, SharingGPU, shortWait))
	assert.Equal(t, uint64(1), q.CQConsumerIndex())
}

func TestErrorCQEReturnedNotSpun(t *testing.T) {
	for _, s := range []Sharing{SharingExclusive, SharingGPU} {
		q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
		q.Complete(0, CQEOpReq, 0)
		q.Complete(1, CQEOpReqErr, 0x13)
		require.NoError(t, q.PollCQAt(0, s, shortWait))
		err := q.PollOneCQAt(1, s)
		require.ErrorIs(t, err, syscall.EIO)
		assert.Equal(t, uint64(1), q.CQConsumerIndex(), "an error CQE does not advance cqe_ci")
		// With an hour to wait, a poll that spun on the error CQE would
		// still be spinning when returnsWithin gives up.
		returnsWithin(t, 30*time.Second, "PollCQAt on an error CQE", func() { err = q.PollCQAt(1, s, time.Hour) })
		require.ErrorIs(t, err, syscall.EIO)
		require.ErrorIs(t, q.Wait(1, s, shortWait), syscall.EIO)
		assert.Equal(t, uint64(1), q.CQConsumerIndex())
		// The QP has failed: a later index that has no CQE yet fails at once too.
		require.ErrorIs(t, q.PollOneCQAt(2, s), syscall.EIO)

		// A responder error CQE (RESP_ERR) is an error as well (DOCA returns 0 for it).
		r := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
		r.Complete(0, CQEOpRespErr, 0x12)
		require.ErrorIs(t, r.PollCQAt(0, s, shortWait), syscall.EIO)
		assert.Equal(t, uint8(0x12), r.Error().Syndrome)
	}
}

func TestPollCQCount(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
	require.NoError(t, q.PollCQ(0, SharingGPU, shortWait))
	q.Complete(0, CQEOpReq, 0)
	q.Complete(1, CQEOpReq, 0)
	require.ErrorIs(t, q.PollCQ(3, SharingGPU, 20*time.Millisecond), ErrTimeout)
	require.NoError(t, q.PollCQ(2, SharingGPU, shortWait))
	assert.Equal(t, uint64(2), q.CQConsumerIndex())
}

func TestPollCollapsedCountSemantics(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16, Handler: HandlerGPUSMNoDBR})
	m := Mode{Sharing: SharingGPU, Handler: HandlerGPUSMNoDBR}
	require.NoError(t, q.Submit(6, m))
	require.ErrorIs(t, q.PollCQCollapsedAt(1, SharingGPU, 20*time.Millisecond), ErrTimeout, "entry 0 still INVALID")
	q.CompleteCollapsed(4, CQEOpReq) // WQE index 4 done: 5 WQEs completed
	require.NoError(t, q.PollCQCollapsedAt(5, SharingGPU, shortWait))
	assert.Equal(t, uint64(5), q.CQConsumerIndex())
	require.ErrorIs(t, q.PollCQCollapsedAt(6, SharingGPU, 20*time.Millisecond), ErrTimeout)
	require.ErrorIs(t, q.PollCQCollapsedAt(7, SharingGPU, 20*time.Millisecond), ErrTimeout, "sq_wqe_pi gate")

	// Across the 16-bit wrap: completed count 0x10002 is rebuilt from wqe_counter 1.
	require.NoError(t, q.Submit(0x10003, m))
	q.CompleteCollapsed(1, CQEOpReq)
	require.NoError(t, q.PollCQCollapsedAt(0x10002, SharingGPU, shortWait))
	assert.Equal(t, uint64(0x10002), q.CQConsumerIndex())

	q.CompleteCollapsed(2, CQEOpReqErr)
	err := q.PollCQCollapsedAt(0x10003, SharingGPU, shortWait)
	require.ErrorIs(t, err, syscall.EIO)
	assert.Equal(t, uint64(0x10002), q.CQConsumerIndex())
}

func TestCQUpdateDBRec(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
	for i := uint64(0); i < 3; i++ {
		q.Complete(i, CQEOpReq, 0)
	}
	require.NoError(t, q.PollCQAt(2, SharingGPU, shortWait))
	got := q.CQUpdateDBRec(0xFFFFFE, true)
	assert.Equal(t, uint32(1), got, "(3 + 0xFFFFFE) & 0xFFFFFF")
	assert.Equal(t, uint32(0), q.CQDBR(), "overrun CQs do not write the DBR")
	got = q.CQUpdateDBRec(4, false)
	assert.Equal(t, uint32(5), got)
	assert.Equal(t, PrepareDBR(5), q.CQDBR(), "BE32 of the 24-bit index")
	assert.Equal(t, uint64(5), q.CQConsumerIndex())
}

func TestPollErrorNamesOperation(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: 16})
	err := q.PollOneCQAt(3, SharingGPU)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "poll_one_cq_at 3")
	assert.False(t, errors.Is(err, syscall.EIO))
}
