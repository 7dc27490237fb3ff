/*
 * GPUNetIO verbs completion-queue API: CQE probes, blocking polls, collapsed-CQ polls and the CQ
 * doorbell-record update, plus the QP error record (extension).
 *
 * Return codes: 0 = completion observed without error; -EIO = the CQE is an error CQE (REQ_ERR or
 * RESP_ERR; the consumer index is then not advanced), or the QP already recorded an error CQE;
 * -ETIMEDOUT = the QP's poll bound ran out (extension); EBUSY = not observed yet (non-blocking
 * probe only). Waiting is only defined for an index less than one CQ lap ahead of the consumer
 * index.
 *
 * Polls never spin on a failed QP. On a CQ embedded in an exported QP (GDAKI_DEV_CQ_FLAG_IN_QP)
 * the first poller that sees an error CQE, or whose bound runs out, records the failure in the
 * QP's gdaki.error (status, syndromes, WQE counter and index); from then on every poll of that
 * CQ whose completion is not visible returns at once with the recorded error. The void waits
 * built on these polls (wait, get_wait, the availability check, the counter paths) therefore
 * return too: a kernel that checks nothing still terminates. gdaki_dev_qp_get_error reads the
 * record in the kernel, gpunetio's QP.LastError on the host. See cuda/README.md.
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_CQ_H
#define DOCA_GPUNETIO_DEV_VERBS_CQ_H

#include "doca_gpunetio_dev_verbs_common.cuh"
#if !defined(__CUDACC_RTC__)
#include <errno.h> /* as in DOCA; EIO, EBUSY and ETIMEDOUT come from common/doca_gpunetio_verbs_prim.h too */
#endif

/* The descriptor structs are packed but 8-byte aligned with naturally aligned fields. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waddress-of-packed-member"
#endif

__device__ static __forceinline__ struct doca_gpu_dev_verbs_cq *doca_gpu_dev_verbs_qp_get_cq_sq(
	struct doca_gpu_dev_verbs_qp *qp)
{
	return &qp->cq_sq;
}

/* The receive CQ of the QP (DOCA SDK 3.2): the completions of its receive queue. */
__device__ static __forceinline__ struct doca_gpu_dev_verbs_cq *doca_gpu_dev_verbs_qp_get_cq_rq(
	struct doca_gpu_dev_verbs_qp *qp)
{
	return &qp->cq_rq;
}

__device__ static __forceinline__ uint32_t doca_gpu_dev_verbs_cqe_idx_inc_mask(uint32_t cqe_idx, uint32_t increment)
{
	return (cqe_idx + increment) & DOCA_GPUNETIO_VERBS_CQE_CI_MASK;
}

/* Always declared (DOCA declares it in debug builds only); the polls call it only when
 * DOCA_GPUNETIO_VERBS_ENABLE_DEBUG == 1. */
__device__ static __forceinline__ void doca_gpu_dev_verbs_cq_print_cqe_err(struct doca_gpunetio_ib_mlx5_cqe64 *cqe64)
{
	struct doca_gpunetio_ib_mlx5_err_cqe_ex *err = (struct doca_gpunetio_ib_mlx5_err_cqe_ex *)cqe64;
	printf("gpunetio: error CQE: syndrome 0x%x vendor_syndrome 0x%x hw_syndrome 0x%x hw_syndrome_type 0x%x wqe_counter %u\n",
	       (unsigned int)err->syndrome, (unsigned int)err->vendor_err_synd, (unsigned int)err->hw_err_synd,
	       (unsigned int)err->hw_synd_type, (unsigned int)doca_gpu_dev_verbs_bswap16(err->wqe_counter));
}

/* The SDK's signature: rdma-core's CQE type (or the subset of doca_gpunetio_verbs_def.h). */
__device__ static __forceinline__ void doca_gpu_dev_verbs_cq_print_cqe_err(struct mlx5_cqe64 *cqe64)
{
	doca_gpu_dev_verbs_cq_print_cqe_err((struct doca_gpunetio_ib_mlx5_cqe64 *)cqe64);
}

/* ---- QP error record and poll bound (extension) ------------------------------------------------ */

