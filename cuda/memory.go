package cuda

import (
	"fmt"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/cudasys"
)

// HostAllocFlags are cuMemHostAlloc flags.
type HostAllocFlags uint32

// cuMemHostAlloc flags (fact: cuda.h, CU_MEMHOSTALLOC_*).
const (
	HostAllocPortable      HostAllocFlags = 0x1 // CU_MEMHOSTALLOC_PORTABLE: pinned for every context
	HostAllocDeviceMap     HostAllocFlags = 0x2 // CU_MEMHOSTALLOC_DEVICEMAP: mapped into the device address space
	HostAllocWriteCombined HostAllocFlags = 0x4 // CU_MEMHOSTALLOC_WRITECOMBINED
)

// HostRegisterFlags are cuMemHostRegister flags.
type HostRegisterFlags uint32

// cuMemHostRegister flags (fact: cuda.h, CU_MEMHOSTREGISTER_*).
const (
	HostRegisterPortable  HostRegisterFlags = 0x1 // CU_MEMHOSTREGISTER_PORTABLE
	HostRegisterDeviceMap HostRegisterFlags = 0x2 // CU_MEMHOSTREGISTER_DEVICEMAP
	// HostRegisterIOMemory (CU_MEMHOSTREGISTER_IOMEMORY) says the range is
	// I/O memory (a PCIe BAR mapped into the process, such as a NIC doorbell
	// page), which the GPU then reaches by PCIe peer-to-peer.
	HostRegisterIOMemory HostRegisterFlags = 0x4
	HostRegisterReadOnly HostRegisterFlags = 0x8 // CU_MEMHOSTREGISTER_READ_ONLY
)

// MemAlloc allocates device memory (cuMemAlloc_v2). The contents are not
// initialised.
func (c *Context) MemAlloc(size uintptr) (DevPtr, error) {
	if err := c.usable("MemAlloc"); err != nil {
		return 0, err
	}
	var p uint64
	err := c.call("cuMemAlloc_v2", func(h cudasys.Ctx) (r int32) {
		p, r = cudasys.MemAlloc(h, size)
		return r
	})
	if err != nil {
		return 0, fmt.Errorf("%d bytes: %w", size, err)
	}
	c.mu.Lock()
	c.devAllocs[DevPtr(p)] = allocation{size: size, at: here()}
	c.mu.Unlock()
	return DevPtr(p), nil
}

// MemFree frees memory from MemAlloc (cuMemFree_v2). Freeing a pointer that
// is not a live allocation of c (already freed, or never allocated here)
// does nothing and returns nil.
func (c *Context) MemFree(p DevPtr) error {
	if c == nil {
		return nil
	}
	if err := c.usable("MemFree"); err != nil {
		return err
	}
	c.mu.Lock()
	a, ok := c.devAllocs[p]
	delete(c.devAllocs, p)
	c.mu.Unlock()
	if !ok {
		return nil
	}
	err := c.call("cuMemFree_v2", func(h cudasys.Ctx) int32 { return cudasys.MemFree(h, uint64(p)) })
	if err != nil {
		c.mu.Lock()
		c.devAllocs[p] = a
		c.mu.Unlock()
	}
	return err
}

// MemAllocHost allocates page-locked host memory (cuMemHostAlloc). With
// HostAllocDeviceMap the GPU can address it: HostGetDevicePointer returns
// the device address. The memory is not Go heap memory.
func (c *Context) MemAllocHost(size uintptr, flags HostAllocFlags) (unsafe.Pointer, error) {
	if err := c.usable("MemAllocHost"); err != nil {
		return nil, err
	}
	var p unsafe.Pointer
	err := c.call("cuMemHostAlloc", func(h cudasys.Ctx) (r int32) {
		p, r = cudasys.MemHostAlloc(h, size, uint32(flags))
		return r
	})
	if err != nil {
		return nil, fmt.Errorf("%d bytes: %w", size, err)
	}
	c.mu.Lock()
	c.hostAllocs[p] = allocation{size: size, at: here()}
	c.mu.Unlock()
	return p, nil
}

// MemFreeHost frees memory from MemAllocHost (cuMemFreeHost); unknown or
// already freed pointers are ignored.
func (c *Context) MemFreeHost(p unsafe.Pointer) error {
	if c == nil {
		return nil
	}
	if err := c.usable("MemFreeHost"); err != nil {
		return err
	}
	c.mu.Lock()
	a, ok := c.hostAllocs[p]
	delete(c.hostAllocs, p)
	c.mu.Unlock()
	if !ok {
		return nil
	}
	err := c.call("cuMemFreeHost", func(h cudasys.Ctx) int32 { return cudasys.MemFreeHost(h, p) })
	if err != nil {
		c.mu.Lock()
		c.hostAllocs[p] = a
		c.mu.Unlock()
	}
	return err
}

