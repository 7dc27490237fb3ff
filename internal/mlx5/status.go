package mlx5

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
)

// Status is the command status in byte 0 of every PRM output mailbox.
type Status uint8

const (
	StatusOK              Status = 0x00
	StatusIntErr          Status = 0x01
	StatusBadOp           Status = 0x02
	StatusBadParam        Status = 0x03
	StatusBadSysState     Status = 0x04
	StatusBadRes          Status = 0x05
	StatusResBusy         Status = 0x06
	StatusLimErr          Status = 0x08
	StatusBadResState     Status = 0x09
	StatusIxErr           Status = 0x0a
	StatusNoRes           Status = 0x0f
	StatusBadQPState      Status = 0x10
	StatusBadPkt          Status = 0x30
	StatusBadSizeOutsCQEs Status = 0x40
	StatusBadInpLen       Status = 0x50
	StatusBadOutpLen      Status = 0x51
)

var statusInfo = map[Status]struct {
	name  string
	errno syscall.Errno
}{
	StatusOK:              {"OK", 0},
	StatusIntErr:          {"INT_ERR", syscall.EIO},
	StatusBadOp:           {"BAD_OP", syscall.EINVAL},
	StatusBadParam:        {"BAD_PARAM", syscall.EINVAL},
	StatusBadSysState:     {"BAD_SYS_STATE", syscall.EIO},
	StatusBadRes:          {"BAD_RES", syscall.EINVAL},
	StatusResBusy:         {"RES_BUSY", syscall.EBUSY},
	StatusLimErr:          {"LIM_ERR", syscall.ENOMEM},
	StatusBadResState:     {"BAD_RES_STATE", syscall.EINVAL},
	StatusIxErr:           {"IX_ERR", syscall.EINVAL},
	StatusNoRes:           {"NO_RES", syscall.EAGAIN},
	StatusBadQPState:      {"BAD_QP_STATE", syscall.EINVAL},
	StatusBadPkt:          {"BAD_PKT", syscall.EINVAL},
	StatusBadSizeOutsCQEs: {"BAD_SIZE_OUTS_CQES", syscall.EINVAL},
	StatusBadInpLen:       {"BAD_INP_LEN", syscall.EIO},
	StatusBadOutpLen:      {"BAD_OUTP_LEN", syscall.EIO},
}

func (s Status) String() string {
	if i, ok := statusInfo[s]; ok {
		return i.name
	}
	return fmt.Sprintf("STATUS_0x%02x", uint8(s))
}

// Errno is the errno libmlx5's mlx5_cmd_status_to_err maps the status to
// (EINVAL for unknown codes).
func (s Status) Errno() syscall.Errno {
	if i, ok := statusInfo[s]; ok {
		return i.errno
	}
	return syscall.EINVAL
}

// OutStatus reads the status and syndrome of an output mailbox. A mailbox
// shorter than the 8-byte header reads as (INT_ERR, 0).
func OutStatus(out []byte) (Status, uint32) {
	if len(out) < 8 {
		return StatusIntErr, 0
	}
	return Status(out[0]), binary.BigEndian.Uint32(out[4:8])
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
	if len(in) >= 8 {
		e.Opcode = binary.BigEndian.Uint16(in[0:2])
		e.OpMod = binary.BigEndian.Uint16(in[6:8])
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
