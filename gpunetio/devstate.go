package gpunetio

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/gdaki/gpunetio/internal/devstruct"
)

// DeviceQueueState is one queue of a device QP as device code left it: how
// far threads reserved, marked ready and announced to the NIC (the
// doorbell, or the receive record), and how far they consumed its CQ.
// Reserved ahead of Ready means a thread is between reserving and
// publishing (or stopped there); Ready ahead of Announced, a doorbell not
// yet rung; CQConsumed behind Announced, completions not yet seen.
type DeviceQueueState struct {
	WQEs       uint32 // ring size; 0: the QP has no such queue
	Reserved   uint64 // sq_rsvd_index / rq_rsvd_index
	Ready      uint64 // sq_ready_index / rq_ready_index
	Announced  uint64 // sq_wqe_pi / rq_wqe_pi
	Locked     bool   // sq_lock / rq_lock held
	CQEntries  uint32 // the CQ's size
	CQConsumed uint64 // the CQ's cqe_ci
}

// DeviceQPState is what DeviceState read (an extension; DOCA has none).
type DeviceQPState struct {
	SQ, RQ DeviceQueueState
	Error  QPErrorInfo // the error record only: State is not queried
}

// String is one line per queue and the error record when there is one, for
// a log.
func (s DeviceQPState) String() string {
	var b strings.Builder
	q := func(name, pi, cq string, d DeviceQueueState) {
		lock := ""
		if d.Locked {
			lock = ", locked"
		}
		fmt.Fprintf(&b, "%s: reserved %d, ready %d, %s %d of %d WQEs%s; %s consumed %d of %d CQEs\n",
			name, d.Reserved, d.Ready, pi, d.Announced, d.WQEs, lock, cq, d.CQConsumed, d.CQEntries)
	}
	q("SQ", "doorbell", "send CQ", s.SQ)
	if s.RQ.WQEs != 0 {
		q("RQ", "record", "receive CQ", s.RQ)
	}
	if s.Error.HasError {
		fmt.Fprintf(&b, "error record: %s\n", s.Error.String())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// DeviceState reads the device QP back (one copy, DeviceQP's memory) and
// returns its queue indices and error record: where a kernel that does not
// finish stopped. It may run while a kernel uses the QP; the indices are
// then a snapshot, each as device code last stored it. On a GPU the copy
// goes on the legacy stream, which does not wait for kernels on
// non-blocking streams. ErrBadState before DeviceQP made the device copy.
func (q *QP) DeviceState() (DeviceQPState, error) {
	const op = "QP.DeviceState"
	if q == nil {
		return DeviceQPState{}, newErr(op, ErrInvalidValue, "nil QP")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return DeviceQPState{}, newErr(op, ErrBadState, "QP is unexported")
	}
	if q.devPtr == 0 {
		return DeviceQPState{}, newErr(op, ErrBadState, "QP 0x%x has no device copy yet (DeviceQP makes it)", q.qpn)
	}
	b := make([]byte, devstruct.QPSize)
	var d devstruct.QP
	for try := 0; ; try++ {
		if err := q.g.b.memcpyDtoH(b, uintptr(q.devPtr)); err != nil {
			return DeviceQPState{}, wrapErr(op, ErrDriver, err, "read the device QP 0x%x at %#x", q.qpn, uintptr(q.devPtr))
		}
		var err error
		d, err = devstruct.DecodeQP(b)
		switch {
		case err == nil:
		case !errors.Is(err, devstruct.ErrRecordBusy):
			return DeviceQPState{}, wrapErr(op, ErrUnexpected, err, "device QP 0x%x at %#x", q.qpn, uintptr(q.devPtr))
		case try >= recordReadTries:
			return DeviceQPState{}, newErr(op, ErrTimeOut, "the error record of QP 0x%x stayed busy over %d reads", q.qpn, try+1)
		default:
			runtime.Gosched() // device code is writing its error record: read again
			continue
		}
		break
	}
	s := DeviceQPState{
		SQ: DeviceQueueState{WQEs: uint32(d.SQWQENum), Reserved: d.SQRsvdIndex, Ready: d.SQReadyIndex,
			Announced: d.SQWQEPI, Locked: d.SQLock != 0, CQEntries: d.CQ.CQENum, CQConsumed: d.CQ.CQECI},
		RQ: DeviceQueueState{WQEs: d.RQWQENum, Reserved: d.RQRsvdIndex, Ready: d.RQReadyIndex,
			Announced: d.RQWQEPI, Locked: d.RQLock != 0, CQEntries: d.CQRQ.CQENum, CQConsumed: d.CQRQ.CQECI},
	}
	s.Error.fill(d.Error)
	return s, nil
}
