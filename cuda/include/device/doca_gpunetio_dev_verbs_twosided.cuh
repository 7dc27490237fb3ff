/*
 * GPUNetIO verbs two-sided API (the DOCA SDK's doca_gpunetio_dev_verbs_twosided.cuh): SEND from the
 * send queue, receives posted into the QP's receive queue, and the wait for a receive completion on
 * the QP's receive CQ, in thread and warp scope.
 *
 * Tickets: a send ticket is an SQ WQE index (wait for it with doca_gpu_dev_verbs_wait or
 * poll_cq_at on cq_sq); a receive ticket is an RQ WQE index, and its completion is the CQE of the
 * same index on cq_rq (one CQE per receive, in order: the receive CQ serves this RQ alone).
 *
 * Where this differs from the SDK (cuda/README.md, "Two-sided API"): a send of 0 bytes is one SEND
 * without data segment (a zero-length message) and a receive of 0 bytes one empty receive WQE;
 * receive submits write the RQ doorbell record after a system-scope release fence with every NIC
 * handler; recv_wait polls the receive CQE first and posts the MCST DUMP after it.
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_TWOSIDED_CUH
#define DOCA_GPUNETIO_DEV_VERBS_TWOSIDED_CUH

#include "doca_gpunetio_dev_verbs_qp.cuh"
#include "doca_gpunetio_dev_verbs_cq.cuh"
#include "doca_gpunetio_dev_verbs_onesided.cuh"

/* The descriptor structs are packed but 8-byte aligned with naturally aligned fields. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waddress-of-packed-member"
#endif

/* Internal: the lkey that ends a receive scatter list early (mlx5's invalid lkey), big-endian. */
#define DOCA_PRIV_GPU_DEV_VERBS_RECV_TERMINATOR_KEY 0x00010000u

/* Internal: the SEND WQEs of one message of size bytes from laddr, from SQ index base on: chunks of
 * at most 1 GiB (each its own message, as in the SDK), or one SEND without data segment for size 0. */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_build_send(struct doca_gpu_dev_verbs_qp *qp, uint64_t base,
									   uint32_t chunks, struct doca_gpu_dev_verbs_addr laddr,
									   size_t size)
{
	if (size == 0) {
		doca_gpu_dev_verbs_wqe_prepare_send(qp, doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)base), (uint16_t)base,
						    DOCA_GPUNETIO_IB_MLX5_OPCODE_SEND, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 0);
		return;
	}
	uint64_t left = (uint64_t)size;
	for (uint32_t i = 0; i < chunks; i++) {
		const uint64_t idx = base + i;
		const uint64_t off = (uint64_t)i << DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE_SHIFT;
		const uint32_t len =
			(uint32_t)(left < DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE ? left : DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE);
		doca_gpu_dev_verbs_wqe_prepare_send(qp, doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx), (uint16_t)idx,
						    DOCA_GPUNETIO_IB_MLX5_OPCODE_SEND, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 0,
						    laddr.addr + off, laddr.key, len);
		left -= len;
	}
}

/* Internal: the receive WQE of RQ index idx: size bytes at laddr, or no scatter entry for 0. */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_build_recv(struct doca_gpu_dev_verbs_qp *qp, uint64_t idx,
									   struct doca_gpu_dev_verbs_addr laddr, size_t size)
{
	struct mlx5_wqe_data_seg *rwqe = doca_gpu_dev_verbs_get_rwqe_ptr(qp, (uint16_t)idx);
	if (size == 0)
		doca_gpu_dev_verbs_wqe_prepare_recv(qp, rwqe, 0, DOCA_PRIV_GPU_DEV_VERBS_RECV_TERMINATOR_KEY, 0);
	else
		doca_gpu_dev_verbs_wqe_prepare_recv(qp, rwqe, laddr.addr, laddr.key, (uint32_t)size);
}

/* ==== SEND =================================================================================== */

/* Posts a SEND of size bytes from laddr; *out_ticket is its last SQ WQE. A message of more than
 * 1 GiB goes as several SENDs of at most 1 GiB, each consuming one receive at the peer. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_send_thread(struct doca_gpu_dev_verbs_qp *qp,
								       struct doca_gpu_dev_verbs_addr laddr, size_t size,
								       doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	const uint32_t chunks = doca_priv_gpu_dev_verbs_put_chunks(size); /* at least one */
	*out_ticket = doca_priv_gpu_dev_verbs_post_thread<resource_sharing_mode, nic_handler>(
		qp, chunks, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT,
		[&](uint64_t base) { doca_priv_gpu_dev_verbs_build_send(qp, base, chunks, laddr, size); });
}

