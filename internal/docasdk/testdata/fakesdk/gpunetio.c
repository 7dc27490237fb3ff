// The fake libdoca_gpunetio.so: the GPU handle.

#include <stdint.h>
#include <stdio.h>

#include "fake.h"

int doca_gpu_create(const char *bus_id, void **gpu)
{
	fk_log("doca_gpu_create bus_id=\"%s\"", bus_id ? bus_id : "(null)");
	CREATE_FAIL("doca_gpu_create", gpu);
	struct fk_obj *o = fk_new("gpu");
	*gpu = o;
	fk_log("doca_gpu_create -> %s", FK_H(o));
	return 0;
}

int doca_gpu_destroy(void *gpu)
{
	fk_log("doca_gpu_destroy gpu=%s", FK_H(gpu));
	FAIL("doca_gpu_destroy");
	fk_free(gpu);
	return 0;
}

// Addresses are canned: GPU 0x7a0000000000 + size, CPU 0x7b0000000000 +
// size for every memory type but 0 (GPU only), which has none.
int doca_gpu_mem_alloc(void *gpu, size_t size, size_t align, int type, void **gpu_ptr,
		       void **cpu_ptr)
{
	fk_log("doca_gpu_mem_alloc gpu=%s size=%zu align=%zu type=%d", FK_H(gpu), size, align,
	       type);
	*gpu_ptr = FK_GARBAGE;
	*cpu_ptr = FK_GARBAGE;
	FAIL("doca_gpu_mem_alloc");
	*gpu_ptr = (void *)(uintptr_t)(0x7a0000000000UL + size);
	*cpu_ptr = type == 0 ? NULL : (void *)(uintptr_t)(0x7b0000000000UL + size);
	return 0;
}

int doca_gpu_mem_free(void *gpu, void *gpu_ptr)
{
	fk_log("doca_gpu_mem_free gpu=%s ptr=0x%lx", FK_H(gpu), (unsigned long)(uintptr_t)gpu_ptr);
	FAIL("doca_gpu_mem_free");
	return 0;
}

int doca_gpu_dmabuf_fd(void *gpu, void *gpu_ptr, size_t size, int *fd)
{
	fk_log("doca_gpu_dmabuf_fd gpu=%s ptr=0x%lx size=%zu", FK_H(gpu),
	       (unsigned long)(uintptr_t)gpu_ptr, size);
	*fd = 0x5eed;
	FAIL("doca_gpu_dmabuf_fd");
	*fd = 77;
	return 0;
}
