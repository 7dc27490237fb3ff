package verbs

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/devx"
)

// Interop with IB Verbs (rdma-core), as the DOCA Verbs bridge offers it: a
// program that already holds rdma-core objects (made through cgo, or by
// another Go RDMA package) brings them in, and one that needs rdma-core
// calls this package does not make (ibv_reg_mr with its own flags, say)
// takes ours out. The C objects cross the API as unsafe.Pointer values:
// a struct ibv_device *, struct ibv_context * or struct ibv_pd *. This
// package cannot check what such a pointer points to beyond nil; one that
// is not what it claims is undefined behaviour, as in C.
//
// The handles carry a context and a PD to another process, as the SDK's
// export/import calls (and rdma-core's ibv_import_device and ibv_import_pd,
// rdma-core v32 or newer) do: the context handle is the context's command
// file descriptor, which the other process receives over a Unix socket
// (SCM_RIGHTS) and imports; the PD handle is the PD's kernel object handle,
// valid in an imported context of the same command descriptor.
//
// All of this needs a device of the rdma-core driver ("devx"): on an
// emulated device every call fails with ErrNotRDMACoreDevice.

// ErrNotRDMACoreDevice is the cause of every interop call on a device that
// rdma-core does not drive (an emulated one): errors.Is(err,
// verbs.ErrNotRDMACoreDevice) tests for it; the call's code is
// ErrNotSupported.
var ErrNotRDMACoreDevice = errors.New("not an rdma-core device")

// rdmaCore returns the device's rdma-core side, or the named error. c is
// entered.
func (c *Context) rdmaCore(op string) (mlx5.RDMACore, error) {
	r, ok := c.dev.(mlx5.RDMACore)
	if !ok {
		return nil, &Error{Op: op, Code: ErrNotSupported,
			Msg: fmt.Sprintf("device %s (driver %s) has no rdma-core objects", c.name, c.dev.Driver()), Err: ErrNotRDMACoreDevice}
	}
	return r, nil
}

// newContext makes the Context of an opened driver device.
func newContext(d mlx5.Device) *Context {
	c := &Context{dev: d, name: d.Name()}
	c.init("Context", "Context "+c.name)
	return c
}

// OpenIBVDevice opens the rdma-core device ibvDevice (a struct ibv_device *
// from the caller's ibv_get_device_list) with a DevX context of its own
// (doca_verbs_bridge_verbs_context_create). The device must be an mlx5
// one (ErrNotFound otherwise); Close closes the context.
func OpenIBVDevice(ibvDevice unsafe.Pointer) (*Context, error) {
	const op = "doca_verbs_bridge_verbs_context_create"
	if ibvDevice == nil {
		return nil, newErr(op, ErrInvalidValue, "nil ibv_device")
	}
	d, err := devx.OpenIBVDevice(ibvDevice)
	if err != nil {
		code := ErrDriver
		if errors.Is(err, mlx5.ErrNoDevice) {
			code = ErrNotFound
		}
		return nil, wrapErr(op, code, err, "ibv_device %p", ibvDevice)
	}
	return newContext(d), nil
}

// ImportIBVContext wraps the caller's rdma-core context ibvContext (a
// struct ibv_context *) without taking it over
// (doca_verbs_bridge_verbs_context_import): Close of the Context leaves
// it open, and the caller closes it (ibv_close_device) after. The context
// must have been opened with DevX (mlx5dv_open_device with
// MLX5DV_CONTEXT_FLAGS_DEVX): the objects of this package are DevX
// objects, and a context without DevX refuses them (ErrDriver, with the
// kernel's EOPNOTSUPP or EPERM).
func ImportIBVContext(ibvContext unsafe.Pointer) (*Context, error) {
	const op = "doca_verbs_bridge_verbs_context_import"
	if ibvContext == nil {
		return nil, newErr(op, ErrInvalidValue, "nil ibv_context")
	}
	d, err := devx.ImportIBVContext(ibvContext)
	if err != nil {
		code := ErrDriver
		if errors.Is(err, mlx5.ErrNoDevice) {
			code = ErrNotFound
		}
		return nil, wrapErr(op, code, err, "ibv_context %p", ibvContext)
	}
	return newContext(d), nil
}

// ImportContextHandle imports the context whose handle (ExportHandle,
// typically of another process, received over a Unix socket) is handle
// (doca_verbs_context_import_from_handle; rdma-core's ibv_import_device).
// The Context shares the exporter's kernel objects (ImportPDHandle brings
// in its PDs); Close closes it.
func ImportContextHandle(handle int) (*Context, error) {
	const op = "doca_verbs_context_import_from_handle"
	if handle < 0 {
		return nil, newErr(op, ErrInvalidValue, "handle %d: not a file descriptor", handle)
	}
	d, err := devx.ImportContext(handle)
	if err != nil {
		return nil, wrapErr(op, ErrDriver, err, "handle %d", handle)
	}
	return newContext(d), nil
}

