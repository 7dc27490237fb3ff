package verbs

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5/emu"
)

// nextAsync waits for the next asynchronous event of c.
func nextAsync(t testing.TB, c *Context) *AsyncEvent {
	t.Helper()
	e, err := c.GetAsyncEvent(waitCtx(t))
	require.NoError(t, err)
	return e
}

// noAsync asserts that no asynchronous event is pending on c.
func noAsync(t testing.TB, c *Context) {
	t.Helper()
	e, err := c.TryGetAsyncEvent()
	require.ErrorIs(t, err, ErrAgain, "unexpected %v", e)
}

// A responder that meets an access violation (a WRITE with a wrong rkey)
// moves to ERR and raises QP_ACCESS_ERR on its QP; the requester's error
// completion is its own report, with no event.
func TestAsyncQPAccessError(t *testing.T) {
	a, b := newPair(t, defaultPairOpts())
	other, _ := openPD(t, "emu0") // another context of a's device: not its QP's events
	require.NoError(t, b.qp.PostSend(SendWR{WRID: 1, Opcode: WRRDMAWrite, Signaled: true,
		SGL: []SGE{{Addr: b.addr(0), Length: 8, LKey: b.mr.LKey()}}, RemoteAddr: a.addr(0), RKey: a.mr.RKey() + 1}))
	assert.ErrorIs(t, waitWC(t, b.cq, 1)[0].Err(), WCRemAccessErr)
	e := nextAsync(t, a.ctx)
	assert.Equal(t, AsyncEventQPAccessErr, e.Type)
	assert.Same(t, a.qp, e.QP)
	assert.Equal(t, QPStateERR, a.qp.State())
	assert.Equal(t, "DOCA_VERBS_EVENT_QP_ACCESS_ERR on "+a.qp.userName(), e.String())
	require.NoError(t, e.Ack())
	noAsync(t, a.ctx)
	noAsync(t, b.ctx)
	noAsync(t, other)
}

// A SEND longer than the receive it lands in is an invalid request: the
// responder QP raises QP_REQ_ERR.
func TestAsyncQPRequestError(t *testing.T) {
	a, b := newPair(t, defaultPairOpts())
	require.NoError(t, a.qp.PostRecv(RecvWR{WRID: 5, SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}}))
	require.NoError(t, b.qp.PostSend(SendWR{WRID: 1, Opcode: WRSend, Signaled: true,
		SGL: []SGE{{Addr: b.addr(0), Length: 64, LKey: b.mr.LKey()}}}))
	assert.Error(t, waitWC(t, b.cq, 1)[0].Err())
	assert.ErrorIs(t, waitWC(t, a.cq, 1)[0].Err(), WCLocLenErr)
	e := nextAsync(t, a.ctx)
	assert.Equal(t, AsyncEventQPReqErr, e.Type)
	assert.Same(t, a.qp, e.QP)
	require.NoError(t, e.Ack())
}

// A CQ overrun raises CQ_ERR on the CQ, then QP_FATAL on its QP, which
// the device moved to ERR; the CQ is known to be in error from then on.
// Events must be acknowledged before their objects close.
func TestAsyncCQErrorAndQPFatal(t *testing.T) {
	o := defaultPairOpts()
	o.cqSize = 4
	a := newEnd(t, "emu0", o)
	o.cqSize = 256
	b := newEnd(t, "emu1", o)
	connect(t, a, b, o)
	connect(t, b, a, o)
	overrun(t, a, b)
	e := nextAsync(t, a.ctx)
	require.Equal(t, AsyncEventCQErr, e.Type, "%v", e)
	assert.Same(t, a.cq, e.CQ)
	f := nextAsync(t, a.ctx)
	require.Equal(t, AsyncEventQPFatal, f.Type, "%v", f)
	assert.Same(t, a.qp, f.QP)
	assert.Equal(t, QPStateERR, a.qp.State())
	wcs := make([]WC, 16)
	n, err := a.cq.Poll(wcs)
	assert.Equal(t, 4, n, "the completions that fitted")
	require.NoError(t, err)
	_, err = a.cq.Poll(wcs)
	assert.ErrorIs(t, err, CQStatusOverflow, "known from the event")

	// Closing with the events unacknowledged is refused; a double Ack too.
	err = a.qp.Close()
	require.ErrorIs(t, err, ErrInUse)
	assert.ErrorIs(t, err, ErrUnackedEvents)
	require.NoError(t, f.Ack())
	err = f.Ack()
	require.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorIs(t, err, ErrAckExceeds)
	require.NoError(t, a.qp.Close())
	err = a.cq.Close()
	require.ErrorIs(t, err, ErrUnackedEvents)
	require.NoError(t, e.Ack())
}

// srqEnd is a QP on dev receiving through an SRQ, connected with peer.
func srqEnd(t *testing.T, dev string, peer *end, o pairOpts) (*end, *SRQ) {
	o.qp.RQWR, o.qp.RecvMaxSGE = 0, 0
	a := newEnd(t, dev, o)
	srq := newSRQ(t, a.ctx, SRQConfig{PD: a.pd, Type: SRQContiguous, WR: 16, MaxRecvSGE: 1})
	q, err := NewQP(a.ctx, QPConfig{PD: a.pd, SendCQ: a.cq, RecvCQ: a.cq, SRQ: srq, SQWR: 16, SendMaxSGE: 1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, q.Close()) })
	require.NoError(t, a.qp.Close()) // the end's own QP stays unused
	a.qp = q
	connect(t, a, peer, o)
	connect(t, peer, a, o)
	return a, srq
}

