package cuda

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
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
	var p C.gc_devptr
	err := c.call("cuMemAlloc_v2", func(h C.gc_ctx) C.gc_result { return C.gc_mem_alloc(h, &p, C.size_t(size)) })
	if err != nil {
		return 0, fmt.Errorf("%d bytes: %w", size, err)
	}
	c.mu.Lock()
	c.devAllocs[DevPtr(p)] = size
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
	c.mu.Lock()
	size, ok := c.devAllocs[p]
	delete(c.devAllocs, p)
	c.mu.Unlock()
	if !ok {
		return nil
	}
	err := c.call("cuMemFree_v2", func(h C.gc_ctx) C.gc_result { return C.gc_mem_free(h, C.gc_devptr(p)) })
	if err != nil {
		c.mu.Lock()
		c.devAllocs[p] = size
		c.mu.Unlock()
	}
	return err
}

// MemAllocHost allocates page-locked host memory (cuMemHostAlloc). With
// HostAllocDeviceMap the GPU can address it: HostGetDevicePointer returns
// the device address. The memory is not Go heap memory.
func (c *Context) MemAllocHost(size uintptr, flags HostAllocFlags) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	err := c.call("cuMemHostAlloc", func(h C.gc_ctx) C.gc_result {
		return C.gc_mem_host_alloc(h, &p, C.size_t(size), C.uint(flags))
	})
	if err != nil {
		return nil, fmt.Errorf("%d bytes: %w", size, err)
	}
	c.mu.Lock()
	c.hostAllocs[p] = size
	c.mu.Unlock()
	return p, nil
}

// MemFreeHost frees memory from MemAllocHost (cuMemFreeHost); unknown or
// already freed pointers are ignored.
func (c *Context) MemFreeHost(p unsafe.Pointer) error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	size, ok := c.hostAllocs[p]
	delete(c.hostAllocs, p)
	c.mu.Unlock()
	if !ok {
		return nil
	}
	err := c.call("cuMemFreeHost", func(h C.gc_ctx) C.gc_result { return C.gc_mem_free_host(h, p) })
	if err != nil {
		c.mu.Lock()
		c.hostAllocs[p] = size
		c.mu.Unlock()
	}
	return err
}

// HostGetDevicePointer returns the device address of mapped host memory
// (cuMemHostGetDevicePointer_v2): memory from MemAllocHost with
// HostAllocDeviceMap, or registered with HostRegisterDeviceMap. p may point
// inside the range.
func (c *Context) HostGetDevicePointer(p unsafe.Pointer) (DevPtr, error) {
	var d C.gc_devptr
	err := c.call("cuMemHostGetDevicePointer_v2", func(h C.gc_ctx) C.gc_result {
		return C.gc_mem_host_get_device_pointer(h, &d, p)
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
	err := c.call("cuMemHostRegister_v2", func(h C.gc_ctx) C.gc_result {
		return C.gc_mem_host_register(h, p, C.size_t(size), C.uint(flags))
	})
	if err != nil {
		return fmt.Errorf("%p+%d flags %#x: %w", p, size, uint32(flags), err)
	}
	c.mu.Lock()
	c.registered[p] = size
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
	c.mu.Lock()
	size, ok := c.registered[p]
	delete(c.registered, p)
	c.mu.Unlock()
	if !ok {
		return nil
	}
	err := c.call("cuMemHostUnregister", func(h C.gc_ctx) C.gc_result { return C.gc_mem_host_unregister(h, p) })
	if err != nil {
		c.mu.Lock()
		c.registered[p] = size
		c.mu.Unlock()
	}
	return err
}

// MemcpyHtoD copies src to device memory and returns when the copy is done
// (cuMemcpyHtoD_v2). src may be Go memory.
func (c *Context) MemcpyHtoD(dst DevPtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return c.call("cuMemcpyHtoD_v2", func(h C.gc_ctx) C.gc_result {
		return C.gc_memcpy_htod(h, C.gc_devptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src)))
	})
}

// MemcpyDtoH copies device memory into dst and returns when the copy is done
// (cuMemcpyDtoH_v2). dst may be Go memory.
func (c *Context) MemcpyDtoH(dst []byte, src DevPtr) error {
	if len(dst) == 0 {
		return nil
	}
	return c.call("cuMemcpyDtoH_v2", func(h C.gc_ctx) C.gc_result {
		return C.gc_memcpy_dtoh(h, unsafe.Pointer(&dst[0]), C.gc_devptr(src), C.size_t(len(dst)))
	})
}

