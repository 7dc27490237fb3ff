package verbs

import (
	"github.com/gdaki/gpunetio/internal/mlx5"
)

// MR is a registered memory region (ibv_mr).
type MR struct {
	node
	pd *PD
	mr mlx5.MR
}

const accessNeedsLocalWrite = AccessRemoteWrite | AccessRemoteAtomic

func checkAccess(op string, a AccessFlags) error {
	if a&accessNeedsLocalWrite != 0 && a&AccessLocalWrite == 0 {
		return newErr(op, ErrInvalidValue, "access %v: REMOTE_WRITE and REMOTE_ATOMIC require LOCAL_WRITE", a)
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
// first byte inside it.
type Dmabuf struct {
	FD     int
	Offset uint64
}

// RegDmabufMR registers length bytes at offset of a dma-buf
// (ibv_reg_dmabuf_mr). iova is the address WQEs use (the GPU virtual address
// of the buffer, as gpunetio passes it) and addr the address of the range in
// this process, through which an emulated device reaches it. The caller keeps
// ownership of the fd.
func (p *PD) RegDmabufMR(buf Dmabuf, length, iova uint64, addr uintptr, access AccessFlags) (*MR, error) {
	return p.regMR("ibv_reg_dmabuf_mr", addr, length, iova, access, &buf)
}

func (p *PD) regMR(op string, addr uintptr, length, iova uint64, access AccessFlags, buf *Dmabuf) (*MR, error) {
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
	if err := p.acquire(op); err != nil {
		return nil, err
	}
	var mr mlx5.MR
	var err error
	if buf != nil {
		mr, err = p.ctx.dev.RegDmabufMR(p.pd, buf.FD, buf.Offset, length, iova, addr, mlx5.Access(access))
	} else {
		mr, err = p.ctx.dev.RegMR(p.pd, addr, length, iova, mlx5.Access(access))
	}
	if err != nil {
		p.release()
		return nil, driverErr(op, err, "0x%x+%d access %v", addr, length, access)
	}
	m := &MR{pd: p, mr: mr}
	m.init("MR")
	return m, nil
}

// LKey is the local key for data segments (host order).
func (m *MR) LKey() uint32 { return m.mr.LKey() }

// RKey is the remote key a peer puts in its WQEs (host order).
func (m *MR) RKey() uint32 { return m.mr.RKey() }

// Addr is the registered address in this process.
func (m *MR) Addr() uintptr { return m.mr.Addr() }

// IOVA is the address WQEs use for this region.
func (m *MR) IOVA() uint64 { return m.mr.IOVA() }

// Len is the registered length in bytes.
func (m *MR) Len() uint64 { return m.mr.Len() }

// PD returns the protection domain of the region.
func (m *MR) PD() *PD { return m.pd }

// Raw returns the struct ibv_mr pointer; 0 on an emulated device.
func (m *MR) Raw() uintptr { return m.mr.Native() }

// Close deregisters the region (ibv_dereg_mr).
func (m *MR) Close() error {
	const op = "ibv_dereg_mr"
	done, err := m.beginClose(op)
	if done || err != nil {
		return err
	}
	err = m.mr.Dereg()
	if err != nil {
		err = driverErr(op, err, "lkey 0x%x", m.mr.LKey())
	} else {
		m.pd.release()
	}
	m.endClose(err)
	return err
}
