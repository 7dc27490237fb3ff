package emu

import (
	"fmt"
	"sync/atomic"
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

	// rinval: the mkey may be invalidated by a remote SEND with invalidate
	// (mkc en_rinval). No registration the driver boundary offers sets it
	// (a ConnectX enables it for fast-registration keys and memory windows,
	// which the emulator does not have); tests set it to exercise the path.
	rinval atomic.Bool
	// invalid: the key was invalidated; every access through it fails until
	// the MR is deregistered.
	invalid atomic.Bool
}

func (c *devCtx) RegMR(p mlx5.PD, addr uintptr, length uint64, iova uint64, access mlx5.Access) (mlx5.MR, error) {
	return pinAtReg(c.regMR("reg_mr", p, addr, length, iova, access, false))
}

func (c *devCtx) RegDmabufMR(p mlx5.PD, fd int, offset uint64, length uint64, iova uint64, addr uintptr, access mlx5.Access) (mlx5.MR, error) {
	if fd < 0 {
		return nil, fmt.Errorf("emu: reg_dmabuf_mr: fd %d: %w", fd, syscall.EBADF)
	}
	return pinAtReg(c.regMR("reg_dmabuf_mr", p, addr, length, iova, access, true))
}

// pinAtReg page-locks a new host MR that large payloads from device memory
// may land in (inproc.go), as a ConnectX's registration pins the pages it
// will DMA to: one of inPlaceMin bytes or more, writable, while the
// installed GPUMemory can pin host memory. The registration returns once
// the pin is through; a pin that fails leaves the MR as it is.
func pinAtReg(m mlx5.MR, err error) (mlx5.MR, error) {
	if err != nil {
		return m, err
	}
	r := m.(*mr)
	if r.mem.gpu == nil && r.mem.size >= inPlaceMin && r.access&mlx5.AccessLocalWrite != 0 {
		if g := currentGPU(); g != nil {
			r.mem.pinForDMA(g)
		}
	}
	return m, nil
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
		return nil, fmt.Errorf("emu: %s: all %d memory keys in use (max_mr, log_max_mkey %d): %w", op, len(n.mrs), capLogMaxMkey, syscall.ENOMEM)
	}
	idx, pass, ok := n.ids.mkey.alloc(func(i uint32) bool { return n.mrs[i] != nil })
	if !ok {
		return nil, fmt.Errorf("emu: %s: all %d 24-bit memory key indexes in use: %w", op, mask24-1, syscall.ENOMEM)
	}
	m := &mr{pd: q, key: mkeyOf(idx, pass), mem: mem, iova: iova, access: access, dmabuf: dmabuf}
	n.mrs[idx] = m
	n.refreshMRs()
	q.refs++
	c.live++
	track(m, "MR 0x%x on %s", m.key, n.cfg.Name)
	return m, nil
}

// mkeyOf is the memory key of index idx handed out in allocation pass
// pass: index << 8 | variant, the variant advancing with every pass over
// the index space, as a ConnectX advances it for every reuse of an index.
// Index allocation is next-fit (see idSpace), so an index is reused only in
// a later pass and a stale key matches a new MR only after 256 passes over
// 2^24 indexes.
func mkeyOf(idx, pass uint32) uint32 { return idx<<8 | pass&0xff }

func (m *mr) LKey() uint32    { return m.key }
func (m *mr) RKey() uint32    { return m.key }
func (m *mr) Addr() uintptr   { return m.mem.base }
func (m *mr) IOVA() uint64    { return m.iova }
func (m *mr) Len() uint64     { return m.mem.size }
func (m *mr) Native() uintptr { return 0 }

// Dereg removes the key and returns once the NIC can no longer touch the
// memory: accesses in progress finish first, later ones fail (requester:
// LOCAL_PROT_ERR, responder: a remote access error NAK). Host memory the
// NIC page-locked for its GPU copies (inproc.go) is unlocked first, after
// a pin still in progress ended.
func (m *mr) Dereg() error {
	n := m.pd.ctx.nic
	n.mu.Lock()
	if m.dead {
		n.mu.Unlock()
		m.mem.retire() // a concurrent Dereg may still be waiting
		m.mem.dropDMA()
		n.forgetGuesses(m.mem)
		return nil
	}
	m.dead = true
	delete(n.mrs, m.key>>8)
	n.refreshMRs()
	m.pd.refs--
	m.pd.ctx.live--
	n.mu.Unlock()
	m.mem.retire()
	m.mem.dropDMA()        // inproc.go: unpinned before the caller may unmap it
	n.forgetGuesses(m.mem) // watch.go
	untrack(m)
	return nil
}

// lookupMR finds the live MR of key (no lock needed).
func (n *NIC) lookupMR(key uint32) *mr {
	m := (*n.mrMap.Load())[key>>8]
	if m == nil || m.key != key || m.invalid.Load() {
		return nil
	}
	return m
}

// mrCache is the last lookup of an MR by key, for a lookup that is made
// again and again with the same key (the R_Key of a burst of WRITEs): the
// NIC's map it was made in, the key and the entry found (or nil). The map
// is never changed, only replaced (refreshMRs), so while the NIC's map is
// the one of the last lookup and the key the same, the entry the map holds
// for it is still the one found. The MR's own state (its key, invalidated)
// is read on every lookup, as NIC.lookupMR reads it. Its owner guards it.
type mrCache struct {
	m   *map[uint32]*mr
	key uint32
	hit *mr
}

// lookup is n.lookupMR(key), the map lookup saved on a hit.
func (c *mrCache) lookup(n *NIC, key uint32) *mr {
	mp := n.mrMap.Load()
	m := c.hit
	if mp != c.m || key != c.key {
		m = (*mp)[key>>8]
		c.m, c.key, c.hit = mp, key, m
	}
	if m == nil || m.key != key || m.invalid.Load() {
		return nil
	}
	return m
}

// cause names the check an access of [va, va+length) through m (nil: the
// key named no valid region) on PD p with right need failed, as a vendor
// syndrome of the error CQE; 0 when the access passes.
func (m *mr) cause(p *pd, va uint64, length uint64, need mlx5.Access) uint8 {
	switch {
	case m == nil:
		return mlx5.VendorSynEmuKey
	case m.pd != p:
		return mlx5.VendorSynEmuPD
	case m.access&need != need:
		return mlx5.VendorSynEmuRight
	case va < m.iova || length > m.mem.size || va-m.iova > m.mem.size-length:
		return mlx5.VendorSynEmuBounds
	}
	return 0
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
