// Declarations for the run-time loaded CUDA driver API. No CUDA header is
// included: the handful of types used here are declared locally, with the
// sizes the driver ABI fixes (CUresult and CUdevice are C ints, CUdeviceptr is
// a 64-bit unsigned integer on 64-bit hosts, every other handle is an opaque
// pointer).
#ifndef GPUNETIO_CUDA_SHIM_H
#define GPUNETIO_CUDA_SHIM_H

#include <stddef.h>
#include <stdint.h>

typedef int gc_result;
typedef int gc_device;
typedef unsigned long long gc_devptr;
typedef void *gc_ctx;
typedef void *gc_module;
typedef void *gc_function;
typedef void *gc_stream;
typedef void *gc_event;

// Stage markers added to a result when the failure came from making the
// context current (push) or restoring the previous one (pop) rather than from
// the wrapped call itself. CUDA result codes are all below 1000.
#define GC_STAGE_PUSH (1 << 20)
#define GC_STAGE_POP (2 << 20)
#define GC_STAGE_MASK (3 << 20)

// GC_NOT_LOADED is the result of a wrapper whose driver entry point is not
// resolved; it is outside both the CUDA results and the stage markers.
#define GC_NOT_LOADED (4 << 20)

// The entry-point table, for Go's loader: the number of entries, entry i's
// symbol name, whether it is required, and storing its address (NULL
// clears it).
int gc_sym_count(void);
const char *gc_sym_name(int i);
int gc_sym_required(int i);
void gc_bind(int i, void *fn);
int gc_has_dmabuf(void);

gc_result gc_init(unsigned flags);
gc_result gc_driver_version(int *v);
gc_result gc_error_name(gc_result r, const char **s);
gc_result gc_error_string(gc_result r, const char **s);

gc_result gc_device_count(int *n);
gc_result gc_device_get(gc_device *d, int ordinal);
gc_result gc_device_by_pci(gc_device *d, const char *busid);
gc_result gc_device_pci_busid(char *buf, int len, gc_device d);
gc_result gc_device_name(char *buf, int len, gc_device d);
gc_result gc_device_total_mem(size_t *n, gc_device d);
gc_result gc_device_attribute(int *v, int attr, gc_device d);

gc_result gc_primary_retain(gc_ctx *c, gc_device d);
gc_result gc_primary_release(gc_device d);
gc_result gc_ctx_push(gc_ctx c);
gc_result gc_ctx_pop(void);

// Every function below makes c current on the calling OS thread for the
// duration of the call (unless it already is) and restores the previous
// current context before returning.
gc_result gc_ctx_synchronize(gc_ctx c);
gc_result gc_mem_get_info(gc_ctx c, size_t *free_b, size_t *total_b);
gc_result gc_mem_alloc(gc_ctx c, gc_devptr *p, size_t n);
gc_result gc_mem_free(gc_ctx c, gc_devptr p);
gc_result gc_mem_host_alloc(gc_ctx c, void **p, size_t n, unsigned flags);
gc_result gc_mem_free_host(gc_ctx c, void *p);
gc_result gc_mem_host_get_device_pointer(gc_ctx c, gc_devptr *d, void *p);
gc_result gc_mem_host_register(gc_ctx c, void *p, size_t n, unsigned flags);
gc_result gc_mem_host_unregister(gc_ctx c, void *p);
gc_result gc_memcpy_htod(gc_ctx c, gc_devptr dst, const void *src, size_t n);
gc_result gc_memcpy_dtoh(gc_ctx c, void *dst, gc_devptr src, size_t n);
gc_result gc_memcpy_dtod(gc_ctx c, gc_devptr dst, gc_devptr src, size_t n);
gc_result gc_memcpy_htod_async(gc_ctx c, gc_devptr dst, const void *src, size_t n, gc_stream s);
gc_result gc_memcpy_dtoh_async(gc_ctx c, void *dst, gc_devptr src, size_t n, gc_stream s);
gc_result gc_memcpy_dtod_async(gc_ctx c, gc_devptr dst, gc_devptr src, size_t n, gc_stream s);
gc_result gc_memset_d8(gc_ctx c, gc_devptr dst, unsigned char v, size_t n);
gc_result gc_memset_d32(gc_ctx c, gc_devptr dst, unsigned int v, size_t n);
gc_result gc_memset_d8_async(gc_ctx c, gc_devptr dst, unsigned char v, size_t n, gc_stream s);
gc_result gc_memset_d32_async(gc_ctx c, gc_devptr dst, unsigned int v, size_t n, gc_stream s);
gc_result gc_pointer_get_attribute(gc_ctx c, unsigned long long *v, int attr, gc_devptr p);
gc_result gc_pointer_set_attribute_u32(gc_ctx c, unsigned int v, int attr, gc_devptr p);
gc_result gc_mem_get_address_range(gc_ctx c, gc_devptr *base, size_t *size, gc_devptr p);
gc_result gc_mem_get_dmabuf_fd(gc_ctx c, int *fd, gc_devptr p, size_t n);
gc_result gc_module_load_data_ex(gc_ctx c, gc_module *m, const void *image, char *log, size_t loglen);
gc_result gc_module_unload(gc_ctx c, gc_module m);
gc_result gc_module_get_function(gc_ctx c, gc_function *f, gc_module m, const char *name);
gc_result gc_module_get_global(gc_ctx c, gc_devptr *p, size_t *n, gc_module m, const char *name);
gc_result gc_launch_kernel(gc_ctx c, gc_function f, unsigned gx, unsigned gy, unsigned gz,
                           unsigned bx, unsigned by, unsigned bz, unsigned shmem, gc_stream s,
                           void **params);
gc_result gc_stream_create(gc_ctx c, gc_stream *s, unsigned flags);
gc_result gc_stream_destroy(gc_ctx c, gc_stream s);
gc_result gc_stream_synchronize(gc_ctx c, gc_stream s);
gc_result gc_stream_query(gc_ctx c, gc_stream s);
gc_result gc_event_create(gc_ctx c, gc_event *e, unsigned flags);
gc_result gc_event_destroy(gc_ctx c, gc_event e);
gc_result gc_event_record(gc_ctx c, gc_event e, gc_stream s);
gc_result gc_event_synchronize(gc_ctx c, gc_event e);
gc_result gc_event_query(gc_ctx c, gc_event e);
gc_result gc_event_elapsed(gc_ctx c, float *ms, gc_event start, gc_event end);

#endif
