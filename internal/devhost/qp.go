package devhost

// #include <stdlib.h>
// #include "devhost.h"
// static struct doca_gpu_dev_verbs_cq *devhost_qp_cq(struct doca_gpu_dev_verbs_qp *qp) { return &qp->cq_sq; }
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/devstruct"
)

// Offsets of the fields of struct doca_gpu_dev_verbs_qp that Go reads, from the one layout
// table (internal/devstruct, computed by the C compiler).
const (
	offRsvdIndex  = uintptr(devstruct.OffsetSQRsvdIndex)
	offReadyIndex = uintptr(devstruct.OffsetSQReadyIndex)
	offWQEPI      = uintptr(devstruct.OffsetSQWQEPI)
	offSQLock     = uintptr(devstruct.OffsetSQLock)
	offCQ         = uintptr(devstruct.OffsetCQSQ)
	offCQCI       = offCQ + uintptr(devstruct.OffsetCQECI)
	offCQRsvd     = offCQ + uintptr(devstruct.OffsetCQERsvd)
	offCQFlags    = offCQ + uintptr(devstruct.OffsetCQFlags)
	// QPSize is sizeof(struct doca_gpu_dev_verbs_qp).
	QPSize = devstruct.QPSize
)

// Mode selects the template arguments of an operation: sharing mode, NIC handler, code options
// and, for the signalling operations, the signal operation (ADD by default).
type Mode struct {
	Sharing Sharing
	Handler Handler
	Opt     CodeOpt
	Signal  SignalOp
}

func (m Mode) check(op string) error {
	if !m.Sharing.valid() {
		return fmt.Errorf("devhost: %s: sharing mode %d: %w", op, int(m.Sharing), syscall.EINVAL)
	}
	if !m.Handler.valid() {
		return fmt.Errorf("devhost: %s: NIC handler %d: %w", op, int(m.Handler), syscall.EINVAL)
	}
	if m.Signal != SignalAdd && m.Signal != SignalSet {
		return fmt.Errorf("devhost: %s: signal operation %d: %w", op, int(m.Signal), syscall.EINVAL)
	}
	return nil
}

// QP is a struct doca_gpu_dev_verbs_qp in C memory, driven through the host-compiled headers.
type QP struct {
	p *C.struct_doca_gpu_dev_verbs_qp
}

// FromPointer wraps an existing 392-byte struct doca_gpu_dev_verbs_qp (8-byte aligned, not Go
// memory) whose rings, doorbell record and doorbell target the caller keeps alive.
func FromPointer(p unsafe.Pointer) (*QP, error) {
	if p == nil {
		return nil, fmt.Errorf("devhost: wrap QP: nil pointer: %w", syscall.EINVAL)
	}
	if uintptr(p)%8 != 0 {
		return nil, fmt.Errorf("devhost: wrap QP: %p not 8-byte aligned: %w", p, syscall.EINVAL)
	}
	return &QP{p: (*C.struct_doca_gpu_dev_verbs_qp)(p)}, nil
}

// Pointer returns the address of the struct.
func (q *QP) Pointer() unsafe.Pointer { return unsafe.Pointer(q.p) }

func (q *QP) cq() *C.struct_doca_gpu_dev_verbs_cq { return C.devhost_qp_cq(q.p) }

func (q *QP) u64(off uintptr) *uint64 { return (*uint64)(unsafe.Add(unsafe.Pointer(q.p), off)) }

// Indexes returns sq_rsvd_index, sq_ready_index and sq_wqe_pi.
func (q *QP) Indexes() (rsvd, ready, pi uint64) {
	return atomic.LoadUint64(q.u64(offRsvdIndex)), atomic.LoadUint64(q.u64(offReadyIndex)),
		atomic.LoadUint64(q.u64(offWQEPI))
}

// CQConsumerIndex returns cq_sq.cqe_ci.
func (q *QP) CQConsumerIndex() uint64 { return atomic.LoadUint64(q.u64(offCQCI)) }

