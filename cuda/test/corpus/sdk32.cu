/*
 * DOCA SDK 3.2 style: flat includes, the ticket by pointer to wait and get_wait, the
 * DOCA_GPUNETIO_MLX5_* spellings, qp->need_mcst deciding on the DUMP after a get.
 */
#ifndef CORPUS_INCLUDE_STYLE
#define CORPUS_INCLUDE_STYLE 1
#endif
#if CORPUS_INCLUDE_STYLE == 1
#include <doca_gpunetio_verbs_def.h>
#include <doca_gpunetio_dev_verbs_qp.cuh>
#include <doca_gpunetio_dev_verbs_onesided.cuh>
#elif CORPUS_INCLUDE_STYLE == 2
#include <doca_gpunetio_device.h>
#else
#include <common/doca_gpunetio_verbs_def.h>
#include <device/doca_gpunetio_dev_verbs_onesided.cuh>
#endif
#include "corpus.h"

/* put, then wait with the ticket by pointer. Returns the ticket. */
__device__ inline uint64_t corpus_sdk32_put_wait(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
						 struct doca_gpu_dev_verbs_addr laddr, size_t size)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_put<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
			       DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>(qp, raddr, laddr, size, &ticket);
	doca_gpu_dev_verbs_wait<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>(qp, &ticket);
	return ticket;
}

/* get, then get_wait with the ticket by pointer; the DUMP only where the QP says it is needed. */
__device__ inline uint64_t corpus_sdk32_get_wait(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
						 struct doca_gpu_dev_verbs_addr laddr, size_t size,
						 struct doca_gpu_dev_verbs_addr dump)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_get(qp, raddr, laddr, size, dump, &ticket);
	if (qp->need_mcst == true)
		doca_gpu_dev_verbs_get_wait<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
					    DOCA_GPUNETIO_VERBS_MCST_ENABLED>(qp, dump, &ticket);
	else
		doca_gpu_dev_verbs_get_wait(qp, dump, &ticket);
	return ticket;
}

#ifdef CORPUS_KERNEL
CORPUS_KERNEL corpus_sdk32_kernel(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
				  struct doca_gpu_dev_verbs_addr laddr, size_t size, struct doca_gpu_dev_verbs_addr dump)
{
	corpus_sdk32_put_wait(qp, raddr, laddr, size);
	corpus_sdk32_get_wait(qp, raddr, laddr, size, dump);
	/* The flag word, read the SDK's way. */
	if (DOCA_GPUNETIO_VERBS_VOLATILE(qp->need_dump))
		DOCA_GPUNETIO_VERBS_WRITE_ONCE(qp->last_dump_wqe_idx, qp->sq_rsvd_index);
}
#endif
