package verbs

import (
	"fmt"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/docasdk"
	"github.com/gdaki/gpunetio/internal/mlx5"
)

// UAR is a doorbell page (doca_verbs_uar).
type UAR struct {
	node
	ctx *Context
	dev *Dev // nil when made on a Context
	u   mlx5.UAR
	sdk docasdk.UAR // SDK mode
	id  uint32
	reg uintptr // SDK mode: the doorbell register
	t   UARAllocType
}

// NewUAR allocates a doorbell page of the given type on the Dev's device
// (doca_verbs_uar_create). A nil Dev is ErrInvalidValue; any other failure
// is ErrInitialization (DOCA 3.0) wrapping the cause (an unknown type is
// ErrInvalidValue, a driver failure ErrDriver).
func (d *Dev) NewUAR(t UARAllocType) (*UAR, error) {
	const op = "doca_verbs_uar_create"
	if err := d.check(op); err != nil {
		logPrint(logErr, "Failed to create uar: parameter net_dev is NULL")
		return nil, err
	}
	logUse(docasdk.ObjUAR, d.mode)
	if d.mode == ModeSDK {
		u, err := d.newUARSDK(op, t)
		return u, initFailed(op, docasdk.ObjUAR, err)
	}
	u, err := newUAR(op, d.ctx, d, t)
	if err != nil {
		return nil, initFailed(op, docasdk.ObjUAR, err)
	}
	logCreated(docasdk.ObjUAR, unsafe.Pointer(u))
	return u, nil
}

// NewUAR allocates a UAR page of the given type on device c, as Dev.NewUAR
// does in open mode.
//
// Deprecated: DOCA GPUNetIO 3.0 makes UARs on a device object: use OpenDev
// and Dev.NewUAR. This form runs in open mode only; in SDK mode it fails
// with ErrNotSupported.
func NewUAR(c *Context, t UARAllocType) (*UAR, error) {
	const op = "doca_verbs_uar_create"
	if currentMode() == ModeSDK {
		return nil, openOnly(op, "NewUAR on a Context (use Dev.NewUAR)")
	}
	if c == nil {
		return nil, newErr(op, ErrInvalidValue, "nil context")
	}
	u, err := newUAR(op, c, nil, t)
	return u, initFailed(op, docasdk.ObjUAR, err)
}

// newUAR is the open implementation; the UAR references d when it is not
// nil.
func newUAR(op string, c *Context, d *Dev, t UARAllocType) (*UAR, error) {
	if c == nil {
		return nil, newErr(op, ErrInvalidValue, "nil context")
	}
	dt, ok := t.driverType()
	if !ok {
		return nil, newErr(op, ErrInvalidValue, "unknown allocation type %v", t)
	}
	x := &UAR{ctx: c, dev: d, t: t}
	if err := c.acquire(op, "Context", &x.node); err != nil {
		return nil, err
	}
	if d != nil {
		if err := d.acquire(op, "Dev", &x.node); err != nil {
			c.release(&x.node)
			return nil, err
		}
	}
	u, err := c.dev.AllocUAR(dt)
	if err != nil {
		x.releaseParents(c, d)
		return nil, driverErr(op, err, "type %v", t)
	}
	x.u = u
	x.id = u.PageID()
	x.init("UAR", fmt.Sprintf("UAR %d (%v) on %s", u.PageID(), t, c.name))
	return x, nil
}

// newUARSDK allocates the page through the SDK (the type passes unchanged)
// and reads its id and doorbell address back.
func (d *Dev) newUARSDK(op string, t UARAllocType) (_ *UAR, err error) {
	if _, ok := t.driverType(); !ok {
		return nil, newErr(op, ErrInvalidValue, "unknown allocation type %v", t)
	}
	x := &UAR{ctx: d.ctx, dev: d, t: t}
	if err := d.acquire(op, "Dev", &x.node); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			if !x.sdk.IsZero() {
				if derr := x.sdk.Destroy(); derr != nil {
					logPrint(logErr, "doca_uar_destroy after a failed create: "+derr.Error())
				}
			}
			d.release(&x.node)
		}
	}()
	if x.sdk, err = docasdk.UARCreate(d.sdk, uint32(t)); err != nil {
		return nil, sdkErr(op, true, err, "type %v", t)
	}
	if x.id, err = x.sdk.ID(); err != nil {
		return nil, sdkErr(op, true, err, "uar id")
	}
	if x.reg, err = x.sdk.RegAddr(); err != nil {
		return nil, sdkErr(op, true, err, "uar register address")
	}
	x.init("UAR", fmt.Sprintf("UAR %d (SDK, %v) on %s", x.id, t, d.ctx.name))
	return x, nil
}

