package cuda

import (
	"fmt"
	"sync"
	"time"

	"github.com/gdaki/gpunetio/internal/cudasys"
)

// EventFlags are cuEventCreate flags.
type EventFlags uint32

// cuEventCreate flags (fact: cuda.h, CUevent_flags).
const (
	EventDefault       EventFlags = 0x0 // CU_EVENT_DEFAULT
	EventBlockingSync  EventFlags = 0x1 // CU_EVENT_BLOCKING_SYNC
	EventDisableTiming EventFlags = 0x2 // CU_EVENT_DISABLE_TIMING
)

// Event is a CUDA event (CUevent) of one Context.
type Event struct {
	ctx  *Context
	at   origin
	mu   sync.RWMutex
	h    cudasys.Event
	dead bool
}

// NewEvent creates an event (cuEventCreate).
func (c *Context) NewEvent(flags EventFlags) (*Event, error) {
	if err := c.usable("NewEvent"); err != nil {
		return nil, err
	}
	var h cudasys.Event
	err := c.call("cuEventCreate", func(ch cudasys.Ctx) (r int32) {
		h, r = cudasys.EventCreate(ch, uint32(flags))
		return r
	})
	if err != nil {
		return nil, err
	}
	e := &Event{ctx: c, h: h, at: here()}
	c.mu.Lock()
	c.events[e] = struct{}{}
	c.mu.Unlock()
	return e, nil
}

// usable checks, before any driver call, that e can serve Event.method (as
// what, "" for the receiver): not nil, not a zero value, not destroyed, and
// its context not released.
func (e *Event) usable(method, what string) error {
	return e.usableAs("Event", method, what)
}

func (e *Event) usableAs(typ, method, what string) error {
	switch {
	case e == nil:
		if what == "" {
			what = "nil *Event"
		}
		return released(typ, method, what)
	case e.ctx == nil:
		return zeroValue(typ, method, what)
	}
	e.mu.RLock()
	dead := e.dead
	e.mu.RUnlock()
	if dead {
		return released(typ, method, what)
	}
	ctx := "context"
	if what != "" {
		ctx = what + "'s context"
	}
	return e.ctx.usableAs(typ, method, ctx)
}

func (e *Event) with(op string, f func(cudasys.Event) error) error {
	if e == nil {
		return fmt.Errorf("cuda: %s: nil event: %w", op, ErrReleased)
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.dead {
		return fmt.Errorf("cuda: %s: event: %w", op, ErrReleased)
	}
	return f(e.h)
}

// Record captures the work queued so far on s (nil: the legacy default
// stream) (cuEventRecord).
func (e *Event) Record(s *Stream) error {
	if err := e.usable("Record", ""); err != nil {
		return err
	}
	if err := s.asArg("Event", "Record"); err != nil {
		return err
	}
	return e.with("cuEventRecord", func(h cudasys.Event) error {
		return s.with("cuEventRecord", func(sh cudasys.Stream) error {
			return e.ctx.call("cuEventRecord", func(ch cudasys.Ctx) int32 { return cudasys.EventRecord(ch, h, sh) })
		})
	})
}

// Synchronize blocks until the recorded work has finished
// (cuEventSynchronize). It has no timeout; see Wait.
func (e *Event) Synchronize() error {
	if err := e.usable("Synchronize", ""); err != nil {
		return err
	}
	return e.with("cuEventSynchronize", func(h cudasys.Event) error {
		return e.ctx.call("cuEventSynchronize", func(ch cudasys.Ctx) int32 { return cudasys.EventSynchronize(ch, h) })
	})
}

// Query reports whether the recorded work has finished (cuEventQuery).
func (e *Event) Query() (bool, error) {
	if err := e.usable("Query", ""); err != nil {
		return false, err
	}
	err := e.with("cuEventQuery", func(h cudasys.Event) error {
		return e.ctx.call("cuEventQuery", func(ch cudasys.Ctx) int32 { return cudasys.EventQuery(ch, h) })
	})
	return doneOrErr(err)
}

// Wait polls Query until the recorded work has finished or timeout passes
// (then the error matches ErrTimeout).
func (e *Event) Wait(timeout time.Duration) error {
	if err := e.usable("Wait", ""); err != nil {
		return err
	}
	return pollUntil("event", timeout, e.Query)
}

// ElapsedTime returns the time between two recorded, completed events
// (cuEventElapsedTime; about 0.5 µs resolution). Neither may have been
// created with EventDisableTiming.
func ElapsedTime(start, end *Event) (time.Duration, error) {
	if err := start.usableAs("", "ElapsedTime", "start event"); err != nil {
		return 0, err
	}
	if err := end.usableAs("", "ElapsedTime", "end event"); err != nil {
		return 0, err
	}
	var ms float32
	err := start.with("cuEventElapsedTime", func(sh cudasys.Event) error {
		return end.with("cuEventElapsedTime", func(eh cudasys.Event) error {
			return start.ctx.call("cuEventElapsedTime", func(ch cudasys.Ctx) (r int32) {
				ms, r = cudasys.EventElapsedTime(ch, sh, eh)
				return r
			})
		})
	})
	if err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// Destroy destroys the event (cuEventDestroy_v2); a second call is a no-op.
func (e *Event) Destroy() error {
	if e == nil {
		return nil
	}
	if e.ctx == nil {
		return zeroValue("Event", "Destroy", "")
	}
	e.mu.Lock()
	if e.dead {
		e.mu.Unlock()
		return nil
	}
	if err := e.ctx.usableAs("Event", "Destroy", "context"); err != nil {
		e.mu.Unlock()
		return err
	}
	e.dead = true
	h := e.h
	e.mu.Unlock()
	err := e.ctx.call("cuEventDestroy_v2", func(ch cudasys.Ctx) int32 { return cudasys.EventDestroy(ch, h) })
	if err != nil {
		e.mu.Lock()
		e.dead = false
		e.mu.Unlock()
		return err
	}
	e.ctx.mu.Lock()
	delete(e.ctx.events, e)
	e.ctx.mu.Unlock()
	return nil
}
