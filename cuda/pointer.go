package cuda

//go:generate go run ../internal/enumgen

import (
	"fmt"
	"os"

	"github.com/gdaki/gpunetio/internal/cudasys"
)

// PointerAttribute is a CUpointer_attribute id.
type PointerAttribute int32

// Pointer attributes (fact: cuda.h, the CUpointer_attribute enum).
const (
	PointerAttrContext       PointerAttribute = 1  // CU_POINTER_ATTRIBUTE_CONTEXT
	PointerAttrMemoryType    PointerAttribute = 2  // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
	PointerAttrDevicePointer PointerAttribute = 3  // CU_POINTER_ATTRIBUTE_DEVICE_POINTER
	PointerAttrHostPointer   PointerAttribute = 4  // CU_POINTER_ATTRIBUTE_HOST_POINTER
	PointerAttrSyncMemops    PointerAttribute = 6  // CU_POINTER_ATTRIBUTE_SYNC_MEMOPS
	PointerAttrBufferID      PointerAttribute = 7  // CU_POINTER_ATTRIBUTE_BUFFER_ID
	PointerAttrIsManaged     PointerAttribute = 8  // CU_POINTER_ATTRIBUTE_IS_MANAGED
	PointerAttrDeviceOrdinal PointerAttribute = 9  // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
	PointerAttrRangeStart    PointerAttribute = 11 // CU_POINTER_ATTRIBUTE_RANGE_START_ADDR
	PointerAttrRangeSize     PointerAttribute = 12 // CU_POINTER_ATTRIBUTE_RANGE_SIZE
	PointerAttrMapped        PointerAttribute = 13 // CU_POINTER_ATTRIBUTE_MAPPED
	// PointerAttrGPUDirectRDMACapable is CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE.
	PointerAttrGPUDirectRDMACapable PointerAttribute = 15
)

// MemoryType is a CUmemorytype value.
type MemoryType uint32

// CUmemorytype values (fact: cuda.h).
const (
	MemoryTypeHost    MemoryType = 0x1 // CU_MEMORYTYPE_HOST
	MemoryTypeDevice  MemoryType = 0x2 // CU_MEMORYTYPE_DEVICE
	MemoryTypeArray   MemoryType = 0x3 // CU_MEMORYTYPE_ARRAY
	MemoryTypeUnified MemoryType = 0x4 // CU_MEMORYTYPE_UNIFIED
)

// PointerGetAttribute returns one attribute of the allocation containing p
// (cuPointerGetAttribute), widened to 64 bits: booleans are 0 or 1, the
// memory type is a MemoryType, addresses and sizes are the full value.
// PointerAttrContext returns the raw CUcontext handle; the P2P tokens
// attribute (5) does not fit in 64 bits and is not supported.
func (c *Context) PointerGetAttribute(attr PointerAttribute, p DevPtr) (uint64, error) {
	if err := c.usable("PointerGetAttribute"); err != nil {
		return 0, err
	}
	var v uint64
	err := c.call("cuPointerGetAttribute", func(h cudasys.Ctx) (r int32) {
		v, r = cudasys.PointerGetAttribute(h, int32(attr), uint64(p))
		return r
	})
	if err != nil {
		return 0, fmt.Errorf("attribute %d of %#x: %w", attr, uintptr(p), err)
	}
	return v, nil
}

// PointerMemoryType returns where the memory at p lives.
func (c *Context) PointerMemoryType(p DevPtr) (MemoryType, error) {
	if err := c.usable("PointerMemoryType"); err != nil {
		return 0, err
	}
	v, err := c.PointerGetAttribute(PointerAttrMemoryType, p)
	return MemoryType(v), err
}