// WQEPtr returns get_wqe_ptr(qp, idx).
func (q *QP) WQEPtr(idx uint64) unsafe.Pointer { return C.devhost_get_wqe_ptr(q.p, C.uint16_t(idx)) }

// ---- builders -------------------------------------------------------------------------------

// PrepareNOP runs wqe_prepare_nop into wqe.
func (q *QP) PrepareNOP(wqe unsafe.Pointer, idx uint16, flags uint32) {
	C.devhost_prepare_nop(q.p, wqe, C.uint16_t(idx), C.uint32_t(flags))
}

// PrepareWrite runs the 1-SGE wqe_prepare_write.
func (q *QP) PrepareWrite(wqe unsafe.Pointer, idx uint16, opcode, flags, imm uint32, raddr Addr, laddr Addr, bytes uint32) {
	C.devhost_prepare_write(q.p, wqe, C.uint16_t(idx), C.uint32_t(opcode), C.uint32_t(flags), C.uint32_t(imm),
		C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr), C.uint32_t(laddr.Key), C.uint32_t(bytes))
}

// PrepareWrite2 runs the 2-SGE wqe_prepare_write.
func (q *QP) PrepareWrite2(wqe unsafe.Pointer, idx uint16, opcode, flags, imm uint32, raddr, l0 Addr, b0 uint32, l1 Addr, b1 uint32) {
	C.devhost_prepare_write2(q.p, wqe, C.uint16_t(idx), C.uint32_t(opcode), C.uint32_t(flags), C.uint32_t(imm),
		C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(l0.Addr), C.uint32_t(l0.Key), C.uint32_t(b0),
		C.uint64_t(l1.Addr), C.uint32_t(l1.Key), C.uint32_t(b1))
}

// PrepareInlineHeader runs prepare_inl_rdma_write_wqe_header.
func (q *QP) PrepareInlineHeader(wqe unsafe.Pointer, idx uint16, flags uint32, raddr Addr, bytes uint32) {
	C.devhost_prepare_inl_header(q.p, wqe, C.uint16_t(idx), C.uint32_t(flags), C.uint64_t(raddr.Addr),
		C.uint32_t(raddr.Key), C.uint32_t(bytes))
}

// PrepareInlineData runs prepare_inl_rdma_write_wqe_data<T> with a T of len(data) bytes (1..28).
func (q *QP) PrepareInlineData(wqe unsafe.Pointer, data []byte) error {
	if len(data) < 1 || len(data) > 28 {
		return fmt.Errorf("devhost: inline data of %d bytes (1..28): %w", len(data), syscall.EINVAL)
	}
	buf := C.CBytes(data)
	defer C.free(buf)
	if C.devhost_prepare_inl_data(q.p, wqe, buf, C.uint32_t(len(data))) != 0 {
		return fmt.Errorf("devhost: inline data of %d bytes: %w", len(data), syscall.EINVAL)
	}
	return nil
}

// PrepareWriteInline runs wqe_prepare_write_inl; laddr must be C memory readable now.
func (q *QP) PrepareWriteInline(wqe unsafe.Pointer, idx uint16, flags uint32, raddr Addr, laddr unsafe.Pointer, bytes uint32) {
	C.devhost_prepare_write_inl(q.p, wqe, C.uint16_t(idx), C.uint32_t(flags), C.uint64_t(raddr.Addr),
		C.uint32_t(raddr.Key), C.uint64_t(uintptr(laddr)), C.uint32_t(bytes))
}

// PrepareRead runs the 1-SGE wqe_prepare_read.
func (q *QP) PrepareRead(wqe unsafe.Pointer, idx uint16, flags uint32, raddr, laddr Addr, bytes uint32) {
	C.devhost_prepare_read(q.p, wqe, C.uint16_t(idx), C.uint32_t(flags), C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key),
		C.uint64_t(laddr.Addr), C.uint32_t(laddr.Key), C.uint32_t(bytes))
}

