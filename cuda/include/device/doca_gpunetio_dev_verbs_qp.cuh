/*
 * GPUNetIO verbs low-level send-queue API: WQE slot reservation and in-order readiness, doorbell
 * record and doorbell writes, BlueFlame and CPU-proxy rings, the submit family and every WQE
 * builder.
 *
 * Index model: 64-bit software indexes (sq_rsvd_index, sq_ready_index, sq_wqe_pi) that never
 * wrap; the NIC sees only their low 16 bits (ctrl segment, doorbell, DBR, CQE wqe_counter).
 * Submit order: WQE stores -> release fence -> in-order readiness -> doorbell (for GPU_SM_DB,
 * under the per-QP lock: fence, DBR, fence, DB; cuda/README.md, "The doorbell order").
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_QP_H
#define DOCA_GPUNETIO_DEV_VERBS_QP_H

#include "doca_gpunetio_dev_verbs_cq.cuh"

/* The descriptor structs are packed but 8-byte aligned with naturally aligned fields. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waddress-of-packed-member"
#endif

/* ---- Storage and pointers ------------------------------------------------------------------ */

/* Stores 16 bytes (val[0], val[1]) with one weak, cache-streaming vector store; ptr 16B aligned. */
__device__ static __forceinline__ void doca_gpu_dev_verbs_store_wqe_seg(uint64_t *ptr, uint64_t *val)
{
	doca_priv_gpu_dev_verbs_st_cs_v2(ptr, val[0], val[1]);
}

__device__ static __forceinline__ struct doca_gpu_dev_verbs_wqe *doca_gpu_dev_verbs_get_wqe_ptr(
	struct doca_gpu_dev_verbs_qp *qp, uint16_t wqe_idx)
{
	const uint16_t mask = doca_priv_gpu_dev_verbs_ldg(&qp->sq_wqe_mask);
	uint8_t *base = doca_priv_gpu_dev_verbs_ldg_ptr(&qp->sq_wqe_daddr);
	return (struct doca_gpu_dev_verbs_wqe *)(base + ((uintptr_t)(wqe_idx & mask) << DOCA_GPUNETIO_IB_MLX5_WQE_SQ_SHIFT));
}

/* The 16-byte receive WQE (one scatter entry) of RQ index wqe_idx (DOCA SDK 3.3). */
__device__ static __forceinline__ struct mlx5_wqe_data_seg *doca_gpu_dev_verbs_get_rwqe_ptr(struct doca_gpu_dev_verbs_qp *qp,
											    uint16_t wqe_idx)
{
	const uint16_t mask = (uint16_t)doca_priv_gpu_dev_verbs_ldg(&qp->rq_wqe_mask);
	uint8_t *base = doca_priv_gpu_dev_verbs_ldg_ptr(&qp->rq_wqe_daddr);
	return (struct mlx5_wqe_data_seg *)(base + ((uintptr_t)(wqe_idx & mask) << DOCA_GPUNETIO_MLX5_WQE_RQ_SHIFT));
}

/* (wqe_idx + increment) modulo 2^16, the NIC's view of a WQE index (DOCA SDK 3.3). */
__device__ static __forceinline__ uint32_t doca_gpu_dev_verbs_wqe_idx_inc_mask(uint32_t wqe_idx, uint32_t increment)
{
	return (wqe_idx + increment) & DOCA_GPUNETIO_VERBS_WQE_PI_MASK;
}

/* Internal: "at least GPU scope". */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope>
struct doca_priv_gpu_dev_verbs_at_least_gpu {
	static constexpr enum doca_gpu_dev_verbs_sync_scope value =
		(sync_scope <= DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU) ? sync_scope : DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU;
};

