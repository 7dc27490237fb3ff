/*
 * DOCA SDK 3.3 style: the low-level builders with the DOCA_GPUNETIO_MLX5_* opcodes and flags and
 * the mlx5dv types, struct doca_gpu_dev_verbs_wqe_ctrl_seg, code options as template arguments
 * (reserve_wq_slots<..., wait>, submit_db<..., code_opt>, submit_bf<..., code_opt>), put_counter
 * and p_signal with the execution scope as a template argument, and their _thread forms.
 */
#ifndef CORPUS_INCLUDE_STYLE
#define CORPUS_INCLUDE_STYLE 1
#endif
#if CORPUS_INCLUDE_STYLE == 1
#include <doca_gpunetio_dev_verbs_qp.cuh>
#include <doca_gpunetio_dev_verbs_onesided.cuh>
#include <doca_gpunetio_dev_verbs_counter.cuh>
#elif CORPUS_INCLUDE_STYLE == 2
#include <doca_gpunetio_device.h>
#else
#include <device/doca_gpunetio_dev_verbs_qp.cuh>
#include <device/doca_gpunetio_dev_verbs_onesided.cuh>
#include <device/doca_gpunetio_dev_verbs_counter.cuh>
#endif
#include "corpus.h"

/* One RDMA WRITE built by hand, submitted through the DB path with the SDK's template arguments;
 * returns the WQE's fm_ce_se byte read through the SDK's ctrl-segment type (or 0xff if the opcode
 * read back is not RDMA_WRITE). */
__device__ inline uint32_t corpus_sdk33_write_lowlevel(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey,
						       uint64_t laddr, uint32_t lkey, uint32_t size, uint64_t *out_ticket)
{
	const uint64_t idx =
		doca_gpu_dev_verbs_reserve_wq_slots<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE, DOCA_GPUNETIO_VERBS_QP_SQ,
						    true>(qp, 1);
	struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx);
	doca_gpu_dev_verbs_wqe_prepare_write(qp, wqe, (uint16_t)idx, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE,
					     DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE, 0, raddr, rkey, laddr, lkey, size);
	doca_gpu_dev_verbs_mark_wqes_ready<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE>(qp, idx, idx);
	doca_gpu_dev_verbs_submit_db<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
				     DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>(qp, idx + 1);
	*out_ticket = idx;
	const struct doca_gpu_dev_verbs_wqe_ctrl_seg *ctrl = (const struct doca_gpu_dev_verbs_wqe_ctrl_seg *)wqe;
	if ((doca_gpu_dev_verbs_bswap32(ctrl->opmod_idx_opcode) & 0xff) != DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE)
		return 0xff;
	return ctrl->fm_ce_se;
}

/* put_counter with the execution scope as the SDK's third template argument, then a wait on the
 * companion's last WQE (the counter's fetch-and-add). */
__device__ inline void corpus_sdk33_put_counter(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
						struct doca_gpu_dev_verbs_addr laddr, size_t size,
						struct doca_gpu_dev_verbs_qp *companion, struct doca_gpu_dev_verbs_addr counter_raddr,
						struct doca_gpu_dev_verbs_addr counter_laddr, uint64_t counter_val)
{
	doca_gpu_dev_verbs_put_counter<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
				       DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>(qp, raddr, laddr, size, companion, counter_raddr,
									      counter_laddr, counter_val);
	doca_gpu_dev_verbs_wait(companion);
}

/* p_signal with the execution scope as the third template argument; waits on the ticket by
 * pointer. */
__device__ inline uint64_t corpus_sdk33_p_signal(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
						 uint64_t value, struct doca_gpu_dev_verbs_addr sig_raddr,
						 struct doca_gpu_dev_verbs_addr sig_laddr, uint64_t sig_val)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_p_signal<uint64_t, DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD, DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD,
				    DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>(
		qp, raddr, value, sig_raddr, sig_laddr, sig_val, &ticket);
	doca_gpu_dev_verbs_wait(qp, &ticket);
	return ticket;
}

/* The same through the _thread names. */
__device__ inline uint64_t corpus_sdk33_thread_forms(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
						     uint64_t value, struct doca_gpu_dev_verbs_addr sig_raddr,
						     struct doca_gpu_dev_verbs_addr sig_laddr, struct doca_gpu_dev_verbs_qp *companion,
						     struct doca_gpu_dev_verbs_addr counter_raddr,
						     struct doca_gpu_dev_verbs_addr counter_laddr)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_p_signal_thread<uint64_t, DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD>(qp, raddr, value, sig_raddr, sig_laddr,
											1, &ticket);
	doca_gpu_dev_verbs_put_counter_thread(qp, raddr, sig_laddr, 8, companion, counter_raddr, counter_laddr, 1);
	doca_gpu_dev_verbs_wait(companion);
	doca_gpu_dev_verbs_wait(qp, &ticket);
	return ticket;
}

#ifdef CORPUS_KERNEL
/* Warp forms and the BlueFlame submit: GPU only. */
CORPUS_KERNEL corpus_sdk33_warp_kernel(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
				       struct doca_gpu_dev_verbs_addr laddr, struct doca_gpu_dev_verbs_qp *companion,
				       struct doca_gpu_dev_verbs_addr counter_raddr, struct doca_gpu_dev_verbs_addr counter_laddr)
{
	__shared__ __align__(16) struct doca_gpu_dev_verbs_wqe smem_wqe;
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_put_counter<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
				       DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP>(qp, raddr, laddr, 64, companion, counter_raddr,
									    counter_laddr, 1);
	doca_gpu_dev_verbs_put_counter_warp(qp, raddr, laddr, 64, companion, counter_raddr, counter_laddr, 1);
	doca_gpu_dev_verbs_p_signal<uint32_t, DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD, DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP>(
		qp, raddr, (uint32_t)threadIdx.x, counter_raddr, counter_laddr, 1, &ticket);
	doca_gpu_dev_verbs_p_signal_warp<uint32_t, DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD>(qp, raddr, 1u, counter_raddr,
										     counter_laddr, 1, &ticket);
	if (threadIdx.x == 0) {
		const uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
									DOCA_GPUNETIO_VERBS_QP_SQ, false>(qp, 1);
		doca_gpu_dev_verbs_wqe_prepare_nop(qp, &smem_wqe, (uint16_t)idx, DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE);
		doca_gpu_dev_verbs_mark_wqes_ready(qp, idx, idx);
		doca_gpu_dev_verbs_submit_bf<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
					     DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_ASYNC_STORE_RELEASE>(qp, idx + 1, &smem_wqe);
		doca_gpu_dev_verbs_update_dbr<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>(
			qp, (uint32_t)idx + 1);
		doca_gpu_dev_verbs_ring_db<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>(qp,
															 idx + 1);
		doca_gpu_dev_verbs_submit_db_no_dbr<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
						    DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>(
			qp, idx + 1);
		struct doca_gpu_dev_verbs_qp *qps[2] = {qp, companion};
		uint64_t pis[2] = {idx + 1, 1};
		doca_gpu_dev_verbs_submit_db_multi_qps<2, DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
						       DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>(
			qps, pis);
		struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)qp->cq_sq.cqe_daddr;
		if ((cqe->op_own >> 4) == MLX5_CQE_REQ_ERR)
			doca_gpu_dev_verbs_cq_print_cqe_err(cqe);
		if (!doca_gpu_dev_isaligned((void *)&smem_wqe, 16))
			printf("unaligned\n");
	}
	doca_gpu_dev_verbs_wait(qp, &ticket);
}
#endif