/* Internal: build-time poll bound (ticks) for polls whose QP sets none; 0 = none. */
#ifndef GDAKI_DEV_POLL_TIMEOUT
#define GDAKI_DEV_POLL_TIMEOUT 0
#endif

/* Internal: the extension area of the QP that embeds cq, or NULL for a CQ that is not marked as
 * embedded (such a CQ polls exactly as DOCA's). */
__device__ static __forceinline__ struct gdaki_dev_qp_ext *doca_priv_gpu_dev_verbs_cq_ext(struct doca_gpu_dev_verbs_cq *cq)
{
	const uint8_t flags = doca_priv_gpu_dev_verbs_ldg(&cq->gdaki_flags);
	if ((flags & GDAKI_DEV_CQ_FLAG_IN_QP) == 0)
		return (struct gdaki_dev_qp_ext *)0;
	const size_t at = (flags & GDAKI_DEV_CQ_FLAG_RQ) != 0
				  ? DOCA_GPUNETIO_PRIV_OFFSETOF(struct doca_gpu_dev_verbs_qp, cq_rq)
				  : DOCA_GPUNETIO_PRIV_OFFSETOF(struct doca_gpu_dev_verbs_qp, cq_sq);
	uint8_t *qp = (uint8_t *)cq - at;
	return (struct gdaki_dev_qp_ext *)(qp + DOCA_GPUNETIO_PRIV_OFFSETOF(struct doca_gpu_dev_verbs_qp, gdaki));
}

/* Internal: records the QP's first failure (later ones are dropped). cqe is the error CQE, or NULL
 * for a timeout. Out of line: only failing polls get here. */
__device__ static __noinline__ void doca_priv_gpu_dev_verbs_record_error(struct gdaki_dev_qp_ext *ext, uint32_t status,
									  const uint8_t *cqe, uint64_t wqe_index)
{
	struct gdaki_dev_qp_error *e = &ext->error;
	if (doca_priv_gpu_dev_verbs_cas32<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(
		    (int *)&e->status, 0, (int)GDAKI_DEV_QP_ERROR_BUSY) != 0)
		return;
	if (cqe != (const uint8_t *)0) {
		const volatile uint8_t *c = cqe; /* written by the NIC: never from L1 */
		e->hw_syndrome = c[52];
		e->hw_syndrome_type = c[53];
		e->vendor_syndrome = c[54];
		e->syndrome = c[55];
		e->wqe_opcode = c[56];
		e->wqe_counter = (uint16_t)(((uint16_t)c[60] << 8) | c[61]);
		e->cqe_opcode = (uint8_t)(c[63] >> DOCA_GPUNETIO_VERBS_MLX5_CQE_OPCODE_SHIFT);
	} else {
		e->hw_syndrome = 0;
		e->hw_syndrome_type = 0;
		e->vendor_syndrome = 0;
		e->syndrome = 0;
		e->wqe_opcode = 0;
		e->wqe_counter = (uint16_t)wqe_index;
		e->cqe_opcode = 0;
	}
	e->reserved = 0;
	e->wqe_index = wqe_index;
	doca_priv_gpu_dev_verbs_store_release_sys32(&e->status, status);
}

/* Internal: the return code of a QP that has recorded a failure (-EIO or -ETIMEDOUT), else 0. */
__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_ext_failed(struct gdaki_dev_qp_ext *ext)
{
	uint32_t st = doca_gpu_dev_verbs_load_relaxed_sys_global(&ext->error.status);
	if (st == 0)
		return 0;
	while (st == GDAKI_DEV_QP_ERROR_BUSY) { /* a few stores away */
		doca_priv_gpu_dev_verbs_spin_hint();
		st = doca_gpu_dev_verbs_load_relaxed_sys_global(&ext->error.status);
	}
	return st == GDAKI_DEV_QP_ERR_TIMEOUT ? -ETIMEDOUT : -EIO;
}

/* Internal: the state of one blocking poll once it has to wait: the QP's extension area (or NULL),
 * the bound and when the wait began. Set up only on the waiting path. */
struct doca_priv_gpu_dev_verbs_waiter {
	struct gdaki_dev_qp_ext *ext;
	uint64_t bound;
	uint64_t start;
};

