/*
 * GPUNetIO verbs completion-queue API: CQE probes, blocking polls, collapsed-CQ polls and the CQ
 * doorbell-record update (device-api.md section 4.3).
 *
 * Return codes: 0 = completion observed without error, -EIO = the CQE has opcode REQ_ERR (the
 * consumer index is then not advanced), EBUSY = not observed yet (non-blocking probe only).
 * Waiting is only defined for an index less than one CQ lap ahead of the consumer index.
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_CQ_H
#define DOCA_GPUNETIO_DEV_VERBS_CQ_H

#if !defined(__CUDACC_RTC__)
#include <errno.h>
#endif
#include "doca_gpunetio_dev_verbs_common.cuh"

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

__device__ static __forceinline__ uint32_t doca_gpu_dev_verbs_cqe_idx_inc_mask(uint32_t cqe_idx, uint32_t increment)
{
	return (cqe_idx + increment) & DOCA_GPUNETIO_VERBS_CQE_CI_MASK;
}

/* Decision D2: always declared; the polls call it only when DOCA_GPUNETIO_VERBS_ENABLE_DEBUG == 1. */
__device__ static __forceinline__ void doca_gpu_dev_verbs_cq_print_cqe_err(struct doca_gpunetio_ib_mlx5_cqe64 *cqe64)
{
	struct doca_gpunetio_ib_mlx5_err_cqe_ex *err = (struct doca_gpunetio_ib_mlx5_err_cqe_ex *)cqe64;
	printf("gpunetio: error CQE: syndrome 0x%x vendor_syndrome 0x%x hw_syndrome 0x%x hw_syndrome_type 0x%x wqe_counter %u\n",
	       (unsigned int)err->syndrome, (unsigned int)err->vendor_err_synd, (unsigned int)err->hw_err_synd,
	       (unsigned int)err->hw_synd_type, (unsigned int)doca_gpu_dev_verbs_bswap16(err->wqe_counter));
}

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

/* Internal: converts an observed op_own into the poll result (debug print on REQ_ERR). */
__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_cqe_result(uint8_t *cqe, uint8_t op_own)
{
	if ((op_own >> DOCA_GPUNETIO_VERBS_MLX5_CQE_OPCODE_SHIFT) == DOCA_GPUNETIO_IB_MLX5_CQE_REQ_ERR) {
#if DOCA_GPUNETIO_VERBS_ENABLE_DEBUG == 1
		doca_gpu_dev_verbs_cq_print_cqe_err((struct doca_gpunetio_ib_mlx5_cqe64 *)cqe);
#else
		(void)cqe;
#endif
		return -EIO;
	}
	return 0;
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
	const uint64_t cqe_ci = doca_gpu_dev_verbs_load_relaxed<resource_sharing_mode>(&cq->cqe_ci);
	uint8_t op_own;

	if (cons_index < cqe_ci)
		return 0;
	if (cons_index >= cqe_ci + cqe_num)
		return EBUSY;
	if (!doca_priv_gpu_dev_verbs_cqe_observed(cqe, x, cqe_num, cons_index, &op_own))
		return EBUSY;
	return doca_priv_gpu_dev_verbs_cqe_result(cqe, op_own);
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ int doca_gpu_dev_verbs_poll_one_cq_at(struct doca_gpu_dev_verbs_cq *cq,
									 uint64_t cons_index)
{
	int status = doca_priv_gpu_dev_verbs_poll_one_cq_at<resource_sharing_mode, qp_type>(cq, cons_index);
	if (status == 0) {
		doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&cq->cqe_ci, cons_index + 1);
	}
	return status;
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

	for (;;) {
		const uint64_t cqe_ci = doca_gpu_dev_verbs_load_relaxed<resource_sharing_mode>(&cq->cqe_ci);
		if (cons_index < cqe_ci)
			return 0;
		const bool observed = doca_priv_gpu_dev_verbs_cqe_observed(cqe, x, cqe_num, cons_index, &op_own);
		if (cons_index >= cqe_ci + cqe_num || !observed) {
			doca_priv_gpu_dev_verbs_spin_hint();
			continue;
		}
		break;
	}
	return doca_priv_gpu_dev_verbs_cqe_result(cqe, op_own);
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ int doca_gpu_dev_verbs_poll_cq_at(struct doca_gpu_dev_verbs_cq *cq,
								     uint64_t cons_index)
{
	int status = doca_priv_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, qp_type>(cq, cons_index);
	if (status == 0) {
		doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&cq->cqe_ci, cons_index + 1);
	}
	return status;
}

