package devhost

// #include "devhost.h"
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

// Geometry is what the host export writes into a device QP struct. All
// pointers are addresses the device code dereferences: C or device memory, never Go memory.
type Geometry struct {
	QPN     uint32
	SQ      unsafe.Pointer // SQ slot 0
	SQWQEs  uint16         // power of two, at most 32768
	SQDBRec unsafe.Pointer // SQ doorbell-record word (DBR base + 4)
	DB      unsafe.Pointer // doorbell register, or the 8-byte mailbox for HandlerCPUProxy
	Handler Handler        // resolved handler (not HandlerAuto)
	CQN     uint32
	CQEs    unsafe.Pointer // CQE ring (every op_own is initialised to 0xF1)
	CQENum  uint32         // power of two, >= SQWQEs
	CQDBRec unsafe.Pointer
}

// FillQP writes a complete 392-byte struct doca_gpu_dev_verbs_qp image at p (zeroing it
// first, indexes 0) and initialises the CQE ring, then returns the wrapper. Use it to connect
// a QP created on a (possibly emulated) NIC to the host-compiled device API.
func FillQP(p unsafe.Pointer, g Geometry) (*QP, error) {
	q, err := FromPointer(p)
	if err != nil {
		return nil, err
	}
	switch {
	case !isPow2(uint64(g.SQWQEs)) || g.SQWQEs > 32768:
		return nil, fmt.Errorf("devhost: fill QP %#x: SQ size %d: %w", g.QPN, g.SQWQEs, syscall.EINVAL)
	case !isPow2(uint64(g.CQENum)) || g.CQENum < uint32(g.SQWQEs):
		return nil, fmt.Errorf("devhost: fill QP %#x: CQ size %d: %w", g.QPN, g.CQENum, syscall.EINVAL)
	case !g.Handler.valid() || g.Handler == HandlerAuto:
		return nil, fmt.Errorf("devhost: fill QP %#x: handler %d: %w", g.QPN, int(g.Handler), syscall.EINVAL)
	case g.SQ == nil || g.SQDBRec == nil || g.DB == nil || g.CQEs == nil:
		return nil, fmt.Errorf("devhost: fill QP %#x: nil ring, DBR or doorbell: %w", g.QPN, syscall.EINVAL)
	}
	C.devhost_fill_qp((*C.struct_doca_gpu_dev_verbs_qp)(p), C.uint32_t(g.QPN), g.SQ, C.uint16_t(g.SQWQEs), g.SQDBRec,
		g.DB, C.int(g.Handler), C.uint32_t(g.CQN), g.CQEs, C.uint32_t(g.CQENum), g.CQDBRec)
	return q, nil
}