__device__ static __forceinline__ struct doca_priv_gpu_dev_verbs_waiter doca_priv_gpu_dev_verbs_waiter_init(
	struct doca_gpu_dev_verbs_cq *cq)
{
	struct doca_priv_gpu_dev_verbs_waiter w;
	w.ext = doca_priv_gpu_dev_verbs_cq_ext(cq);
	w.bound = w.ext ? doca_priv_gpu_dev_verbs_ldg(&w.ext->poll_timeout) : 0;
	if (w.bound == 0)
		w.bound = (uint64_t)(GDAKI_DEV_POLL_TIMEOUT);
	w.start = w.bound ? doca_priv_gpu_dev_verbs_ticks() : 0;
	return w;
}

/* Internal: one more spin of a waiting poll: 0 to keep waiting, or the code to return (the QP
 * failed, or this poll's bound ran out, which it records). */
__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_waiter_spin(struct doca_priv_gpu_dev_verbs_waiter &w,
									uint64_t wqe_index)
{
	if (w.ext) {
		const int r = doca_priv_gpu_dev_verbs_ext_failed(w.ext);
		if (r != 0)
			return r;
	}
	if (w.bound != 0 && doca_priv_gpu_dev_verbs_ticks() - w.start > w.bound) {
		if (w.ext)
			doca_priv_gpu_dev_verbs_record_error(w.ext, GDAKI_DEV_QP_ERR_TIMEOUT, (const uint8_t *)0, wqe_index);
		return -ETIMEDOUT;
	}
	doca_priv_gpu_dev_verbs_spin_hint();
	return 0;
}

/* Extension: the QP's error record. Returns its status (GDAKI_DEV_QP_OK when device code has seen no
 * failure on the QP) and, when out is not NULL and a failure is recorded, copies the record. */
__device__ static __forceinline__ int gdaki_dev_qp_get_error(struct doca_gpu_dev_verbs_qp *qp, struct gdaki_dev_qp_error *out)
{
	struct gdaki_dev_qp_error *e = &qp->gdaki.error;
	uint32_t st = doca_gpu_dev_verbs_load_relaxed_sys_global(&e->status);
	while (st == GDAKI_DEV_QP_ERROR_BUSY) {
		doca_priv_gpu_dev_verbs_spin_hint();
		st = doca_gpu_dev_verbs_load_relaxed_sys_global(&e->status);
	}
	if (st != GDAKI_DEV_QP_OK && out != (struct gdaki_dev_qp_error *)0) {
		doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		const volatile struct gdaki_dev_qp_error *v = e;
		out->status = st;
		out->syndrome = v->syndrome;
		out->vendor_syndrome = v->vendor_syndrome;
		out->hw_syndrome = v->hw_syndrome;
		out->hw_syndrome_type = v->hw_syndrome_type;
		out->cqe_opcode = v->cqe_opcode;
		out->wqe_opcode = v->wqe_opcode;
		out->wqe_counter = v->wqe_counter;
		out->reserved = 0;
		out->wqe_index = v->wqe_index;
	}
	return (int)st;
}

/* ---- CQE probes and polls ---------------------------------------------------------------------- */

/* Internal: reads the completion state of the CQE that covers cons_index (x = ci + cqe_rsvd).
 * Returns true when the CQE for that index is visible; *op_own receives its op_own byte. */
__device__ static __forceinline__ bool doca_priv_gpu_dev_verbs_cqe_observed(uint8_t *cqe, uint64_t x,
									 uint32_t cqe_num, uint64_t cons_index,
									 uint8_t *op_own)
{
	const uint8_t parity = (x & (uint64_t)cqe_num) != 0 ? 1 : 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	(void)cons_index;
	uint8_t oo = doca_gpu_dev_verbs_load_relaxed_sys_global(cqe + 63);
	*op_own = oo;
	return (oo & DOCA_GPUNETIO_IB_MLX5_CQE_OWNER_MASK) == parity;
#else
	uint32_t w = doca_gpu_dev_verbs_bswap32(doca_gpu_dev_verbs_load_relaxed_sys_global((uint32_t *)(cqe + 60)));
	uint16_t wqe_counter = (uint16_t)(w >> 16);
	uint8_t oo = (uint8_t)(w & 0xff);
	*op_own = oo;
	return (oo & DOCA_GPUNETIO_IB_MLX5_CQE_OWNER_MASK) == parity && wqe_counter == (uint16_t)(cons_index & 0xffff);
#endif
}

