package emu

import (
	"fmt"
	"syscall"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// devCtx is one opened device: a DevX context with its own uid. It
// implements mlx5.Device.
type devCtx struct {
	nic    *NIC
	uid    uint16
	closed bool
	live   int  // objects owned by the context, the shared NC UAR excluded
	ncUAR  *uar // the context's shared NC UAR, allocated on first request
}

var _ mlx5.Device = (*devCtx)(nil)

func (c *devCtx) Name() string   { return c.nic.cfg.Name }
func (c *devCtx) Driver() string { return "emu" }

func (c *devCtx) checkOpen(op string) error {
	if c.closed {
		return fmt.Errorf("emu: %s on closed device %s: %w", op, c.nic.cfg.Name, syscall.EBADF)
	}
	return nil
}

func (c *devCtx) QueryDevice() (mlx5.DeviceAttr, error) {
	c.nic.mu.RLock()
	defer c.nic.mu.RUnlock()
	if err := c.checkOpen("query_device"); err != nil {
		return mlx5.DeviceAttr{}, err
	}
	k := c.nic.caps
	return mlx5.DeviceAttr{
		FWVersion:       k.fwVersion(),
		NodeGUID:        nodeGUID(c.nic.cfg.Name),
		VendorID:        0x02c9,
		VendorPartID:    k.partID(),
		MaxMRSize:       1 << 46,
		MaxQP:           1 << capLogMaxQP,
		MaxQPWR:         1 << capLogMaxQPSz,
		MaxSGE:          30,
		MaxCQ:           1 << capLogMaxCQ,
		MaxCQE:          1<<capLogMaxCQSz - 1,
		MaxMR:           1 << capLogMaxMkey,
		MaxPD:           1 << capLogMaxPD,
		MaxAH:           1 << 24,
		MaxSRQ:          1 << 15,
		MaxSRQWR:        1 << capLogMaxSRQSz,
		MaxSRQSGE:       31,
		MaxPKeys:        128,
		MaxQPRDAtom:     1 << capLogMaxRA,
		MaxQPInitRDAtom: 1 << capLogMaxRA,
		AtomicCap:       1, // IBV_ATOMIC_HCA: CS+FA, 8 bytes, host-endian mode
		PhysPortCnt:     1,
	}, nil
}

func (c *devCtx) QueryPort(port uint8) (mlx5.PortAttr, error) {
	if port != 1 {
		return mlx5.PortAttr{}, fmt.Errorf("emu: query_port %d on %s: %w", port, c.nic.cfg.Name, syscall.EINVAL)
	}
	c.nic.mu.RLock()
	defer c.nic.mu.RUnlock()
	if err := c.checkOpen("query_port"); err != nil {
		return mlx5.PortAttr{}, err
	}
	st := mlx5.PortActive
	if c.nic.portDown.Load() {
		st = mlx5.PortDown
	}
	return mlx5.PortAttr{
		State: st, MaxMTU: portMTU, ActiveMTU: portMTU, GIDTblLen: gidTableSize,
		LinkLayer: mlx5.LinkLayerEthernet, ActiveSpeed: 0x80, ActiveWidth: 2,
	}, nil
}

// Port facts.
const (
	portMTU      = 5 // IBV_MTU_4096
	gidTableSize = 4 // only index 0 is populated
)

func (c *devCtx) QueryGID(port uint8, index uint32) (mlx5.GIDEntry, error) {
	if port != 1 || index >= gidTableSize {
		return mlx5.GIDEntry{}, fmt.Errorf("emu: query_gid port %d index %d on %s: %w", port, index, c.nic.cfg.Name, syscall.EINVAL)
	}
	if index != 0 {
		return mlx5.GIDEntry{}, fmt.Errorf("emu: query_gid index %d on %s: empty entry: %w", index, c.nic.cfg.Name, syscall.ENODATA)
	}
	return mlx5.GIDEntry{GID: c.nic.gid, Index: 0, Port: 1, Type: mlx5.GIDTypeRoCEv2}, nil
}

// QueryEQN maps completion vector v to EQ number eqnBase+v.
func (c *devCtx) QueryEQN(vector uint32) (uint32, error) {
	if vector >= numCompVectors {
		return 0, fmt.Errorf("emu: query_eqn vector %d on %s (has %d): %w", vector, c.nic.cfg.Name, numCompVectors, syscall.EINVAL)
	}
	return eqnBase + vector, nil
}

const (
	numCompVectors = 4
	eqnBase        = 0x10
)

func validEQN(e uint32) bool { return e >= eqnBase && e < eqnBase+numCompVectors }

// Close closes the context; EBUSY while it still owns objects.
func (c *devCtx) Close() error {
	writeEnvTimeline(0)
	stopEnvCPUProfile()
	n := c.nic
	n.mu.Lock()
	if c.closed {
		n.mu.Unlock()
		return nil
	}
	if c.live > 0 {
		live := c.live
		n.mu.Unlock()
		return fmt.Errorf("emu: close %s: %d objects still allocated: %w", n.cfg.Name, live, syscall.EBUSY)
	}
	c.closed = true
	delete(n.ctxs, c.uid)
	untrack(c)
	nc := c.ncUAR
	c.ncUAR = nil
	if nc != nil {
		delete(n.uars, nc.id)
		n.refreshUARs()
	}
	n.mu.Unlock()
	if nc != nil {
		nc.unmap()
	}
	return nil
}
