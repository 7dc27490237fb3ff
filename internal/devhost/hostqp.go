package devhost

// #include <stdlib.h>
// #include <string.h>
// #include "devhost.h"
import "C"

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// UARDoorbellOffset is where the doorbell register sits in the 4 KiB UAR page (the first
// BlueFlame register).
const UARDoorbellOffset = mlx5.UAROffsetBF

// HostConfig describes a QP built entirely in host C memory.
type HostConfig struct {
	QPN     uint32
	CQN     uint32
	SQWQEs  uint16 // power of two, at most 32768
	CQEs    uint32 // power of two, at least SQWQEs
	Handler Handler
}

// HostQP is a device QP struct with its SQ ring, CQ ring, doorbell records and a 4 KiB page
// standing in for the UAR (doorbell at 0x800) or an 8-byte proxy mailbox, all in C memory.
type HostQP struct {
	*QP
	cfg     HostConfig
	allocs  []unsafe.Pointer
	sq      unsafe.Pointer
	cqes    unsafe.Pointer
	dbr     unsafe.Pointer // QP DBR base (word 1 = SQ)
	cqDBR   unsafe.Pointer
	uar     unsafe.Pointer
	mailbox unsafe.Pointer
}

func isPow2(v uint64) bool { return v != 0 && v&(v-1) == 0 }

// NewHostQP allocates and fills a QP as the host export does.
func NewHostQP(cfg HostConfig) (*HostQP, error) {
	if !isPow2(uint64(cfg.SQWQEs)) || cfg.SQWQEs > 32768 {
		return nil, fmt.Errorf("devhost: new host QP: SQ size %d not a power of two <= 32768: %w", cfg.SQWQEs, syscall.EINVAL)
	}
	if !isPow2(uint64(cfg.CQEs)) || cfg.CQEs < uint32(cfg.SQWQEs) {
		return nil, fmt.Errorf("devhost: new host QP: CQ size %d not a power of two >= %d: %w", cfg.CQEs, cfg.SQWQEs, syscall.EINVAL)
	}
	if !cfg.Handler.valid() || cfg.Handler == HandlerAuto {
		return nil, fmt.Errorf("devhost: new host QP: handler %d: %w", int(cfg.Handler), syscall.EINVAL)
	}
	h := &HostQP{cfg: cfg}
	alloc := func(size uintptr, align uintptr) (unsafe.Pointer, error) {
		var p unsafe.Pointer
		if rc := C.posix_memalign(&p, C.size_t(align), C.size_t(size)); rc != 0 {
			return nil, fmt.Errorf("devhost: new host QP: posix_memalign %d bytes: %w", size, syscall.Errno(rc))
		}
		C.memset(p, 0, C.size_t(size))
		h.allocs = append(h.allocs, p)
		return p, nil
	}
	var err error
	var qp unsafe.Pointer
	if qp, err = alloc(uintptr(QPSize), 64); err != nil {
		return nil, h.fail(err)
	}
	if h.sq, err = alloc(uintptr(cfg.SQWQEs)*64, 4096); err != nil {
		return nil, h.fail(err)
	}
	if h.cqes, err = alloc(uintptr(cfg.CQEs)*64, 4096); err != nil {
		return nil, h.fail(err)
	}
	if h.dbr, err = alloc(64, 64); err != nil {
		return nil, h.fail(err)
	}
	h.cqDBR = unsafe.Add(h.dbr, 32)
	if h.uar, err = alloc(4096, 4096); err != nil {
		return nil, h.fail(err)
	}
	if h.mailbox, err = alloc(64, 64); err != nil {
		return nil, h.fail(err)
	}
	db := unsafe.Add(h.uar, UARDoorbellOffset)
	if cfg.Handler == HandlerCPUProxy {
		db = h.mailbox
	}
	C.devhost_fill_qp((*C.struct_doca_gpu_dev_verbs_qp)(qp), C.uint32_t(cfg.QPN), h.sq, C.uint16_t(cfg.SQWQEs),
		unsafe.Add(h.dbr, 4), db, C.int(cfg.Handler), C.uint32_t(cfg.CQN), h.cqes, C.uint32_t(cfg.CQEs), h.cqDBR)
	h.QP = &QP{p: (*C.struct_doca_gpu_dev_verbs_qp)(qp)}
	return h, nil
}

func (h *HostQP) fail(err error) error {
	h.Close()
	return err
}

// Close frees the C memory. The QP must not be used afterwards.
func (h *HostQP) Close() {
	for _, p := range h.allocs {
		C.free(p)
	}
	h.allocs = nil
	h.QP = nil
}

// Config returns the configuration the QP was built with.
func (h *HostQP) Config() HostConfig { return h.cfg }

// WQE returns a copy of the 64-byte slot of index idx.
func (h *HostQP) WQE(idx uint64) [64]byte {
	var out [64]byte
	slot := idx & uint64(h.cfg.SQWQEs-1)
	copy(out[:], unsafe.Slice((*byte)(unsafe.Add(h.sq, slot*64)), 64))
	return out
}

