package verbs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// AsyncEventType is the type of an asynchronous event. The first four are
// DOCA's (DOCA_VERBS_EVENT_*, same values); the others are extensions
// named after their ibverbs events (enum ibv_event_type).
type AsyncEventType int32

const (
	// AsyncEventQPFatal (DOCA_VERBS_EVENT_QP_FATAL): a local error moved
	// the QP to ERR (WQ_CATAS_ERROR): its CQ failed, or an operational
	// error of its own as a responder.
	AsyncEventQPFatal AsyncEventType = 0
	// AsyncEventQPReqErr (DOCA_VERBS_EVENT_QP_REQ_ERR): the QP, as
	// responder, received an invalid request and moved to ERR
	// (WQ_INVAL_REQ_ERROR).
	AsyncEventQPReqErr AsyncEventType = 1
	// AsyncEventQPAccessErr (DOCA_VERBS_EVENT_QP_ACCESS_ERR): the QP, as
	// responder, met an access violation (bad rkey, range, rights) and
	// moved to ERR (WQ_ACCESS_ERROR).
	AsyncEventQPAccessErr AsyncEventType = 2
	// AsyncEventCQErr (DOCA_VERBS_EVENT_CQ_ERR): the CQ overran or could
	// not be written (CQ_ERROR); CQ.Err reports the status.
	AsyncEventCQErr AsyncEventType = 3

	// AsyncEventQPLastWQEReached (IBV_EVENT_QP_LAST_WQE_REACHED): a QP of
	// an SRQ is in ERR; no receive of the SRQ completes on it any more.
	AsyncEventQPLastWQEReached AsyncEventType = 0x100
	// AsyncEventSRQLimitReached (IBV_EVENT_SRQ_LIMIT_REACHED): fewer
	// receives than the limit armed with SRQ.SetLimit are posted; the
	// limit is disarmed.
	AsyncEventSRQLimitReached AsyncEventType = 0x101
	// AsyncEventPortActive (IBV_EVENT_PORT_ACTIVE): a port became active.
	AsyncEventPortActive AsyncEventType = 0x102
	// AsyncEventPortErr (IBV_EVENT_PORT_ERR): a port went down.
	AsyncEventPortErr AsyncEventType = 0x103
	// AsyncEventDeviceFatal (IBV_EVENT_DEVICE_FATAL): the device failed;
	// its objects are unusable until it is reset.
	AsyncEventDeviceFatal AsyncEventType = 0x104
)

var asyncEventNames = map[AsyncEventType]string{
	AsyncEventQPFatal: "DOCA_VERBS_EVENT_QP_FATAL", AsyncEventQPReqErr: "DOCA_VERBS_EVENT_QP_REQ_ERR",
	AsyncEventQPAccessErr: "DOCA_VERBS_EVENT_QP_ACCESS_ERR", AsyncEventCQErr: "DOCA_VERBS_EVENT_CQ_ERR",
	AsyncEventQPLastWQEReached: "IBV_EVENT_QP_LAST_WQE_REACHED", AsyncEventSRQLimitReached: "IBV_EVENT_SRQ_LIMIT_REACHED",
	AsyncEventPortActive: "IBV_EVENT_PORT_ACTIVE", AsyncEventPortErr: "IBV_EVENT_PORT_ERR",
	AsyncEventDeviceFatal: "IBV_EVENT_DEVICE_FATAL",
}

// String returns the DOCA (or ibverbs) name of the type.
func (t AsyncEventType) String() string {
	if s, ok := asyncEventNames[t]; ok {
		return s
	}
	return fmt.Sprintf("AsyncEventType(%d)", int32(t))
}

// AsyncEvent is one asynchronous event (struct doca_verbs_async_event):
// its type and the object it concerns (QP, CQ or SRQ; Port for port
// events; none for a fatal device). Acknowledge it with Ack: its object
// cannot be closed before (ErrInUse wrapping ErrUnackedEvents).
type AsyncEvent struct {
	Type AsyncEventType
	QP   *QP
	CQ   *CQ
	SRQ  *SRQ
	Port uint8

	pending *atomic.Int64 // the object's count of unacknowledged events
	acked   atomic.Bool
}

