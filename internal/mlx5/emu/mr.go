package emu

import (
	"fmt"
	"syscall"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// mr is a memory region: an mkey over a span, addressed by WQEs through
// its iova.
type mr struct {
	pd     *pd
	key    uint32
	mem    *span
	iova   uint64
	access mlx5.Access
	dmabuf bool
	dead   bool
}

func (c *devCtx) RegMR(p mlx5.PD, addr uintptr, length uint64, iova uint64, access mlx5.Access) (mlx5.MR, error) {
	return c.regMR("reg_mr", p, addr, length, iova, access, false)
}

func (c *devCtx) RegDmabufMR(p mlx5.PD, fd int, offset uint64, length uint64, iova uint64, addr uintptr, access mlx5.Access) (mlx5.MR, error) {
	if fd < 0 {
		return nil, fmt.Errorf("emu: reg_dmabuf_mr: fd %d: %w", fd, syscall.EBADF)
	}
	return c.regMR("reg_dmabuf_mr", p, addr, length, iova, access, true)
}

func (c *devCtx) regMR(op string, p mlx5.PD, addr uintptr, length uint64, iova uint64, access mlx5.Access, dmabuf bool) (mlx5.MR, error) {
	access &^= mlx5.AccessRelaxedOrdering // optional range: accepted and ignored
	const known = mlx5.AccessLocalWrite | mlx5.AccessRemoteWrite | mlx5.AccessRemoteRead | mlx5.AccessRemoteAtomic | mlx5.AccessZeroBased
	if access&^known != 0 {
		return nil, fmt.Errorf("emu: %s: access 0x%x has unsupported bits: %w", op, uint32(access), syscall.EINVAL)
	}
	if access&(mlx5.AccessRemoteWrite|mlx5.AccessRemoteAtomic) != 0 && access&mlx5.AccessLocalWrite == 0 {
		return nil, fmt.Errorf("emu: %s: remote write/atomic without local write: %w", op, syscall.EINVAL)
	}
	if access&mlx5.AccessZeroBased != 0 {
		iova = 0
	}
	if iova+length < iova {
		return nil, fmt.Errorf("emu: %s: iova 0x%x+%d wraps: %w", op, iova, length, syscall.EINVAL)
	}
	mem, err := newSpan(op, addr, length)
	if err != nil {
		return nil, err
	}
	n := c.nic
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := c.checkOpen(op); err != nil {
		return nil, err
	}
	q, err := c.pdOf(op, p)
	if err != nil {
		return nil, err
	}
	if len(n.mrs) >= 1<<capLogMaxMkey {
		return nil, fmt.Errorf("emu: %s: %w", op, syscall.ENOMEM)
	}
	idx := n.nextKey & 0xffffff
	for n.mrs[idx] != nil || idx == 0 {
		idx = (idx + 1) & 0xffffff
	}
	n.nextKey = idx + 1
	m := &mr{pd: q, key: idx<<8 | (idx*0x3b+0x11)&0xff, mem: mem, iova: iova, access: access, dmabuf: dmabuf}
	n.mrs[idx] = m
	n.refreshMRs()
	q.refs++
	c.live++
	return m, nil
}

func (m *mr) LKey() uint32    { return m.key }
func (m *mr) RKey() uint32    { return m.key }
func (m *mr) Addr() uintptr   { return m.mem.base }
func (m *mr) IOVA() uint64    { return m.iova }
func (m *mr) Len() uint64     { return m.mem.size }
func (m *mr) Native() uintptr { return 0 }

func (m *mr) Dereg() error {
	n := m.pd.ctx.nic
	n.mu.Lock()
	defer n.mu.Unlock()
	if m.dead {
		return nil
	}
	m.dead = true
	delete(n.mrs, m.key>>8)
	n.refreshMRs()
	m.pd.refs--
	m.pd.ctx.live--
	return nil
}

// lookupMR finds the live MR of key (no lock needed).
func (n *NIC) lookupMR(key uint32) *mr {
	m := (*n.mrMap.Load())[key>>8]
	if m == nil || m.key != key {
		return nil
	}
	return m
}

// check validates an access of [va, va+len) through the MR on PD p with
// right need; it returns the byte offset inside the span.
func (m *mr) check(p *pd, va uint64, length uint64, need mlx5.Access) (uint64, bool) {
	if m == nil || m.pd != p || m.access&need != need {
		return 0, false
	}
	if va < m.iova || length > m.mem.size || va-m.iova > m.mem.size-length {
		return 0, false
	}
	return va - m.iova, true
}
