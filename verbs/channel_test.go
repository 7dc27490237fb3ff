package verbs

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// chanPair is a connected pair whose CQs have completion channels.
func chanPair(t *testing.T) (*end, *end) {
	o := defaultPairOpts()
	o.compChannel = true
	return newPair(t, o)
}

// write posts one signalled 8-byte RDMA WRITE from a to b.
func write(t testing.TB, a, b *end, wrid uint64) {
	t.Helper()
	require.NoError(t, a.qp.PostSend(SendWR{WRID: wrid, Opcode: WRRDMAWrite, Signaled: true,
		SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(0), RKey: b.mr.RKey()}))
}

// overrun posts 16 signalled WRITEs to a's 4-entry CQ, which nobody
// polls: the CQ overruns. Once this package knows it (an event read
// meanwhile), a post is refused instead: that ends the loop.
func overrun(t testing.TB, a, b *end) {
	t.Helper()
	for i := 0; i < 16; i++ {
		err := a.qp.PostSend(SendWR{WRID: uint64(i), Opcode: WRRDMAWrite, Signaled: true,
			SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(0), RKey: b.mr.RKey()})
		if errors.Is(err, CQStatusOverflow) {
			return
		}
		require.NoError(t, err)
	}
}

// waitCtx is a generous bound for waits that succeed.
func waitCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// noEvent asserts that no event is pending on ch.
func noEvent(t testing.TB, ch *CompChannel) {
	t.Helper()
	q, err := ch.TryGetEvent()
	assert.Nil(t, q)
	require.ErrorIs(t, err, ErrAgain)
}

// A goroutine blocked in GetEvent wakes on the completion of an armed CQ
// and gets that CQ; the event counts until acknowledged.
func TestCompChannelWakesBlockedGoroutine(t *testing.T) {
	a, b := chanPair(t)
	assert.Same(t, a.ch, a.cq.CompChannel())
	require.NoError(t, a.cq.ReqNotify(false))
	got := make(chan *CQ, 1)
	errs := make(chan error, 1)
	go func() {
		q, err := a.ch.GetEvent(waitCtx(t))
		got <- q
		errs <- err
	}()
	time.Sleep(5 * time.Millisecond) // let it block (not required for the assertions)
	write(t, a, b, 1)
	require.NoError(t, <-errs)
	assert.Same(t, a.cq, <-got)
	assert.Equal(t, uint64(1), waitWC(t, a.cq, 1)[0].WRID)
	r, k := a.cq.EventCounts()
	assert.Equal(t, [2]uint64{1, 0}, [2]uint64{r, k})
	require.NoError(t, a.cq.AckEvents(1))
	r, k = a.cq.EventCounts()
	assert.Equal(t, [2]uint64{1, 1}, [2]uint64{r, k})
}

// The channel's descriptor works in a program's own epoll loop: readable
// while an event is pending, not once it is taken.
func TestCompChannelEpoll(t *testing.T) {
	a, b := chanPair(t)
	fd := a.ch.FD()
	require.GreaterOrEqual(t, fd, 0)
	fl, err := fcntlFlags(fd)
	require.NoError(t, err)
	assert.NotZero(t, fl&syscall.O_NONBLOCK, "the descriptor is nonblocking")
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	require.NoError(t, err)
	defer syscall.Close(ep)
	require.NoError(t, syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}))
	evs := make([]syscall.EpollEvent, 4)
	n, err := syscall.EpollWait(ep, evs, 0)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing pending yet")

	for round := uint64(1); round <= 3; round++ {
		require.NoError(t, a.cq.ReqNotify(false))
		write(t, a, b, round)
		for {
			n, err = syscall.EpollWait(ep, evs, 10000)
			if err != syscall.EINTR {
				break
			}
		}
		require.NoError(t, err)
		require.Equal(t, 1, n, "round %d: the descriptor became readable", round)
		assert.Equal(t, int32(fd), evs[0].Fd)
		q, err := a.ch.TryGetEvent()
		require.NoError(t, err)
		assert.Same(t, a.cq, q)
		n, err = syscall.EpollWait(ep, evs, 0)
		require.NoError(t, err)
		assert.Zero(t, n, "round %d: not readable once the event is taken", round)
		noEvent(t, a.ch)
		require.NoError(t, a.cq.AckEvents(1))
		assert.Equal(t, round, waitWC(t, a.cq, 1)[0].WRID)
	}
}