// HostGetDevicePointer returns the device address of mapped host memory
// (cuMemHostGetDevicePointer_v2): memory from MemAllocHost with
// HostAllocDeviceMap, or registered with HostRegisterDeviceMap. p may point
// inside the range.
func (c *Context) HostGetDevicePointer(p unsafe.Pointer) (DevPtr, error) {
	if err := c.usable("HostGetDevicePointer"); err != nil {
		return 0, err
	}
	var d uint64
	err := c.call("cuMemHostGetDevicePointer_v2", func(h cudasys.Ctx) (r int32) {
		d, r = cudasys.HostGetDevicePointer(h, p)
		return r
	})
	return DevPtr(d), err
}

// MemHostRegister page-locks an existing host range and, with
// HostRegisterDeviceMap, maps it for the GPU (cuMemHostRegister_v2). The
// range must not be Go heap memory (use mmap or C memory). With
// HostRegisterIOMemory the range is a PCIe BAR mapping (a NIC doorbell page);
// CUDA rejects IOMEMORY on ordinary RAM. A range already registered fails
// with CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED.
func (c *Context) MemHostRegister(p unsafe.Pointer, size uintptr, flags HostRegisterFlags) error {
	if err := c.usable("MemHostRegister"); err != nil {
		return err
	}
	err := c.call("cuMemHostRegister_v2", func(h cudasys.Ctx) int32 {
		return cudasys.MemHostRegister(h, p, size, uint32(flags))
	})
	if err != nil {
		return fmt.Errorf("%p+%d flags %#x: %w", p, size, uint32(flags), err)
	}
	c.mu.Lock()
	c.registered[p] = allocation{size: size, at: here()}
	c.mu.Unlock()
	return nil
}

// MemHostUnregister undoes MemHostRegister (cuMemHostUnregister); p must be
// the pointer that was registered. Unknown or already unregistered pointers
// are ignored.
func (c *Context) MemHostUnregister(p unsafe.Pointer) error {
	if c == nil {
		return nil
	}
	if err := c.usable("MemHostUnregister"); err != nil {
		return err
	}
	c.mu.Lock()
	a, ok := c.registered[p]
	delete(c.registered, p)
	c.mu.Unlock()
	if !ok {
		return nil
	}
	err := c.call("cuMemHostUnregister", func(h cudasys.Ctx) int32 { return cudasys.MemHostUnregister(h, p) })
	if err != nil {
		c.mu.Lock()
		c.registered[p] = a
		c.mu.Unlock()
	}
	return err
}

// MemcpyHtoD copies src to device memory and returns when the copy is done
// (cuMemcpyHtoD_v2). src may be any Go memory: the bytes travel through the
// Context's pinned staging buffers, in pieces of 256 KiB.
func (c *Context) MemcpyHtoD(dst DevPtr, src []byte) error {
	if err := c.usable("MemcpyHtoD"); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	return c.staged("cuMemcpyHtoD_v2", func(h cudasys.Ctx, buf unsafe.Pointer) int32 {
		for off := 0; off < len(src); off += stageSize {
			n := min(stageSize, len(src)-off)
			copy(stageBytes(buf, n), src[off:off+n])
			if r := cudasys.MemcpyHtoD(h, uint64(dst)+uint64(off), buf, uintptr(n)); r != 0 {
				return r
			}
		}
		return 0
	})
}

// MemcpyDtoH copies device memory into dst and returns when the copy is done
// (cuMemcpyDtoH_v2). dst may be any Go memory: the bytes travel through the
// Context's pinned staging buffers, in pieces of 256 KiB.
func (c *Context) MemcpyDtoH(dst []byte, src DevPtr) error {
	if err := c.usable("MemcpyDtoH"); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	return c.staged("cuMemcpyDtoH_v2", func(h cudasys.Ctx, buf unsafe.Pointer) int32 {
		for off := 0; off < len(dst); off += stageSize {
			n := min(stageSize, len(dst)-off)
			if r := cudasys.MemcpyDtoH(h, buf, uint64(src)+uint64(off), uintptr(n)); r != 0 {
				return r
			}
			copy(dst[off:off+n], stageBytes(buf, n))
		}
		return 0
	})
}

// MemcpyDtoD copies n bytes between device ranges (cuMemcpyDtoD_v2).
func (c *Context) MemcpyDtoD(dst, src DevPtr, n uintptr) error {
	if err := c.usable("MemcpyDtoD"); err != nil {
		return err
	}
	return c.call("cuMemcpyDtoD_v2", func(h cudasys.Ctx) int32 {
		return cudasys.MemcpyDtoD(h, uint64(dst), uint64(src), n)
	})
}

