/*
 * Compile test for the GPUNetIO verbs device headers: one call of every signature of the DOCA
 * device API with explicit and defaulted template arguments, and the API usage of the three DOCA
 * example kernels, including MLX5_OPCODE_RDMA_WRITE from
 * <infiniband/mlx5dv.h> in the same translation unit.
 *
 * GPUNETIO_INCLUDE_STYLE selects how the headers are found:
 *   1: -Iinclude -Iinclude/host -Iinclude/common -Iinclude/device, bare file names (examples)
 *   2: -Iinclude, the umbrella <doca_gpunetio_device.h>
 *   3: -Iinclude, sub-directory paths <device/...>, <common/...>, <host/...>
 *
 * The file also compiles with NVRTC (-std=c++17, only the headers under cuda/include and no
 * system include path): there <infiniband/mlx5dv.h>, the CUDA_VERSION check and the host launch
 * wrapper are left out.
 */
#ifndef GPUNETIO_INCLUDE_STYLE
#define GPUNETIO_INCLUDE_STYLE 1
#endif

#if GPUNETIO_INCLUDE_STYLE == 1
#include <doca_gpunetio_dev_verbs_onesided.cuh>
#include <doca_gpunetio_dev_verbs_qp.cuh>
#include <doca_gpunetio_dev_verbs_cq.cuh>
#include <doca_gpunetio_dev_verbs_counter.cuh>
#include <doca_gpunetio_verbs_def.h>
#include <doca_error.h>
#elif GPUNETIO_INCLUDE_STYLE == 2
#include <doca_gpunetio_device.h>
#include <host/doca_error.h>
#else
#include <common/doca_gpunetio_verbs_def.h>
#include <device/doca_gpunetio_dev_verbs_onesided.cuh>
#include <device/doca_gpunetio_dev_verbs_counter.cuh>
#include <host/doca_error.h>
#endif

#if !defined(GPUNETIO_NO_MLX5DV) && !defined(__CUDACC_RTC__)
#include <infiniband/mlx5dv.h>
#define TEST_OPCODE_WRITE MLX5_OPCODE_RDMA_WRITE
#else
/* No rdma-core here: the examples' MLX5_OPCODE_RDMA_WRITE stands for the same value. */
#define TEST_OPCODE_WRITE DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE
#ifndef MLX5_OPCODE_RDMA_WRITE
#define MLX5_OPCODE_RDMA_WRITE DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE
#endif
#endif

#define RSM_EXCL DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE
#define RSM_CTA DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA
#define RSM_GPU DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU
#define SIG_ADD DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD

/* Transitive names kernels rely on. */
static_assert(EIO == 5 && EBUSY == 16, "errno values");
static_assert(INT_MAX > 0, "limits.h");
static_assert(sizeof(__be64) == 8, "linux/types.h");
static_assert(sizeof(struct doca_gpu_dev_verbs_qp) == 392, "QP layout");
static_assert(sizeof(struct doca_gpu_dev_verbs_cq) == 64, "CQ layout");
static_assert(sizeof(struct doca_gpu_dev_verbs_wqe) == 64, "WQE layout");
static_assert(DOCA_GPUNETIO_VERSION == 0x30000, "version"); // DOCA GPUNetIO 3.0.0
#if !defined(CUDA_VERSION) && !defined(__CUDACC_RTC__)
#error "CUDA_VERSION must be visible through the headers"
#endif

