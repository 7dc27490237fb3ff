package verbs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mmio"
)

// Errors of the event API, found with errors.Is in the *Error a call
// returns (its Code says the DOCA class: ErrInUse, ErrInvalidValue,
// ErrBadState).
var (
	// ErrUnackedEvents: a CQ (or QP, SRQ) still has events that were
	// received and not acknowledged; it cannot be closed (DOCA and
	// rdma-core wait there; this package refuses instead of hanging).
	ErrUnackedEvents = errors.New("events received and not acknowledged")
	// ErrAckExceeds: an acknowledgement of more events than were received
	// and not yet acknowledged.
	ErrAckExceeds = errors.New("acknowledging more events than were received")
	// ErrChannelClosed: the completion channel (or the context's
	// asynchronous event handle) was closed before or during the wait.
	ErrChannelClosed = errors.New("event channel closed")
	// ErrNoChannel: the CQ was made without a completion channel, so an
	// event it raised would reach no one.
	ErrNoChannel = errors.New("CQ has no completion channel")
)

// CompChannel is a completion channel (doca_verbs_comp_channel): the
// events of the CQs created with it (CQConfig.CompChannel), each raised
// by one arm of its CQ (CQ.ReqNotify) and one completion.
//
// The blocking way to wait for completions on the host:
//
//	ch, _ := vctx.NewCompChannel()
//	cq, _ := dev.NewCQ(verbs.CQConfig{Size: 256, CompChannel: ch})
//	cq.ReqNotify(false)                 // arm before the first wait
//	for {
//		q, err := ch.GetEvent(ctx)      // sleeps: no CPU while idle
//		...
//		q.AckEvents(1)                  // batches allowed
//		for n, _ := q.Poll(wcs); n > 0; n, _ = q.Poll(wcs) { ... }
//		q.ReqNotify(false)              // re-arm for the next event
//	}
//
// Nothing is lost between the last poll and the re-arm: an arm whose
// consumer index is behind the completions written fires at once.
//
// FD is the channel's file descriptor for a program that runs its own
// epoll loop: nonblocking, readable while an event is pending; read the
// events with TryGetEvent. GetEvent waits on the same descriptor through
// the Go runtime's poller, so a blocked goroutine holds no thread.
//
// On an emulated device the channel is an eventfd the emulated kernel
// signals from the event queue entries the emulated firmware writes; on a
// ConnectX it is a DevX event channel (mlx5dv_devx_create_event_channel)
// subscribed to each CQ's completion events.
//
// A channel is made on a Context and closed after its CQs (Close fails
// with ErrInUse naming them, as ibv_destroy_comp_channel fails with EBUSY).
// Its methods are safe for concurrent use; concurrent GetEvent calls
// receive each event once.
type CompChannel struct {
	node
	ctx     *Context
	ch      mlx5.EventChannel
	file    *os.File // a duplicate of the descriptor, in the runtime's poller
	raw     syscall.RawConn
	waiter  chan struct{} // held by the one GetEvent waiting in the poller
	closing chan struct{}

	cqMu sync.Mutex
	cqs  map[uint32]*CQ // attached CQs by CQN, the subscriptions' cookie
}

// NewCompChannel creates a completion channel on the device
// (doca_verbs_comp_channel_create).
func (c *Context) NewCompChannel() (*CompChannel, error) {
	const op = "doca_verbs_comp_channel_create"
	if err := c.enterCtx(op); err != nil {
		return nil, err
	}
	defer c.leave()
	if currentMode() == ModeSDK {
		return nil, openOnly(op, "the completion channel")
	}
	ch := &CompChannel{ctx: c, waiter: make(chan struct{}, 1), closing: make(chan struct{}), cqs: map[uint32]*CQ{}}
	var err error
	if ch.ch, ch.file, ch.raw, err = openEventChannel(op, c); err != nil {
		return nil, err
	}
	if err := c.acquire(op, "Context", &ch.node); err != nil {
		ch.file.Close()
		ch.ch.Close()
		return nil, err
	}
	ch.init("CompChannel", fmt.Sprintf("completion channel %d on %s", ch.ch.FD(), c.name))
	return ch, nil
}

