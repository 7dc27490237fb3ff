package cudasys

/*
#include <stdlib.h>
#include <string.h>
#include "shim.h"
*/
import "C"

import (
	"unsafe"
)

// Stage markers added to a result when the failure came from making the
// context current (push) or restoring the previous one (pop); they mirror
// GC_STAGE_* in shim.h. CUDA result codes are all below 1000.
const (
	StagePush = C.GC_STAGE_PUSH
	StagePop  = C.GC_STAGE_POP
	StageMask = C.GC_STAGE_MASK
	// NotLoaded is the result of a wrapper whose driver entry point is not
	// resolved (GC_NOT_LOADED): the library was never loaded, or lacks an
	// optional entry point. No wrapper calls through an unresolved one.
	NotLoaded = C.GC_NOT_LOADED
)

// Result codes the binding itself produces.
const (
	resultInvalidValue = 1   // CUDA_ERROR_INVALID_VALUE
	resultOutOfMemory  = 2   // CUDA_ERROR_OUT_OF_MEMORY
	resultNotSupported = 801 // CUDA_ERROR_NOT_SUPPORTED
)

// Load outcomes of LoadDriver.
const (
	LoadOK            = 0
	LoadNoLibrary     = 1 // dlopen failed; the message is dlerror()
	LoadMissingSymbol = 2 // a required entry point is missing; the message is its name
)

// Device is a CUdevice.
type Device int32

// Ctx is a CUcontext handle; the zero value is no context.
type Ctx struct{ p unsafe.Pointer }

// Module is a CUmodule handle.
type Module struct{ p unsafe.Pointer }

// Function is a CUfunction handle.
type Function struct{ p unsafe.Pointer }

// Stream is a CUstream handle; the zero value is the legacy default stream.
type Stream struct{ p unsafe.Pointer }

// Event is a CUevent handle.
type Event struct{ p unsafe.Pointer }

// IsZero reports whether the handle is NULL.
func (c Ctx) IsZero() bool { return c.p == nil }

// Init calls cuInit.
func Init(flags uint32) int32 { return int32(C.gc_init(C.uint(flags))) }

// HasDmabuf reports whether cuMemGetHandleForAddressRange (CUDA 11.7+) was
// found.
func HasDmabuf() bool { return C.gc_has_dmabuf() != 0 }

// DriverVersion calls cuDriverGetVersion.
func DriverVersion() (int, int32) {
	var v C.int
	r := C.gc_driver_version(&v)
	return int(v), int32(r)
}

// ErrorName calls cuGetErrorName; it fails with CUDA_ERROR_NOT_INITIALIZED
// when the library is not loaded.
func ErrorName(r int32) (string, int32) {
	var s *C.char
	if rc := C.gc_error_name(C.gc_result(r), &s); rc != 0 || s == nil {
		if rc == 0 {
			rc = resultInvalidValue
		}
		return "", int32(rc)
	}
	return C.GoString(s), 0
}

// ErrorString calls cuGetErrorString, like ErrorName.
func ErrorString(r int32) (string, int32) {
	var s *C.char
	if rc := C.gc_error_string(C.gc_result(r), &s); rc != 0 || s == nil {
		if rc == 0 {
			rc = resultInvalidValue
		}
		return "", int32(rc)
	}
	return C.GoString(s), 0
}

// DeviceCount calls cuDeviceGetCount.
func DeviceCount() (int, int32) {
	var n C.int
	r := C.gc_device_count(&n)
	return int(n), int32(r)
}

// DeviceGet calls cuDeviceGet.
func DeviceGet(ordinal int) (Device, int32) {
	var d C.gc_device
	r := C.gc_device_get(&d, C.int(ordinal))
	return Device(d), int32(r)
}

// DeviceByPCIBusID calls cuDeviceGetByPCIBusId.
func DeviceByPCIBusID(busID string) (Device, int32) {
	cs := C.CString(busID)
	defer C.free(unsafe.Pointer(cs))
	var d C.gc_device
	r := C.gc_device_by_pci(&d, cs)
	return Device(d), int32(r)
}

