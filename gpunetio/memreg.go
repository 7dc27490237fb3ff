package gpunetio

import (
	"encoding/binary"
	"errors"
	"syscall"

	"github.com/gdaki/gpunetio/verbs"
)

// RegMR registers the allocation with pd as a memory region, so that a NIC
// reads it (the source of a put) or a peer writes it (the target of one).
// The region's address (MR.IOVA, and so MR.Region for the peer) is Dev, the
// address kernels use, so a kernel names local and remote memory by the
// device addresses it already has. The length is Size.
//
// Device memory (MemGPU, MemGPUCPU) is registered the way the DOCA GPUNetIO
// examples register their buffers, as how says:
//
//   - MemRegDefault: through a dma-buf of the range (GPU.GetDmabufFD and
//     ibv_reg_dmabuf_mr), and by address when the GPU or driver exports no
//     dma-buf or the device refuses it (ibv_reg_mr, which needs
//     nvidia-peermem on real hardware);
//   - MemRegCUDADmabuf: through a dma-buf only;
//   - MemRegCUDAPeermem: by address only.
//
// The dma-buf path needs Dev to be host-page aligned (MemAlloc's default
// alignment); the file descriptor is closed once the region holds it.
// MemCPUGPU memory is ordinary host memory: it is registered by its host
// address (with Dev as the IOVA) under MemRegDefault and MemRegCUDAPeermem,
// and MemRegCUDADmabuf is refused with ErrInvalidValue.
//
// The caller closes the MR (MR.Close) before freeing m: the NIC keeps using
// the memory as long as the region exists, so Free refuses (ErrInUse,
// naming the region) while a region made here is open. Errors carry the
// operation "Mem.RegMR" and wrap the verbs or CUDA cause.
func (m *Mem) RegMR(pd *verbs.PD, access verbs.AccessFlags, how MemRegType) (*verbs.MR, error) {
	mr, err := m.regMR(pd, access, how)
	if err == nil {
		m.mu.Lock()
		m.mrs = append(m.mrs, mr)
		m.mu.Unlock()
	}
	return mr, err
}

// openMRs returns the regions made by RegMR that are still open, dropping
// the closed ones; m.mu held.
func (m *Mem) openMRs() []*verbs.MR {
	open := m.mrs[:0]
	for _, mr := range m.mrs {
		// A hold succeeds only on an open region.
		if h, err := mr.Hold("gpunetio: Mem.Free check"); err == nil {
			h.Release()
			open = append(open, mr)
		}
	}
	clear(m.mrs[len(open):])
	m.mrs = open
	return open
}

func (m *Mem) regMR(pd *verbs.PD, access verbs.AccessFlags, how MemRegType) (*verbs.MR, error) {
	const op = "Mem.RegMR"
	if m == nil || m.g == nil {
		return nil, newErr(op, ErrInvalidValue, "nil or zero Mem (use GPU.MemAlloc)")
	}
	if pd == nil {
		return nil, newErr(op, ErrInvalidValue, "nil PD")
	}
	switch how {
	case MemRegDefault, MemRegCUDADmabuf, MemRegCUDAPeermem:
	default:
		return nil, newErr(op, ErrInvalidValue, "unknown memory registration type %v", how)
	}
	m.mu.Lock()
	freed := m.freed
	m.mu.Unlock()
	if freed {
		return nil, newErr(op, ErrBadState, "%v memory at %#x is freed", m.Type, m.Dev)
	}
	size := uint64(m.Size)

	if m.Type == MemCPUGPU {
		if how == MemRegCUDADmabuf {
			return nil, newErr(op, ErrInvalidValue, "%v memory at %#x is host memory: it has no dma-buf", m.Type, m.Dev)
		}
		mr, err := pd.RegMRIOVA(m.Host, size, uint64(m.Dev), access)
		if err != nil {
			return nil, wrapErr(op, regCode(err), err, "register %d bytes of %v memory at host %#x", size, m.Type, m.Host)
		}
		return mr, nil
	}

	byAddress := func(why error) (*verbs.MR, error) {
		mr, err := pd.RegMR(uintptr(m.Dev), size, access)
		if err != nil {
			if why != nil {
				return nil, wrapErr(op, regCode(err), err, "register %d bytes of %v memory at %#x by address (dma-buf: %v)", size, m.Type, m.Dev, why)
			}
			return nil, wrapErr(op, regCode(err), err, "register %d bytes of %v memory at %#x by address", size, m.Type, m.Dev)
		}
		return mr, nil
	}
	if how == MemRegCUDAPeermem {
		return byAddress(nil)
	}
	var dmaErr error
	if uintptr(m.Dev)%hostPage != 0 {
		dmaErr = newErr(op, ErrInvalidValue, "%#x is not aligned to the %d-byte host page a dma-buf needs", m.Dev, hostPage)
	} else {
		fd, err := m.g.GetDmabufFD(m.Dev, alignUp(m.Size, hostPage))
		if err != nil {
			dmaErr = err
		} else {
			mr, err := pd.RegDmabufMR(verbs.Dmabuf{FD: fd}, size, uint64(m.Dev), uintptr(m.Dev), access)
			syscall.Close(fd) // the registration holds its own reference
			if err == nil {
				return mr, nil
			}
			dmaErr = err
		}
	}
	if how == MemRegCUDADmabuf {
		return nil, wrapErr(op, regCode(dmaErr), dmaErr, "register %d bytes of %v memory at %#x through a dma-buf", size, m.Type, m.Dev)
	}
	logf(LogInfo, "%s: %v memory at %#x: no dma-buf registration (%v): registering by address", op, m.Type, m.Dev, dmaErr)
	return byAddress(dmaErr)
}

// regCode returns the DOCA code of the first *Error in err's chain, or
// ErrDriver.
func regCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ErrDriver
}

// DeviceKey returns an lkey or rkey (as MR.LKey, MR.RKey and Region.RKey
// give it, host order) in the byte order of the key field of struct
// doca_gpu_dev_verbs_addr, which the device API copies into WQEs unchanged:
// big-endian, what htobe32 returns in the DOCA examples. Pass keys to
// kernels through it.
func DeviceKey(key uint32) uint32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], key)
	return binary.NativeEndian.Uint32(b[:])
}
