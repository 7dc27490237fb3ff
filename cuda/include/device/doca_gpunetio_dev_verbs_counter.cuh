/*
 * GPUNetIO verbs counter API and multi-QP submit.
 *
 * A counted operation posts its WQEs on the main QP and, on a companion QP created with the
 * core-direct master capability, a WAIT for the main CQ to reach the last main WQE followed by a
 * fetch-and-add on the counter. Thread scope only. Counters are not valid after a QP reset unless
 * the CQ was recreated (as in DOCA: the WAIT index ignores cqe_rsvd).
 *
 * The multi-QP DB submit holds all N locks at once, taken in array order: never pass the same
 * QPs in different orders from concurrent callers.
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_COUNTER_CUH
#define DOCA_GPUNETIO_DEV_VERBS_COUNTER_CUH

#include "doca_gpunetio_dev_verbs_qp.cuh"
#include "doca_gpunetio_dev_verbs_cq.cuh"
/* The counted operations build their WQEs with the one-sided API's builders. */
#include "doca_gpunetio_dev_verbs_onesided.cuh"

/* The descriptor structs are packed but 8-byte aligned with naturally aligned fields. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waddress-of-packed-member"
#endif

/* Internal: one doorbell write with the ordering of the multi-QP paths. */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_multi_ring(struct doca_gpu_dev_verbs_qp *qp,
									   uint64_t prod_index, uint32_t code_opt)
{
	doca_gpu_dev_verbs_ring_db<sync_scope>(qp, prod_index, code_opt);
}

template <unsigned int num_qps,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_gpu_code_opt tmpl_code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>
__device__ static __forceinline__ void doca_gpu_dev_verbs_submit_db_multi_qps_no_dbr(
	struct doca_gpu_dev_verbs_qp **qps, uint64_t *prod_indices,
	uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	code_opt |= (uint32_t)tmpl_code_opt; /* SDK: template parameter; open source: argument */
	if (code_opt & DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_DB_RINGING)
		return;
	for (unsigned int i = 0; i < num_qps; i++) {
		const uint64_t old = doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode, true>(
			&qps[i]->sq_wqe_pi, prod_indices[i]);
		if (old < prod_indices[i])
			doca_priv_gpu_dev_verbs_multi_ring<sync_scope>(qps[i], prod_indices[i], code_opt);
	}
}

template <unsigned int num_qps,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_gpu_code_opt tmpl_code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>
__device__ static __forceinline__ void doca_gpu_dev_verbs_submit_db_multi_qps(
	struct doca_gpu_dev_verbs_qp **qps, uint64_t *prod_indices,
	uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	code_opt |= (uint32_t)tmpl_code_opt; /* SDK: template parameter; open source: argument */
	struct doca_priv_gpu_dev_verbs_db_targets t[num_qps];
	bool advanced[num_qps];
	bool any = false;
	if (code_opt & DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_DB_RINGING)
		return;
	for (unsigned int i = 0; i < num_qps; i++) {
		doca_gpu_dev_verbs_lock<resource_sharing_mode>(&qps[i]->sq_lock);
		const uint64_t old = doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode, true>(
			&qps[i]->sq_wqe_pi, prod_indices[i]);
		advanced[i] = old < prod_indices[i];
		if (advanced[i])
			t[i] = doca_priv_gpu_dev_verbs_load_db_targets(qps[i], prod_indices[i]);
		any = any || advanced[i];
	}
	/* The doorbell order (cuda/README.md) for all QPs at once: fence, every DBR, fence, every doorbell, with the
	 * descriptor loads done before the first fence as in the one-QP submit. The explicit fences
	 * already give the stores release order, so ASYNC_STORE_RELEASE changes nothing here. */
	if (any) {
		doca_gpu_dev_verbs_fence_release<sync_scope>();
		for (unsigned int i = 0; i < num_qps; i++)
			if (advanced[i])
				doca_priv_gpu_dev_verbs_store_relaxed_sys32(t[i].dbrec, t[i].dbr_val);
		doca_gpu_dev_verbs_fence_release<doca_priv_gpu_dev_verbs_at_least_gpu<sync_scope>::value>();
		for (unsigned int i = 0; i < num_qps; i++)
			if (advanced[i])
				doca_priv_gpu_dev_verbs_store_db64(t[i].db, t[i].db_val);
	}
	for (unsigned int i = 0; i < num_qps; i++)
		doca_gpu_dev_verbs_unlock<resource_sharing_mode>(&qps[i]->sq_lock);
}