// DevicePCIBusID calls cuDeviceGetPCIBusId.
func DevicePCIBusID(d Device) (string, int32) {
	var buf [64]C.char
	r := C.gc_device_pci_busid(&buf[0], C.int(len(buf)), C.gc_device(d))
	if r != 0 {
		return "", int32(r)
	}
	return C.GoString(&buf[0]), 0
}

// DeviceName calls cuDeviceGetName.
func DeviceName(d Device) (string, int32) {
	var buf [256]C.char
	r := C.gc_device_name(&buf[0], C.int(len(buf)), C.gc_device(d))
	if r != 0 {
		return "", int32(r)
	}
	return C.GoString(&buf[0]), 0
}

// DeviceTotalMem calls cuDeviceTotalMem_v2.
func DeviceTotalMem(d Device) (uint64, int32) {
	var n C.size_t
	r := C.gc_device_total_mem(&n, C.gc_device(d))
	return uint64(n), int32(r)
}

// DeviceAttribute calls cuDeviceGetAttribute.
func DeviceAttribute(d Device, attr int32) (int, int32) {
	var v C.int
	r := C.gc_device_attribute(&v, C.int(attr), C.gc_device(d))
	return int(v), int32(r)
}

// PrimaryCtxRetain calls cuDevicePrimaryCtxRetain.
func PrimaryCtxRetain(d Device) (Ctx, int32) {
	var h C.gc_ctx
	r := C.gc_primary_retain(&h, C.gc_device(d))
	return Ctx{unsafe.Pointer(h)}, int32(r)
}

// PrimaryCtxRelease calls cuDevicePrimaryCtxRelease_v2.
func PrimaryCtxRelease(d Device) int32 { return int32(C.gc_primary_release(C.gc_device(d))) }

// CtxPush calls cuCtxPushCurrent_v2 on the calling thread.
func CtxPush(c Ctx) int32 { return int32(C.gc_ctx_push(C.gc_ctx(c.p))) }

// CtxPop calls cuCtxPopCurrent_v2 on the calling thread.
func CtxPop() int32 { return int32(C.gc_ctx_pop()) }

// CtxSynchronize calls cuCtxSynchronize in c.
func CtxSynchronize(c Ctx) int32 { return int32(C.gc_ctx_synchronize(C.gc_ctx(c.p))) }

// MemGetInfo calls cuMemGetInfo_v2 in c.
func MemGetInfo(c Ctx) (free, total uint64, r int32) {
	var f, t C.size_t
	rc := C.gc_mem_get_info(C.gc_ctx(c.p), &f, &t)
	return uint64(f), uint64(t), int32(rc)
}

// MemAlloc calls cuMemAlloc_v2 in c.
func MemAlloc(c Ctx, n uintptr) (uint64, int32) {
	var p C.gc_devptr
	r := C.gc_mem_alloc(C.gc_ctx(c.p), &p, C.size_t(n))
	return uint64(p), int32(r)
}

// MemFree calls cuMemFree_v2 in c.
func MemFree(c Ctx, p uint64) int32 { return int32(C.gc_mem_free(C.gc_ctx(c.p), C.gc_devptr(p))) }

// MemHostAlloc calls cuMemHostAlloc in c.
func MemHostAlloc(c Ctx, n uintptr, flags uint32) (unsafe.Pointer, int32) {
	var p unsafe.Pointer
	r := C.gc_mem_host_alloc(C.gc_ctx(c.p), &p, C.size_t(n), C.uint(flags))
	return p, int32(r)
}

// MemFreeHost calls cuMemFreeHost in c.
func MemFreeHost(c Ctx, p unsafe.Pointer) int32 {
	return int32(C.gc_mem_free_host(C.gc_ctx(c.p), p))
}

// HostGetDevicePointer calls cuMemHostGetDevicePointer_v2 in c.
func HostGetDevicePointer(c Ctx, p unsafe.Pointer) (uint64, int32) {
	var d C.gc_devptr
	r := C.gc_mem_host_get_device_pointer(C.gc_ctx(c.p), &d, p)
	return uint64(d), int32(r)
}