func (e *AsyncEvent) String() string {
	switch {
	case e == nil:
		return "<nil>"
	case e.QP != nil:
		return e.Type.String() + " on " + e.QP.userName()
	case e.CQ != nil:
		return e.Type.String() + " on " + e.CQ.userName()
	case e.SRQ != nil:
		return e.Type.String() + " on " + e.SRQ.userName()
	case e.Port != 0:
		return fmt.Sprintf("%s on port %d", e.Type, e.Port)
	}
	return e.Type.String()
}

// Ack acknowledges the event (doca_verbs_ack_async_event); safe for
// concurrent use. A second Ack of one event is ErrInvalidValue wrapping
// ErrAckExceeds.
func (e *AsyncEvent) Ack() error {
	const op = "doca_verbs_ack_async_event"
	if e == nil {
		return newErr(op, ErrInvalidValue, "nil event")
	}
	if !e.acked.CompareAndSwap(false, true) {
		return &Error{Op: op, Code: ErrInvalidValue, Msg: e.String() + " was already acknowledged", Err: ErrAckExceeds}
	}
	if e.pending != nil {
		e.pending.Add(-1)
	}
	return nil
}

// asyncEvents is a Context's asynchronous event handle: a driver event
// channel subscribed to the device's unaffiliated events and to each
// object's, opened with the Context.
type asyncEvents struct {
	ch      mlx5.EventChannel // nil when the device has none (err)
	err     error
	file    *os.File
	raw     syscall.RawConn
	waiter  chan struct{}
	closing chan struct{}

	mu   sync.Mutex
	objs map[uint64]any // *QP, *CQ, *SRQ by subscription cookie
}

// Subscription cookies: the object's kind in the high half, its number in
// the low one; 0 for the device's unaffiliated events.
const (
	cookieCQ  = 1 << 32
	cookieQP  = 2 << 32
	cookieSRQ = 3 << 32
)

// openAsync opens the Context's asynchronous event handle. A device
// without event channels (rdma-core older than v26) leaves the Context
// without one: GetAsyncEvent then reports why.
func (c *Context) openAsync() {
	const op = "doca_verbs_get_async_event_handle"
	a := &c.async
	a.waiter, a.closing, a.objs = make(chan struct{}, 1), make(chan struct{}), map[uint64]any{}
	ch, f, raw, err := openEventChannel(op, c)
	if err == nil {
		if serr := ch.Subscribe(nil, []mlx5.EventType{mlx5.EventPortChange, mlx5.EventInternalError}, 0); serr != nil {
			err = driverErr(op, serr, "subscribe to the unaffiliated events of %s", c.name)
			f.Close()
			ch.Close()
		}
	}
	if err != nil {
		a.err = err
		logPrint(logWarning, fmt.Sprintf("%s: no asynchronous events: %v", c.name, err))
		return
	}
	a.ch, a.file, a.raw = ch, f, raw
}

// closeAsync closes the handle; a waiter returns ErrChannelClosed.
func (c *Context) closeAsync() {
	a := &c.async
	if a.ch == nil {
		return
	}
	close(a.closing)
	a.file.Close()
	a.ch.Close()
}

// subscribeAsync subscribes device object obj of a new QP, CQ or SRQ to
// its asynchronous events. A subscription the driver refuses leaves the
// object without events, with a warning: the object itself is fine.
func (c *Context) subscribeAsync(obj mlx5.Obj, cookie uint64, target any, types ...mlx5.EventType) {
	a := &c.async
	if a.ch == nil {
		return
	}
	a.mu.Lock()
	a.objs[cookie] = target
	a.mu.Unlock()
	if err := a.ch.Subscribe(obj, types, cookie); err != nil {
		a.mu.Lock()
		delete(a.objs, cookie)
		a.mu.Unlock()
		logPrint(logWarning, fmt.Sprintf("%s: no asynchronous events for object 0x%x: %v", c.name, uint32(cookie), err))
	}
}