__global__ void k_common(uint64_t *p64, uint32_t *p32, uint8_t *p8, int *lk, unsigned long long *pull)
{
	uint64_t t = doca_gpu_dev_verbs_query_globaltimer();
	unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	t += doca_gpu_dev_verbs_bswap64(t) + doca_gpu_dev_verbs_bswap32(lane) + doca_gpu_dev_verbs_bswap16((uint16_t)lane);
#ifdef DOCA_GPUNETIO_VERBS_HAS_STORE_RELAXED_MMIO
	doca_gpu_dev_verbs_store_relaxed_mmio(p64, t);
#endif
	doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
	doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
	doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA>();
	doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_THREAD>();
	doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
	doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
	doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA>();
	doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_THREAD>();
#ifdef DOCA_GPUNETIO_VERBS_HAS_ASYNC_STORE_RELEASE
	doca_gpu_dev_verbs_async_store_release(p32, (uint32_t)t);
	doca_gpu_dev_verbs_async_store_release(p64, t);
#endif
	bool al = doca_gpu_dev_verbs_isaligned((void *)p64, 8);
	doca_gpu_dev_verbs_memcpy_aligned_data((void *)p32, (void *)(p32 + 4), 7);
	doca_gpu_dev_verbs_memcpy_data((void *)p8, (void *)(p8 + 16), 13);
	doca_gpu_dev_verbs_memcpy_inl_aligned_data<uint32_t>(p32, p32 + 8, 8);
	t += doca_gpu_dev_verbs_atomic_max<uint64_t, RSM_EXCL>(p64, t);
	t += doca_gpu_dev_verbs_atomic_max<uint64_t, RSM_CTA, true>(p64, t);
	t += doca_gpu_dev_verbs_atomic_max<unsigned long long, RSM_GPU>(pull, t);
	t += doca_gpu_dev_verbs_atomic_add<uint64_t, RSM_EXCL>(p64, 1);
	t += doca_gpu_dev_verbs_atomic_add<uint64_t, RSM_CTA>(p64, 1);
	t += doca_gpu_dev_verbs_atomic_add<uint64_t, RSM_GPU>(p64, 1);
	t += doca_gpu_dev_verbs_atomic_read<uint64_t, RSM_EXCL>(p64);
	t += doca_gpu_dev_verbs_atomic_read<uint64_t, RSM_GPU>(p64);
	doca_gpu_dev_verbs_lock<RSM_EXCL>(lk);
	doca_gpu_dev_verbs_unlock<RSM_EXCL>(lk);
	doca_gpu_dev_verbs_lock<RSM_CTA>(lk);
	doca_gpu_dev_verbs_unlock<RSM_CTA>(lk);
	doca_gpu_dev_verbs_lock<RSM_GPU>(lk);
	doca_gpu_dev_verbs_unlock<RSM_GPU>(lk);
	t += doca_gpu_dev_verbs_load_relaxed_sys_global(p8);
	t += doca_gpu_dev_verbs_load_relaxed_sys_global(p32);
	t += doca_gpu_dev_verbs_load_relaxed_sys_global(p64);
	t += doca_gpu_dev_verbs_load_relaxed<RSM_EXCL>(p64);
	t += doca_gpu_dev_verbs_load_relaxed<RSM_CTA>(p64);
	t += doca_gpu_dev_verbs_load_relaxed<RSM_GPU>(p64);
	t += doca_gpu_dev_verbs_div_ceil_aligned_pow2(t, 30);
	t += doca_gpu_dev_verbs_div_ceil_aligned_pow2_32bits(t, 30);
	DOCA_GPUNETIO_VOLATILE(*p64) = t + (al ? 1 : 0);
	WRITE_ONCE(*p32, (uint32_t)READ_ONCE(*p64));
	DOCA_GPUNETIO_VERBS_ASSERT(t != 0);
}

__global__ void k_cq(struct doca_gpu_dev_verbs_qp *qp, uint64_t *out)
{
	struct doca_gpu_dev_verbs_cq *cq = doca_gpu_dev_verbs_qp_get_cq_sq(qp);
	int r = 0;
	r += (int)doca_gpu_dev_verbs_cqe_idx_inc_mask(5, 7);
	r += doca_priv_gpu_dev_verbs_poll_one_cq_at(cq, 1);
	r += doca_priv_gpu_dev_verbs_poll_one_cq_at<RSM_EXCL, DOCA_GPUNETIO_VERBS_QP_SQ>(cq, 1);
	r += doca_gpu_dev_verbs_poll_one_cq_at(cq, 2);
	r += doca_gpu_dev_verbs_poll_one_cq_at<RSM_CTA>(cq, 2);
	r += doca_priv_gpu_dev_verbs_poll_cq_at(cq, 3);
	r += doca_priv_gpu_dev_verbs_poll_cq_at<RSM_EXCL>(cq, 3);
	r += doca_gpu_dev_verbs_poll_cq_at(cq, 4);
	r += doca_gpu_dev_verbs_poll_cq_at<RSM_GPU>(cq, 4);
	r += doca_gpu_dev_verbs_poll_cq_at<RSM_EXCL, DOCA_GPUNETIO_VERBS_QP_SQ>(cq, 4);
	uint64_t nci = 0;
	r += doca_priv_gpu_dev_verbs_poll_cq_collapsed_at(qp, cq, 5, &nci);
	r += doca_priv_gpu_dev_verbs_poll_cq_collapsed_at<RSM_EXCL>(qp, cq, 5, &nci);
	r += doca_gpu_dev_verbs_poll_cq_collapsed_at(qp, 6);
	r += doca_gpu_dev_verbs_poll_cq_collapsed_at<RSM_CTA, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 6);
	r += doca_gpu_dev_verbs_poll_cq(cq, 2);
	r += doca_gpu_dev_verbs_poll_cq<RSM_EXCL>(cq, 2);
	r += (int)doca_gpu_dev_verbs_cq_update_dbrec<false>(cq, 1);
	r += (int)doca_gpu_dev_verbs_cq_update_dbrec<true>(cq, 1);
	doca_gpu_dev_verbs_cq_print_cqe_err((struct doca_gpunetio_ib_mlx5_cqe64 *)cq->cqe_daddr);
	*out = (uint64_t)r + nci;
}

