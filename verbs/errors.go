package verbs

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/gdaki/gpunetio/internal/docasdk"
	"github.com/gdaki/gpunetio/internal/mlx5"
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
	codeSuccess             = Code(0)
)

// Name is the DOCA enumerator name, e.g. "DOCA_ERROR_INVALID_VALUE"; a value
// outside DOCA's range reads "DOCA_ERROR_<n>". The names are package
// docasdk's, the SDK's own codes.
func (c Code) Name() string { return docasdk.Code(c).Name() }

func (c Code) Error() string { return c.Name() }

// Error is what every failing call of this package returns: the operation
// (named after the DOCA call it mirrors, e.g. "doca_verbs_qp_create"), the DOCA
// code, a message naming the cause, and the underlying error: a
// syscall.Errno, a *FirmwareError with the PRM status and syndrome of a
// command the device refused, another *Error, ...).
type Error struct {
	Op   string
	Code Code
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
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
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Is matches the DOCA code, so errors.Is(err, ErrInvalidValue) works.
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && e != nil && c == e.Code
}

func newErr(op string, code Code, format string, args ...any) *Error {
	return &Error{Op: op, Code: code, Msg: fmt.Sprintf(format, args...)}
}

func wrapErr(op string, code Code, err error, format string, args ...any) *Error {
	return &Error{Op: op, Code: code, Msg: fmt.Sprintf(format, args...), Err: publicCause(err)}
}

// driverErr wraps a failure of the driver below (rdma-core or the emulator).
func driverErr(op string, err error, format string, args ...any) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return wrapErr(op, ErrDriver, err, format, args...)
}

// publicCause replaces a driver's command error by its public form, so the
// status and syndrome are reachable with errors.As.
func publicCause(err error) error {
	if c, ok := mlx5.AsCmdError(err); ok {
		return &FirmwareError{Call: c.Op, Command: mlx5.OpcodeName(mlx5.Opcode(c.Opcode)), Opcode: c.Opcode,
			OpMod: c.OpMod, Status: FirmwareStatus(c.Status), Syndrome: c.Syndrome, Errno: c.Errno}
	}
	return err
}

// FirmwareStatus is the status byte of a PRM command's output: what the
// device's firmware (or the emulated device, which answers the same way)
// says about a command it refused.
type FirmwareStatus uint8

// The command statuses.
const (
	FirmwareStatusOK              = FirmwareStatus(mlx5.StatusOK)
	FirmwareStatusIntErr          = FirmwareStatus(mlx5.StatusIntErr)          // internal error
	FirmwareStatusBadOp           = FirmwareStatus(mlx5.StatusBadOp)           // unknown or unsupported opcode
	FirmwareStatusBadParam        = FirmwareStatus(mlx5.StatusBadParam)        // a field has a bad value
	FirmwareStatusBadSysState     = FirmwareStatus(mlx5.StatusBadSysState)     // the device is not in a state to run it
	FirmwareStatusBadRes          = FirmwareStatus(mlx5.StatusBadRes)          // the named resource does not exist
	FirmwareStatusResBusy         = FirmwareStatus(mlx5.StatusResBusy)         // the resource is in use
	FirmwareStatusLimErr          = FirmwareStatus(mlx5.StatusLimErr)          // a limit would be exceeded
	FirmwareStatusBadResState     = FirmwareStatus(mlx5.StatusBadResState)     // the resource is in the wrong state
	FirmwareStatusIxErr           = FirmwareStatus(mlx5.StatusIxErr)           // bad index
	FirmwareStatusNoRes           = FirmwareStatus(mlx5.StatusNoRes)           // out of resources
	FirmwareStatusBadQPState      = FirmwareStatus(mlx5.StatusBadQPState)      // the QP is in the wrong state
	FirmwareStatusBadPkt          = FirmwareStatus(mlx5.StatusBadPkt)          // malformed packet
	FirmwareStatusBadSizeOutsCQEs = FirmwareStatus(mlx5.StatusBadSizeOutsCQEs) // CQ too small for the outstanding CQEs
	FirmwareStatusBadInpLen       = FirmwareStatus(mlx5.StatusBadInpLen)       // input mailbox length
	FirmwareStatusBadOutpLen      = FirmwareStatus(mlx5.StatusBadOutpLen)      // output mailbox length
)

// String returns the PRM name of the status ("BAD_PARAM"), or STATUS_0xNN.
func (s FirmwareStatus) String() string { return mlx5.Status(s).String() }

// FirmwareError is a PRM command the device refused, found in the chain of
// an *Error with errors.As. Firmware refusals have Errno EREMOTEIO and carry
// the status and syndrome of the output mailbox; a command the kernel
// refused before firmware saw it has Status OK and the kernel's Errno.
//
// The syndrome identifies the exact check that failed. Real firmware
// syndromes are opaque numbers (NVIDIA support can decode them); the
// emulated devices use their own stable values, listed in the emulator's
// documentation.
type FirmwareError struct {
	Call     string         // the driver call: "devx_obj_create", "devx_obj_modify", "devx_general_cmd", ...
	Command  string         // the PRM command, e.g. "CREATE_QP", "INIT2RTR_QP"
	Opcode   uint16         // the PRM opcode of Command
	OpMod    uint16         // the command's op_mod
	Status   FirmwareStatus // FirmwareStatusOK when the kernel refused the command
	Syndrome uint32
	Errno    syscall.Errno
}

func (e *FirmwareError) Error() string {
	if e == nil {
		return "<nil>"
	}
	if e.Status != FirmwareStatusOK {
		s := fmt.Sprintf("%s %s (op_mod 0x%x): firmware status %s (0x%02x), syndrome 0x%08x",
			e.Call, e.Command, e.OpMod, e.Status, uint8(e.Status), e.Syndrome)
		if lim, ok := limitOf[e.Command]; e.Status == FirmwareStatusLimErr && ok {
			s += " (" + lim + ")"
		}
		return s
	}
	return fmt.Sprintf("%s %s (op_mod 0x%x): %v", e.Call, e.Command, e.OpMod, e.Errno)
}

// limitOf names, per creating command, the resource a LIM_ERR refusal ran
// out of and the HCA capability that bounds it.
var limitOf = map[string]string{
	"CREATE_CQ":   "every CQ in use: the device allows 2^log_max_cq",
	"CREATE_QP":   "every QP in use: the device allows 2^log_max_qp",
	"CREATE_RMP":  "every RMP (SRQ) in use: the device allows 2^log_max_srq",
	"CREATE_MKEY": "every memory key in use: the device allows 2^log_max_mkey",
	"ALLOC_PD":    "every PD in use: the device allows 2^log_max_pd",
}

// Unwrap returns the errno, so errors.Is(err, syscall.EREMOTEIO) matches a
// firmware refusal.
func (e *FirmwareError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Errno
}

// Is also matches the errno rdma-core maps the firmware status to (EINVAL
// for BAD_PARAM, EBUSY for RES_BUSY, ...).
func (e *FirmwareError) Is(target error) bool {
	t, ok := target.(syscall.Errno)
	return ok && e != nil && e.Status != FirmwareStatusOK && t == mlx5.Status(e.Status).Errno()
}
