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

// Access rights of the examples' buffers, the reference's: relaxed ordering
// everywhere, remote write for the buffers the peer writes.
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
func (b *Buffer) Addr() cuda.DevPtr {
	if b.Mem != nil {
		return b.Mem.Dev
	}
	return cuda.DevPtr(unsafe.Pointer(&b.Host[0]))
}

// LKey is the local key as kernels take it (gpunetio.DeviceKey).
func (b *Buffer) LKey() uint32 { return gpunetio.DeviceKey(b.MR.LKey()) }

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

// GPUBuffer allocates size bytes (rounded up to a page) of GPU memory (of
// type e.Mem: device memory, or pinned host memory mapped into the GPU),
// fills them with fill and registers them (gpunetio.Mem.RegMR: through a dma-buf
// when the GPU exports one and the device accepts it, otherwise by address).
func (e *Env) GPUBuffer(size uint64, fill byte, access verbs.AccessFlags) (*Buffer, error) {
	size = common.AlignUp(size, PageSize)
	m, err := e.GPU.MemAlloc(uintptr(size), uintptr(PageSize), e.Mem)
	if err != nil {
		return nil, fmt.Errorf("allocate %d bytes of %v memory: %w", size, e.Mem, err)
	}
	b := &Buffer{Mem: m, Size: size}
	if err := e.Ctx.MemsetD8(m.Dev, fill, uintptr(size)); err != nil {
		_ = b.close()
		return nil, fmt.Errorf("fill GPU buffer: %w", err)
	}
	if b.MR, err = m.RegMR(e.PD, access, gpunetio.MemRegDefault); err != nil {
		_ = b.close()
		return nil, fmt.Errorf("register GPU buffer of %d bytes: %w", size, err)
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
func (e *Env) Counter() (*cuda.Buffer[uint32], error) {
	c, err := cuda.Alloc[uint32](e.Ctx, 1)
	if err != nil {
		return nil, fmt.Errorf("allocate a GPU counter: %w", err)
	}
	e.counters = append(e.counters, c)
	if err := c.Zero(); err != nil {
		return nil, fmt.Errorf("zero a GPU counter: %w", err)
	}
	return c, nil
}

// ReadCounter reads a Counter.
func ReadCounter(c *cuda.Buffer[uint32]) (uint32, error) {
	var v [1]uint32
	if err := c.Read(0, v[:]); err != nil {
		return 0, fmt.Errorf("read a GPU counter: %w", err)
	}
	return v[0], nil
}