/* Warp collective: all 32 lanes call; each posts one SEND of its own laddr/size (at most 1 GiB)
 * and gets its own WQE index. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_send_warp(struct doca_gpu_dev_verbs_qp *qp,
								     struct doca_gpu_dev_verbs_addr laddr, size_t size,
								     doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	DOCA_GPUNETIO_VERBS_ASSERT(size <= DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE);
	*out_ticket = doca_priv_gpu_dev_verbs_post_warp<resource_sharing_mode, nic_handler>(
		qp, 1, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT,
		[&](uint64_t mine) { doca_priv_gpu_dev_verbs_build_send(qp, mine, 1, laddr, size); });
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static __forceinline__ void doca_gpu_dev_verbs_send(struct doca_gpu_dev_verbs_qp *qp,
								struct doca_gpu_dev_verbs_addr laddr, size_t size,
								doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_send_warp<resource_sharing_mode, nic_handler>(qp, laddr, size, out_ticket);
	else
		doca_gpu_dev_verbs_send_thread<resource_sharing_mode, nic_handler>(qp, laddr, size, out_ticket);
}

/* ==== RECV =================================================================================== */

/* Posts one receive of at most size bytes into laddr (local memory, its lkey); *out_ticket is its
 * RQ index. Blocks while the receive ring is full, until the receive a lap earlier has completed
 * (which takes a message from the peer). The receive record is the RQ's doorbell with every NIC
 * handler (nic_handler is accepted for the SDK's signature).
 *
 * On a shared QP, the lanes of a warp that call it together on the same QP post as one group, as
 * thread-scope puts do: the lowest lane reserves the group's receives, every lane writes its own
 * WQE (in lane order), and the lowest lane publishes and submits them once. Lane by lane, the
 * in-order readiness and the record's lock made the lanes of a warp wait on each other (H100,
 * bench/postrate: 0.53, 0.83 and 0.03 M receives/s at 1x32, 1x256 and 132x256 threads, against
 * 11.8, 26.4 and 15.6 grouped), and a 512-thread kernel posting its receives this way did not
 * finish in 40 s (twosided_bw -e 0). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_recv_thread(struct doca_gpu_dev_verbs_qp *qp,
								       struct doca_gpu_dev_verbs_addr laddr, size_t size,
								       doca_gpu_dev_verbs_ticket_t *out_ticket)
{
#if defined(__CUDA_ARCH__)
	if (resource_sharing_mode != DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		const unsigned int mask = __activemask();
		if (__popc(mask) > 1) {
			const unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
			const unsigned int group = __match_any_sync(mask, (unsigned long long)(uintptr_t)qp);
			const int leader = __ffs(group) - 1;
			const unsigned int rank = __popc(group & ((1u << lane) - 1u));
			const uint32_t total = (uint32_t)__popc(group);
			unsigned long long base = 0;
			if ((int)lane == leader)
				base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_RQ>(
					qp, total);
			base = __shfl_sync(mask, base, leader);
			const uint64_t mine = (uint64_t)base + rank;
			doca_priv_gpu_dev_verbs_build_recv(qp, mine, laddr, size);
			__syncwarp(mask);
			if ((int)lane == leader) {
				doca_gpu_dev_verbs_mark_wqes_ready<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_RQ>(
					qp, base, base + total - 1);
				doca_gpu_dev_verbs_submit<resource_sharing_mode, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, nic_handler,
							  DOCA_GPUNETIO_VERBS_QP_RQ>(qp, base + total);
			}
			__syncwarp(mask);
			*out_ticket = mine;
			return;
		}
	}
#endif
	const uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_RQ>(qp, 1);
	doca_priv_gpu_dev_verbs_build_recv(qp, idx, laddr, size);
	doca_gpu_dev_verbs_mark_wqes_ready<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_RQ>(qp, idx, idx);
	doca_gpu_dev_verbs_submit<resource_sharing_mode, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, nic_handler,
				  DOCA_GPUNETIO_VERBS_QP_RQ>(qp, idx + 1);
	*out_ticket = idx;
}

/* Warp collective: all 32 lanes call; each posts one receive of its own laddr/size and gets its
 * own RQ index. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_recv_warp(struct doca_gpu_dev_verbs_qp *qp,
								     struct doca_gpu_dev_verbs_addr laddr, size_t size,
								     doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	DOCA_PRIV_GPU_DEV_VERBS_WARP_ONLY(); /* before anything is reserved */
	DOCA_GPUNETIO_VERBS_ASSERT(size <= DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE);
	const unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	unsigned long long base = 0;
	if (lane == 0)
		base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_RQ>(
			qp, DOCA_GPUNETIO_VERBS_WARP_SIZE);
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	base = DOCA_PRIV_GPU_DEV_VERBS_SHFL0(base);
	const uint64_t mine = (uint64_t)base + lane;
	doca_priv_gpu_dev_verbs_build_recv(qp, mine, laddr, size);
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	if (lane == 0) {
		const uint64_t last = (uint64_t)base + DOCA_GPUNETIO_VERBS_WARP_SIZE - 1;
		doca_gpu_dev_verbs_mark_wqes_ready<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_RQ>(qp, base, last);
		doca_gpu_dev_verbs_submit<resource_sharing_mode, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, nic_handler,
					  DOCA_GPUNETIO_VERBS_QP_RQ>(qp, last + 1);
	}
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	*out_ticket = mine;
}

