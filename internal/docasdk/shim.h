// shim.h: the run-time bound DOCA SDK entry points of package docasdk.
//
// Nothing here is linked against the DOCA SDK and no SDK header is included:
// the SDK objects are opaque pointers, its status (doca_error_t) and enums
// are C ints, and struct doca_verbs_gid is 16 raw bytes passed by value.
// Go fills gds_fn[] once (load_cgo.go, through internal/dl) and then calls the
// entry points only through the trampolines below. A trampoline is named
// after the C signature it calls through (i = returns doca_error_t, p = an
// SDK handle or pointer, o = a void ** output, u8/u16/u32/u64/int = a value
// of that type) and takes the table index of the entry point as its first
// argument; the few entry points with a signature of their own have their
// own function. Addresses that Go holds as integers are passed as uintptr_t.

#ifndef GDAKI_DOCASDK_SHIM_H
#define GDAKI_DOCASDK_SHIM_H

#include <stddef.h>
#include <stdint.h>

// Room in the table; Go checks that its symbol count fits.
#define GDS_MAX_SYMS 128

// What a trampoline returns when its entry point is not bound (Go checks the
// binding first, so this is a backstop). No doca_error_t is negative.
#define GDS_NOT_BOUND (-1)


// Binding. Go opens the libraries and resolves the entry points through
// internal/dl, then stores each address (an integer in Go) with gds_bind.
void gds_bind(int i, uintptr_t fn);
int gds_bound(int i);

// Generic trampolines.
int gds_i_p(int s, void *a);
int gds_i_o(int s, void **out);
int gds_i_p_o(int s, void *a, void **out);
int gds_i_p_p(int s, void *a, void *b);
int gds_i_p_uptr(int s, void *a, uintptr_t v);
int gds_i_p_p_o(int s, void *a, void *b, void **out);
int gds_i_p_p_u64(int s, void *a, void *b, uint64_t v);
int gds_i_p_int(int s, void *a, int v);
int gds_i_p_u8(int s, void *a, uint8_t v);
int gds_i_p_u16(int s, void *a, uint16_t v);
int gds_i_p_u32(int s, void *a, uint32_t v);
int gds_i_p_u32o(int s, void *a, uint32_t *out);
int gds_i_p_sizeo(int s, void *a, size_t *out);
int gds_int_p(int s, void *a);          // an enum returned by value
uint32_t gds_u32_p(int s, void *a);     // a uint32_t returned by value
uintptr_t gds_ptr_p(int s, void *a);    // a void * returned by value

// Entry points with a signature of their own (the index is fixed).
int gds_gpu_create(int s, const char *bus_id, void **gpu);
int gds_gpu_mem_alloc(int s, void *gpu, size_t size, size_t align, int type, uintptr_t *gpu_ptr,
		      uintptr_t *cpu_ptr);
int gds_gpu_mem_free(int s, void *gpu, uintptr_t gpu_ptr);
int gds_gpu_dmabuf_fd(int s, void *gpu, uintptr_t gpu_ptr, size_t size, int *fd);
int gds_umem_create(int s, void *dev, uintptr_t addr, size_t size, uint32_t access, void **umem);
int gds_umem_gpu_create(int s, void *gpu, void *dev, uintptr_t addr, size_t size, uint32_t access,
			void **umem);
int gds_i_p_uptro(int s, void *a, uintptr_t *out); // void ** output read as an address
int gds_uar_create(int s, void *dev, int type, void **uar);
int gds_qp_modify(int s, void *qp, void *attr, int mask);
int gds_qp_query(int s, void *qp, void *attr, void *init_attr, int *mask);
int gds_cq_get_wq(int s, void *cq, uintptr_t *buf, uint32_t *n, uint8_t *entry_size);
int gds_cq_get_dbr_addr(int s, void *cq, uintptr_t *uar_db_reg, uintptr_t *ci_dbr,
			uintptr_t *arm_dbr);
int gds_qp_get_wq(int s, void *qp, uintptr_t *sq, uint32_t *sq_n, uintptr_t *rq, uint32_t *rq_n,
		  uint32_t *rwqe_size);
int gds_context_import(int s, void *ibv_context, uint32_t flags, void **vctx);
int gds_ah_set_gid(int s, void *ah, const uint8_t *gid);

// gds_pd_context returns pd->context of a struct ibv_pd (rdma-core's layout).
void *gds_pd_context(void *ibv_pd);

#endif
