//go:build cgo

// shim.c: run-time binding of the DOCA SDK (see shim.h).

#include <string.h>
#include <infiniband/verbs.h>

#include "shim.h"

// The entry points, by table index. Written by gds_bind while Go decides the
// mode (under a sync.Once), read-only afterwards.
static void *gds_fn[GDS_MAX_SYMS];

void gds_bind(int i, uintptr_t fn)
{
	if (i >= 0 && i < GDS_MAX_SYMS)
		gds_fn[i] = (void *)fn;
}

int gds_bound(int i)
{
	return i >= 0 && i < GDS_MAX_SYMS && gds_fn[i] != NULL;
}

// The C signatures of the entry points, as the SDK declares them up to the
// names of opaque types (every SDK object is a pointer, every enum an int).
typedef int (*i_p_fn)(void *);
typedef int (*i_o_fn)(void **);
typedef int (*i_p_o_fn)(void *, void **);
typedef int (*i_p_p_fn)(void *, void *);
typedef int (*i_p_p_o_fn)(void *, void *, void **);
typedef int (*i_p_p_u64_fn)(void *, void *, uint64_t);
typedef int (*i_p_int_fn)(void *, int);
typedef int (*i_p_u8_fn)(void *, uint8_t);
typedef int (*i_p_u16_fn)(void *, uint16_t);
typedef int (*i_p_u32_fn)(void *, uint32_t);
typedef int (*i_p_u32o_fn)(void *, uint32_t *);
typedef int (*i_p_sizeo_fn)(void *, size_t *);
typedef int (*int_p_fn)(void *);
typedef uint32_t (*u32_p_fn)(void *);
typedef void *(*ptr_p_fn)(void *);
typedef int (*gpu_create_fn)(const char *, void **);
typedef int (*gpu_mem_alloc_fn)(void *, size_t, size_t, int, void **, void **);
typedef int (*gpu_dmabuf_fd_fn)(void *, void *, size_t, int *);
typedef int (*umem_create_fn)(void *, void *, size_t, uint32_t, void **);
typedef int (*umem_gpu_create_fn)(void *, void *, void *, size_t, uint32_t, void **);
typedef int (*uar_create_fn)(void *, int, void **);
typedef int (*qp_modify_fn)(void *, void *, int);
typedef int (*qp_query_fn)(void *, void *, void *, int *);
typedef void (*cq_get_wq_fn)(void *, void **, uint32_t *, uint8_t *);
typedef void (*cq_get_dbr_addr_fn)(void *, uint64_t **, uint32_t **, uint32_t **);
typedef void (*qp_get_wq_fn)(void *, void **, uint32_t *, void **, uint32_t *, uint32_t *);
typedef int (*context_import_fn)(struct ibv_context *, uint32_t, void **);
// struct doca_verbs_gid: 16 bytes, passed by value.
struct gds_gid {
	uint8_t raw[16];
};
typedef int (*ah_set_gid_fn)(void *, struct gds_gid);

// FN(type) is entry point s as a type, or returns GDS_NOT_BOUND.
#define FN(type, var)                                   \
	if (s < 0 || s >= GDS_MAX_SYMS || gds_fn[s] == NULL) \
		return GDS_NOT_BOUND;                    \
	type var = (type)gds_fn[s]

int gds_i_p(int s, void *a)
{
	FN(i_p_fn, f);
	return f(a);
}

int gds_i_o(int s, void **out)
{
	FN(i_o_fn, f);
	return f(out);
}

int gds_i_p_o(int s, void *a, void **out)
{
	FN(i_p_o_fn, f);
	return f(a, out);
}

int gds_i_p_uptro(int s, void *a, uintptr_t *out)
{
	FN(i_p_o_fn, f);
	void *p = NULL;
	int rc = f(a, &p);
	*out = (uintptr_t)p;
	return rc;
}

int gds_i_p_p(int s, void *a, void *b)
{
	FN(i_p_p_fn, f);
	return f(a, b);
}

int gds_i_p_uptr(int s, void *a, uintptr_t v)
{
	FN(i_p_p_fn, f);
	return f(a, (void *)v);
}

int gds_i_p_p_o(int s, void *a, void *b, void **out)
{
	FN(i_p_p_o_fn, f);
	return f(a, b, out);
}

int gds_i_p_p_u64(int s, void *a, void *b, uint64_t v)
{
	FN(i_p_p_u64_fn, f);
	return f(a, b, v);
}

int gds_i_p_int(int s, void *a, int v)
{
	FN(i_p_int_fn, f);
	return f(a, v);
}

int gds_i_p_u8(int s, void *a, uint8_t v)
{
	FN(i_p_u8_fn, f);
	return f(a, v);
}

int gds_i_p_u16(int s, void *a, uint16_t v)
{
	FN(i_p_u16_fn, f);
	return f(a, v);
}