__global__ void k_qp(struct doca_gpu_dev_verbs_qp *qp, uint64_t *out)
{
	__shared__ struct doca_gpu_dev_verbs_wqe smem_wqe[2] __attribute__((aligned(16)));
	uint64_t seg[2] = {1, 2};
	struct doca_gpu_dev_verbs_wqe *w = doca_gpu_dev_verbs_get_wqe_ptr(qp, 3);
	struct doca_gpu_dev_verbs_wqe *w1 = doca_gpu_dev_verbs_get_wqe_ptr(qp, 4);
	doca_gpu_dev_verbs_store_wqe_seg((uint64_t *)w, seg);
	doca_gpu_dev_verbs_wait_until_slot_available(qp, 9);
	doca_gpu_dev_verbs_wait_until_slot_available<RSM_EXCL, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 9);
	uint64_t b = doca_gpu_dev_verbs_reserve_wq_slots(qp, 1);
	b += doca_gpu_dev_verbs_reserve_wq_slots<RSM_CTA>(qp, 1, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_AVAILABILITY_CHECK);
	doca_gpu_dev_common_mark_wqes_ready(qp->sq_ready_index, 0, 0);
	doca_gpu_dev_common_mark_wqes_ready<RSM_CTA, DOCA_GPUNETIO_VERBS_READY_MODE_LD_ST>(qp->sq_ready_index, 1, 1);
	doca_gpu_dev_verbs_mark_wqes_ready(qp, 2, 2);
	doca_gpu_dev_verbs_mark_wqes_ready<RSM_CTA, DOCA_GPUNETIO_VERBS_QP_SQ, DOCA_GPUNETIO_VERBS_READY_MODE_DEFAULT>(qp, 3, 3);
	doca_gpu_dev_verbs_mark_wqes_ready<RSM_GPU, DOCA_GPUNETIO_VERBS_QP_SQ, DOCA_GPUNETIO_VERBS_READY_MODE_LD_ST>(qp, 4, 4);
	__be32 dbr = doca_gpu_dev_verbs_prepare_dbr(7);
	doca_gpu_dev_common_update_dbr((uint32_t *)qp->sq_dbrec, 7);
	doca_priv_gpu_dev_verbs_update_dbr(qp, 7);
	doca_priv_gpu_dev_verbs_update_dbr<DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 7);
	doca_gpu_dev_verbs_update_dbr(qp, 7);
	doca_gpu_dev_verbs_update_dbr<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 7, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_ASYNC_STORE_RELEASE);
	__be64 db = doca_gpu_dev_common_prepare_db(qp->sq_num_shift8_be, 7);
	doca_gpu_dev_common_write_db(qp->sq_db, db);
	doca_gpu_dev_common_write_db<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>(qp->sq_db, db, 0);
	doca_gpu_dev_common_ring_db(qp->sq_db, qp->sq_num_shift8_be, 8);
	doca_gpu_dev_common_ring_db<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA>(qp->sq_db, qp->sq_num_shift8_be, 8, 0);
	db += doca_gpu_dev_verbs_prepare_db(qp, 9);
	doca_gpu_dev_verbs_ring_db(qp, 9);
	doca_gpu_dev_verbs_ring_db<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_THREAD>(qp, 9, 0);