/* raddr is the local receive buffer (the SDK's name for the parameter). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static __forceinline__ void doca_gpu_dev_verbs_recv(struct doca_gpu_dev_verbs_qp *qp,
								struct doca_gpu_dev_verbs_addr raddr, size_t size,
								doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_recv_warp<resource_sharing_mode, nic_handler>(qp, raddr, size, out_ticket);
	else
		doca_gpu_dev_verbs_recv_thread<resource_sharing_mode, nic_handler>(qp, raddr, size, out_ticket);
}

/* ==== RECV_WAIT ================================================================================ */

/* Internal: waits for (or, non-blocking, looks at) the receive completion of RQ index *ticket on
 * cq_rq and points *cqe64 at its CQE. Then, with MCST enabled and the receive complete, posts a
 * 1-byte DUMP at daddr on the SQ (through nic_handler) and waits for it, so the received data is
 * visible to the GPU after it (the SDK posts the DUMP before it polls the receive, which orders
 * nothing about a receive completing later). The result is not returned, as in the SDK: an error
 * CQE shows as (*cqe64)->op_own >> 4 == MLX5_CQE_RESP_ERR (14), and in the QP's error record. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED,
	  enum doca_gpu_dev_verbs_blocking_mode blocking_mode = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED>
__device__ static inline void doca_priv_gpu_dev_verbs_recv_wait(struct doca_gpu_dev_verbs_qp *qp,
								 struct doca_gpu_dev_verbs_addr daddr,
								 doca_gpu_dev_verbs_ticket_t *ticket,
								 struct mlx5_cqe64 **cqe64)
{
	const int status = doca_gpu_dev_verbs_poll_cq<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_RQ, blocking_mode>(
		doca_gpu_dev_verbs_qp_get_cq_rq(qp), *ticket, cqe64);
	if (mcst_mode == DOCA_GPUNETIO_VERBS_MCST_ENABLED && status == 0) {
		const uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode>(qp, 1);
		doca_gpu_dev_verbs_wqe_prepare_dump(qp, doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx), (uint16_t)idx,
						    DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, daddr.addr, daddr.key, 1);
		doca_gpu_dev_verbs_mark_wqes_ready<resource_sharing_mode>(qp, idx, idx);
		doca_gpu_dev_verbs_submit<resource_sharing_mode, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, nic_handler>(qp, idx + 1);
		(void)doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode>(doca_gpu_dev_verbs_qp_get_cq_sq(qp), idx);
	} else {
		(void)daddr;
	}
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED,
	  enum doca_gpu_dev_verbs_blocking_mode blocking_mode = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED>
__device__ static inline void doca_gpu_dev_verbs_recv_wait(struct doca_gpu_dev_verbs_qp *qp,
							    struct doca_gpu_dev_verbs_addr daddr,
							    doca_gpu_dev_verbs_ticket_t *ticket, struct mlx5_cqe64 **cqe64)
{
	doca_priv_gpu_dev_verbs_recv_wait<resource_sharing_mode, nic_handler, mcst_mode, blocking_mode>(qp, daddr, ticket,
													 cqe64);
}

/* Waits for the newest receive reserved on the QP; returns at once, *cqe64 untouched, when none
 * was ever reserved. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED,
	  enum doca_gpu_dev_verbs_blocking_mode blocking_mode = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED>
__device__ static inline void doca_gpu_dev_verbs_recv_wait(struct doca_gpu_dev_verbs_qp *qp,
							    struct doca_gpu_dev_verbs_addr daddr, struct mlx5_cqe64 **cqe64)
{
	const uint64_t t = doca_gpu_dev_verbs_atomic_read<uint64_t, resource_sharing_mode>(&qp->rq_rsvd_index);
	if (t == 0)
		return;
	doca_gpu_dev_verbs_ticket_t ticket = t - 1;
	doca_priv_gpu_dev_verbs_recv_wait<resource_sharing_mode, nic_handler, mcst_mode, blocking_mode>(qp, daddr, &ticket,
													 cqe64);
}

/* The DOCA SDK 3.1 name (3.2 replaced it with recv_wait): waits for the receive of ticket, with the
 * MCST DUMP at daddr when the QP's need_mcst says the GPU needs one. Each lane of a warp waits for
 * its own ticket in WARP scope as in THREAD scope. */
template <enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_wait_recv(struct doca_gpu_dev_verbs_qp *qp,
							    doca_gpu_dev_verbs_ticket_t ticket,
							    struct doca_gpu_dev_verbs_addr daddr)
{
	struct mlx5_cqe64 *cqe64;
	if (doca_priv_gpu_dev_verbs_ldg((const uint8_t *)&qp->need_mcst) != 0)
		doca_priv_gpu_dev_verbs_recv_wait<resource_sharing_mode, nic_handler, DOCA_GPUNETIO_VERBS_MCST_ENABLED>(
			qp, daddr, &ticket, &cqe64);
	else
		doca_priv_gpu_dev_verbs_recv_wait<resource_sharing_mode, nic_handler, DOCA_GPUNETIO_VERBS_MCST_DISABLED>(
			qp, daddr, &ticket, &cqe64);
}

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif /* DOCA_GPUNETIO_DEV_VERBS_TWOSIDED_CUH */
