//go:build cgo

package devx

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"syscall"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Interop with rdma-core objects that a program made itself (the DOCA
// Verbs bridge: doca_verbs_bridge_verbs_context_create, _context_import,
// _pd_import, _get_ibv_ctx, _pd_get_ibv_pd) and with the kernel handles that
// carry a context and a PD to another process (ibv_import_device,
// ibv_import_pd). The pointers come from the caller and cannot be checked
// beyond nil: a pointer that is not what it claims to be is undefined
// behaviour, as in C.

// Indices of the interop entry points (optional: rdma-core v32).
const (
	symImportDevice = int(C.GDK_IBV_IMPORT_DEVICE)
	symImportPD     = int(C.GDK_IBV_IMPORT_PD)
	symUnimportPD   = int(C.GDK_IBV_UNIMPORT_PD)
)

// OpenIBVDevice opens a DevX context (mlx5dv_open_device with the DEVX
// flag) on ibvDevice, a struct ibv_device pointer from the caller's
// ibv_get_device_list. The device must be served by mlx5 (ENODEV
// otherwise); the context is this package's, closed by Close.
func OpenIBVDevice(ibvDevice unsafe.Pointer) (mlx5.Device, error) {
	const op = "mlx5dv_open_device"
	if ibvDevice == nil {
		return nil, newError(op, syscall.EINVAL, "nil ibv_device")
	}
	if err := load(); err != nil {
		return nil, err
	}
	dev := (*C.struct_ibv_device)(ibvDevice)
	name := C.GoString(C.gdk_get_device_name(dev))
	if C.gdk_is_supported(dev) == 0 {
		return nil, &Error{Op: op, Errno: syscall.ENODEV, Detail: "RDMA device " + name + " is not an mlx5 device (mlx5dv_is_supported is false)", Err: mlx5.ErrNoDevice}
	}
	ctx, errno := C.gdk_open_devx(dev)
	if ctx == nil {
		return nil, openError(name, errnoOf(errno))
	}
	return newDevice(name, ctx), nil
}

// ImportIBVContext wraps ibvContext, a struct ibv_context pointer the
// caller opened, without taking it over: Close leaves it open, and the
// caller closes it after Close. DevX commands need a context opened with
// mlx5dv_open_device and MLX5DV_CONTEXT_FLAGS_DEVX; on another one they
// fail (EOPNOTSUPP or EPERM from the kernel).
func ImportIBVContext(ibvContext unsafe.Pointer) (mlx5.Device, error) {
	const op = "ImportIBVContext"
	if ibvContext == nil {
		return nil, newError(op, syscall.EINVAL, "nil ibv_context")
	}
	if err := load(); err != nil {
		return nil, err
	}
	ctx := (*C.struct_ibv_context)(ibvContext)
	dev := C.gdk_context_device(ctx)
	if dev == nil {
		return nil, newError(op, syscall.EINVAL, "ibv_context has no device")
	}
	name := C.GoString(C.gdk_get_device_name(dev))
	if C.gdk_is_supported(dev) == 0 {
		return nil, &Error{Op: op, Errno: syscall.ENODEV, Detail: "RDMA device " + name + " is not an mlx5 device (mlx5dv_is_supported is false)", Err: mlx5.ErrNoDevice}
	}
	d := newDevice(name, ctx)
	d.borrowed = true
	return d, nil
}

// ImportContext imports the context whose command file descriptor is cmdFD
// (ibv_import_device), typically received from another process over a
// Unix socket. The new context shares the exporter's objects (import its
// PDs with ImportPD) and is this package's, closed by Close.
func ImportContext(cmdFD int) (mlx5.Device, error) {
	const op = "ibv_import_device"
	if cmdFD < 0 {
		return nil, newError(op, syscall.EBADF, "command descriptor %d", cmdFD)
	}
	if err := load(); err != nil {
		return nil, err
	}
	if err := need(op, symImportDevice); err != nil {
		return nil, err
	}
	ctx, errno := C.gdk_import_device(C.int(cmdFD))
	if ctx == nil {
		return nil, newError(op, errnoOf(errno), "command descriptor %d", cmdFD)
	}
	dev := C.gdk_context_device(ctx)
	name := "?"
	if dev != nil {
		name = C.GoString(C.gdk_get_device_name(dev))
	}
	return newDevice(name, ctx), nil
}

var _ mlx5.RDMACore = (*device)(nil)

// IBVContext is the struct ibv_context pointer, nil once the device is closed.
func (d *device) IBVContext() unsafe.Pointer {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return unsafe.Pointer(d.ctx)
}

// CmdFD is ibv_context.cmd_fd, -1 once the device is closed.
func (d *device) CmdFD() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.ctx == nil {
		return -1
	}
	return int(C.gdk_context_cmd_fd(d.ctx))
}

// BorrowPD wraps the caller's struct ibv_pd of this context.
func (d *device) BorrowPD(ibvPD unsafe.Pointer) (mlx5.PD, error) {
	const op = "BorrowPD"
	if ibvPD == nil {
		return nil, newError(op, syscall.EINVAL, "nil ibv_pd")
	}
	if err := d.enter(op); err != nil {
		return nil, err
	}
	defer d.mu.RUnlock()
	p := (*C.struct_ibv_pd)(ibvPD)
	if c := C.gdk_pd_context(p); c != d.ctx {
		return nil, newError(op, syscall.EINVAL, "ibv_pd belongs to another ibv_context (%#x), not device %s's (%#x)",
			ptr(unsafe.Pointer(c)), d.name, ptr(unsafe.Pointer(d.ctx)))
	}
	return d.wrapPD(p, pdBorrowed)
}

// ImportPD imports the PD with kernel handle h (ibv_import_pd).
func (d *device) ImportPD(h uint32) (mlx5.PD, error) {
	const op = "ibv_import_pd"
	if err := d.enterChecked(op, need(op, symImportPD), need(op, symUnimportPD)); err != nil {
		return nil, err
	}
	defer d.mu.RUnlock()
	p, errno := C.gdk_import_pd(d.ctx, C.uint32_t(h))
	if p == nil {
		return nil, newError(op, errnoOf(errno), "PD handle %d on %s", h, d.name)
	}
	pd, err := d.wrapPD(p, pdImported)
	if err != nil {
		C.gdk_unimport_pd(p)
	}
	return pd, err
}

// wrapPD makes a pd of p with its PD number; d is entered.
func (d *device) wrapPD(p *C.struct_ibv_pd, origin pdOrigin) (mlx5.PD, error) {
	var pdn C.uint32_t
	if rc := C.gdk_pd_pdn(p, &pdn); rc != 0 {
		return nil, newError("mlx5dv_init_obj", syscall.Errno(rc), "PD number of a PD on %s", d.name)
	}
	runtime.KeepAlive(d)
	d.hold("PD")
	return &pd{dev: d, p: p, pdn: uint32(pdn), origin: origin}, nil
}

var _ mlx5.RDMACorePD = (*pd)(nil)

// Handle is ibv_pd.handle, 0 once the PD is deallocated.
func (p *pd) Handle() uint32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.p == nil {
		return 0
	}
	return uint32(C.gdk_pd_handle(p.p))
}

// IBVPD is the struct ibv_pd pointer, nil once the PD is deallocated.
func (p *pd) IBVPD() unsafe.Pointer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return unsafe.Pointer(p.p)
}
