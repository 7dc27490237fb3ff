package gpunetio

import (
	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/internal/mmio"
	"github.com/gdaki/gpunetio/verbs"
)

// QPErrorInfo is struct doca_gpu_verbs_qp_error_info, extended with what
// device code recorded on the QP. DOCA fills only HasError (from the QP
// state); here the DOCA fields also carry the error CQE that device code saw,
// and the fields after them say more (see QPErrorKind).
type QPErrorInfo struct {
	// HasError is true when the verbs QP is in the ERR state or device code
	// recorded a failure (an error CQE, or a poll past the QP's bound).
	HasError bool
	// The error CQE device code recorded (all 0 for none or a timeout).
	Syndrome      int // CQE syndrome: 0x13 remote access, 0x15 transport retry exceeded, ...
	VendorErrSynd int
	HWErrSynd     int
	HWSyndType    int
	WQECounter    int // the CQE's 16-bit WQE counter (for a timeout: of the awaited WQE)

	// State is the verbs QP's state when LastError queried it.
	State verbs.QPState
	// Kind is what device code recorded (QPErrorNone when the QP has no
	// device copy yet or nothing failed there).
	Kind QPErrorKind
	// Status is Syndrome as a named completion status (IBV_WC_... by String).
	Status verbs.WCStatus
	// CQEOpcode is the error CQE's opcode (13 requester, 14 responder error).
	CQEOpcode int
	// WQEOpcode is the mlx5 opcode of the failed WQE (0x08 RDMA write, ...).
	WQEOpcode int
	// WQEIndex is the 64-bit WQE index whose poll saw the error CQE or ran
	// past the bound.
	WQEIndex uint64
}

// LastError queries the QP from the device (doca_gpu_verbs_query_last_error)
// and, once DeviceQP (or GPU.ExportQPs) made the device copy, reads the error
// record that device code keeps in it: the first error CQE a device poll saw,
// or the first poll that ran past SetPollTimeout's bound. The record stays
// until ResetTrackingAndMemory. LastError may run while a kernel uses the QP;
// a record being written at that moment is read again.
func (q *QP) LastError() (QPErrorInfo, error) {
	const op = "doca_gpu_verbs_query_last_error"
	if q == nil {
		return QPErrorInfo{}, newErr(op, ErrInvalidValue, "nil QP")
	}
	attr, _, err := q.qp.Query()
	if err != nil {
		return QPErrorInfo{}, wrapErr(op, ErrDriver, err, "query QP 0x%x", q.qpn)
	}
	info := QPErrorInfo{State: attr.CurrentState, HasError: attr.CurrentState == verbs.QPStateERR}
	rec, err := q.readErrorRecord(op)
	if err != nil {
		return QPErrorInfo{}, err
	}
	info.fill(rec)
	return info, nil
}

// ResetTrackingAndMemory rewinds the software tracking after the application
// cycled the verbs QP through RST back to RTS
// (doca_gpu_verbs_reset_tracking_and_memory): the device QP's indices and
// lock go to 0, cq_sq.cqe_ci to 0 and cq_sq.cqe_rsvd to the old
// sq_rsvd_index (the CQ itself was not reset); the send DBR and the mailbox
// go to 0, the CQ ring to 0xFF bytes and the SQ ring to 0. An export with a
// receive CQ gets the same on its receive side (rq_* indices and lock,
// cq_rq.cqe_ci 0 and cqe_rsvd the old rq_rsvd_index, the receive DBR word
// 0, the receive CQ ring 0xFF, the receive ring 0); then the device
// QP is rewritten, which also clears the error record that device code kept
// (see LastError) and keeps the poll bound (SetPollTimeout). It needs the
// device QP (ErrBadState otherwise) and must not run while a kernel uses the
// QP.
func (q *QP) ResetTrackingAndMemory() error {
	const op = "doca_gpu_verbs_reset_tracking_and_memory"
	if q == nil {
		return newErr(op, ErrInvalidValue, "nil QP")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.devPtr == 0 {
		return newErr(op, ErrBadState, "QP 0x%x has no device QP (call DeviceQP first)", q.qpn)
	}
	b := q.g.b
	img := make([]byte, devstruct.QPSize)
	if err := b.memcpyDtoH(img, uintptr(q.devPtr)); err != nil {
		return wrapErr(op, ErrDriver, err, "read the device QP at %#x", q.devPtr)
	}
	cur, err := devstruct.DecodeQP(img)
	if err != nil {
		return wrapErr(op, ErrUnexpected, err, "device QP at %#x", q.devPtr)
	}
	q.progMu.Lock()
	defer q.progMu.Unlock()
	t := &q.tmpl
	t.SQWQEPI, t.SQRsvdIndex, t.SQReadyIndex, t.SQLock = 0, 0, 0, 0
	t.CQ.CQECI = 0
	t.CQ.CQERsvd = cur.SQRsvdIndex
	q.piLast = 0
	if q.cpuAssist {
		mmio.Store32(hostPtr(q.sqDBRec), 0)
		if p := q.cpuDB.Load(); p != 0 {
			mmio.Store64(hostPtr(p), 0)
		}
	} else if err := b.memsetD8(uintptr(t.SQDBRec), 0, 4); err != nil {
		return wrapErr(op, ErrDriver, err, "clear the send DBR")
	}
	if err := b.memsetD8(uintptr(t.CQ.CQEDAddr), 0xff, uintptr(t.CQ.CQENum)*64); err != nil {
		return wrapErr(op, ErrDriver, err, "fill the CQ ring")
	}
	if err := b.memsetD8(uintptr(t.SQWQEDAddr), 0, uintptr(t.SQWQENum)*64); err != nil {
		return wrapErr(op, ErrDriver, err, "clear the SQ ring")
	}
	if q.rqCQ != nil {
		if err := q.resetRQ(op, cur); err != nil {
			return err
		}
	}
	if err := b.memcpyHtoD(uintptr(q.devPtr), t.Encode()); err != nil {
		return wrapErr(op, ErrDriver, err, "write the device QP")
	}
	if err := b.synchronize(); err != nil {
		return wrapErr(op, ErrDriver, err, "synchronize")
	}
	return nil
}

// resetRQ is the receive side of ResetTrackingAndMemory; cur is the device
// QP as it was.
func (q *QP) resetRQ(op string, cur devstruct.QP) error {
	b, t := q.g.b, &q.tmpl
	t.RQWQEPI, t.RQRsvdIndex, t.RQReadyIndex, t.RQLock = 0, 0, 0, 0
	t.CQRQ.CQECI = 0
	t.CQRQ.CQERsvd = cur.RQRsvdIndex
	if q.cpuAssist {
		// A CPU writes the send word of this QP's doorbell record: it is
		// host memory (CPU_GPU memory for a high-level QP, whose rq_dbrec
		// is then the page's device mapping): store through its host
		// address.
		mmio.Store32(hostPtr(q.qp.DBRAddr()), 0)
	} else if err := b.memsetD8(uintptr(t.RQDBRec), 0, 4); err != nil {
		return wrapErr(op, ErrDriver, err, "clear the receive DBR")
	}
	if err := b.memsetD8(uintptr(t.CQRQ.CQEDAddr), 0xff, uintptr(t.CQRQ.CQENum)*64); err != nil {
		return wrapErr(op, ErrDriver, err, "fill the receive CQ ring")
	}
	if err := b.memsetD8(uintptr(t.RQWQEDAddr), 0, uintptr(t.RQWQENum)*uintptr(t.RcvWQESize)); err != nil {
		return wrapErr(op, ErrDriver, err, "clear the receive ring")
	}
	return nil
}