#ifdef DOCA_GPUNETIO_VERBS_HAS_TMA_COPY
	doca_gpu_dev_verbs_ring_bf(qp, smem_wqe);
	doca_gpu_dev_verbs_ring_bf<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>(qp, smem_wqe);
#endif
	doca_gpu_dev_verbs_ring_bf_warp(qp, smem_wqe);
	doca_gpu_dev_verbs_ring_bf_warp<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA>(qp, w);
	doca_gpu_dev_verbs_ring_proxy<RSM_EXCL>(qp, 10);
	doca_gpu_dev_verbs_ring_proxy<RSM_GPU>(qp, 10);
	doca_gpu_dev_verbs_submit_db_no_dbr(qp, 11);
	doca_gpu_dev_verbs_submit_db_no_dbr<RSM_EXCL, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 11, 0);
	doca_gpu_dev_verbs_submit_db(qp, 12);
	doca_gpu_dev_verbs_submit_db<RSM_CTA, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 12, 0);
	doca_gpu_dev_verbs_submit_bf(qp, 13, smem_wqe);
	doca_gpu_dev_verbs_submit_bf<RSM_EXCL, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>(qp, 13, smem_wqe, 0);
	doca_gpu_dev_verbs_submit_bf_warp(qp, 14, w);
	doca_gpu_dev_verbs_submit_bf_warp<RSM_EXCL, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>(qp, 14, smem_wqe, 0);
	doca_gpu_dev_verbs_submit_proxy(qp, 15);
	doca_gpu_dev_verbs_submit_proxy<RSM_EXCL, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>(qp, 15, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_CPU_PROXY_UPDATE_PI);
	doca_gpu_dev_verbs_submit(qp, 16);
	doca_gpu_dev_verbs_submit<RSM_EXCL>(qp, 16, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_CPU_PROXY_UPDATE_PI);
	doca_gpu_dev_verbs_submit<RSM_EXCL, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>(qp, 16);
	doca_gpu_dev_verbs_submit<RSM_EXCL, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY>(qp, 16);
	doca_gpu_dev_verbs_submit<RSM_EXCL, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB>(qp, 16);
	doca_gpu_dev_verbs_submit<RSM_EXCL, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF>(qp, 16);
	doca_gpu_dev_verbs_submit<RSM_EXCL, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 16, 0);

	doca_gpu_dev_verbs_wqe_prepare_nop(qp, w, 3, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE);
	doca_gpu_dev_verbs_wqe_prepare_write(qp, w, b, TEST_OPCODE_WRITE, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 0, 1, 2, 3, 4, 5);
	doca_gpu_dev_verbs_wqe_prepare_write(qp, w, b, TEST_OPCODE_WRITE, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 0, 1, 2, 3, 4, 5, 6, 7, 8);
	doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_header(qp, w, 3, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 1, 2, 8);
	doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_data<uint64_t>(qp, w, 42);
	doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_data(qp, w, (uint16_t)4);
	doca_gpu_dev_verbs_wqe_prepare_write_inl(qp, w, 3, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 1, 2, (uint64_t)(uintptr_t)out, 8);
	doca_gpu_dev_verbs_wqe_prepare_read(qp, w, 3, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 1, 2, 3, 4, 5);
	doca_gpu_dev_verbs_wqe_prepare_read(qp, w, 3, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 1, 2, 3, 4, 5, 6, 7, 8);
	doca_gpu_dev_verbs_wqe_prepare_atomic(qp, w, 3, DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_FA, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 1, 2, 3, 4, 8, 1, 0);
	doca_gpu_dev_verbs_wqe_prepare_atomic_ext(qp, w, w1, 3, DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_MASKED_FA, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
	doca_gpu_dev_verbs_wqe_prepare_atomic_ext<DOCA_GPUNETIO_VERBS_ATOMIC_EXT_BYTES_8>(qp, w, w1, 3, DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_MASKED_CS, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
	doca_gpu_dev_verbs_wqe_prepare_wait(qp, w, 3, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 41, 0x401);
	doca_gpu_dev_verbs_wqe_prepare_dump(qp, w, 3, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 1, 2, 1);
	*out = b + dbr + db;
}

__global__ void k_onesided(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr ra, struct doca_gpu_dev_verbs_addr la, uint64_t *out)
{
	doca_gpu_dev_verbs_ticket_t t = 0, u = 0;
	doca_gpu_dev_verbs_put_thread(qp, ra, la, 64, &t);
	doca_gpu_dev_verbs_put_thread<RSM_EXCL, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB>(qp, ra, la, 64, &t, 0);
	doca_gpu_dev_verbs_put_warp(qp, ra, la, 64, &t);
	doca_gpu_dev_verbs_put_warp<RSM_CTA, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>(qp, ra, la, 64, &t, 0);
	doca_gpu_dev_verbs_put(qp, ra, la, 64, &t);
	doca_gpu_dev_verbs_put<RSM_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP>(qp, ra, la, 64, &t);
	doca_gpu_dev_verbs_put(qp, ra, la, 64, (uint32_t)DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT);
	doca_gpu_dev_verbs_put<RSM_EXCL>(qp, ra, la, 64);
	doca_gpu_dev_verbs_p_thread(qp, ra, (uint32_t)1, &t);
	doca_gpu_dev_verbs_p_thread<uint64_t, RSM_EXCL, DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY>(qp, ra, 1, &t, 0);
	doca_gpu_dev_verbs_p_warp(qp, ra, (uint8_t)1, &t);
	doca_gpu_dev_verbs_p_warp<uint16_t, RSM_CTA>(qp, ra, 1, &t);
	doca_gpu_dev_verbs_p(qp, ra, (uint64_t)1, &t);
	doca_gpu_dev_verbs_p<uint64_t, RSM_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP>(qp, ra, 1, &t, 0);
	doca_gpu_dev_verbs_p(qp, ra, (uint32_t)7, (uint32_t)0);
	doca_gpu_dev_verbs_put_signal_thread<SIG_ADD>(qp, ra, la, 64, ra, la, 1, &t);
	doca_gpu_dev_verbs_put_signal_thread<SIG_ADD, RSM_EXCL, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR>(qp, ra, la, 64, ra, la, 1, &t, 0);
	doca_gpu_dev_verbs_put_signal_warp<SIG_ADD>(qp, ra, la, 64, ra, la, 1, &t);
	doca_gpu_dev_verbs_put_signal<SIG_ADD>(qp, ra, la, 64, ra, la, 1, &t);
	doca_gpu_dev_verbs_put_signal<SIG_ADD, RSM_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP>(qp, ra, la, 64, ra, la, 1, &t, 0);
	doca_gpu_dev_verbs_put_signal<SIG_ADD>(qp, ra, la, 64, ra, la, 1, (uint32_t)0);
	doca_gpu_dev_verbs_p_signal<uint64_t, SIG_ADD>(qp, ra, 5, ra, la, 1, &t);
	doca_gpu_dev_verbs_p_signal<uint32_t, SIG_ADD, RSM_EXCL, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>(qp, ra, 5, ra, la, 1, &t, 0);
	doca_gpu_dev_verbs_p_signal<uint64_t, SIG_ADD>(qp, ra, 5, ra, la, 1, (uint32_t)0);
	doca_gpu_dev_verbs_signal_thread<SIG_ADD>(qp, ra, la, 1, &t);
	doca_gpu_dev_verbs_signal_warp<SIG_ADD, RSM_CTA>(qp, ra, la, 1, &t);
	doca_gpu_dev_verbs_signal<SIG_ADD>(qp, ra, la, 1, &t);
	doca_gpu_dev_verbs_signal<SIG_ADD, RSM_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP>(qp, ra, la, 1, &t, 0);
	doca_gpu_dev_verbs_signal<SIG_ADD>(qp, ra, la, 1, (uint32_t)0);
	doca_gpu_dev_verbs_get_thread(qp, ra, la, 64, la, &t);
	doca_gpu_dev_verbs_get_thread<RSM_EXCL, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, DOCA_GPUNETIO_VERBS_MCST_ENABLED, DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED>(qp, ra, la, 64, la, &t, 0);
	doca_gpu_dev_verbs_get_warp(qp, ra, la, 64, la, &t);
	doca_gpu_dev_verbs_get_warp<RSM_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, DOCA_GPUNETIO_VERBS_MCST_ENABLED, DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED>(qp, ra, la, 64, la, &t, 0);
	doca_gpu_dev_verbs_get(qp, ra, la, 64, la, &t);
	doca_gpu_dev_verbs_get<RSM_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP, DOCA_GPUNETIO_VERBS_MCST_ENABLED, DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED>(qp, ra, la, 64, la, &t, 0);
	doca_priv_gpu_dev_verbs_get_wait(qp, la, t);
	doca_priv_gpu_dev_verbs_get_wait<RSM_EXCL, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, DOCA_GPUNETIO_VERBS_MCST_ENABLED>(qp, la, t);
	doca_gpu_dev_verbs_get_wait(qp, la, t);
	doca_gpu_dev_verbs_get_wait<RSM_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, DOCA_GPUNETIO_VERBS_MCST_ENABLED>(qp, la, t);
	doca_gpu_dev_verbs_get_wait(qp, la);
	doca_gpu_dev_verbs_wait(qp, t);
	doca_gpu_dev_verbs_wait<RSM_EXCL>(qp, t);
	doca_gpu_dev_verbs_wait(qp);
	doca_gpu_dev_verbs_wait<RSM_CTA, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>(qp);
	doca_gpu_dev_verbs_fence(qp);
	doca_gpu_dev_verbs_fence<RSM_EXCL>(qp);

	/* Extensions. */
	uint64_t old = 0;
	struct gdaki_dev_qp_error err = {};
	int r = gdaki_dev_qp_get_error(qp, &err) + gdaki_dev_qp_get_error(qp, NULL);
	doca_gpu_dev_verbs_put_signal<GDAKI_VERBS_SIGNAL_OP_SET>(qp, ra, la, 64, ra, la, 1, &t);
	doca_gpu_dev_verbs_put_signal<GDAKI_VERBS_SIGNAL_OP_SET, RSM_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP>(qp, ra, la, 64, ra, la, 1, &t);
	doca_gpu_dev_verbs_p_signal<uint32_t, GDAKI_VERBS_SIGNAL_OP_SET>(qp, ra, 5, ra, la, 1, &t);
	doca_gpu_dev_verbs_signal<GDAKI_VERBS_SIGNAL_OP_SET, RSM_EXCL>(qp, ra, la, 1, &t);
	gdaki_dev_fetch_add(qp, ra, la, 1, &t);
	gdaki_dev_fetch_add<RSM_EXCL, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB>(qp, ra, la, 1, &t, 0);
	gdaki_dev_compare_swap(qp, ra, la, 1, 2, &t);
	gdaki_dev_compare_swap<RSM_CTA, DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY>(qp, ra, la, 1, 2, &t, 0);
	r += gdaki_dev_fetch_wait(qp, t, la, &old) + gdaki_dev_fetch_wait<RSM_EXCL>(qp, t, la, NULL);
	r += gdaki_dev_quiet(qp) + gdaki_dev_quiet<RSM_CTA>(qp);
	gdaki_dev_fence(qp, &u);
	gdaki_dev_fence<RSM_EXCL, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR>(qp, &u, 0);
	*out = t + u + old + (uint64_t)r + err.wqe_index;
}

__global__ void k_counter(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_qp *cqp,
			  struct doca_gpu_dev_verbs_addr ra, struct doca_gpu_dev_verbs_addr la)
{
	struct doca_gpu_dev_verbs_qp *qps[2] = {qp, cqp};
	uint64_t pis[2] = {1, 2};
	doca_gpu_dev_verbs_submit_db_multi_qps_no_dbr<2>(qps, pis);
	doca_gpu_dev_verbs_submit_db_multi_qps_no_dbr<2, RSM_EXCL, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>(qps, pis, 0);
	doca_gpu_dev_verbs_submit_db_multi_qps<2>(qps, pis);
	doca_gpu_dev_verbs_submit_db_multi_qps<2, RSM_CTA, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>(qps, pis, 0);
	doca_gpu_dev_verbs_submit_proxy_multi_qps<2>(qps, pis);
	doca_gpu_dev_verbs_submit_proxy_multi_qps<2, RSM_EXCL, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>(qps, pis);
	doca_gpu_dev_verbs_submit_multi_qps<2>(qps, pis);
	doca_gpu_dev_verbs_submit_multi_qps<2, RSM_GPU, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF>(qps, pis, 0);
	doca_gpu_dev_verbs_put_counter(qp, ra, la, 64, cqp, ra, la, 1);
	doca_gpu_dev_verbs_put_counter<RSM_EXCL, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB>(qp, ra, la, 64, cqp, ra, la, 1, 0);
	doca_gpu_dev_verbs_p_counter(qp, ra, (uint64_t)3, cqp, ra, la, 1);
	doca_gpu_dev_verbs_p_counter<uint32_t, RSM_CTA, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>(qp, ra, 3, cqp, ra, la, 1, 0);
	doca_gpu_dev_verbs_put_signal_counter<SIG_ADD>(qp, ra, la, 64, ra, la, 1, cqp, ra, la, 1);
	doca_gpu_dev_verbs_put_signal_counter<SIG_ADD, RSM_EXCL, DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY>(qp, ra, la, 64, ra, la, 1, cqp, ra, la, 1, 0);
	doca_gpu_dev_verbs_signal_counter<SIG_ADD>(qp, ra, la, 1, cqp, ra, la, 1);
	doca_gpu_dev_verbs_signal_counter<SIG_ADD, RSM_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR>(qp, ra, la, 1, cqp, ra, la, 1, 0);
	doca_gpu_dev_verbs_signal_counter<GDAKI_VERBS_SIGNAL_OP_SET>(qp, ra, la, 1, cqp, ra, la, 1);
	doca_gpu_dev_verbs_put_signal_counter<GDAKI_VERBS_SIGNAL_OP_SET, RSM_EXCL>(qp, ra, la, 64, ra, la, 1, cqp, ra, la, 1);
	doca_gpu_dev_verbs_get_counter(qp, ra, la, 64, cqp, ra, la, 1);
	doca_gpu_dev_verbs_get_counter<RSM_EXCL, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>(qp, ra, la, 64, cqp, ra, la, 1, 0);
}

/* ---- Section 8: the API usage of the three reference example kernels, written anew ---------- */

template <enum doca_gpu_dev_verbs_exec_scope scope>
__global__ void ex_put_bw(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			  uint32_t lkey, size_t size, int iters, uint64_t *times)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	struct doca_gpu_dev_verbs_cq *cq = doca_gpu_dev_verbs_qp_get_cq_sq(qp);
	unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	uint64_t start = doca_gpu_dev_verbs_query_globaltimer();
	for (int i = 0; i < iters; i++) {
#if !defined(__CUDACC_RTC__) || __cplusplus >= 202002L
		doca_gpu_dev_verbs_put<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, scope>(
			qp, doca_gpu_dev_verbs_addr{.addr = raddr + size * threadIdx.x, .key = rkey},
			doca_gpu_dev_verbs_addr{.addr = laddr + size * threadIdx.x, .key = lkey}, size, &ticket);
#else
		/* Designated initializers are C++20 (nvcc accepts them in C++17 as an extension, NVRTC does not). */
		doca_gpu_dev_verbs_put<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, scope>(
			qp, doca_gpu_dev_verbs_addr{raddr + size * threadIdx.x, rkey},
			doca_gpu_dev_verbs_addr{laddr + size * threadIdx.x, lkey}, size, &ticket);
#endif
		if (scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD)
			doca_gpu_dev_verbs_poll_cq_at<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(cq, ticket);
		else if (lane == 0)
			doca_gpu_dev_verbs_poll_cq_at(cq, ticket);
	}
	times[threadIdx.x] = doca_gpu_dev_verbs_query_globaltimer() - start + lane;
}

