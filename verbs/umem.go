package verbs

import (
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
// memory relies on nvidia-peermem on real hardware.
func NewUMem(c *Context, addr uintptr, size uint64, access AccessFlags, buf *Dmabuf) (*UMem, error) {
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
	if err := c.acquire(op); err != nil {
		return nil, err
	}
	var u mlx5.UMEM
	var err error
	if buf != nil {
		u, err = c.dev.RegDmabufUMEM(buf.FD, buf.Offset, size, addr, mlx5.Access(access), hostPage)
	} else {
		u, err = c.dev.RegUMEM(addr, size, mlx5.Access(access))
	}
	if err != nil {
		c.release()
		return nil, driverErr(op, err, "0x%x+%d", addr, size)
	}
	m := &UMem{ctx: c, u: u, addr: addr, size: size}
	m.init("UMem")
	return m, nil
}

// ID is the umem id PRM commands reference.
func (u *UMem) ID() uint32 { return u.u.ID() }

// Addr is the address of the registered range.
func (u *UMem) Addr() uintptr { return u.addr }

// Size is the registered size in bytes.
func (u *UMem) Size() uint64 { return u.size }

// Close deregisters the range (doca_verbs_umem_destroy); ErrInUse while a CQ,
// QP or SRQ uses it.
func (u *UMem) Close() error {
	const op = "doca_verbs_umem_destroy"
	done, err := u.beginClose(op)
	if done || err != nil {
		return err
	}
	err = u.u.Dereg()
	if err != nil {
		err = driverErr(op, err, "umem %d", u.u.ID())
	} else {
		u.ctx.release()
	}
	u.endClose(err)
	return err
}