// openEventChannel opens a driver event channel and a duplicate of its
// descriptor that the runtime's poller watches.
func openEventChannel(op string, c *Context) (mlx5.EventChannel, *os.File, syscall.RawConn, error) {
	ch, err := c.dev.CreateEventChannel()
	if err != nil {
		code := ErrDriver
		if errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) {
			code = ErrNotSupported
		}
		return nil, nil, nil, wrapErr(op, code, err, "event channel on %s", c.name)
	}
	fd, err := dupCloexec(ch.FD())
	if err == nil {
		err = syscall.SetNonblock(fd, true)
		if err != nil {
			syscall.Close(fd)
		}
	}
	if err != nil {
		ch.Close()
		return nil, nil, nil, wrapErr(op, ErrOperatingSystem, err, "duplicate the event channel's descriptor")
	}
	f := os.NewFile(uintptr(fd), "event channel")
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		ch.Close()
		return nil, nil, nil, wrapErr(op, ErrOperatingSystem, err, "event channel descriptor")
	}
	return ch, f, raw, nil
}

// dupCloexec duplicates fd with close-on-exec (fcntl F_DUPFD_CLOEXEC).
func dupCloexec(fd int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// FD returns the channel's file descriptor
// (doca_verbs_comp_channel_get_handle): nonblocking, readable while an
// event is pending, for epoll or poll; -1 for a nil, zero or closed
// channel. It stays owned by the channel: do not read or close it; take
// the events with TryGetEvent.
func (ch *CompChannel) FD() int {
	if ch == nil || ch.use("doca_verbs_comp_channel_get_handle", "CompChannel") != nil {
		return -1
	}
	return ch.ch.FD()
}

// GetEvent waits for the next event of the channel and returns its CQ
// (doca_verbs_get_cq_event; CQ.UserContext is DOCA's cq_context). The
// event counts as received until CQ.AckEvents acknowledges it. GetEvent
// blocks until an event comes, ctx is done (ErrTimeOut wrapping ctx.Err()
// for a deadline, ErrShutdown for a cancellation) or the channel is closed
// (ErrBadState wrapping ErrChannelClosed). While it waits it holds no
// thread and burns no CPU.
//
// A CQ that the device puts in error raises no more completion events;
// GetEvent returns it, with an error (ErrIOFailed wrapping the *CQError),
// instead of leaving its waiter blocked. That event needs no
// acknowledgement.
func (ch *CompChannel) GetEvent(ctx context.Context) (*CQ, error) {
	const op = "doca_verbs_get_cq_event"
	if ch == nil {
		return nil, newErr(op, ErrInvalidValue, "nil completion channel")
	}
	if ctx == nil {
		return nil, newErr(op, ErrInvalidValue, "nil context.Context")
	}
	if err := ch.use(op, "CompChannel"); err != nil {
		return nil, ch.closedErr(op, err)
	}
	return waitEvent(op, ctx, ch.waiter, ch.closing, ch.file, ch.raw, ch.userName, func() (*CQ, bool, error) {
		return ch.tryGet(op)
	})
}

// TryGetEvent returns the next pending event without blocking, as
// GetEvent does, or ErrAgain when none is pending: the read of a program
// that waits on FD with its own epoll loop.
func (ch *CompChannel) TryGetEvent() (*CQ, error) {
	const op = "doca_verbs_get_cq_event"
	if ch == nil {
		return nil, newErr(op, ErrInvalidValue, "nil completion channel")
	}
	if err := ch.use(op, "CompChannel"); err != nil {
		return nil, ch.closedErr(op, err)
	}
	q, ok, err := ch.tryGet(op)
	if err == nil && !ok {
		return nil, newErr(op, ErrAgain, "no event pending on %s", ch.userName())
	}
	return q, err
}

// closedErr marks the error of a closed channel with ErrChannelClosed.
func (ch *CompChannel) closedErr(op string, err error) error {
	var e *Error
	if errors.As(err, &e) && e.Code == ErrBadState {
		return &Error{Op: op, Code: ErrBadState, Msg: e.Msg, Err: ErrChannelClosed}
	}
	return err
}

// tryGet takes the next event of a CQ still attached: ok is false when none
// is pending.
func (ch *CompChannel) tryGet(op string) (*CQ, bool, error) {
	for {
		ev, err := ch.ch.GetEvent()
		if errors.Is(err, syscall.EAGAIN) {
			return nil, false, nil
		}
		if err != nil {
			if errors.Is(err, syscall.EBADF) {
				return nil, false, &Error{Op: op, Code: ErrBadState, Msg: ch.userName(), Err: ErrChannelClosed}
			}
			return nil, false, driverErr(op, err, "read %s", ch.userName())
		}
		ch.cqMu.Lock()
		q := ch.cqs[uint32(ev.Cookie)]
		ch.cqMu.Unlock()
		if q == nil {
			continue // an event of a CQ closed since
		}
		switch ev.EQE.Type {
		case mlx5.EventComp:
			q.gotEvent()
			return q, true, nil
		case mlx5.EventCQError:
			return q, true, cqFailure(op, q, q.markFailed(ev.EQE.CQErrorSyndrome()))
		}
	}
}

// waitEvent is the blocking wait of GetEvent and GetAsyncEvent: try, then
// wait for the descriptor in the runtime's poller, until an event, ctx or
// the channel's close. One waiter at a time sits in the poller (waiter):
// a context's cancellation sets the descriptor's read deadline, which
// would wake every waiter.
func waitEvent[T any](op string, ctx context.Context, waiter, closing chan struct{}, f *os.File, raw syscall.RawConn,
	name func() string, try func() (T, bool, error)) (T, error) {
	var zero T
	select {
	case waiter <- struct{}{}:
	case <-ctx.Done():
		return zero, ctxErr(op, ctx, name())
	case <-closing:
		return zero, &Error{Op: op, Code: ErrBadState, Msg: name(), Err: ErrChannelClosed}
	}
	defer func() { <-waiter }()
	wake := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	defer wake()
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		return zero, &Error{Op: op, Code: ErrBadState, Msg: name(), Err: ErrChannelClosed}
	}
	for {
		if ctx.Err() != nil {
			return zero, ctxErr(op, ctx, name())
		}
		var v T
		var ok bool
		var terr error
		err := raw.Read(func(uintptr) bool {
			v, ok, terr = try()
			return ok || terr != nil
		})
		if ok || terr != nil {
			return v, terr
		}
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			if ctx.Err() == nil { // a cancellation of an earlier waiter's context
				f.SetReadDeadline(time.Time{})
			}
		case err != nil:
			return zero, &Error{Op: op, Code: ErrBadState, Msg: name(), Err: ErrChannelClosed}
		}
	}
}