/* Internal: whether an op_own byte is that of an error CQE (requester or responder). */
__device__ static __forceinline__ bool doca_priv_gpu_dev_verbs_cqe_is_error(uint8_t op_own)
{
	const uint8_t op = (uint8_t)(op_own >> DOCA_GPUNETIO_VERBS_MLX5_CQE_OPCODE_SHIFT);
	return op == DOCA_GPUNETIO_IB_MLX5_CQE_REQ_ERR || op == DOCA_GPUNETIO_IB_MLX5_CQE_RESP_ERR;
}

/* Internal: the CQE syndrome of a WQE flushed because the QP had already failed. */
#define DOCA_PRIV_GPU_DEV_VERBS_SYND_WR_FLUSH_ERR 0x05

/* Internal: records the error CQE a poll saw for cons_index. A flush (WR_FLUSH_ERR) only says that
 * an earlier WQE failed: on a per-slot CQ the error CQE of that WQE was written before it, between
 * the consumer index and cons_index, so the record names that one (the cause) when it is there,
 * else the earliest flush (a QP the host moved to ERR has nothing but flushes). */
__device__ static __noinline__ void doca_priv_gpu_dev_verbs_record_cqe(struct doca_gpu_dev_verbs_cq *cq,
								       struct gdaki_dev_qp_ext *ext, uint8_t *cqe,
								       uint64_t cons_index, bool per_slot)
{
	doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>(); /* the CQE's other bytes */
	if (per_slot && ((const volatile uint8_t *)cqe)[55] == DOCA_PRIV_GPU_DEV_VERBS_SYND_WR_FLUSH_ERR) {
		uint8_t *base = doca_priv_gpu_dev_verbs_ldg_ptr(&cq->cqe_daddr);
		const uint32_t cqe_num = doca_priv_gpu_dev_verbs_ldg(&cq->cqe_num);
		const uint64_t rsvd = doca_priv_gpu_dev_verbs_ldg(&cq->cqe_rsvd);
		uint64_t from = doca_priv_gpu_dev_verbs_read_once(&cq->cqe_ci);
		if (cons_index - from >= cqe_num) /* at most one lap back */
			from = cons_index - cqe_num + 1;
		uint8_t *flush = (uint8_t *)0;
		uint64_t flush_index = 0;
		for (uint64_t j = from; j < cons_index; j++) {
			const uint64_t x = j + rsvd;
			uint8_t *c = base + (x & (uint64_t)(cqe_num - 1)) * DOCA_GPUNETIO_VERBS_CQE_SIZE;
			uint8_t oo;
			if (!doca_priv_gpu_dev_verbs_cqe_observed(c, x, cqe_num, j, &oo) ||
			    !doca_priv_gpu_dev_verbs_cqe_is_error(oo))
				continue;
			if (((const volatile uint8_t *)c)[55] != DOCA_PRIV_GPU_DEV_VERBS_SYND_WR_FLUSH_ERR) {
				doca_priv_gpu_dev_verbs_record_error(ext, GDAKI_DEV_QP_ERR_CQE, c, j);
				return;
			}
			if (flush == (uint8_t *)0) { /* the earliest flush */
				flush = c;
				flush_index = j;
			}
		}
		if (flush != (uint8_t *)0) {
			doca_priv_gpu_dev_verbs_record_error(ext, GDAKI_DEV_QP_ERR_CQE, flush, flush_index);
			return;
		}
	}
	doca_priv_gpu_dev_verbs_record_error(ext, GDAKI_DEV_QP_ERR_CQE, cqe, cons_index);
}

/* Internal: converts an observed op_own into the poll result. An error CQE is printed in debug
 * builds, recorded in the QP's extension area and returned as -EIO. per_slot is false for a
 * collapsed CQ (every CQE in entry 0). */