func fcntlFlags(fd int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

// Completions of a CQ that is not armed raise no event; an arm raises
// exactly one however many completions follow, and the next event needs
// the next arm. Requester CQEs are written by one goroutine of the
// emulated device in order, and a CQE's event is on the channel before
// the device writes its next CQE: so once a later completion is polled,
// every event an earlier one could raise is there.
func TestCompChannelOneEventPerArm(t *testing.T) {
	a, b := chanPair(t)
	write(t, a, b, 1)
	write(t, a, b, 2)
	waitWC(t, a.cq, 2)
	noEvent(t, a.ch)

	require.NoError(t, a.cq.ReqNotify(false))
	for i := uint64(3); i <= 6; i++ {
		write(t, a, b, i)
	}
	waitWC(t, a.cq, 4)
	q, err := a.ch.GetEvent(waitCtx(t))
	require.NoError(t, err)
	assert.Same(t, a.cq, q)
	write(t, a, b, 7) // after an event the CQ is not armed
	waitWC(t, a.cq, 1)
	noEvent(t, a.ch)

	require.NoError(t, a.cq.ReqNotify(false)) // the next arm, the next event
	write(t, a, b, 8)
	write(t, a, b, 9)
	waitWC(t, a.cq, 2)
	_, err = a.ch.GetEvent(waitCtx(t))
	require.NoError(t, err)
	write(t, a, b, 10)
	waitWC(t, a.cq, 1)
	noEvent(t, a.ch)
	require.NoError(t, a.cq.AckEvents(2))
}

// An arm with a completion written and not yet polled fires at once:
// nothing is lost between a program's last poll and its arm.
func TestCompChannelArmWithPendingCompletion(t *testing.T) {
	a, b := chanPair(t)
	write(t, a, b, 1)
	// Wait for the CQE to be written, without consuming it.
	ring, _, _ := a.cq.Ring()
	deadline := time.Now().Add(10 * time.Second)
	for !mlx5.CQEOwned(mem(ring, cqeSize)[63], 0, uint(log2(uint64(a.cq.entries)))) {
		require.True(t, time.Now().Before(deadline), "the completion was never written")
		time.Sleep(100 * time.Microsecond)
	}
	require.NoError(t, a.cq.ReqNotify(false))
	q, err := a.ch.GetEvent(waitCtx(t))
	require.NoError(t, err)
	assert.Same(t, a.cq, q)
	require.NoError(t, a.cq.AckEvents(1))
	assert.Equal(t, uint64(1), waitWC(t, a.cq, 1)[0].WRID)
}

// An arm for solicited completions ignores the others and fires on a
// receive of a SEND posted with Solicited.
func TestCompChannelSolicitedOnly(t *testing.T) {
	a, b := chanPair(t)
	for i := 0; i < 3; i++ {
		require.NoError(t, a.qp.PostRecv(RecvWR{WRID: uint64(100 + i), SGL: []SGE{{Addr: a.addr(4096 + 512*i), Length: 512, LKey: a.mr.LKey()}}}))
	}
	require.NoError(t, a.cq.ReqNotify(true))
	send := func(wrid uint64, se bool) {
		require.NoError(t, b.qp.PostSend(SendWR{WRID: wrid, Opcode: WRSend, Signaled: true, Solicited: se,
			SGL: []SGE{{Addr: b.addr(0), Length: 16, LKey: b.mr.LKey()}}}))
		waitWC(t, b.cq, 1)
	}
	send(1, false)
	send(2, false)
	waitWC(t, a.cq, 2) // both receives written, in order, by a's device
	noEvent(t, a.ch)
	send(3, true)
	q, err := a.ch.GetEvent(waitCtx(t))
	require.NoError(t, err)
	assert.Same(t, a.cq, q)
	assert.Equal(t, uint64(102), waitWC(t, a.cq, 1)[0].WRID)
	require.NoError(t, a.cq.AckEvents(1))
}

// Two goroutines waiting on one channel receive each event once.
func TestCompChannelConcurrentWaiters(t *testing.T) {
	a, b := chanPair(t)
	res := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() {
			_, err := a.ch.GetEvent(waitCtx(t))
			res <- err
		}()
	}
	for i := uint64(1); i <= 2; i++ {
		require.NoError(t, a.cq.ReqNotify(false))
		write(t, a, b, i)
		require.NoError(t, <-res)
		waitWC(t, a.cq, 1)
	}
	noEvent(t, a.ch)
	require.NoError(t, a.cq.AckEvents(2))
}