/* ---- Reservation and readiness ------------------------------------------------------------- */

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ void doca_gpu_dev_verbs_wait_until_slot_available(struct doca_gpu_dev_verbs_qp *qp,
										     uint64_t wqe_idx)
{
	if constexpr (qp_type == DOCA_GPUNETIO_VERBS_QP_RQ) {
		/* A receive slot is free once the receive that used it a lap earlier completed, which
		 * takes a message from the peer. All 32 bits of rq_wqe_num (the SDK reads 16). */
		const uint32_t rq_wqe_num = doca_priv_gpu_dev_verbs_ldg(&qp->rq_wqe_num);
		if (wqe_idx >= rq_wqe_num)
			(void)doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, qp_type>(&qp->cq_rq, wqe_idx - rq_wqe_num);
	} else {
		const uint16_t sq_wqe_num = doca_priv_gpu_dev_verbs_ldg(&qp->sq_wqe_num);
		if (wqe_idx >= sq_wqe_num)
			(void)doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, qp_type>(&qp->cq_sq, wqe_idx - sq_wqe_num);
	}
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ uint64_t doca_gpu_dev_verbs_reserve_wq_slots(
	struct doca_gpu_dev_verbs_qp *qp, uint32_t count, uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	uint64_t *rsvd = qp_type == DOCA_GPUNETIO_VERBS_QP_RQ ? (uint64_t *)&qp->rq_rsvd_index : (uint64_t *)&qp->sq_rsvd_index;
	const uint64_t base = doca_gpu_dev_verbs_atomic_add<uint64_t, resource_sharing_mode>(rsvd, count);
	if (!(code_opt & DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_AVAILABILITY_CHECK))
		doca_gpu_dev_verbs_wait_until_slot_available<resource_sharing_mode, qp_type>(qp, base + count - 1);
	return base;
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_ready_mode ready_mode = DOCA_GPUNETIO_VERBS_READY_MODE_DEFAULT>
__device__ static __forceinline__ void doca_gpu_dev_common_mark_wqes_ready(uint64_t &ready_index, uint64_t from_wqe_idx,
									    uint64_t to_wqe_idx)
{
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		ready_index = to_wqe_idx + 1;
		return;
	}
	const bool cta = resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA;
	/* CTA: DEFAULT means LD_ST. GPU: DEFAULT means ATOMIC_CAS. */
	const bool use_cas = cta ? (ready_mode == DOCA_GPUNETIO_VERBS_READY_MODE_ATOMIC_CAS)
				 : (ready_mode != DOCA_GPUNETIO_VERBS_READY_MODE_LD_ST);
	if (cta)
		doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA>();
	else
		doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
	if (use_cas) {
		while (doca_priv_gpu_dev_verbs_cas64<resource_sharing_mode>(&ready_index, from_wqe_idx, to_wqe_idx + 1) !=
		       from_wqe_idx)
			doca_priv_gpu_dev_verbs_spin_hint();
		if (cta)
			doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA>();
		else
			doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
	} else {
		while (doca_gpu_dev_verbs_load_relaxed<resource_sharing_mode>(&ready_index) != from_wqe_idx)
			doca_priv_gpu_dev_verbs_spin_hint();
		if (cta)
			doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA>();
		else
			doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
		doca_priv_gpu_dev_verbs_st_relaxed64<resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA>(
			&ready_index, to_wqe_idx + 1);
	}
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ,
	  enum doca_gpu_dev_verbs_qp_ready_mode ready_mode = DOCA_GPUNETIO_VERBS_READY_MODE_ATOMIC_CAS>
__device__ static __forceinline__ void doca_gpu_dev_verbs_mark_wqes_ready(struct doca_gpu_dev_verbs_qp *qp,
									   uint64_t from_wqe_idx, uint64_t to_wqe_idx)
{
	uint64_t *ready = qp_type == DOCA_GPUNETIO_VERBS_QP_RQ ? (uint64_t *)&qp->rq_ready_index : (uint64_t *)&qp->sq_ready_index;
	doca_gpu_dev_common_mark_wqes_ready<resource_sharing_mode, ready_mode>(*ready, from_wqe_idx, to_wqe_idx);
}

/* ---- Doorbell record ----------------------------------------------------------------------- */

__device__ static __forceinline__ __be32 doca_gpu_dev_verbs_prepare_dbr(uint32_t prod_index)
{
	return (__be32)doca_gpu_dev_verbs_bswap32(prod_index & DOCA_GPUNETIO_VERBS_WQE_PI_MASK);
}

__device__ static __forceinline__ void doca_gpu_dev_common_update_dbr(uint32_t *dbrec, uint32_t prod_index)
{
	doca_priv_gpu_dev_verbs_store_relaxed_sys32(dbrec, (uint32_t)doca_gpu_dev_verbs_prepare_dbr(prod_index));
}

template <enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_update_dbr(struct doca_gpu_dev_verbs_qp *qp,
									   uint32_t prod_index)
{
	/* The RQ's record is word 0 of the QP's doorbell record, the SQ's word 1. */
	__be32 *dbrec = qp_type == DOCA_GPUNETIO_VERBS_QP_RQ ? doca_priv_gpu_dev_verbs_ldg_ptr(&qp->rq_dbrec)
							     : doca_priv_gpu_dev_verbs_ldg_ptr(&qp->sq_dbrec);
	doca_gpu_dev_common_update_dbr((uint32_t *)dbrec, prod_index);
}

template <enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ void doca_gpu_dev_verbs_update_dbr(struct doca_gpu_dev_verbs_qp *qp,
								      uint32_t prod_index,
								      uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
#ifdef DOCA_GPUNETIO_VERBS_HAS_ASYNC_STORE_RELEASE
	if (code_opt & DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_ASYNC_STORE_RELEASE) {
		__be32 *dbrec = qp_type == DOCA_GPUNETIO_VERBS_QP_RQ ? doca_priv_gpu_dev_verbs_ldg_ptr(&qp->rq_dbrec)
								     : doca_priv_gpu_dev_verbs_ldg_ptr(&qp->sq_dbrec);
		doca_gpu_dev_verbs_async_store_release((uint32_t *)dbrec,
						       (uint32_t)doca_gpu_dev_verbs_prepare_dbr(prod_index));
		return;
	}
#else
	(void)code_opt;
#endif
	/* The NIC reads the receive record on its own: it observes at system scope. */
	if (qp_type == DOCA_GPUNETIO_VERBS_QP_RQ)
		doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
	else
		doca_gpu_dev_verbs_fence_release<sync_scope>();
	doca_priv_gpu_dev_verbs_update_dbr<qp_type>(qp, prod_index);
}

/* ---- Doorbell ---------------------------------------------------------------------------------- */

/* Bytes 0..3 = BE32(pi << 8) (bits 16..23 of pi spill into the opmod byte, as in DOCA),
 * bytes 4..7 = qpn_ds verbatim. */
__device__ static __forceinline__ __be64 doca_gpu_dev_common_prepare_db(uint32_t qpn_ds, uint64_t prod_index)
{
	const uint32_t hi = doca_gpu_dev_verbs_bswap32((uint32_t)(prod_index << DOCA_GPUNETIO_VERBS_WQE_IDX_SHIFT));
	return (__be64)(((uint64_t)qpn_ds << 32) | (uint64_t)hi);
}

template <enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>
__device__ static __forceinline__ void doca_gpu_dev_common_write_db(uint64_t *db_ptr, uint64_t db_val,
								     uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
#ifdef DOCA_GPUNETIO_VERBS_HAS_ASYNC_STORE_RELEASE
	if (code_opt & DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_ASYNC_STORE_RELEASE) {
		doca_gpu_dev_verbs_async_store_release(db_ptr, db_val);
		return;
	}
#else
	(void)code_opt;
#endif
	doca_gpu_dev_verbs_fence_release<sync_scope>();
	doca_priv_gpu_dev_verbs_store_db64(db_ptr, db_val);
}

template <enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>
__device__ static __forceinline__ void doca_gpu_dev_common_ring_db(uint64_t *db_ptr, uint32_t qpn_ds, uint64_t prod_index,
								    uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	doca_gpu_dev_common_write_db<sync_scope>(db_ptr, (uint64_t)doca_gpu_dev_common_prepare_db(qpn_ds, prod_index),
						 code_opt);
}

__device__ static __forceinline__ __be64 doca_gpu_dev_verbs_prepare_db(struct doca_gpu_dev_verbs_qp *qp,
									uint64_t prod_index)
{
	return doca_gpu_dev_common_prepare_db(doca_priv_gpu_dev_verbs_ldg(&qp->sq_num_shift8_be), prod_index);
}

/* Code options as the SDK's template parameter or as the open-source argument (or both). */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_gpu_code_opt tmpl_code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>
__device__ static __forceinline__ void doca_gpu_dev_verbs_ring_db(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index,
								   uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	code_opt |= (uint32_t)tmpl_code_opt;
	uint64_t *db = doca_priv_gpu_dev_verbs_ldg_ptr(&qp->sq_db);
	doca_gpu_dev_common_write_db<sync_scope>(db, (uint64_t)doca_gpu_dev_verbs_prepare_db(qp, prod_index), code_opt);
}

/* Internal: where and what a GPU_SM_DB submit writes. Loaded before the fences, so that no
 * read of the QP descriptor sits between a fence and the store it orders. */
struct doca_priv_gpu_dev_verbs_db_targets {
	uint32_t *dbrec;
	uint64_t *db;
	uint32_t dbr_val;
	uint64_t db_val;
};

__device__ static __forceinline__ struct doca_priv_gpu_dev_verbs_db_targets doca_priv_gpu_dev_verbs_load_db_targets(
	struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index)
{
	struct doca_priv_gpu_dev_verbs_db_targets t;
	t.dbrec = (uint32_t *)doca_priv_gpu_dev_verbs_ldg_ptr(&qp->sq_dbrec);
	t.db = doca_priv_gpu_dev_verbs_ldg_ptr(&qp->sq_db);
	t.dbr_val = (uint32_t)doca_gpu_dev_verbs_prepare_dbr((uint32_t)prod_index);
	t.db_val = (uint64_t)doca_gpu_dev_verbs_prepare_db(qp, prod_index);
	return t;
}

/* Internal: the doorbell-record and doorbell writes of a GPU_SM_DB submit, in the
 * order of every mlx5 provider (rdma-core, the kernel, DPDK): a release fence at first_scope (WQEs
 * before the record), the DBR, a release fence at second_scope (record before the doorbell) and one
 * doorbell. The reference rings first and again after the DBR (DB, DBR, fence, DB): one doorbell
 * write per submit instead of two halves the PCIe writes, which is what limits a full GPU of
 * submitters. The NIC never sees a doorbell before the DBR that covers it, and the DBR never
 * covers unwritten WQEs. With ASYNC_STORE_RELEASE (sm_100+) both are release stores instead. */
template <enum doca_gpu_dev_verbs_sync_scope first_scope, enum doca_gpu_dev_verbs_sync_scope second_scope>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_write_dbr_db(const struct doca_priv_gpu_dev_verbs_db_targets &t,
									     uint32_t code_opt)
{
#ifdef DOCA_GPUNETIO_VERBS_HAS_ASYNC_STORE_RELEASE
	if (code_opt & DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_ASYNC_STORE_RELEASE) {
		doca_gpu_dev_verbs_async_store_release(t.dbrec, t.dbr_val);
		doca_gpu_dev_verbs_async_store_release(t.db, t.db_val);
		return;
	}
#else
	(void)code_opt;
#endif
	doca_gpu_dev_verbs_fence_release<first_scope>();
	doca_priv_gpu_dev_verbs_store_relaxed_sys32(t.dbrec, t.dbr_val);
	doca_gpu_dev_verbs_fence_release<second_scope>();
	doca_priv_gpu_dev_verbs_store_db64(t.db, t.db_val);
}

/* ---- The submit core ----------------------------------------------------------------------- */

/* Internal: the doorbell core of every GPU_SM_DB submit, under both the low-level submit_db and the
 * one-sided API (there after the in-order publication). EXCLUSIVE QP: old is sq_wqe_pi as the caller
 * read it (nobody else changes it); the WQE-to-DBR fence is issued before the compare, so the PI
 * load and the WQE stores drain together (a submit that finds nothing to ring pays that fence).
 * The lock word is not written: only the one thread that owns an exclusive QP submits on it, and
 * no other path reads the word (DOCA sets it to 1 and back to 0 around the doorbell; dropping those
 * two stores took ll.thread.b32 at 132x256 from 6150-6210 to 6368 Mops/s on the H100).
 * Posting-rate candidate, for measurement only (bench/postrate, scripts/post-rate.sh
 * --candidates; cuda/README.md): GDAKI_DEV_CANDIDATE_EXCL_FENCE_AFTER_COMPARE issues the first
 * fence after the compare, as DOCA does, keeping the order fence, DBR, fence, DB. */
template <enum doca_gpu_dev_verbs_sync_scope first_scope, enum doca_gpu_dev_verbs_sync_scope second_scope>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_db_core_excl(struct doca_gpu_dev_verbs_qp *qp,
									     uint64_t prod_index, uint64_t old,
									     const struct doca_priv_gpu_dev_verbs_db_targets &t,
									     uint32_t code_opt)
{
#if defined(GDAKI_DEV_CANDIDATE_EXCL_FENCE_AFTER_COMPARE)
	/* write_dbr_db leaves the fences out itself with ASYNC_STORE_RELEASE. */
	if (old < prod_index) {
		qp->sq_wqe_pi = prod_index;
		doca_priv_gpu_dev_verbs_write_dbr_db<first_scope, second_scope>(t, code_opt);
	}
#else
	bool async = false;
#ifdef DOCA_GPUNETIO_VERBS_HAS_ASYNC_STORE_RELEASE
	async = (code_opt & DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_ASYNC_STORE_RELEASE) != 0;
#endif
	if (!async)
		doca_gpu_dev_verbs_fence_release<first_scope>();
	if (old < prod_index) {
		qp->sq_wqe_pi = prod_index;
		doca_priv_gpu_dev_verbs_write_dbr_db<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_THREAD, second_scope>(t, code_opt);
	}
#endif
}

/* Internal: one try at the QP lock of a shared QP: 0 when taken. Candidate
 * GDAKI_DEV_CANDIDATE_SHARED_ACQUIRE_CAS (measurement only) gives this CAS, and the readiness CAS of
 * the one-sided API, acquire semantics instead of the acquire fence the core issues after them. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_lock_try(int *lock)
{
#if defined(GDAKI_DEV_CANDIDATE_SHARED_ACQUIRE_CAS)
	return doca_priv_gpu_dev_verbs_cas_acquire<resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA>(lock, 0,
															 1);
#else
	return doca_priv_gpu_dev_verbs_cas32<resource_sharing_mode>(lock, 0, 1);
#endif
}

/* Internal: the same core for a CTA/GPU-shared QP. locked is the result of a lock compare-and-swap
 * the caller already issued (the one-sided API issues it next to its readiness CAS, so the two
 * round trips overlap). The lock is taken, or the submit leaves once another thread has announced
 * a PI at least as high (it would ring nothing under the lock; under contention this leaves one
 * doorbell triple per batch). One acquire fence after the lock orders everything the caller did
 * before (its readiness CAS included) before the doorbell stores. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode, enum doca_gpu_dev_verbs_sync_scope first_scope,
	  enum doca_gpu_dev_verbs_sync_scope second_scope>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_db_core_shared(struct doca_gpu_dev_verbs_qp *qp,
									       uint64_t prod_index, int locked,
									       const struct doca_priv_gpu_dev_verbs_db_targets &t,
									       uint32_t code_opt)
{
	while (locked != 0) {
		if (doca_gpu_dev_verbs_load_relaxed<resource_sharing_mode>(&qp->sq_wqe_pi) >= prod_index)
			return;
		doca_priv_gpu_dev_verbs_spin_hint();
		locked = doca_priv_gpu_dev_verbs_lock_try<resource_sharing_mode>(&qp->sq_lock);
	}
#if !defined(GDAKI_DEV_CANDIDATE_SHARED_ACQUIRE_CAS)
	if (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA)
		doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA>();
	else
		doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
#endif
	const uint64_t old = doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&qp->sq_wqe_pi, prod_index);
	if (old < prod_index)
		doca_priv_gpu_dev_verbs_write_dbr_db<first_scope, second_scope>(t, code_opt);
	doca_gpu_dev_verbs_unlock<resource_sharing_mode>(&qp->sq_lock);
}

/* ---- BlueFlame and proxy rings --------------------------------------------------------------- */

#ifdef DOCA_GPUNETIO_VERBS_HAS_TMA_COPY
/* Pushes one 64-byte WQE from shared memory (16-byte aligned) into the BlueFlame register with a
 * bulk copy, then waits until the source was read so the buffer can be reused (DOCA neither
 * converts the address to a shared one nor waits). With a pre-12.0 assembler the copy is eight
 * 8-byte MMIO stores instead. */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>
__device__ static __forceinline__ void doca_gpu_dev_verbs_ring_bf(struct doca_gpu_dev_verbs_qp *qp,
								   struct doca_gpu_dev_verbs_wqe *wqe_ptr)
{
	uint64_t *db = doca_priv_gpu_dev_verbs_ldg_ptr(&qp->sq_db);
	DOCA_GPUNETIO_VERBS_ASSERT(doca_gpu_dev_verbs_isaligned((void *)wqe_ptr, 16));
	doca_gpu_dev_verbs_fence_release<sync_scope>();
#if defined(DOCA_GPUNETIO_VERBS_PRIV_TMA_PTX)
	doca_priv_gpu_dev_verbs_tma_copy64(db, (const void *)wqe_ptr);
#else
	const uint64_t *words = (const uint64_t *)wqe_ptr;
	for (int i = 0; i < 8; i++)
		doca_priv_gpu_dev_verbs_store_db64(db + i, words[i]);
#endif
}
#endif

/* Warp-collective BlueFlame: lanes 0..7 store one 8-byte word each. All 32 lanes must call. */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>
__device__ static __forceinline__ void doca_gpu_dev_verbs_ring_bf_warp(struct doca_gpu_dev_verbs_qp *qp,
									struct doca_gpu_dev_verbs_wqe *wqe_ptr)
{
	const unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	if (lane == 0)
		doca_gpu_dev_verbs_fence_release<sync_scope>();
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	if (lane < 8) {
		uint64_t *db = qp->sq_db;
		doca_priv_gpu_dev_verbs_store_db64(db + lane, ((uint64_t *)wqe_ptr)[lane]); /* an MMIO store, never merged */
	}
}

/* Writes the new PI into the 8-byte host mailbox (EXCLUSIVE: store twice; shared: fetch-max). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __forceinline__ void doca_gpu_dev_verbs_ring_proxy(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_idx)
{
	uint64_t *mailbox = doca_priv_gpu_dev_verbs_ldg_ptr(&qp->sq_db);
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		doca_priv_gpu_dev_verbs_store_relaxed_sys64(mailbox, prod_idx);
		doca_priv_gpu_dev_verbs_write_once(mailbox, prod_idx);
	} else {
		doca_priv_gpu_dev_verbs_red_max_sys64(mailbox, prod_idx);
	}
	DOCA_PRIV_GPU_DEV_VERBS_HOST_HOOK(mailbox, prod_idx, 8);
}

/* ---- NIC handler values ----------------------------------------------------------------------- */

/* Internal: the NIC handler an exported QP carries, in this build's numbering. Our host writes
 * the open-source values (GPU_SM_BF 6, GPU_SM_NO_DBR 10, CPU_PROXY_NO_DBR 9), the SDK's host its
 * own (3, 4, 5). Open-source builds take the value as it is; GDAKI_DOCA_FAMILY_SDK builds map the
 * open-source values onto the SDK's, so either host's QP dispatches right. */
__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_nic_handler_value(int h)
{
#if defined(GDAKI_DOCA_FAMILY_SDK)
	switch (h) {
	case DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_GPU_SM | DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_BF:
		return DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF;
	case DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_GPU_SM | DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_NO_DBR:
		return DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR;
	case DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_CPU_PROXY | DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_NO_DBR:
		return DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY_NO_DBR;
	default:
		return h;
	}
#else
	return h;
#endif
}

__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_qp_nic_handler(struct doca_gpu_dev_verbs_qp *qp)
{
	return doca_priv_gpu_dev_verbs_nic_handler_value(doca_priv_gpu_dev_verbs_ldg_int((const int *)&qp->nic_handler));
}

/* Extension: the NIC handler of an exported QP as this build's enumerators number it (see
 * doca_priv_gpu_dev_verbs_nic_handler_value): compare it with DOCA_GPUNETIO_VERBS_NIC_HANDLER_*
 * instead of qp->nic_handler when the QP may come from the other family's host. */
__device__ static __forceinline__ enum doca_gpu_dev_verbs_nic_handler gdaki_dev_qp_nic_handler(
	struct doca_gpu_dev_verbs_qp *qp)
{
	return (enum doca_gpu_dev_verbs_nic_handler)doca_priv_gpu_dev_verbs_qp_nic_handler(qp);
}

/* Internal: stops the build of a submit that names a NIC handler the headers cannot honour. */
#define DOCA_PRIV_GPU_DEV_VERBS_REFUSE_NIC_HANDLER(h)                                                       \
	static_assert((h) != DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY_FREE_FLOW,                            \
		      "DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY_FREE_FLOW (ncclx) is not supported by these " \
		      "headers: use CPU_PROXY or a GPU_SM handler")

/* ---- Submit family ---------------------------------------------------------------------------- */

/* Internal: the submit of a receive queue, whatever the NIC handler: receives have no doorbell
 * register, the NIC reads the RQ record (word 0 of the QP's doorbell record) when a message comes.
 * The record advances monotonically (under rq_lock when shared) and after a system-scope release
 * fence: the WQEs before it are visible to the NIC (the SDK fences at CTA/GPU scope or not at all,
 * and sends proxy-handler receives to the SQ's mailbox). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_submit_rq(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index,
									  uint32_t code_opt)
{
	if (code_opt & DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_DB_RINGING)
		return;
	uint32_t *dbrec = (uint32_t *)doca_priv_gpu_dev_verbs_ldg_ptr(&qp->rq_dbrec);
	const uint32_t val = (uint32_t)doca_gpu_dev_verbs_prepare_dbr((uint32_t)prod_index);
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		if (qp->rq_wqe_pi >= prod_index)
			return;
		qp->rq_wqe_pi = prod_index;
		doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		doca_priv_gpu_dev_verbs_store_relaxed_sys32(dbrec, val);
	} else {
		doca_gpu_dev_verbs_lock<resource_sharing_mode>(&qp->rq_lock);
		const uint64_t old = doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&qp->rq_wqe_pi, prod_index);
		if (old < prod_index) {
			doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
			doca_priv_gpu_dev_verbs_store_relaxed_sys32(dbrec, val);
		}
		doca_gpu_dev_verbs_unlock<resource_sharing_mode>(&qp->rq_lock);
	}
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline void doca_gpu_dev_verbs_submit_db_no_dbr(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index,
								   uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	if constexpr (qp_type == DOCA_GPUNETIO_VERBS_QP_RQ) {
		doca_priv_gpu_dev_verbs_submit_rq<resource_sharing_mode>(qp, prod_index, code_opt);
		return;
	}
	if (code_opt & DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_DB_RINGING)
		return;
	const uint64_t old =
		doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode, true>(&qp->sq_wqe_pi, prod_index);
	if (old < prod_index)
		doca_gpu_dev_verbs_ring_db<sync_scope>(qp, prod_index, code_opt);
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ void doca_gpu_dev_verbs_submit_db(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index,
								     uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	if constexpr (qp_type == DOCA_GPUNETIO_VERBS_QP_RQ) {
		doca_priv_gpu_dev_verbs_submit_rq<resource_sharing_mode>(qp, prod_index, code_opt);
		return;
	}
	if (code_opt & DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_DB_RINGING)
		return;
	constexpr enum doca_gpu_dev_verbs_sync_scope second = doca_priv_gpu_dev_verbs_at_least_gpu<sync_scope>::value;
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		const uint64_t old = qp->sq_wqe_pi;
		doca_priv_gpu_dev_verbs_db_core_excl<sync_scope, second>(
			qp, prod_index, old, doca_priv_gpu_dev_verbs_load_db_targets(qp, prod_index), code_opt);
	} else {
		const struct doca_priv_gpu_dev_verbs_db_targets t = doca_priv_gpu_dev_verbs_load_db_targets(qp, prod_index);
		const int locked = doca_priv_gpu_dev_verbs_lock_try<resource_sharing_mode>(&qp->sq_lock);
		doca_priv_gpu_dev_verbs_db_core_shared<resource_sharing_mode, sync_scope, second>(qp, prod_index, locked, t,
												  code_opt);
	}
}

/* SDK form: code options as the third template parameter; the open-source form: as the last
 * argument. The submit uses both (template | argument). BF_UNRELIABLE changes nothing: the
 * doorbell record and the doorbell after the BlueFlame copy are always written. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_gpu_code_opt tmpl_code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>
__device__ static __forceinline__ void doca_gpu_dev_verbs_submit_bf(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index,
								     struct doca_gpu_dev_verbs_wqe *smem_wqe,
								     uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	code_opt |= (uint32_t)tmpl_code_opt;
#ifdef DOCA_GPUNETIO_VERBS_HAS_TMA_COPY
	doca_gpu_dev_verbs_lock<resource_sharing_mode>(&qp->sq_lock);
	const uint64_t old = (uint64_t)doca_gpu_dev_verbs_atomic_max<unsigned long long, resource_sharing_mode, true>(
		(unsigned long long *)&qp->sq_wqe_pi, (unsigned long long)prod_index);
	if (old < prod_index) {
		doca_gpu_dev_verbs_ring_bf<sync_scope>(qp, smem_wqe);
		doca_priv_gpu_dev_verbs_update_dbr(qp, (uint32_t)prod_index);
		doca_gpu_dev_verbs_ring_db<doca_priv_gpu_dev_verbs_at_least_gpu<sync_scope>::value>(qp, prod_index,
												     code_opt);
	}
	doca_gpu_dev_verbs_unlock<resource_sharing_mode>(&qp->sq_lock);
#else
	(void)smem_wqe;
	doca_gpu_dev_verbs_submit_db<resource_sharing_mode, sync_scope, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, prod_index,
												    code_opt);
#endif
}

/* Warp-collective BlueFlame submit: all 32 lanes call; lanes 0..7 push the WQE. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_gpu_code_opt tmpl_code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>
__device__ static __forceinline__ void doca_gpu_dev_verbs_submit_bf_warp(struct doca_gpu_dev_verbs_qp *qp,
									  uint64_t prod_index,
									  struct doca_gpu_dev_verbs_wqe *wqe,
									  uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	code_opt |= (uint32_t)tmpl_code_opt;
	const unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	unsigned long long old = 0;
	if (lane == 0) {
		doca_gpu_dev_verbs_lock<resource_sharing_mode>(&qp->sq_lock);
		old = doca_gpu_dev_verbs_atomic_max<unsigned long long, resource_sharing_mode, true>(
			(unsigned long long *)&qp->sq_wqe_pi, (unsigned long long)prod_index);
	}
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	old = DOCA_PRIV_GPU_DEV_VERBS_SHFL0(old);
	if (old < prod_index) {
		doca_gpu_dev_verbs_ring_bf_warp(qp, wqe);
		DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
		if (lane == 0) {
			doca_priv_gpu_dev_verbs_update_dbr(qp, (uint32_t)prod_index);
			doca_gpu_dev_verbs_ring_db<doca_priv_gpu_dev_verbs_at_least_gpu<sync_scope>::value>(
				qp, prod_index, code_opt);
		}
	}
	if (lane == 0)
		doca_gpu_dev_verbs_unlock<resource_sharing_mode>(&qp->sq_lock);
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>
__device__ static __forceinline__ void doca_gpu_dev_verbs_submit_proxy(struct doca_gpu_dev_verbs_qp *qp,
									uint64_t prod_index,
									uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	/* The host is a system-scope observer of the mailbox (DOCA fences at GPU scope). */
	(void)sync_scope;
	doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
	doca_gpu_dev_verbs_ring_proxy<resource_sharing_mode>(qp, prod_index);
	if (code_opt & DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_CPU_PROXY_UPDATE_PI)
		doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode, true>(&qp->sq_wqe_pi, prod_index);
}

/* Dispatcher. GPU_SM_BF (template or runtime) is handled like GPU_SM_DB (DOCA sends it down the
 * proxy path, which writes a PI into the BlueFlame register). A receive queue (QP_RQ) is submitted
 * through its record with every handler. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ void doca_gpu_dev_verbs_submit(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index,
								  uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	DOCA_PRIV_GPU_DEV_VERBS_REFUSE_NIC_HANDLER(nic_handler);
	if constexpr (qp_type == DOCA_GPUNETIO_VERBS_QP_RQ) {
		(void)sync_scope;
		doca_priv_gpu_dev_verbs_submit_rq<resource_sharing_mode>(qp, prod_index, code_opt);
		return;
	}
	if (nic_handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB ||
	    nic_handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF) {
		doca_gpu_dev_verbs_submit_db<resource_sharing_mode, sync_scope, qp_type>(qp, prod_index, code_opt);
		return;
	}
	const int h = doca_priv_gpu_dev_verbs_qp_nic_handler(qp);
	if (h == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR)
		doca_gpu_dev_verbs_submit_db_no_dbr<resource_sharing_mode, sync_scope, qp_type>(qp, prod_index, code_opt);
	else if (nic_handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO &&
		 (h == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB || h == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF))
		doca_gpu_dev_verbs_submit_db<resource_sharing_mode, sync_scope, qp_type>(qp, prod_index, code_opt);
	else
		doca_gpu_dev_verbs_submit_proxy<resource_sharing_mode, sync_scope>(qp, prod_index, code_opt);
}

/* ---- WQE builders (mlx5 byte layouts; bytes a builder does not set are 0) -------------------- */

/* Internal: the 16-byte quarter q (0..3) of a WQE slot. */
__device__ static __forceinline__ uint64_t *doca_priv_gpu_dev_verbs_wqe_q(struct doca_gpu_dev_verbs_wqe *wqe, int q)
{
	return (uint64_t *)((uint8_t *)wqe + 16 * q);
}

/* Internal: a ctrl segment from its words: opmod_idx_opcode (native), qpn_ds as stored (big
 * endian), signature 0, dci 0, fm_ce_se from ctrl_flags, imm verbatim. */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_seg_ctrl_words(uint64_t *seg, uint32_t opmod_idx_opcode,
									       uint32_t qpn_ds_be, uint32_t ctrl_flags,
									       uint32_t imm)
{
	seg[0] = ((uint64_t)qpn_ds_be << 32) | (uint64_t)doca_gpu_dev_verbs_bswap32(opmod_idx_opcode);
	seg[1] = ((uint64_t)imm << 32) | ((uint64_t)(ctrl_flags & 0xff) << 24);
}

/* Internal: the ctrl segment of opcode at WQE index wqe_idx; qpn_ds_be is the QP's precomputed
 * big-endian qpn_ds word for the WQE's size (sq_num_shift8_be_Nds). */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_seg_ctrl(uint64_t *seg, uint16_t wqe_idx, uint32_t opcode,
									 const uint32_t *qpn_ds_be, uint32_t ctrl_flags,
									 uint32_t imm)
{
	const uint32_t opmod_idx_opcode = ((uint32_t)wqe_idx << DOCA_GPUNETIO_VERBS_WQE_IDX_SHIFT) | opcode;
	doca_priv_gpu_dev_verbs_seg_ctrl_words(seg, opmod_idx_opcode, doca_priv_gpu_dev_verbs_ldg(qpn_ds_be), ctrl_flags,
					       imm);
}

/* Internal: the ctrl segment of opcode at WQE index wqe_idx for a WQE of ds 16-byte segments
 * where the QP has no precomputed word for that size. */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_seg_ctrl_ds(uint64_t *seg, struct doca_gpu_dev_verbs_qp *qp,
									    uint16_t wqe_idx, uint32_t opcode, uint32_t ds,
									    uint32_t ctrl_flags)
{
	const uint32_t opmod_idx_opcode = ((uint32_t)wqe_idx << DOCA_GPUNETIO_VERBS_WQE_IDX_SHIFT) | opcode;
	doca_priv_gpu_dev_verbs_seg_ctrl_words(
		seg, opmod_idx_opcode, doca_gpu_dev_verbs_bswap32(doca_priv_gpu_dev_verbs_ldg(&qp->sq_num_shift8) | ds),
		ctrl_flags, 0);
}

/* Internal: stores the 16-byte segments, in order, into quarters 0, 1, ... of the WQE. */
template <typename... Seg>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_store_segs(struct doca_gpu_dev_verbs_wqe *wqe, Seg... segs)
{
	int q = 0;
	(doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_wqe_q(wqe, q++), segs), ...);
}

