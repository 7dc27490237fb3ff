// The fake libdoca_gpunetio.so: the GPU handle.

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake.h"

// With FAKE_DOCA_REAL_MEM=1 (read at every call) the GPU handle hands out
// real memory: doca_gpu_mem_alloc maps zeroed anonymous pages, aligned as
// asked, whose address is both the "GPU" and the CPU address (NULL CPU
// address for type 0, GPU-only memory), doca_gpu_mem_free unmaps them, and
// doca_gpu_dmabuf_fd returns a descriptor of /dev/null that the caller may
// close. Callers that write the memory they allocate (package gpunetio on a
// host-memory GPU) need this; the default canned addresses cannot be touched.
static int real_mem(void)
{
	const char *v = getenv("FAKE_DOCA_REAL_MEM");
	return v != NULL && strcmp(v, "1") == 0;
}

struct fk_map {
	struct fk_map *next;
	uintptr_t user;	// the address handed out
	void *base;	// what mmap returned
	size_t len;
};

static pthread_mutex_t map_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fk_map *maps;

static int real_alloc(size_t size, size_t align, void **out)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (align < page)
		align = page;
	if ((align & (align - 1)) != 0)
		return 6; // DOCA_ERROR_INVALID_VALUE
	size_t len = ((size + page - 1) / page) * page + align;
	void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return 7; // DOCA_ERROR_NO_MEMORY
	struct fk_map *m = calloc(1, sizeof(*m));
	if (m == NULL) {
		munmap(base, len);
		return 7;
	}
	m->base = base;
	m->len = len;
	m->user = ((uintptr_t)base + align - 1) & ~(uintptr_t)(align - 1);
	pthread_mutex_lock(&map_mu);
	m->next = maps;
	maps = m;
	pthread_mutex_unlock(&map_mu);
	*out = (void *)m->user;
	return 0;
}

static int real_free(void *p)
{
	struct fk_map **pp, *m = NULL;
	pthread_mutex_lock(&map_mu);
	for (pp = &maps; *pp != NULL; pp = &(*pp)->next) {
		if ((*pp)->user == (uintptr_t)p) {
			m = *pp;
			*pp = m->next;
			break;
		}
	}
	pthread_mutex_unlock(&map_mu);
	if (m == NULL)
		return 6; // not an allocation of the fake
	munmap(m->base, m->len);
	free(m);
	return 0;
}

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
	if (real_mem()) {
		int rc = real_alloc(size, align, gpu_ptr);
		if (rc != 0)
			return rc;
		*cpu_ptr = type == 0 ? NULL : *gpu_ptr;
		fk_log("doca_gpu_mem_alloc -> real memory");
		return 0;
	}
	*gpu_ptr = (void *)(uintptr_t)(0x7a0000000000UL + size);
	*cpu_ptr = type == 0 ? NULL : (void *)(uintptr_t)(0x7b0000000000UL + size);
	return 0;
}

int doca_gpu_mem_free(void *gpu, void *gpu_ptr)
{
	fk_log("doca_gpu_mem_free gpu=%s ptr=0x%lx", FK_H(gpu), (unsigned long)(uintptr_t)gpu_ptr);
	FAIL("doca_gpu_mem_free");
	if (real_mem())
		return real_free(gpu_ptr);
	return 0;
}

int doca_gpu_dmabuf_fd(void *gpu, void *gpu_ptr, size_t size, int *fd)
{
	fk_log("doca_gpu_dmabuf_fd gpu=%s ptr=0x%lx size=%zu", FK_H(gpu),
	       (unsigned long)(uintptr_t)gpu_ptr, size);
	*fd = 0x5eed;
	FAIL("doca_gpu_dmabuf_fd");
	if (real_mem()) {
		*fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		return *fd < 0 ? 20 : 0; // DOCA_ERROR_OPERATING_SYSTEM
	}
	*fd = 77;
	return 0;
}