// PrepareRead2 runs the 2-SGE wqe_prepare_read.
func (q *QP) PrepareRead2(wqe unsafe.Pointer, idx uint16, flags uint32, raddr, l0 Addr, b0 uint32, l1 Addr, b1 uint32) {
	C.devhost_prepare_read2(q.p, wqe, C.uint16_t(idx), C.uint32_t(flags), C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key),
		C.uint64_t(l0.Addr), C.uint32_t(l0.Key), C.uint32_t(b0), C.uint64_t(l1.Addr), C.uint32_t(l1.Key), C.uint32_t(b1))
}

// PrepareAtomic runs wqe_prepare_atomic.
func (q *QP) PrepareAtomic(wqe unsafe.Pointer, idx uint16, opcode, flags uint32, raddr, laddr Addr, bytes uint32, compareAdd, swapAdd uint64) {
	C.devhost_prepare_atomic(q.p, wqe, C.uint16_t(idx), C.uint32_t(opcode), C.uint32_t(flags), C.uint64_t(raddr.Addr),
		C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr), C.uint32_t(laddr.Key), C.uint32_t(bytes),
		C.uint64_t(compareAdd), C.uint64_t(swapAdd))
}

// AtomicExt holds the operands of wqe_prepare_atomic_ext.
type AtomicExt struct {
	Bytes8                                       bool
	AddData, FieldBoundary                       uint64
	SwapData, CompareData, SwapMask, CompareMask uint64
}

// PrepareAtomicExt runs wqe_prepare_atomic_ext<4 or 8> into wqe0 (and wqe1 for the 8-byte masked CS).
func (q *QP) PrepareAtomicExt(wqe0, wqe1 unsafe.Pointer, idx uint16, opcode, flags uint32, raddr, laddr Addr, a AtomicExt) {
	C.devhost_prepare_atomic_ext(q.p, wqe0, wqe1, cBool(a.Bytes8), C.uint16_t(idx), C.uint32_t(opcode), C.uint32_t(flags),
		C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr), C.uint32_t(laddr.Key),
		C.uint64_t(a.AddData), C.uint64_t(a.FieldBoundary), C.uint64_t(a.SwapData), C.uint64_t(a.CompareData),
		C.uint64_t(a.SwapMask), C.uint64_t(a.CompareMask))
}

// PrepareWait runs wqe_prepare_wait.
func (q *QP) PrepareWait(wqe unsafe.Pointer, idx uint16, flags, maxIndex, qpnCQN uint32) {
	C.devhost_prepare_wait(q.p, wqe, C.uint16_t(idx), C.uint32_t(flags), C.uint32_t(maxIndex), C.uint32_t(qpnCQN))
}

// PrepareDump runs wqe_prepare_dump.
func (q *QP) PrepareDump(wqe unsafe.Pointer, idx uint16, flags uint32, laddr Addr, bytes uint32) {
	C.devhost_prepare_dump(q.p, wqe, C.uint16_t(idx), C.uint32_t(flags), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint32_t(bytes))
}

// PrepareDB returns prepare_db(qp, pi): the 8-byte doorbell as a native integer whose
// little-endian memory image is the doorbell bytes.
func (q *QP) PrepareDB(pi uint64) uint64 { return uint64(C.devhost_prepare_db(q.p, C.uint64_t(pi))) }

// PrepareDBR returns prepare_dbr(pi) (the big-endian DBR value as stored).
func PrepareDBR(pi uint32) uint32 { return uint32(C.devhost_prepare_dbr(C.uint32_t(pi))) }

// ---- low-level SQ -------------------------------------------------------------------------------

// Reserve runs reserve_wq_slots. It blocks in the availability check while the slot is in use
// unless m.Opt has CodeOptSkipAvailabilityCheck.
func (q *QP) Reserve(count uint32, m Mode) (uint64, error) {
	if err := m.check("reserve_wq_slots"); err != nil {
		return 0, err
	}
	return uint64(C.devhost_reserve(q.p, C.uint32_t(count), C.int(m.Sharing), C.uint32_t(m.Opt))), nil
}

// MarkReady runs mark_wqes_ready (blocks until every earlier reservation is published).
func (q *QP) MarkReady(from, to uint64, s Sharing, r ReadyMode) error {
	if !s.valid() {
		return fmt.Errorf("devhost: mark_wqes_ready: sharing mode %d: %w", int(s), syscall.EINVAL)
	}
	C.devhost_mark_ready(q.p, C.uint64_t(from), C.uint64_t(to), C.int(s), C.int(r))
	return nil
}