template <unsigned int num_qps,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>
__device__ static __forceinline__ void doca_gpu_dev_verbs_submit_proxy_multi_qps(struct doca_gpu_dev_verbs_qp **qps,
										  uint64_t *prod_indices)
{
	/* System scope before the host-visible mailbox stores (DOCA uses GPU scope). */
	(void)sync_scope;
	doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
	for (unsigned int i = 0; i < num_qps; i++)
		doca_gpu_dev_verbs_ring_proxy<resource_sharing_mode>(qps[i], prod_indices[i]);
}

/* Dispatcher: with AUTO the runtime handler of qps[0] decides for all QPs. GPU_SM_BF is handled as
 * GPU_SM_DB (DOCA sends it down the proxy path). */
template <unsigned int num_qps,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_submit_multi_qps(
	struct doca_gpu_dev_verbs_qp **qps, uint64_t *prod_indices,
	uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	DOCA_GPUNETIO_VERBS_ASSERT(num_qps >= 2);
	DOCA_PRIV_GPU_DEV_VERBS_REFUSE_NIC_HANDLER(nic_handler);
	int h = (int)nic_handler;
	if (nic_handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO)
		h = doca_priv_gpu_dev_verbs_qp_nic_handler(qps[0]);
	if (h == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB || h == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF)
		doca_gpu_dev_verbs_submit_db_multi_qps<num_qps, resource_sharing_mode, sync_scope>(qps, prod_indices,
												   code_opt);
	else if (h == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR)
		doca_gpu_dev_verbs_submit_db_multi_qps_no_dbr<num_qps, resource_sharing_mode, sync_scope>(
			qps, prod_indices, code_opt);
	else
		doca_gpu_dev_verbs_submit_proxy_multi_qps<num_qps, resource_sharing_mode, sync_scope>(qps, prod_indices);
}

/* Internal: publishes the main WQEs [base, last], posts WAIT + FA on the companion and submits
 * both QPs. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_counter_finish(
	struct doca_gpu_dev_verbs_qp *qp, uint64_t base, uint64_t last, struct doca_gpu_dev_verbs_qp *companion_qp,
	struct doca_gpu_dev_verbs_addr counter_raddr, struct doca_gpu_dev_verbs_addr counter_laddr,
	uint64_t counter_val, uint32_t code_opt)
{
	constexpr enum doca_gpu_dev_verbs_sync_scope scope =
		doca_priv_gpu_dev_verbs_submit_scope<resource_sharing_mode>::value;
	doca_gpu_dev_verbs_mark_wqes_ready<resource_sharing_mode>(qp, base, last);

	const uint64_t cbase = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode>(companion_qp, 2, code_opt);
	doca_gpu_dev_verbs_wqe_prepare_wait(companion_qp, doca_gpu_dev_verbs_get_wqe_ptr(companion_qp, (uint16_t)cbase),
					    (uint16_t)cbase, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, (uint32_t)last,
					    qp->cq_sq.cq_num);
	doca_gpu_dev_verbs_wqe_prepare_atomic(
		companion_qp, doca_gpu_dev_verbs_get_wqe_ptr(companion_qp, (uint16_t)(cbase + 1)), (uint16_t)(cbase + 1),
		DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_FA, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, counter_raddr.addr,
		counter_raddr.key, counter_laddr.addr, counter_laddr.key, 8, counter_val, 0);
	doca_gpu_dev_verbs_mark_wqes_ready<resource_sharing_mode>(companion_qp, cbase, cbase + 1);

	struct doca_gpu_dev_verbs_qp *qps[2] = {qp, companion_qp};
	uint64_t pis[2] = {last + 1, cbase + 2};
	doca_gpu_dev_verbs_submit_multi_qps<2, resource_sharing_mode, scope, nic_handler>(qps, pis, code_opt);
}

/* Internal: put_counter and get_counter: chunks RDMA WRITEs or READs (opcode), then
 * counter_finish. */