// ctxErr is the error of a wait that ctx ended.
func ctxErr(op string, ctx context.Context, what string) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return wrapErr(op, ErrTimeOut, ctx.Err(), "waiting for an event of %s", what)
	}
	return wrapErr(op, ErrShutdown, ctx.Err(), "waiting for an event of %s", what)
}

// Close destroys the channel (doca_verbs_comp_channel_destroy): ErrInUse
// while CQs created with it are open. A GetEvent blocked on it returns
// ErrBadState wrapping ErrChannelClosed.
func (ch *CompChannel) Close() error {
	const op = "doca_verbs_comp_channel_destroy"
	if ch == nil {
		return newErr(op, ErrInvalidValue, "nil completion channel")
	}
	done, err := ch.beginClose(op, "CompChannel")
	if done || err != nil {
		return err
	}
	close(ch.closing)
	ferr := ch.file.Close() // wakes a waiter in the poller
	cerr := ch.ch.Close()
	if cerr != nil {
		err = driverErr(op, cerr, "close %s", ch.userName())
	} else if ferr != nil {
		err = wrapErr(op, ErrOperatingSystem, ferr, "close %s", ch.userName())
	}
	if err == nil {
		ch.ctx.release(&ch.node)
	}
	ch.endClose(err)
	return err
}

// attach subscribes CQ q (just created on the device) to the channel's
// completion and CQ error events.
func (ch *CompChannel) attach(op string, q *CQ) error {
	if err := ch.acquire(op, "CompChannel", &q.node); err != nil {
		return err
	}
	if err := ch.ch.Subscribe(q.obj, []mlx5.EventType{mlx5.EventComp, mlx5.EventCQError}, uint64(q.cqn)); err != nil {
		ch.release(&q.node)
		return driverErr(op, err, "subscribe CQ 0x%x to %s", q.cqn, ch.userName())
	}
	ch.cqMu.Lock()
	ch.cqs[q.cqn] = q
	ch.cqMu.Unlock()
	q.chn = ch
	return nil
}

// detach forgets CQ q, whose device object is destroyed (which ended its
// subscription).
func (ch *CompChannel) detach(q *CQ) {
	ch.cqMu.Lock()
	if ch.cqs[q.cqn] == q {
		delete(ch.cqs, q.cqn)
	}
	ch.cqMu.Unlock()
	ch.release(&q.node)
}

// cqEvents is a CQ's event state.
type cqEvents struct {
	mu    sync.Mutex
	got   uint64 // completion events GetEvent returned
	acked uint64
	sn    uint8 // arm sequence number: incremented per event received
}

func (q *CQ) gotEvent() {
	q.ev.mu.Lock()
	q.ev.got++
	q.ev.sn++
	q.ev.mu.Unlock()
}

