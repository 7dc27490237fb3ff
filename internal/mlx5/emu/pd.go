package emu

import (
	"fmt"
	"syscall"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// pd is a protection domain.
type pd struct {
	ctx  *devCtx
	pdn  uint32
	refs int // MRs and QPs on the PD
	dead bool
}

func (c *devCtx) AllocPD() (mlx5.PD, error) {
	n := c.nic
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := c.checkOpen("alloc_pd"); err != nil {
		return nil, err
	}
	if len(n.pds) >= 1<<capLogMaxPD {
		return nil, fmt.Errorf("emu: alloc_pd on %s: all %d PDs in use (max_pd, log_max_pd %d): %w", n.cfg.Name, len(n.pds), capLogMaxPD, syscall.ENOMEM)
	}
	pdn, _, ok := n.ids.pd.alloc(func(i uint32) bool { return n.pds[i] != nil })
	if !ok {
		return nil, fmt.Errorf("emu: alloc_pd on %s: all %d 24-bit PD numbers in use: %w", n.cfg.Name, mask24, syscall.ENOMEM)
	}
	p := &pd{ctx: c, pdn: pdn}
	n.pds[p.pdn] = p
	c.live++
	track(p, "PD %d on %s", p.pdn, n.cfg.Name)
	return p, nil
}

func (p *pd) PDN() uint32     { return p.pdn }
func (p *pd) Native() uintptr { return 0 }

func (p *pd) Dealloc() error {
	n := p.ctx.nic
	n.mu.Lock()
	defer n.mu.Unlock()
	if p.dead {
		return nil
	}
	if p.refs > 0 {
		return fmt.Errorf("emu: dealloc_pd %d: %d MRs/QPs still use it: %w", p.pdn, p.refs, syscall.EBUSY)
	}
	p.dead = true
	delete(n.pds, p.pdn)
	p.ctx.live--
	untrack(p)
	return nil
}

// pdOf resolves a PD argument of this context.
func (c *devCtx) pdOf(op string, p mlx5.PD) (*pd, error) {
	q, ok := p.(*pd)
	if !ok || q == nil || q.dead || q.ctx != c {
		return nil, fmt.Errorf("emu: %s: PD does not belong to this %s context: %w", op, c.nic.cfg.Name, syscall.EINVAL)
	}
	return q, nil
}