// Submit runs submit<RSM, SYNC_SCOPE_GPU, NIC>(qp, pi, code_opt).
func (q *QP) Submit(pi uint64, m Mode) error {
	if err := m.check("submit"); err != nil {
		return err
	}
	C.devhost_submit(q.p, C.uint64_t(pi), C.int(m.Sharing), C.int(m.Handler), C.uint32_t(m.Opt))
	return nil
}

// SubmitMulti runs submit_multi_qps<2, RSM, SYNC_SCOPE_GPU, NIC>({q, other}, {pi, otherPI}).
func (q *QP) SubmitMulti(other *QP, pi, otherPI uint64, m Mode) error {
	if err := m.check("submit_multi_qps"); err != nil {
		return err
	}
	C.devhost_submit_multi(q.p, other.p, C.uint64_t(pi), C.uint64_t(otherPI), C.int(m.Sharing), C.int(m.Handler), C.uint32_t(m.Opt))
	return nil
}

// ---- CQ -------------------------------------------------------------------------------------------

// PollOneCQAt runs the non-blocking poll_one_cq_at: nil, EBUSY (not visible) or EIO (error CQE).
func (q *QP) PollOneCQAt(ci uint64, s Sharing) error {
	return pollError("poll_one_cq_at", ci, C.devhost_poll_one_cq_at(q.cq(), C.uint64_t(ci), C.int(s)))
}

// wait probes until probe returns something other than EBUSY, or timeout.
func waitProbe(op string, index uint64, timeout time.Duration, probe func() C.int) error {
	deadline := time.Now().Add(timeout)
	for spins := 0; ; spins++ {
		if probe() != C.int(syscall.EBUSY) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("devhost: %s %d: no completion after %v: %w", op, index, timeout, ErrTimeout)
		}
		if spins > 64 {
			runtime.Gosched()
		}
	}
}

// PollCQAt runs the blocking poll_cq_at once the completion is visible (bounded by timeout):
// nil or EIO. The error CQE is returned, never spun on.
func (q *QP) PollCQAt(ci uint64, s Sharing, timeout time.Duration) error {
	if err := waitProbe("poll_cq_at", ci, timeout, func() C.int { return C.devhost_probe_cq_at(q.cq(), C.uint64_t(ci), C.int(s)) }); err != nil {
		return err
	}
	return pollError("poll_cq_at", ci, C.devhost_poll_cq_at(q.cq(), C.uint64_t(ci), C.int(s)))
}

// PollCQ runs poll_cq(cq, count) (waits for the next count completions), bounded by timeout.
func (q *QP) PollCQ(count uint32, s Sharing, timeout time.Duration) error {
	if count > 0 {
		ci := q.CQConsumerIndex() + uint64(count) - 1
		if err := waitProbe("poll_cq", ci, timeout, func() C.int { return C.devhost_probe_cq_at(q.cq(), C.uint64_t(ci), C.int(s)) }); err != nil {
			return err
		}
	}
	return pollError("poll_cq", uint64(count), C.devhost_poll_cq(q.cq(), C.uint32_t(count), C.int(s)))
}

// PollCQCollapsedAt runs poll_cq_collapsed_at (count semantics), bounded by timeout.
func (q *QP) PollCQCollapsedAt(ci uint64, s Sharing, timeout time.Duration) error {
	if err := waitProbe("poll_cq_collapsed_at", ci, timeout, func() C.int { return C.devhost_probe_collapsed(q.p, C.uint64_t(ci)) }); err != nil {
		return err
	}
	return pollError("poll_cq_collapsed_at", ci, C.devhost_poll_cq_collapsed_at(q.p, C.uint64_t(ci), C.int(s)))
}