/* Internal: a data segment or raddr segment: BE32 word, verbatim key, BE64 address. */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_seg_addr(uint64_t *seg, uint32_t word_native,
									 uint32_t key, uint64_t addr)
{
	seg[0] = ((uint64_t)key << 32) | (uint64_t)doca_gpu_dev_verbs_bswap32(word_native);
	seg[1] = doca_gpu_dev_verbs_bswap64(addr);
}

__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_seg_raddr(uint64_t *seg, uint64_t raddr, uint32_t rkey)
{
	seg[0] = doca_gpu_dev_verbs_bswap64(raddr);
	seg[1] = (uint64_t)rkey;
}

/* Internal: the rest of a two-data-segment RDMA WRITE or READ after its ctrl segment c: the raddr
 * segment, both data segments (byte counts masked to their 31 bits) and the stores of all four. */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_finish_rw2(
	struct doca_gpu_dev_verbs_wqe *wqe_ptr, uint64_t *c, const uint64_t raddr, const uint32_t rkey,
	const uint64_t laddr0, const uint32_t lkey0, const uint32_t bytes0, const uint64_t laddr1, const uint32_t lkey1,
	const uint32_t bytes1)
{
	uint64_t r[2], d0[2], d1[2];
	doca_priv_gpu_dev_verbs_seg_raddr(r, raddr, rkey);
	doca_priv_gpu_dev_verbs_seg_addr(d0, bytes0 & (DOCA_GPUNETIO_IB_MLX5_INLINE_SEG - 1), lkey0, laddr0);
	doca_priv_gpu_dev_verbs_seg_addr(d1, bytes1 & (DOCA_GPUNETIO_IB_MLX5_INLINE_SEG - 1), lkey1, laddr1);
	doca_priv_gpu_dev_verbs_store_segs(wqe_ptr, c, r, d0, d1);
}

