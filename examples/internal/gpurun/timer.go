package gpurun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gdaki/gpunetio/cuda"
)

// Timer runs kernels on a non-blocking stream and times them with two
// blocking-sync events, like the reference.
type Timer struct {
	Stream     *cuda.Stream
	start, end *cuda.Event
	env        *Env
}

// NewTimer creates the stream and events; Env.Close does not own them: call
// Timer.Close.
func (e *Env) NewTimer() (t *Timer, err error) {
	t = &Timer{env: e}
	defer func() {
		if err != nil {
			_ = t.Close()
		}
	}()
	if t.Stream, err = e.Ctx.NewStream(cuda.StreamNonBlocking); err != nil {
		return nil, fmt.Errorf("create CUDA stream: %w", err)
	}
	if t.start, err = e.Ctx.NewEvent(cuda.EventBlockingSync); err != nil {
		return nil, fmt.Errorf("create CUDA event: %w", err)
	}
	if t.end, err = e.Ctx.NewEvent(cuda.EventBlockingSync); err != nil {
		return nil, fmt.Errorf("create CUDA event: %w", err)
	}
	return t, nil
}

// Close destroys the events and the stream (nothing when a kernel was
// abandoned).
func (t *Timer) Close() error {
	if t.env != nil && t.env.abandoned {
		return nil
	}
	return errors.Join(t.end.Destroy(), t.start.Destroy(), t.Stream.Destroy())
}

// ErrKernelTimeout matches a kernel that did not finish in time; the process
// should exit without further CUDA calls on the QP (the kernel may still run).
var ErrKernelTimeout = errors.New("kernel did not finish in time (is the peer running?)")

// Measure runs launch once as a warm-up and waits for it, then runs it again
// between the two events and returns the measured kernel time. Each wait
// ends at timeout or when ctx is done.
func (t *Timer) Measure(ctx context.Context, timeout time.Duration, launch func(s *cuda.Stream, warmup bool) error) (time.Duration, error) {
	if err := launch(t.Stream, true); err != nil {
		return 0, fmt.Errorf("launch warm-up kernel: %w", err)
	}
	if err := t.wait(ctx, timeout, "warm-up kernel", t.Stream.Wait); err != nil {
		return 0, err
	}
	if err := t.start.Record(t.Stream); err != nil {
		return 0, fmt.Errorf("record start event: %w", err)
	}
	if err := launch(t.Stream, false); err != nil {
		return 0, fmt.Errorf("launch kernel: %w", err)
	}
	if err := t.end.Record(t.Stream); err != nil {
		return 0, fmt.Errorf("record end event: %w", err)
	}
	if err := t.wait(ctx, timeout, "kernel", t.end.Wait); err != nil {
		return 0, err
	}
	d, err := cuda.ElapsedTime(t.start, t.end)
	if err != nil {
		return 0, fmt.Errorf("kernel time: %w", err)
	}
	return d, nil
}

// wait waits for a kernel; when it gives up, the kernel may still be
// running, so the Env is marked abandoned.
func (t *Timer) wait(ctx context.Context, timeout time.Duration, what string, w func(time.Duration) error) error {
	err := wait(ctx, timeout, what, w)
	if err != nil && t.env != nil {
		t.env.abandoned = true
		if errors.Is(err, ErrKernelTimeout) {
			// What the kernel left in its QP says where it stopped.
			if st, serr := t.env.QPState(2 * time.Second); serr == nil {
				err = fmt.Errorf("%w\ndevice QP at the timeout:\n%s", err, st)
			} else {
				err = fmt.Errorf("%w (%v)", err, serr)
			}
		}
	}
	return err
}

// wait polls w in short slices so that ctx (Ctrl+C) is noticed, up to timeout.
func wait(ctx context.Context, timeout time.Duration, what string, w func(time.Duration) error) error {
	deadline := time.Now().Add(timeout)
	const slice = 100 * time.Millisecond
	for {
		err := w(slice)
		if err == nil {
			return nil
		}
		if !errors.Is(err, cuda.ErrTimeout) {
			return fmt.Errorf("wait for %s: %w", what, err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("wait for %s: %w", what, context.Cause(ctx))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wait for %s: %w after %v: %w", what, ErrKernelTimeout, timeout, err)
		}
	}
}