template <uint32_t opcode, enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_rw_counter(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, struct doca_gpu_dev_verbs_addr laddr,
	size_t size, uint64_t chunks, struct doca_gpu_dev_verbs_qp *companion_qp,
	struct doca_gpu_dev_verbs_addr counter_raddr, struct doca_gpu_dev_verbs_addr counter_laddr,
	uint64_t counter_val, uint32_t code_opt)
{
	const uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode>(qp, (uint32_t)chunks, code_opt);
	doca_priv_gpu_dev_verbs_build_rw<opcode>(qp, base, (uint32_t)chunks, raddr, laddr, size);
	doca_priv_gpu_dev_verbs_counter_finish<resource_sharing_mode, nic_handler>(
		qp, base, base + chunks - 1, companion_qp, counter_raddr, counter_laddr, counter_val, code_opt);
}

/* put_counter by one thread (the SDK's name; the open-source put_counter is this). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_put_counter_thread(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, struct doca_gpu_dev_verbs_addr laddr,
	size_t size, struct doca_gpu_dev_verbs_qp *companion_qp, struct doca_gpu_dev_verbs_addr counter_raddr,
	struct doca_gpu_dev_verbs_addr counter_laddr, uint64_t counter_val,
	uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	uint64_t chunks = doca_gpu_dev_verbs_div_ceil_aligned_pow2((uint64_t)size,
								   DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE_SHIFT);
	if (chunks == 0)
		chunks = 1;
	doca_priv_gpu_dev_verbs_rw_counter<DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE, resource_sharing_mode, nic_handler>(
		qp, raddr, laddr, size, chunks, companion_qp, counter_raddr, counter_laddr, counter_val, code_opt);
}

/* SDK: put_counter by a converged warp. Each lane writes one RDMA WRITE of at most 1 GiB (its own
 * raddr, laddr, size); lane 0 then posts the WAIT for the last of the 32 and the counter's
 * fetch-and-add on the companion QP. The 64-bit base index is broadcast whole. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_put_counter_warp(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, struct doca_gpu_dev_verbs_addr laddr,
	size_t size, struct doca_gpu_dev_verbs_qp *companion_qp, struct doca_gpu_dev_verbs_addr counter_raddr,
	struct doca_gpu_dev_verbs_addr counter_laddr, uint64_t counter_val,
	uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	DOCA_GPUNETIO_VERBS_ASSERT(size <= DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE);
	DOCA_PRIV_GPU_DEV_VERBS_WARP_ONLY(); /* before anything is reserved */
	const unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	unsigned long long base = 0;
	if (lane == 0)
		base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode>(qp, DOCA_GPUNETIO_VERBS_WARP_SIZE,
										    code_opt);
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	base = DOCA_PRIV_GPU_DEV_VERBS_SHFL0(base);
	doca_priv_gpu_dev_verbs_build_rw<DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE>(qp, (uint64_t)base + lane, 1, raddr,
										  laddr, size);
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
	if (lane == 0)
		doca_priv_gpu_dev_verbs_counter_finish<resource_sharing_mode, nic_handler>(
			qp, base, base + DOCA_GPUNETIO_VERBS_WARP_SIZE - 1, companion_qp, counter_raddr, counter_laddr,
			counter_val, code_opt);
	DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP();
}

