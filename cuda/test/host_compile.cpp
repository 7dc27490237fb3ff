/*
 * Host C++ compile test: the thread-scope device API through the host portability layer
 * (g++ -std=c++17 -Wall -Wextra -Werror). Warp-scope paths are GPU-only and are not called.
 * GPUNETIO_INCLUDE_STYLE selects the include style as in api_compile.cu.
 */
#ifndef GPUNETIO_INCLUDE_STYLE
#define GPUNETIO_INCLUDE_STYLE 2
#endif
#if GPUNETIO_INCLUDE_STYLE == 1
#include <doca_gpunetio_dev_verbs_onesided.cuh>
#include <doca_gpunetio_dev_verbs_counter.cuh>
#include <doca_gpunetio_dev_verbs_twosided.cuh>
#include <doca_error.h>
#elif GPUNETIO_INCLUDE_STYLE == 2
#include <doca_gpunetio_device.h>
#include <host/doca_error.h>
#else
#include <device/doca_gpunetio_dev_verbs_onesided.cuh>
#include <device/doca_gpunetio_dev_verbs_counter.cuh>
#include <device/doca_gpunetio_dev_verbs_twosided.cuh>
#include <host/doca_error.h>
#endif
#include <infiniband/mlx5dv.h>

#define RSM_EXCL DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE
#define RSM_GPU DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU
#define SIG_ADD DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD

/* Never run: only instantiates the thread-scope API for the host compiler. */
doca_error_t gpunetio_host_compile_check(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_qp *cqp)
{
	struct doca_gpu_dev_verbs_addr a = {.addr = 1, .key = 2};
	doca_gpu_dev_verbs_ticket_t t = 0;
	struct doca_gpu_dev_verbs_wqe *w = doca_gpu_dev_verbs_get_wqe_ptr(qp, 0);
	uint64_t b = doca_gpu_dev_verbs_reserve_wq_slots(qp, 1);
	doca_gpu_dev_verbs_wqe_prepare_write(qp, w, b, MLX5_OPCODE_RDMA_WRITE, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 0, 1, 2, 3, 4, 5);
	doca_gpu_dev_verbs_wqe_prepare_nop(qp, w, b, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE);
	doca_gpu_dev_verbs_mark_wqes_ready<RSM_EXCL>(qp, b, b);
	doca_gpu_dev_verbs_submit(qp, b + 1);
	doca_gpu_dev_verbs_submit<RSM_EXCL, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR>(qp, b + 1, 0);
	doca_gpu_dev_verbs_put(qp, a, a, 8, &t);
	doca_gpu_dev_verbs_put<RSM_EXCL>(qp, a, a, 8);
	doca_gpu_dev_verbs_p(qp, a, (uint32_t)3, &t);
	doca_gpu_dev_verbs_put_signal<SIG_ADD>(qp, a, a, 8, a, a, 1, &t);
	doca_gpu_dev_verbs_p_signal<uint64_t, SIG_ADD>(qp, a, 1, a, a, 1, &t);
	doca_gpu_dev_verbs_signal<SIG_ADD>(qp, a, a, 1, &t);
	doca_gpu_dev_verbs_signal<SIG_ADD, RSM_GPU>(qp, a, a, 1, (uint32_t)0);
	doca_gpu_dev_verbs_get<RSM_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD,
			       DOCA_GPUNETIO_VERBS_MCST_ENABLED>(qp, a, a, 8, a, &t);
	doca_gpu_dev_verbs_get_wait(qp, a, t);
	doca_gpu_dev_verbs_wait(qp, t);
	doca_gpu_dev_verbs_wait<RSM_EXCL>(qp);
	doca_gpu_dev_verbs_fence(qp);
	doca_gpu_dev_verbs_put_counter(qp, a, a, 8, cqp, a, a, 1);
	doca_gpu_dev_verbs_p_counter(qp, a, (uint64_t)1, cqp, a, a, 1);
	doca_gpu_dev_verbs_put_signal_counter<SIG_ADD>(qp, a, a, 8, a, a, 1, cqp, a, a, 1);
	doca_gpu_dev_verbs_signal_counter<SIG_ADD>(qp, a, a, 1, cqp, a, a, 1);
	doca_gpu_dev_verbs_get_counter(qp, a, a, 8, cqp, a, a, 1);
	uint64_t old = 0;
	struct gdaki_dev_qp_error err;
	doca_gpu_dev_verbs_put_signal<GDAKI_VERBS_SIGNAL_OP_SET>(qp, a, a, 8, a, a, 1, &t);
	gdaki_dev_fetch_add(qp, a, a, 1, &t);
	gdaki_dev_compare_swap<RSM_EXCL>(qp, a, a, 1, 2, &t);
	gdaki_dev_fence(qp, &t);
	int r = gdaki_dev_fetch_wait(qp, t, a, &old) + gdaki_dev_quiet(qp) + gdaki_dev_qp_get_error(qp, &err);
	r += doca_gpu_dev_verbs_poll_one_cq_at(&qp->cq_sq, t);
	r += doca_gpu_dev_verbs_poll_cq_at<RSM_EXCL>(&qp->cq_sq, t);
	r += doca_gpu_dev_verbs_poll_cq_collapsed_at(qp, t);
	r += doca_gpu_dev_verbs_poll_cq(&qp->cq_sq, 1);
	/* Two-sided (thread scope), with rdma-core's struct mlx5_cqe64 defined after the headers. */
	struct mlx5_cqe64 *cqe = nullptr;
	doca_gpu_dev_verbs_send(qp, a, 8, &t);
	doca_gpu_dev_verbs_send_thread<RSM_EXCL>(qp, a, 0, &t);
	doca_gpu_dev_verbs_recv(qp, a, 8, &t);
	doca_gpu_dev_verbs_recv_thread<RSM_EXCL>(qp, a, 8, &t);
	doca_gpu_dev_verbs_recv_wait(qp, a, &t, &cqe);
	doca_gpu_dev_verbs_recv_wait<RSM_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO, DOCA_GPUNETIO_VERBS_MCST_ENABLED>(qp, a, &cqe);
	doca_gpu_dev_verbs_wait_recv(qp, t, a);
	r += (int)(cqe->op_own >> 4) + (int)doca_gpu_dev_verbs_cqe_get_bytes(cqe) + (int)doca_gpu_dev_verbs_cqe_is_inline(cqe);
	r += doca_gpu_dev_verbs_poll_cq<RSM_GPU, DOCA_GPUNETIO_VERBS_QP_RQ>(doca_gpu_dev_verbs_qp_get_cq_rq(qp), t, &cqe);
	doca_gpu_dev_verbs_cqe64 *dc = nullptr;
	r += doca_gpu_dev_verbs_poll_one_cq_device_at(&qp->cq_rq, t, &dc);
	doca_gpu_dev_verbs_wqe_prepare_recv(qp, doca_gpu_dev_verbs_get_rwqe_ptr(qp, 0), 1, 2, 3);
	doca_gpu_dev_verbs_wqe_prepare_send(qp, w, 0, MLX5_OPCODE_SEND, DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 0, 1, 2, 3);
	return r == 0 ? DOCA_SUCCESS : DOCA_ERROR_IO_FAILED;
}
