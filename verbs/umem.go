package verbs

import (
	"fmt"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// UMem is a DevX user-memory registration (doca_verbs_umem): memory, in host
// or GPU memory, that CQ and QP rings and doorbell records live in. It does
// not own the memory.
type UMem struct {
	node
	ctx  *Context
	u    mlx5.UMEM
	addr uintptr
	size uint64
}

// NewUMem registers [addr, addr+size) (doca_verbs_umem_create). With buf set,
// the range is registered through the dma-buf (addr is still the address of
// the range in this process, which rings are computed from); otherwise GPU
// memory relies on nvidia-peermem on real hardware. access takes the
// AccessFlags this package defines (unknown bits are ErrInvalidValue); a
// size beyond the device's max_mr_size, or a range that wraps or leaves the
// address space, is ErrInvalidValue.
func NewUMem(c *Context, addr uintptr, size uint64, access AccessFlags, buf *Dmabuf) (_ *UMem, err error) {
	const op = "doca_verbs_umem_create"
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
	m := &UMem{ctx: c, addr: addr, size: size}
	if err := c.acquire(op, "Context", &m.node); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			c.release(&m.node)
		}
	}()
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
	m.init("UMem", fmt.Sprintf("UMem %d (0x%x+%d) on %s", u.ID(), addr, size, c.name))
	ok = true
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

// ID is the umem id PRM commands reference.
func (u *UMem) ID() uint32 {
	if u == nil || u.u == nil {
		return 0
	}
	return u.u.ID()
}

// Addr is the address of the registered range.
func (u *UMem) Addr() uintptr {
	if u == nil {
		return 0
	}
	return u.addr
}

// Size is the registered size in bytes.
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

// Close deregisters the range (doca_verbs_umem_destroy); ErrInUse while a CQ,
// QP or SRQ uses it.
func (u *UMem) Close() error {
	const op = "doca_verbs_umem_destroy"
	if u == nil {
		return newErr(op, ErrInvalidValue, "nil UMem")
	}
	done, err := u.beginClose(op, "UMem")
	if done || err != nil {
		return err
	}
	err = u.u.Dereg()
	if err != nil {
		err = driverErr(op, err, "umem %d", u.u.ID())
	} else {
		u.ctx.release(&u.node)
	}
	u.endClose(err)
	return err
}
