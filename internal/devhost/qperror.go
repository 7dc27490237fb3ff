package devhost

// #include "devhost.h"
import "C"

import "github.com/gdaki/gpunetio/internal/devstruct"

// Error returns the QP's error record (gdaki_dev_qp_get_error): the first
// error CQE or poll timeout that device code saw, with its status.
func (q *QP) Error() devstruct.QPError {
	var e C.struct_gdaki_dev_qp_error
	st := C.devhost_qp_get_error(q.p, &e)
	if st == 0 {
		return devstruct.QPError{}
	}
	return devstruct.QPError{
		Status:         uint32(st),
		Syndrome:       uint8(e.syndrome),
		VendorSyndrome: uint8(e.vendor_syndrome),
		HWSyndrome:     uint8(e.hw_syndrome),
		HWSyndromeType: uint8(e.hw_syndrome_type),
		CQEOpcode:      uint8(e.cqe_opcode),
		WQEOpcode:      uint8(e.wqe_opcode),
		WQECounter:     uint16(e.wqe_counter),
		WQEIndex:       uint64(e.wqe_index),
	}
}

// SetPollTimeout writes the QP's poll bound (gdaki.poll_timeout), in
// nanoseconds in this host compile; 0 removes it. No operation may run on
// the QP meanwhile.
func (q *QP) SetPollTimeout(ns uint64) { C.devhost_set_poll_timeout(q.p, C.uint64_t(ns)) }

// The ...Direct methods call the blocking device waits themselves, with no
// host-side probing first: they return only when the device code does. The
// device code returns on an error CQE, on a failure the QP already recorded,
// or when the QP's poll bound runs out; tests use them to prove exactly that
// (run them on a goroutine and bound the wait there).

// PollCQAtDirect runs poll_cq_at(cq, ci): nil, EIO or ETIMEDOUT.
func (q *QP) PollCQAtDirect(ci uint64, s Sharing) error {
	return pollError("poll_cq_at", ci, C.devhost_poll_cq_at(q.cq(), C.uint64_t(ci), C.int(s)))
}

// PollCQCollapsedAtDirect runs poll_cq_collapsed_at(qp, ci): nil, EIO or ETIMEDOUT.
func (q *QP) PollCQCollapsedAtDirect(ci uint64, s Sharing) error {
	return pollError("poll_cq_collapsed_at", ci, C.devhost_poll_cq_collapsed_at(q.p, C.uint64_t(ci), C.int(s)))
}

// WaitDirect runs the void wait(qp, ticket).
func (q *QP) WaitDirect(ticket uint64, s Sharing) { C.devhost_wait(q.p, C.uint64_t(ticket), C.int(s)) }

// WaitAllDirect runs the void wait(qp) (the last reserved index).
func (q *QP) WaitAllDirect(s Sharing) { C.devhost_wait_all(q.p, C.int(s)) }

// GetWaitDirect runs the void get_wait(qp, daddr, ticket) (with MCST when
// mcst: it posts a DUMP and waits for it too).
func (q *QP) GetWaitDirect(daddr Addr, ticket uint64, mcst bool, m Mode) error {
	if err := m.check("get_wait"); err != nil {
		return err
	}
	C.devhost_get_wait(q.p, C.uint64_t(daddr.Addr), C.uint32_t(daddr.Key), C.uint64_t(ticket), cBool(mcst), C.int(m.Sharing), C.int(m.Handler))
	return nil
}

// GetBlocking runs get<RSM, NIC, THREAD, mcst, BLOCKING_MODE_ENABLED>: the
// read (and DUMP) and the void wait for its completion in one call.
func (q *QP) GetBlocking(raddr, laddr Addr, size uint64, daddr Addr, mcst bool, m Mode) (uint64, error) {
	return q.get(raddr, laddr, size, daddr, mcst, true, m)
}

// FetchAdd runs gdaki_dev_fetch_add: value is added to the 8-byte word at
// raddr, its old value lands at laddr; returns the ticket.
func (q *QP) FetchAdd(raddr, laddr Addr, value uint64, m Mode) (uint64, error) {
	if err := m.check("fetch_add"); err != nil {
		return 0, err
	}
	return uint64(C.devhost_fetch_add(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint64_t(value), C.int(m.Sharing), C.int(m.Handler), C.uint32_t(m.Opt))), nil
}

// CompareSwap runs gdaki_dev_compare_swap; returns the ticket.
func (q *QP) CompareSwap(raddr, laddr Addr, compare, swap uint64, m Mode) (uint64, error) {
	if err := m.check("compare_swap"); err != nil {
		return 0, err
	}
	return uint64(C.devhost_compare_swap(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint64_t(compare), C.uint64_t(swap), C.int(m.Sharing), C.int(m.Handler), C.uint32_t(m.Opt))), nil
}

// FetchWaitDirect runs gdaki_dev_fetch_wait: it returns when the device
// code does, with the old value the fetching atomic of ticket left at laddr.
func (q *QP) FetchWaitDirect(ticket uint64, laddr Addr, s Sharing) (uint64, error) {
	var old C.uint64_t
	rc := C.devhost_fetch_wait(q.p, C.uint64_t(ticket), C.uint64_t(laddr.Addr), C.uint32_t(laddr.Key), &old, C.int(s))
	if err := pollError("fetch_wait", ticket, rc); err != nil {
		return 0, err
	}
	return uint64(old), nil
}

// QuietDirect runs gdaki_dev_quiet: nil once every reserved WQE completed
// and nothing failed, else EIO or ETIMEDOUT.
func (q *QP) QuietDirect(s Sharing) error {
	rsvd, _, _ := q.Indexes()
	return pollError("quiet", rsvd, C.devhost_quiet(q.p, C.int(s)))
}

// FenceExt runs gdaki_dev_fence (a NOP with the mlx5 fence flag); returns
// its ticket.
func (q *QP) FenceExt(m Mode) (uint64, error) {
	if err := m.check("fence"); err != nil {
		return 0, err
	}
	return uint64(C.devhost_fence_ext(q.p, C.int(m.Sharing), C.int(m.Handler), C.uint32_t(m.Opt))), nil
}
