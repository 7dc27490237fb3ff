package verbs

import (
	"fmt"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/docasdk"
	"github.com/gdaki/gpunetio/internal/mlx5"
)

// UMem is a DevX user-memory registration (doca_verbs_umem): memory, in host
// or GPU memory, that CQ and QP rings and doorbell records live in. It does
// not own the memory.
type UMem struct {
	node
	ctx  *Context
	dev  *Dev // nil when made on a Context
	u    mlx5.UMEM
	sdk  docasdk.UMEM // SDK mode
	id   uint32
	addr uintptr
	size uint64
}

// NewUMem registers [addr, addr+size) of the Dev's device
// (doca_verbs_umem_create). With buf set, the range is registered through
// the dma-buf (addr is still the address of the range in this process,
// which rings are computed from); otherwise GPU memory relies on
// nvidia-peermem on real hardware. In SDK mode a dma-buf registration goes
// through the GPU's SDK handle, buf.GPU (doca_umem_gpu_create, which finds
// the dma-buf itself), and fails with ErrInvalidValue without it.
//
// access takes the AccessFlags this package defines. A nil Dev, address 0
// or size 0 is ErrInvalidValue; any other failure is ErrInitialization (as
// in DOCA 3.0) wrapping the cause: unknown access bits, a size beyond the
// device's max_mr_size or a range that wraps or leaves the address space
// (ErrInvalidValue), a driver failure (ErrDriver).
func (d *Dev) NewUMem(addr uintptr, size uint64, access AccessFlags, buf *Dmabuf) (*UMem, error) {
	const op = "doca_verbs_umem_create"
	if err := d.check(op); err != nil {
		return nil, err
	}
	if addr == 0 || size == 0 {
		return nil, newErr(op, ErrInvalidValue, "address 0x%x, size %d: want a non-empty range", addr, size)
	}
	logUse(docasdk.ObjUMEM, d.mode)
	if d.mode == ModeSDK {
		u, err := d.newUMemSDK(op, addr, size, access, buf)
		return u, initFailed(op, docasdk.ObjUMEM, err)
	}
	u, err := newUMem(op, d.ctx, d, addr, size, access, buf)
	if err != nil {
		return nil, initFailed(op, docasdk.ObjUMEM, err)
	}
	logCreated(docasdk.ObjUMEM, unsafe.Pointer(u))
	return u, nil
}

// NewUMem registers [addr, addr+size) of device c, as Dev.NewUMem does in
// open mode.
//
// Deprecated: DOCA GPUNetIO 3.0 makes UMEMs on a device object: use
// OpenDev and Dev.NewUMem. This form runs in open mode only; in SDK mode it
// fails with ErrNotSupported.
func NewUMem(c *Context, addr uintptr, size uint64, access AccessFlags, buf *Dmabuf) (*UMem, error) {
	const op = "doca_verbs_umem_create"
	if currentMode() == ModeSDK {
		return nil, openOnly(op, "NewUMem on a Context (use Dev.NewUMem)")
	}
	if c == nil {
		return nil, newErr(op, ErrInvalidValue, "nil context")
	}
	if addr == 0 || size == 0 {
		return nil, newErr(op, ErrInvalidValue, "address 0x%x, size %d: want a non-empty range", addr, size)
	}
	u, err := newUMem(op, c, nil, addr, size, access, buf)
	if err != nil {
		return nil, initFailed(op, docasdk.ObjUMEM, err)
	}
	return u, nil
}

// newUMem is the open implementation; the UMEM references d when it is
// not nil.
func newUMem(op string, c *Context, d *Dev, addr uintptr, size uint64, access AccessFlags, buf *Dmabuf) (_ *UMem, err error) {
	if c == nil {
		return nil, newErr(op, ErrInvalidValue, "nil context")
	}
	if addr == 0 {
		return nil, newErr(op, ErrInvalidValue, "address is 0")
	}
	if size == 0 {
		return nil, newErr(op, ErrInvalidValue, "size is 0")
	}
	if buf != nil && buf.FD < 0 {
		return nil, newErr(op, ErrInvalidValue, "dma-buf fd %d", buf.FD)
	}
	if access&^accessKnown != 0 {
		return nil, newErr(op, ErrInvalidValue, "access %v: unknown access bits 0x%x", access, uint32(access&^accessKnown))
	}
	if err := checkRange(op, "address range", uint64(addr), size); err != nil {
		return nil, err
	}
	if buf != nil {
		if end := buf.Offset + size; end < buf.Offset {
			return nil, newErr(op, ErrInvalidValue, "dma-buf offset 0x%x+%d wraps around", buf.Offset, size)
		}
	}
	m := &UMem{ctx: c, dev: d, addr: addr, size: size}
	if err := c.acquire(op, "Context", &m.node); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			c.release(&m.node)
		}
	}()
	if d != nil {
		if err := d.acquire(op, "Dev", &m.node); err != nil {
			return nil, err
		}
		defer func() {
			if !ok {
				d.release(&m.node)
			}
		}()
	}
	if err := checkSize(op, c, size); err != nil {
		return nil, err
	}
	var u mlx5.UMEM
	if buf != nil {
		u, err = c.dev.RegDmabufUMEM(buf.FD, buf.Offset, size, addr, mlx5.Access(access), hostPage)
	} else {
		u, err = c.dev.RegUMEM(addr, size, mlx5.Access(access))
	}
	if err != nil {
		return nil, driverErr(op, err, "0x%x+%d", addr, size)
	}
	m.u = u
	m.id = u.ID()
	m.init("UMem", fmt.Sprintf("UMem %d (0x%x+%d) on %s", u.ID(), addr, size, c.name))
	ok = true
	return m, nil
}