__device__ static __forceinline__ void doca_gpu_dev_verbs_wqe_prepare_nop(struct doca_gpu_dev_verbs_qp *qp,
									   struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									   const uint16_t wqe_idx,
									   enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags)
{
	uint64_t seg[2];
	doca_priv_gpu_dev_verbs_seg_ctrl(seg, wqe_idx, DOCA_GPUNETIO_IB_MLX5_OPCODE_NOP, &qp->sq_num_shift8_be_1ds,
					 (uint32_t)ctrl_flags, 0);
	doca_priv_gpu_dev_verbs_store_segs(wqe_ptr, seg);
}

__device__ static __forceinline__ void doca_gpu_dev_verbs_wqe_prepare_write(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_wqe *wqe_ptr, const uint16_t wqe_idx,
	const uint32_t opcode, enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags, const uint32_t immediate,
	const uint64_t raddr, const uint32_t rkey, const uint64_t laddr0, const uint32_t lkey0, const uint32_t bytes0)
{
	uint64_t c[2], r[2], d[2];
	doca_priv_gpu_dev_verbs_seg_ctrl(c, wqe_idx, opcode, &qp->sq_num_shift8_be_3ds, (uint32_t)ctrl_flags,
					 immediate);
	doca_priv_gpu_dev_verbs_seg_raddr(r, raddr, rkey);
	doca_priv_gpu_dev_verbs_seg_addr(d, bytes0 & (DOCA_GPUNETIO_IB_MLX5_INLINE_SEG - 1), lkey0, laddr0);
	doca_priv_gpu_dev_verbs_store_segs(wqe_ptr, c, r, d);
}

