package verbs

import (
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
	if err := c.acquire(op); err != nil {
		return nil, err
	}
	u, err := c.dev.AllocUAR(dt)
	if err != nil {
		c.release()
		return nil, driverErr(op, err, "type %v", t)
	}
	x := &UAR{ctx: c, u: u, t: t}
	x.init("UAR")
	return x, nil
}

// ID is the UAR page index for qpc.uar_page / cqc.uar_page.
func (u *UAR) ID() uint32 { return u.u.PageID() }

// BaseAddr is the mapping of the whole 4 KiB page.
func (u *UAR) BaseAddr() uintptr { return u.u.BaseAddr() }

// RegAddr is the doorbell / BlueFlame register (base + 0x800).
func (u *UAR) RegAddr() uintptr { return u.u.RegAddr() }

// DBRLessAddr is the doorbell of NO_DBR_EXT QPs (base + 0x600).
func (u *UAR) DBRLessAddr() uintptr { return u.u.BaseAddr() + mlx5.UAROffsetNoDBR }

// AllocType is the type the page was allocated with.
func (u *UAR) AllocType() UARAllocType { return u.t }

// IsMMIO reports whether the page is device MMIO (a real NIC's BAR) rather
// than host memory (an emulated device), which decides how a GPU maps it.
func (u *UAR) IsMMIO() bool { return u.u.IOMemory() }

// Close frees the page (doca_verbs_uar_destroy); ErrInUse while CQs or QPs
// use it.
func (u *UAR) Close() error {
	const op = "doca_verbs_uar_destroy"
	done, err := u.beginClose(op)
	if done || err != nil {
		return err
	}
	err = u.u.Free()
	if err != nil {
		err = driverErr(op, err, "uar %d", u.u.PageID())
	} else {
		u.ctx.release()
	}
	u.endClose(err)
	return err
}
