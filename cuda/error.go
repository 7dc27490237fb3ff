package cuda

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

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
	// ErrReleased is returned by methods of a Context, Stream, Event,
	// Module, Function or Buffer that was already released, destroyed,
	// unloaded or freed (or is nil). The error is a *UsageError naming the
	// type and the method where the method found it.
	ErrReleased = errors.New("cuda: object already released")
	// ErrClosed is ErrReleased under the name other packages of this module
	// use for the same condition.
	ErrClosed = ErrReleased
	// ErrZeroValue is returned by every method of a zero value of a type
	// this package makes (a Context, Stream, Event, Module, Function,
	// Buffer or Device declared rather than obtained from this package),
	// before any driver call and whether or not the driver is loaded. The
	// error is a *UsageError naming the type and the method.
	ErrZeroValue = errors.New("cuda: zero value, not an object made by this package")
	// ErrDriverNotLoaded matches a driver call made while the driver entry
	// point it needs is not resolved (the library was never loaded, or
	// lacks that optional entry point). It also matches ErrNoDriver.
	ErrDriverNotLoaded = errors.New("cuda: driver entry point not loaded")
	// ErrInvalidInput matches an argument refused before it reaches C, such
	// as a string holding a NUL byte (which C would read as its end); the
	// error is an *InputError naming the input and the offset.
	ErrInvalidInput = errors.New("cuda: invalid input")
	// ErrInUse is returned by Context.Release while allocations, modules,
	// streams, events or host registrations made through it are still live.
	ErrInUse = errors.New("cuda: context still has live objects")
	// ErrTimeout is returned by the Wait methods when the GPU work did not
	// finish within the given time.
	ErrTimeout = errors.New("cuda: wait timed out")
)

// UsageError is a method called on an object that cannot serve it: a zero
// value (Err is ErrZeroValue) or an object already released (Err is
// ErrReleased). errors.Is matches Err.
type UsageError struct {
	// Type and Method name the call, for example "Context" and "MemAlloc".
	Type, Method string
	// What says which object, when it is not the receiver: "stream
	// argument", "module of the function".
	What string
	// Err is ErrZeroValue or ErrReleased.
	Err error
}

// Error formats "cuda: <Type>.<Method>: [<what>: ]<reason>" (the method
// alone for a function of the package).
func (e *UsageError) Error() string {
	s := "cuda: " + e.Method + ": "
	if e.Type != "" {
		s = "cuda: " + e.Type + "." + e.Method + ": "
	}
	if e.What != "" {
		s += e.What + ": "
	}
	return s + strings.TrimPrefix(e.Err.Error(), "cuda: ")
}

// Unwrap returns Err.
func (e *UsageError) Unwrap() error { return e.Err }

func zeroValue(typ, method, what string) error {
	return &UsageError{Type: typ, Method: method, What: what, Err: ErrZeroValue}
}

func released(typ, method, what string) error {
	return &UsageError{Type: typ, Method: method, What: what, Err: ErrReleased}
}

// InputError is an argument refused before it crosses into C: Input names
// it ("source", "header name 2", "option 3", ...), Offset is the byte
// offset of the fault in it (-1 when the fault is not at one byte) and
// Reason says what is wrong. errors.Is matches ErrInvalidInput.
type InputError struct {
	Op     string
	Input  string
	Offset int
	Reason string
}

// Error formats "cuda: <op>: <input>: <reason> at byte offset <n>".
func (e *InputError) Error() string {
	s := "cuda: " + e.Op + ": " + e.Input + ": " + e.Reason
	if e.Offset >= 0 {
		s += fmt.Sprintf(" at byte offset %d", e.Offset)
	}
	return s + " (invalid input)"
}

// Unwrap returns ErrInvalidInput.
func (e *InputError) Unwrap() error { return ErrInvalidInput }

// checkCString refuses s as the C string input when it holds a NUL byte,
// which would end the string in C and silently drop what follows.
func checkCString(op, input, s string) error {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return &InputError{Op: op, Input: input, Offset: i, Reason: "NUL byte (C would end the string there)"}
	}
	return nil
}

// notLoaded is the error of a driver call whose entry point is not
// resolved.
type notLoaded struct{ op string }

func (e *notLoaded) Error() string {
	return "cuda: " + e.op + ": driver entry point not loaded (" + libraryName + " not opened, or it lacks the entry point)"
}

func (e *notLoaded) Is(target error) bool {
	return target == ErrDriverNotLoaded || target == ErrNoDriver
}

// check turns a binding result into an error naming op. Results carry a
// stage marker when the failure came from cuCtxPushCurrent_v2 or
// cuCtxPopCurrent_v2 around the call.
func check(op string, code int32) error {
	if code == 0 {
		return nil
	}
	if code == cudasys.NotLoaded {
		return &notLoaded{op: op}
	}
	switch code & cudasys.StageMask {
	case cudasys.StagePush:
		return &Error{Op: "cuCtxPushCurrent_v2 (for " + op + ")", Result: Result(code &^ cudasys.StageMask)}
	case cudasys.StagePop:
		return &Error{Op: "cuCtxPopCurrent_v2 (after " + op + ")", Result: Result(code &^ cudasys.StageMask)}
	}
	return &Error{Op: op, Result: Result(code)}
}
