package verbs

import (
	"fmt"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// MR is a registered memory region (ibv_mr).
type MR struct {
	node
	pd *PD
	mr mlx5.MR
}

const accessNeedsLocalWrite = AccessRemoteWrite | AccessRemoteAtomic

// accessKnown is every access right this package defines.
const accessKnown = AccessLocalWrite | AccessRemoteWrite | AccessRemoteRead | AccessRemoteAtomic | AccessRelaxedOrder

func checkAccess(op string, a AccessFlags) error {
	if a&^accessKnown != 0 {
		return newErr(op, ErrInvalidValue, "access %v: unknown access bits 0x%x", a, uint32(a&^accessKnown))
	}
	if a&accessNeedsLocalWrite != 0 && a&AccessLocalWrite == 0 {
		return newErr(op, ErrInvalidValue, "access %v: REMOTE_WRITE and REMOTE_ATOMIC require LOCAL_WRITE", a)
	}
	return nil
}

// maxUserAddr bounds the addresses of memory a process can register: no
// 64-bit Linux architecture maps user memory (host or, through unified
// addressing, GPU memory) at or above 2^57.
const maxUserAddr = uint64(1) << 57

// checkRange refuses a range that is empty, wraps around or ends beyond any
// process's address space, before a driver sees it.
func checkRange(op, what string, addr uint64, length uint64) error {
	if length == 0 {
		return newErr(op, ErrInvalidValue, "length is 0")
	}
	if end := addr + length; end < addr || end > maxUserAddr {
		return newErr(op, ErrInvalidValue, "%s 0x%x+%d (0x%x bytes) is not a range of this process's address space", what, addr, length, length)
	}
	return nil
}

// checkSize refuses a registration larger than the device registers
// (max_mr_size).
func checkSize(op string, c *Context, length uint64) error {
	a, err := c.caps()
	if err != nil {
		return wrapErr(op, codeOf(err), err, "device query")
	}
	if a.MaxMRSize != 0 && length > a.MaxMRSize {
		return newErr(op, ErrInvalidValue, "length %d (0x%x) exceeds the device's max_mr_size 0x%x", length, length, a.MaxMRSize)
	}
	return nil
}

// RegMR registers [addr, addr+length) of host memory (or GPU memory through
// nvidia-peermem on real hardware) with the address itself as the iova
// (ibv_reg_mr).
func (p *PD) RegMR(addr uintptr, length uint64, access AccessFlags) (*MR, error) {
	return p.regMR("ibv_reg_mr", addr, length, uint64(addr), access, nil)
}

// RegMRIOVA registers [addr, addr+length) with iova as the address WQEs use
// (ibv_reg_mr_iova2).
func (p *PD) RegMRIOVA(addr uintptr, length, iova uint64, access AccessFlags) (*MR, error) {
	return p.regMR("ibv_reg_mr_iova2", addr, length, iova, access, nil)
}

// Dmabuf names a range of a dma-buf: a file descriptor and the offset of the
// first byte inside it, and, for Dev.NewUMem, the GPU the memory belongs to.
type Dmabuf struct {
	FD     int
	Offset uint64
	// GPU is the GPU whose memory the dma-buf exports
	// (doca_verbs_umem_create's gpu argument, DOCA GPUNetIO 3.0). Open mode
	// ignores it; SDK-mode UMEMs need it. Package gpunetio's GPU.VerbsRef
	// returns it.
	GPU *GPURef
}

// RegDmabufMR registers length bytes at offset of a dma-buf
// (ibv_reg_dmabuf_mr). iova is the address WQEs use (the GPU virtual address
// of the buffer, as gpunetio passes it) and addr the address of the range in
// this process, through which an emulated device reaches it. The caller keeps
// ownership of the fd.
func (p *PD) RegDmabufMR(buf Dmabuf, length, iova uint64, addr uintptr, access AccessFlags) (*MR, error) {
	return p.regMR("ibv_reg_dmabuf_mr", addr, length, iova, access, &buf)
}

// regMR validates every argument before the driver sees it: lengths
// beyond the device's max_mr_size or ranges that wrap or leave the address
// space fail with ErrInvalidValue, and nothing is left referenced when a
// registration fails.
func (p *PD) regMR(op string, addr uintptr, length, iova uint64, access AccessFlags, buf *Dmabuf) (_ *MR, err error) {
	if err := p.check(op); err != nil {
		return nil, err
	}
	if length == 0 {
		return nil, newErr(op, ErrInvalidValue, "length is 0")
	}
	if addr == 0 && buf == nil {
		return nil, newErr(op, ErrInvalidValue, "address is 0")
	}
	if buf != nil && buf.FD < 0 {
		return nil, newErr(op, ErrInvalidValue, "dma-buf fd %d", buf.FD)
	}
	if err := checkAccess(op, access); err != nil {
		return nil, err
	}
	if addr != 0 {
		if err := checkRange(op, "address range", uint64(addr), length); err != nil {
			return nil, err
		}
	}
	if end := iova + length; end < iova {
		return nil, newErr(op, ErrInvalidValue, "iova 0x%x+%d wraps around", iova, length)
	}
	if buf != nil {
		if end := buf.Offset + length; end < buf.Offset {
			return nil, newErr(op, ErrInvalidValue, "dma-buf offset 0x%x+%d wraps around", buf.Offset, length)
		}
	}
	m := &MR{pd: p}
	if err := p.acquire(op, "PD", &m.node); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			p.release(&m.node)
		}
	}()
	if err := checkSize(op, p.ctx, length); err != nil {
		return nil, err
	}
	var mr mlx5.MR
	if buf != nil {
		mr, err = p.ctx.dev.RegDmabufMR(p.pd, buf.FD, buf.Offset, length, iova, addr, mlx5.Access(access))
	} else {
		mr, err = p.ctx.dev.RegMR(p.pd, addr, length, iova, mlx5.Access(access))
	}
	if err != nil {
		return nil, driverErr(op, err, "0x%x+%d access %v", addr, length, access)
	}
	m.mr = mr
	m.init("MR", fmt.Sprintf("MR lkey 0x%x on %s", mr.LKey(), p.ctx.name))
	ok = true
	return m, nil
}

