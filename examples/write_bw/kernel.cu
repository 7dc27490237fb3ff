/*
 * write_bw device code: one block builds RDMA-write WQEs directly in the send ring (one per
 * thread per round), the last thread rings one doorbell per round, and at the end it waits for
 * the last WQE's completion.
 *
 * Built by `make kernels` into build/kernels/write_bw_kernel.fatbin and launched from Go
 * (examples/write_bw) with exactly one block. There is no flow control: the host keeps
 * num_iters <= the SQ depth and num_iters % blockDim.x == 0, and a launch starts only after the
 * previous one completed, so the ring is free when a launch begins.
 */
#include <doca_gpunetio_dev_verbs_qp.cuh>
#include <doca_gpunetio_dev_verbs_cq.cuh>

extern "C" __global__ void gpunetio_write_bw(struct doca_gpu_dev_verbs_qp *qp, uint32_t num_iters, uint32_t size,
					     uint64_t local, uint32_t lkey_be, uint64_t remote, uint32_t rkey_be,
					     unsigned int *err_count)
{
	__shared__ uint64_t first_pi;
	const uint32_t tid = threadIdx.x;
	const uint32_t last = blockDim.x - 1;
	const uint32_t rounds = num_iters / blockDim.x;
	const uint64_t laddr = local + (uint64_t)size * tid;
	const uint64_t raddr = remote + (uint64_t)size * tid;

	if (tid == 0)
		first_pi = doca_gpu_dev_verbs_atomic_read<uint64_t, DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(
			&qp->sq_wqe_pi);
	__syncthreads();

	uint64_t wqe_idx = first_pi + tid;
	for (uint32_t r = 0; r < rounds; r++) {
		struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)wqe_idx);
		doca_gpu_dev_verbs_wqe_prepare_write(qp, wqe, (uint16_t)wqe_idx, DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE,
						     DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 0, raddr, rkey_be, laddr,
						     lkey_be, size);
		__syncthreads();
		if (tid == last)
			doca_gpu_dev_verbs_submit<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE>(
				qp, wqe_idx + 1, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_CPU_PROXY_UPDATE_PI);
		__syncthreads();
		wqe_idx += blockDim.x;
	}

	if (tid == last && rounds > 0) {
		struct doca_gpu_dev_verbs_cq *cq = doca_gpu_dev_verbs_qp_get_cq_sq(qp);
		if (doca_gpu_dev_verbs_poll_cq_at(cq, wqe_idx - blockDim.x) != 0) {
			printf("Error CQE!\n");
			atomicAdd(err_count, 1u);
		}
	}
}