__device__ static __forceinline__ void doca_gpu_dev_verbs_wqe_prepare_write(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_wqe *wqe_ptr, const uint16_t wqe_idx,
	const uint32_t opcode, enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags, const uint32_t immediate,
	const uint64_t raddr, const uint32_t rkey, const uint64_t laddr0, const uint32_t lkey0, const uint32_t bytes0,
	const uint64_t laddr1, const uint32_t lkey1, const uint32_t bytes1)
{
	uint64_t c[2];
	doca_priv_gpu_dev_verbs_seg_ctrl(c, wqe_idx, opcode, &qp->sq_num_shift8_be_4ds, (uint32_t)ctrl_flags,
					 immediate);
	doca_priv_gpu_dev_verbs_finish_rw2(wqe_ptr, c, raddr, rkey, laddr0, lkey0, bytes0, laddr1, lkey1, bytes1);
}

/* Inline write header: DS 3 for up to 12 payload bytes, else DS 4; at most 28 bytes. */
__device__ static __forceinline__ void doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_header(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_wqe *wqe_ptr, const uint16_t wqe_idx,
	enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags, const uint64_t raddr, const uint32_t rkey, const uint32_t bytes)
{
	DOCA_GPUNETIO_VERBS_ASSERT(bytes <= DOCA_GPUNETIO_VERBS_MAX_INLINE_SIZE);
	const uint32_t ds = bytes > 12 ? DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_RDMA_WRITE_INL_MAX
				       : DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_RDMA_WRITE_INL_MIN;
	uint64_t c[2], r[2];
	doca_priv_gpu_dev_verbs_seg_ctrl_ds(c, qp, wqe_idx, DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE, ds,
					    (uint32_t)ctrl_flags);
	doca_priv_gpu_dev_verbs_seg_raddr(r, raddr, rkey);
	doca_priv_gpu_dev_verbs_store_segs(wqe_ptr, c, r);
}

