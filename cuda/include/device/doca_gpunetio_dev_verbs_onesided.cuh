/*
 * GPUNetIO verbs high-level one-sided API: put, p, put_signal, p_signal, signal, get, get_wait,
 * wait and fence, in thread and warp scope, and the extensions built on them.
 *
 * Thread scope: every calling thread posts its own operation and gets the ticket of its last WQE.
 * On the GPU, in CTA and GPU sharing modes, the active lanes of a warp that call the same
 * operation on the same QP at the same time are coalesced: one reservation for all of them, each
 * lane builds its own WQEs, one in-order publication and one doorbell for the batch. Per-call
 * semantics (WQEs, CQE per WQE, tickets) are unchanged.
 * Warp scope: all 32 lanes of a converged warp call together; each lane posts its own operation
 * (p_warp, put_signal_warp and signal_warp are real operations; DOCA's are no-ops).
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_ONESIDED_CUH
#define DOCA_GPUNETIO_DEV_VERBS_ONESIDED_CUH

#include "doca_gpunetio_dev_verbs_qp.cuh"
#include "doca_gpunetio_dev_verbs_cq.cuh"

/* The descriptor structs are packed but 8-byte aligned with naturally aligned fields. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waddress-of-packed-member"
#endif

/* Internal: the submit scope of the high-level API. With GPU sharing, mark_wqes_ready has
 * already issued a GPU-scope release fence; otherwise submit fences at GPU scope. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
struct doca_priv_gpu_dev_verbs_submit_scope {
	static constexpr enum doca_gpu_dev_verbs_sync_scope value =
		(resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU) ? DOCA_GPUNETIO_VERBS_SYNC_SCOPE_THREAD
											: DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU;
};

/* Internal: whether submit<..., nic_handler> takes the GPU_SM_DB path and rings (BF counts as DB). */
template <enum doca_gpu_dev_verbs_nic_handler nic_handler>
__device__ static __forceinline__ bool doca_priv_gpu_dev_verbs_rings_db(struct doca_gpu_dev_verbs_qp *qp, uint32_t code_opt)
{
	if (code_opt & DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_DB_RINGING)
		return false;
	if (nic_handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB || nic_handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF)
		return true;
	if (nic_handler != DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO)
		return false;
	const int h = doca_priv_gpu_dev_verbs_qp_nic_handler(qp);
	return h == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB || h == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF;
}

/* Internal: mark_wqes_ready + submit for one EXCLUSIVE QP. announced is sq_wqe_pi as read right
 * after the reservation: nobody else touches an exclusive QP, so it is still current, and reading
 * it there (next to sq_rsvd_index, in the same cache line) takes its load off the path between
 * the WQE stores and the doorbell. The stores are those of submit_db in EXCLUSIVE mode: ready
 * index, lock word, producer index, DBR and doorbell, lock word: the submit core's. */
template <enum doca_gpu_dev_verbs_nic_handler nic_handler>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_publish_submit_excl(struct doca_gpu_dev_verbs_qp *qp,
										    uint64_t from, uint64_t to,
										    uint64_t announced, uint32_t code_opt)
{
	constexpr enum doca_gpu_dev_verbs_resource_sharing_mode excl = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE;
	if (!doca_priv_gpu_dev_verbs_rings_db<nic_handler>(qp, code_opt)) {
		doca_gpu_dev_verbs_mark_wqes_ready<excl>(qp, from, to);
		doca_gpu_dev_verbs_submit<excl, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, nic_handler>(qp, to + 1, code_opt);
		return;
	}
	const uint64_t pi = to + 1;
	const struct doca_priv_gpu_dev_verbs_db_targets t = doca_priv_gpu_dev_verbs_load_db_targets(qp, pi);
	qp->sq_ready_index = pi;
	doca_priv_gpu_dev_verbs_db_core_excl<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>(
		qp, pi, announced, t, code_opt);
}

/* Internal: one try at the in-order readiness CAS (relaxed; acquire with the candidate
 * GDAKI_DEV_CANDIDATE_SHARED_ACQUIRE_CAS, see doca_priv_gpu_dev_verbs_lock_try). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __forceinline__ uint64_t doca_priv_gpu_dev_verbs_ready_try(uint64_t *ready, uint64_t from, uint64_t to)
{
#if defined(GDAKI_DEV_CANDIDATE_SHARED_ACQUIRE_CAS)
	return doca_priv_gpu_dev_verbs_cas_acquire<resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA>(ready, from,
															 to);
#else
	return doca_priv_gpu_dev_verbs_cas64<resource_sharing_mode>(ready, from, to);
#endif
}

/* Internal: mark_wqes_ready + submit for the high-level API. On the DB path in CTA/GPU sharing
 * mode the three acquire operations of the plain sequence (after the readiness CAS, after the
 * lock CAS, and the acquire atomic_max under the lock) collapse into the lock's acquire fence,
 * which already orders the readiness CAS before the doorbell stores. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope, enum doca_gpu_dev_verbs_nic_handler nic_handler>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_publish_submit(struct doca_gpu_dev_verbs_qp *qp,
									       uint64_t from, uint64_t to,
									       uint32_t code_opt)
{
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA ||
		      resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU) {
		if (doca_priv_gpu_dev_verbs_rings_db<nic_handler>(qp, code_opt)) {
			constexpr enum doca_gpu_dev_verbs_sync_scope fscope =
				resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA
					? DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA
					: DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU;
			const struct doca_priv_gpu_dev_verbs_db_targets t =
				doca_priv_gpu_dev_verbs_load_db_targets(qp, to + 1);
			/* Readiness (release fence, then the in-order CAS, no acquire yet) and the first try
			 * at the lock are issued back to back, so their round trips to L2 overlap: +22% for
			 * one warp on a QP, -18% with the whole GPU on one QP (measured, H100). Holding the
			 * lock while readiness waits for a predecessor cannot deadlock: publishing readiness
			 * never takes the lock. (Dropping the lock again when the readiness CAS fails kept
			 * the full-GPU rate but sometimes ran one warp of thread-scope puts 5x slower.) */
			doca_gpu_dev_verbs_fence_release<fscope>();
			uint64_t seen = doca_priv_gpu_dev_verbs_ready_try<resource_sharing_mode>(&qp->sq_ready_index, from, to + 1);
			int locked = doca_priv_gpu_dev_verbs_lock_try<resource_sharing_mode>(&qp->sq_lock);
			while (seen != from) {
				doca_priv_gpu_dev_verbs_spin_hint();
				seen = doca_priv_gpu_dev_verbs_ready_try<resource_sharing_mode>(&qp->sq_ready_index, from, to + 1);
			}
			/* Lock (the first try is in flight), or leave when another submitter already
			 * announced this PI; then the doorbell, as every GPU_SM_DB submit does it. */
			doca_priv_gpu_dev_verbs_db_core_shared<resource_sharing_mode, sync_scope,
							       doca_priv_gpu_dev_verbs_at_least_gpu<sync_scope>::value>(
				qp, to + 1, locked, t, code_opt);
			return;
		}
	}
	doca_gpu_dev_verbs_mark_wqes_ready<resource_sharing_mode>(qp, from, to);
	doca_gpu_dev_verbs_submit<resource_sharing_mode, sync_scope, nic_handler>(qp, to + 1, code_opt);
}

