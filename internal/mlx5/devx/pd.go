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

// pd is an ibv_pd with its PRM PD number.
type pd struct {
	dev *device
	pdn uint32

	mu    sync.Mutex // guards p, mrs; held across calls that use p
	p     *C.struct_ibv_pd
	mrs   int // MRs registered on this PD and not yet deregistered
	freed bool
	// origin is how the PD came: allocated here (Dealloc deallocates it),
	// borrowed from the caller (Dealloc leaves it) or imported by handle
	// (Dealloc unimports it).
	origin pdOrigin
}

type pdOrigin uint8

const (
	pdAllocated pdOrigin = iota
	pdBorrowed
	pdImported
)

// AllocPD calls ibv_alloc_pd and mlx5dv_init_obj(MLX5DV_OBJ_PD) for the pdn.
func (d *device) AllocPD() (mlx5.PD, error) {
	const op = "ibv_alloc_pd"
	if err := d.enter(op); err != nil {
		return nil, err
	}
	defer d.mu.RUnlock()
	p, errno := C.gdk_alloc_pd(d.ctx)
	if p == nil {
		e := errnoOf(errno)
		if e == syscall.ENOMEM {
			return nil, newError(op, e, "device %s: %s", d.name, d.limitNote("PD", "max_pd", func(a *C.struct_ibv_device_attr) uint64 { return uint64(a.max_pd) }))
		}
		return nil, newError(op, e, "device %s", d.name)
	}
	var pdn C.uint32_t
	if rc := C.gdk_pd_pdn(p, &pdn); rc != 0 {
		C.gdk_dealloc_pd(p)
		return nil, newError("mlx5dv_init_obj", syscall.Errno(rc), "PD number of a new PD on %s", d.name)
	}
	runtime.KeepAlive(d)
	d.hold("PD")
	return &pd{dev: d, p: p, pdn: uint32(pdn)}, nil
}

// limitNote says, for an allocation of kind that failed with ENOMEM, how
// many such objects this context holds and the device's limit (field of
// ibv_query_device), so an exhaustion error names the resource and its
// limit. The caller holds d.mu for reading.
func (d *device) limitNote(kind, field string, limit func(*C.struct_ibv_device_attr) uint64) string {
	d.liveMu.Lock()
	n := d.live[kind]
	d.liveMu.Unlock()
	var a C.struct_ibv_device_attr
	if rc := C.gdk_query_device(d.ctx, &a); rc != 0 {
		return fmt.Sprintf("out of %ss: %d live on this context (%s unknown: ibv_query_device failed with errno %d)", kind, n, field, int(rc))
	}
	return fmt.Sprintf("out of %ss: %d live on this context, the device allows %s %d", kind, n, field, limit(&a))
}

var _ mlx5.PD = (*pd)(nil)

// PDN is the 24-bit PRM PD number (mlx5dv_pd.pdn).
func (p *pd) PDN() uint32 { return p.pdn }

// Native returns the ibv_pd pointer, or 0 once the PD is deallocated.
func (p *pd) Native() uintptr {
	p.mu.Lock()
	defer p.mu.Unlock()
	return ptr(unsafe.Pointer(p.p))
}

// Dealloc calls ibv_dealloc_pd. It fails with EBUSY while MRs are registered
// on the PD; a second call is a no-op.
func (p *pd) Dealloc() error {
	const op = "ibv_dealloc_pd"
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.freed {
		return nil
	}
	if p.mrs > 0 {
		return newError(op, syscall.EBUSY, "PD 0x%x on %s still has %d MRs registered", p.pdn, p.dev.name, p.mrs)
	}
	switch p.origin {
	case pdBorrowed:
		// The caller's PD: it deallocates it.
	case pdImported:
		C.gdk_unimport_pd(p.p)
	default:
		if rc := C.gdk_dealloc_pd(p.p); rc != 0 {
			return newError(op, syscall.Errno(rc), "PD 0x%x on %s", p.pdn, p.dev.name)
		}
	}
	runtime.KeepAlive(p)
	p.p = nil
	p.freed = true
	p.dev.release("PD")
	return nil
}

// ownPD returns the *pd behind a PD made by device d and locks it, or an
// error when the PD belongs elsewhere or is deallocated. The caller unlocks.
func (d *device) ownPD(op string, x mlx5.PD) (*pd, error) {
	p, ok := x.(*pd)
	if !ok || p == nil {
		return nil, newError(op, syscall.EINVAL, "PD %T was not allocated by a devx device", x)
	}
	if p.dev != d {
		return nil, newError(op, syscall.EINVAL, "PD 0x%x belongs to device %s, not %s", p.pdn, p.dev.name, d.name)
	}
	p.mu.Lock()
	if p.freed {
		p.mu.Unlock()
		return nil, newError(op, syscall.EBADF, "PD 0x%x is deallocated", p.pdn)
	}
	return p, nil
}