// PointerRange returns the start and size of the allocation containing p
// (CU_POINTER_ATTRIBUTE_RANGE_START_ADDR and _RANGE_SIZE).
func (c *Context) PointerRange(p DevPtr) (start DevPtr, size uintptr, err error) {
	if err := c.usable("PointerRange"); err != nil {
		return 0, 0, err
	}
	s, err := c.PointerGetAttribute(PointerAttrRangeStart, p)
	if err != nil {
		return 0, 0, err
	}
	n, err := c.PointerGetAttribute(PointerAttrRangeSize, p)
	if err != nil {
		return 0, 0, err
	}
	return DevPtr(s), uintptr(n), nil
}

// MemGetAddressRange returns the base and size of the allocation containing
// p (cuMemGetAddressRange_v2).
func (c *Context) MemGetAddressRange(p DevPtr) (base DevPtr, size uintptr, err error) {
	if err := c.usable("MemGetAddressRange"); err != nil {
		return 0, 0, err
	}
	var b uint64
	err = c.call("cuMemGetAddressRange_v2", func(h cudasys.Ctx) (r int32) {
		b, size, r = cudasys.MemGetAddressRange(h, uint64(p))
		return r
	})
	return DevPtr(b), size, err
}

// IsDevicePointer reports whether addr lies in device memory known to CUDA
// (CU_POINTER_ATTRIBUTE_MEMORY_TYPE is CU_MEMORYTYPE_DEVICE). Host memory,
// mapped or registered host memory and addresses CUDA does not know are not
// device pointers; so is everything when no driver or context is usable.
func (c *Context) IsDevicePointer(addr uintptr) bool {
	t, err := c.PointerMemoryType(DevPtr(addr))
	return err == nil && t == MemoryTypeDevice
}

// PointerSetSyncMemops sets or clears CU_POINTER_ATTRIBUTE_SYNC_MEMOPS on the
// allocation containing p (cuPointerSetAttribute). GPUDirect RDMA needs it
// set on device memory a NIC writes, so that synchronous CUDA memory
// operations on the range are ordered with the NIC's writes.
func (c *Context) PointerSetSyncMemops(p DevPtr, on bool) error {
	if err := c.usable("PointerSetSyncMemops"); err != nil {
		return err
	}
	var v uint32
	if on {
		v = 1
	}
	err := c.call("cuPointerSetAttribute", func(h cudasys.Ctx) int32 {
		return cudasys.PointerSetAttributeU32(h, int32(PointerAttrSyncMemops), uint64(p), v)
	})
	if err != nil {
		return fmt.Errorf("SYNC_MEMOPS on %#x: %w", uintptr(p), err)
	}
	return nil
}

// MemGetHandleForAddressRange exports the device range [p, p+size) as a
// dmabuf file descriptor (cuMemGetHandleForAddressRange with
// CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD). p and size must be multiples of the
// host page size. The caller owns the fd and closes it (closing it after the
// NIC registration is fine). Drivers older than CUDA 11.7 lack the call:
// the error then carries CUDA_ERROR_NOT_SUPPORTED.
func (c *Context) MemGetHandleForAddressRange(p DevPtr, size uintptr) (int, error) {
	if err := c.usable("MemGetHandleForAddressRange"); err != nil {
		return -1, err
	}
	const op = "cuMemGetHandleForAddressRange"
	page := uintptr(os.Getpagesize())
	if uintptr(p)%page != 0 || size%page != 0 || size == 0 {
		return -1, &Error{Op: op, Result: ErrorInvalidValue,
			Detail: fmt.Sprintf("range %#x+%#x is not host-page (%d) aligned", uintptr(p), size, page)}
	}
	if err := load(); err != nil {
		return -1, err
	}
	if !cudasys.HasDmabuf() {
		return -1, &Error{Op: op, Result: ErrorNotSupported, Detail: "the driver lacks the entry point (CUDA < 11.7)"}
	}
	fd := -1
	err := c.call(op, func(h cudasys.Ctx) (r int32) {
		fd, r = cudasys.MemGetDmabufFD(h, uint64(p), size)
		return r
	})
	if err != nil {
		return -1, err
	}
	return fd, nil
}
