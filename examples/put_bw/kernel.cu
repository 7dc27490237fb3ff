/*
 * put_bw device code: every thread of the grid issues high-level one-sided puts on the one shared
 * QP and waits for each put's completion before the next round.
 *
 * Built by `make kernels` into build/kernels/put_bw_kernel.fatbin and launched from Go
 * (examples/put_bw) through the CUDA driver API; the entry points are extern "C" so their names
 * are not mangled, and take only plain arguments.
 *
 * Memory layout: thread t (global id) always sends bytes [t*size, (t+1)*size) of the local buffer
 * to the same range of the remote buffer, so after a run the remote buffer is a copy of the
 * local one. The host guarantees num_iters % (gridDim.x * blockDim.x) == 0, so every thread runs
 * the same number of rounds and the block-wide barrier is safe.
 */
#include <doca_gpunetio_dev_verbs_onesided.cuh>
#include <doca_gpunetio_dev_verbs_cq.cuh>

template <enum doca_gpu_dev_verbs_exec_scope scope>
__device__ static __forceinline__ void put_bw_run(struct doca_gpu_dev_verbs_qp *qp, uint32_t num_iters, uint64_t size,
						  uint64_t local, uint32_t lkey_be, uint64_t remote, uint32_t rkey_be,
						  unsigned int *err_count)
{
	const uint32_t nthreads = gridDim.x * blockDim.x;
	const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
	const uint32_t rounds = num_iters / nthreads;
	const unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	struct doca_gpu_dev_verbs_cq *cq = doca_gpu_dev_verbs_qp_get_cq_sq(qp);
	const struct doca_gpu_dev_verbs_addr dst = {.addr = remote + size * tid, .key = rkey_be};
	const struct doca_gpu_dev_verbs_addr src = {.addr = local + size * tid, .key = lkey_be};

	for (uint32_t r = 0; r < rounds; r++) {
		doca_gpu_dev_verbs_ticket_t ticket;
		doca_gpu_dev_verbs_put<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
				       scope>(qp, dst, src, (size_t)size, &ticket);
		int status = 0;
		if (scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP) {
			/* The warp's WQEs complete in order: lane 0 waits for the last lane's one. */
			const doca_gpu_dev_verbs_ticket_t last = __shfl_sync(0xffffffffu, ticket, 31);
			if (lane == 0)
				status = doca_gpu_dev_verbs_poll_cq_at(cq, last);
			__syncwarp();
		} else {
			status = doca_gpu_dev_verbs_poll_cq_at<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(cq, ticket);
		}
		if (status != 0) {
			printf("Error CQE!\n");
			atomicAdd(err_count, 1u);
		}
		__syncthreads();
	}
}

/* Thread scope: every thread posts its own put. */
extern "C" __global__ void gpunetio_put_bw_thread(struct doca_gpu_dev_verbs_qp *qp, uint32_t num_iters, uint64_t size,
						  uint64_t local, uint32_t lkey_be, uint64_t remote, uint32_t rkey_be,
						  unsigned int *err_count)
{
	put_bw_run<DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>(qp, num_iters, size, local, lkey_be, remote, rkey_be,
							  err_count);
}

/* Warp scope: the 32 lanes of a warp post their puts together (one reservation, one doorbell). */
extern "C" __global__ void gpunetio_put_bw_warp(struct doca_gpu_dev_verbs_qp *qp, uint32_t num_iters, uint64_t size,
						uint64_t local, uint32_t lkey_be, uint64_t remote, uint32_t rkey_be,
						unsigned int *err_count)
{
	put_bw_run<DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP>(qp, num_iters, size, local, lkey_be, remote, rkey_be,
							err_count);
}