// unsubscribeAsync forgets an object whose device object is destroyed
// (which ended its subscriptions).
func (c *Context) unsubscribeAsync(cookie uint64) {
	a := &c.async
	a.mu.Lock()
	delete(a.objs, cookie)
	a.mu.Unlock()
}

// AsyncEventFD returns the file descriptor of the device's asynchronous
// events (doca_verbs_get_async_event_handle): nonblocking, readable while
// an event is pending, for a program's own epoll loop (take the events
// with TryGetAsyncEvent); -1 when the device has none or the Context is
// closed. It stays owned by the Context.
func (c *Context) AsyncEventFD() int {
	if c == nil || c.use("doca_verbs_get_async_event_handle", "Context") != nil || c.async.ch == nil {
		return -1
	}
	return c.async.ch.FD()
}

// GetAsyncEvent waits for the next asynchronous event of the device
// (doca_verbs_get_async_event): until one comes, ctx is done (ErrTimeOut
// or ErrShutdown wrapping ctx.Err()) or the Context is closed
// (ErrBadState wrapping ErrChannelClosed). Several waiters receive each
// event once. Acknowledge every event with AsyncEvent.Ack.
//
// The event also updates what this package knows: a QP error marks the QP
// in ERR (QP.State), a CQ error the CQ in error (Poll, CQ.Err).
func (c *Context) GetAsyncEvent(ctx context.Context) (*AsyncEvent, error) {
	const op = "doca_verbs_get_async_event"
	if err := c.checkAsync(op); err != nil {
		return nil, err
	}
	if ctx == nil {
		return nil, newErr(op, ErrInvalidValue, "nil context.Context")
	}
	a := &c.async
	return waitEvent(op, ctx, a.waiter, a.closing, a.file, a.raw, c.userName, func() (*AsyncEvent, bool, error) {
		return c.tryGetAsync(op)
	})
}

// TryGetAsyncEvent returns the next pending asynchronous event without
// blocking, or ErrAgain when none is pending.
func (c *Context) TryGetAsyncEvent() (*AsyncEvent, error) {
	const op = "doca_verbs_get_async_event"
	if err := c.checkAsync(op); err != nil {
		return nil, err
	}
	e, ok, err := c.tryGetAsync(op)
	if err == nil && !ok {
		return nil, newErr(op, ErrAgain, "no asynchronous event pending on %s", c.name)
	}
	return e, err
}

func (c *Context) checkAsync(op string) error {
	if c == nil {
		return newErr(op, ErrInvalidValue, "nil context")
	}
	if err := c.use(op, "Context"); err != nil {
		var e *Error
		if errors.As(err, &e) && e.Code == ErrBadState {
			return &Error{Op: op, Code: ErrBadState, Msg: e.Msg, Err: ErrChannelClosed}
		}
		return err
	}
	if c.async.ch == nil {
		return wrapErr(op, codeOf(c.async.err), c.async.err, "%s has no asynchronous event handle", c.name)
	}
	return nil
}

// tryGetAsync takes the next event of an object still open (or of the
// device).
func (c *Context) tryGetAsync(op string) (*AsyncEvent, bool, error) {
	a := &c.async
	for {
		ch := a.ch
		if ch == nil {
			return nil, false, &Error{Op: op, Code: ErrBadState, Msg: c.userName(), Err: ErrChannelClosed}
		}
		ev, err := ch.GetEvent()
		if errors.Is(err, syscall.EAGAIN) {
			return nil, false, nil
		}
		if err != nil {
			if errors.Is(err, syscall.EBADF) {
				return nil, false, &Error{Op: op, Code: ErrBadState, Msg: c.userName(), Err: ErrChannelClosed}
			}
			return nil, false, driverErr(op, err, "read the asynchronous events of %s", c.name)
		}
		if e := c.asyncEvent(ev); e != nil {
			return e, true, nil
		}
	}
}

