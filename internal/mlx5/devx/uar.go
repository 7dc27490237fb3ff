//go:build cgo

package devx

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"syscall"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// uar is a DevX UAR page.
type uar struct {
	dev     *device
	typ     mlx5.UARType
	pageID  uint32
	base    uintptr
	reg     uintptr
	mmapOff int64

	mu    sync.Mutex
	u     *C.struct_mlx5dv_devx_uar
	freed bool
}

// AllocUAR calls mlx5dv_devx_alloc_uar. NC returns the context's shared
// non-cached page (libmlx5 hands out one per context and its free is a no-op);
// NC_DEDICATED a private one, which needs rdma-core v45 or newer.
func (d *device) AllocUAR(t mlx5.UARType) (mlx5.UAR, error) {
	const op = "mlx5dv_devx_alloc_uar"
	if err := checkUARType(op, t); err != nil {
		return nil, err
	}
	if err := d.enter(op); err != nil {
		return nil, err
	}
	defer d.mu.RUnlock()
	u, errno := C.gdk_alloc_uar(d.ctx, C.uint32_t(t))
	if u == nil {
		e := newError(op, errnoOf(errno), "type %v on %s", t, d.name)
		if t == mlx5.UARTypeNCDedicated && e.Errno == syscall.EOPNOTSUPP {
			e.Detail += " (NC_DEDICATED needs rdma-core v45 or newer; ask for NC or BF instead)"
		}
		return nil, e
	}
	runtime.KeepAlive(d)
	d.hold("UAR")
	return &uar{
		dev:     d,
		u:       u,
		typ:     t,
		pageID:  uint32(u.page_id),
		base:    ptr(u.base_addr),
		reg:     ptr(u.reg_addr),
		mmapOff: int64(u.mmap_off),
	}, nil
}

var _ mlx5.UAR = (*uar)(nil)

func (u *uar) PageID() uint32     { return u.pageID }
func (u *uar) BaseAddr() uintptr  { return u.base }
func (u *uar) RegAddr() uintptr   { return u.reg }
func (u *uar) MmapOffset() int64  { return u.mmapOff }
func (u *uar) Type() mlx5.UARType { return u.typ }
func (u *uar) IOMemory() bool     { return true }

// Free calls mlx5dv_devx_free_uar; a second call is a no-op.
func (u *uar) Free() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.freed {
		return nil
	}
	C.gdk_free_uar(u.u)
	runtime.KeepAlive(u)
	u.u = nil
	u.freed = true
	u.dev.release("UAR")
	return nil
}