__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_cqe_result(struct doca_gpu_dev_verbs_cq *cq, uint8_t *cqe,
									uint8_t op_own, uint64_t cons_index,
									bool per_slot = true)
{
	if (!doca_priv_gpu_dev_verbs_cqe_is_error(op_own))
		return 0;
#if DOCA_GPUNETIO_VERBS_ENABLE_DEBUG == 1
	doca_gpu_dev_verbs_cq_print_cqe_err((struct doca_gpunetio_ib_mlx5_cqe64 *)cqe);
#endif
	struct gdaki_dev_qp_ext *ext = doca_priv_gpu_dev_verbs_cq_ext(cq);
	if (ext)
		doca_priv_gpu_dev_verbs_record_cqe(cq, ext, cqe, cons_index, per_slot);
	return -EIO;
}

/* Internal: what a probe that finds nothing returns: EBUSY, or the QP's recorded failure. */
__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_probe_pending(struct doca_gpu_dev_verbs_cq *cq)
{
	struct gdaki_dev_qp_ext *ext = doca_priv_gpu_dev_verbs_cq_ext(cq);
	if (ext) {
		const int r = doca_priv_gpu_dev_verbs_ext_failed(ext);
		if (r != 0)
			return r;
	}
	return EBUSY;
}

/* Internal: the end of a poll: when it succeeded (status 0), a system-scope acquire fence (what
 * the completed WQEs wrote is visible after it) and the consumer index raised to next_ci. Returns
 * status. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_cq_consume(struct doca_gpu_dev_verbs_cq *cq, int status,
									  uint64_t next_ci)
{
	if (status == 0) {
		doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&cq->cqe_ci, next_ci);
	}
	return status;
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_poll_one_cq_at(struct doca_gpu_dev_verbs_cq *cq,
									      uint64_t cons_index)
{
	uint8_t *cqe_daddr = doca_priv_gpu_dev_verbs_ldg_ptr(&cq->cqe_daddr);
	const uint32_t cqe_num = doca_priv_gpu_dev_verbs_ldg(&cq->cqe_num);
	const uint64_t cqe_rsvd = doca_priv_gpu_dev_verbs_ldg(&cq->cqe_rsvd);
	const uint64_t x = cons_index + cqe_rsvd;
	uint8_t *cqe = cqe_daddr + (x & (uint64_t)(cqe_num - 1)) * DOCA_GPUNETIO_VERBS_CQE_SIZE;
	doca_priv_gpu_dev_verbs_keep(cqe); /* the descriptor loads go out with the consumer-index load */
	const uint64_t cqe_ci = doca_gpu_dev_verbs_load_relaxed<resource_sharing_mode>(&cq->cqe_ci);
	uint8_t op_own;

	if (cons_index < cqe_ci)
		return 0;
	if (cons_index >= cqe_ci + cqe_num)
		return doca_priv_gpu_dev_verbs_probe_pending(cq);
	if (!doca_priv_gpu_dev_verbs_cqe_observed(cqe, x, cqe_num, cons_index, &op_own))
		return doca_priv_gpu_dev_verbs_probe_pending(cq);
	return doca_priv_gpu_dev_verbs_cqe_result(cq, cqe, op_own, cons_index);
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ int doca_gpu_dev_verbs_poll_one_cq_at(struct doca_gpu_dev_verbs_cq *cq,
									 uint64_t cons_index)
{
	return doca_priv_gpu_dev_verbs_cq_consume<resource_sharing_mode>(
		cq, doca_priv_gpu_dev_verbs_poll_one_cq_at<resource_sharing_mode, qp_type>(cq, cons_index), cons_index + 1);
}

