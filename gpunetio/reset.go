package gpunetio

import (
	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/internal/mmio"
	"github.com/gdaki/gpunetio/verbs"
)

// QPErrorInfo is struct doca_gpu_verbs_qp_error_info. Only HasError is
// filled, as in DOCA; the other fields are reserved for error-CQE contents.
type QPErrorInfo struct {
	HasError      bool
	Syndrome      int
	VendorErrSynd int
	HWErrSynd     int
	HWSyndType    int
	WQECounter    int
}

// LastError queries the QP from the device (doca_gpu_verbs_query_last_error):
// HasError is true when it is in the ERR state.
func (q *QP) LastError() (QPErrorInfo, error) {
	const op = "doca_gpu_verbs_query_last_error"
	if q == nil {
		return QPErrorInfo{}, newErr(op, ErrInvalidValue, "nil QP")
	}
	attr, _, err := q.qp.Query()
	if err != nil {
		return QPErrorInfo{}, wrapErr(op, ErrDriver, err, "query QP 0x%x", q.qpn)
	}
	return QPErrorInfo{HasError: attr.CurrentState == verbs.QPStateERR}, nil
}

// ResetTrackingAndMemory rewinds the software tracking after the application
// cycled the verbs QP through RST back to RTS
// (doca_gpu_verbs_reset_tracking_and_memory): the device QP's indices and
// lock go to 0, cq_sq.cqe_ci to 0 and cq_sq.cqe_rsvd to the old
// sq_rsvd_index (the CQ itself was not reset); the send DBR and the mailbox
// go to 0, the CQ ring to 0xFF bytes and the SQ ring to 0; then the device
// QP is rewritten. It needs the device QP (ErrBadState otherwise) and must
// not run while a kernel uses the QP.
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
	if err := b.memcpyHtoD(uintptr(q.devPtr), t.Encode()); err != nil {
		return wrapErr(op, ErrDriver, err, "write the device QP")
	}
	if err := b.synchronize(); err != nil {
		return wrapErr(op, ErrDriver, err, "synchronize")
	}
	return nil
}
