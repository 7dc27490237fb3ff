// Run-time binding of the CUDA driver API: a table of the versioned entry
// points (filled from Go through internal/dl), and one small C shim per call
// that makes the caller's context current around the call on the same OS
// thread.

#include <string.h>

#include "shim.h"

// Entry points. The names in the string table are the symbols the versioned
// driver API exports; where the CUDA headers map an API name to a _v2
// symbol (cuMemAlloc -> cuMemAlloc_v2 and so on) the _v2 symbol is used,
// because the unsuffixed symbol keeps the old 32-bit ABI.
static gc_result (*p_cuInit)(unsigned);
static gc_result (*p_cuDriverGetVersion)(int *);
static gc_result (*p_cuGetErrorName)(gc_result, const char **);
static gc_result (*p_cuGetErrorString)(gc_result, const char **);
static gc_result (*p_cuDeviceGetCount)(int *);
static gc_result (*p_cuDeviceGet)(gc_device *, int);
static gc_result (*p_cuDeviceGetByPCIBusId)(gc_device *, const char *);
static gc_result (*p_cuDeviceGetPCIBusId)(char *, int, gc_device);
static gc_result (*p_cuDeviceGetName)(char *, int, gc_device);
static gc_result (*p_cuDeviceTotalMem)(size_t *, gc_device);
static gc_result (*p_cuDeviceGetAttribute)(int *, int, gc_device);
static gc_result (*p_cuDevicePrimaryCtxRetain)(gc_ctx *, gc_device);
static gc_result (*p_cuDevicePrimaryCtxRelease)(gc_device);
static gc_result (*p_cuCtxGetCurrent)(gc_ctx *);
static gc_result (*p_cuCtxPushCurrent)(gc_ctx);
static gc_result (*p_cuCtxPopCurrent)(gc_ctx *);
static gc_result (*p_cuCtxSynchronize)(void);
static gc_result (*p_cuMemGetInfo)(size_t *, size_t *);
static gc_result (*p_cuMemAlloc)(gc_devptr *, size_t);
static gc_result (*p_cuMemFree)(gc_devptr);
static gc_result (*p_cuMemHostAlloc)(void **, size_t, unsigned);
static gc_result (*p_cuMemFreeHost)(void *);
static gc_result (*p_cuMemHostGetDevicePointer)(gc_devptr *, void *, unsigned);
static gc_result (*p_cuMemHostRegister)(void *, size_t, unsigned);
static gc_result (*p_cuMemHostUnregister)(void *);
static gc_result (*p_cuMemcpyHtoD)(gc_devptr, const void *, size_t);
static gc_result (*p_cuMemcpyDtoH)(void *, gc_devptr, size_t);
static gc_result (*p_cuMemcpyDtoD)(gc_devptr, gc_devptr, size_t);
static gc_result (*p_cuMemcpyHtoDAsync)(gc_devptr, const void *, size_t, gc_stream);
static gc_result (*p_cuMemcpyDtoHAsync)(void *, gc_devptr, size_t, gc_stream);
static gc_result (*p_cuMemcpyDtoDAsync)(gc_devptr, gc_devptr, size_t, gc_stream);
static gc_result (*p_cuMemsetD8)(gc_devptr, unsigned char, size_t);
static gc_result (*p_cuMemsetD32)(gc_devptr, unsigned int, size_t);
static gc_result (*p_cuMemsetD8Async)(gc_devptr, unsigned char, size_t, gc_stream);
static gc_result (*p_cuMemsetD32Async)(gc_devptr, unsigned int, size_t, gc_stream);
static gc_result (*p_cuPointerGetAttribute)(void *, int, gc_devptr);
static gc_result (*p_cuPointerSetAttribute)(const void *, int, gc_devptr);
static gc_result (*p_cuMemGetAddressRange)(gc_devptr *, size_t *, gc_devptr);
static gc_result (*p_cuMemGetHandleForAddressRange)(void *, gc_devptr, size_t, int,
                                                    unsigned long long);
