package wire

import "errors"

// Sentinel errors; test with errors.Is.
var (
	// ErrMalformed: bytes that are not a valid frame, or a Frame that
	// cannot be encoded into one. Every *FrameError matches it.
	ErrMalformed = errors.New("malformed frame")
	// ErrClosed: the port was closed.
	ErrClosed = errors.New("port closed")
	// ErrUnreachable: the destination could not be reached (no listener,
	// dial timeout, broken connection, write deadline). The frame is lost.
	ErrUnreachable = errors.New("peer unreachable")
	// ErrBadGID: a GID that is not an IPv4-mapped address.
	ErrBadGID = errors.New("GID is not IPv4-mapped (::ffff:a.b.c.d)")
	// ErrCongested: the destination's connection queue was full and the
	// frame was not queued (the peer does not read fast enough, or at all).
	// Send returns it as is, not in a *SendError, so that the congested
	// path does not allocate.
	ErrCongested = errors.New("wire: queue to the peer is full, frame not sent")
	// ErrNoRoute: a response that cannot go back the way its request came
	// (no Route, and its destination is not a port of this process).
	ErrNoRoute = errors.New("response without the route of its request")
	// ErrNotInPlace: Port.SendInPlace cannot write this frame's payload in
	// place now (its destination is not reached through a shared-memory
	// link); nothing was sent and fill was not called: use Send. Returned
	// bare, like ErrCongested.
	ErrNotInPlace = errors.New("wire: no shared-memory link to write the payload into")
	// ErrNotLocal: Port.Send cannot deliver a request whose payload is by
	// reference (Frame.Ref), since its destination is not a port of this
	// process (or a side forces TCP or shared memory); nothing was sent:
	// send the payload by value. Returned bare, like ErrCongested.
	ErrNotLocal = errors.New("wire: a payload by reference reaches only a port of this process")
)

// FrameError reports a frame that failed validation or decoding.
type FrameError struct {
	Op     string // "decode" or "validate"
	Field  string // the header or field at fault
	Reason string
}

func (e *FrameError) Error() string {
	return "wire: " + e.Op + ": " + e.Field + ": " + e.Reason
}

// Is makes every FrameError match ErrMalformed.
func (e *FrameError) Is(target error) bool { return target == ErrMalformed }

// SendError reports a failed Port.Send (except congestion: ErrCongested is
// returned bare). Kind is one of the sentinel errors (ErrUnreachable,
// ErrClosed, ErrMalformed, ErrBadGID, ErrNoRoute); Err is the cause,
// typically a *net.OpError wrapping a syscall.Errno such as ECONNREFUSED, so
// both errors.Is(err, ErrUnreachable) and errors.Is(err, syscall.ECONNREFUSED)
// work.
type SendError struct {
	Op   string // "send", "dial", "write"
	Dst  GID
	Kind error
	Err  error
}

func (e *SendError) Error() string {
	s := "wire: " + e.Op + " to " + e.Dst.String() + ": " + e.Kind.Error()
	if e.Err != nil && e.Err != e.Kind {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the kind and the cause.
func (e *SendError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}