// The misuses of the event API are named errors, and nothing hangs.
func TestCompChannelMisuse(t *testing.T) {
	a, b := chanPair(t)

	// A wait bounded by a context: ErrTimeOut at its deadline, ErrShutdown
	// when cancelled.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := a.ch.GetEvent(ctx)
	require.ErrorIs(t, err, ErrTimeOut)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(5 * time.Millisecond); cancel() }()
	_, err = a.ch.GetEvent(ctx)
	require.ErrorIs(t, err, ErrShutdown)
	assert.ErrorIs(t, err, context.Canceled)

	// Acknowledging more than received.
	err = a.cq.AckEvents(1)
	require.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorIs(t, err, ErrAckExceeds)
	require.NoError(t, a.cq.ReqNotify(false))
	write(t, a, b, 1)
	_, err = a.ch.GetEvent(waitCtx(t))
	require.NoError(t, err)
	waitWC(t, a.cq, 1)
	err = a.cq.AckEvents(2)
	require.ErrorIs(t, err, ErrAckExceeds)

	// A CQ with an unacknowledged event refuses to close, and stays usable.
	require.NoError(t, a.qp.Close())
	err = a.cq.Close()
	require.ErrorIs(t, err, ErrInUse)
	assert.ErrorIs(t, err, ErrUnackedEvents)
	assert.Contains(t, err.Error(), "1 events received and not acknowledged")
	require.NoError(t, a.cq.AckEvents(1))

	// A channel refuses to close under its CQ.
	err = a.ch.Close()
	require.ErrorIs(t, err, ErrInUse)

	// Arming a CQ without a channel.
	plain, err := NewCQ(b.ctx, CQConfig{Size: 16})
	require.NoError(t, err)
	err = plain.ReqNotify(false)
	require.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorIs(t, err, ErrNoChannel)
	require.NoError(t, plain.Close())

	// A channel of another device.
	_, err = NewCQ(b.ctx, CQConfig{Size: 16, CompChannel: a.ch})
	require.ErrorIs(t, err, ErrInvalidValue)

	// Get on a closed channel, and a waiter blocked when it closes.
	ch, err := a.ctx.NewCompChannel()
	require.NoError(t, err)
	errs := make(chan error, 1)
	go func() { _, err := ch.GetEvent(context.Background()); errs <- err }()
	time.Sleep(5 * time.Millisecond)
	require.NoError(t, ch.Close())
	err = <-errs
	require.ErrorIs(t, err, ErrBadState)
	assert.ErrorIs(t, err, ErrChannelClosed)
	_, err = ch.GetEvent(context.Background())
	require.ErrorIs(t, err, ErrChannelClosed)
	_, err = ch.TryGetEvent()
	require.ErrorIs(t, err, ErrChannelClosed)
	assert.Equal(t, -1, ch.FD())
	require.NoError(t, ch.Close(), "a second Close")
	var nilCh *CompChannel
	_, err = nilCh.GetEvent(context.Background())
	require.ErrorIs(t, err, ErrInvalidValue)
	_, err = (&CompChannel{}).TryGetEvent()
	require.ErrorIs(t, err, ErrInvalidValue)
}

// A CQ the device puts in error (overrun) cannot be armed (ErrIOFailed
// wrapping its *CQError), and a goroutine waiting on its channel is woken
// with that error instead of waiting forever.
func TestCompChannelCQError(t *testing.T) {
	o := defaultPairOpts()
	o.compChannel = true
	o.cqSize = 4
	a := newEnd(t, "emu0", o)
	o.cqSize = 256
	o.compChannel = false
	b := newEnd(t, "emu1", o)
	connect(t, a, b, o)
	connect(t, b, a, o)
	require.NoError(t, a.cq.ReqNotify(true)) // solicited only: the WRITEs do not fire it
	errs := make(chan error, 1)
	cqs := make(chan *CQ, 1)
	go func() {
		q, err := a.ch.GetEvent(waitCtx(t))
		cqs <- q
		errs <- err
	}()
	overrun(t, a, b)
	err := <-errs
	require.ErrorIs(t, err, ErrIOFailed)
	assert.ErrorIs(t, err, CQStatusOverflow)
	assert.Same(t, a.cq, <-cqs)
	err = a.cq.ReqNotify(false)
	require.ErrorIs(t, err, ErrIOFailed)
	var ce *CQError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, a.cq.CQN(), ce.CQN)
	r, _ := a.cq.EventCounts()
	assert.Zero(t, r, "the error is no completion event to acknowledge")
}

// PollWaitContext waits without a bound of its own: until the
// completions come, or its context ends.
func TestPollWaitContext(t *testing.T) {
	a, b := newPair(t, defaultPairOpts())
	wcs := make([]WC, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	n, err := a.cq.PollWaitContext(ctx, wcs, 1)
	assert.Zero(t, n)
	require.ErrorIs(t, err, ErrTimeOut)
	go func() { time.Sleep(5 * time.Millisecond); write(t, a, b, 9) }()
	n, err = a.cq.PollWaitContext(context.Background(), wcs, 1)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, uint64(9), wcs[0].WRID)
	_, err = a.cq.PollWaitContext(context.Background(), wcs, 2)
	require.ErrorIs(t, err, ErrInvalidValue)
}