/* Internal: the waiting part of poll_cq_at, once the first look found nothing. Out of line, so
 * that the inlined fast path stays as short as DOCA's. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __noinline__ int doca_priv_gpu_dev_verbs_poll_cq_at_wait(struct doca_gpu_dev_verbs_cq *cq, uint8_t *cqe,
									    uint64_t x, uint32_t cqe_num,
									    uint64_t cons_index)
{
	struct doca_priv_gpu_dev_verbs_waiter w = doca_priv_gpu_dev_verbs_waiter_init(cq);
	uint8_t op_own;
	for (;;) {
		const int r = doca_priv_gpu_dev_verbs_waiter_spin(w, cons_index);
		if (r != 0)
			return r;
		const uint64_t cqe_ci = doca_gpu_dev_verbs_load_relaxed<resource_sharing_mode>(&cq->cqe_ci);
		if (cons_index < cqe_ci)
			return 0;
		if (cons_index < cqe_ci + cqe_num && doca_priv_gpu_dev_verbs_cqe_observed(cqe, x, cqe_num, cons_index, &op_own))
			return doca_priv_gpu_dev_verbs_cqe_result(cq, cqe, op_own, cons_index);
	}
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_poll_cq_at(struct doca_gpu_dev_verbs_cq *cq,
									  uint64_t cons_index)
{
	uint8_t *cqe_daddr = doca_priv_gpu_dev_verbs_ldg_ptr(&cq->cqe_daddr);
	const uint32_t cqe_num = doca_priv_gpu_dev_verbs_ldg(&cq->cqe_num);
	const uint64_t cqe_rsvd = doca_priv_gpu_dev_verbs_ldg(&cq->cqe_rsvd);
	const uint64_t x = cons_index + cqe_rsvd;
	uint8_t *cqe = cqe_daddr + (x & (uint64_t)(cqe_num - 1)) * DOCA_GPUNETIO_VERBS_CQE_SIZE;
	uint8_t op_own;

	/* The descriptor loads go out with the consumer-index load, not after it. */
	doca_priv_gpu_dev_verbs_keep(cqe);
	const uint64_t cqe_ci = doca_gpu_dev_verbs_load_relaxed<resource_sharing_mode>(&cq->cqe_ci);
	if (cons_index < cqe_ci)
		return 0;
	if (cons_index < cqe_ci + cqe_num && doca_priv_gpu_dev_verbs_cqe_observed(cqe, x, cqe_num, cons_index, &op_own))
		return doca_priv_gpu_dev_verbs_cqe_result(cq, cqe, op_own, cons_index);
	return doca_priv_gpu_dev_verbs_poll_cq_at_wait<resource_sharing_mode>(cq, cqe, x, cqe_num, cons_index);
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ int doca_gpu_dev_verbs_poll_cq_at(struct doca_gpu_dev_verbs_cq *cq,
								     uint64_t cons_index)
{
	/* Not through cq_consume: the same code, but nvcc 11.8 then allocates registers differently
	 * in kernels that poll in many places. */
	int status = doca_priv_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, qp_type>(cq, cons_index);
	if (status == 0) {
		doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&cq->cqe_ci, cons_index + 1);
	}
	return status;
}