/* Inline payload: the value's bytes as they are in memory, all sizeof(T) of them (up to 28). */
template <typename T>
__device__ static __forceinline__ void doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_data(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_wqe *wqe_ptr, T data)
{
	static_assert(sizeof(T) <= DOCA_GPUNETIO_VERBS_MAX_INLINE_SIZE, "inline payload is at most 28 bytes");
	(void)qp;
	uint8_t *base = (uint8_t *)wqe_ptr;
	*(uint32_t *)(base + 32) = doca_gpu_dev_verbs_bswap32((uint32_t)sizeof(T) | DOCA_GPUNETIO_IB_MLX5_INLINE_SEG);
	/* memcpy reads the value's object representation without type punning (a register move). */
	if constexpr (sizeof(T) == 1) {
		uint8_t v;
		memcpy(&v, &data, 1);
		*(uint8_t *)(base + 36) = v;
	} else if constexpr (sizeof(T) == 2) {
		uint16_t v;
		memcpy(&v, &data, 2);
		*(uint16_t *)(base + 36) = v;
	} else if constexpr (sizeof(T) == 4) {
		uint32_t v;
		memcpy(&v, &data, 4);
		*(uint32_t *)(base + 36) = v;
	} else if constexpr (sizeof(T) == 8) {
		uint32_t v[2];
		memcpy(v, &data, 8);
		*(uint32_t *)(base + 36) = v[0];
		*(uint32_t *)(base + 40) = v[1];
	} else {
		doca_gpu_dev_verbs_memcpy_data((void *)(base + 36), (void *)&data, sizeof(T));
	}
}

__device__ static __forceinline__ void doca_gpu_dev_verbs_wqe_prepare_write_inl(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_wqe *wqe_ptr, const uint16_t wqe_idx,
	enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags, const uint64_t raddr, const uint32_t rkey,
	const uint64_t laddr, const uint32_t bytes)
{
	doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_header(qp, wqe_ptr, wqe_idx, ctrl_flags, raddr, rkey, bytes);
	uint8_t *base = (uint8_t *)wqe_ptr;
	*(uint32_t *)(base + 32) = doca_gpu_dev_verbs_bswap32(bytes | DOCA_GPUNETIO_IB_MLX5_INLINE_SEG);
	doca_gpu_dev_verbs_memcpy_data((void *)(base + 36), (void *)(uintptr_t)laddr, bytes);
}

__device__ static __forceinline__ void doca_gpu_dev_verbs_wqe_prepare_read(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_wqe *wqe_ptr, const uint16_t wqe_idx,
	enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags, const uint64_t raddr, const uint32_t rkey,
	const uint64_t laddr0, const uint32_t lkey0, const uint32_t bytes0)
{
	uint64_t c[2], r[2], d[2];
	doca_priv_gpu_dev_verbs_seg_ctrl(c, wqe_idx, DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_READ, &qp->sq_num_shift8_be_3ds,
					 (uint32_t)ctrl_flags, 0);
	doca_priv_gpu_dev_verbs_seg_raddr(r, raddr, rkey);
	doca_priv_gpu_dev_verbs_seg_addr(d, bytes0, lkey0, laddr0);
	doca_priv_gpu_dev_verbs_store_segs(wqe_ptr, c, r, d);
}

__device__ static __forceinline__ void doca_gpu_dev_verbs_wqe_prepare_read(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_wqe *wqe_ptr, const uint16_t wqe_idx,
	enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags, const uint64_t raddr, const uint32_t rkey,
	const uint64_t laddr0, const uint32_t lkey0, const uint32_t bytes0, const uint64_t laddr1, const uint32_t lkey1,
	const uint32_t bytes1)
{
	uint64_t c[2];
	doca_priv_gpu_dev_verbs_seg_ctrl_ds(c, qp, wqe_idx, DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_READ, 4,
					    (uint32_t)ctrl_flags);
	doca_priv_gpu_dev_verbs_finish_rw2(wqe_ptr, c, raddr, rkey, laddr0, lkey0, bytes0, laddr1, lkey1, bytes1);
}