int gds_i_p_u32(int s, void *a, uint32_t v)
{
	FN(i_p_u32_fn, f);
	return f(a, v);
}

int gds_i_p_u32o(int s, void *a, uint32_t *out)
{
	FN(i_p_u32o_fn, f);
	return f(a, out);
}

int gds_i_p_sizeo(int s, void *a, size_t *out)
{
	FN(i_p_sizeo_fn, f);
	return f(a, out);
}

int gds_int_p(int s, void *a)
{
	FN(int_p_fn, f);
	return f(a);
}

uint32_t gds_u32_p(int s, void *a)
{
	if (!gds_bound(s))
		return 0;
	return ((u32_p_fn)gds_fn[s])(a);
}

uintptr_t gds_ptr_p(int s, void *a)
{
	if (!gds_bound(s))
		return 0;
	return (uintptr_t)((ptr_p_fn)gds_fn[s])(a);
}

int gds_gpu_create(int s, const char *bus_id, void **gpu)
{
	FN(gpu_create_fn, f);
	return f(bus_id, gpu);
}

int gds_gpu_mem_alloc(int s, void *gpu, size_t size, size_t align, int type, uintptr_t *gpu_ptr,
		      uintptr_t *cpu_ptr)
{
	FN(gpu_mem_alloc_fn, f);
	void *g = NULL, *c = NULL;
	int rc = f(gpu, size, align, type, &g, &c);
	*gpu_ptr = (uintptr_t)g;
	*cpu_ptr = (uintptr_t)c;
	return rc;
}

int gds_gpu_mem_free(int s, void *gpu, uintptr_t gpu_ptr)
{
	FN(i_p_p_fn, f);
	return f(gpu, (void *)gpu_ptr);
}

int gds_gpu_dmabuf_fd(int s, void *gpu, uintptr_t gpu_ptr, size_t size, int *fd)
{
	FN(gpu_dmabuf_fd_fn, f);
	return f(gpu, (void *)gpu_ptr, size, fd);
}

int gds_umem_create(int s, void *dev, uintptr_t addr, size_t size, uint32_t access, void **umem)
{
	FN(umem_create_fn, f);
	return f(dev, (void *)addr, size, access, umem);
}

int gds_umem_gpu_create(int s, void *gpu, void *dev, uintptr_t addr, size_t size, uint32_t access,
			void **umem)
{
	FN(umem_gpu_create_fn, f);
	return f(gpu, dev, (void *)addr, size, access, umem);
}

int gds_uar_create(int s, void *dev, int type, void **uar)
{
	FN(uar_create_fn, f);
	return f(dev, type, uar);
}

int gds_qp_modify(int s, void *qp, void *attr, int mask)
{
	FN(qp_modify_fn, f);
	return f(qp, attr, mask);
}

int gds_qp_query(int s, void *qp, void *attr, void *init_attr, int *mask)
{
	FN(qp_query_fn, f);
	return f(qp, attr, init_attr, mask);
}

int gds_cq_get_wq(int s, void *cq, uintptr_t *buf, uint32_t *n, uint8_t *entry_size)
{
	FN(cq_get_wq_fn, f);
	void *b = NULL;
	f(cq, &b, n, entry_size);
	*buf = (uintptr_t)b;
	return 0;
}

int gds_cq_get_dbr_addr(int s, void *cq, uintptr_t *uar_db_reg, uintptr_t *ci_dbr,
			uintptr_t *arm_dbr)
{
	FN(cq_get_dbr_addr_fn, f);
	uint64_t *db = NULL;
	uint32_t *ci = NULL, *arm = NULL;
	f(cq, &db, &ci, &arm);
	*uar_db_reg = (uintptr_t)db;
	*ci_dbr = (uintptr_t)ci;
	*arm_dbr = (uintptr_t)arm;
	return 0;
}

int gds_qp_get_wq(int s, void *qp, uintptr_t *sq, uint32_t *sq_n, uintptr_t *rq, uint32_t *rq_n,
		  uint32_t *rwqe_size)
{
	FN(qp_get_wq_fn, f);
	void *sb = NULL, *rb = NULL;
	f(qp, &sb, sq_n, &rb, rq_n, rwqe_size);
	*sq = (uintptr_t)sb;
	*rq = (uintptr_t)rb;
	return 0;
}

int gds_context_import(int s, void *ibv_context, uint32_t flags, void **vctx)
{
	FN(context_import_fn, f);
	return f((struct ibv_context *)ibv_context, flags, vctx);
}

int gds_ah_set_gid(int s, void *ah, const uint8_t *gid)
{
	FN(ah_set_gid_fn, f);
	struct gds_gid g;
	memcpy(g.raw, gid, sizeof(g.raw));
	return f(ah, g);
}

void *gds_pd_context(void *ibv_pd)
{
	if (ibv_pd == NULL)
		return NULL;
	return ((struct ibv_pd *)ibv_pd)->context;
}