__global__ void ex_write_bw(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			    uint32_t lkey, uint32_t size, int per_thread)
{
	struct doca_gpu_dev_verbs_cq *cq = doca_gpu_dev_verbs_qp_get_cq_sq(qp);
	uint64_t start = doca_gpu_dev_verbs_atomic_read<uint64_t, DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(&qp->sq_wqe_pi);
	uint64_t idx = 0;
	for (int k = 0; k < per_thread; k++) {
		idx = start + threadIdx.x + (uint64_t)k * blockDim.x;
		struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, idx);
		doca_gpu_dev_verbs_wqe_prepare_write(qp, wqe, idx, MLX5_OPCODE_RDMA_WRITE, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE,
						     0, raddr, rkey, laddr, lkey, size);
	}
	__syncthreads();
	if (threadIdx.x == blockDim.x - 1) {
		doca_gpu_dev_verbs_submit<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE>(qp, idx + 1,
											     DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_CPU_PROXY_UPDATE_PI);
		doca_gpu_dev_verbs_poll_cq_at(cq, idx);
	}
}

template <enum doca_gpu_dev_verbs_nic_handler nic_handler>
__global__ void ex_write_lat(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			     uint32_t lkey, uint32_t size, int iters, uint8_t *poll_buf, uint8_t *post_buf)
{
#ifdef DOCA_GPUNETIO_VERBS_HAS_TMA_COPY
	__shared__ struct doca_gpu_dev_verbs_wqe smem[1] __attribute__((aligned(16)));
#endif
	uint64_t idx = doca_gpu_dev_verbs_atomic_read<uint64_t, DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE>(&qp->sq_wqe_pi);
	for (int i = 0; i < iters; i++) {
		while (DOCA_GPUNETIO_VOLATILE(poll_buf[0]) != (uint8_t)i)
			;
		doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		DOCA_GPUNETIO_VOLATILE(post_buf[0]) = (uint8_t)(i + 1);
		struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, idx);
		doca_gpu_dev_verbs_wqe_prepare_write(qp, wqe, idx, MLX5_OPCODE_RDMA_WRITE, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE,
						     0, raddr, rkey, laddr, lkey, size);
		if (nic_handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF) {
#ifdef DOCA_GPUNETIO_VERBS_HAS_TMA_COPY
			doca_gpu_dev_verbs_wqe_prepare_write(qp, smem, idx, MLX5_OPCODE_RDMA_WRITE,
							     DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 0, raddr, rkey, laddr, lkey, size);
			doca_gpu_dev_verbs_submit_bf<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>(qp, idx + 1, smem);
#else
			doca_gpu_dev_verbs_submit_bf<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>(qp, idx + 1, wqe);
#endif
		} else {
			doca_gpu_dev_verbs_submit<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, nic_handler>(
				qp, idx + 1, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_CPU_PROXY_UPDATE_PI);
		}
		idx++;
		doca_gpu_dev_verbs_poll_cq_collapsed_at(qp, idx - 1);
	}
}

