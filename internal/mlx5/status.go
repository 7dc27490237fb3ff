package mlx5

// The command Status, its names and errno mapping are generated from
// prm/status.prm (status_gen.go); this file holds the command error.

import (
	"errors"
	"fmt"
	"syscall"
)

// OutStatus reads the status and syndrome of an output mailbox. A mailbox
// shorter than the 8-byte header reads as (INT_ERR, 0).
func OutStatus(out []byte) (Status, uint32) {
	h, err := DecodeOutHeader(out)
	if err != nil {
		return StatusIntErr, 0
	}
	return h.Status, h.Syndrome
}

// CmdError is a PRM command that failed. Either the kernel rejected it before
// firmware saw it (Errno set, Status OK), or firmware rejected it (Errno
// EREMOTEIO, Status and Syndrome from the output mailbox).
type CmdError struct {
	Op       string // the driver call: "devx_obj_create", "devx_general_cmd", ...
	Opcode   uint16 // PRM opcode from the input mailbox
	OpMod    uint16
	Status   Status
	Syndrome uint32
	Errno    syscall.Errno
}

func (e *CmdError) Error() string {
	name := OpcodeName(e.Opcode)
	if e.Status != StatusOK {
		return fmt.Sprintf("%s %s (op_mod 0x%x): firmware status %s (0x%02x), syndrome 0x%08x",
			e.Op, name, e.OpMod, e.Status, uint8(e.Status), e.Syndrome)
	}
	return fmt.Sprintf("%s %s (op_mod 0x%x): %v", e.Op, name, e.OpMod, e.Errno)
}

// Unwrap returns the errno, so errors.Is(err, syscall.EREMOTEIO) works; Is
// also matches the finer errno the status maps to (EINVAL for BAD_PARAM, ...).
func (e *CmdError) Unwrap() error { return e.Errno }

// Is matches the errno of the call and the errno of the firmware status, and
// a *CmdError target by status (when set) and opcode (when set).
func (e *CmdError) Is(target error) bool {
	switch t := target.(type) {
	case syscall.Errno:
		return t == e.Errno || (e.Status != StatusOK && t == e.Status.Errno())
	case *CmdError:
		return (t.Status == StatusOK || t.Status == e.Status) && (t.Opcode == 0 || t.Opcode == e.Opcode)
	}
	return false
}

// NewCmdError builds the error for a failed command from its mailboxes: it
// reads opcode and op_mod from in and status and syndrome from out.
func NewCmdError(op string, in, out []byte, errno syscall.Errno) *CmdError {
	e := &CmdError{Op: op, Errno: errno}
	if h, err := DecodeCmdHeader(in); err == nil {
		e.Opcode, e.OpMod = h.Opcode, h.OpMod
	}
	if errno == syscall.EREMOTEIO || errno == 0 {
		e.Status, e.Syndrome = OutStatus(out)
		if errno == 0 {
			e.Errno = syscall.EREMOTEIO
		}
	}
	return e
}

// AsCmdError unwraps err to a *CmdError.
func AsCmdError(err error) (*CmdError, bool) {
	var e *CmdError
	ok := errors.As(err, &e)
	return e, ok
}