// FillSQ sets every byte of the SQ ring to b (to see which bytes builders leave untouched).
func (h *HostQP) FillSQ(b byte) { C.memset(h.sq, C.int(b), C.size_t(uintptr(h.cfg.SQWQEs)*64)) }

// Doorbell returns the last 8-byte value written to the doorbell register (UAR + 0x800).
func (h *HostQP) Doorbell() uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Add(h.uar, UARDoorbellOffset)))
}

// DoorbellAddr is the address of the doorbell register.
func (h *HostQP) DoorbellAddr() uintptr { return uintptr(unsafe.Add(h.uar, UARDoorbellOffset)) }

// DBR returns the SQ doorbell record word as stored (big-endian PI).
func (h *HostQP) DBR() uint32 { return atomic.LoadUint32((*uint32)(unsafe.Add(h.dbr, 4))) }

// DBRAddr is the address of the SQ doorbell record word.
func (h *HostQP) DBRAddr() uintptr { return uintptr(unsafe.Add(h.dbr, 4)) }

// Mailbox returns the proxy mailbox value (native 64-bit PI).
func (h *HostQP) Mailbox() uint64 { return atomic.LoadUint64((*uint64)(h.mailbox)) }

// MailboxAddr is the address of the proxy mailbox.
func (h *HostQP) MailboxAddr() uintptr { return uintptr(h.mailbox) }

// Complete writes a CQE for WQE index idx (CQ index idx + cqe_rsvd) as the NIC would: opcode
// (CQEOpReq, CQEOpReqErr, ...), wqe_counter = idx & 0xffff, owner bit of the CQ lap.
func (h *HostQP) Complete(idx uint64, opcode uint8, syndrome uint8) {
	rsvd := atomic.LoadUint64(h.u64(offCQRsvd))
	C.devhost_write_cqe(h.cq(), C.uint64_t(idx+rsvd), C.uint16_t(idx), C.uint8_t(opcode), C.uint8_t(syndrome))
}

// CompleteCollapsed writes entry 0 of a collapsed CQ with wqe_counter and opcode.
func (h *HostQP) CompleteCollapsed(wqeCounter uint16, opcode uint8) {
	C.devhost_write_collapsed_cqe(h.cq(), C.uint16_t(wqeCounter), C.uint8_t(opcode))
}

// CQE returns a copy of CQ slot i.
func (h *HostQP) CQE(i uint32) [64]byte {
	var out [64]byte
	copy(out[:], unsafe.Slice((*byte)(unsafe.Add(h.cqes, uintptr(i&(h.cfg.CQEs-1))*64)), 64))
	return out
}

// CQDBR returns the CQ doorbell record word as stored.
func (h *HostQP) CQDBR() uint32 { return atomic.LoadUint32((*uint32)(h.cqDBR)) }

// ResetTracking does what the host does after cycling the QP through reset:
// indexes and lock 0, cqe_ci 0, cqe_rsvd = the old sq_rsvd_index, DBR and mailbox 0, CQ ring
// filled with 0xFF and SQ ring zeroed. No operation may run concurrently.
func (h *HostQP) ResetTracking() {
	rsvd := atomic.LoadUint64(h.u64(offRsvdIndex))
	atomic.StoreUint64(h.u64(offRsvdIndex), 0)
	atomic.StoreUint64(h.u64(offReadyIndex), 0)
	atomic.StoreUint64(h.u64(offWQEPI), 0)
	*(*int32)(unsafe.Add(unsafe.Pointer(h.p), offSQLock)) = 0
	atomic.StoreUint64(h.u64(offCQCI), 0)
	atomic.StoreUint64(h.u64(offCQRsvd), rsvd)
	atomic.StoreUint32((*uint32)(unsafe.Add(h.dbr, 4)), 0)
	atomic.StoreUint64((*uint64)(h.mailbox), 0)
	C.memset(h.cqes, 0xff, C.size_t(uintptr(h.cfg.CQEs)*64))
	C.memset(h.sq, 0, C.size_t(uintptr(h.cfg.SQWQEs)*64))
}

// DecodeDoorbell splits a doorbell value (as returned by Doorbell or PrepareDB) into its
// big-endian halves: bytes 0..3 (PI << 8) and bytes 4..7 (QPN << 8 | DS).
func DecodeDoorbell(v uint64) (piShift8, qpnDS uint32) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return binary.BigEndian.Uint32(b[0:4]), binary.BigEndian.Uint32(b[4:8])
}

// WriteCQERaw stores 64 raw bytes into CQ slot i (op_own last, with release order), as a NIC
// or a fuzzer would.
func (h *HostQP) WriteCQERaw(i uint32, b [64]byte) {
	slot := unsafe.Add(h.cqes, uintptr(i&(h.cfg.CQEs-1))*64)
	copy(unsafe.Slice((*byte)(slot), 63), b[:63])
	atomic.StoreUint32((*uint32)(unsafe.Add(slot, 60)), binary.LittleEndian.Uint32(b[60:64]))
}