// IBVContext returns the device's struct ibv_context *
// (doca_verbs_bridge_get_ibv_ctx), for the caller's own libibverbs calls;
// it stays valid until Close. On an emulated device:
// ErrNotRDMACoreDevice.
func (c *Context) IBVContext() (unsafe.Pointer, error) {
	const op = "doca_verbs_bridge_get_ibv_ctx"
	if err := c.enterCtx(op); err != nil {
		return nil, err
	}
	defer c.leave()
	r, err := c.rdmaCore(op)
	if err != nil {
		return nil, err
	}
	return r.IBVContext(), nil
}

// ExportHandle returns the context's handle for ImportContextHandle in
// another process (doca_verbs_context_export_handle): its command file
// descriptor, to be sent over a Unix socket with SCM_RIGHTS. It stays
// owned by the Context (do not close it). On an emulated device:
// ErrNotRDMACoreDevice.
func (c *Context) ExportHandle() (int, error) {
	const op = "doca_verbs_context_export_handle"
	if err := c.enterCtx(op); err != nil {
		return -1, err
	}
	defer c.leave()
	r, err := c.rdmaCore(op)
	if err != nil {
		return -1, err
	}
	return r.CmdFD(), nil
}

// newPD makes the PD of a driver PD on c, which is entered or held.
func (c *Context) newPD(op string, pd mlx5.PD) (*PD, error) {
	p := &PD{ctx: c}
	if err := c.acquire(op, "Context", &p.node); err != nil {
		return nil, errors.Join(err, pd.Dealloc())
	}
	p.pd = pd
	p.init("PD", fmt.Sprintf("PD %d on %s", pd.PDN(), c.name))
	return p, nil
}

// ImportIBVPD wraps the caller's rdma-core PD ibvPD (a struct ibv_pd * of
// this Context's ibv_context, ErrInvalidValue otherwise) without taking it
// over (doca_verbs_bridge_verbs_pd_import): QPs, SRQs and MRs can be made
// on it, and Close of the PD leaves it allocated for its owner to
// deallocate. On an emulated device: ErrNotRDMACoreDevice.
func (c *Context) ImportIBVPD(ibvPD unsafe.Pointer) (*PD, error) {
	const op = "doca_verbs_bridge_verbs_pd_import"
	if ibvPD == nil {
		return nil, newErr(op, ErrInvalidValue, "nil ibv_pd")
	}
	if err := c.enterCtx(op); err != nil {
		return nil, err
	}
	defer c.leave()
	r, err := c.rdmaCore(op)
	if err != nil {
		return nil, err
	}
	pd, err := r.BorrowPD(ibvPD)
	if err != nil {
		return nil, driverErr(op, err, "ibv_pd %p on %s", ibvPD, c.name)
	}
	return c.newPD(op, pd)
}

// ImportPDHandle imports the PD whose handle (PD.ExportHandle of the
// exporting process) is handle into this Context, which must have been
// imported from the exporter's context handle
// (doca_verbs_pd_import_from_handle; rdma-core's ibv_import_pd). Close
// of the PD unimports it. On an emulated device: ErrNotRDMACoreDevice.
func (c *Context) ImportPDHandle(handle uint32) (*PD, error) {
	const op = "doca_verbs_pd_import_from_handle"
	if err := c.enterCtx(op); err != nil {
		return nil, err
	}
	defer c.leave()
	r, err := c.rdmaCore(op)
	if err != nil {
		return nil, err
	}
	pd, err := r.ImportPD(handle)
	if err != nil {
		return nil, driverErr(op, err, "PD handle %d on %s", handle, c.name)
	}
	return c.newPD(op, pd)
}

// IBVPD returns the PD's struct ibv_pd * (doca_verbs_bridge_verbs_pd_get_ibv_pd),
// for the caller's own libibverbs calls (ibv_reg_mr with flags this package
// does not offer, say); valid until Close. On an emulated device:
// ErrNotRDMACoreDevice.
func (p *PD) IBVPD() (unsafe.Pointer, error) {
	const op = "doca_verbs_bridge_verbs_pd_get_ibv_pd"
	if err := p.check(op); err != nil {
		return nil, err
	}
	if _, err := p.ctx.rdmaCore(op); err != nil {
		return nil, err
	}
	h, ok := p.pd.(mlx5.RDMACorePD)
	if !ok {
		return nil, &Error{Op: op, Code: ErrNotSupported, Msg: fmt.Sprintf("PD %d has no ibv_pd", p.pd.PDN()), Err: ErrNotRDMACoreDevice}
	}
	return h.IBVPD(), nil
}

// ExportHandle returns the PD's handle for ImportPDHandle in a process that
// imported this PD's context (doca_verbs_pd_export_handle): its kernel
// object handle. On an emulated device: ErrNotRDMACoreDevice.
func (p *PD) ExportHandle() (uint32, error) {
	const op = "doca_verbs_pd_export_handle"
	if err := p.check(op); err != nil {
		return 0, err
	}
	if _, err := p.ctx.rdmaCore(op); err != nil {
		return 0, err
	}
	h, ok := p.pd.(mlx5.RDMACorePD)
	if !ok {
		return 0, &Error{Op: op, Code: ErrNotSupported, Msg: fmt.Sprintf("PD %d has no kernel handle", p.pd.PDN()), Err: ErrNotRDMACoreDevice}
	}
	return h.Handle(), nil
}
