package emu

import (
	"fmt"
	"syscall"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// umem is a DevX UMEM: rings and doorbell records live in one.
type umem struct {
	ctx  *devCtx
	id   uint32
	mem  *span
	refs int // CQs, QPs and RMPs using it
	dead bool
}

func (c *devCtx) RegUMEM(addr uintptr, size uint64, access mlx5.Access) (mlx5.UMEM, error) {
	return c.regUMEM("devx_umem_reg", addr, size, access)
}

func (c *devCtx) RegDmabufUMEM(fd int, offset uint64, size uint64, addr uintptr, access mlx5.Access, pageSizes uint64) (mlx5.UMEM, error) {
	if fd < 0 {
		return nil, fmt.Errorf("emu: devx_umem_reg_ex (dmabuf): fd %d: %w", fd, syscall.EBADF)
	}
	if pageSizes != 0 && pageSizes&(1<<12|1<<16|1<<21) == 0 {
		return nil, fmt.Errorf("emu: devx_umem_reg_ex (dmabuf): page size bitmap 0x%x has no usable size: %w", pageSizes, syscall.EINVAL)
	}
	return c.regUMEM("devx_umem_reg_ex", addr, size, access)
}

func (c *devCtx) regUMEM(op string, addr uintptr, size uint64, access mlx5.Access) (mlx5.UMEM, error) {
	mem, err := newSpan(op, addr, size)
	if err != nil {
		return nil, err
	}
	n := c.nic
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := c.checkOpen(op); err != nil {
		return nil, err
	}
	id, _, ok := n.ids.umem.alloc(func(i uint32) bool { return n.umems[i] != nil })
	if !ok {
		return nil, fmt.Errorf("emu: %s: all %d 32-bit UMEM ids in use: %w", op, uint32(0xffffffff), syscall.ENOMEM)
	}
	u := &umem{ctx: c, id: id, mem: mem}
	n.umems[u.id] = u
	c.live++
	track(u, "UMEM %d on %s", u.id, n.cfg.Name)
	return u, nil
}

func (u *umem) ID() uint32    { return u.id }
func (u *umem) Addr() uintptr { return u.mem.base }
func (u *umem) Size() uint64  { return u.mem.size }

// Dereg refuses while a CQ, QP or RMP uses the UMEM (EBUSY) and otherwise
// returns once the NIC can no longer touch the memory.
func (u *umem) Dereg() error {
	n := u.ctx.nic
	n.mu.Lock()
	if u.dead {
		n.mu.Unlock()
		u.mem.retire()
		return nil
	}
	if u.refs > 0 {
		n.mu.Unlock()
		return fmt.Errorf("emu: devx_umem_dereg %d: %d objects still use it: %w", u.id, u.refs, syscall.EBUSY)
	}
	u.dead = true
	delete(n.umems, u.id)
	u.ctx.live--
	n.mu.Unlock()
	u.mem.retire()
	untrack(u)
	return nil
}

// umemOf resolves a UMEM id of context c and checks that [off, off+size) is
// inside it with the given alignment; n.mu held.
func (c *devCtx) umemOf(id uint32) *umem {
	u := c.nic.umems[id]
	if u == nil || u.ctx != c {
		return nil
	}
	return u
}

func (u *umem) fits(off, size, align uint64) bool {
	return off%align == 0 && size <= u.mem.size && off <= u.mem.size-size
}
