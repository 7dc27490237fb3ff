package devhost

// #include <stdlib.h>
// #include "devhost.h"
import "C"

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/devstruct"
)

// Offsets of the receive-queue indexes in struct doca_gpu_dev_verbs_qp.
const (
	offRQRsvdIndex  = uintptr(devstruct.OffsetRQRsvdIndex)
	offRQReadyIndex = uintptr(devstruct.OffsetRQReadyIndex)
	offRQWQEPI      = uintptr(devstruct.OffsetRQWQEPI)
)

// The two-sided API (doca_gpunetio_dev_verbs_twosided.cuh) in thread scope,
// and the receive-queue building blocks under it. The QP must have been
// exported with its receive queue (rq_* and cq_rq filled).

// CQE is a 64-byte completion entry as device code sees it, at its address
// in the CQ ring (C or device memory the caller keeps alive).
type CQE struct{ p unsafe.Pointer }

// Valid reports whether c points at a CQE.
func (c CQE) Valid() bool { return c.p != nil }

// Pointer is the CQE's address.
func (c CQE) Pointer() unsafe.Pointer { return c.p }

// Bytes returns a copy of the 64 bytes.
func (c CQE) Bytes() []byte {
	if c.p == nil {
		return nil
	}
	return append([]byte(nil), unsafe.Slice((*byte)(c.p), 64)...)
}

// Opcode is op_own >> 4 (2 RESP_SEND, 3 RESP_SEND_IMM, 14 RESP_ERR, ...).
func (c CQE) Opcode() uint8 { return unsafe.Slice((*byte)(c.p), 64)[63] >> 4 }

// IsInline runs cqe_is_inline: 4 when the payload sits in the CQE, else 0.
func (c CQE) IsInline() uint32 { return uint32(C.devhost_cqe_is_inline(c.p)) }

// InlineData runs cqe_get_inl_data and returns its 32 bytes (a copy).
func (c CQE) InlineData() []byte {
	return append([]byte(nil), unsafe.Slice((*byte)(C.devhost_cqe_get_inl_data(c.p)), 32)...)
}

// ByteCount runs cqe_get_bytes: the received length.
func (c CQE) ByteCount() uint32 { return uint32(C.devhost_cqe_get_bytes(c.p)) }

// Immediate is the CQE's imm_inval_pkey as the sender gave it (host order).
func (c CQE) Immediate() uint32 {
	b := unsafe.Slice((*byte)(c.p), 64)
	return uint32(b[36])<<24 | uint32(b[37])<<16 | uint32(b[38])<<8 | uint32(b[39])
}

// Syndrome is byte 55 of an error CQE.
func (c CQE) Syndrome() uint8 { return unsafe.Slice((*byte)(c.p), 64)[55] }

// WQECounter is the CQE's 16-bit WQE counter (host order).
func (c CQE) WQECounter() uint16 {
	b := unsafe.Slice((*byte)(c.p), 64)
	return uint16(b[60])<<8 | uint16(b[61])
}

func (q *QP) cqRQ() *C.struct_doca_gpu_dev_verbs_cq { return C.devhost_qp_cq_rq(q.p) }

// Send runs send<RSM, NIC> (thread scope) and returns the ticket (the SQ index
// of its last WQE).
func (q *QP) Send(laddr Addr, size uint64, m Mode) (uint64, error) {
	if err := m.check("send"); err != nil {
		return 0, err
	}
	return uint64(C.devhost_send(q.p, C.uint64_t(laddr.Addr), C.uint32_t(laddr.Key), C.uint64_t(size),
		C.int(m.Sharing), C.int(m.Handler))), nil
}

// Recv runs recv<RSM, NIC> (thread scope) and returns the ticket (the RQ
// index). It blocks in the device code while the receive ring is full.
func (q *QP) Recv(laddr Addr, size uint64, m Mode) (uint64, error) {
	if err := m.check("recv"); err != nil {
		return 0, err
	}
	return uint64(C.devhost_recv(q.p, C.uint64_t(laddr.Addr), C.uint32_t(laddr.Key), C.uint64_t(size),
		C.int(m.Sharing), C.int(m.Handler))), nil
}

// RecvOptions are recv_wait's template parameters.
type RecvOptions struct {
	MCST        bool // mcst_mode ENABLED: a 1-byte DUMP at daddr after the receive
	NonBlocking bool // blocking_mode DISABLED: one look
}