// CQUpdateDBRec runs cq_update_dbrec<isOverrun>(cq, n) and returns the new 24-bit index.
func (q *QP) CQUpdateDBRec(n uint32, isOverrun bool) uint32 {
	return uint32(C.devhost_cq_update_dbrec(q.cq(), C.uint32_t(n), cBool(isOverrun)))
}

// ---- high-level one-sided (thread scope) -------------------------------------------------------------

// Put runs put<RSM, NIC, THREAD> and returns the ticket.
func (q *QP) Put(raddr, laddr Addr, size uint64, m Mode) (uint64, error) {
	if err := m.check("put"); err != nil {
		return 0, err
	}
	return uint64(C.devhost_put(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint64_t(size), C.int(m.Sharing), C.int(m.Handler), C.uint32_t(m.Opt))), nil
}

// P runs p<T> with a T of size bytes (1, 2, 4 or 8) holding the low bytes of value.
func (q *QP) P(raddr Addr, value uint64, size uint32, m Mode) (uint64, error) {
	if err := m.check("p"); err != nil {
		return 0, err
	}
	if size != 1 && size != 2 && size != 4 && size != 8 {
		return 0, fmt.Errorf("devhost: p: value size %d: %w", size, syscall.EINVAL)
	}
	return uint64(C.devhost_p(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(value), C.uint32_t(size),
		C.int(m.Sharing), C.int(m.Handler), C.uint32_t(m.Opt))), nil
}

// PutSignal runs put_signal<m.Signal, RSM, NIC, THREAD> and returns the ticket (the signal's index).
func (q *QP) PutSignal(raddr, laddr Addr, size uint64, sigR, sigL Addr, sigVal uint64, m Mode) (uint64, error) {
	if err := m.check("put_signal"); err != nil {
		return 0, err
	}
	return uint64(C.devhost_put_signal(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint64_t(size), C.uint64_t(sigR.Addr), C.uint32_t(sigR.Key), C.uint64_t(sigL.Addr),
		C.uint32_t(sigL.Key), C.uint64_t(sigVal), C.int(m.Signal), C.int(m.Sharing), C.int(m.Handler), C.uint32_t(m.Opt))), nil
}

// PSignal runs p_signal<uint64_t, m.Signal, RSM, NIC>.
func (q *QP) PSignal(raddr Addr, value uint64, sigR, sigL Addr, sigVal uint64, m Mode) (uint64, error) {
	if err := m.check("p_signal"); err != nil {
		return 0, err
	}
	return uint64(C.devhost_p_signal(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(value),
		C.uint64_t(sigR.Addr), C.uint32_t(sigR.Key), C.uint64_t(sigL.Addr), C.uint32_t(sigL.Key), C.uint64_t(sigVal),
		C.int(m.Signal), C.int(m.Sharing), C.int(m.Handler), C.uint32_t(m.Opt))), nil
}

// Signal runs signal<m.Signal, RSM, NIC, THREAD>.
func (q *QP) Signal(sigR, sigL Addr, sigVal uint64, m Mode) (uint64, error) {
	if err := m.check("signal"); err != nil {
		return 0, err
	}
	return uint64(C.devhost_signal(q.p, C.uint64_t(sigR.Addr), C.uint32_t(sigR.Key), C.uint64_t(sigL.Addr),
		C.uint32_t(sigL.Key), C.uint64_t(sigVal), C.int(m.Signal), C.int(m.Sharing), C.int(m.Handler), C.uint32_t(m.Opt))), nil
}

// Get runs get<RSM, NIC, THREAD, mcst, NON-BLOCKING> and returns the ticket (last read or DUMP).
func (q *QP) Get(raddr, laddr Addr, size uint64, daddr Addr, mcst bool, m Mode) (uint64, error) {
	return q.get(raddr, laddr, size, daddr, mcst, false, m)
}

// get runs get<RSM, NIC, THREAD, mcst, blocking> (Get and GetBlocking).
func (q *QP) get(raddr, laddr Addr, size uint64, daddr Addr, mcst, blocking bool, m Mode) (uint64, error) {
	if err := m.check("get"); err != nil {
		return 0, err
	}
	return uint64(C.devhost_get(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint64_t(size), C.uint64_t(daddr.Addr), C.uint32_t(daddr.Key), cBool(mcst), cBool(blocking),
		C.int(m.Sharing), C.int(m.Handler), C.uint32_t(m.Opt))), nil
}

