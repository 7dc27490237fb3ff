package verbs

import (
	"fmt"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// UAR is a doorbell page (doca_verbs_uar).
type UAR struct {
	node
	ctx *Context
	u   mlx5.UAR
	t   UARAllocType
}

// NewUAR allocates a UAR page of the given type (doca_verbs_uar_create).
func NewUAR(c *Context, t UARAllocType) (*UAR, error) {
	const op = "doca_verbs_uar_create"
	if c == nil {
		return nil, newErr(op, ErrInvalidValue, "nil context")
	}
	dt, ok := t.driverType()
	if !ok {
		return nil, newErr(op, ErrInvalidValue, "unknown allocation type %v", t)
	}
	x := &UAR{ctx: c, t: t}
	if err := c.acquire(op, "Context", &x.node); err != nil {
		return nil, err
	}
	u, err := c.dev.AllocUAR(dt)
	if err != nil {
		c.release(&x.node)
		return nil, driverErr(op, err, "type %v", t)
	}
	x.u = u
	x.init("UAR", fmt.Sprintf("UAR %d (%v) on %s", u.PageID(), t, c.name))
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

// ID is the UAR page index for qpc.uar_page / cqc.uar_page.
func (u *UAR) ID() uint32 {
	if u == nil || u.u == nil {
		return 0
	}
	return u.u.PageID()
}

// BaseAddr is the mapping of the whole 4 KiB page.
func (u *UAR) BaseAddr() uintptr {
	if u == nil || u.u == nil {
		return 0
	}
	return u.u.BaseAddr()
}

// RegAddr is the doorbell / BlueFlame register (base + 0x800).
func (u *UAR) RegAddr() uintptr {
	if u == nil || u.u == nil {
		return 0
	}
	return u.u.RegAddr()
}

// DBRLessAddr is the doorbell of NO_DBR_EXT QPs (base + 0x600).
func (u *UAR) DBRLessAddr() uintptr {
	if u == nil || u.u == nil {
		return 0
	}
	return u.u.BaseAddr() + mlx5.UAROffsetNoDBR
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
	if u == nil || u.u == nil {
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
// use it.
func (u *UAR) Close() error {
	const op = "doca_verbs_uar_destroy"
	if u == nil {
		return newErr(op, ErrInvalidValue, "nil UAR")
	}
	done, err := u.beginClose(op, "UAR")
	if done || err != nil {
		return err
	}
	err = u.u.Free()
	if err != nil {
		err = driverErr(op, err, "uar %d", u.u.PageID())
	} else {
		u.ctx.release(&u.node)
	}
	u.endClose(err)
	return err
}
