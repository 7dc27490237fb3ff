package emu

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// uar is one emulated UAR page: 4 KiB of anonymous host memory (mmap), which
// the engine polls for doorbells. A GPU can map it like any host page.
type uar struct {
	ctx    *devCtx
	id     uint32
	typ    mlx5.UARType
	page   []byte
	shared bool // the context's NC singleton: Free is a no-op
	dead   bool
	refs   int // CQs and QPs naming it
}

func (c *devCtx) AllocUAR(t mlx5.UARType) (mlx5.UAR, error) {
	switch t {
	case mlx5.UARTypeBF, mlx5.UARTypeNC, mlx5.UARTypeNCDedicated:
	default:
		return nil, fmt.Errorf("emu: devx_alloc_uar type %v: %w", t, syscall.EOPNOTSUPP)
	}
	n := c.nic
	n.mu.Lock()
	if err := c.checkOpen("devx_alloc_uar"); err != nil {
		n.mu.Unlock()
		return nil, err
	}
	if t == mlx5.UARTypeNC && c.ncUAR != nil {
		u := c.ncUAR
		n.mu.Unlock()
		return u, nil
	}
	n.mu.Unlock()
	page, err := syscall.Mmap(-1, 0, mlx5.UARPageSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("emu: devx_alloc_uar: mmap: %w", err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := c.checkOpen("devx_alloc_uar"); err != nil {
		syscall.Munmap(page)
		return nil, err
	}
	if t == mlx5.UARTypeNC && c.ncUAR != nil { // lost a race
		syscall.Munmap(page)
		return c.ncUAR, nil
	}
	id, _, ok := n.ids.uar.alloc(func(i uint32) bool { return n.uars[i] != nil })
	if !ok {
		syscall.Munmap(page)
		return nil, fmt.Errorf("emu: devx_alloc_uar on %s: all %d 24-bit UAR indexes in use: %w", n.cfg.Name, mask24, syscall.ENOMEM)
	}
	u := &uar{ctx: c, id: id, typ: t, page: page}
	n.uars[u.id] = u
	n.refreshUARs()
	if t == mlx5.UARTypeNC {
		u.shared = true
		c.ncUAR = u
	} else {
		c.live++
		track(u, "UAR %d (%v) on %s", u.id, t, n.cfg.Name)
	}
	return u, nil
}

func (u *uar) PageID() uint32     { return u.id }
func (u *uar) BaseAddr() uintptr  { return uintptr(unsafe.Pointer(&u.page[0])) }
func (u *uar) RegAddr() uintptr   { return u.BaseAddr() + mlx5.UAROffsetBF }
func (u *uar) MmapOffset() int64  { return int64(u.id) << 12 }
func (u *uar) Type() mlx5.UARType { return u.typ }
func (u *uar) IOMemory() bool     { return false }

func (u *uar) Free() error {
	if u.shared {
		return nil
	}
	n := u.ctx.nic
	n.mu.Lock()
	if u.dead {
		n.mu.Unlock()
		return nil
	}
	if u.refs > 0 {
		n.mu.Unlock()
		return fmt.Errorf("emu: devx_free_uar %d: %d CQs/QPs still use it: %w", u.id, u.refs, syscall.EBUSY)
	}
	u.dead = true
	delete(n.uars, u.id)
	n.refreshUARs()
	u.ctx.live--
	n.mu.Unlock()
	u.unmap()
	untrack(u)
	return nil
}

// unmap releases the page once the engine can no longer be reading it: the
// page is already out of the snapshot, and a scan in progress holds
// uarPollMu.
func (u *uar) unmap() {
	n := u.ctx.nic
	n.uarPollMu.Lock()
	//lint:ignore SA2001 taking the lock waits for a scan in progress to finish; nothing else is needed under it
	n.uarPollMu.Unlock()
	syscall.Munmap(u.page)
}

// word returns the 64-bit doorbell slot at off.
func (u *uar) word(off int) *uint64 { return (*uint64)(unsafe.Pointer(&u.page[off])) }

// take reads the doorbell at off and clears it, so each store is seen once
// (0 is never a doorbell: QPN 0 and CQN 0 are never allocated).
func (u *uar) take(off int) uint64 {
	p := u.word(off)
	for {
		v := atomic.LoadUint64(p)
		if v == 0 || atomic.CompareAndSwapUint64(p, v, 0) {
			return v
		}
	}
}