// asyncEvent converts a driver event, nil for one of a closed object or
// of a type this package does not report.
func (c *Context) asyncEvent(ev mlx5.ChannelEvent) *AsyncEvent {
	x := &ev.EQE
	switch x.Type {
	case mlx5.EventPortChange:
		switch mlx5.PortChange(x.SubType) {
		case mlx5.PortChangeActive:
			return &AsyncEvent{Type: AsyncEventPortActive, Port: x.Port()}
		case mlx5.PortChangeDown:
			return &AsyncEvent{Type: AsyncEventPortErr, Port: x.Port()}
		}
		return nil
	case mlx5.EventInternalError:
		return &AsyncEvent{Type: AsyncEventDeviceFatal}
	}
	c.async.mu.Lock()
	target := c.async.objs[ev.Cookie]
	c.async.mu.Unlock()
	var e *AsyncEvent
	switch o := target.(type) {
	case *CQ:
		if x.Type != mlx5.EventCQError {
			return nil
		}
		o.markFailed(x.CQErrorSyndrome())
		e = &AsyncEvent{Type: AsyncEventCQErr, CQ: o, pending: &o.asyncPending}
	case *QP:
		t, ok := map[mlx5.EventType]AsyncEventType{
			mlx5.EventWQCatasError: AsyncEventQPFatal, mlx5.EventWQInvalReqError: AsyncEventQPReqErr,
			mlx5.EventWQAccessError: AsyncEventQPAccessErr, mlx5.EventSRQLastWQE: AsyncEventQPLastWQEReached,
		}[x.Type]
		if !ok {
			return nil
		}
		if t != AsyncEventQPLastWQEReached {
			o.sawError()
		}
		e = &AsyncEvent{Type: t, QP: o, pending: &o.asyncPending}
	case *SRQ:
		if x.Type != mlx5.EventSRQRQLimit {
			return nil
		}
		e = &AsyncEvent{Type: AsyncEventSRQLimitReached, SRQ: o, pending: &o.asyncPending}
	default:
		return nil
	}
	e.pending.Add(1)
	return e
}

// checkAsyncAcked refuses to close an object with unacknowledged
// asynchronous events.
func checkAsyncAcked(op, name string, pending *atomic.Int64) error {
	if n := pending.Load(); n > 0 {
		return &Error{Op: op, Code: ErrInUse, Msg: fmt.Sprintf("%s has %d asynchronous events received and not acknowledged (AsyncEvent.Ack)", name, n), Err: ErrUnackedEvents}
	}
	return nil
}

// SetLimit arms the SRQ's limit event (ibv_modify_srq with IBV_SRQ_LIMIT;
// MODIFY_RMP of its limit watermark): when a receive leaves fewer than
// limit receive WQEs posted, the device raises AsyncEventSRQLimitReached
// once and disarms the limit. 0 disarms it; more than the SRQ's entries is
// ErrInvalidValue.
func (s *SRQ) SetLimit(limit uint32) error {
	const op = "ibv_modify_srq"
	if s == nil {
		return newErr(op, ErrInvalidValue, "nil SRQ")
	}
	if err := s.enter(op, "SRQ"); err != nil {
		return err
	}
	defer s.leave()
	if limit > uint32(s.geo.entries) {
		return newErr(op, ErrInvalidValue, "limit %d exceeds the %d entries of %s", limit, s.geo.entries, s.userName())
	}
	in, err := mlx5.ModifyRMPIn{RMPState: mlx5.RMPStateRDY, RMPN: s.srqn, BitmaskLWM: true,
		RMPC: mlx5.RMPContext{State: mlx5.RMPStateRDY, WQ: mlx5.WQContext{LWM: uint16(limit)}}}.Marshal()
	if err != nil {
		return wrapErr(op, ErrInvalidValue, err, "build MODIFY_RMP")
	}
	if err := s.obj.Modify(in, make([]byte, mlx5.CmdShortLen)); err != nil {
		return driverErr(op, err, "MODIFY_RMP 0x%x lwm %d", s.srqn, limit)
	}
	return nil
}
