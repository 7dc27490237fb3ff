// The fake libdoca_common.so: the recorder, the device bridge, UMEM and UAR.

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake.h"

static pthread_mutex_t fk_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fk_obj *fk_objs;

struct fk_obj *fk_new(const char *kind)
{
	struct fk_obj *o = calloc(1, sizeof(*o));
	if (o == NULL)
		return NULL;
	o->kind = kind;
	pthread_mutex_lock(&fk_mu);
	o->next = fk_objs;
	fk_objs = o;
	pthread_mutex_unlock(&fk_mu);
	return o;
}

struct fk_obj *fk_find(const void *p)
{
	struct fk_obj *o;

	pthread_mutex_lock(&fk_mu);
	for (o = fk_objs; o != NULL; o = o->next)
		if ((const void *)o == p)
			break;
	pthread_mutex_unlock(&fk_mu);
	return o;
}

void fk_free(void *p)
{
	struct fk_obj **pp, *o = NULL;

	pthread_mutex_lock(&fk_mu);
	for (pp = &fk_objs; *pp != NULL; pp = &(*pp)->next) {
		if ((void *)*pp == p) {
			o = *pp;
			*pp = o->next;
			break;
		}
	}
	pthread_mutex_unlock(&fk_mu);
	free(o);
}

const char *fk_h(char buf[64], const void *p)
{
	if (p == NULL) {
		snprintf(buf, 64, "NULL");
		return buf;
	}
	struct fk_obj *o = fk_find(p);
	snprintf(buf, 64, "%s@0x%lx", o ? o->kind : "?", (unsigned long)(uintptr_t)p);
	return buf;
}

void fk_log(const char *fmt, ...)
{
	const char *path = getenv("FAKE_DOCA_LOG");
	char line[1024];
	va_list ap;
	int n;

	if (path == NULL || *path == '\0')
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	// One write per line: O_APPEND keeps concurrent lines whole.
	if (write(fd, line, n) != n) {
		// Nothing to do: the test sees a short log.
	}
	close(fd);
}

int fk_fail(const char *fn)
{
	const char *spec = getenv("FAKE_DOCA_FAIL");
	size_t len = strlen(fn);

	while (spec != NULL && *spec != '\0') {
		const char *end = strchr(spec, ',');
		size_t n = end ? (size_t)(end - spec) : strlen(spec);
		if (n > len && strncmp(spec, fn, len) == 0 && spec[len] == '=') {
			const char *v = spec + len + 1;
			if (strncmp(v, "null", 4) == 0)
				return FK_NULL;
			return atoi(v);
		}
		spec = end ? end + 1 : NULL;
	}
	return 0;
}

int fk_create_fail(const char *fn, void **out)
{
	int f = fk_fail(fn);
	if (f == FK_NULL) {
		*out = NULL;
		fk_log("%s -> NULL (injected)", fn);
		return 0;
	}
	if (f != 0) {
		*out = FK_GARBAGE;
		fk_log("%s -> error %d (injected)", fn, f);
		return f;
	}
	return FK_GO_ON;
}

// ---- device bridge ----

int doca_rdma_bridge_open_dev_from_pd(void *pd, void **dev)
{
	fk_log("doca_rdma_bridge_open_dev_from_pd pd=0x%lx", (unsigned long)(uintptr_t)pd);
	CREATE_FAIL("doca_rdma_bridge_open_dev_from_pd", dev);
	struct fk_obj *o = fk_new("dev");
	o->pd = pd;
	*dev = o;
	fk_log("doca_rdma_bridge_open_dev_from_pd -> %s", FK_H(o));
	return 0;
}

int doca_dev_close(void *dev)
{
	fk_log("doca_dev_close dev=%s", FK_H(dev));
	FAIL("doca_dev_close");
	fk_free(dev);
	return 0;
}