// MemcpyDtoD copies n bytes between device ranges (cuMemcpyDtoD_v2).
func (c *Context) MemcpyDtoD(dst, src DevPtr, n uintptr) error {
	return c.call("cuMemcpyDtoD_v2", func(h C.gc_ctx) C.gc_result {
		return C.gc_memcpy_dtod(h, C.gc_devptr(dst), C.gc_devptr(src), C.size_t(n))
	})
}

// MemcpyHtoDAsync queues a copy of n bytes from host memory src to dst on s
// (nil: the legacy default stream) (cuMemcpyHtoDAsync_v2). src must stay
// valid until the copy finishes, so it must not be Go memory: use
// MemAllocHost or other pinned C memory.
func (c *Context) MemcpyHtoDAsync(dst DevPtr, src unsafe.Pointer, n uintptr, s *Stream) error {
	return s.with("cuMemcpyHtoDAsync_v2", func(sh C.gc_stream) error {
		return c.call("cuMemcpyHtoDAsync_v2", func(h C.gc_ctx) C.gc_result {
			return C.gc_memcpy_htod_async(h, C.gc_devptr(dst), src, C.size_t(n), sh)
		})
	})
}

// MemcpyDtoHAsync queues a copy of n bytes from src to host memory dst on s
// (cuMemcpyDtoHAsync_v2). dst must not be Go memory (see MemcpyHtoDAsync).
func (c *Context) MemcpyDtoHAsync(dst unsafe.Pointer, src DevPtr, n uintptr, s *Stream) error {
	return s.with("cuMemcpyDtoHAsync_v2", func(sh C.gc_stream) error {
		return c.call("cuMemcpyDtoHAsync_v2", func(h C.gc_ctx) C.gc_result {
			return C.gc_memcpy_dtoh_async(h, dst, C.gc_devptr(src), C.size_t(n), sh)
		})
	})
}

// MemcpyDtoDAsync queues a device-to-device copy on s (cuMemcpyDtoDAsync_v2).
func (c *Context) MemcpyDtoDAsync(dst, src DevPtr, n uintptr, s *Stream) error {
	return s.with("cuMemcpyDtoDAsync_v2", func(sh C.gc_stream) error {
		return c.call("cuMemcpyDtoDAsync_v2", func(h C.gc_ctx) C.gc_result {
			return C.gc_memcpy_dtod_async(h, C.gc_devptr(dst), C.gc_devptr(src), C.size_t(n), sh)
		})
	})
}

// MemsetD8 sets n bytes at dst to v (cuMemsetD8_v2).
func (c *Context) MemsetD8(dst DevPtr, v uint8, n uintptr) error {
	return c.call("cuMemsetD8_v2", func(h C.gc_ctx) C.gc_result {
		return C.gc_memset_d8(h, C.gc_devptr(dst), C.uchar(v), C.size_t(n))
	})
}

// MemsetD32 sets n 32-bit words at dst (4-byte aligned) to v (cuMemsetD32_v2).
func (c *Context) MemsetD32(dst DevPtr, v uint32, n uintptr) error {
	return c.call("cuMemsetD32_v2", func(h C.gc_ctx) C.gc_result {
		return C.gc_memset_d32(h, C.gc_devptr(dst), C.uint(v), C.size_t(n))
	})
}

// MemsetD8Async queues MemsetD8 on s (cuMemsetD8Async).
func (c *Context) MemsetD8Async(dst DevPtr, v uint8, n uintptr, s *Stream) error {
	return s.with("cuMemsetD8Async", func(sh C.gc_stream) error {
		return c.call("cuMemsetD8Async", func(h C.gc_ctx) C.gc_result {
			return C.gc_memset_d8_async(h, C.gc_devptr(dst), C.uchar(v), C.size_t(n), sh)
		})
	})
}

// MemsetD32Async queues MemsetD32 on s (cuMemsetD32Async).
func (c *Context) MemsetD32Async(dst DevPtr, v uint32, n uintptr, s *Stream) error {
	return s.with("cuMemsetD32Async", func(sh C.gc_stream) error {
		return c.call("cuMemsetD32Async", func(h C.gc_ctx) C.gc_result {
			return C.gc_memset_d32_async(h, C.gc_devptr(dst), C.uint(v), C.size_t(n), sh)
		})
	})
}
