package cuda

import (
	"errors"
	"strconv"

	"github.com/gdaki/gpunetio/internal/cudasys"
)

// Error is a failed CUDA driver API call: the C entry point (Op, for example
// "cuMemAlloc_v2") and the CUresult it returned. errors.Is(err, r) holds for
// the Result r it carries, errors.Is(err, ErrNoDevice) for
// CUDA_ERROR_NO_DEVICE and errors.Is(err, ErrNoDriver) for
// CUDA_ERROR_STUB_LIBRARY (the toolkit's link stub instead of a driver).
type Error struct {
	// Op is the driver entry point that failed, with the call it was made
	// for when the failure came from making the context current, for example
	// "cuCtxPushCurrent_v2 (for cuMemAlloc_v2)".
	Op string
	// Result is the CUresult the driver returned.
	Result Result
	// Detail is extra text from the driver where it gives some (the JIT
	// error log of a failed module load), or "".
	Detail string
}

// Error formats "cuda: <op>: <NAME> (<code>): <driver text>[: <detail>]".
func (e *Error) Error() string {
	s := "cuda: " + e.Op + ": " + e.Result.Name() + " (" + strconv.Itoa(int(e.Result)) + ")"
	if t := e.Result.Text(); t != "" {
		s += ": " + t
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the Result, so errors.Is(err, cuda.ErrorOutOfMemory) and
// errors.As(err, &r) for a Result both work.
func (e *Error) Unwrap() error { return e.Result }

// Is matches ErrNoDriver for CUDA_ERROR_STUB_LIBRARY.
func (e *Error) Is(target error) bool {
	return target == ErrNoDriver && e.Result == ErrorStubLibrary
}

var (
	// ErrNoDriver matches every error caused by the CUDA driver library
	// (libcuda.so.1) being absent, unusable, or the toolkit stub.
	ErrNoDriver = errors.New("cuda: no CUDA driver (libcuda.so.1)")
	// ErrNoDevice matches a driver that reports no CUDA-capable device
	// (CUDA_ERROR_NO_DEVICE).
	ErrNoDevice error = ErrorNoDevice
	// ErrReleased is returned by methods of a Context, Stream, Event or
	// Module that was already released, destroyed or unloaded (or is nil).
	ErrReleased = errors.New("cuda: object already released")
	// ErrInUse is returned by Context.Release while allocations, modules,
	// streams, events or host registrations made through it are still live.
	ErrInUse = errors.New("cuda: context still has live objects")
	// ErrTimeout is returned by the Wait methods when the GPU work did not
	// finish within the given time.
	ErrTimeout = errors.New("cuda: wait timed out")
)

// check turns a binding result into an error naming op. Results carry a
// stage marker when the failure came from cuCtxPushCurrent_v2 or
// cuCtxPopCurrent_v2 around the call.
func check(op string, code int32) error {
	if code == 0 {
		return nil
	}
	switch code & cudasys.StageMask {
	case cudasys.StagePush:
		return &Error{Op: "cuCtxPushCurrent_v2 (for " + op + ")", Result: Result(code &^ cudasys.StageMask)}
	case cudasys.StagePop:
		return &Error{Op: "cuCtxPopCurrent_v2 (after " + op + ")", Result: Result(code &^ cudasys.StageMask)}
	}
	return &Error{Op: op, Result: Result(code)}
}