// MemHostRegister calls cuMemHostRegister_v2 in c.
func MemHostRegister(c Ctx, p unsafe.Pointer, n uintptr, flags uint32) int32 {
	return int32(C.gc_mem_host_register(C.gc_ctx(c.p), p, C.size_t(n), C.uint(flags)))
}

// MemHostUnregister calls cuMemHostUnregister in c.
func MemHostUnregister(c Ctx, p unsafe.Pointer) int32 {
	return int32(C.gc_mem_host_unregister(C.gc_ctx(c.p), p))
}

// MemcpyHtoD calls cuMemcpyHtoD_v2 in c. src may be Go memory without Go
// pointers in it.
func MemcpyHtoD(c Ctx, dst uint64, src unsafe.Pointer, n uintptr) int32 {
	return int32(C.gc_memcpy_htod(C.gc_ctx(c.p), C.gc_devptr(dst), src, C.size_t(n)))
}

// MemcpyDtoH calls cuMemcpyDtoH_v2 in c. dst may be Go memory without Go
// pointers in it.
func MemcpyDtoH(c Ctx, dst unsafe.Pointer, src uint64, n uintptr) int32 {
	return int32(C.gc_memcpy_dtoh(C.gc_ctx(c.p), dst, C.gc_devptr(src), C.size_t(n)))
}

// MemcpyDtoD calls cuMemcpyDtoD_v2 in c.
func MemcpyDtoD(c Ctx, dst, src uint64, n uintptr) int32 {
	return int32(C.gc_memcpy_dtod(C.gc_ctx(c.p), C.gc_devptr(dst), C.gc_devptr(src), C.size_t(n)))
}

// MemcpyHtoDAsync calls cuMemcpyHtoDAsync_v2 in c; src must outlive the copy.
func MemcpyHtoDAsync(c Ctx, dst uint64, src unsafe.Pointer, n uintptr, s Stream) int32 {
	return int32(C.gc_memcpy_htod_async(C.gc_ctx(c.p), C.gc_devptr(dst), src, C.size_t(n), C.gc_stream(s.p)))
}

// MemcpyDtoHAsync calls cuMemcpyDtoHAsync_v2 in c; dst must outlive the copy.
func MemcpyDtoHAsync(c Ctx, dst unsafe.Pointer, src uint64, n uintptr, s Stream) int32 {
	return int32(C.gc_memcpy_dtoh_async(C.gc_ctx(c.p), dst, C.gc_devptr(src), C.size_t(n), C.gc_stream(s.p)))
}

// MemcpyDtoDAsync calls cuMemcpyDtoDAsync_v2 in c.
func MemcpyDtoDAsync(c Ctx, dst, src uint64, n uintptr, s Stream) int32 {
	return int32(C.gc_memcpy_dtod_async(C.gc_ctx(c.p), C.gc_devptr(dst), C.gc_devptr(src), C.size_t(n), C.gc_stream(s.p)))
}

// MemsetD8 calls cuMemsetD8_v2 in c.
func MemsetD8(c Ctx, dst uint64, v uint8, n uintptr) int32 {
	return int32(C.gc_memset_d8(C.gc_ctx(c.p), C.gc_devptr(dst), C.uchar(v), C.size_t(n)))
}

// MemsetD32 calls cuMemsetD32_v2 in c.
func MemsetD32(c Ctx, dst uint64, v uint32, n uintptr) int32 {
	return int32(C.gc_memset_d32(C.gc_ctx(c.p), C.gc_devptr(dst), C.uint(v), C.size_t(n)))
}

// MemsetD8Async calls cuMemsetD8Async in c.
func MemsetD8Async(c Ctx, dst uint64, v uint8, n uintptr, s Stream) int32 {
	return int32(C.gc_memset_d8_async(C.gc_ctx(c.p), C.gc_devptr(dst), C.uchar(v), C.size_t(n), C.gc_stream(s.p)))
}