static gc_result (*p_cuModuleLoadDataEx)(gc_module *, const void *, unsigned, int *, void **);
static gc_result (*p_cuModuleUnload)(gc_module);
static gc_result (*p_cuModuleGetFunction)(gc_function *, gc_module, const char *);
static gc_result (*p_cuModuleGetGlobal)(gc_devptr *, size_t *, gc_module, const char *);
static gc_result (*p_cuLaunchKernel)(gc_function, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, unsigned, unsigned, gc_stream, void **, void **);
static gc_result (*p_cuStreamCreate)(gc_stream *, unsigned);
static gc_result (*p_cuStreamDestroy)(gc_stream);
static gc_result (*p_cuStreamSynchronize)(gc_stream);
static gc_result (*p_cuStreamQuery)(gc_stream);
static gc_result (*p_cuEventCreate)(gc_event *, unsigned);
static gc_result (*p_cuEventDestroy)(gc_event);
static gc_result (*p_cuEventRecord)(gc_event, gc_stream);
static gc_result (*p_cuEventSynchronize)(gc_event);
static gc_result (*p_cuEventQuery)(gc_event);
static gc_result (*p_cuEventElapsedTime)(float *, gc_event, gc_event);

struct gc_sym {
	const char *name;
	void **slot;
	int required;
};

#define SYM(var, name) {name, (void **)&var, 1}
#define OPT(var, name) {name, (void **)&var, 0}