// newUMemSDK registers the range through the SDK and reads its id, address
// and size back through the SDK's getters.
func (d *Dev) newUMemSDK(op string, addr uintptr, size uint64, access AccessFlags, buf *Dmabuf) (_ *UMem, err error) {
	if access&^accessKnown != 0 {
		return nil, newErr(op, ErrInvalidValue, "access %v: unknown access bits 0x%x", access, uint32(access&^accessKnown))
	}
	if err := checkRange(op, "address range", uint64(addr), size); err != nil {
		return nil, err
	}
	if buf != nil {
		if buf.GPU == nil {
			return nil, newErr(op, ErrInvalidValue, "a dma-buf registration in SDK mode needs the GPU the memory belongs to (Dmabuf.GPU)")
		}
		if buf.GPU.sdk.IsZero() {
			return nil, mixed(op, "GPU "+buf.GPU.name, ModeOpen)
		}
	}
	m := &UMem{ctx: d.ctx, dev: d}
	if err := d.acquire(op, "Dev", &m.node); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			if !m.sdk.IsZero() {
				if derr := m.sdk.Destroy(); derr != nil {
					logPrint(logErr, "doca_umem_destroy after a failed create: "+derr.Error())
				}
			}
			d.release(&m.node)
		}
	}()
	if buf != nil {
		m.sdk, err = docasdk.UMEMGPUCreate(buf.GPU.sdk, d.sdk, addr, size, uint32(access))
	} else {
		m.sdk, err = docasdk.UMEMCreate(d.sdk, addr, size, uint32(access))
	}
	if err != nil {
		return nil, sdkErr(op, true, err, "0x%x+%d", addr, size)
	}
	if m.id, err = m.sdk.ID(); err != nil {
		return nil, sdkErr(op, true, err, "umem id")
	}
	if m.addr, err = m.sdk.Address(); err != nil {
		return nil, sdkErr(op, true, err, "umem address")
	}
	if m.size, err = m.sdk.Size(); err != nil {
		return nil, sdkErr(op, true, err, "umem size")
	}
	m.init("UMem", fmt.Sprintf("UMem %d (SDK, 0x%x+%d) on %s", m.id, m.addr, m.size, d.ctx.name))
	return m, nil
}

// sameDevice refuses a UMem of another device than c.
func (u *UMem) sameDevice(op string, c *Context, what string) error {
	if u.ctx != c {
		return newErr(op, ErrInvalidValue, "%s %s belongs to device %s, not %s", what, u.userName(), u.ctx.Name(), c.name)
	}
	return nil
}

// The getters of a nil or zero UMem return zero values.

// ID is the umem id PRM commands reference (doca_verbs_umem_get_id).
func (u *UMem) ID() uint32 {
	if u == nil {
		return 0
	}
	return u.id
}

// Addr is the address of the registered range (doca_verbs_umem_get_address).
func (u *UMem) Addr() uintptr {
	if u == nil {
		return 0
	}
	return u.addr
}

// Size is the registered size in bytes (doca_verbs_umem_get_size).
func (u *UMem) Size() uint64 {
	if u == nil {
		return 0
	}
	return u.size
}

// Hold takes a reference that keeps the range registered (Close fails with
// ErrInUse naming holder) until Hold.Release; ErrBadState if it is closed.
func (u *UMem) Hold(holder string) (*Hold, error) {
	const op = "UMem.Hold"
	if u == nil {
		return nil, newErr(op, ErrInvalidValue, "nil UMem")
	}
	return u.hold(op, "UMem", holder)
}

// Mode is the implementation behind the UMEM.
func (u *UMem) Mode() Mode {
	if u == nil || u.sdk.IsZero() {
		return ModeOpen
	}
	return ModeSDK
}

// Close deregisters the range (doca_verbs_umem_destroy); ErrInUse while a CQ,
// QP or SRQ uses it. In SDK mode an SDK failure (ErrUnexpected) still
// closes the UMem, as DOCA releases its handle in every case.
func (u *UMem) Close() error {
	const op = "doca_verbs_umem_destroy"
	if u == nil {
		return newErr(op, ErrInvalidValue, "nil UMem")
	}
	var sdkFree func() error
	if !u.sdk.IsZero() {
		sdkFree = func() error {
			if err := u.sdk.Destroy(); err != nil {
				return sdkErr(op, false, err, "umem %d", u.id)
			}
			return nil
		}
	}
	return u.closeLeaf(op, "UMem", u.ctx, u.dev, sdkFree, func() error {
		if err := u.u.Dereg(); err != nil {
			return driverErr(op, err, "umem %d", u.u.ID())
		}
		return nil
	})
}