// MemsetD32Async calls cuMemsetD32Async in c.
func MemsetD32Async(c Ctx, dst uint64, v uint32, n uintptr, s Stream) int32 {
	return int32(C.gc_memset_d32_async(C.gc_ctx(c.p), C.gc_devptr(dst), C.uint(v), C.size_t(n), C.gc_stream(s.p)))
}

// PointerGetAttribute calls cuPointerGetAttribute in c, widening the value
// to 64 bits.
func PointerGetAttribute(c Ctx, attr int32, p uint64) (uint64, int32) {
	var v C.ulonglong
	r := C.gc_pointer_get_attribute(C.gc_ctx(c.p), &v, C.int(attr), C.gc_devptr(p))
	return uint64(v), int32(r)
}

// PointerSetAttributeU32 calls cuPointerSetAttribute in c with a 32-bit value.
func PointerSetAttributeU32(c Ctx, attr int32, p uint64, v uint32) int32 {
	return int32(C.gc_pointer_set_attribute_u32(C.gc_ctx(c.p), C.uint(v), C.int(attr), C.gc_devptr(p)))
}

// MemGetAddressRange calls cuMemGetAddressRange_v2 in c.
func MemGetAddressRange(c Ctx, p uint64) (base uint64, size uintptr, r int32) {
	var b C.gc_devptr
	var n C.size_t
	rc := C.gc_mem_get_address_range(C.gc_ctx(c.p), &b, &n, C.gc_devptr(p))
	return uint64(b), uintptr(n), int32(rc)
}

// MemGetDmabufFD calls cuMemGetHandleForAddressRange for a dmabuf fd in c;
// CUDA_ERROR_NOT_SUPPORTED when the driver lacks the entry point.
func MemGetDmabufFD(c Ctx, p uint64, n uintptr) (int, int32) {
	if !HasDmabuf() {
		return -1, resultNotSupported
	}
	var fd C.int = -1
	r := C.gc_mem_get_dmabuf_fd(C.gc_ctx(c.p), &fd, C.gc_devptr(p), C.size_t(n))
	return int(fd), int32(r)
}

// ModuleLoadData calls cuModuleLoadDataEx in c on a NUL-terminated copy of
// image, with a JIT error log buffer of logSize bytes; it returns the log.
func ModuleLoadData(c Ctx, image []byte, logSize int) (Module, string, int32) {
	img := C.malloc(C.size_t(len(image) + 1))
	if img == nil {
		return Module{}, "", resultOutOfMemory
	}
	defer C.free(img)
	buf := unsafe.Slice((*byte)(img), len(image)+1)
	copy(buf, image)
	buf[len(image)] = 0
	var logBuf *C.char
	if logSize > 0 {
		logBuf = (*C.char)(C.calloc(C.size_t(logSize), 1))
		if logBuf == nil {
			return Module{}, "", resultOutOfMemory
		}
		defer C.free(unsafe.Pointer(logBuf))
	}
	var h C.gc_module
	r := C.gc_module_load_data_ex(C.gc_ctx(c.p), &h, img, logBuf, C.size_t(logSize))
	if r != 0 {
		log := ""
		if logBuf != nil {
			log = C.GoStringN(logBuf, C.int(C.strnlen(logBuf, C.size_t(logSize))))
		}
		return Module{}, log, int32(r)
	}
	return Module{unsafe.Pointer(h)}, "", 0
}

// ModuleUnload calls cuModuleUnload in c.
func ModuleUnload(c Ctx, m Module) int32 {
	return int32(C.gc_module_unload(C.gc_ctx(c.p), C.gc_module(m.p)))
}

// ModuleGetFunction calls cuModuleGetFunction in c.
func ModuleGetFunction(c Ctx, m Module, name string) (Function, int32) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f C.gc_function
	r := C.gc_module_get_function(C.gc_ctx(c.p), &f, C.gc_module(m.p), cs)
	return Function{unsafe.Pointer(f)}, int32(r)
}

// ModuleGetGlobal calls cuModuleGetGlobal_v2 in c.
func ModuleGetGlobal(c Ctx, m Module, name string) (uint64, uintptr, int32) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var p C.gc_devptr
	var n C.size_t
	r := C.gc_module_get_global(C.gc_ctx(c.p), &p, &n, C.gc_module(m.p), cs)
	return uint64(p), uintptr(n), int32(r)
}