// MemcpyHtoDAsync queues a copy of n bytes from host memory src to dst on s
// (nil: the legacy default stream) (cuMemcpyHtoDAsync_v2). src must stay
// valid until the copy finishes, so it must not be Go memory: use
// MemAllocHost or other pinned C memory.
func (c *Context) MemcpyHtoDAsync(dst DevPtr, src unsafe.Pointer, n uintptr, s *Stream) error {
	if err := c.usable("MemcpyHtoDAsync"); err != nil {
		return err
	}
	if err := s.asArg("Context", "MemcpyHtoDAsync"); err != nil {
		return err
	}
	const op = "cuMemcpyHtoDAsync_v2"
	return s.with(op, func(sh cudasys.Stream) error {
		return c.call(op, func(h cudasys.Ctx) int32 { return cudasys.MemcpyHtoDAsync(h, uint64(dst), src, n, sh) })
	})
}

// MemcpyDtoHAsync queues a copy of n bytes from src to host memory dst on s
// (cuMemcpyDtoHAsync_v2). dst must not be Go memory (see MemcpyHtoDAsync).
func (c *Context) MemcpyDtoHAsync(dst unsafe.Pointer, src DevPtr, n uintptr, s *Stream) error {
	if err := c.usable("MemcpyDtoHAsync"); err != nil {
		return err
	}
	if err := s.asArg("Context", "MemcpyDtoHAsync"); err != nil {
		return err
	}
	const op = "cuMemcpyDtoHAsync_v2"
	return s.with(op, func(sh cudasys.Stream) error {
		return c.call(op, func(h cudasys.Ctx) int32 { return cudasys.MemcpyDtoHAsync(h, dst, uint64(src), n, sh) })
	})
}

// MemcpyDtoDAsync queues a device-to-device copy on s (cuMemcpyDtoDAsync_v2).
func (c *Context) MemcpyDtoDAsync(dst, src DevPtr, n uintptr, s *Stream) error {
	if err := c.usable("MemcpyDtoDAsync"); err != nil {
		return err
	}
	if err := s.asArg("Context", "MemcpyDtoDAsync"); err != nil {
		return err
	}
	const op = "cuMemcpyDtoDAsync_v2"
	return s.with(op, func(sh cudasys.Stream) error {
		return c.call(op, func(h cudasys.Ctx) int32 { return cudasys.MemcpyDtoDAsync(h, uint64(dst), uint64(src), n, sh) })
	})
}

// MemsetD8 sets n bytes at dst to v (cuMemsetD8_v2).
func (c *Context) MemsetD8(dst DevPtr, v uint8, n uintptr) error {
	if err := c.usable("MemsetD8"); err != nil {
		return err
	}
	return c.call("cuMemsetD8_v2", func(h cudasys.Ctx) int32 { return cudasys.MemsetD8(h, uint64(dst), v, n) })
}

// MemsetD32 sets n 32-bit words at dst (4-byte aligned) to v (cuMemsetD32_v2).
func (c *Context) MemsetD32(dst DevPtr, v uint32, n uintptr) error {
	if err := c.usable("MemsetD32"); err != nil {
		return err
	}
	return c.call("cuMemsetD32_v2", func(h cudasys.Ctx) int32 { return cudasys.MemsetD32(h, uint64(dst), v, n) })
}

// MemsetD8Async queues MemsetD8 on s (cuMemsetD8Async).
func (c *Context) MemsetD8Async(dst DevPtr, v uint8, n uintptr, s *Stream) error {
	if err := c.usable("MemsetD8Async"); err != nil {
		return err
	}
	if err := s.asArg("Context", "MemsetD8Async"); err != nil {
		return err
	}
	const op = "cuMemsetD8Async"
	return s.with(op, func(sh cudasys.Stream) error {
		return c.call(op, func(h cudasys.Ctx) int32 { return cudasys.MemsetD8Async(h, uint64(dst), v, n, sh) })
	})
}

// MemsetD32Async queues MemsetD32 on s (cuMemsetD32Async).
func (c *Context) MemsetD32Async(dst DevPtr, v uint32, n uintptr, s *Stream) error {
	if err := c.usable("MemsetD32Async"); err != nil {
		return err
	}
	if err := s.asArg("Context", "MemsetD32Async"); err != nil {
		return err
	}
	const op = "cuMemsetD32Async"
	return s.with(op, func(sh cudasys.Stream) error {
		return c.call(op, func(h cudasys.Ctx) int32 { return cudasys.MemsetD32Async(h, uint64(dst), v, n, sh) })
	})
}