static const struct gc_sym gc_syms[] = {
	SYM(p_cuInit, "cuInit"),
	SYM(p_cuDriverGetVersion, "cuDriverGetVersion"),
	SYM(p_cuGetErrorName, "cuGetErrorName"),
	SYM(p_cuGetErrorString, "cuGetErrorString"),
	SYM(p_cuDeviceGetCount, "cuDeviceGetCount"),
	SYM(p_cuDeviceGet, "cuDeviceGet"),
	SYM(p_cuDeviceGetByPCIBusId, "cuDeviceGetByPCIBusId"),
	SYM(p_cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId"),
	SYM(p_cuDeviceGetName, "cuDeviceGetName"),
	SYM(p_cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
	SYM(p_cuDeviceGetAttribute, "cuDeviceGetAttribute"),
	SYM(p_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
	SYM(p_cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
	SYM(p_cuCtxGetCurrent, "cuCtxGetCurrent"),
	SYM(p_cuCtxPushCurrent, "cuCtxPushCurrent_v2"),
	SYM(p_cuCtxPopCurrent, "cuCtxPopCurrent_v2"),
	SYM(p_cuCtxSynchronize, "cuCtxSynchronize"),
	SYM(p_cuMemGetInfo, "cuMemGetInfo_v2"),
	SYM(p_cuMemAlloc, "cuMemAlloc_v2"),
	SYM(p_cuMemFree, "cuMemFree_v2"),
	SYM(p_cuMemHostAlloc, "cuMemHostAlloc"),
	SYM(p_cuMemFreeHost, "cuMemFreeHost"),
	SYM(p_cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2"),
	SYM(p_cuMemHostRegister, "cuMemHostRegister_v2"),
	SYM(p_cuMemHostUnregister, "cuMemHostUnregister"),
	SYM(p_cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
	SYM(p_cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
	SYM(p_cuMemcpyDtoD, "cuMemcpyDtoD_v2"),
	SYM(p_cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
	SYM(p_cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
	SYM(p_cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
	SYM(p_cuMemsetD8, "cuMemsetD8_v2"),
	SYM(p_cuMemsetD32, "cuMemsetD32_v2"),
	SYM(p_cuMemsetD8Async, "cuMemsetD8Async"),
	SYM(p_cuMemsetD32Async, "cuMemsetD32Async"),
	SYM(p_cuPointerGetAttribute, "cuPointerGetAttribute"),
	SYM(p_cuPointerSetAttribute, "cuPointerSetAttribute"),
	SYM(p_cuMemGetAddressRange, "cuMemGetAddressRange_v2"),
	// CUDA 11.7 and later only.
	OPT(p_cuMemGetHandleForAddressRange, "cuMemGetHandleForAddressRange"),
	SYM(p_cuModuleLoadDataEx, "cuModuleLoadDataEx"),
	SYM(p_cuModuleUnload, "cuModuleUnload"),
	SYM(p_cuModuleGetFunction, "cuModuleGetFunction"),
	SYM(p_cuModuleGetGlobal, "cuModuleGetGlobal_v2"),
	SYM(p_cuLaunchKernel, "cuLaunchKernel"),
	SYM(p_cuStreamCreate, "cuStreamCreate"),
	SYM(p_cuStreamDestroy, "cuStreamDestroy_v2"),
	SYM(p_cuStreamSynchronize, "cuStreamSynchronize"),
	SYM(p_cuStreamQuery, "cuStreamQuery"),
	SYM(p_cuEventCreate, "cuEventCreate"),
	SYM(p_cuEventDestroy, "cuEventDestroy_v2"),
	SYM(p_cuEventRecord, "cuEventRecord"),
	SYM(p_cuEventSynchronize, "cuEventSynchronize"),
	SYM(p_cuEventQuery, "cuEventQuery"),
	SYM(p_cuEventElapsedTime, "cuEventElapsedTime"),
};

// The table as Go's loader (load.go) walks it: Go opens libcuda through
// internal/dl, resolves gc_syms[i].name and stores the address with
// gc_bind. To add an entry point: declare its p_ pointer, add one SYM (or
// OPT) line above, and write its gc_ wrapper.
int gc_sym_count(void) { return (int)(sizeof(gc_syms) / sizeof(gc_syms[0])); }
const char *gc_sym_name(int i) { return gc_syms[i].name; }
int gc_sym_required(int i) { return gc_syms[i].required; }
void gc_bind(int i, void *fn) { *gc_syms[i].slot = fn; }

// NEED fails the wrapper with GC_NOT_LOADED when its entry point is not
// resolved (the library was never loaded, or lacks an optional symbol), so
// no wrapper ever calls through a NULL pointer.
#define NEED(fn)                   \
	do {                           \
		if ((fn) == NULL) {        \
			return GC_NOT_LOADED;  \
		}                          \
	} while (0)

int gc_has_dmabuf(void) { return p_cuMemGetHandleForAddressRange != NULL; }

gc_result gc_init(unsigned flags) {
	NEED(p_cuInit);
	return p_cuInit(flags);
}
gc_result gc_driver_version(int *v) {
	NEED(p_cuDriverGetVersion);
	return p_cuDriverGetVersion(v);
}
// The error-name calls may be made before the library is loaded (formatting
// an error); they fail with CUDA_ERROR_NOT_INITIALIZED (3) then.
gc_result gc_error_name(gc_result r, const char **s) {
	return p_cuGetErrorName != NULL ? p_cuGetErrorName(r, s) : 3;
}
gc_result gc_error_string(gc_result r, const char **s) {
	return p_cuGetErrorString != NULL ? p_cuGetErrorString(r, s) : 3;
}

gc_result gc_device_count(int *n) {
	NEED(p_cuDeviceGetCount);
	return p_cuDeviceGetCount(n);
}
gc_result gc_device_get(gc_device *d, int ordinal) {
	NEED(p_cuDeviceGet);
	return p_cuDeviceGet(d, ordinal);
}
gc_result gc_device_by_pci(gc_device *d, const char *busid) {
	NEED(p_cuDeviceGetByPCIBusId);
	return p_cuDeviceGetByPCIBusId(d, busid);
}
gc_result gc_device_pci_busid(char *buf, int len, gc_device d) {
	NEED(p_cuDeviceGetPCIBusId);
	return p_cuDeviceGetPCIBusId(buf, len, d);
}
gc_result gc_device_name(char *buf, int len, gc_device d) {
	NEED(p_cuDeviceGetName);
	return p_cuDeviceGetName(buf, len, d);
}
gc_result gc_device_total_mem(size_t *n, gc_device d) {
	NEED(p_cuDeviceTotalMem);
	return p_cuDeviceTotalMem(n, d);
}
gc_result gc_device_attribute(int *v, int attr, gc_device d) {
	NEED(p_cuDeviceGetAttribute);
	return p_cuDeviceGetAttribute(v, attr, d);
}

gc_result gc_primary_retain(gc_ctx *c, gc_device d) {
	NEED(p_cuDevicePrimaryCtxRetain);
	return p_cuDevicePrimaryCtxRetain(c, d);
}
gc_result gc_primary_release(gc_device d) {
	NEED(p_cuDevicePrimaryCtxRelease);
	return p_cuDevicePrimaryCtxRelease(d);
}
gc_result gc_ctx_push(gc_ctx c) {
	NEED(p_cuCtxPushCurrent);
	return p_cuCtxPushCurrent(c);
}
gc_result gc_ctx_pop(void) {
	gc_ctx old = NULL;
	NEED(p_cuCtxPopCurrent);
	return p_cuCtxPopCurrent(&old);
}

// enter makes c current unless it already is; *pushed says whether leave
// must pop it again.
static gc_result enter(gc_ctx c, int *pushed) {
	gc_ctx cur = NULL;
	*pushed = 0;
	if (p_cuCtxGetCurrent == NULL || p_cuCtxPushCurrent == NULL || p_cuCtxPopCurrent == NULL) {
		return GC_NOT_LOADED;
	}
	if (p_cuCtxGetCurrent(&cur) == 0 && cur == c) {
		return 0;
	}
	gc_result r = p_cuCtxPushCurrent(c);
	if (r != 0) {
		return r | GC_STAGE_PUSH;
	}
	*pushed = 1;
	return 0;
}

static gc_result leave(int pushed, gc_result r) {
	if (pushed) {
		gc_ctx old = NULL;
		gc_result r2 = p_cuCtxPopCurrent(&old);
		if (r == 0 && r2 != 0) {
			r = r2 | GC_STAGE_POP;
		}
	}
	return r;
}

// IN_CTX runs one driver call (through the entry point fn) with c current
// on this thread; an unresolved fn fails with GC_NOT_LOADED. The whole shim
// runs inside one cgo call, so the thread cannot change underneath it.
#define IN_CTX(c, fn, call)                   \
	do {                                      \
		int pushed_;                          \
		if ((fn) == NULL) {                   \
			return GC_NOT_LOADED;             \
		}                                     \
		gc_result r_ = enter((c), &pushed_);  \
		if (r_ != 0) {                        \
			return r_;                        \
		}                                     \
		r_ = (call);                          \
		return leave(pushed_, r_);            \
	} while (0)

gc_result gc_ctx_synchronize(gc_ctx c) { IN_CTX(c, p_cuCtxSynchronize, p_cuCtxSynchronize()); }
gc_result gc_mem_get_info(gc_ctx c, size_t *free_b, size_t *total_b) {
	IN_CTX(c, p_cuMemGetInfo, p_cuMemGetInfo(free_b, total_b));
}
gc_result gc_mem_alloc(gc_ctx c, gc_devptr *p, size_t n) { IN_CTX(c, p_cuMemAlloc, p_cuMemAlloc(p, n)); }
gc_result gc_mem_free(gc_ctx c, gc_devptr p) { IN_CTX(c, p_cuMemFree, p_cuMemFree(p)); }
gc_result gc_mem_host_alloc(gc_ctx c, void **p, size_t n, unsigned flags) {
	IN_CTX(c, p_cuMemHostAlloc, p_cuMemHostAlloc(p, n, flags));
}
gc_result gc_mem_free_host(gc_ctx c, void *p) { IN_CTX(c, p_cuMemFreeHost, p_cuMemFreeHost(p)); }
gc_result gc_mem_host_get_device_pointer(gc_ctx c, gc_devptr *d, void *p) {
	IN_CTX(c, p_cuMemHostGetDevicePointer, p_cuMemHostGetDevicePointer(d, p, 0));
}
gc_result gc_mem_host_register(gc_ctx c, void *p, size_t n, unsigned flags) {
	IN_CTX(c, p_cuMemHostRegister, p_cuMemHostRegister(p, n, flags));
}
gc_result gc_mem_host_unregister(gc_ctx c, void *p) { IN_CTX(c, p_cuMemHostUnregister, p_cuMemHostUnregister(p)); }
gc_result gc_memcpy_htod(gc_ctx c, gc_devptr dst, const void *src, size_t n) {
	IN_CTX(c, p_cuMemcpyHtoD, p_cuMemcpyHtoD(dst, src, n));
}
gc_result gc_memcpy_dtoh(gc_ctx c, void *dst, gc_devptr src, size_t n) {
	IN_CTX(c, p_cuMemcpyDtoH, p_cuMemcpyDtoH(dst, src, n));
}
gc_result gc_memcpy_dtod(gc_ctx c, gc_devptr dst, gc_devptr src, size_t n) {
	IN_CTX(c, p_cuMemcpyDtoD, p_cuMemcpyDtoD(dst, src, n));
}
gc_result gc_memcpy_htod_async(gc_ctx c, gc_devptr dst, const void *src, size_t n, gc_stream s) {
	IN_CTX(c, p_cuMemcpyHtoDAsync, p_cuMemcpyHtoDAsync(dst, src, n, s));
}
gc_result gc_memcpy_dtoh_async(gc_ctx c, void *dst, gc_devptr src, size_t n, gc_stream s) {
	IN_CTX(c, p_cuMemcpyDtoHAsync, p_cuMemcpyDtoHAsync(dst, src, n, s));
}
gc_result gc_memcpy_dtod_async(gc_ctx c, gc_devptr dst, gc_devptr src, size_t n, gc_stream s) {
	IN_CTX(c, p_cuMemcpyDtoDAsync, p_cuMemcpyDtoDAsync(dst, src, n, s));
}
gc_result gc_memset_d8(gc_ctx c, gc_devptr dst, unsigned char v, size_t n) {
	IN_CTX(c, p_cuMemsetD8, p_cuMemsetD8(dst, v, n));
}
gc_result gc_memset_d32(gc_ctx c, gc_devptr dst, unsigned int v, size_t n) {
	IN_CTX(c, p_cuMemsetD32, p_cuMemsetD32(dst, v, n));
}
gc_result gc_memset_d8_async(gc_ctx c, gc_devptr dst, unsigned char v, size_t n, gc_stream s) {
	IN_CTX(c, p_cuMemsetD8Async, p_cuMemsetD8Async(dst, v, n, s));
}
gc_result gc_memset_d32_async(gc_ctx c, gc_devptr dst, unsigned int v, size_t n, gc_stream s) {
	IN_CTX(c, p_cuMemsetD32Async, p_cuMemsetD32Async(dst, v, n, s));
}

// Attribute values are 1, 4 or 8 bytes wide depending on the attribute; the
// 8-byte slot is zeroed first so that any narrower value reads back correctly
// on a little-endian host (amd64, arm64).
gc_result gc_pointer_get_attribute(gc_ctx c, unsigned long long *v, int attr, gc_devptr p) {
	*v = 0;
	IN_CTX(c, p_cuPointerGetAttribute, p_cuPointerGetAttribute(v, attr, p));
}
gc_result gc_pointer_set_attribute_u32(gc_ctx c, unsigned int v, int attr, gc_devptr p) {
	IN_CTX(c, p_cuPointerSetAttribute, p_cuPointerSetAttribute(&v, attr, p));
}
gc_result gc_mem_get_address_range(gc_ctx c, gc_devptr *base, size_t *size, gc_devptr p) {
	IN_CTX(c, p_cuMemGetAddressRange, p_cuMemGetAddressRange(base, size, p));
}

// CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD is 1 in the CUmemRangeHandleType enum.
#define GC_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD 1

gc_result gc_mem_get_dmabuf_fd(gc_ctx c, int *fd, gc_devptr p, size_t n) {
	IN_CTX(c, p_cuMemGetHandleForAddressRange, p_cuMemGetHandleForAddressRange(fd, p, n, GC_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0));
}

// CUjit_option values: CU_JIT_ERROR_LOG_BUFFER is 5 and
// CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES is 6. Option values are passed as
// pointer-sized words holding the value itself.
#define GC_JIT_ERROR_LOG_BUFFER 5
#define GC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

gc_result gc_module_load_data_ex(gc_ctx c, gc_module *m, const void *image, char *log,
                                 size_t loglen) {
	int opts[2] = {GC_JIT_ERROR_LOG_BUFFER, GC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *vals[2] = {log, (void *)(uintptr_t)loglen};
	if (loglen > 0) {
		log[0] = 0;
	}
	IN_CTX(c, p_cuModuleLoadDataEx, p_cuModuleLoadDataEx(m, image, loglen > 0 ? 2 : 0, opts, vals));
}
gc_result gc_module_unload(gc_ctx c, gc_module m) { IN_CTX(c, p_cuModuleUnload, p_cuModuleUnload(m)); }
gc_result gc_module_get_function(gc_ctx c, gc_function *f, gc_module m, const char *name) {
	IN_CTX(c, p_cuModuleGetFunction, p_cuModuleGetFunction(f, m, name));
}
gc_result gc_module_get_global(gc_ctx c, gc_devptr *p, size_t *n, gc_module m, const char *name) {
	IN_CTX(c, p_cuModuleGetGlobal, p_cuModuleGetGlobal(p, n, m, name));
}
gc_result gc_launch_kernel(gc_ctx c, gc_function f, unsigned gx, unsigned gy, unsigned gz,
                           unsigned bx, unsigned by, unsigned bz, unsigned shmem, gc_stream s,
                           void **params) {
	IN_CTX(c, p_cuLaunchKernel, p_cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL));
}
gc_result gc_stream_create(gc_ctx c, gc_stream *s, unsigned flags) {
	IN_CTX(c, p_cuStreamCreate, p_cuStreamCreate(s, flags));
}
gc_result gc_stream_destroy(gc_ctx c, gc_stream s) { IN_CTX(c, p_cuStreamDestroy, p_cuStreamDestroy(s)); }
gc_result gc_stream_synchronize(gc_ctx c, gc_stream s) { IN_CTX(c, p_cuStreamSynchronize, p_cuStreamSynchronize(s)); }
gc_result gc_stream_query(gc_ctx c, gc_stream s) { IN_CTX(c, p_cuStreamQuery, p_cuStreamQuery(s)); }
gc_result gc_event_create(gc_ctx c, gc_event *e, unsigned flags) {
	IN_CTX(c, p_cuEventCreate, p_cuEventCreate(e, flags));
}
gc_result gc_event_destroy(gc_ctx c, gc_event e) { IN_CTX(c, p_cuEventDestroy, p_cuEventDestroy(e)); }
gc_result gc_event_record(gc_ctx c, gc_event e, gc_stream s) { IN_CTX(c, p_cuEventRecord, p_cuEventRecord(e, s)); }
gc_result gc_event_synchronize(gc_ctx c, gc_event e) { IN_CTX(c, p_cuEventSynchronize, p_cuEventSynchronize(e)); }
gc_result gc_event_query(gc_ctx c, gc_event e) { IN_CTX(c, p_cuEventQuery, p_cuEventQuery(e)); }
gc_result gc_event_elapsed(gc_ctx c, float *ms, gc_event start, gc_event end) {
	IN_CTX(c, p_cuEventElapsedTime, p_cuEventElapsedTime(ms, start, end));
}