// sameDevice refuses a UAR of another device than c.
func (u *UAR) sameDevice(op string, c *Context) error {
	if u.ctx != c {
		return newErr(op, ErrInvalidValue, "%s belongs to device %s, not %s", u.userName(), u.ctx.Name(), c.name)
	}
	return nil
}

// The getters of a nil or zero UAR return zero values.

// ID is the UAR page index for qpc.uar_page / cqc.uar_page
// (doca_verbs_uar_id_get).
func (u *UAR) ID() uint32 {
	if u == nil {
		return 0
	}
	return u.id
}

// BaseAddr is the mapping of the whole 4 KiB page (in SDK mode, the page of
// the doorbell register the SDK reports).
func (u *UAR) BaseAddr() uintptr {
	switch {
	case u == nil:
		return 0
	case !u.sdk.IsZero():
		return u.reg &^ (hostPage - 1)
	case u.u == nil:
		return 0
	}
	return u.u.BaseAddr()
}

// RegAddr is the doorbell / BlueFlame register, base + 0x800
// (doca_verbs_uar_reg_addr_get).
func (u *UAR) RegAddr() uintptr {
	switch {
	case u == nil:
		return 0
	case !u.sdk.IsZero():
		return u.reg
	case u.u == nil:
		return 0
	}
	return u.u.RegAddr()
}

// DBRLessAddr is the doorbell of NO_DBR_EXT QPs, base + 0x600
// (doca_verbs_uar_dbr_less_addr_get). It is 0 in SDK mode: the SDK has no
// getter for it (DOCA 3.0 returns the register address there, which is
// wrong).
func (u *UAR) DBRLessAddr() uintptr {
	if u == nil || u.u == nil {
		return 0
	}
	return u.u.BaseAddr() + mlx5.UAROffsetNoDBR
}

// Mode is the implementation behind the UAR.
func (u *UAR) Mode() Mode {
	if u == nil || u.sdk.IsZero() {
		return ModeOpen
	}
	return ModeSDK
}

// AllocType is the type the page was allocated with.
func (u *UAR) AllocType() UARAllocType {
	if u == nil {
		return 0
	}
	return u.t
}

// IsMMIO reports whether the page is device MMIO (a real NIC's BAR) rather
// than host memory (an emulated device), which decides how a GPU maps it.
func (u *UAR) IsMMIO() bool {
	if u == nil {
		return false
	}
	if !u.sdk.IsZero() {
		return true // the SDK drives real NICs only
	}
	if u.u == nil {
		return false
	}
	return u.u.IOMemory()
}

// Hold takes a reference that keeps the page allocated and mapped (Close
// fails with ErrInUse naming holder) until Hold.Release; ErrBadState if it
// is closed. Package gpunetio holds every UAR whose page it maps into a GPU.
func (u *UAR) Hold(holder string) (*Hold, error) {
	const op = "UAR.Hold"
	if u == nil {
		return nil, newErr(op, ErrInvalidValue, "nil UAR")
	}
	return u.hold(op, "UAR", holder)
}

// Close frees the page (doca_verbs_uar_destroy); ErrInUse while CQs or QPs
// use it. In SDK mode an SDK failure (ErrUnexpected) still closes the UAR.
func (u *UAR) Close() error {
	const op = "doca_verbs_uar_destroy"
	if u == nil {
		logPrint(logInfo, "Failed to destroy uar: parameter uar is NULL")
		return newErr(op, ErrInvalidValue, "nil UAR")
	}
	var sdkFree func() error
	if !u.sdk.IsZero() {
		sdkFree = func() error {
			if err := u.sdk.Destroy(); err != nil {
				return sdkErr(op, false, err, "uar %d", u.id)
			}
			return nil
		}
	}
	return u.closeLeaf(op, "UAR", u.ctx, u.dev, sdkFree, func() error {
		if err := u.u.Free(); err != nil {
			return driverErr(op, err, "uar %d", u.u.PageID())
		}
		return nil
	})
}