/* Internal: posts nslots WQEs for one thread-scope operation. build(first_index) writes them.
 * Returns the index of the last WQE (the ticket). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler, typename Build>
__device__ static __forceinline__ uint64_t doca_priv_gpu_dev_verbs_post_thread(struct doca_gpu_dev_verbs_qp *qp,
									       uint32_t nslots, uint32_t code_opt,
									       Build build)
{
	constexpr enum doca_gpu_dev_verbs_sync_scope scope =
		doca_priv_gpu_dev_verbs_submit_scope<resource_sharing_mode>::value;
#if defined(__CUDA_ARCH__)
	if (resource_sharing_mode != DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		const unsigned int mask = __activemask();
		if (__popc(mask) > 1) {
			const unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
			const unsigned int group = __match_any_sync(mask, (unsigned long long)(uintptr_t)qp);
			const int leader = __ffs(group) - 1;
			const uint32_t lead_n = __shfl_sync(mask, nslots, leader);
			const uint32_t lead_opt = __shfl_sync(mask, code_opt, leader);
			if (__all_sync(mask, lead_n == nslots && lead_opt == code_opt)) {
				const unsigned int rank = __popc(group & ((1u << lane) - 1u));
				const uint32_t total = (uint32_t)__popc(group) * nslots;
				unsigned long long base = 0;
				if ((int)lane == leader)
					base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode>(qp, total,
													    code_opt);
				base = __shfl_sync(mask, base, leader);
				const uint64_t mine = (uint64_t)base + (uint64_t)rank * nslots;
				build(mine);
				__syncwarp(mask);
				if ((int)lane == leader) {
					doca_priv_gpu_dev_verbs_publish_submit<resource_sharing_mode, scope, nic_handler>(
						qp, base, base + total - 1, code_opt);
				}
				__syncwarp(mask);
				return mine + nslots - 1;
			}
		}
	}
#endif
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		const uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode>(qp, nslots, code_opt);
		const uint64_t announced = qp->sq_wqe_pi;
		build(base);
		doca_priv_gpu_dev_verbs_publish_submit_excl<nic_handler>(qp, base, base + nslots - 1, announced, code_opt);
		return base + nslots - 1;
	}
	const uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode>(qp, nslots, code_opt);
	build(base);
	doca_priv_gpu_dev_verbs_publish_submit<resource_sharing_mode, scope, nic_handler>(qp, base, base + nslots - 1,
											  code_opt);
	return base + nslots - 1;
}

/* Internal: posts per_lane WQEs for each of the 32 lanes of a converged warp. Lane 0 reserves,
 * publishes and submits. Returns the index of the calling lane's last WQE. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler, typename Build>
__device__ static __forceinline__ uint64_t doca_priv_gpu_dev_verbs_post_warp(struct doca_gpu_dev_verbs_qp *qp,
									     uint32_t per_lane, uint32_t code_opt,
									     Build build)
{
	constexpr enum doca_gpu_dev_verbs_sync_scope scope =
		doca_priv_gpu_dev_verbs_submit_scope<resource_sharing_mode>::value;
	DOCA_PRIV_GPU_DEV_VERBS_WARP_ONLY(); /* before anything is reserved */
	const uint32_t total = DOCA_GPUNETIO_VERBS_WARP_SIZE * per_lane;
	const unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	unsigned long long base = 0;
	uint64_t announced = 0;
	if (lane == 0) {
		base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode>(qp, total, code_opt);
		if (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE)
			announced = qp->sq_wqe_pi;
	}
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	base = DOCA_PRIV_GPU_DEV_VERBS_SHFL0(base);
	const uint64_t mine = (uint64_t)base + (uint64_t)lane * per_lane;
	build(mine);
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	if (lane == 0) {
		if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE)
			doca_priv_gpu_dev_verbs_publish_submit_excl<nic_handler>(qp, base, base + total - 1, announced,
										 code_opt);
		else
			doca_priv_gpu_dev_verbs_publish_submit<resource_sharing_mode, scope, nic_handler>(
				qp, base, base + total - 1, code_opt);
	}
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	return mine + per_lane - 1;
}

/* Internal: RDMA WRITE or RDMA READ (opcode) chunks of at most 1 GiB from WQE index base on, or a
 * NOP for size 0 (DOCA's get leaves the index uninitialised then). */