/* Collapsed CQ (every CQE lands in entry 0). Count semantics: cons_index n is done once n WQEs
 * have completed (wqe_counter + 1 >= n within a cqe_num window, 16-bit arithmetic). Ignores
 * cqe_rsvd and the owner bit, and first waits for sq_wqe_pi >= cons_index (Decision D3). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_poll_cq_collapsed_at(struct doca_gpu_dev_verbs_qp *qp,
										    struct doca_gpu_dev_verbs_cq *cq,
										    uint64_t cons_index,
										    uint64_t *new_cqe_ci)
{
	uint8_t *cqe = doca_priv_gpu_dev_verbs_ldg_ptr(&cq->cqe_daddr);
	const uint32_t cqe_num = doca_priv_gpu_dev_verbs_ldg(&cq->cqe_num);
	uint16_t w;
	uint8_t op_own;

	while (doca_gpu_dev_verbs_atomic_read<uint64_t, resource_sharing_mode>(&qp->sq_wqe_pi) < cons_index)
		doca_priv_gpu_dev_verbs_spin_hint();
	doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();

	for (;;) {
		const uint64_t cqe_ci = doca_gpu_dev_verbs_load_relaxed<resource_sharing_mode>(&cq->cqe_ci);
		if (cons_index < cqe_ci)
			return 0;
		uint32_t word =
			doca_gpu_dev_verbs_bswap32(doca_gpu_dev_verbs_load_relaxed_sys_global((uint32_t *)(cqe + 60)));
		w = (uint16_t)(word >> 16);
		op_own = (uint8_t)(word & 0xff);
		if ((op_own >> DOCA_GPUNETIO_VERBS_MLX5_CQE_OPCODE_SHIFT) == DOCA_GPUNETIO_IB_MLX5_CQE_INVALID ||
		    (cqe_ci <= cons_index && (uint16_t)((uint16_t)cons_index - w - 2) < cqe_num)) {
			doca_priv_gpu_dev_verbs_spin_hint();
			continue;
		}
		break;
	}
	const uint16_t c = (uint16_t)(w + 1);
	*new_cqe_ci = ((cons_index & ~(uint64_t)0xFFFF) | c) + (((uint16_t)cons_index > c) ? 0x10000 : 0);
	return doca_priv_gpu_dev_verbs_cqe_result(cqe, op_own);
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static __forceinline__ int doca_gpu_dev_verbs_poll_cq_collapsed_at(struct doca_gpu_dev_verbs_qp *qp,
									       uint64_t cons_index)
{
	uint64_t new_ci = 0;
	int status = doca_priv_gpu_dev_verbs_poll_cq_collapsed_at<resource_sharing_mode, qp_type>(qp, &qp->cq_sq,
												   cons_index, &new_ci);
	if (status == 0) {
		doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&qp->cq_sq.cqe_ci, new_ci);
	}
	return status;
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

/* For CQs without overrun-ignore (Decision D4: cqe_ci becomes a 24-bit wrapping value; do not
 * mix with poll_cq_at on the same CQ). */
template <bool is_overrun>
__device__ static __forceinline__ uint32_t doca_gpu_dev_verbs_cq_update_dbrec(struct doca_gpu_dev_verbs_cq *cq,
									       uint32_t cqe_num)
{
	uint32_t ci = (uint32_t) * (volatile uint64_t *)&cq->cqe_ci;
	ci = (ci + cqe_num) & DOCA_GPUNETIO_VERBS_CQE_CI_MASK;
	if (!is_overrun) {
#if defined(__CUDACC__)
		asm volatile("st.release.gpu.global.L1::no_allocate.b32 [%0], %1;" ::"l"(cq->dbrec),
			     "r"(doca_gpu_dev_verbs_bswap32(ci))
			     : "memory");
#else
		__atomic_store_n(cq->dbrec, doca_gpu_dev_verbs_bswap32(ci), __ATOMIC_RELEASE);
#endif
	}
	*(volatile uint64_t *)&cq->cqe_ci = (uint64_t)ci;
	return ci;
}

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif /* DOCA_GPUNETIO_DEV_VERBS_CQ_H */
