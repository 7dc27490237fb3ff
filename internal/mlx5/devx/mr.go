//go:build cgo

package devx

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// mr is an ibv_mr.
type mr struct {
	pd         *pd
	lkey, rkey uint32
	addr       uintptr
	iova       uint64
	length     uint64

	mu    sync.Mutex
	m     *C.struct_ibv_mr
	freed bool
}

// RegMR calls ibv_reg_mr_iova2.
func (d *device) RegMR(x mlx5.PD, addr uintptr, length uint64, iova uint64, access mlx5.Access) (mlx5.MR, error) {
	const op = "ibv_reg_mr_iova2"
	if err := d.enterChecked(op, checkRange(op, "MR", addr, length), checkAccess(op, access)); err != nil {
		return nil, err
	}
	defer d.mu.RUnlock()
	return d.regMR(op, x, addr, iova, length, func(p *C.struct_ibv_pd) (*C.struct_ibv_mr, string, error) {
		m, errno := C.gdk_reg_mr_iova2(p, C.uintptr_t(addr), C.size_t(length), C.uint64_t(iova), C.uint(access))
		return m, fmt.Sprintf("[0x%x, +0x%x) iova 0x%x access 0x%x", addr, length, iova, uint32(access)), errno
	})
}

// RegDmabufMR calls ibv_reg_dmabuf_mr (rdma-core v34 and newer). addr is
// recorded for Addr() only; the NIC reaches the memory through the dma-buf.
func (d *device) RegDmabufMR(x mlx5.PD, fd int, offset, length, iova uint64, addr uintptr, access mlx5.Access) (mlx5.MR, error) {
	const op = "ibv_reg_dmabuf_mr"
	err := d.enterChecked(op, checkDmabuf(op, fd, offset, length), checkAccess(op, access), need(op, symRegDmabufMR))
	if err != nil {
		return nil, err
	}
	defer d.mu.RUnlock()
	return d.regMR(op, x, addr, iova, length, func(p *C.struct_ibv_pd) (*C.struct_ibv_mr, string, error) {
		m, errno := C.gdk_reg_dmabuf_mr(p, C.uint64_t(offset), C.size_t(length), C.uint64_t(iova), C.int(fd), C.int(access))
		return m, fmt.Sprintf("dma-buf fd %d [0x%x, +0x%x) iova 0x%x access 0x%x", fd, offset, length, iova, uint32(access)), errno
	})
}

// regMR makes the registration call reg on PD x of d (entered), under the
// PD's lock, and wraps the MR it returns. reg returns the MR or nil, a
// description of the arguments for the error and the call's errno.
func (d *device) regMR(op string, x mlx5.PD, addr uintptr, iova, length uint64,
	reg func(*C.struct_ibv_pd) (*C.struct_ibv_mr, string, error)) (mlx5.MR, error) {
	p, err := d.ownPD(op, x)
	if err != nil {
		return nil, err
	}
	defer p.mu.Unlock()
	m, args, errno := reg(p.p)
	if m == nil {
		e := errnoOf(errno)
		if e == syscall.ENOMEM {
			note := d.limitNote("MR", "max_mr", func(a *C.struct_ibv_device_attr) uint64 { return uint64(a.max_mr) })
			return nil, newError(op, e, "%s on %s: %s, or past the locked-memory limit (RLIMIT_MEMLOCK)", args, d.name, note)
		}
		return nil, newError(op, e, "%s on %s", args, d.name)
	}
	runtime.KeepAlive(p)
	p.mrs++
	d.hold("MR")
	return &mr{pd: p, m: m, lkey: uint32(m.lkey), rkey: uint32(m.rkey), addr: addr, iova: iova, length: length}, nil
}

var _ mlx5.MR = (*mr)(nil)

func (m *mr) LKey() uint32  { return m.lkey }
func (m *mr) RKey() uint32  { return m.rkey }
func (m *mr) Addr() uintptr { return m.addr }
func (m *mr) IOVA() uint64  { return m.iova }
func (m *mr) Len() uint64   { return m.length }

// Native returns the ibv_mr pointer, or 0 once the MR is deregistered.
func (m *mr) Native() uintptr {
	m.mu.Lock()
	defer m.mu.Unlock()
	return ptr(unsafe.Pointer(m.m))
}

// Dereg calls ibv_dereg_mr; a second call is a no-op.
func (m *mr) Dereg() error {
	const op = "ibv_dereg_mr"
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed {
		return nil
	}
	if rc := C.gdk_dereg_mr(m.m); rc != 0 {
		return newError(op, syscall.Errno(rc), "MR lkey 0x%x on %s", m.lkey, m.pd.dev.name)
	}
	runtime.KeepAlive(m)
	m.m = nil
	m.freed = true
	m.pd.mu.Lock()
	m.pd.mrs--
	m.pd.mu.Unlock()
	m.pd.dev.release("MR")
	return nil
}
