/*
 * twosided_bw device code: SEND/receive bandwidth over one RC QP driven entirely by GPU threads.
 *
 * Built by `make kernels` into build/kernels/twosided_bw_kernel.fatbin and launched from Go
 * (examples/twosided_bw) through the CUDA driver API; the entry points are extern "C" so their
 * names are not mangled, and take only plain arguments. One block of 512 threads, so that
 * __syncthreads orders the whole grid.
 *
 * A run of num_iters messages is num_iters / 512 rounds. In round r the server's threads each post
 * one receive (thread t into bytes [t*size, (t+1)*size) of the server's buffer), then thread 0
 * tells the client that the round's receives are posted with an RDMA write of the flag value
 * base + r + 1 into the client's flag word, and every thread waits for its receive's completion.
 * The client's thread 0 waits for that flag value, then every client thread sends bytes
 * [t*size, (t+1)*size) of its buffer and waits for the send's completion. No SEND finds its
 * receive missing, so none draws an RNR NAK. After a run the server's buffer is a copy of the
 * client's.
 */
#include <doca_gpunetio_dev_verbs_onesided.cuh>
#include <doca_gpunetio_dev_verbs_twosided.cuh>
#include <doca_gpunetio_dev_verbs_cq.cuh>

#define TWOSIDED_RSM DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU
#define TWOSIDED_NIC DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO

template <enum doca_gpu_dev_verbs_exec_scope scope>
__device__ static __forceinline__ void server_run(struct doca_gpu_dev_verbs_qp *qp, uint32_t num_iters, uint64_t size,
						  uint64_t local, uint32_t lkey_be, uint64_t flag_raddr,
						  uint32_t flag_rkey_be, uint64_t base, unsigned int *err_count)
{
	const uint32_t tid = threadIdx.x;
	const uint32_t rounds = num_iters / blockDim.x;
	const struct doca_gpu_dev_verbs_addr dst = {local + size * tid, lkey_be};
	const struct doca_gpu_dev_verbs_addr flag = {flag_raddr, flag_rkey_be};
	const struct doca_gpu_dev_verbs_addr no_dump = {0, 0};

	for (uint32_t r = 0; r < rounds; r++) {
		doca_gpu_dev_verbs_ticket_t ticket;
		doca_gpu_dev_verbs_recv<TWOSIDED_RSM, TWOSIDED_NIC, scope>(qp, dst, (size_t)size, &ticket);
		__syncthreads(); /* every receive of the round is posted */
		if (tid == 0) {
			doca_gpu_dev_verbs_ticket_t flag_ticket;
			__threadfence_system();
			doca_gpu_dev_verbs_p<uint64_t, TWOSIDED_RSM, TWOSIDED_NIC>(qp, flag, base + r + 1, &flag_ticket);
			if (doca_gpu_dev_verbs_poll_cq_at<TWOSIDED_RSM>(doca_gpu_dev_verbs_qp_get_cq_sq(qp), flag_ticket) != 0) {
				printf("Error CQE on the flag write!\n");
				atomicAdd(err_count, 1u);
			}
		}
		struct mlx5_cqe64 *cqe = NULL;
		doca_gpu_dev_verbs_recv_wait<TWOSIDED_RSM, TWOSIDED_NIC>(qp, no_dump, &ticket, &cqe);
		/* recv_wait reports no error: the CQE's opcode does (op_own, byte 63, read through the
		 * inline view, which names every byte of the 64). */
		const uint8_t op_own = ((struct doca_gpu_dev_verbs_cqe64_inline *)cqe)->op_own;
		if ((op_own >> 4) == DOCA_GPUNETIO_IB_MLX5_CQE_RESP_ERR) {
			printf("Error CQE on receive %llu!\n", (unsigned long long)ticket);
			atomicAdd(err_count, 1u);
		} else if (doca_gpu_dev_verbs_cqe_get_bytes(cqe) != size) {
			printf("Receive %llu got %u bytes, want %llu\n", (unsigned long long)ticket,
			       doca_gpu_dev_verbs_cqe_get_bytes(cqe), (unsigned long long)size);
			atomicAdd(err_count, 1u);
		}
		__syncthreads();
	}
}

