/*
 * The open-source copies NCCL carries: get with a trailing code option, then
 * doca_gpu_dev_verbs_mcst (a standalone DUMP) and a wait on its ticket.
 */
#ifndef CORPUS_INCLUDE_STYLE
#define CORPUS_INCLUDE_STYLE 1
#endif
#if CORPUS_INCLUDE_STYLE == 1
#include <doca_gpunetio_dev_verbs_onesided.cuh>
#elif CORPUS_INCLUDE_STYLE == 2
#include <doca_gpunetio_device.h>
#else
#include <device/doca_gpunetio_dev_verbs_onesided.cuh>
#endif
#include "corpus.h"

/* get, then the DUMP that makes its data visible, waited for by value. Returns the DUMP's ticket. */
__device__ inline uint64_t corpus_nccl_get_mcst(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
						struct doca_gpu_dev_verbs_addr laddr, size_t size,
						struct doca_gpu_dev_verbs_addr dump)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_get<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(qp, raddr, laddr, size, dump, &ticket,
									       DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT);
	doca_gpu_dev_verbs_mcst<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(qp, dump, &ticket);
	doca_gpu_dev_verbs_wait(qp, ticket);
	return ticket;
}

#ifdef CORPUS_KERNEL
CORPUS_KERNEL corpus_nccl_kernel(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
				 struct doca_gpu_dev_verbs_addr laddr, struct doca_gpu_dev_verbs_addr dump)
{
	corpus_nccl_get_mcst(qp, raddr, laddr, 64, dump);
}
#endif