func b2i(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// RecvWait runs the four-argument recv_wait on ticket and returns the CQE it
// points at. Blocking waits are bounded on the Go side: the receive CQ is
// probed until the completion (or an error CQE, or the QP's recorded failure)
// is there, then the device call runs; a timeout returns ErrTimeout without
// calling it.
func (q *QP) RecvWait(daddr Addr, ticket uint64, o RecvOptions, m Mode, timeout time.Duration) (CQE, error) {
	if err := m.check("recv_wait"); err != nil {
		return CQE{}, err
	}
	if !o.NonBlocking {
		if err := waitProbe("recv_wait", ticket, timeout, func() C.int {
			return C.devhost_probe_cq_at(q.cqRQ(), C.uint64_t(ticket), C.int(m.Sharing))
		}); err != nil {
			return CQE{}, err
		}
	}
	var p unsafe.Pointer
	C.devhost_recv_wait(q.p, C.uint64_t(daddr.Addr), C.uint32_t(daddr.Key), C.uint64_t(ticket), 0, C.int(m.Sharing),
		C.int(m.Handler), b2i(o.MCST), b2i(!o.NonBlocking), &p)
	return CQE{p}, nil
}

// RecvWaitLast runs the three-argument recv_wait (the newest reserved
// receive), blocking, bounded as RecvWait. It returns an invalid CQE when no
// receive was ever reserved (the device code leaves its output alone then).
func (q *QP) RecvWaitLast(daddr Addr, o RecvOptions, m Mode, timeout time.Duration) (CQE, error) {
	if err := m.check("recv_wait"); err != nil {
		return CQE{}, err
	}
	if rsvd, _, _ := q.RQIndexes(); rsvd > 0 {
		if err := waitProbe("recv_wait", rsvd-1, timeout, func() C.int {
			return C.devhost_probe_cq_at(q.cqRQ(), C.uint64_t(rsvd-1), C.int(m.Sharing))
		}); err != nil {
			return CQE{}, err
		}
	}
	var p unsafe.Pointer
	C.devhost_recv_wait(q.p, C.uint64_t(daddr.Addr), C.uint32_t(daddr.Key), 0, 1, C.int(m.Sharing), C.int(m.Handler),
		b2i(o.MCST), 1, &p)
	return CQE{p}, nil
}

// RecvWaitDirect runs the blocking four-argument recv_wait as it is, with
// nothing bounding it on the Go side: it returns by itself on the receive's
// CQE, an error CQE, the QP's recorded failure or its poll bound
// (SetPollTimeout).
func (q *QP) RecvWaitDirect(daddr Addr, ticket uint64, m Mode) (CQE, error) {
	if err := m.check("recv_wait"); err != nil {
		return CQE{}, err
	}
	var p unsafe.Pointer
	C.devhost_recv_wait(q.p, C.uint64_t(daddr.Addr), C.uint32_t(daddr.Key), C.uint64_t(ticket), 0, C.int(m.Sharing),
		C.int(m.Handler), 0, 1, &p)
	return CQE{p}, nil
}

// WaitRecv runs the SDK 3.1 wait_recv<THREAD, RSM, NIC>(qp, ticket, daddr),
// bounded as RecvWait.
func (q *QP) WaitRecv(ticket uint64, daddr Addr, m Mode, timeout time.Duration) error {
	if err := m.check("wait_recv"); err != nil {
		return err
	}
	if err := waitProbe("wait_recv", ticket, timeout, func() C.int {
		return C.devhost_probe_cq_at(q.cqRQ(), C.uint64_t(ticket), C.int(m.Sharing))
	}); err != nil {
		return err
	}
	C.devhost_wait_recv(q.p, C.uint64_t(ticket), C.uint64_t(daddr.Addr), C.uint32_t(daddr.Key), C.int(m.Sharing),
		C.int(m.Handler))
	return nil
}

// PollRecvCQ runs poll_cq<RSM, QP_RQ, blocking>(cq_rq, idx, &cqe) (the
// blocking form bounded as RecvWait): nil, EBUSY (non-blocking, not there
// yet) or EIO, with the CQE slot of idx.
func (q *QP) PollRecvCQ(idx uint64, s Sharing, blocking bool, timeout time.Duration) (CQE, error) {
	if blocking {
		if err := waitProbe("poll_cq", idx, timeout, func() C.int {
			return C.devhost_probe_cq_at(q.cqRQ(), C.uint64_t(idx), C.int(s))
		}); err != nil {
			return CQE{}, err
		}
	}
	var p unsafe.Pointer
	st := C.devhost_poll_cq_rq(q.p, C.uint64_t(idx), C.int(s), b2i(blocking), &p)
	return CQE{p}, pollError("poll_cq", idx, st)
}

// PollOneRecvCQDeviceAt runs poll_one_cq_device_at<RSM, QP_RQ>(cq_rq, idx,
// &cqe): nil, EBUSY or EIO, with the CQE slot of idx.
func (q *QP) PollOneRecvCQDeviceAt(idx uint64, s Sharing) (CQE, error) {
	var p unsafe.Pointer
	st := C.devhost_poll_one_cq_device_at_rq(q.p, C.uint64_t(idx), C.int(s), &p)
	return CQE{p}, pollError("poll_one_cq_device_at", idx, st)
}

// RQIndexes returns rq_rsvd_index, rq_ready_index and rq_wqe_pi.
func (q *QP) RQIndexes() (rsvd, ready, pi uint64) {
	return atomic.LoadUint64(q.u64(offRQRsvdIndex)), atomic.LoadUint64(q.u64(offRQReadyIndex)), atomic.LoadUint64(q.u64(offRQWQEPI))
}

// RWQEPtr returns get_rwqe_ptr(qp, idx).
func (q *QP) RWQEPtr(idx uint64) unsafe.Pointer { return C.devhost_get_rwqe_ptr(q.p, C.uint16_t(idx)) }

// PrepareRecv runs wqe_prepare_recv into rwqe.
func (q *QP) PrepareRecv(rwqe unsafe.Pointer, a Addr, bytes uint32) {
	C.devhost_prepare_recv(q.p, rwqe, C.uint64_t(a.Addr), C.uint32_t(a.Key), C.uint32_t(bytes))
}

// Seg is one data segment of PrepareSend.
type Seg struct {
	Addr  uint64
	Key   uint32 // stored verbatim (big-endian already)
	Bytes uint32
}

// PrepareSend runs the wqe_prepare_send overload of len(segs) (0..3) data
// segments into wqe.
func (q *QP) PrepareSend(wqe unsafe.Pointer, idx uint16, opcode, flags, imm uint32, segs ...Seg) error {
	if len(segs) > 3 {
		return fmt.Errorf("devhost: wqe_prepare_send: %d data segments, at most 3: %w", len(segs), syscall.EINVAL)
	}
	a := (*C.uint64_t)(C.malloc(3 * 8))
	k := (*C.uint32_t)(C.malloc(3 * 4))
	b := (*C.uint32_t)(C.malloc(3 * 4))
	defer C.free(unsafe.Pointer(a))
	defer C.free(unsafe.Pointer(k))
	defer C.free(unsafe.Pointer(b))
	as, ks, bs := unsafe.Slice(a, 3), unsafe.Slice(k, 3), unsafe.Slice(b, 3)
	for i, s := range segs {
		as[i], ks[i], bs[i] = C.uint64_t(s.Addr), C.uint32_t(s.Key), C.uint32_t(s.Bytes)
	}
	C.devhost_prepare_send(q.p, wqe, C.uint16_t(idx), C.uint32_t(opcode), C.uint32_t(flags), C.uint32_t(imm),
		C.int(len(segs)), a, k, b)
	return nil
}

// RQReserve runs reserve_wq_slots<RSM, QP_RQ>(qp, n, opt).
func (q *QP) RQReserve(n uint32, s Sharing, opt uint32) uint64 {
	return uint64(C.devhost_rq_reserve(q.p, C.uint32_t(n), C.int(s), C.uint32_t(opt)))
}

// RQMarkReady runs mark_wqes_ready<RSM, QP_RQ>(qp, from, to).
func (q *QP) RQMarkReady(from, to uint64, s Sharing) {
	C.devhost_rq_mark_ready(q.p, C.uint64_t(from), C.uint64_t(to), C.int(s))
}

// RQSubmit runs submit<RSM, GPU, NIC, QP_RQ>(qp, pi).
func (q *QP) RQSubmit(pi uint64, m Mode) error {
	if err := m.check("submit"); err != nil {
		return err
	}
	C.devhost_rq_submit(q.p, C.uint64_t(pi), C.int(m.Sharing), C.int(m.Handler))
	return nil
}
