package verbs

import (
	"fmt"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// PD is a protection domain (ibv_pd). QPs, SRQs and MRs that must work
// together are made on one PD.
type PD struct {
	node
	ctx *Context
	pd  mlx5.PD
}

// AllocPD allocates a protection domain (ibv_alloc_pd).
func (c *Context) AllocPD() (*PD, error) {
	const op = "ibv_alloc_pd"
	if c == nil {
		return nil, newErr(op, ErrInvalidValue, "nil context")
	}
	p := &PD{ctx: c}
	if err := c.acquire(op, "Context", &p.node); err != nil {
		return nil, err
	}
	pd, err := c.dev.AllocPD()
	if err != nil {
		c.release(&p.node)
		return nil, driverErr(op, err, "device %s", c.name)
	}
	p.pd = pd
	p.init("PD", fmt.Sprintf("PD %d on %s", pd.PDN(), c.name))
	return p, nil
}

// check refuses a nil, zero-value or closed PD.
func (p *PD) check(op string) error {
	if p == nil {
		return newErr(op, ErrInvalidValue, "nil PD")
	}
	return p.use(op, "PD")
}

// Context returns the device the PD belongs to.
func (p *PD) Context() *Context {
	if p == nil {
		return nil
	}
	return p.ctx
}

// PDN is the 24-bit PRM PD number (mlx5dv_pd.pdn); 0 for a nil or zero PD.
func (p *PD) PDN() uint32 {
	if p == nil || p.pd == nil {
		return 0
	}
	return p.pd.PDN()
}

// Raw returns the struct ibv_pd pointer, for code that mixes in its own
// libibverbs calls; 0 on an emulated device (and for a nil or zero PD).
func (p *PD) Raw() uintptr {
	if p == nil || p.pd == nil {
		return 0
	}
	return p.pd.Native()
}

// Hold takes a reference that keeps the PD allocated (Close fails with
// ErrInUse naming holder) until Hold.Release; ErrBadState if it is closed.
func (p *PD) Hold(holder string) (*Hold, error) {
	const op = "PD.Hold"
	if p == nil {
		return nil, newErr(op, ErrInvalidValue, "nil PD")
	}
	return p.hold(op, "PD", holder)
}

// Close deallocates the PD (ibv_dealloc_pd); ErrInUse while MRs, QPs or SRQs
// made on it are open.
func (p *PD) Close() error {
	const op = "ibv_dealloc_pd"
	if p == nil {
		return newErr(op, ErrInvalidValue, "nil PD")
	}
	done, err := p.beginClose(op, "PD")
	if done || err != nil {
		return err
	}
	err = p.pd.Dealloc()
	if err != nil {
		err = driverErr(op, err, "pdn %d", p.pd.PDN())
	} else {
		p.ctx.release(&p.node)
	}
	p.endClose(err)
	return err
}

// checkPD refuses a missing PD, a closed one and one of another device.
func (c *Context) checkPD(op string, pd *PD) error {
	if pd == nil {
		return newErr(op, ErrInvalidValue, "no PD")
	}
	if err := pd.check(op); err != nil {
		return err
	}
	if pd.ctx != c {
		return newErr(op, ErrInvalidValue, "PD belongs to device %s, not %s", pd.ctx.Name(), c.name)
	}
	return nil
}