template <uint32_t opcode>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_build_rw(struct doca_gpu_dev_verbs_qp *qp, uint64_t base,
									 uint32_t chunks, struct doca_gpu_dev_verbs_addr raddr,
									 struct doca_gpu_dev_verbs_addr laddr, size_t size)
{
	static_assert(opcode == DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE || opcode == DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_READ,
		      "build_rw posts RDMA WRITE or RDMA READ");
	for (uint32_t i = 0; i < chunks; i++) {
		const uint64_t off = (uint64_t)i << DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE_SHIFT;
		const uint64_t left = (uint64_t)size - off;
		const uint32_t len = (uint32_t)(left < DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE ? left
										     : DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE);
		const uint16_t idx = (uint16_t)(base + i);
		struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, idx);
		if (len > 0) {
			if constexpr (opcode == DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_READ)
				doca_gpu_dev_verbs_wqe_prepare_read(qp, wqe, idx, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE,
								    raddr.addr + off, raddr.key, laddr.addr + off, laddr.key, len);
			else
				doca_gpu_dev_verbs_wqe_prepare_write(qp, wqe, idx, opcode, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE,
								     0, raddr.addr + off, raddr.key, laddr.addr + off, laddr.key,
								     len);
		} else {
			doca_gpu_dev_verbs_wqe_prepare_nop(qp, wqe, idx, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE);
		}
	}
}

/* Internal: the inline write of one value. */
template <typename T>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_build_p(struct doca_gpu_dev_verbs_qp *qp, uint64_t idx,
									struct doca_gpu_dev_verbs_addr raddr, T value)
{
	struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx);
	doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_header(qp, wqe, (uint16_t)idx, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE,
							     raddr.addr, raddr.key, (uint32_t)sizeof(T));
	doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_data<T>(qp, wqe, value);
}

/* Internal: the one-slot 8-byte atomic at WQE index idx (FA adds compare_add; CS swaps in swap
 * where the word equals compare_add); the old value lands at laddr. */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_build_atomic(struct doca_gpu_dev_verbs_qp *qp, uint64_t idx,
									     uint32_t opcode, struct doca_gpu_dev_verbs_addr raddr,
									     struct doca_gpu_dev_verbs_addr laddr,
									     uint64_t compare_add, uint64_t swap)
{
	doca_gpu_dev_verbs_wqe_prepare_atomic(qp, doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx), (uint16_t)idx, opcode,
					      DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, raddr.addr, raddr.key, laddr.addr,
					      laddr.key, 8, compare_add, swap);
}

/* Internal: the one-slot WQE of a signal. ADD: an 8-byte fetch-and-add whose old value lands at
 * sig_laddr. SET (extension): an inline 8-byte RDMA WRITE of sig_val (its bytes in memory order)
 * to sig_raddr, one aligned 8-byte store at the target; sig_laddr is not used. */
template <enum doca_gpu_dev_verbs_signal_op sig_op>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_build_signal(struct doca_gpu_dev_verbs_qp *qp, uint64_t idx,
									     struct doca_gpu_dev_verbs_addr sig_raddr,
									     struct doca_gpu_dev_verbs_addr sig_laddr,
									     uint64_t sig_val)
{
	static_assert(sig_op == DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD || sig_op == GDAKI_VERBS_SIGNAL_OP_SET,
		      "signal operations are ADD and GDAKI_VERBS_SIGNAL_OP_SET");
	if constexpr (sig_op == GDAKI_VERBS_SIGNAL_OP_SET) {
		struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx);
		(void)sig_laddr;
		doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_header(qp, wqe, (uint16_t)idx,
								     DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, sig_raddr.addr,
								     sig_raddr.key, 8);
		doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_data<uint64_t>(qp, wqe, sig_val);
	} else {
		doca_priv_gpu_dev_verbs_build_atomic(qp, idx, DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_FA, sig_raddr, sig_laddr,
						     sig_val, 0);
	}
}

/* Internal: the WQEs of a put_signal: chunks RDMA WRITEs from index base on, then the signal. */
template <enum doca_gpu_dev_verbs_signal_op sig_op>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_build_put_signal(
	struct doca_gpu_dev_verbs_qp *qp, uint64_t base, uint32_t chunks, struct doca_gpu_dev_verbs_addr raddr,
	struct doca_gpu_dev_verbs_addr laddr, size_t size, struct doca_gpu_dev_verbs_addr sig_raddr,
	struct doca_gpu_dev_verbs_addr sig_laddr, uint64_t sig_val)
{
	doca_priv_gpu_dev_verbs_build_rw<DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE>(qp, base, chunks, raddr, laddr, size);
	doca_priv_gpu_dev_verbs_build_signal<sig_op>(qp, base + chunks, sig_raddr, sig_laddr, sig_val);
}

/* Internal: number of 1 GiB chunks, at least one. */
__device__ static __forceinline__ uint32_t doca_priv_gpu_dev_verbs_put_chunks(size_t size)
{
	uint32_t chunks = doca_gpu_dev_verbs_div_ceil_aligned_pow2_32bits((uint64_t)size,
									  DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE_SHIFT);
	return chunks == 0 ? 1 : chunks;
}