template __global__ void ex_put_bw<DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>(struct doca_gpu_dev_verbs_qp *, uint64_t, uint32_t, uint64_t, uint32_t, size_t, int, uint64_t *);
template __global__ void ex_put_bw<DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP>(struct doca_gpu_dev_verbs_qp *, uint64_t, uint32_t, uint64_t, uint32_t, size_t, int, uint64_t *);
template __global__ void ex_write_lat<DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>(struct doca_gpu_dev_verbs_qp *, uint64_t, uint32_t, uint64_t, uint32_t, uint32_t, int, uint8_t *, uint8_t *);
template __global__ void ex_write_lat<DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY>(struct doca_gpu_dev_verbs_qp *, uint64_t, uint32_t, uint64_t, uint32_t, uint32_t, int, uint8_t *, uint8_t *);
template __global__ void ex_write_lat<DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB>(struct doca_gpu_dev_verbs_qp *, uint64_t, uint32_t, uint64_t, uint32_t, uint32_t, int, uint8_t *, uint8_t *);
template __global__ void ex_write_lat<DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR>(struct doca_gpu_dev_verbs_qp *, uint64_t, uint32_t, uint64_t, uint32_t, uint32_t, int, uint8_t *, uint8_t *);
template __global__ void ex_write_lat<DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF>(struct doca_gpu_dev_verbs_qp *, uint64_t, uint32_t, uint64_t, uint32_t, uint32_t, int, uint8_t *, uint8_t *);

#if !defined(__CUDACC_RTC__)
/* A host launch wrapper in the style of the examples: doca_error_t from host/doca_error.h. */
extern "C" doca_error_t gpunetio_test_launch_put_bw(struct doca_gpu_dev_verbs_qp *qp, uint64_t *times)
{
	ex_put_bw<DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD><<<1, 32>>>(qp, 0, 0, 0, 0, 64, 1, times);
	if (cudaGetLastError() != cudaSuccess)
		return DOCA_ERROR_BAD_STATE;
	return DOCA_SUCCESS;
}
#else
/* NVRTC: device code only; doca_error_t must still be visible. */
static_assert(DOCA_SUCCESS == 0 && DOCA_ERROR_BAD_STATE == 18, "host/doca_error.h");
#endif