template <enum doca_gpu_dev_verbs_exec_scope scope>
__device__ static __forceinline__ void client_run(struct doca_gpu_dev_verbs_qp *qp, uint32_t num_iters, uint64_t size,
						  uint64_t local, uint32_t lkey_be, uint64_t *flag, uint64_t base,
						  unsigned int *err_count)
{
	const uint32_t tid = threadIdx.x;
	const uint32_t rounds = num_iters / blockDim.x;
	const unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	struct doca_gpu_dev_verbs_cq *cq = doca_gpu_dev_verbs_qp_get_cq_sq(qp);
	const struct doca_gpu_dev_verbs_addr src = {local + size * tid, lkey_be};

	for (uint32_t r = 0; r < rounds; r++) {
		if (tid == 0) {
			/* The server's receives of round r are posted once the flag says so. */
			while (DOCA_GPUNETIO_VOLATILE(*flag) < base + r + 1)
				;
		}
		__syncthreads();
		doca_gpu_dev_verbs_ticket_t ticket;
		doca_gpu_dev_verbs_send<TWOSIDED_RSM, TWOSIDED_NIC, scope>(qp, src, (size_t)size, &ticket);
		int status = 0;
		if (scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP) {
			/* The warp's WQEs complete in order: lane 0 waits for the last lane's one. */
			const doca_gpu_dev_verbs_ticket_t last = __shfl_sync(0xffffffffu, ticket, 31);
			if (lane == 0)
				status = doca_gpu_dev_verbs_poll_cq_at(cq, last);
			__syncwarp();
		} else {
			status = doca_gpu_dev_verbs_poll_cq_at<TWOSIDED_RSM>(cq, ticket);
		}
		if (status != 0) {
			printf("Error CQE!\n");
			atomicAdd(err_count, 1u);
		}
		__syncthreads();
	}
}

/* Server, thread scope: every thread posts its own receive. */
extern "C" __global__ void twosided_bw_server_thread(struct doca_gpu_dev_verbs_qp *qp, uint32_t num_iters,
						      uint64_t size, uint64_t local, uint32_t lkey_be,
						      uint64_t flag_raddr, uint32_t flag_rkey_be, uint64_t base,
						      unsigned int *err_count)
{
	server_run<DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>(qp, num_iters, size, local, lkey_be, flag_raddr,
							  flag_rkey_be, base, err_count);
}

/* Server, warp scope: the 32 lanes of a warp post their receives together. */
extern "C" __global__ void twosided_bw_server_warp(struct doca_gpu_dev_verbs_qp *qp, uint32_t num_iters,
						    uint64_t size, uint64_t local, uint32_t lkey_be, uint64_t flag_raddr,
						    uint32_t flag_rkey_be, uint64_t base, unsigned int *err_count)
{
	server_run<DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP>(qp, num_iters, size, local, lkey_be, flag_raddr,
							flag_rkey_be, base, err_count);
}

/* Client, thread scope: every thread posts its own SEND. */
extern "C" __global__ void twosided_bw_client_thread(struct doca_gpu_dev_verbs_qp *qp, uint32_t num_iters,
						      uint64_t size, uint64_t local, uint32_t lkey_be, uint64_t *flag,
						      uint64_t base, unsigned int *err_count)
{
	client_run<DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>(qp, num_iters, size, local, lkey_be, flag, base,
							  err_count);
}

/* Client, warp scope: the 32 lanes of a warp post their SENDs together (one reservation, one doorbell). */
extern "C" __global__ void twosided_bw_client_warp(struct doca_gpu_dev_verbs_qp *qp, uint32_t num_iters,
						    uint64_t size, uint64_t local, uint32_t lkey_be, uint64_t *flag,
						    uint64_t base, unsigned int *err_count)
{
	client_run<DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP>(qp, num_iters, size, local, lkey_be, flag, base,
							err_count);
}
