/*
 * Must NOT compile: ncclx's CPU_PROXY_FREE_FLOW handler is refused with a message naming it
 * (scripts/headers-check.sh checks the failure and the message).
 */
#include <doca_gpunetio_device.h>

extern "C" __global__ void corpus_refused(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr a)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_put<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
			       DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY_FREE_FLOW>(qp, a, a, 8, &ticket);
}