/* Standard atomic; for FA the add value is compare_add. */
__device__ static __forceinline__ void doca_gpu_dev_verbs_wqe_prepare_atomic(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_wqe *wqe_ptr, const uint16_t wqe_idx,
	const uint32_t opcode, enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags, const uint64_t raddr,
	const uint32_t rkey, const uint64_t laddr, const uint32_t lkey, const uint32_t bytes,
	const uint64_t compare_add, const uint64_t swap_add)
{
	uint64_t c[2], r[2], a[2], d[2];
	doca_priv_gpu_dev_verbs_seg_ctrl(c, wqe_idx, opcode, &qp->sq_num_shift8_be_4ds, (uint32_t)ctrl_flags, 0);
	doca_priv_gpu_dev_verbs_seg_raddr(r, raddr, rkey);
	a[0] = doca_gpu_dev_verbs_bswap64(opcode == DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_FA ? compare_add : swap_add);
	a[1] = doca_gpu_dev_verbs_bswap64(compare_add);
	doca_priv_gpu_dev_verbs_seg_addr(d, bytes, lkey, laddr);
	doca_priv_gpu_dev_verbs_store_segs(wqe_ptr, c, r, a, d);
}

/* Masked atomics (only ATOMIC_MASKED_FA / ATOMIC_MASKED_CS are valid; any other opcode leaves an
 * all-zero ctrl, as in DOCA). compare_data, field_boundary and compare_mask are stored raw, as in
 * DOCA. The 8-byte masked CS spans two slots: w1 must be the next slot. */
template <enum doca_gpu_dev_verbs_atomic_ext_bytes bytes = DOCA_GPUNETIO_VERBS_ATOMIC_EXT_BYTES_4>
__device__ static __forceinline__ void doca_gpu_dev_verbs_wqe_prepare_atomic_ext(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_wqe *wqe_ptr0, struct doca_gpu_dev_verbs_wqe *wqe_ptr1,
	const uint16_t wqe_idx, const uint32_t opcode, enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
	const uint64_t raddr, const uint32_t rkey, const uint64_t laddr, const uint32_t lkey, const uint64_t add_data,
	const uint64_t field_boundary, const uint64_t swap_data, const uint64_t compare_data, const uint64_t swap_mask,
	const uint64_t compare_mask)
{
	const bool is8 = bytes == DOCA_GPUNETIO_VERBS_ATOMIC_EXT_BYTES_8;
	const uint32_t opmod = is8 ? DOCA_GPUNETIO_8_BYTE_ATOMIC_EXT_OPMOD : DOCA_GPUNETIO_4_BYTE_ATOMIC_EXT_OPMOD;
	const bool is_fa = opcode == DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_MASKED_FA;
	const bool is_cs = opcode == DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_MASKED_CS;
	uint64_t c[2] = {0, 0}, r[2], a[2], a2[2], d[2];

	if (is_fa || is_cs) {
		const uint32_t qpn_ds = (is8 && is_cs) ? doca_priv_gpu_dev_verbs_ldg(&qp->sq_num_shift8_be_5ds)
						      : doca_priv_gpu_dev_verbs_ldg(&qp->sq_num_shift8_be_4ds);
		doca_priv_gpu_dev_verbs_seg_ctrl_words(
			c, opcode | ((uint32_t)wqe_idx << DOCA_GPUNETIO_VERBS_WQE_IDX_SHIFT) | opmod, qpn_ds, (uint32_t)ctrl_flags, 0);
	}
	doca_priv_gpu_dev_verbs_seg_raddr(r, raddr, rkey);
	doca_priv_gpu_dev_verbs_seg_addr(d, (uint32_t)bytes, lkey, laddr);
	if (is_fa) {
		if (is8) {
			a[0] = doca_gpu_dev_verbs_bswap64(add_data);
			a[1] = field_boundary;
		} else {
			a[0] = ((uint64_t)(uint32_t)field_boundary << 32) |
			       (uint64_t)doca_gpu_dev_verbs_bswap32((uint32_t)add_data);
			a[1] = 0;
		}
	} else {
		if (is8) {
			a[0] = doca_gpu_dev_verbs_bswap64(swap_data);
			a[1] = compare_data;
			a2[0] = doca_gpu_dev_verbs_bswap64(swap_mask);
			a2[1] = compare_mask;
		} else {
			a[0] = ((uint64_t)(uint32_t)compare_data << 32) |
			       (uint64_t)doca_gpu_dev_verbs_bswap32((uint32_t)swap_data);
			a[1] = ((uint64_t)(uint32_t)compare_mask << 32) |
			       (uint64_t)doca_gpu_dev_verbs_bswap32((uint32_t)swap_mask);
		}
	}
	doca_priv_gpu_dev_verbs_store_segs(wqe_ptr0, c, r, a);
	if (is8 && !is_fa) {
		doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_wqe_q(wqe_ptr0, 3), a2);
		doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_wqe_q(wqe_ptr1, 0), d);
	} else {
		doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_wqe_q(wqe_ptr0, 3), d);
	}
}

/* Cross-channel WAIT: hold this SQ until CQ qpn_cqn reaches max_index. */
__device__ static __forceinline__ void doca_gpu_dev_verbs_wqe_prepare_wait(struct doca_gpu_dev_verbs_qp *qp,
									    struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									    uint16_t wqe_idx,
									    enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									    const uint32_t max_index, const uint32_t qpn_cqn)
{
	uint64_t c[2], w[2];
	doca_priv_gpu_dev_verbs_seg_ctrl_ds(c, qp, wqe_idx, DOCA_GPUNETIO_IB_MLX5_OPCODE_WAIT,
					    DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_WAIT, (uint32_t)ctrl_flags);
	w[0] = 0;
	w[1] = ((uint64_t)doca_gpu_dev_verbs_bswap32(qpn_cqn) << 32) | (uint64_t)doca_gpu_dev_verbs_bswap32(max_index);
	doca_priv_gpu_dev_verbs_store_segs(wqe_ptr, c, w);
}

/* ---- Two-sided WQE builders (DOCA SDK 3.3) ------------------------------------------------------ */

/* SEND (or SEND_IMM with immediate, verbatim) with 0 to 3 data segments; byte counts keep 31 bits.
 * DS 1..4 comes from the QP's precomputed sq_num_shift8_be_Nds words. */
__device__ static __forceinline__ void doca_gpu_dev_verbs_wqe_prepare_send(struct doca_gpu_dev_verbs_qp *qp,
									    struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									    const uint16_t wqe_idx, const uint32_t opcode,
									    enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									    const uint32_t immediate)
{
	uint64_t c[2];
	doca_priv_gpu_dev_verbs_seg_ctrl(c, wqe_idx, opcode, &qp->sq_num_shift8_be_1ds, (uint32_t)ctrl_flags, immediate);
	doca_priv_gpu_dev_verbs_store_segs(wqe_ptr, c);
}

__device__ static __forceinline__ void doca_gpu_dev_verbs_wqe_prepare_send(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_wqe *wqe_ptr, const uint16_t wqe_idx,
	const uint32_t opcode, enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags, const uint32_t immediate,
	const uint64_t laddr0, const uint32_t lkey0, const uint32_t bytes0)
{
	uint64_t c[2], d0[2];
	doca_priv_gpu_dev_verbs_seg_ctrl(c, wqe_idx, opcode, &qp->sq_num_shift8_be_2ds, (uint32_t)ctrl_flags, immediate);
	doca_priv_gpu_dev_verbs_seg_addr(d0, bytes0 & (DOCA_GPUNETIO_IB_MLX5_INLINE_SEG - 1), lkey0, laddr0);
	doca_priv_gpu_dev_verbs_store_segs(wqe_ptr, c, d0);
}

