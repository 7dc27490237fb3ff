//go:build cgo

package devx

/*
#include "shim.h"
*/
import "C"

import (
	"os"
	"runtime"
	"sync"
	"syscall"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// umem is a DevX user memory registration.
type umem struct {
	dev  *device
	id   uint32
	addr uintptr
	size uint64

	mu    sync.Mutex
	u     *C.struct_mlx5dv_devx_umem
	freed bool
}

// RegUMEM calls mlx5dv_devx_umem_reg. [addr, addr+size) must be memory the
// NIC may touch for the life of the UMEM: mmap'ed or C-allocated host memory,
// or GPU memory (with nvidia-peermem), never the Go heap.
func (d *device) RegUMEM(addr uintptr, size uint64, access mlx5.Access) (mlx5.UMEM, error) {
	const op = "mlx5dv_devx_umem_reg"
	if err := d.enterChecked(op, checkRange(op, "UMEM", addr, size), checkAccess(op, access)); err != nil {
		return nil, err
	}
	defer d.mu.RUnlock()
	u, errno := C.gdk_umem_reg(d.ctx, C.uintptr_t(addr), C.size_t(size), C.uint32_t(access))
	if u == nil {
		return nil, newError(op, errnoOf(errno), "[0x%x, +0x%x) access 0x%x on %s", addr, size, uint32(access), d.name)
	}
	runtime.KeepAlive(d)
	d.hold("UMEM")
	return &umem{dev: d, u: u, id: uint32(u.umem_id), addr: addr, size: size}, nil
}

// RegDmabufUMEM calls mlx5dv_devx_umem_reg_ex with MLX5DV_UMEM_MASK_DMABUF
// (rdma-core v35 and newer; the dma-buf mask is honoured from v43). pageSizes
// is the bitmap of page sizes the device may use; 0 means the system page
// size. addr is recorded for Addr() only.
func (d *device) RegDmabufUMEM(fd int, offset uint64, size uint64, addr uintptr, access mlx5.Access, pageSizes uint64) (mlx5.UMEM, error) {
	const op = "mlx5dv_devx_umem_reg_ex"
	mask, maskErr := pageSizeMask(op, pageSizes, os.Getpagesize())
	err := d.enterChecked(op, checkDmabuf(op, fd, offset, size), checkAccess(op, access), maskErr, need(op, symUMEMRegEx))
	if err != nil {
		return nil, err
	}
	defer d.mu.RUnlock()
	u, errno := C.gdk_umem_reg_dmabuf(d.ctx, C.int(fd), C.uint64_t(offset), C.size_t(size), C.uint32_t(access), C.uint64_t(mask))
	if u == nil {
		e := newError(op, errnoOf(errno), "dma-buf fd %d [0x%x, +0x%x) access 0x%x page sizes 0x%x on %s",
			fd, offset, size, uint32(access), mask, d.name)
		if e.Errno == syscall.EOPNOTSUPP || e.Errno == syscall.EPROTONOSUPPORT {
			e.Detail += " (dma-buf UMEMs need rdma-core v43 or newer and kernel support; RegUMEM with the GPU address and nvidia-peermem is the fallback)"
		}
		return nil, e
	}
	runtime.KeepAlive(d)
	d.hold("UMEM")
	return &umem{dev: d, u: u, id: uint32(u.umem_id), addr: addr, size: size}, nil
}

var _ mlx5.UMEM = (*umem)(nil)

func (u *umem) ID() uint32    { return u.id }
func (u *umem) Addr() uintptr { return u.addr }
func (u *umem) Size() uint64  { return u.size }

// Dereg calls mlx5dv_devx_umem_dereg; it fails (EBUSY) while a DevX object
// still uses the UMEM. A second call is a no-op.
func (u *umem) Dereg() error {
	const op = "mlx5dv_devx_umem_dereg"
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.freed {
		return nil
	}
	if rc := C.gdk_umem_dereg(u.u); rc != 0 {
		return newError(op, syscall.Errno(rc), "UMEM 0x%x on %s", u.id, u.dev.name)
	}
	runtime.KeepAlive(u)
	u.u = nil
	u.freed = true
	u.dev.release("UMEM")
	return nil
}
