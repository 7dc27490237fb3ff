// The fake libdoca_verbs.so: the verbs bridges, CQ, QP and AH entry points.

#include <stdint.h>
#include <stdio.h>

#include "fake.h"

// struct doca_verbs_gid, passed by value.
struct doca_verbs_gid {
	uint8_t raw[16];
};

#define P(p) ((unsigned long)(uintptr_t)(p))

// Simple setters: log the value with the given format and succeed.
#define SETTER(fn, type, obj, fmt)                                 \
	int fn(void *obj, type v)                                  \
	{                                                          \
		fk_log(#fn " " #obj "=%s v=" fmt, FK_H(obj), v);   \
		FAIL(#fn);                                         \
		return 0;                                          \
	}

#define DESTROYER(fn, obj)                             \
	int fn(void *obj)                              \
	{                                              \
		fk_log(#fn " " #obj "=%s", FK_H(obj)); \
		FAIL(#fn);                             \
		fk_free(obj);                          \
		return 0;                              \
	}

// Handle setters: log the handle argument.
#define SET_HANDLE(fn, obj, what)                                              \
	int fn(void *obj, void *what)                                          \
	{                                                                      \
		fk_log(#fn " " #obj "=%s " #what "=%s", FK_H(obj), FK_H(what)); \
		FAIL(#fn);                                                     \
		return 0;                                                      \
	}

static int attr_create(const char *fn, const char *kind, void **out)
{
	fk_log("%s", fn);
	CREATE_FAIL(fn, out);
	struct fk_obj *o = fk_new(kind);
	*out = o;
	fk_log("%s -> %s", fn, FK_H(o));
	return 0;
}

// ---- bridges ----

int doca_verbs_bridge_verbs_context_import(void *ibv_ctx, uint32_t flags, void **vctx)
{
	fk_log("doca_verbs_bridge_verbs_context_import context=0x%lx flags=%u", P(ibv_ctx), flags);
	CREATE_FAIL("doca_verbs_bridge_verbs_context_import", vctx);
	struct fk_obj *o = fk_new("vctx");
	*vctx = o;
	fk_log("doca_verbs_bridge_verbs_context_import -> %s", FK_H(o));
	return 0;
}

int doca_verbs_bridge_verbs_pd_import(void *ibv_pd, void **vpd)
{
	fk_log("doca_verbs_bridge_verbs_pd_import pd=0x%lx", P(ibv_pd));
	CREATE_FAIL("doca_verbs_bridge_verbs_pd_import", vpd);
	struct fk_obj *o = fk_new("vpd");
	*vpd = o;
	fk_log("doca_verbs_bridge_verbs_pd_import -> %s", FK_H(o));
	return 0;
}

// ---- CQ attributes and CQ ----

int doca_verbs_cq_attr_create(void **attr)
{
	return attr_create("doca_verbs_cq_attr_create", "cq_attr", attr);
}

DESTROYER(doca_verbs_cq_attr_destroy, attr)

int doca_verbs_cq_attr_set_cq_size(void *attr, uint32_t v)
{
	fk_log("doca_verbs_cq_attr_set_cq_size attr=%s v=%u", FK_H(attr), v);
	FAIL("doca_verbs_cq_attr_set_cq_size");
	struct fk_obj *o = fk_find(attr);
	if (o)
		o->u32a = v;
	return 0;
}

int doca_verbs_cq_attr_set_cq_context(void *attr, void *ctx)
{
	fk_log("doca_verbs_cq_attr_set_cq_context attr=%s v=0x%lx", FK_H(attr), P(ctx));
	FAIL("doca_verbs_cq_attr_set_cq_context");
	return 0;
}

SETTER(doca_verbs_cq_attr_set_external_datapath_en, uint8_t, attr, "%u")

int doca_verbs_cq_attr_set_external_umem(void *attr, void *umem, uint64_t offset)
{
	fk_log("doca_verbs_cq_attr_set_external_umem attr=%s umem=%s offset=%lu", FK_H(attr),
	       FK_H(umem), (unsigned long)offset);
	FAIL("doca_verbs_cq_attr_set_external_umem");
	return 0;
}

SET_HANDLE(doca_verbs_cq_attr_set_external_uar, attr, uar)
SETTER(doca_verbs_cq_attr_set_cq_overrun, int, attr, "%d")
SETTER(doca_verbs_cq_attr_set_cq_collapsed, uint8_t, attr, "%u")

int doca_verbs_cq_create(void *vctx, void *attr, void **cq)
{
	fk_log("doca_verbs_cq_create context=%s attr=%s", FK_H(vctx), FK_H(attr));
	CREATE_FAIL("doca_verbs_cq_create", cq);
	struct fk_obj *a = fk_find(attr);
	struct fk_obj *o = fk_new("cq");
	o->u32a = a ? a->u32a : 0;
	*cq = o;
	fk_log("doca_verbs_cq_create -> %s", FK_H(o));
	return 0;
}

DESTROYER(doca_verbs_cq_destroy, cq)

// Ring 0x7d0000000000, as many 128-byte CQEs as the attributes asked for.
void doca_verbs_cq_get_wq(void *cq, void **buf, uint32_t *n, uint8_t *entry_size)
{
	fk_log("doca_verbs_cq_get_wq cq=%s", FK_H(cq));
	struct fk_obj *o = fk_find(cq);
	*buf = (void *)(uintptr_t)0x7d0000000000UL;
	*n = o ? o->u32a : 0;
	*entry_size = 128;
}

void doca_verbs_cq_get_dbr_addr(void *cq, uint64_t **uar_db_reg, uint32_t **ci_dbr,
				uint32_t **arm_dbr)
{
	fk_log("doca_verbs_cq_get_dbr_addr cq=%s", FK_H(cq));
	*uar_db_reg = (uint64_t *)(uintptr_t)0x7c0000000020UL;
	*ci_dbr = (uint32_t *)(uintptr_t)0x7d0000100000UL;
	*arm_dbr = (uint32_t *)(uintptr_t)0x7d0000100004UL;
}

uint32_t doca_verbs_cq_get_cqn(void *cq)
{
	fk_log("doca_verbs_cq_get_cqn cq=%s", FK_H(cq));
	return 0x00abcdef;
}

// ---- QP init attributes ----

int doca_verbs_qp_init_attr_create(void **attr)
{
	return attr_create("doca_verbs_qp_init_attr_create", "qp_init_attr", attr);
}

DESTROYER(doca_verbs_qp_init_attr_destroy, attr)
SET_HANDLE(doca_verbs_qp_init_attr_set_pd, attr, pd)
SET_HANDLE(doca_verbs_qp_init_attr_set_send_cq, attr, cq)
SET_HANDLE(doca_verbs_qp_init_attr_set_receive_cq, attr, cq)
SETTER(doca_verbs_qp_init_attr_set_sq_sig_all, int, attr, "%d")

int doca_verbs_qp_init_attr_set_sq_wr(void *attr, uint32_t v)
{
	fk_log("doca_verbs_qp_init_attr_set_sq_wr attr=%s v=%u", FK_H(attr), v);
	FAIL("doca_verbs_qp_init_attr_set_sq_wr");
	struct fk_obj *o = fk_find(attr);
	if (o)
		o->u32a = v;
	return 0;
}

int doca_verbs_qp_init_attr_set_rq_wr(void *attr, uint32_t v)
{
	fk_log("doca_verbs_qp_init_attr_set_rq_wr attr=%s v=%u", FK_H(attr), v);
	FAIL("doca_verbs_qp_init_attr_set_rq_wr");
	struct fk_obj *o = fk_find(attr);
	if (o)
		o->u32b = v;
	return 0;
}

SETTER(doca_verbs_qp_init_attr_set_send_max_sges, uint32_t, attr, "%u")
int doca_verbs_qp_init_attr_set_receive_max_sges(void *attr, uint32_t v)
{
	fk_log("doca_verbs_qp_init_attr_set_receive_max_sges attr=%s v=%u", FK_H(attr), v);
	FAIL("doca_verbs_qp_init_attr_set_receive_max_sges");
	struct fk_obj *o = fk_find(attr);
	if (o)
		o->rsges = v;
	return 0;
}
SETTER(doca_verbs_qp_init_attr_set_max_inline_data, uint32_t, attr, "%u")
SETTER(doca_verbs_qp_init_attr_set_user_index, uint32_t, attr, "%u")
SETTER(doca_verbs_qp_init_attr_set_qp_type, uint32_t, attr, "%u")

int doca_verbs_qp_init_attr_set_external_umem(void *attr, void *umem, uint64_t offset)
{
	fk_log("doca_verbs_qp_init_attr_set_external_umem attr=%s umem=%s offset=%lu", FK_H(attr),
	       FK_H(umem), (unsigned long)offset);
	FAIL("doca_verbs_qp_init_attr_set_external_umem");
	return 0;
}

int doca_verbs_qp_init_attr_set_external_dbr_umem(void *attr, void *umem, uint64_t offset)
{
	fk_log("doca_verbs_qp_init_attr_set_external_dbr_umem attr=%s umem=%s offset=%lu",
	       FK_H(attr), FK_H(umem), (unsigned long)offset);
	FAIL("doca_verbs_qp_init_attr_set_external_dbr_umem");
	return 0;
}

// Resolved by package docasdk, never called: any parameter list will do.
int doca_verbs_qp_init_attr_get_external_umem(void *attr)
{
	fk_log("doca_verbs_qp_init_attr_get_external_umem attr=%s (never called)", FK_H(attr));
	return 0;
}

SETTER(doca_verbs_qp_init_attr_set_external_datapath_en, uint8_t, attr, "%u")
SET_HANDLE(doca_verbs_qp_init_attr_set_external_uar, attr, uar)

int doca_verbs_qp_init_attr_get_external_uar(void *attr)
{
	fk_log("doca_verbs_qp_init_attr_get_external_uar attr=%s (never called)", FK_H(attr));
	return 0;
}

int doca_verbs_qp_init_attr_set_qp_context(void *attr, void *ctx)
{
	fk_log("doca_verbs_qp_init_attr_set_qp_context attr=%s v=0x%lx", FK_H(attr), P(ctx));
	FAIL("doca_verbs_qp_init_attr_set_qp_context");
	struct fk_obj *o = fk_find(attr);
	if (o)
		o->qp_context = ctx;
	return 0;
}

void *doca_verbs_qp_init_attr_get_qp_context(void *attr)
{
	fk_log("doca_verbs_qp_init_attr_get_qp_context attr=%s", FK_H(attr));
	struct fk_obj *o = fk_find(attr);
	return o ? o->qp_context : NULL;
}

int doca_verbs_qp_init_attr_set_srq(void *attr, void *srq)
{
	fk_log("doca_verbs_qp_init_attr_set_srq attr=%s srq=0x%lx (never called)", FK_H(attr),
	       P(srq));
	return 0;
}

SETTER(doca_verbs_qp_init_attr_set_core_direct_master, uint8_t, attr, "%u")

int doca_verbs_qp_init_attr_set_send_dbr_mode(void *attr, int v)
{
	fk_log("doca_verbs_qp_init_attr_set_send_dbr_mode attr=%s v=%d", FK_H(attr), v);
	FAIL("doca_verbs_qp_init_attr_set_send_dbr_mode");
	struct fk_obj *o = fk_find(attr);
	if (o)
		o->send_dbr_mode = v;
	return 0;
}

int doca_verbs_qp_init_attr_get_send_dbr_mode(void *attr)
{
	fk_log("doca_verbs_qp_init_attr_get_send_dbr_mode attr=%s", FK_H(attr));
	struct fk_obj *o = fk_find(attr);
	return o ? o->send_dbr_mode : -1;
}

int doca_verbs_qp_init_attr_set_ordering_semantic(void *attr, int v)
{
	fk_log("doca_verbs_qp_init_attr_set_ordering_semantic attr=%s v=%d", FK_H(attr), v);
	FAIL("doca_verbs_qp_init_attr_set_ordering_semantic");
	struct fk_obj *o = fk_find(attr);
	if (o)
		o->ordering = v;
	return 0;
}

int doca_verbs_qp_init_attr_get_ordering_semantic(void *attr)
{
	fk_log("doca_verbs_qp_init_attr_get_ordering_semantic attr=%s", FK_H(attr));
	struct fk_obj *o = fk_find(attr);
	return o ? o->ordering : -1;
}

// ---- QP attributes ----

int doca_verbs_qp_attr_create(void **attr)
{
	return attr_create("doca_verbs_qp_attr_create", "qp_attr", attr);
}

DESTROYER(doca_verbs_qp_attr_destroy, attr)
SETTER(doca_verbs_qp_attr_set_next_state, int, attr, "%d")

int doca_verbs_qp_attr_set_current_state(void *attr, int v)
{
	fk_log("doca_verbs_qp_attr_set_current_state attr=%s v=%d", FK_H(attr), v);
	FAIL("doca_verbs_qp_attr_set_current_state");
	struct fk_obj *o = fk_find(attr);
	if (o)
		o->state = v;
	return 0;
}

int doca_verbs_qp_attr_get_current_state(void *attr)
{
	fk_log("doca_verbs_qp_attr_get_current_state attr=%s", FK_H(attr));
	struct fk_obj *o = fk_find(attr);
	return o ? o->state : -1;
}

SETTER(doca_verbs_qp_attr_set_path_mtu, int, attr, "%d")
SETTER(doca_verbs_qp_attr_set_rq_psn, uint32_t, attr, "%u")
SETTER(doca_verbs_qp_attr_set_sq_psn, uint32_t, attr, "%u")
SETTER(doca_verbs_qp_attr_set_dest_qp_num, uint32_t, attr, "%u")
SETTER(doca_verbs_qp_attr_set_allow_remote_write, int, attr, "%d")
SETTER(doca_verbs_qp_attr_set_allow_remote_read, int, attr, "%d")
SETTER(doca_verbs_qp_attr_set_atomic_mode, int, attr, "%d")
SET_HANDLE(doca_verbs_qp_attr_set_ah_attr, attr, ah)
SETTER(doca_verbs_qp_attr_set_pkey_index, uint16_t, attr, "%u")
SETTER(doca_verbs_qp_attr_set_port_num, uint16_t, attr, "%u")
SETTER(doca_verbs_qp_attr_set_ack_timeout, uint16_t, attr, "%u")
SETTER(doca_verbs_qp_attr_set_retry_cnt, uint16_t, attr, "%u")
SETTER(doca_verbs_qp_attr_set_rnr_retry, uint16_t, attr, "%u")
SETTER(doca_verbs_qp_attr_set_min_rnr_timer, uint16_t, attr, "%u")
SETTER(doca_verbs_qp_attr_set_max_rd_atomic, uint8_t, attr, "%u")
SETTER(doca_verbs_qp_attr_set_max_dest_rd_atomic, uint8_t, attr, "%u")

// ---- AH attributes ----

int doca_verbs_ah_attr_create(void *vctx, void **ah)
{
	fk_log("doca_verbs_ah_attr_create context=%s", FK_H(vctx));
	CREATE_FAIL("doca_verbs_ah_attr_create", ah);
	struct fk_obj *o = fk_new("ah_attr");
	*ah = o;
	fk_log("doca_verbs_ah_attr_create -> %s", FK_H(o));
	return 0;
}

DESTROYER(doca_verbs_ah_attr_destroy, ah)

int doca_verbs_ah_attr_set_gid(void *ah, struct doca_verbs_gid gid)
{
	char hex[33];
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", gid.raw[i]);
	fk_log("doca_verbs_ah_attr_set_gid ah=%s v=%s", FK_H(ah), hex);
	FAIL("doca_verbs_ah_attr_set_gid");
	return 0;
}

SETTER(doca_verbs_ah_attr_set_addr_type, int, ah, "%d")
SETTER(doca_verbs_ah_attr_set_dlid, uint32_t, ah, "%u")
SETTER(doca_verbs_ah_attr_set_sl, uint8_t, ah, "%u")
SETTER(doca_verbs_ah_attr_set_sgid_index, uint8_t, ah, "%u")
SETTER(doca_verbs_ah_attr_set_static_rate, uint8_t, ah, "%u")
SETTER(doca_verbs_ah_attr_set_hop_limit, uint8_t, ah, "%u")
SETTER(doca_verbs_ah_attr_set_traffic_class, uint8_t, ah, "%u")

// ---- QP ----

int doca_verbs_qp_create(void *vctx, void *init_attr, void **qp)
{
	fk_log("doca_verbs_qp_create context=%s attr=%s", FK_H(vctx), FK_H(init_attr));
	CREATE_FAIL("doca_verbs_qp_create", qp);
	struct fk_obj *a = fk_find(init_attr);
	struct fk_obj *o = fk_new("qp");
	if (a) {
		o->u32a = a->u32a;
		o->u32b = a->u32b;
		o->rsges = a->rsges;
		o->send_dbr_mode = a->send_dbr_mode;
		o->ordering = a->ordering;
	}
	*qp = o;
	fk_log("doca_verbs_qp_create -> %s", FK_H(o));
	return 0;
}

DESTROYER(doca_verbs_qp_destroy, qp)

int doca_verbs_qp_modify(void *qp, void *attr, int mask)
{
	fk_log("doca_verbs_qp_modify qp=%s attr=%s mask=0x%x", FK_H(qp), FK_H(attr), mask);
	FAIL("doca_verbs_qp_modify");
	return 0;
}

// Query reports RTS (3) in the attributes, the QP's send DBR mode and
// ordering semantic in the init attributes, and a canned mask.
int doca_verbs_qp_query(void *qp, void *attr, void *init_attr, int *mask)
{
	fk_log("doca_verbs_qp_query qp=%s attr=%s init_attr=%s mask=%s", FK_H(qp), FK_H(attr),
	       FK_H(init_attr), mask ? "out" : "NULL");
	if (mask)
		*mask = 0x5eed;
	FAIL("doca_verbs_qp_query");
	struct fk_obj *a = fk_find(attr);
	if (a)
		a->state = 3;
	struct fk_obj *q = fk_find(qp), *i = fk_find(init_attr);
	if (q && i) {
		i->send_dbr_mode = q->send_dbr_mode;
		i->ordering = q->ordering;
	}
	if (mask)
		*mask = 0x1234;
	return 0;
}

// Rings 0x7e0000000000 (SQ) and 0x7e0000100000 (RQ), sized as the init
// attributes asked, 64-byte receive WQEs.
void doca_verbs_qp_get_wq(void *qp, void **sq, uint32_t *sq_n, void **rq, uint32_t *rq_n,
			  uint32_t *rwqe_size)
{
	fk_log("doca_verbs_qp_get_wq qp=%s", FK_H(qp));
	struct fk_obj *o = fk_find(qp);
	*sq = (void *)(uintptr_t)0x7e0000000000UL;
	*sq_n = o ? o->u32a : 0;
	*rq = (void *)(uintptr_t)0x7e0000100000UL;
	*rq_n = o ? o->u32b : 0;
	// As mlx5: 16 bytes per scatter entry, rounded up to a power of two;
	// 64 when the caller set no receive SGE count.
	uint32_t rw = 64;
	if (o && o->rsges) {
		rw = 16;
		while (rw < 16 * o->rsges)
			rw <<= 1;
	}
	*rwqe_size = rw;
}

void *doca_verbs_qp_get_dbr_addr(void *qp)
{
	fk_log("doca_verbs_qp_get_dbr_addr qp=%s", FK_H(qp));
	return (void *)(uintptr_t)0x7e0000200000UL;
}

void *doca_verbs_qp_get_uar_addr(void *qp)
{
	fk_log("doca_verbs_qp_get_uar_addr qp=%s", FK_H(qp));
	return (void *)(uintptr_t)0x7c0000000800UL;
}

uint32_t doca_verbs_qp_get_qpn(void *qp)
{
	fk_log("doca_verbs_qp_get_qpn qp=%s", FK_H(qp));
	return 0x00fedcba;
}