/* Collapsed CQ (every CQE lands in entry 0). Count semantics: cons_index n is done once n WQEs
 * have completed (wqe_counter + 1 >= n within a cqe_num window, 16-bit arithmetic). Ignores
 * cqe_rsvd and the owner bit, and first waits for sq_wqe_pi >= cons_index, as DOCA does. An error
 * CQE in entry 0 ends the poll at once, whatever WQE it names: the QP has failed. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_poll_cq_collapsed_at(struct doca_gpu_dev_verbs_qp *qp,
										    struct doca_gpu_dev_verbs_cq *cq,
										    uint64_t cons_index,
										    uint64_t *new_cqe_ci)
{
	uint8_t *cqe = doca_priv_gpu_dev_verbs_ldg_ptr(&cq->cqe_daddr);
	const uint32_t cqe_num = doca_priv_gpu_dev_verbs_ldg(&cq->cqe_num);
	struct doca_priv_gpu_dev_verbs_waiter w = {(struct gdaki_dev_qp_ext *)0, 0, 0};
	bool waiting = false;
	uint16_t wc;
	uint8_t op_own;

	while (doca_gpu_dev_verbs_atomic_read<uint64_t, resource_sharing_mode>(&qp->sq_wqe_pi) < cons_index) {
		if (!waiting) {
			w = doca_priv_gpu_dev_verbs_waiter_init(cq);
			waiting = true;
		}
		/* A failed QP may never get there: an error CQE in entry 0 ends this wait too. */
		op_own = (uint8_t)doca_gpu_dev_verbs_bswap32(doca_gpu_dev_verbs_load_relaxed_sys_global((uint32_t *)(cqe + 60)));
		if (doca_priv_gpu_dev_verbs_cqe_is_error(op_own))
			return doca_priv_gpu_dev_verbs_cqe_result(cq, cqe, op_own, cons_index, false);
		const int r = doca_priv_gpu_dev_verbs_waiter_spin(w, cons_index);
		if (r != 0)
			return r;
	}
	doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();

	for (;;) {
		const uint64_t cqe_ci = doca_gpu_dev_verbs_load_relaxed<resource_sharing_mode>(&cq->cqe_ci);
		if (cons_index < cqe_ci)
			return 0;
		uint32_t word =
			doca_gpu_dev_verbs_bswap32(doca_gpu_dev_verbs_load_relaxed_sys_global((uint32_t *)(cqe + 60)));
		wc = (uint16_t)(word >> 16);
		op_own = (uint8_t)(word & 0xff);
		if (doca_priv_gpu_dev_verbs_cqe_is_error(op_own))
			return doca_priv_gpu_dev_verbs_cqe_result(cq, cqe, op_own, cons_index, false);
		if ((op_own >> DOCA_GPUNETIO_VERBS_MLX5_CQE_OPCODE_SHIFT) != DOCA_GPUNETIO_IB_MLX5_CQE_INVALID &&
		    !(cqe_ci <= cons_index && (uint16_t)((uint16_t)cons_index - wc - 2) < cqe_num))
			break;
		if (!waiting) {
			w = doca_priv_gpu_dev_verbs_waiter_init(cq);
			waiting = true;
		}
		const int r = doca_priv_gpu_dev_verbs_waiter_spin(w, cons_index);
		if (r != 0)
			return r;
	}
	const uint16_t c = (uint16_t)(wc + 1);
	*new_cqe_ci = ((cons_index & ~(uint64_t)0xFFFF) | c) + (((uint16_t)cons_index > c) ? 0x10000 : 0);
	return 0;
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ int doca_gpu_dev_verbs_poll_cq_collapsed_at(struct doca_gpu_dev_verbs_qp *qp,
									       uint64_t cons_index)
{
	uint64_t new_ci = 0;
	const int status = doca_priv_gpu_dev_verbs_poll_cq_collapsed_at<resource_sharing_mode, qp_type>(qp, &qp->cq_sq,
													 cons_index, &new_ci);
	return doca_priv_gpu_dev_verbs_cq_consume<resource_sharing_mode>(&qp->cq_sq, status, new_ci);
}