// LaunchKernel calls cuLaunchKernel in c. args holds every parameter's bytes
// and offs the offset of each parameter in it; both are copied to C memory
// (the driver reads the parameters through an array of pointers, and cgo
// forbids handing C Go memory that holds Go pointers).
func LaunchKernel(c Ctx, f Function, grid, block [3]uint32, sharedMem uint32, s Stream, args []byte, offs []int) int32 {
	ptrBytes := len(offs) * int(unsafe.Sizeof(uintptr(0)))
	mem := C.malloc(C.size_t(ptrBytes + len(args) + 1))
	if mem == nil {
		return resultOutOfMemory
	}
	defer C.free(mem)
	vals := unsafe.Add(mem, ptrBytes)
	copy(unsafe.Slice((*byte)(vals), len(args)+1), args)
	var params *unsafe.Pointer
	if len(offs) > 0 {
		ptrs := unsafe.Slice((*unsafe.Pointer)(mem), len(offs))
		for i, o := range offs {
			ptrs[i] = unsafe.Add(vals, o)
		}
		params = (*unsafe.Pointer)(mem)
	}
	return int32(C.gc_launch_kernel(C.gc_ctx(c.p), C.gc_function(f.p),
		C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]),
		C.uint(sharedMem), C.gc_stream(s.p), params))
}

// StreamCreate calls cuStreamCreate in c.
func StreamCreate(c Ctx, flags uint32) (Stream, int32) {
	var h C.gc_stream
	r := C.gc_stream_create(C.gc_ctx(c.p), &h, C.uint(flags))
	return Stream{unsafe.Pointer(h)}, int32(r)
}

// StreamDestroy calls cuStreamDestroy_v2 in c.
func StreamDestroy(c Ctx, s Stream) int32 {
	return int32(C.gc_stream_destroy(C.gc_ctx(c.p), C.gc_stream(s.p)))
}

// StreamSynchronize calls cuStreamSynchronize in c.
func StreamSynchronize(c Ctx, s Stream) int32 {
	return int32(C.gc_stream_synchronize(C.gc_ctx(c.p), C.gc_stream(s.p)))
}

// StreamQuery calls cuStreamQuery in c.
func StreamQuery(c Ctx, s Stream) int32 {
	return int32(C.gc_stream_query(C.gc_ctx(c.p), C.gc_stream(s.p)))
}

// EventCreate calls cuEventCreate in c.
func EventCreate(c Ctx, flags uint32) (Event, int32) {
	var h C.gc_event
	r := C.gc_event_create(C.gc_ctx(c.p), &h, C.uint(flags))
	return Event{unsafe.Pointer(h)}, int32(r)
}

// EventDestroy calls cuEventDestroy_v2 in c.
func EventDestroy(c Ctx, e Event) int32 {
	return int32(C.gc_event_destroy(C.gc_ctx(c.p), C.gc_event(e.p)))
}

// EventRecord calls cuEventRecord in c.
func EventRecord(c Ctx, e Event, s Stream) int32 {
	return int32(C.gc_event_record(C.gc_ctx(c.p), C.gc_event(e.p), C.gc_stream(s.p)))
}

// EventSynchronize calls cuEventSynchronize in c.
func EventSynchronize(c Ctx, e Event) int32 {
	return int32(C.gc_event_synchronize(C.gc_ctx(c.p), C.gc_event(e.p)))
}

// EventQuery calls cuEventQuery in c.
func EventQuery(c Ctx, e Event) int32 {
	return int32(C.gc_event_query(C.gc_ctx(c.p), C.gc_event(e.p)))
}

// EventElapsedTime calls cuEventElapsedTime in c; the time is in
// milliseconds.
func EventElapsedTime(c Ctx, start, end Event) (float32, int32) {
	var ms C.float
	r := C.gc_event_elapsed(C.gc_ctx(c.p), &ms, C.gc_event(start.p), C.gc_event(end.p))
	return float32(ms), int32(r)
}