// An SRQ whose limit is armed raises SRQ_LIMIT_REACHED once, when a
// receive leaves fewer WQEs posted than the limit; a QP of the SRQ moved to
// ERR (here by software) raises LAST_WQE_REACHED.
func TestAsyncSRQLimitAndLastWQE(t *testing.T) {
	o := defaultPairOpts()
	b := newEnd(t, "emu1", o)
	a, srq := srqEnd(t, "emu0", b, o)
	for i := 0; i < 4; i++ {
		require.NoError(t, srq.PostRecv(RecvWR{WRID: uint64(i), SGL: []SGE{{Addr: a.addr(i * 64), Length: 64, LKey: a.mr.LKey()}}}))
	}
	require.NoError(t, srq.SetLimit(3))
	err := srq.SetLimit(17)
	require.ErrorIs(t, err, ErrInvalidValue)
	send := func() {
		require.NoError(t, b.qp.PostSend(SendWR{Opcode: WRSend, Signaled: true, SGL: []SGE{{Addr: b.addr(0), Length: 16, LKey: b.mr.LKey()}}}))
		waitWC(t, b.cq, 1)
		waitWC(t, a.cq, 1)
	}
	send() // 3 left: not below the limit
	noAsync(t, a.ctx)
	send() // 2 left
	e := nextAsync(t, a.ctx)
	assert.Equal(t, AsyncEventSRQLimitReached, e.Type)
	assert.Same(t, srq, e.SRQ)
	err = srq.Close()
	require.ErrorIs(t, err, ErrInUse)
	require.NoError(t, e.Ack())
	send() // 1 left: the limit fired once and is disarmed
	noAsync(t, a.ctx)

	require.NoError(t, a.qp.Modify(&QPAttr{NextState: QPStateERR}, QPAttrNextState))
	e = nextAsync(t, a.ctx)
	assert.Equal(t, AsyncEventQPLastWQEReached, e.Type)
	assert.Same(t, a.qp, e.QP)
	require.NoError(t, e.Ack())
	noAsync(t, a.ctx)
}

// A port set down raises PORT_ERR and reads DOWN; set up again, PORT_ACTIVE.
// The handle's descriptor works in an epoll loop.
func TestAsyncPortEvents(t *testing.T) {
	ctx, _ := openPD(t, "emu0")
	fd := ctx.AsyncEventFD()
	require.GreaterOrEqual(t, fd, 0)
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	require.NoError(t, err)
	defer syscall.Close(ep)
	require.NoError(t, syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}))
	evs := make([]syscall.EpollEvent, 2)

	require.NoError(t, emu.SetPortState("emu0", false))
	t.Cleanup(func() { emu.SetPortState("emu0", true) })
	n, err := syscall.EpollWait(ep, evs, 10000)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	e, err := ctx.TryGetAsyncEvent()
	require.NoError(t, err)
	assert.Equal(t, AsyncEventPortErr, e.Type)
	assert.Equal(t, uint8(1), e.Port)
	require.NoError(t, e.Ack())
	p, err := ctx.QueryPort(1)
	require.NoError(t, err)
	assert.Equal(t, PortDown, p.State)

	require.NoError(t, emu.SetPortState("emu0", true))
	e = nextAsync(t, ctx)
	assert.Equal(t, AsyncEventPortActive, e.Type)
	require.NoError(t, e.Ack())
	p, err = ctx.QueryPort(1)
	require.NoError(t, err)
	assert.Equal(t, PortActive, p.State)
	noAsync(t, ctx)
}

// A device that fails raises DEVICE_FATAL, and its QPs are in ERR.
func TestAsyncDeviceFatal(t *testing.T) {
	a, _ := newPair(t, defaultPairOpts())
	require.NoError(t, emu.InjectFatal("emu0"))
	e := nextAsync(t, a.ctx)
	assert.Equal(t, AsyncEventDeviceFatal, e.Type)
	assert.Nil(t, e.QP)
	require.NoError(t, e.Ack())
	assert.Equal(t, QPStateERR, a.qp.State())
	noAsync(t, a.ctx)
}

// The handle of a closed Context: named errors, and a waiter is released.
func TestAsyncMisuse(t *testing.T) {
	ctx, err := OpenDevice("emu0")
	require.NoError(t, err)
	errs := make(chan error, 1)
	go func() { _, err := ctx.GetAsyncEvent(context.Background()); errs <- err }()
	c2, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err = ctx.GetAsyncEvent(c2)
	require.ErrorIs(t, err, ErrTimeOut, "a second waiter times out while the first waits")
	time.Sleep(5 * time.Millisecond)
	require.NoError(t, ctx.Close())
	err = <-errs
	require.ErrorIs(t, err, ErrBadState)
	assert.ErrorIs(t, err, ErrChannelClosed)
	_, err = ctx.GetAsyncEvent(context.Background())
	require.ErrorIs(t, err, ErrChannelClosed)
	_, err = ctx.TryGetAsyncEvent()
	require.ErrorIs(t, err, ErrChannelClosed)
	assert.Equal(t, -1, ctx.AsyncEventFD())
	var nilCtx *Context
	_, err = nilCtx.GetAsyncEvent(context.Background())
	require.ErrorIs(t, err, ErrInvalidValue)
	var nilEv *AsyncEvent
	require.ErrorIs(t, nilEv.Ack(), ErrInvalidValue)
}