/* Both families: put_counter. exec_scope is the SDK's third template parameter (default THREAD);
 * code_opt the open-source trailing argument. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static __forceinline__ void doca_gpu_dev_verbs_put_counter(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, struct doca_gpu_dev_verbs_addr laddr,
	size_t size, struct doca_gpu_dev_verbs_qp *companion_qp, struct doca_gpu_dev_verbs_addr counter_raddr,
	struct doca_gpu_dev_verbs_addr counter_laddr, uint64_t counter_val,
	uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_put_counter_warp<resource_sharing_mode, nic_handler>(
			qp, raddr, laddr, size, companion_qp, counter_raddr, counter_laddr, counter_val, code_opt);
	else
		doca_gpu_dev_verbs_put_counter_thread<resource_sharing_mode, nic_handler>(
			qp, raddr, laddr, size, companion_qp, counter_raddr, counter_laddr, counter_val, code_opt);
}

template <typename T,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_p_counter(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, T value,
	struct doca_gpu_dev_verbs_qp *companion_qp, struct doca_gpu_dev_verbs_addr counter_raddr,
	struct doca_gpu_dev_verbs_addr counter_laddr, uint64_t counter_val,
	uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	const uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode>(qp, 1, code_opt);
	doca_priv_gpu_dev_verbs_build_p<T>(qp, base, raddr, value);
	doca_priv_gpu_dev_verbs_counter_finish<resource_sharing_mode, nic_handler>(
		qp, base, base, companion_qp, counter_raddr, counter_laddr, counter_val, code_opt);
}

template <enum doca_gpu_dev_verbs_signal_op sig_op,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_put_signal_counter(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, struct doca_gpu_dev_verbs_addr laddr,
	size_t size, struct doca_gpu_dev_verbs_addr sig_raddr, struct doca_gpu_dev_verbs_addr sig_laddr,
	uint64_t sig_val, struct doca_gpu_dev_verbs_qp *companion_qp, struct doca_gpu_dev_verbs_addr counter_raddr,
	struct doca_gpu_dev_verbs_addr counter_laddr, uint64_t counter_val,
	uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	const uint32_t chunks = doca_priv_gpu_dev_verbs_put_chunks(size);
	const uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode>(qp, chunks + 1, code_opt);
	doca_priv_gpu_dev_verbs_build_put_signal<sig_op>(qp, base, chunks, raddr, laddr, size, sig_raddr, sig_laddr, sig_val);
	doca_priv_gpu_dev_verbs_counter_finish<resource_sharing_mode, nic_handler>(
		qp, base, base + chunks, companion_qp, counter_raddr, counter_laddr, counter_val, code_opt);
}

template <enum doca_gpu_dev_verbs_signal_op sig_op,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_signal_counter(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr sig_raddr,
	struct doca_gpu_dev_verbs_addr sig_laddr, uint64_t sig_val, struct doca_gpu_dev_verbs_qp *companion_qp,
	struct doca_gpu_dev_verbs_addr counter_raddr, struct doca_gpu_dev_verbs_addr counter_laddr,
	uint64_t counter_val, uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	const uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode>(qp, 1, code_opt);
	doca_priv_gpu_dev_verbs_build_signal<sig_op>(qp, base, sig_raddr, sig_laddr, sig_val);
	doca_priv_gpu_dev_verbs_counter_finish<resource_sharing_mode, nic_handler>(
		qp, base, base, companion_qp, counter_raddr, counter_laddr, counter_val, code_opt);
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static __forceinline__ void doca_gpu_dev_verbs_get_counter(
	struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, struct doca_gpu_dev_verbs_addr laddr,
	size_t size, struct doca_gpu_dev_verbs_qp *companion_qp, struct doca_gpu_dev_verbs_addr counter_raddr,
	struct doca_gpu_dev_verbs_addr counter_laddr, uint64_t counter_val,
	uint32_t code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
{
	doca_priv_gpu_dev_verbs_rw_counter<DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_READ, resource_sharing_mode, nic_handler>(
		qp, raddr, laddr, size, doca_priv_gpu_dev_verbs_put_chunks(size), companion_qp, counter_raddr, counter_laddr,
		counter_val, code_opt);
}

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif /* DOCA_GPUNETIO_DEV_VERBS_COUNTER_CUH */
