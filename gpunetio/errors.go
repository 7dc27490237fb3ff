package gpunetio

import (
	"fmt"

	"github.com/gdaki/gpunetio/verbs"
)

// Code is the DOCA error code type shared with package verbs, so
// errors.Is(err, gpunetio.ErrInvalidValue) and errors.Is(err,
// verbs.ErrInvalidValue) are the same test.
type Code = verbs.Code

// Error is the error type of both packages.
type Error = verbs.Error

// The DOCA error codes this package returns.
const (
	ErrUnknown            = verbs.ErrUnknown
	ErrInUse              = verbs.ErrInUse
	ErrNotSupported       = verbs.ErrNotSupported
	ErrInvalidValue       = verbs.ErrInvalidValue
	ErrNoMemory           = verbs.ErrNoMemory
	ErrInitialization     = verbs.ErrInitialization
	ErrTimeOut            = verbs.ErrTimeOut
	ErrShutdown           = verbs.ErrShutdown
	ErrNotFound           = verbs.ErrNotFound
	ErrBadState           = verbs.ErrBadState
	ErrUnsupportedVersion = verbs.ErrUnsupportedVersion
	ErrDriver             = verbs.ErrDriver
	ErrOperatingSystem    = verbs.ErrOperatingSystem
	ErrUnexpected         = verbs.ErrUnexpected
)

func newErr(op string, code Code, format string, args ...any) *Error {
	return &Error{Op: op, Code: code, Msg: fmt.Sprintf(format, args...)}
}

func wrapErr(op string, code Code, err error, format string, args ...any) *Error {
	return &Error{Op: op, Code: code, Msg: fmt.Sprintf(format, args...), Err: err}
}
