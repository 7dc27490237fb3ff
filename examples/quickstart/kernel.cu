/*
 * The quickstart's kernel. Each thread of one block puts its chunk of the source buffer to the same
 * offset of the destination over the one QP the block shares, then waits for that put's completion.
 * Keys arrive big-endian (gpunetio.DeviceKey), as the device API takes them.
 *
 * The Go program compiles this file with NVRTC at run time; `make kernels` also builds it with nvcc
 * into build/kernels/quickstart_kernel.fatbin, which the program loads with -image.
 */
#include <doca_gpunetio_dev_verbs_onesided.cuh>
#include <doca_gpunetio_dev_verbs_cq.cuh>

extern "C" __global__ void quickstart_put(struct doca_gpu_dev_verbs_qp *qp, uint64_t dst, uint32_t dst_key,
					  uint64_t src, uint32_t src_key, uint32_t chunk, unsigned int *errors)
{
	const uint64_t off = (uint64_t)threadIdx.x * chunk;
	doca_gpu_dev_verbs_ticket_t ticket;

	doca_gpu_dev_verbs_put<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>(
		qp, doca_gpu_dev_verbs_addr{dst + off, dst_key}, doca_gpu_dev_verbs_addr{src + off, src_key}, chunk,
		&ticket);
	if (doca_gpu_dev_verbs_poll_cq_at<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(
		    doca_gpu_dev_verbs_qp_get_cq_sq(qp), ticket) != 0)
		atomicAdd(errors, 1u);
}