/* Waits for the next count completions after the current consumer index. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ int doca_gpu_dev_verbs_poll_cq(struct doca_gpu_dev_verbs_cq *cq, uint32_t count)
{
	if (count == 0)
		return 0;
	uint64_t ci = doca_gpu_dev_verbs_load_relaxed<resource_sharing_mode>(&cq->cqe_ci) + count - 1;
	return doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, qp_type>(cq, ci);
}

/* Polls the CQE of cons_index and points *cqe64 at its slot (DOCA SDK 3.3), whatever the result.
 * Blocking (the default): waits for it as poll_cq_at does. Non-blocking: one look; EBUSY (or the
 * QP's recorded failure) while the CQE is not there, without touching the consumer index (the SDK
 * returns 0 and advances it past a completion that has not happened). Returns 0, or -EIO for an
 * error CQE (REQ_ERR or RESP_ERR, *cqe64 on it), without advancing the consumer index. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ,
	  enum doca_gpu_dev_verbs_blocking_mode blocking_mode = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED>
__device__ static __forceinline__ int doca_gpu_dev_verbs_poll_cq(struct doca_gpu_dev_verbs_cq *cq, uint64_t cons_index,
								  struct mlx5_cqe64 **cqe64)
{
	uint8_t *cqe_daddr = doca_priv_gpu_dev_verbs_ldg_ptr(&cq->cqe_daddr);
	const uint32_t cqe_num = doca_priv_gpu_dev_verbs_ldg(&cq->cqe_num);
	const uint64_t x = cons_index + doca_priv_gpu_dev_verbs_ldg(&cq->cqe_rsvd);
	*cqe64 = (struct mlx5_cqe64 *)(cqe_daddr + (x & (uint64_t)(cqe_num - 1)) * DOCA_GPUNETIO_VERBS_CQE_SIZE);
	if (blocking_mode == DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED)
		return doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, qp_type>(cq, cons_index);
	return doca_gpu_dev_verbs_poll_one_cq_at<resource_sharing_mode, qp_type>(cq, cons_index);
}

/* One look at the CQE of cons_index (DOCA SDK 3.4): 0 when it is there (the consumer index moves
 * past it) or was consumed already, EBUSY while it is not there (or the QP's recorded failure),
 * -EIO for an error CQE. *cqe points at the slot in every case. cqe_rsvd is added to the index, as
 * in every poll here: the host leaves it 0 unless it consumed CQEs before the kernel ran. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ int doca_gpu_dev_verbs_poll_one_cq_device_at(struct doca_gpu_dev_verbs_cq *cq,
										uint64_t cons_index,
										doca_gpu_dev_verbs_cqe64 **cqe)
{
	uint8_t *cqe_daddr = doca_priv_gpu_dev_verbs_ldg_ptr(&cq->cqe_daddr);
	const uint32_t cqe_num = doca_priv_gpu_dev_verbs_ldg(&cq->cqe_num);
	const uint64_t x = cons_index + doca_priv_gpu_dev_verbs_ldg(&cq->cqe_rsvd);
	*cqe = (doca_gpu_dev_verbs_cqe64 *)(cqe_daddr + (x & (uint64_t)(cqe_num - 1)) * DOCA_GPUNETIO_VERBS_CQE_SIZE);
	return doca_gpu_dev_verbs_poll_one_cq_at<resource_sharing_mode, qp_type>(cq, cons_index);
}

/* ---- Receive CQE helpers (DOCA SDK 3.3) ---------------------------------------------------------- */

/* Non-zero (MLX5_INLINE_SCATTER_32, 4) when the NIC scattered the received payload (at most 32
 * bytes) into the CQE instead of the receive buffer. */
__device__ static __forceinline__ uint32_t doca_gpu_dev_verbs_cqe_is_inline(struct mlx5_cqe64 *cqe64)
{
	return (uint32_t)((const volatile uint8_t *)cqe64)[63] & 0x4u;
}

/* The payload of an inline receive CQE: its first 32 bytes. */
__device__ static __forceinline__ uint8_t *doca_gpu_dev_verbs_cqe_get_inl_data(struct mlx5_cqe64 *cqe64)
{
	return ((struct doca_gpu_dev_verbs_cqe64_inline *)cqe64)->inl_data;
}

/* The CQE's byte count in host order: the length received, for a receive CQE. */
__device__ static __forceinline__ uint32_t doca_gpu_dev_verbs_cqe_get_bytes(struct mlx5_cqe64 *cqe64)
{
	return doca_gpu_dev_verbs_bswap32(((const volatile struct doca_gpunetio_ib_mlx5_cqe64 *)cqe64)->byte_cnt);
}

/* For CQs without overrun-ignore. As in DOCA, cqe_ci becomes a 24-bit wrapping value: do not mix
 * with poll_cq_at on the same CQ. */
template <bool is_overrun>
__device__ static __forceinline__ uint32_t doca_gpu_dev_verbs_cq_update_dbrec(struct doca_gpu_dev_verbs_cq *cq,
									       uint32_t cqe_num)
{
	uint32_t ci = (uint32_t)doca_priv_gpu_dev_verbs_read_once(&cq->cqe_ci);
	ci = (ci + cqe_num) & DOCA_GPUNETIO_VERBS_CQE_CI_MASK;
	if (!is_overrun)
		doca_priv_gpu_dev_verbs_store_release_gpu32_na((uint32_t *)cq->dbrec, doca_gpu_dev_verbs_bswap32(ci));
	doca_priv_gpu_dev_verbs_write_once(&cq->cqe_ci, (uint64_t)ci);
	return ci;
}

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif /* DOCA_GPUNETIO_DEV_VERBS_CQ_H */
