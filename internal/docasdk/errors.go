package docasdk

import (
	"errors"
	"fmt"
	"strconv"
)

// Code is a DOCA status (doca_error_t) with DOCA's numbering: what an SDK
// call returned, or the code a refused call stands for. Package verbs, which
// imports this package, has its own public code type with the same values
// (verbs.Code(e.Code) converts); this one exists because an internal package
// cannot import verbs.
type Code int32

// The codes this package produces itself; any other value comes from the SDK.
const (
	CodeSuccess        Code = 0
	CodeNotSupported   Code = 4
	CodeInvalidValue   Code = 6
	CodeInitialization Code = 8
	CodeUnexpected     Code = 22
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

// Name is the DOCA enumerator name, e.g. "DOCA_ERROR_INVALID_VALUE"; a value
// outside DOCA's range reads "DOCA_ERROR_<n>".
func (c Code) Name() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "DOCA_ERROR_" + strconv.Itoa(int(c))
}

// Error makes a Code usable as an errors.Is target.
func (c Code) Error() string { return c.Name() }

// Why a call was refused before it reached the SDK. Each is wrapped in an
// *Error naming the SDK function.
var (
	// ErrNotActive: the process runs in open mode (see Current for why),
	// so no SDK function may be called.
	ErrNotActive = errors.New("DOCA SDK mode is not active")
	// ErrNilHandle: a handle or pointer argument was nil (zero, or already
	// destroyed through the same variable).
	ErrNilHandle = errors.New("nil handle")
	// ErrNoOrderingSemantic: the installed SDK lacks the optional
	// ordering-semantic entry point that was called.
	ErrNoOrderingSemantic = errors.New("the installed DOCA SDK does not provide the QP ordering semantic")
	// ErrNoObject: a creator returned DOCA_SUCCESS without an object.
	ErrNoObject = errors.New("the DOCA SDK returned DOCA_SUCCESS but no object")
)

// Error is what every failing call of this package returns.
//
// FromSDK says who failed. When true, the SDK function Func ran and returned
// Code; the reference maps such a failure to DOCA_ERROR_INITIALIZATION in a
// creator and to DOCA_ERROR_UNEXPECTED in any other call, and the caller
// should do the same. When false, the call never reached the SDK: Err says
// why (ErrNotActive, ErrNilHandle, ErrNoOrderingSemantic, ErrNoObject) and
// Code is the status that stands for it (NOT_SUPPORTED, INVALID_VALUE,
// NOT_SUPPORTED, UNEXPECTED).
type Error struct {
	Func    string // the SDK function, e.g. "doca_verbs_qp_modify"
	Code    Code
	FromSDK bool
	Err     error
}

// Error says which SDK function failed and how: "<function>: the DOCA SDK
// returned <CODE> (<n>)", or "<function>: <CODE>: not called: <why>".
func (e *Error) Error() string {
	if e.FromSDK {
		return fmt.Sprintf("%s: the DOCA SDK returned %s (%d)", e.Func, e.Code.Name(), int32(e.Code))
	}
	return fmt.Sprintf("%s: %s: not called: %v", e.Func, e.Code.Name(), e.Err)
}

// Unwrap returns the reason a call was refused (nil when the SDK failed).
func (e *Error) Unwrap() error { return e.Err }

// Is matches the Code, so errors.Is(err, docasdk.Code(18)) works.
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == e.Code
}

func refused(s sym, code Code, err error) *Error {
	return &Error{Func: s.String(), Code: code, Err: err}
}
