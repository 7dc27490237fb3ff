/*
 * DOCA SDK 3.4 style: the CPU_PROXY_NO_DBR NIC handler, the BF_UNRELIABLE and HAS_GDRCOPY code
 * options, wqe_prepare_nop, and the NIC handler compared by name.
 */
#ifndef CORPUS_INCLUDE_STYLE
#define CORPUS_INCLUDE_STYLE 1
#endif
#if CORPUS_INCLUDE_STYLE == 1
#include <doca_gpunetio_dev_verbs_qp.cuh>
#include <doca_gpunetio_dev_verbs_onesided.cuh>
#elif CORPUS_INCLUDE_STYLE == 2
#include <doca_gpunetio_device.h>
#else
#include <device/doca_gpunetio_dev_verbs_qp.cuh>
#include <device/doca_gpunetio_dev_verbs_onesided.cuh>
#endif
#include "corpus.h"

/* A put that names the QP's handler: CPU_PROXY_NO_DBR explicitly, anything else through AUTO.
 * Then a NOP with CQ_UPDATE, waited for by pointer. Returns the NOP's ticket. */
__device__ inline uint64_t corpus_sdk34_put_nop(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
						struct doca_gpu_dev_verbs_addr laddr, size_t size)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	if (qp->nic_handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY_NO_DBR)
		doca_gpu_dev_verbs_put<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
				       DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY_NO_DBR>(qp, raddr, laddr, size, &ticket);
	else
		doca_gpu_dev_verbs_put(qp, raddr, laddr, size, &ticket);
	const uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(qp, 1);
	doca_gpu_dev_verbs_wqe_prepare_nop(qp, doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx), (uint16_t)idx,
					   DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE);
	doca_gpu_dev_verbs_mark_wqes_ready<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(qp, idx, idx);
	doca_gpu_dev_verbs_submit<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>(qp,
														  idx + 1);
	ticket = idx;
	doca_gpu_dev_verbs_wait(qp, &ticket);
	return ticket;
}

#ifdef CORPUS_KERNEL
CORPUS_KERNEL corpus_sdk34_kernel(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
				  struct doca_gpu_dev_verbs_addr laddr)
{
	__shared__ __align__(16) struct doca_gpu_dev_verbs_wqe smem_wqe;
	corpus_sdk34_put_nop(qp, raddr, laddr, 64);
	const uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(qp, 1);
	doca_gpu_dev_verbs_wqe_prepare_nop(qp, &smem_wqe, (uint16_t)idx, DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE);
	doca_gpu_dev_verbs_mark_wqes_ready(qp, idx, idx);
	doca_gpu_dev_verbs_submit_bf<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
				     DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_BF_UNRELIABLE>(qp, idx + 1, &smem_wqe);
	doca_gpu_dev_verbs_submit_bf_warp<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
					  DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_HAS_GDRCOPY>(qp, idx + 1, &smem_wqe);
}
#endif
