/*
 * Open-source GPUNetIO 2.0 / 3.0 style: sub-directory includes, the DOCA_GPUNETIO_IB_MLX5_*
 * spellings, code options as the trailing argument, the ticket by value.
 */
#ifndef CORPUS_INCLUDE_STYLE
#define CORPUS_INCLUDE_STYLE 3
#endif
#if CORPUS_INCLUDE_STYLE == 1
#include <doca_gpunetio_dev_verbs_onesided.cuh>
#include <doca_gpunetio_dev_verbs_counter.cuh>
#elif CORPUS_INCLUDE_STYLE == 2
#include <doca_gpunetio_device.h>
#else
#include <device/doca_gpunetio_dev_verbs_onesided.cuh>
#include <device/doca_gpunetio_dev_verbs_counter.cuh>
#endif
#include "corpus.h"

/* put with a code option argument, then wait with the ticket by value. */
__device__ inline uint64_t corpus_os_put_wait(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
					      struct doca_gpu_dev_verbs_addr laddr, size_t size)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_put<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>(
		qp, raddr, laddr, size, &ticket, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_CPU_PROXY_UPDATE_PI);
	doca_gpu_dev_verbs_wait(qp, ticket);
	return ticket;
}

/* put_counter with the trailing code option, then the companion's wait by value. */
__device__ inline void corpus_os_put_counter(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
					     struct doca_gpu_dev_verbs_addr laddr, size_t size,
					     struct doca_gpu_dev_verbs_qp *companion, struct doca_gpu_dev_verbs_addr counter_raddr,
					     struct doca_gpu_dev_verbs_addr counter_laddr, uint64_t counter_val)
{
	doca_gpu_dev_verbs_put_counter<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(
		qp, raddr, laddr, size, companion, counter_raddr, counter_laddr, counter_val,
		DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_CPU_PROXY_UPDATE_PI);
	doca_gpu_dev_verbs_wait(companion);
}

/* A fenced RDMA WRITE built by hand (the open-source FENCE, fence mode 2): returns fm_ce_se. */
__device__ inline uint32_t corpus_os_write_fenced(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey,
						  uint64_t laddr, uint32_t lkey, uint32_t size, uint64_t *out_ticket)
{
	const uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE>(
		qp, 1, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_AVAILABILITY_CHECK);
	struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx);
	doca_gpu_dev_verbs_wqe_prepare_write(
		qp, wqe, (uint16_t)idx, DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE,
		(enum doca_gpu_dev_verbs_wqe_ctrl_flags)(DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE |
							 DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FENCE),
		0, raddr, rkey, laddr, lkey, size);
	doca_gpu_dev_verbs_mark_wqes_ready<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE>(qp, idx, idx);
	doca_gpu_dev_verbs_submit<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE>(qp, idx + 1,
										       DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT);
	*out_ticket = idx;
	return wqe->rw_cseg.fm_ce_se;
}

#ifdef CORPUS_KERNEL
CORPUS_KERNEL corpus_os_kernel(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
			       struct doca_gpu_dev_verbs_addr laddr)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_put<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
			       DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP>(qp, raddr, laddr, 64, &ticket,
								    DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT);
	doca_gpu_dev_verbs_wait(qp, ticket);
	if (READ_ONCE(qp->sq_wqe_pi) == 0)
		WRITE_ONCE(qp->sq_ready_index, DOCA_GPUNETIO_VOLATILE(qp->sq_ready_index));
}
#endif