int doca_rdma_bridge_get_dev_pd(void *dev, void **pd)
{
	fk_log("doca_rdma_bridge_get_dev_pd dev=%s", FK_H(dev));
	*pd = FK_GARBAGE;
	FAIL("doca_rdma_bridge_get_dev_pd");
	struct fk_obj *o = fk_find(dev);
	*pd = o ? o->pd : NULL;
	fk_log("doca_rdma_bridge_get_dev_pd -> pd=0x%lx", (unsigned long)(uintptr_t)*pd);
	return 0;
}

// ---- UMEM ----

static int umem_new(const char *fn, uintptr_t addr, size_t size, void **umem)
{
	CREATE_FAIL(fn, umem);
	struct fk_obj *o = fk_new("umem");
	o->addr = addr;
	o->size = size;
	*umem = o;
	fk_log("%s -> %s", fn, FK_H(o));
	return 0;
}

int doca_umem_create(void *dev, void *addr, size_t size, uint32_t access, void **umem)
{
	fk_log("doca_umem_create dev=%s addr=0x%lx size=%zu access=0x%x", FK_H(dev),
	       (unsigned long)(uintptr_t)addr, size, access);
	return umem_new("doca_umem_create", (uintptr_t)addr, size, umem);
}

int doca_umem_gpu_create(void *gpu, void *dev, void *addr, size_t size, uint32_t access,
			 void **umem)
{
	fk_log("doca_umem_gpu_create gpu=%s dev=%s addr=0x%lx size=%zu access=0x%x", FK_H(gpu),
	       FK_H(dev), (unsigned long)(uintptr_t)addr, size, access);
	return umem_new("doca_umem_gpu_create", (uintptr_t)addr, size, umem);
}

int doca_umem_destroy(void *umem)
{
	fk_log("doca_umem_destroy umem=%s", FK_H(umem));
	FAIL("doca_umem_destroy");
	fk_free(umem);
	return 0;
}

int doca_umem_get_id(void *umem, uint32_t *id)
{
	fk_log("doca_umem_get_id umem=%s", FK_H(umem));
	*id = 0xdead;
	FAIL("doca_umem_get_id");
	*id = 0xfeedc0de;
	return 0;
}

int doca_umem_get_size(void *umem, size_t *size)
{
	fk_log("doca_umem_get_size umem=%s", FK_H(umem));
	*size = 0xdead;
	FAIL("doca_umem_get_size");
	struct fk_obj *o = fk_find(umem);
	*size = o ? o->size : 0;
	return 0;
}

int doca_umem_get_address(void *umem, void **addr)
{
	fk_log("doca_umem_get_address umem=%s", FK_H(umem));
	*addr = FK_GARBAGE;
	FAIL("doca_umem_get_address");
	struct fk_obj *o = fk_find(umem);
	*addr = o ? (void *)o->addr : NULL;
	return 0;
}

// ---- UAR ----

int doca_uar_create(void *dev, int type, void **uar)
{
	fk_log("doca_uar_create dev=%s type=%d", FK_H(dev), type);
	CREATE_FAIL("doca_uar_create", uar);
	struct fk_obj *o = fk_new("uar");
	*uar = o;
	fk_log("doca_uar_create -> %s", FK_H(o));
	return 0;
}

int doca_uar_destroy(void *uar)
{
	fk_log("doca_uar_destroy uar=%s", FK_H(uar));
	FAIL("doca_uar_destroy");
	fk_free(uar);
	return 0;
}

int doca_uar_id_get(void *uar, uint32_t *id)
{
	fk_log("doca_uar_id_get uar=%s", FK_H(uar));
	*id = 0xdead;
	FAIL("doca_uar_id_get");
	*id = 0x80000007;
	return 0;
}

int doca_uar_reg_addr_get(void *uar, void **addr)
{
	fk_log("doca_uar_reg_addr_get uar=%s", FK_H(uar));
	*addr = FK_GARBAGE;
	FAIL("doca_uar_reg_addr_get");
	*addr = (void *)(uintptr_t)0x7c0000000800UL;
	return 0;
}