// Hold takes a reference that keeps the region registered (Close fails
// with ErrInUse naming holder) until Hold.Release; ErrBadState if it is
// closed.
func (m *MR) Hold(holder string) (*Hold, error) {
	const op = "MR.Hold"
	if m == nil {
		return nil, newErr(op, ErrInvalidValue, "nil MR")
	}
	return m.hold(op, "MR", holder)
}

// The getters of a nil or zero MR return zero values.

// LKey is the local key for data segments (host order).
func (m *MR) LKey() uint32 {
	if m == nil || m.mr == nil {
		return 0
	}
	return m.mr.LKey()
}

// RKey is the remote key a peer puts in its WQEs (host order).
func (m *MR) RKey() uint32 {
	if m == nil || m.mr == nil {
		return 0
	}
	return m.mr.RKey()
}

// Addr is the registered address in this process.
func (m *MR) Addr() uintptr {
	if m == nil || m.mr == nil {
		return 0
	}
	return m.mr.Addr()
}

// IOVA is the address WQEs use for this region.
func (m *MR) IOVA() uint64 {
	if m == nil || m.mr == nil {
		return 0
	}
	return m.mr.IOVA()
}

// Len is the registered length in bytes.
func (m *MR) Len() uint64 {
	if m == nil || m.mr == nil {
		return 0
	}
	return m.mr.Len()
}

// PD returns the protection domain of the region.
func (m *MR) PD() *PD {
	if m == nil {
		return nil
	}
	return m.pd
}

// Raw returns the struct ibv_mr pointer; 0 on an emulated device.
func (m *MR) Raw() uintptr {
	if m == nil || m.mr == nil {
		return 0
	}
	return m.mr.Native()
}

// Close deregisters the region (ibv_dereg_mr).
func (m *MR) Close() error {
	const op = "ibv_dereg_mr"
	if m == nil {
		return newErr(op, ErrInvalidValue, "nil MR")
	}
	done, err := m.beginClose(op, "MR")
	if done || err != nil {
		return err
	}
	err = m.mr.Dereg()
	if err != nil {
		err = driverErr(op, err, "lkey 0x%x", m.mr.LKey())
	} else {
		m.pd.release(&m.node)
	}
	m.endClose(err)
	return err
}