// Wait runs wait(qp, ticket) once the ticket's completion is visible (bounded by timeout). The
// device API discards the CQE status; the bounded probe reports EIO for an error CQE.
func (q *QP) Wait(ticket uint64, s Sharing, timeout time.Duration) error {
	var st C.int
	if err := waitProbe("wait", ticket, timeout, func() C.int {
		st = C.devhost_probe_cq_at(q.cq(), C.uint64_t(ticket), C.int(s))
		return st
	}); err != nil {
		return err
	}
	C.devhost_wait(q.p, C.uint64_t(ticket), C.int(s))
	return pollError("wait", ticket, st)
}

// WaitAll runs wait(qp) (the last reserved index), bounded by timeout.
func (q *QP) WaitAll(s Sharing, timeout time.Duration) error {
	rsvd, _, _ := q.Indexes()
	if rsvd == 0 {
		C.devhost_wait_all(q.p, C.int(s))
		return nil
	}
	return q.Wait(rsvd-1, s, timeout)
}

// GetWait runs get_wait(qp, daddr, ticket) without MCST, bounded by timeout.
func (q *QP) GetWait(daddr Addr, ticket uint64, m Mode, timeout time.Duration) error {
	if err := m.check("get_wait"); err != nil {
		return err
	}
	var st C.int
	if err := waitProbe("get_wait", ticket, timeout, func() C.int {
		st = C.devhost_probe_cq_at(q.cq(), C.uint64_t(ticket), C.int(m.Sharing))
		return st
	}); err != nil {
		return err
	}
	C.devhost_get_wait(q.p, C.uint64_t(daddr.Addr), C.uint32_t(daddr.Key), C.uint64_t(ticket), 0, C.int(m.Sharing), C.int(m.Handler))
	return pollError("get_wait", ticket, st)
}

// Fence runs fence(qp) (a no-op hook).
func (q *QP) Fence() { C.devhost_fence(q.p) }

// CounterKind selects the counter operation.
type CounterKind int

// Counter operations.
const (
	CounterPut CounterKind = iota
	CounterP
	CounterPutSignal
	CounterSignal
	CounterGet
)

// Counter holds the operands of a *_counter call. For CounterP the 8-byte value is Local.Addr.
type Counter struct {
	Kind          CounterKind
	Remote, Local Addr
	Size          uint64
	SigRemote     Addr
	SigLocal      Addr
	SigVal        uint64
	Companion     *QP
	CounterRemote Addr
	CounterLocal  Addr
	CounterVal    uint64
}

// Counter runs put_counter, p_counter, put_signal_counter, signal_counter or get_counter.
func (q *QP) Counter(c Counter, m Mode) error {
	if err := m.check("counter"); err != nil {
		return err
	}
	if c.Companion == nil || c.Kind < CounterPut || c.Kind > CounterGet {
		return fmt.Errorf("devhost: counter: kind %d companion %v: %w", int(c.Kind), c.Companion != nil, syscall.EINVAL)
	}
	C.devhost_counter(C.int(c.Kind), q.p, C.uint64_t(c.Remote.Addr), C.uint32_t(c.Remote.Key), C.uint64_t(c.Local.Addr),
		C.uint32_t(c.Local.Key), C.uint64_t(c.Size), C.uint64_t(c.SigRemote.Addr), C.uint32_t(c.SigRemote.Key),
		C.uint64_t(c.SigLocal.Addr), C.uint32_t(c.SigLocal.Key), C.uint64_t(c.SigVal), c.Companion.p,
		C.uint64_t(c.CounterRemote.Addr), C.uint32_t(c.CounterRemote.Key), C.uint64_t(c.CounterLocal.Addr),
		C.uint32_t(c.CounterLocal.Key), C.uint64_t(c.CounterVal), C.int(m.Signal), C.int(m.Sharing), C.int(m.Handler), C.uint32_t(m.Opt))
	return nil
}