// markFailed records a CQ error the device reported by event and returns
// the CQ's error.
func (q *CQ) markFailed(s mlx5.CQErrorSyndrome) *CQError {
	st := CQStatusOverflow
	if s == mlx5.CQErrorAccessViolation {
		st = CQStatusWriteFail
	}
	e := &CQError{CQN: q.cqn, Status: st}
	if !q.failed.CompareAndSwap(nil, e) {
		return q.failed.Load()
	}
	for _, qp := range q.qps.all() {
		qp.sawError()
	}
	return e
}

// ReqNotify arms the CQ for one event on its completion channel
// (doca_verbs_req_notify_cq): the next completion, or with solicitedOnly
// the next solicited one (a receive of a SEND or RDMA WRITE with immediate
// posted with SendWR.Solicited) or error completion. As on mlx5, it writes
// the arm word (sequence number, command, consumer index) into the CQ's
// doorbell record and rings the CQ doorbell of its UAR. A completion
// already written and not yet polled fires the arm at once. One arm gives
// at most one event: arm again after each.
//
// A CQ without a completion channel is ErrInvalidValue wrapping
// ErrNoChannel; a CQ in error (ReqNotify asks the device, QUERY_CQ) is
// ErrIOFailed wrapping the *CQError: it would never fire.
func (q *CQ) ReqNotify(solicitedOnly bool) error {
	const op = "doca_verbs_req_notify_cq"
	if q == nil {
		return newErr(op, ErrInvalidValue, "nil CQ")
	}
	if err := q.enter(op, "CQ"); err != nil {
		return err
	}
	defer q.leave()
	if q.sdk != nil {
		return openOnly(op, "CQ.ReqNotify")
	}
	if q.chn == nil {
		return &Error{Op: op, Code: ErrInvalidValue, Msg: q.userName(), Err: ErrNoChannel}
	}
	if e, err := q.queryStatus(op); err != nil {
		return err
	} else if e != nil {
		return cqFailure(op, q, e)
	}
	cmd := mlx5.CQArmNext
	if solicitedOnly {
		cmd = mlx5.CQArmSolicited
	}
	q.ev.mu.Lock()
	sn := q.ev.sn
	q.ev.mu.Unlock()
	q.pollMu.Lock()
	defer q.pollMu.Unlock()
	w := mlx5.CQArmWord(sn, cmd, q.ci)
	mmio.Store32(ptr(q.dbr+mlx5.CQDBRArmOffset), mlx5.BE32Native(w))
	mmio.WriteBarrier()
	mmio.Store64(ptr(q.uar.BaseAddr()+mlx5.UAROffsetCQArm), mlx5.CQArmDoorbell(w, q.cqn).Uint64())
	mmio.WriteBarrier()
	return nil
}

// AckEvents acknowledges n events of the CQ received with GetEvent
// (doca_verbs_ack_cq_events); acknowledging in batches is allowed and
// cheaper. More than were received and not yet acknowledged is
// ErrInvalidValue wrapping ErrAckExceeds (nothing is acknowledged). Close
// refuses a CQ with unacknowledged events.
func (q *CQ) AckEvents(n uint32) error {
	const op = "doca_verbs_ack_cq_events"
	if q == nil {
		return newErr(op, ErrInvalidValue, "nil CQ")
	}
	if err := q.use(op, "CQ"); err != nil {
		return err
	}
	q.ev.mu.Lock()
	defer q.ev.mu.Unlock()
	if left := q.ev.got - q.ev.acked; uint64(n) > left {
		return &Error{Op: op, Code: ErrInvalidValue, Msg: fmt.Sprintf("%d events of %s: %d received and not acknowledged", n, q.userName(), left), Err: ErrAckExceeds}
	}
	q.ev.acked += uint64(n)
	return nil
}

// EventCounts returns the completion events received with GetEvent and
// those acknowledged (rdma-core's comp_events_completed).
func (q *CQ) EventCounts() (received, acked uint64) {
	if q == nil {
		return 0, 0
	}
	q.ev.mu.Lock()
	defer q.ev.mu.Unlock()
	return q.ev.got, q.ev.acked
}

// CompChannel returns the CQ's completion channel, nil if it has none
// (doca_verbs_cq_attr_get_comp_channel).
func (q *CQ) CompChannel() *CompChannel {
	if q == nil {
		return nil
	}
	return q.chn
}

// checkAcked refuses to close a CQ with unacknowledged events.
func (q *CQ) checkAcked(op string) error {
	q.ev.mu.Lock()
	defer q.ev.mu.Unlock()
	if left := q.ev.got - q.ev.acked; left > 0 {
		return &Error{Op: op, Code: ErrInUse, Msg: fmt.Sprintf("%s has %d events received and not acknowledged (CQ.AckEvents)", q.userName(), left), Err: ErrUnackedEvents}
	}
	return nil
}
