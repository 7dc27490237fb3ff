package gpunetio

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/verbs"
)

// QPErrorKind says what device code recorded on a QP (struct
// gdaki_dev_qp_error in cuda/include; an extension, DOCA has none).
type QPErrorKind uint32

// What device code can record.
const (
	// QPErrorNone: nothing failed in device code (or the QP has no device copy).
	QPErrorNone QPErrorKind = QPErrorKind(devstruct.QPErrNone)
	// QPErrorCQE: a device poll saw an error CQE; the syndromes say why.
	QPErrorCQE QPErrorKind = QPErrorKind(devstruct.QPErrCQE)
	// QPErrorTimeout: a device poll ran past the QP's poll bound
	// (SetPollTimeout) without seeing its completion.
	QPErrorTimeout QPErrorKind = QPErrorKind(devstruct.QPErrTimeout)
)

// String describes the error in one line, for logs.
func (i QPErrorInfo) String() string {
	if !i.HasError {
		return fmt.Sprintf("no error (QP %v)", i.State)
	}
	switch i.Kind {
	case QPErrorCQE:
		return fmt.Sprintf("QP %v; device code saw an error CQE: %v (syndrome 0x%x, vendor 0x%x, hw 0x%x/0x%x) for WQE %d (counter %d, opcode 0x%x)",
			i.State, i.Status, i.Syndrome, i.VendorErrSynd, i.HWErrSynd, i.HWSyndType, i.WQEIndex, i.WQECounter, i.WQEOpcode)
	case QPErrorTimeout:
		return fmt.Sprintf("QP %v; a device poll for WQE %d ran past the QP's poll timeout", i.State, i.WQEIndex)
	}
	return fmt.Sprintf("QP %v; nothing recorded by device code", i.State)
}

// fill copies a device error record into i.
func (i *QPErrorInfo) fill(e devstruct.QPError) {
	i.Kind = QPErrorKind(e.Status)
	if i.Kind == QPErrorNone {
		return
	}
	i.HasError = true
	i.Syndrome = int(e.Syndrome)
	i.VendorErrSynd = int(e.VendorSyndrome)
	i.HWErrSynd = int(e.HWSyndrome)
	i.HWSyndType = int(e.HWSyndromeType)
	i.WQECounter = int(e.WQECounter)
	i.Status = verbs.WCStatus(e.Syndrome)
	i.CQEOpcode = int(e.CQEOpcode)
	i.WQEOpcode = int(e.WQEOpcode)
	i.WQEIndex = e.WQEIndex
}

// recordReadTries bounds how often a record that device code is writing at
// that moment is read again (it is a few stores away from done).
const recordReadTries = 1000

// readErrorRecord copies the device QP's error record; a zero record when
// there is no device copy yet.
func (q *QP) readErrorRecord(op string) (devstruct.QPError, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.devPtr == 0 {
		return devstruct.QPError{}, nil
	}
	b := make([]byte, devstruct.QPErrorSize)
	at := uintptr(q.devPtr) + uintptr(devstruct.OffsetQPError)
	for try := 0; ; try++ {
		if err := q.g.b.memcpyDtoH(b, at); err != nil {
			return devstruct.QPError{}, wrapErr(op, ErrDriver, err, "read the error record of QP 0x%x at %#x", q.qpn, at)
		}
		e, err := devstruct.DecodeQPError(b)
		switch {
		case err == nil:
			return e, nil
		case !errors.Is(err, devstruct.ErrRecordBusy):
			return devstruct.QPError{}, wrapErr(op, ErrUnexpected, err, "error record of QP 0x%x at %#x", q.qpn, at)
		case try >= recordReadTries:
			return devstruct.QPError{}, newErr(op, ErrTimeOut, "the error record of QP 0x%x stayed busy over %d reads", q.qpn, try+1)
		}
		if try < 16 {
			runtime.Gosched()
		} else {
			time.Sleep(10 * time.Microsecond)
		}
	}
}

// SetPollTimeout bounds every device-side poll of this QP (an extension; DOCA
// polls wait without bound). A poll whose completion is not visible after
// ticks ticks returns -ETIMEDOUT, records QPErrorTimeout in the QP's error
// record (see LastError), and from then on every poll of the QP that would
// wait returns at once: a timeout means the QP has failed, as an error CQE
// does, until ResetTrackingAndMemory. 0 (the default) removes the bound, at
// no cost to the device code.
//
// A tick is one %clock64 tick, the SM clock (about 1.98e9 per second on an
// H100 at its boost clock, fewer when it clocks down, so leave a margin); in
// a host compile of the headers (internal/devhost) it is a nanosecond.
// Device code reads the bound through the read-only cache: set it between
// kernels, never while one uses the QP. It needs no device copy yet; the
// bound goes with the copy DeviceQP or GPU.ExportQPs makes.
func (q *QP) SetPollTimeout(ticks uint64) error {
	const op = "gdaki_qp_set_poll_timeout"
	if err := q.made(op); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return newErr(op, ErrBadState, "QP 0x%x is unexported", q.qpn)
	}
	if q.devPtr != 0 {
		var b [8]byte
		for i := range b {
			b[i] = byte(ticks >> (8 * i))
		}
		at := uintptr(q.devPtr) + uintptr(devstruct.OffsetPollTimeout)
		if err := q.g.b.memcpyHtoD(at, b[:]); err != nil {
			return wrapErr(op, ErrDriver, err, "write the poll bound of QP 0x%x at %#x", q.qpn, at)
		}
	}
	q.tmpl.PollTimeout = ticks
	return nil
}

// PollTimeout returns the bound SetPollTimeout set (0: none).
func (q *QP) PollTimeout() uint64 {
	if q == nil {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.tmpl.PollTimeout
}