/* ==== PUT ==================================================================================== */

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_put_thread(struct doca_gpu_dev_verbs_qp *qp,
								      struct doca_gpu_dev_verbs_addr raddr,
								      struct doca_gpu_dev_verbs_addr laddr, size_t size,
								      doca_gpu_dev_verbs_ticket_t *out_ticket,
								      uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	const uint32_t chunks = doca_priv_gpu_dev_verbs_put_chunks(size);
	*out_ticket = doca_priv_gpu_dev_verbs_post_thread<resource_sharing_mode, nic_handler>(
		qp, chunks, code_opt,
		[&](uint64_t base) { doca_priv_gpu_dev_verbs_build_rw<DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE>(qp, base, chunks, raddr, laddr, size); });
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_put_warp(struct doca_gpu_dev_verbs_qp *qp,
								    struct doca_gpu_dev_verbs_addr raddr,
								    struct doca_gpu_dev_verbs_addr laddr, size_t size,
								    doca_gpu_dev_verbs_ticket_t *out_ticket,
								    uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	DOCA_GPUNETIO_VERBS_ASSERT(size <= DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE);
	*out_ticket = doca_priv_gpu_dev_verbs_post_warp<resource_sharing_mode, nic_handler>(
		qp, 1, code_opt, [&](uint64_t idx) { doca_priv_gpu_dev_verbs_build_rw<DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE>(qp, idx, 1, raddr, laddr, size); });
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static __forceinline__ void doca_gpu_dev_verbs_put(struct doca_gpu_dev_verbs_qp *qp,
							       struct doca_gpu_dev_verbs_addr raddr,
							       struct doca_gpu_dev_verbs_addr laddr, size_t size,
							       doca_gpu_dev_verbs_ticket_t *out_ticket,
							       uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	if (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_put_warp<resource_sharing_mode, nic_handler>(qp, raddr, laddr, size, out_ticket,
										 code_opt);
	else
		doca_gpu_dev_verbs_put_thread<resource_sharing_mode, nic_handler>(qp, raddr, laddr, size, out_ticket,
										   code_opt);
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static __forceinline__ void doca_gpu_dev_verbs_put(struct doca_gpu_dev_verbs_qp *qp,
							       struct doca_gpu_dev_verbs_addr raddr,
							       struct doca_gpu_dev_verbs_addr laddr, size_t size,
							       uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_put<resource_sharing_mode, nic_handler, exec_scope>(qp, raddr, laddr, size, &ticket,
									       code_opt);
}

/* ==== P ====================================================================================== */

template <typename T,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_p_thread(struct doca_gpu_dev_verbs_qp *qp,
								    struct doca_gpu_dev_verbs_addr raddr, T value,
								    doca_gpu_dev_verbs_ticket_t *out_ticket,
								    uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	*out_ticket = doca_priv_gpu_dev_verbs_post_thread<resource_sharing_mode, nic_handler>(
		qp, 1, code_opt, [&](uint64_t idx) { doca_priv_gpu_dev_verbs_build_p<T>(qp, idx, raddr, value); });
}

template <typename T,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_p_warp(struct doca_gpu_dev_verbs_qp *qp,
								  struct doca_gpu_dev_verbs_addr raddr, T value,
								  doca_gpu_dev_verbs_ticket_t *out_ticket,
								  uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	*out_ticket = doca_priv_gpu_dev_verbs_post_warp<resource_sharing_mode, nic_handler>(
		qp, 1, code_opt, [&](uint64_t idx) { doca_priv_gpu_dev_verbs_build_p<T>(qp, idx, raddr, value); });
}

template <typename T,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static __forceinline__ void doca_gpu_dev_verbs_p(struct doca_gpu_dev_verbs_qp *qp,
							     struct doca_gpu_dev_verbs_addr raddr, T value,
							     doca_gpu_dev_verbs_ticket_t *out_ticket,
							     uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	if (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_p_warp<T, resource_sharing_mode, nic_handler>(qp, raddr, value, out_ticket, code_opt);
	else
		doca_gpu_dev_verbs_p_thread<T, resource_sharing_mode, nic_handler>(qp, raddr, value, out_ticket,
										    code_opt);
}

template <typename T,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static __forceinline__ void doca_gpu_dev_verbs_p(struct doca_gpu_dev_verbs_qp *qp,
							     struct doca_gpu_dev_verbs_addr raddr, T value,
							     uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_p<T, resource_sharing_mode, nic_handler, exec_scope>(qp, raddr, value, &ticket, code_opt);
}

/* ==== PUT_SIGNAL ============================================================================= */

template <enum doca_gpu_dev_verbs_signal_op sig_op,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_put_signal_thread(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, struct doca_gpu_dev_verbs_addr laddr,
	size_t size, struct doca_gpu_dev_verbs_addr sig_raddr, struct doca_gpu_dev_verbs_addr sig_laddr,
	uint64_t sig_val, doca_gpu_dev_verbs_ticket_t *out_ticket,
	uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	DOCA_GPUNETIO_VERBS_ASSERT(qp->mem_type == DOCA_GPUNETIO_VERBS_MEM_TYPE_GPU);
	const uint32_t chunks = doca_priv_gpu_dev_verbs_put_chunks(size);
	*out_ticket = doca_priv_gpu_dev_verbs_post_thread<resource_sharing_mode, nic_handler>(
		qp, chunks + 1, code_opt, [&](uint64_t base) {
			doca_priv_gpu_dev_verbs_build_put_signal<sig_op>(qp, base, chunks, raddr, laddr, size, sig_raddr,
									 sig_laddr, sig_val);
		});
}

template <enum doca_gpu_dev_verbs_signal_op sig_op,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_put_signal_warp(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, struct doca_gpu_dev_verbs_addr laddr,
	size_t size, struct doca_gpu_dev_verbs_addr sig_raddr, struct doca_gpu_dev_verbs_addr sig_laddr,
	uint64_t sig_val, doca_gpu_dev_verbs_ticket_t *out_ticket,
	uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	DOCA_GPUNETIO_VERBS_ASSERT(size <= DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE);
	*out_ticket = doca_priv_gpu_dev_verbs_post_warp<resource_sharing_mode, nic_handler>(
		qp, 2, code_opt, [&](uint64_t idx) {
			doca_priv_gpu_dev_verbs_build_put_signal<sig_op>(qp, idx, 1, raddr, laddr, size, sig_raddr, sig_laddr,
									 sig_val);
		});
}

template <enum doca_gpu_dev_verbs_signal_op sig_op,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static __forceinline__ void doca_gpu_dev_verbs_put_signal(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, struct doca_gpu_dev_verbs_addr laddr,
	size_t size, struct doca_gpu_dev_verbs_addr sig_raddr, struct doca_gpu_dev_verbs_addr sig_laddr,
	uint64_t sig_val, doca_gpu_dev_verbs_ticket_t *out_ticket,
	uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	if (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_put_signal_warp<sig_op, resource_sharing_mode, nic_handler>(
			qp, raddr, laddr, size, sig_raddr, sig_laddr, sig_val, out_ticket, code_opt);
	else
		doca_gpu_dev_verbs_put_signal_thread<sig_op, resource_sharing_mode, nic_handler>(
			qp, raddr, laddr, size, sig_raddr, sig_laddr, sig_val, out_ticket, code_opt);
}

template <enum doca_gpu_dev_verbs_signal_op sig_op,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static __forceinline__ void doca_gpu_dev_verbs_put_signal(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, struct doca_gpu_dev_verbs_addr laddr,
	size_t size, struct doca_gpu_dev_verbs_addr sig_raddr, struct doca_gpu_dev_verbs_addr sig_laddr,
	uint64_t sig_val, uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_put_signal<sig_op, resource_sharing_mode, nic_handler, exec_scope>(
		qp, raddr, laddr, size, sig_raddr, sig_laddr, sig_val, &ticket, code_opt);
}

/* ==== P_SIGNAL =============================================================================== */

template <typename T, enum doca_gpu_dev_verbs_signal_op sig_op,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_p_signal(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, T value,
	struct doca_gpu_dev_verbs_addr sig_raddr, struct doca_gpu_dev_verbs_addr sig_laddr, uint64_t sig_val,
	doca_gpu_dev_verbs_ticket_t *out_ticket, uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	*out_ticket = doca_priv_gpu_dev_verbs_post_thread<resource_sharing_mode, nic_handler>(
		qp, 2, code_opt, [&](uint64_t base) {
			doca_priv_gpu_dev_verbs_build_p<T>(qp, base, raddr, value);
			doca_priv_gpu_dev_verbs_build_signal<sig_op>(qp, base + 1, sig_raddr, sig_laddr, sig_val);
		});
}

template <typename T, enum doca_gpu_dev_verbs_signal_op sig_op,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_p_signal(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, T value,
	struct doca_gpu_dev_verbs_addr sig_raddr, struct doca_gpu_dev_verbs_addr sig_laddr, uint64_t sig_val,
	uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_p_signal<T, sig_op, resource_sharing_mode, nic_handler>(qp, raddr, value, sig_raddr,
										   sig_laddr, sig_val, &ticket, code_opt);
}

/* SDK form: the execution scope as the third template parameter (no default, so only calls that
 * name it reach this overload). */
template <typename T, enum doca_gpu_dev_verbs_signal_op sig_op, enum doca_gpu_dev_verbs_exec_scope exec_scope,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_p_signal(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, T value,
	struct doca_gpu_dev_verbs_addr sig_raddr, struct doca_gpu_dev_verbs_addr sig_laddr, uint64_t sig_val,
	doca_gpu_dev_verbs_ticket_t *out_ticket);

/* SDK: p_signal by one thread: an inline RDMA WRITE of value, then the signal. The ticket is the
 * signal's WQE. */
template <typename T, enum doca_gpu_dev_verbs_signal_op sig_op,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_p_signal_thread(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, T value,
	struct doca_gpu_dev_verbs_addr sig_raddr, struct doca_gpu_dev_verbs_addr sig_laddr, uint64_t sig_val,
	doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	doca_gpu_dev_verbs_p_signal<T, sig_op, resource_sharing_mode, nic_handler>(qp, raddr, value, sig_raddr,
										   sig_laddr, sig_val, out_ticket);
}

/* SDK: p_signal by a converged warp: each of the 32 lanes writes its value inline, then lane 0
 * posts one signal after them (33 WQEs). Every lane's ticket is the signal's WQE. */
template <typename T, enum doca_gpu_dev_verbs_signal_op sig_op,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_p_signal_warp(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, T value,
	struct doca_gpu_dev_verbs_addr sig_raddr, struct doca_gpu_dev_verbs_addr sig_laddr, uint64_t sig_val,
	doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	constexpr enum doca_gpu_dev_verbs_sync_scope scope =
		doca_priv_gpu_dev_verbs_submit_scope<resource_sharing_mode>::value;
	constexpr uint32_t total = DOCA_GPUNETIO_VERBS_WARP_SIZE + 1;
	DOCA_PRIV_GPU_DEV_VERBS_WARP_ONLY(); /* before anything is reserved */
	const unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	unsigned long long base = 0;
	uint64_t announced = 0;
	if (lane == 0) {
		base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode>(qp, total);
		if (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE)
			announced = qp->sq_wqe_pi;
	}
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	base = DOCA_PRIV_GPU_DEV_VERBS_SHFL0(base);
	doca_priv_gpu_dev_verbs_build_p<T>(qp, (uint64_t)base + lane, raddr, value);
	if (lane == 0)
		doca_priv_gpu_dev_verbs_build_signal<sig_op>(qp, (uint64_t)base + total - 1, sig_raddr, sig_laddr, sig_val);
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	if (lane == 0) {
		if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE)
			doca_priv_gpu_dev_verbs_publish_submit_excl<nic_handler>(qp, base, base + total - 1, announced,
										 DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT);
		else
			doca_priv_gpu_dev_verbs_publish_submit<resource_sharing_mode, scope, nic_handler>(
				qp, base, base + total - 1, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT);
	}
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	*out_ticket = (uint64_t)base + total - 1;
}

template <typename T, enum doca_gpu_dev_verbs_signal_op sig_op, enum doca_gpu_dev_verbs_exec_scope exec_scope,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode, enum doca_gpu_dev_verbs_nic_handler nic_handler>
__device__ static __forceinline__ void doca_gpu_dev_verbs_p_signal(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, T value,
	struct doca_gpu_dev_verbs_addr sig_raddr, struct doca_gpu_dev_verbs_addr sig_laddr, uint64_t sig_val,
	doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_p_signal_warp<T, sig_op, resource_sharing_mode, nic_handler>(
			qp, raddr, value, sig_raddr, sig_laddr, sig_val, out_ticket);
	else
		doca_gpu_dev_verbs_p_signal_thread<T, sig_op, resource_sharing_mode, nic_handler>(
			qp, raddr, value, sig_raddr, sig_laddr, sig_val, out_ticket);
}

/* ==== SIGNAL ================================================================================= */

template <enum doca_gpu_dev_verbs_signal_op sig_op,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_signal_thread(struct doca_gpu_dev_verbs_qp *qp,
									 struct doca_gpu_dev_verbs_addr sig_raddr,
									 struct doca_gpu_dev_verbs_addr sig_laddr,
									 uint64_t sig_val, doca_gpu_dev_verbs_ticket_t *out_ticket,
									 uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	*out_ticket = doca_priv_gpu_dev_verbs_post_thread<resource_sharing_mode, nic_handler>(
		qp, 1, code_opt,
		[&](uint64_t idx) { doca_priv_gpu_dev_verbs_build_signal<sig_op>(qp, idx, sig_raddr, sig_laddr, sig_val); });
}

template <enum doca_gpu_dev_verbs_signal_op sig_op,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_signal_warp(struct doca_gpu_dev_verbs_qp *qp,
								       struct doca_gpu_dev_verbs_addr sig_raddr,
								       struct doca_gpu_dev_verbs_addr sig_laddr, uint64_t sig_val,
								       doca_gpu_dev_verbs_ticket_t *out_ticket,
								       uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	*out_ticket = doca_priv_gpu_dev_verbs_post_warp<resource_sharing_mode, nic_handler>(
		qp, 1, code_opt,
		[&](uint64_t idx) { doca_priv_gpu_dev_verbs_build_signal<sig_op>(qp, idx, sig_raddr, sig_laddr, sig_val); });
}

template <enum doca_gpu_dev_verbs_signal_op sig_op,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static __forceinline__ void doca_gpu_dev_verbs_signal(struct doca_gpu_dev_verbs_qp *qp,
								  struct doca_gpu_dev_verbs_addr sig_raddr,
								  struct doca_gpu_dev_verbs_addr sig_laddr, uint64_t sig_val,
								  doca_gpu_dev_verbs_ticket_t *out_ticket,
								  uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	if (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_signal_warp<sig_op, resource_sharing_mode, nic_handler>(qp, sig_raddr, sig_laddr,
											    sig_val, out_ticket, code_opt);
	else
		doca_gpu_dev_verbs_signal_thread<sig_op, resource_sharing_mode, nic_handler>(
			qp, sig_raddr, sig_laddr, sig_val, out_ticket, code_opt);
}

/* Ticketless signal: always thread scope (no exec_scope parameter). */
template <enum doca_gpu_dev_verbs_signal_op sig_op,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_signal(struct doca_gpu_dev_verbs_qp *qp,
								  struct doca_gpu_dev_verbs_addr sig_raddr,
								  struct doca_gpu_dev_verbs_addr sig_laddr, uint64_t sig_val,
								  uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_signal_thread<sig_op, resource_sharing_mode, nic_handler>(qp, sig_raddr, sig_laddr, sig_val,
										      &ticket, code_opt);
}

/* ==== GET ==================================================================================== */

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED,
	  enum doca_gpu_dev_verbs_blocking_mode blocking_mode = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED>
__device__ static inline void doca_gpu_dev_verbs_get_thread(struct doca_gpu_dev_verbs_qp *qp,
							     struct doca_gpu_dev_verbs_addr raddr,
							     struct doca_gpu_dev_verbs_addr laddr, size_t size,
							     struct doca_gpu_dev_verbs_addr daddr,
							     doca_gpu_dev_verbs_ticket_t *out_ticket,
							     uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	const bool mcst = mcst_mode == DOCA_GPUNETIO_VERBS_MCST_ENABLED;
	const uint32_t chunks = doca_priv_gpu_dev_verbs_put_chunks(size); /* at least one: size 0 is a NOP */
	const uint64_t last = doca_priv_gpu_dev_verbs_post_thread<resource_sharing_mode, nic_handler>(
		qp, chunks + (mcst ? 1 : 0), code_opt, [&](uint64_t base) {
			doca_priv_gpu_dev_verbs_build_rw<DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_READ>(qp, base, chunks, raddr, laddr, size);
			if (mcst)
				doca_gpu_dev_verbs_wqe_prepare_dump(
					qp, doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)(base + chunks)),
					(uint16_t)(base + chunks), DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, daddr.addr,
					daddr.key, 1);
		});
	if (blocking_mode == DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED)
		(void)doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode>(&qp->cq_sq, last);
	*out_ticket = last;
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED,
	  enum doca_gpu_dev_verbs_blocking_mode blocking_mode = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED>
__device__ static inline void doca_gpu_dev_verbs_get_warp(struct doca_gpu_dev_verbs_qp *qp,
							   struct doca_gpu_dev_verbs_addr raddr,
							   struct doca_gpu_dev_verbs_addr laddr, size_t size,
							   struct doca_gpu_dev_verbs_addr daddr,
							   doca_gpu_dev_verbs_ticket_t *out_ticket,
							   uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	constexpr enum doca_gpu_dev_verbs_sync_scope scope =
		doca_priv_gpu_dev_verbs_submit_scope<resource_sharing_mode>::value;
	const bool mcst = mcst_mode == DOCA_GPUNETIO_VERBS_MCST_ENABLED;
	DOCA_PRIV_GPU_DEV_VERBS_WARP_ONLY(); /* before anything is reserved */
	const uint32_t total = DOCA_GPUNETIO_VERBS_WARP_SIZE + (mcst ? 1 : 0);
	const unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	DOCA_GPUNETIO_VERBS_ASSERT(size <= DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE);
	unsigned long long base = 0;
	if (lane == 0)
		base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode>(qp, total, code_opt);
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	base = DOCA_PRIV_GPU_DEV_VERBS_SHFL0(base);
	doca_priv_gpu_dev_verbs_build_rw<DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_READ>(qp, base + lane, 1, raddr, laddr, size);
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	if (lane == 0) {
		const uint64_t last = base + total - 1;
		if (mcst)
			doca_gpu_dev_verbs_wqe_prepare_dump(qp, doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)last),
							    (uint16_t)last, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE,
							    daddr.addr, daddr.key, 1);
		doca_gpu_dev_verbs_mark_wqes_ready<resource_sharing_mode>(qp, base, last);
		/* code_opt is forwarded in the MCST path too (DOCA drops it). */
		if (mcst)
			doca_gpu_dev_verbs_submit<resource_sharing_mode, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, nic_handler>(
				qp, last + 1, code_opt);
		else
			doca_gpu_dev_verbs_submit<resource_sharing_mode, scope, nic_handler>(qp, last + 1, code_opt);
		if (blocking_mode == DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED)
			(void)doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode>(&qp->cq_sq, last);
	}
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	*out_ticket = (mcst && lane == 0) ? (uint64_t)base + total - 1 : (uint64_t)base + lane;
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED,
	  enum doca_gpu_dev_verbs_blocking_mode blocking_mode = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED>
__device__ static inline void doca_gpu_dev_verbs_get(struct doca_gpu_dev_verbs_qp *qp,
						      struct doca_gpu_dev_verbs_addr raddr,
						      struct doca_gpu_dev_verbs_addr laddr, size_t size,
						      struct doca_gpu_dev_verbs_addr daddr,
						      doca_gpu_dev_verbs_ticket_t *out_ticket,
						      uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	if (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_get_warp<resource_sharing_mode, nic_handler, mcst_mode, blocking_mode>(
			qp, raddr, laddr, size, daddr, out_ticket, code_opt);
	else
		doca_gpu_dev_verbs_get_thread<resource_sharing_mode, nic_handler, mcst_mode, blocking_mode>(
			qp, raddr, laddr, size, daddr, out_ticket, code_opt);
}

/* ==== GET_WAIT, WAIT, FENCE ================================================================== */

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED>
__device__ static inline void doca_priv_gpu_dev_verbs_get_wait(struct doca_gpu_dev_verbs_qp *qp,
								struct doca_gpu_dev_verbs_addr daddr,
								doca_gpu_dev_verbs_ticket_t ticket)
{
	if (mcst_mode == DOCA_GPUNETIO_VERBS_MCST_ENABLED) {
		const uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode>(qp, 1);
		doca_gpu_dev_verbs_wqe_prepare_dump(qp, doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx), (uint16_t)idx,
						    DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, daddr.addr, daddr.key, 1);
		doca_gpu_dev_verbs_mark_wqes_ready<resource_sharing_mode>(qp, idx, idx);
		doca_gpu_dev_verbs_submit<resource_sharing_mode, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, nic_handler>(qp,
													    idx + 1);
		(void)doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode>(&qp->cq_sq, idx > ticket ? idx : ticket);
	} else {
		(void)daddr;
		(void)doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode>(&qp->cq_sq, ticket);
	}
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED>
__device__ static inline void doca_gpu_dev_verbs_get_wait(struct doca_gpu_dev_verbs_qp *qp,
							   struct doca_gpu_dev_verbs_addr daddr,
							   doca_gpu_dev_verbs_ticket_t ticket)
{
	doca_priv_gpu_dev_verbs_get_wait<resource_sharing_mode, nic_handler, mcst_mode>(qp, daddr, ticket);
}

/* SDK form (3.3): the ticket by pointer. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED>
__device__ static inline void doca_priv_gpu_dev_verbs_get_wait(struct doca_gpu_dev_verbs_qp *qp,
								struct doca_gpu_dev_verbs_addr daddr,
								doca_gpu_dev_verbs_ticket_t *ticket)
{
	doca_priv_gpu_dev_verbs_get_wait<resource_sharing_mode, nic_handler, mcst_mode>(qp, daddr, *ticket);
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED>
__device__ static inline void doca_gpu_dev_verbs_get_wait(struct doca_gpu_dev_verbs_qp *qp,
							   struct doca_gpu_dev_verbs_addr daddr,
							   doca_gpu_dev_verbs_ticket_t *ticket)
{
	doca_priv_gpu_dev_verbs_get_wait<resource_sharing_mode, nic_handler, mcst_mode>(qp, daddr, *ticket);
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED>
__device__ static inline void doca_gpu_dev_verbs_get_wait(struct doca_gpu_dev_verbs_qp *qp,
							   struct doca_gpu_dev_verbs_addr daddr)
{
	const uint64_t t = doca_gpu_dev_verbs_atomic_read<uint64_t, resource_sharing_mode>(&qp->sq_rsvd_index);
	if (t == 0)
		return;
	doca_priv_gpu_dev_verbs_get_wait<resource_sharing_mode, nic_handler, mcst_mode>(qp, daddr, t - 1);
}

/* wait (both ticket forms): doca_gpunetio_dev_verbs_qp.cuh, as in the SDK. */

/* NCCL's copy of the open-source headers: posts one DUMP WQE (1 byte at daddr, CQ_UPDATE) and
 * returns its index without waiting; wait for it like any ticket. The DUMP completes once the NIC
 * has made the data of the RDMA reads before it visible to the GPU. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_mcst(struct doca_gpu_dev_verbs_qp *qp,
								struct doca_gpu_dev_verbs_addr daddr,
								doca_gpu_dev_verbs_ticket_t *out_ticket,
								uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	*out_ticket = doca_priv_gpu_dev_verbs_post_thread<resource_sharing_mode, nic_handler>(
		qp, 1, code_opt, [&](uint64_t idx) {
			doca_gpu_dev_verbs_wqe_prepare_dump(qp, doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx), (uint16_t)idx,
							    DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, daddr.addr, daddr.key, 1);
		});
}

/* Does nothing, as in DOCA. It needs to do nothing for ordering at the target: the NIC executes a
 * QP's WQEs in posting order and an RC responder applies a QP's writes and atomics in that order.
 * For what it does not give, see gdaki_dev_fence and gdaki_dev_quiet (cuda/README.md, "fence"). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_fence(struct doca_gpu_dev_verbs_qp *qp)
{
	(void)qp;
}

/* ==== Extensions (not in DOCA; cuda/README.md, "Extensions") ================================= */

/* Extension: fetch-and-add. Adds value to the 8-byte word at raddr (8-byte aligned, on the peer);
 * the word's old value lands in the 8 bytes at laddr (registered local memory) when the WQE
 * completes. *out_ticket is the WQE to wait for, with gdaki_dev_fetch_wait (or any wait). Thread
 * scope; in CTA/GPU sharing mode the lanes of a warp are coalesced as for put. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void gdaki_dev_fetch_add(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr,
							   struct doca_gpu_dev_verbs_addr laddr, uint64_t value,
							   doca_gpu_dev_verbs_ticket_t *out_ticket,
							   uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	*out_ticket = doca_priv_gpu_dev_verbs_post_thread<resource_sharing_mode, nic_handler>(
		qp, 1, code_opt, [&](uint64_t idx) {
			doca_priv_gpu_dev_verbs_build_atomic(qp, idx, DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_FA, raddr, laddr,
							     value, 0);
		});
}

/* Extension: compare-and-swap. If the 8-byte word at raddr equals compare it becomes swap; either
 * way its old value lands at laddr, as for gdaki_dev_fetch_add. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void gdaki_dev_compare_swap(struct doca_gpu_dev_verbs_qp *qp,
							      struct doca_gpu_dev_verbs_addr raddr,
							      struct doca_gpu_dev_verbs_addr laddr, uint64_t compare,
							      uint64_t swap, doca_gpu_dev_verbs_ticket_t *out_ticket,
							      uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	*out_ticket = doca_priv_gpu_dev_verbs_post_thread<resource_sharing_mode, nic_handler>(
		qp, 1, code_opt, [&](uint64_t idx) {
			doca_priv_gpu_dev_verbs_build_atomic(qp, idx, DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_CS, raddr, laddr,
							     compare, swap);
		});
}

/* Extension: waits for a fetching atomic (ticket from gdaki_dev_fetch_add or
 * gdaki_dev_compare_swap) and reads the old value it left at laddr into *old (old may be NULL).
 * Returns 0, or the poll's error (-EIO, -ETIMEDOUT: see the QP error record); *old is written on
 * success only. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>
__device__ static __forceinline__ int gdaki_dev_fetch_wait(struct doca_gpu_dev_verbs_qp *qp, doca_gpu_dev_verbs_ticket_t ticket,
							   struct doca_gpu_dev_verbs_addr laddr, uint64_t *old)
{
	/* On success the poll has issued a system-scope acquire fence after seeing the CQE. */
	const int rc = doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode>(&qp->cq_sq, ticket);
	if (rc == 0 && old != (uint64_t *)0)
		*old = *(const volatile uint64_t *)(uintptr_t)laddr.addr;
	return rc;
}

/* Extension: quiet. Waits until every WQE reserved on the QP so far has completed, and reports
 * errors: 0 when all completed and the QP has no failure recorded, else -EIO (an error CQE) or
 * -ETIMEDOUT (the poll bound), as recorded in the QP's error record. WQEs that other threads have
 * reserved but not yet submitted are waited for too. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>
__device__ static __forceinline__ int gdaki_dev_quiet(struct doca_gpu_dev_verbs_qp *qp)
{
	const uint64_t n = doca_gpu_dev_verbs_atomic_read<uint64_t, resource_sharing_mode>(&qp->sq_rsvd_index);
	int rc = 0;
	if (n != 0)
		rc = doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode>(&qp->cq_sq, n - 1);
	if (rc == 0) {
		struct gdaki_dev_qp_ext *ext = doca_priv_gpu_dev_verbs_cq_ext(&qp->cq_sq);
		if (ext)
			rc = doca_priv_gpu_dev_verbs_ext_failed(ext);
	}
	return rc;
}

/* Extension: a fence that orders. Posts a NOP whose ctrl segment asks for the mlx5 fence: the NIC
 * starts it, and every WQE posted after it, only once every earlier RDMA READ and atomic of the
 * QP has completed (its data is in local memory). Use it where a later operation depends on an
 * earlier get or fetching atomic, for example a put whose source is what a get just read. It
 * takes one slot and one CQE like any operation; *out_ticket is that NOP. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void gdaki_dev_fence(struct doca_gpu_dev_verbs_qp *qp, doca_gpu_dev_verbs_ticket_t *out_ticket,
						       uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	*out_ticket = doca_priv_gpu_dev_verbs_post_thread<resource_sharing_mode, nic_handler>(
		qp, 1, code_opt, [&](uint64_t idx) {
			doca_gpu_dev_verbs_wqe_prepare_nop(
				qp, doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx), (uint16_t)idx,
				(enum doca_gpu_dev_verbs_wqe_ctrl_flags)(DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE |
									 DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FENCE));
		});
}

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif /* DOCA_GPUNETIO_DEV_VERBS_ONESIDED_CUH */
