package verbs

import (
	"errors"
	"fmt"
)

// Code is a DOCA error code (doca_error_t); the numeric values are DOCA's.
// A Code is itself an error, so errors.Is(err, verbs.ErrInvalidValue) works on
// every error this package returns.
type Code int32

// The DOCA error codes.
const (
	ErrUnknown              = Code(1)
	ErrNotPermitted         = Code(2)
	ErrInUse                = Code(3)
	ErrNotSupported         = Code(4)
	ErrAgain                = Code(5)
	ErrInvalidValue         = Code(6)
	ErrNoMemory             = Code(7)
	ErrInitialization       = Code(8)
	ErrTimeOut              = Code(9)
	ErrShutdown             = Code(10)
	ErrConnectionReset      = Code(11)
	ErrConnectionAborted    = Code(12)
	ErrConnectionInProgress = Code(13)
	ErrNotConnected         = Code(14)
	ErrNoLock               = Code(15)
	ErrNotFound             = Code(16)
	ErrIOFailed             = Code(17)
	ErrBadState             = Code(18)
	ErrUnsupportedVersion   = Code(19)
	ErrOperatingSystem      = Code(20)
	ErrDriver               = Code(21)
	ErrUnexpected           = Code(22)
	ErrAlreadyExist         = Code(23)
	ErrFull                 = Code(24)
	ErrEmpty                = Code(25)
	ErrInProgress           = Code(26)
	ErrTooBig               = Code(27)
	ErrAuthentication       = Code(28)
	ErrBadConfig            = Code(29)
	ErrSkipped              = Code(30)
	ErrDeviceFatal          = Code(31)
	codeLast                = ErrDeviceFatal
	codeSuccess             = Code(0)
)

var codeNames = [...]string{
	"DOCA_SUCCESS", "DOCA_ERROR_UNKNOWN", "DOCA_ERROR_NOT_PERMITTED", "DOCA_ERROR_IN_USE",
	"DOCA_ERROR_NOT_SUPPORTED", "DOCA_ERROR_AGAIN", "DOCA_ERROR_INVALID_VALUE",
	"DOCA_ERROR_NO_MEMORY", "DOCA_ERROR_INITIALIZATION", "DOCA_ERROR_TIME_OUT",
	"DOCA_ERROR_SHUTDOWN", "DOCA_ERROR_CONNECTION_RESET", "DOCA_ERROR_CONNECTION_ABORTED",
	"DOCA_ERROR_CONNECTION_INPROGRESS", "DOCA_ERROR_NOT_CONNECTED", "DOCA_ERROR_NO_LOCK",
	"DOCA_ERROR_NOT_FOUND", "DOCA_ERROR_IO_FAILED", "DOCA_ERROR_BAD_STATE",
	"DOCA_ERROR_UNSUPPORTED_VERSION", "DOCA_ERROR_OPERATING_SYSTEM", "DOCA_ERROR_DRIVER",
	"DOCA_ERROR_UNEXPECTED", "DOCA_ERROR_ALREADY_EXIST", "DOCA_ERROR_FULL", "DOCA_ERROR_EMPTY",
	"DOCA_ERROR_IN_PROGRESS", "DOCA_ERROR_TOO_BIG", "DOCA_ERROR_AUTHENTICATION",
	"DOCA_ERROR_BAD_CONFIG", "DOCA_ERROR_SKIPPED", "DOCA_ERROR_DEVICE_FATAL_ERROR",
}

// Name is the DOCA enumerator name, e.g. "DOCA_ERROR_INVALID_VALUE".
func (c Code) Name() string {
	if c >= 0 && c <= codeLast {
		return codeNames[c]
	}
	return fmt.Sprintf("DOCA_ERROR_%d", int32(c))
}

func (c Code) Error() string { return c.Name() }

// Error is what every failing call of this package returns: the operation
// (named after the DOCA call it mirrors, e.g. "doca_verbs_qp_create"), the DOCA
// code, a message naming the cause, and the underlying error (a
// syscall.Errno, a *mlx5.CmdError with the PRM status and syndrome, ...).
type Error struct {
	Op   string
	Code Code
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	s := e.Op + ": " + e.Code.Name()
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the DOCA code, so errors.Is(err, ErrInvalidValue) works.
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == e.Code
}

func newErr(op string, code Code, format string, args ...any) *Error {
	return &Error{Op: op, Code: code, Msg: fmt.Sprintf(format, args...)}
}

func wrapErr(op string, code Code, err error, format string, args ...any) *Error {
	return &Error{Op: op, Code: code, Msg: fmt.Sprintf(format, args...), Err: err}
}

// driverErr wraps a failure of the driver below (rdma-core or the emulator).
func driverErr(op string, err error, format string, args ...any) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return wrapErr(op, ErrDriver, err, format, args...)
}
