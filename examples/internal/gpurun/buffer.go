package gpurun

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

// Access rights of the examples' buffers (host-api.md 9.1).
const (
	// RemoteWritable is for buffers the peer writes.
	RemoteWritable = verbs.AccessLocalWrite | verbs.AccessRemoteWrite | verbs.AccessRelaxedOrder
	// LocalOnly is for source buffers.
	LocalOnly = verbs.AccessLocalWrite | verbs.AccessRelaxedOrder
)

// Buffer is a registered data buffer: GPU memory (Mem) or mmap'd host
// memory (Host).
type Buffer struct {
	Mem  *gpunetio.Mem // GPU memory, or nil
	Host []byte        // host memory, or nil
	MR   *verbs.MR
	Size uint64
}

// Addr is the address kernels and WQEs use.
func (b *Buffer) Addr() uint64 {
	if b.Mem != nil {
		return uint64(b.Mem.Dev)
	}
	return uint64(uintptr(unsafe.Pointer(&b.Host[0])))
}

// Remote is the buffer as the peer sees it.
func (b *Buffer) Remote() common.RemoteBuf {
	return common.RemoteBuf{Addr: b.MR.IOVA(), RKey: b.MR.RKey()}
}

func (b *Buffer) close() error {
	var errs []error
	if b.MR != nil {
		errs = append(errs, b.MR.Close())
	}
	if b.Mem != nil {
		errs = append(errs, b.Mem.Free())
	}
	if b.Host != nil {
		if err := syscall.Munmap(b.Host); err != nil {
			errs = append(errs, fmt.Errorf("munmap buffer: %w", err))
		}
	}
	return errors.Join(errs...)
}

// PageSize is the host page size; buffer sizes are rounded up to it.
var PageSize = uint64(os.Getpagesize())

// GPUBuffer allocates size bytes (rounded up to a page) of GPU memory, fills
// them with fill and registers them: through a dma-buf when the GPU exports
// one and the device accepts it, otherwise by address (nvidia-peermem, or
// the emulated NIC's GPU-memory adapter).
func (e *Env) GPUBuffer(size uint64, fill byte, access verbs.AccessFlags) (*Buffer, error) {
	size = common.AlignUp(size, PageSize)
	m, err := e.GPU.MemAlloc(uintptr(size), uintptr(PageSize), gpunetio.MemGPU)
	if err != nil {
		return nil, fmt.Errorf("allocate %d bytes of GPU memory: %w", size, err)
	}
	b := &Buffer{Mem: m, Size: size}
	if err := e.Ctx.MemsetD8(cuda.DevPtr(m.Dev), fill, uintptr(size)); err != nil {
		_ = b.close()
		return nil, fmt.Errorf("fill GPU buffer: %w", err)
	}
	var dmaErr error
	if fd, err := e.GPU.DmabufFD(m.Dev, uintptr(size)); err == nil {
		b.MR, dmaErr = e.PD.RegDmabufMR(verbs.Dmabuf{FD: fd}, size, uint64(m.Dev), uintptr(m.Dev), access)
		_ = syscall.Close(fd) // the registration holds its own reference
	} else {
		dmaErr = err
	}
	if b.MR == nil {
		if b.MR, err = e.PD.RegMR(uintptr(m.Dev), size, access); err != nil {
			_ = b.close()
			return nil, fmt.Errorf("register GPU buffer of %d bytes (dma-buf: %v; by address): %w", size, dmaErr, err)
		}
	}
	e.bufs = append(e.bufs, b)
	return b, nil
}

// HostBuffer maps size bytes (rounded up to a page) of zeroed host memory and
// registers them.
func (e *Env) HostBuffer(size uint64, access verbs.AccessFlags) (*Buffer, error) {
	size = common.AlignUp(size, PageSize)
	mem, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("map %d bytes of host memory: %w", size, err)
	}
	b := &Buffer{Host: mem, Size: size}
	if b.MR, err = e.PD.RegMR(uintptr(unsafe.Pointer(&mem[0])), size, access); err != nil {
		_ = b.close()
		return nil, fmt.Errorf("register host buffer of %d bytes: %w", size, err)
	}
	e.bufs = append(e.bufs, b)
	return b, nil
}

// Counter is a zeroed 32-bit word of GPU memory kernels count into.
func (e *Env) Counter() (cuda.DevPtr, error) {
	m, err := e.GPU.MemAlloc(4, 0, gpunetio.MemGPU)
	if err != nil {
		return 0, fmt.Errorf("allocate a GPU counter: %w", err)
	}
	e.bufs = append(e.bufs, &Buffer{Mem: m, Size: 4})
	if err := e.Ctx.MemsetD32(cuda.DevPtr(m.Dev), 0, 1); err != nil {
		return 0, fmt.Errorf("zero a GPU counter: %w", err)
	}
	return cuda.DevPtr(m.Dev), nil
}

// ReadCounter reads a Counter.
func (e *Env) ReadCounter(p cuda.DevPtr) (uint32, error) {
	var b [4]byte
	if err := e.Ctx.MemcpyDtoH(b[:], p); err != nil {
		return 0, fmt.Errorf("read a GPU counter: %w", err)
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24, nil
}
