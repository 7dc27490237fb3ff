/*
 * write_lat device code: a ping-pong of RDMA writes between two GPUs, one thread on each side.
 *
 * Each side writes a one-byte sequence number into the last byte of a size-byte message and
 * RDMA-writes the message into the peer's poll buffer; the peer spins on that byte (the last byte
 * of an RDMA write lands last). The server sends first, the client waits first.
 *
 * Sequence numbers are seq_base + 1 .. seq_base + num_iters (mod 256). The host passes the
 * number of messages already exchanged on these buffers as seq_base, so a later run never
 * mistakes the previous run's last byte for a fresh one (the reference restarts at 1 and is only
 * safe when num_iters is a multiple of 256).
 *
 * The spin on the poll buffer gives up after timeout_ns (0: never) and reports it through
 * *status (1: timed out waiting for the peer, 2: error completion), so a dead peer does not
 * hang the GPU forever.
 *
 * Built by `make kernels` into build/kernels/write_lat_kernel.fatbin; one entry point per NIC
 * handler (the handler is a template parameter of the submit path).
 */
#include <doca_gpunetio_dev_verbs_qp.cuh>
#include <doca_gpunetio_dev_verbs_cq.cuh>

#define WRITE_LAT_TIMED_OUT 1u
#define WRITE_LAT_ERROR_CQE 2u

template <enum doca_gpu_dev_verbs_nic_handler nic_handler>
__device__ static __forceinline__ void write_lat_run(struct doca_gpu_dev_verbs_qp *qp, int is_server, uint32_t num_iters,
						     uint32_t seq_base, uint32_t size, uint8_t *poll_buf,
						     uint8_t *post_buf, uint32_t lkey_be, uint64_t remote,
						     uint32_t rkey_be, uint64_t timeout_ns, unsigned int *status)
{
#ifdef DOCA_GPUNETIO_VERBS_HAS_TMA_COPY
	__shared__ struct doca_gpu_dev_verbs_wqe bf_wqe[1] __attribute__((aligned(16)));
#endif
	if (blockIdx.x != 0 || threadIdx.x != 0 || size == 0)
		return;
	const uint32_t last_byte = size - 1;
	uint64_t wqe_idx =
		doca_gpu_dev_verbs_atomic_read<uint64_t, DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE>(&qp->sq_wqe_pi);
	uint32_t sent = 0, received = 0;

	while (sent < num_iters || received < num_iters) {
		if (received < num_iters && (!is_server || sent > 0)) {
			received++;
			const uint8_t want = (uint8_t)(seq_base + received);
			const uint64_t t0 = doca_gpu_dev_verbs_query_globaltimer();
			while (DOCA_GPUNETIO_VOLATILE(poll_buf[last_byte]) != want) {
				if (timeout_ns != 0 && doca_gpu_dev_verbs_query_globaltimer() - t0 > timeout_ns) {
					atomicOr(status, WRITE_LAT_TIMED_OUT);
					return;
				}
			}
		}
		doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		if (sent < num_iters) {
			sent++;
			DOCA_GPUNETIO_VOLATILE(post_buf[last_byte]) = (uint8_t)(seq_base + sent);
			struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)wqe_idx);
			doca_gpu_dev_verbs_wqe_prepare_write(qp, wqe, (uint16_t)wqe_idx, DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE,
							     DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 0, remote, rkey_be,
							     (uint64_t)(uintptr_t)post_buf, lkey_be, size);
			if (nic_handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF) {
#ifdef DOCA_GPUNETIO_VERBS_HAS_TMA_COPY
				doca_gpu_dev_verbs_wqe_prepare_write(qp, bf_wqe, (uint16_t)wqe_idx,
								     DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE,
								     DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 0, remote,
								     rkey_be, (uint64_t)(uintptr_t)post_buf, lkey_be, size);
				doca_gpu_dev_verbs_submit_bf<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE,
							     DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>(qp, wqe_idx + 1, bf_wqe);
#else
				doca_gpu_dev_verbs_submit_bf<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE,
							     DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>(qp, wqe_idx + 1, wqe);
#endif
			} else {
				doca_gpu_dev_verbs_submit<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE,
							  DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, nic_handler>(
					qp, wqe_idx + 1, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_CPU_PROXY_UPDATE_PI);
			}
			wqe_idx++;
		}
	}
	/* Collapsed CQ, count semantics: wait until every WQE of this run has completed. */
	if (doca_gpu_dev_verbs_poll_cq_collapsed_at<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE>(qp, wqe_idx) != 0)
		atomicOr(status, WRITE_LAT_ERROR_CQE);
}

#define WRITE_LAT_ENTRY(name, handler)                                                                                 \
	extern "C" __global__ void name(struct doca_gpu_dev_verbs_qp *qp, int is_server, uint32_t num_iters,              \
					uint32_t seq_base, uint32_t size, uint8_t *poll_buf, uint8_t *post_buf,          \
					uint32_t lkey_be, uint64_t remote, uint32_t rkey_be, uint64_t timeout_ns,        \
					unsigned int *status)                                                            \
	{                                                                                                              \
		write_lat_run<handler>(qp, is_server, num_iters, seq_base, size, poll_buf, post_buf, lkey_be, remote,   \
				       rkey_be, timeout_ns, status);                                                     \
	}

WRITE_LAT_ENTRY(gpunetio_write_lat_auto, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO)
WRITE_LAT_ENTRY(gpunetio_write_lat_cpu_proxy, DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY)
WRITE_LAT_ENTRY(gpunetio_write_lat_gpu_sm_db, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB)
WRITE_LAT_ENTRY(gpunetio_write_lat_gpu_sm_bf, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF)
WRITE_LAT_ENTRY(gpunetio_write_lat_gpu_sm_no_dbr, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR)
