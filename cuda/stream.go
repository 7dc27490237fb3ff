package cuda

import (
	"fmt"
	"sync"
	"time"

	"github.com/gdaki/gpunetio/internal/cudasys"
)

// StreamFlags are cuStreamCreate flags.
type StreamFlags uint32

// cuStreamCreate flags (fact: cuda.h, CUstream_flags).
const (
	StreamDefault     StreamFlags = 0x0 // CU_STREAM_DEFAULT
	StreamNonBlocking StreamFlags = 0x1 // CU_STREAM_NON_BLOCKING: no implicit sync with stream 0
)

// Stream is a CUDA stream (CUstream) of one Context. A nil *Stream passed to
// the Async and launch methods means the legacy default stream.
type Stream struct {
	ctx  *Context
	at   origin
	mu   sync.RWMutex
	h    cudasys.Stream
	dead bool
}

// NewStream creates a stream (cuStreamCreate).
func (c *Context) NewStream(flags StreamFlags) (*Stream, error) {
	if err := c.usable("NewStream"); err != nil {
		return nil, err
	}
	var h cudasys.Stream
	err := c.call("cuStreamCreate", func(ch cudasys.Ctx) (r int32) {
		h, r = cudasys.StreamCreate(ch, uint32(flags))
		return r
	})
	if err != nil {
		return nil, err
	}
	s := &Stream{ctx: c, h: h, at: here()}
	c.mu.Lock()
	c.streams[s] = struct{}{}
	c.mu.Unlock()
	return s, nil
}

// usable checks, before any driver call, that s can serve Stream.method:
// not nil, not a zero value (no context), not destroyed, and its context
// not released.
func (s *Stream) usable(method string) error {
	switch {
	case s == nil:
		return released("Stream", method, "nil *Stream")
	case s.ctx == nil:
		return zeroValue("Stream", method, "")
	}
	s.mu.RLock()
	dead := s.dead
	s.mu.RUnlock()
	if dead {
		return released("Stream", method, "")
	}
	return s.ctx.usableAs("Stream", method, "context")
}

// asArg checks s as the stream argument of typ.method: nil is the legacy
// default stream; a zero value or a destroyed stream is refused.
func (s *Stream) asArg(typ, method string) error {
	switch {
	case s == nil:
		return nil
	case s.ctx == nil:
		return zeroValue(typ, method, "stream argument")
	}
	s.mu.RLock()
	dead := s.dead
	s.mu.RUnlock()
	if dead {
		return released(typ, method, "stream argument")
	}
	return nil
}

// with runs f with the stream handle (NULL for a nil Stream), keeping the
// stream alive for the duration.
func (s *Stream) with(op string, f func(cudasys.Stream) error) error {
	if s == nil {
		return f(cudasys.Stream{})
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.dead {
		return fmt.Errorf("cuda: %s: stream: %w", op, ErrReleased)
	}
	return f(s.h)
}

// Synchronize blocks until all work queued on s has finished
// (cuStreamSynchronize). It has no timeout; see Wait.
func (s *Stream) Synchronize() error {
	if err := s.usable("Synchronize"); err != nil {
		return err
	}
	return s.with("cuStreamSynchronize", func(h cudasys.Stream) error {
		return s.ctx.call("cuStreamSynchronize", func(ch cudasys.Ctx) int32 { return cudasys.StreamSynchronize(ch, h) })
	})
}

// Query reports whether all work queued on s has finished (cuStreamQuery;
// CUDA_ERROR_NOT_READY is reported as false, nil).
func (s *Stream) Query() (bool, error) {
	if err := s.usable("Query"); err != nil {
		return false, err
	}
	err := s.with("cuStreamQuery", func(h cudasys.Stream) error {
		return s.ctx.call("cuStreamQuery", func(ch cudasys.Ctx) int32 { return cudasys.StreamQuery(ch, h) })
	})
	return doneOrErr(err)
}

// Wait polls Query until the stream's work has finished or timeout passes,
// in which case it returns an error matching ErrTimeout.
func (s *Stream) Wait(timeout time.Duration) error {
	if err := s.usable("Wait"); err != nil {
		return err
	}
	return pollUntil("stream", timeout, s.Query)
}

// Destroy destroys the stream (cuStreamDestroy_v2). Work already queued
// still completes. A second Destroy is a no-op.
func (s *Stream) Destroy() error {
	if s == nil {
		return nil
	}
	if s.ctx == nil {
		return zeroValue("Stream", "Destroy", "")
	}
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return nil
	}
	if err := s.ctx.usableAs("Stream", "Destroy", "context"); err != nil {
		s.mu.Unlock()
		return err
	}
	s.dead = true
	h := s.h
	s.mu.Unlock()
	err := s.ctx.call("cuStreamDestroy_v2", func(ch cudasys.Ctx) int32 { return cudasys.StreamDestroy(ch, h) })
	if err != nil {
		s.mu.Lock()
		s.dead = false
		s.mu.Unlock()
		return err
	}
	s.ctx.mu.Lock()
	delete(s.ctx.streams, s)
	s.ctx.mu.Unlock()
	return nil
}

// doneOrErr maps a Query result: success is done, CUDA_ERROR_NOT_READY is
// not done, anything else is an error.
func doneOrErr(err error) (bool, error) {
	if err == nil {
		return true, nil
	}
	if e, ok := err.(*Error); ok && e.Result == ErrorNotReady {
		return false, nil
	}
	return false, err
}

// pollUntil calls query with a growing sleep (10 µs up to 1 ms) until it
// reports done, fails, or timeout passes.
func pollUntil(what string, timeout time.Duration, query func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	sleep := 10 * time.Microsecond
	for {
		done, err := query()
		if err != nil || done {
			return err
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("cuda: %s not finished after %v: %w", what, timeout, ErrTimeout)
		}
		time.Sleep(sleep)
		if sleep < time.Millisecond {
			sleep *= 2
		}
	}
}
