package verbs

import (
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
	if err := c.acquire(op); err != nil {
		return nil, err
	}
	pd, err := c.dev.AllocPD()
	if err != nil {
		c.release()
		return nil, driverErr(op, err, "device %s", c.name)
	}
	p := &PD{ctx: c, pd: pd}
	p.init("PD")
	return p, nil
}

// Context returns the device the PD belongs to.
func (p *PD) Context() *Context { return p.ctx }

// PDN is the 24-bit PRM PD number (mlx5dv_pd.pdn).
func (p *PD) PDN() uint32 { return p.pd.PDN() }

// Raw returns the struct ibv_pd pointer, for code that mixes in its own
// libibverbs calls; 0 on an emulated device.
func (p *PD) Raw() uintptr { return p.pd.Native() }

// Close deallocates the PD (ibv_dealloc_pd); ErrInUse while MRs, QPs or SRQs
// made on it are open.
func (p *PD) Close() error {
	const op = "ibv_dealloc_pd"
	done, err := p.beginClose(op)
	if done || err != nil {
		return err
	}
	err = p.pd.Dealloc()
	if err != nil {
		err = driverErr(op, err, "pdn %d", p.pd.PDN())
	} else {
		p.ctx.release()
	}
	p.endClose(err)
	return err
}