__device__ static __forceinline__ void doca_gpu_dev_verbs_wqe_prepare_send(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_wqe *wqe_ptr, const uint16_t wqe_idx,
	const uint32_t opcode, enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags, const uint32_t immediate,
	const uint64_t laddr0, const uint32_t lkey0, const uint32_t bytes0, const uint64_t laddr1, const uint32_t lkey1,
	const uint32_t bytes1)
{
	uint64_t c[2], d0[2], d1[2];
	doca_priv_gpu_dev_verbs_seg_ctrl(c, wqe_idx, opcode, &qp->sq_num_shift8_be_3ds, (uint32_t)ctrl_flags, immediate);
	doca_priv_gpu_dev_verbs_seg_addr(d0, bytes0 & (DOCA_GPUNETIO_IB_MLX5_INLINE_SEG - 1), lkey0, laddr0);
	doca_priv_gpu_dev_verbs_seg_addr(d1, bytes1 & (DOCA_GPUNETIO_IB_MLX5_INLINE_SEG - 1), lkey1, laddr1);
	doca_priv_gpu_dev_verbs_store_segs(wqe_ptr, c, d0, d1);
}

__device__ static __forceinline__ void doca_gpu_dev_verbs_wqe_prepare_send(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_wqe *wqe_ptr, const uint16_t wqe_idx,
	const uint32_t opcode, enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags, const uint32_t immediate,
	const uint64_t laddr0, const uint32_t lkey0, const uint32_t bytes0, const uint64_t laddr1, const uint32_t lkey1,
	const uint32_t bytes1, const uint64_t laddr2, const uint32_t lkey2, const uint32_t bytes2)
{
	uint64_t c[2], d0[2], d1[2], d2[2];
	doca_priv_gpu_dev_verbs_seg_ctrl(c, wqe_idx, opcode, &qp->sq_num_shift8_be_4ds, (uint32_t)ctrl_flags, immediate);
	doca_priv_gpu_dev_verbs_seg_addr(d0, bytes0 & (DOCA_GPUNETIO_IB_MLX5_INLINE_SEG - 1), lkey0, laddr0);
	doca_priv_gpu_dev_verbs_seg_addr(d1, bytes1 & (DOCA_GPUNETIO_IB_MLX5_INLINE_SEG - 1), lkey1, laddr1);
	doca_priv_gpu_dev_verbs_seg_addr(d2, bytes2 & (DOCA_GPUNETIO_IB_MLX5_INLINE_SEG - 1), lkey2, laddr2);
	doca_priv_gpu_dev_verbs_store_segs(wqe_ptr, c, d0, d1, d2);
}

/* A receive WQE: one 16-byte scatter entry (byte count BE32, key verbatim, address BE64) written
 * with one store. qp is not used. */
__device__ static __forceinline__ void doca_gpu_dev_verbs_wqe_prepare_recv(struct doca_gpu_dev_verbs_qp *qp,
									    struct mlx5_wqe_data_seg *rwqe,
									    const uint64_t addr, const uint32_t mkey,
									    const uint32_t bytes)
{
	(void)qp;
	uint64_t d[2];
	doca_priv_gpu_dev_verbs_seg_addr(d, bytes, mkey, addr);
	doca_gpu_dev_verbs_store_wqe_seg((uint64_t *)rwqe, d);
}

/* DUMP: a NIC-side consistency barrier after RDMA reads (callers use 1 byte). */
__device__ static inline void doca_gpu_dev_verbs_wqe_prepare_dump(struct doca_gpu_dev_verbs_qp *qp,
								    struct doca_gpu_dev_verbs_wqe *wqe_ptr,
								    const uint16_t wqe_idx,
								    enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
								    const uint64_t laddr, const uint32_t lkey,
								    const uint32_t bytes)
{
	uint64_t c[2], d[2];
	doca_priv_gpu_dev_verbs_seg_ctrl(c, wqe_idx, DOCA_GPUNETIO_IB_MLX5_OPCODE_DUMP, &qp->sq_num_shift8_be_2ds,
					 (uint32_t)ctrl_flags, 0);
	doca_priv_gpu_dev_verbs_seg_addr(d, bytes, lkey, laddr);
	doca_priv_gpu_dev_verbs_store_segs(wqe_ptr, c, d);
}

/* ---- The SDK's call shapes ------------------------------------------------------------------ */
/* The SDK passes code options (and reserve's wait flag) as template parameters where the
 * open-source family takes a trailing argument. Each overload below has a template parameter
 * without a default where the open-source template has one of another enum type, so it is viable
 * only when a caller names that parameter, and it forwards to the one implementation above. */

/* reserve_wq_slots<RSM, QPT, wait_for_availability>(qp, count): false = SKIP_AVAILABILITY_CHECK. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode, enum doca_gpu_dev_verbs_qp_type qp_type,
	  bool wait_for_availability>
__device__ static __forceinline__ uint64_t doca_gpu_dev_verbs_reserve_wq_slots(struct doca_gpu_dev_verbs_qp *qp,
									       uint32_t count)
{
	return doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, qp_type>(
		qp, count,
		wait_for_availability ? (uint32_t)DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT
				      : (uint32_t)DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_AVAILABILITY_CHECK);
}

/* update_dbr<SYNC, code_opt, QPT>(qp, pi) */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope, enum doca_gpu_dev_verbs_gpu_code_opt code_opt,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ void doca_gpu_dev_verbs_update_dbr(struct doca_gpu_dev_verbs_qp *qp,
								      uint32_t prod_index)
{
	doca_gpu_dev_verbs_update_dbr<sync_scope, qp_type>(qp, prod_index, (uint32_t)code_opt);
}

/* submit_db<RSM, SYNC, code_opt, QPT>(qp, pi) */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode, enum doca_gpu_dev_verbs_sync_scope sync_scope,
	  enum doca_gpu_dev_verbs_gpu_code_opt code_opt, enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ void doca_gpu_dev_verbs_submit_db(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index)
{
	doca_gpu_dev_verbs_submit_db<resource_sharing_mode, sync_scope, qp_type>(qp, prod_index, (uint32_t)code_opt);
}

/* submit_db_no_dbr<RSM, SYNC, code_opt, QPT>(qp, pi) */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode, enum doca_gpu_dev_verbs_sync_scope sync_scope,
	  enum doca_gpu_dev_verbs_gpu_code_opt code_opt, enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ void doca_gpu_dev_verbs_submit_db_no_dbr(struct doca_gpu_dev_verbs_qp *qp,
									    uint64_t prod_index)
{
	doca_gpu_dev_verbs_submit_db_no_dbr<resource_sharing_mode, sync_scope, qp_type>(qp, prod_index,
											(uint32_t)code_opt);
}

/* ---- wait ---------------------------------------------------------------------------------------- */
/* Declared here, as in the SDK (the open-source family has them in doca_gpunetio_dev_verbs_onesided.cuh,
 * which includes this file): a kernel that includes only this header can wait. */

/* Open-source form: the ticket by value. Blocks until WQE `ticket` of the SQ completed. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_wait(struct doca_gpu_dev_verbs_qp *qp,
								doca_gpu_dev_verbs_ticket_t ticket)
{
	(void)doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode>(&qp->cq_sq, ticket);
}

/* SDK form (3.2+): the ticket by pointer; the same wait. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_wait(struct doca_gpu_dev_verbs_qp *qp,
								doca_gpu_dev_verbs_ticket_t *ticket)
{
	(void)doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode>(&qp->cq_sq, *ticket);
}

/* Both families: waits for the newest reserved WQE (returns at once when none was reserved). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_wait(struct doca_gpu_dev_verbs_qp *qp)
{
	const uint64_t t = doca_gpu_dev_verbs_atomic_read<uint64_t, resource_sharing_mode>(&qp->sq_rsvd_index);
	if (t == 0)
		return;
	(void)doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode>(&qp->cq_sq, t - 1);
}

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif /* DOCA_GPUNETIO_DEV_VERBS_QP_H */
