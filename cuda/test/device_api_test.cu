/*
 * GPU test kernels for the device headers, launched from Go by internal/gputest on QPs of the
 * emulated NICs (emu0 -> emu1).
 *
 * Built by `make kernels` (scripts/build-kernels.sh) into build/kernels/test_device_api_test.fatbin.
 * Every entry point is extern "C" and takes one struct gt_args by value (layout mirrored by the
 * Go type gputest.kernelArgs: keep the two in step). Names are
 *
 *   gt_onesided_<rsm>_<scope>_<nic>   put, p, put_signal, p_signal, signal, get (+ fence, wait,
 *                                     get_wait), selected at run time by args.op
 *   gt_lowlevel_<rsm>_<nic>           reserve_wq_slots / get_wqe_ptr / wqe_prepare_* /
 *                                     mark_wqes_ready / submit, and submit_multi_qps on two QPs
 *   gt_counter_<rsm>_<nic>            put/p/put_signal/signal/get _counter on a main + companion QP
 *   gt_errwait_<nic>                  one failing operation and one blocking wait, called directly
 *                                     (GPU sharing mode, one thread): the wait must return on its own
 *   gt_ext_<rsm>_<nic>                the extensions: fetch_add, compare_swap, signal SET, quiet, fence
 *   gt_twosided_<rsm>_<scope>_<nic>   recv on args.cqps[0] (emu1), send on args.qps[0] (emu0),
 *                                     recv_wait (MCST when args.op is 1); <rsm> = gpu | cta,
 *                                     <scope> = thread | warp (cta: thread scope, one block)
 *
 * with <rsm> = excl | gpu, <scope> = thread | warp, <nic> = auto | proxy | db | nodbr (the
 * nic_handler template argument; the QP's runtime handler must match unless it is auto).
 *
 * Sharing modes: in EXCLUSIVE mode every thread (thread scope) or warp (warp scope) owns
 * args.qps[unit]; in GPU mode every thread of the grid shares args.qps[0] (nqps = 1).
 *
 * Buffer layout (both sides, one registered buffer each, keys big-endian): the data of operation
 * idx = gtid * iters + k lives at [idx * size, (idx + 1) * size) of the data region; signal words
 * are 8-byte words of the signal region (word 0 shared by all threads, word 1 + gtid per thread);
 * every fetch-add returns its old value into the local signal (or counter) region at 8 * idx.
 *
 * Failures never hang: every wait is a bounded poll (poll_one_cq_at against a %globaltimer
 * deadline taken once at kernel start), and the high-level blocking waits (wait, get_wait) are
 * called only after the bounded poll has seen the completion, so they return at once. The
 * exception is gt_errwait_*, whose point is that the blocking waits return on an error by
 * themselves; the host bounds those launches. The first failure is reported in status[1..3]
 * (code, global thread id, iteration) and status[0] counts failures.
 */
#include <doca_gpunetio_dev_verbs_onesided.cuh>
#include <doca_gpunetio_dev_verbs_qp.cuh>
#include <doca_gpunetio_dev_verbs_cq.cuh>
#include <doca_gpunetio_dev_verbs_counter.cuh>
#include <doca_gpunetio_dev_verbs_twosided.cuh>

#define GT_EXCL DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE
#define GT_GPU DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU
#define GT_THREAD DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD
#define GT_WARP DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP
#define GT_SIG_ADD DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD

/* Kernel arguments (passed by value; 104 bytes). */
struct gt_args {
	struct doca_gpu_dev_verbs_qp **qps;  /*  0: device array of device QPs */
	struct doca_gpu_dev_verbs_qp **cqps; /*  8: companion QPs (counter kernels), else NULL */
	uint32_t nqps;                       /* 16 */
	uint32_t op;                         /* 20: GT_OP_* / GT_LL_* / GT_CNT_* */
	uint64_t laddr;                      /* 24: local data region */
	uint64_t raddr;                      /* 32: remote data region */
	uint64_t lsig;                       /* 40: local fetch-add results (8 bytes per op) */
	uint64_t rsig;                       /* 48: remote signal words */
	uint64_t lcnt;                       /* 56: local counter fetch results (8 bytes per op) */
	uint64_t rcnt;                       /* 64: remote counter words */
	uint32_t lkey;                       /* 72: big-endian lkey of every local region */
	uint32_t rkey;                       /* 76: big-endian rkey of every remote region */
	uint32_t size;                       /* 80: bytes per operation */
	uint32_t iters;                      /* 84: operations per thread */
	uint64_t timeout_ns;                 /* 88: device-side deadline for the whole kernel */
	int *status;                         /* 96: int[4]: count, first code, gtid, iteration */
};
static_assert(sizeof(struct gt_args) == 104, "gt_args layout is mirrored in Go");

/* One-sided operations (gt_onesided_*). */
enum { GT_OP_PUT = 0, GT_OP_P = 1, GT_OP_PUT_SIGNAL = 2, GT_OP_P_SIGNAL = 3, GT_OP_SIGNAL = 4, GT_OP_GET = 5 };
/* Low-level operations (gt_lowlevel_*). */
enum { GT_LL_RW = 0, GT_LL_MULTI = 1 };
/* Counter operations (gt_counter_*). */
enum { GT_CNT_PUT = 0, GT_CNT_P = 1, GT_CNT_PUT_SIGNAL = 2, GT_CNT_SIGNAL = 3, GT_CNT_GET = 4 };

/* Failure codes written to status[1]. */
enum {
	GT_ERR_CQE = 1,           /* error CQE on the main QP */
	GT_ERR_TIMEOUT = 2,       /* no CQE on the main QP before the deadline */
	GT_ERR_COMP_CQE = 3,      /* error CQE on the companion QP */
	GT_ERR_COMP_TIMEOUT = 4,  /* no CQE on the companion QP before the deadline */
	GT_ERR_TICKET = 5,        /* a warp's tickets are not the documented slot layout */
	GT_ERR_BAD_OP = 6,        /* op not valid for this kernel or scope */
	GT_ERR_BAD_ARGS = 7,      /* launch shape or QP array does not fit the sharing mode */
	GT_ERR_RECV_CQE = 8,      /* error CQE on the receive CQ */
	GT_ERR_RECV_TIMEOUT = 9,  /* no receive CQE before the deadline */
	GT_ERR_RECV_DATA = 10,    /* a received message has the wrong opcode, length or bytes */
};

__device__ static void gt_report(const struct gt_args &a, int code, uint32_t gtid, uint32_t iter)
{
	atomicAdd(&a.status[0], 1);
	if (atomicCAS(&a.status[1], 0, code) == 0) {
		((volatile int *)a.status)[2] = (int)gtid;
		((volatile int *)a.status)[3] = (int)iter;
	}
	__threadfence_system();
}

__device__ static __forceinline__ uint64_t gt_now(void) { return doca_gpu_dev_verbs_query_globaltimer(); }

/* Bounded wait for the CQE of WQE ticket: 0, GT_ERR_CQE or GT_ERR_TIMEOUT (the comp_* codes when
 * companion is set). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode rsm>
__device__ static int gt_poll(struct doca_gpu_dev_verbs_qp *qp, uint64_t ticket, uint64_t deadline, bool companion)
{
	struct doca_gpu_dev_verbs_cq *cq = doca_gpu_dev_verbs_qp_get_cq_sq(qp);
	for (;;) {
		const int r = doca_gpu_dev_verbs_poll_one_cq_at<rsm>(cq, ticket);
		if (r == 0)
			return 0;
		if (r != EBUSY)
			return companion ? GT_ERR_COMP_CQE : GT_ERR_CQE;
		if (gt_now() > deadline)
			return companion ? GT_ERR_COMP_TIMEOUT : GT_ERR_TIMEOUT;
	}
}

/* The value p / p_signal / p_counter write for operation idx (mirrored in Go: pValue). */
__device__ static __forceinline__ uint64_t gt_pvalue(uint32_t idx, uint32_t size)
{
	return ((uint64_t)idx + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)size * 0x100000001B3ull);
}

__device__ static __forceinline__ struct doca_gpu_dev_verbs_addr gt_addr(uint64_t addr, uint32_t key)
{
	struct doca_gpu_dev_verbs_addr x = {.addr = addr, .key = key};
	return x;
}

__device__ static __forceinline__ uint64_t gt_warp_max(uint64_t v)
{
	for (int d = 16; d > 0; d >>= 1) {
		const uint64_t o = __shfl_xor_sync(0xffffffffu, (unsigned long long)v, d);
		v = o > v ? o : v;
	}
	return v;
}

/* ---- one-sided API ------------------------------------------------------------------------- */

template <enum doca_gpu_dev_verbs_resource_sharing_mode rsm, enum doca_gpu_dev_verbs_nic_handler nic,
	  enum doca_gpu_dev_verbs_exec_scope scope, typename T>
__device__ static __forceinline__ void gt_p(struct doca_gpu_dev_verbs_qp *qp, const struct gt_args &a, uint32_t idx,
					    doca_gpu_dev_verbs_ticket_t *ticket)
{
	doca_gpu_dev_verbs_p<T, rsm, nic, scope>(qp, gt_addr(a.raddr + (uint64_t)idx * sizeof(T), a.rkey),
						 (T)gt_pvalue(idx, sizeof(T)), ticket);
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode rsm, enum doca_gpu_dev_verbs_nic_handler nic,
	  enum doca_gpu_dev_verbs_exec_scope scope>
__device__ static void gt_onesided(const struct gt_args &a)
{
	const uint64_t deadline = gt_now() + a.timeout_ns;
	const uint32_t gtid = blockIdx.x * blockDim.x + threadIdx.x;
	const bool warp = scope == GT_WARP;
	const uint32_t unit = warp ? gtid / 32 : gtid;
	const unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	const bool leader = !warp || lane == 0;

	if ((rsm == GT_EXCL && unit >= a.nqps) || (rsm == GT_GPU && a.nqps != 1) || (warp && blockDim.x % 32 != 0)) {
		if (leader)
			gt_report(a, GT_ERR_BAD_ARGS, gtid, 0);
		return;
	}
	if (warp && a.op == GT_OP_P_SIGNAL) { /* p_signal has no warp form */
		if (leader)
			gt_report(a, GT_ERR_BAD_OP, gtid, 0);
		return;
	}
	struct doca_gpu_dev_verbs_qp *qp = a.qps[rsm == GT_EXCL ? unit : 0];
	const struct doca_gpu_dev_verbs_addr nodump = gt_addr(0, 0);

	for (uint32_t k = 0; k < a.iters; k++) {
		const uint32_t idx = gtid * a.iters + k;
		const uint64_t off = (uint64_t)idx * a.size;
		const struct doca_gpu_dev_verbs_addr rdata = gt_addr(a.raddr + off, a.rkey);
		const struct doca_gpu_dev_verbs_addr ldata = gt_addr(a.laddr + off, a.lkey);
		const struct doca_gpu_dev_verbs_addr lsig = gt_addr(a.lsig + 8ull * idx, a.lkey);
		const struct doca_gpu_dev_verbs_addr rsig_own = gt_addr(a.rsig + 8ull * (1 + gtid), a.rkey);
		const struct doca_gpu_dev_verbs_addr rsig_shared = gt_addr(a.rsig, a.rkey);
		doca_gpu_dev_verbs_ticket_t ticket = 0;
		uint32_t per_lane = 1; /* WQEs each lane posts in warp scope */

		switch (a.op) {
		case GT_OP_PUT:
			doca_gpu_dev_verbs_put<rsm, nic, scope>(qp, rdata, ldata, a.size, &ticket);
			break;
		case GT_OP_P:
			switch (a.size) {
			case 1:
				gt_p<rsm, nic, scope, uint8_t>(qp, a, idx, &ticket);
				break;
			case 2:
				gt_p<rsm, nic, scope, uint16_t>(qp, a, idx, &ticket);
				break;
			case 4:
				gt_p<rsm, nic, scope, uint32_t>(qp, a, idx, &ticket);
				break;
			case 8:
				gt_p<rsm, nic, scope, uint64_t>(qp, a, idx, &ticket);
				break;
			default:
				if (leader)
					gt_report(a, GT_ERR_BAD_OP, gtid, k);
				return;
			}
			break;
		case GT_OP_PUT_SIGNAL:
			doca_gpu_dev_verbs_put_signal<GT_SIG_ADD, rsm, nic, scope>(qp, rdata, ldata, a.size, rsig_own, lsig,
										  1, &ticket);
			per_lane = 2;
			break;
		case GT_OP_P_SIGNAL:
			doca_gpu_dev_verbs_p_signal<uint64_t, GT_SIG_ADD, rsm, nic>(
				qp, gt_addr(a.raddr + 8ull * idx, a.rkey), gt_pvalue(idx, 8), rsig_own, lsig, 1, &ticket);
			break;
		case GT_OP_SIGNAL:
			doca_gpu_dev_verbs_signal<GT_SIG_ADD, rsm, nic, scope>(qp, rsig_shared, lsig, gtid + 1, &ticket);
			break;
		case GT_OP_GET:
			doca_gpu_dev_verbs_get<rsm, nic, scope>(qp, rdata, ldata, a.size, nodump, &ticket);
			break;
		default:
			if (leader)
				gt_report(a, GT_ERR_BAD_OP, gtid, k);
			return;
		}
		doca_gpu_dev_verbs_fence<rsm, nic>(qp); /* a reserved no-op hook: must not disturb anything */

		int rc;
		if (warp) {
			/* Tickets: lane l owns base + l (base + 2l + 1 for put_signal). */
			const uint64_t base = __shfl_sync(0xffffffffu, (unsigned long long)ticket, 0) -
					      (per_lane == 2 ? 1 : 0);
			const int bad = ticket != base + (uint64_t)per_lane * lane + (per_lane - 1);
			if (__any_sync(0xffffffffu, bad)) {
				if (bad)
					gt_report(a, GT_ERR_TICKET, gtid, k);
				return;
			}
			const uint64_t last = gt_warp_max(ticket);
			rc = 0;
			if (lane == 0)
				rc = gt_poll<rsm>(qp, last, deadline, false);
			rc = __shfl_sync(0xffffffffu, rc, 0);
		} else {
			rc = gt_poll<rsm>(qp, ticket, deadline, false);
		}
		if (rc != 0) {
			if (leader)
				gt_report(a, rc, gtid, k);
			return;
		}
		/* The completion is seen: the blocking forms must now return at once. */
		if (!warp || lane == 0) {
			if (a.op == GT_OP_GET)
				doca_gpu_dev_verbs_get_wait<rsm, nic>(qp, nodump, ticket);
			else
				doca_gpu_dev_verbs_wait<rsm, nic>(qp, ticket);
		}
		if (warp)
			__syncwarp();
	}
	/* EXCLUSIVE: this thread/warp reserved the last slot, which is complete, so the ticketless
	 * forms return at once too. */
	if (rsm == GT_EXCL && leader) {
		doca_gpu_dev_verbs_wait<rsm, nic>(qp);
		doca_gpu_dev_verbs_get_wait<rsm, nic>(qp, nodump);
	}
}

/* ---- low-level SQ API ---------------------------------------------------------------------- */

template <enum doca_gpu_dev_verbs_resource_sharing_mode rsm, enum doca_gpu_dev_verbs_nic_handler nic>
__device__ static void gt_lowlevel(const struct gt_args &a)
{
	const uint64_t deadline = gt_now() + a.timeout_ns;
	const uint32_t gtid = blockIdx.x * blockDim.x + threadIdx.x;
	const uint32_t nthreads = gridDim.x * blockDim.x;
	constexpr enum doca_gpu_dev_verbs_sync_scope sync = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU;
	const enum doca_gpu_dev_verbs_wqe_ctrl_flags cqu = DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE;

	if ((rsm == GT_EXCL && nthreads != 1) || (a.op == GT_LL_MULTI && a.nqps < 2) || a.nqps < 1) {
		gt_report(a, GT_ERR_BAD_ARGS, gtid, 0);
		return;
	}
	/* The read lands in the second half of the data region (host: raddr/laddr + 256 KiB). */
	const uint64_t half = 256ull << 10;
	for (uint32_t k = 0; k < a.iters; k++) {
		const uint32_t idx = gtid * a.iters + k;
		const uint64_t off = (uint64_t)idx * a.size;
		if (a.op == GT_LL_RW) {
			struct doca_gpu_dev_verbs_qp *qp = a.qps[0];
			/* WRITE, NOP, READ, ATOMIC_FA in four consecutive slots. */
			const uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<rsm>(qp, 4);
			doca_gpu_dev_verbs_wqe_prepare_write(qp, doca_gpu_dev_verbs_get_wqe_ptr(qp, base), base,
							     DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE, cqu, 0, a.raddr + off,
							     a.rkey, a.laddr + off, a.lkey, a.size);
			doca_gpu_dev_verbs_wqe_prepare_nop(qp, doca_gpu_dev_verbs_get_wqe_ptr(qp, base + 1), base + 1, cqu);
			doca_gpu_dev_verbs_wqe_prepare_read(qp, doca_gpu_dev_verbs_get_wqe_ptr(qp, base + 2), base + 2, cqu,
							    a.raddr + half + off, a.rkey, a.laddr + half + off, a.lkey,
							    a.size);
			doca_gpu_dev_verbs_wqe_prepare_atomic(qp, doca_gpu_dev_verbs_get_wqe_ptr(qp, base + 3), base + 3,
							      DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_FA, cqu, a.rsig, a.rkey,
							      a.lsig + 8ull * idx, a.lkey, 8, gtid + 1, 0);
			doca_gpu_dev_verbs_mark_wqes_ready<rsm>(qp, base, base + 3);
			doca_gpu_dev_verbs_submit<rsm, sync, nic>(qp, base + 4);
			const int rc = gt_poll<rsm>(qp, base + 3, deadline, false);
			if (rc != 0) {
				gt_report(a, rc, gtid, k);
				return;
			}
		} else if (a.op == GT_LL_MULTI) {
			/* One WRITE on each of two QPs (first and second half of the range), published
			 * with a single submit_multi_qps. Each QP is marked ready before the next is
			 * reserved, and the locks are always taken in the same order. */
			struct doca_gpu_dev_verbs_qp *qps[2] = {a.qps[0], a.qps[1]};
			const uint32_t h0 = a.size / 2, h1 = a.size - h0;
			const uint64_t b0 = doca_gpu_dev_verbs_reserve_wq_slots<rsm>(qps[0], 1);
			doca_gpu_dev_verbs_wqe_prepare_write(qps[0], doca_gpu_dev_verbs_get_wqe_ptr(qps[0], b0), b0,
							     DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE, cqu, 0, a.raddr + off,
							     a.rkey, a.laddr + off, a.lkey, h0);
			doca_gpu_dev_verbs_mark_wqes_ready<rsm>(qps[0], b0, b0);
			const uint64_t b1 = doca_gpu_dev_verbs_reserve_wq_slots<rsm>(qps[1], 1);
			doca_gpu_dev_verbs_wqe_prepare_write(qps[1], doca_gpu_dev_verbs_get_wqe_ptr(qps[1], b1), b1,
							     DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE, cqu, 0,
							     a.raddr + off + h0, a.rkey, a.laddr + off + h0, a.lkey, h1);
			doca_gpu_dev_verbs_mark_wqes_ready<rsm>(qps[1], b1, b1);
			uint64_t pis[2] = {b0 + 1, b1 + 1};
			doca_gpu_dev_verbs_submit_multi_qps<2, rsm, sync, nic>(qps, pis);
			int rc = gt_poll<rsm>(qps[0], b0, deadline, false);
			if (rc == 0)
				rc = gt_poll<rsm>(qps[1], b1, deadline, false);
			if (rc != 0) {
				gt_report(a, rc, gtid, k);
				return;
			}
		} else {
			gt_report(a, GT_ERR_BAD_OP, gtid, k);
			return;
		}
	}
}

/* ---- counter API --------------------------------------------------------------------------- */

template <enum doca_gpu_dev_verbs_resource_sharing_mode rsm, enum doca_gpu_dev_verbs_nic_handler nic>
__device__ static void gt_counter(const struct gt_args &a)
{
	const uint64_t deadline = gt_now() + a.timeout_ns;
	const uint32_t gtid = blockIdx.x * blockDim.x + threadIdx.x;
	if (gridDim.x != 1 || (rsm == GT_EXCL && blockDim.x != 1) || a.cqps == NULL || a.nqps < 1) {
		gt_report(a, GT_ERR_BAD_ARGS, gtid, 0);
		return;
	}
	struct doca_gpu_dev_verbs_qp *qp = a.qps[0];
	struct doca_gpu_dev_verbs_qp *cqp = a.cqps[0];
	bool ok = true;
	for (uint32_t k = 0; k < a.iters && ok; k++) {
		const uint32_t idx = gtid * a.iters + k;
		const uint64_t off = (uint64_t)idx * a.size;
		const struct doca_gpu_dev_verbs_addr rdata = gt_addr(a.raddr + off, a.rkey);
		const struct doca_gpu_dev_verbs_addr ldata = gt_addr(a.laddr + off, a.lkey);
		const struct doca_gpu_dev_verbs_addr rcnt = gt_addr(a.rcnt, a.rkey);
		const struct doca_gpu_dev_verbs_addr lcnt = gt_addr(a.lcnt + 8ull * idx, a.lkey);
		switch (a.op) {
		case GT_CNT_PUT:
			doca_gpu_dev_verbs_put_counter<rsm, nic>(qp, rdata, ldata, a.size, cqp, rcnt, lcnt, 1);
			break;
		case GT_CNT_P:
			doca_gpu_dev_verbs_p_counter<uint64_t, rsm, nic>(qp, gt_addr(a.raddr + 8ull * idx, a.rkey),
									 gt_pvalue(idx, 8), cqp, rcnt, lcnt, 1);
			break;
		case GT_CNT_PUT_SIGNAL:
			doca_gpu_dev_verbs_put_signal_counter<GT_SIG_ADD, rsm, nic>(
				qp, rdata, ldata, a.size, gt_addr(a.rsig + 8ull * (1 + gtid), a.rkey),
				gt_addr(a.lsig + 8ull * idx, a.lkey), 1, cqp, rcnt, lcnt, 1);
			break;
		case GT_CNT_SIGNAL:
			doca_gpu_dev_verbs_signal_counter<GT_SIG_ADD, rsm, nic>(qp, gt_addr(a.rsig, a.rkey),
										 gt_addr(a.lsig + 8ull * idx, a.lkey),
										 gtid + 1, cqp, rcnt, lcnt, 1);
			break;
		case GT_CNT_GET:
			doca_gpu_dev_verbs_get_counter<rsm, nic>(qp, rdata, ldata, a.size, cqp, rcnt, lcnt, 1);
			break;
		default:
			gt_report(a, GT_ERR_BAD_OP, gtid, k);
			ok = false;
		}
	}
	/* No tickets: once every thread has posted, wait for the last reserved slot of each QP (in
	 * order, so that covers everything). Each thread leaves the loop, so the barrier is safe. */
	__syncthreads();
	if (threadIdx.x != 0 || !ok)
		return;
	const uint64_t main_n = doca_gpu_dev_verbs_atomic_read<uint64_t, rsm>(&qp->sq_rsvd_index);
	const uint64_t comp_n = doca_gpu_dev_verbs_atomic_read<uint64_t, rsm>(&cqp->sq_rsvd_index);
	int rc = main_n == 0 ? 0 : gt_poll<rsm>(qp, main_n - 1, deadline, false);
	if (rc == 0 && comp_n != 0)
		rc = gt_poll<rsm>(cqp, comp_n - 1, deadline, true);
	if (rc != 0)
		gt_report(a, rc, gtid, a.iters);
}

/* ---- waits on a failing QP ----------------------------------------------------------------- */

/* Error-wait operations (gt_errwait_*): one operation that the host arranged to fail (a bad rkey,
 * or a peer that no longer answers), then one blocking device wait called directly, with no
 * bounded poll in front of it: the wait itself must return. Unlike the other kernels it takes the
 * device QPs themselves in qps (and cqps, the companion), not arrays. The kernel then stores what
 * gdaki_dev_qp_get_error reads at a.lcnt (struct gdaki_dev_qp_error, 24 bytes), the wait's return
 * code (or 0 for a void wait) at a.lcnt + 32 and the error status at a.lcnt + 36 (the same read
 * for the companion QP of a counter at a.lcnt + 64 and + 100). */
enum {
	GT_EW_WAIT = 0,        /* put; wait(qp, ticket) */
	GT_EW_WAIT_QP = 1,     /* p; wait(qp) */
	GT_EW_POLL = 2,        /* put_signal; poll_cq_at(cq, ticket of the signal) */
	GT_EW_GET_WAIT = 3,    /* get; get_wait(qp, daddr, ticket) */
	GT_EW_GET_BLOCK = 4,   /* get<BLOCKING_MODE_ENABLED> */
	GT_EW_RING_FULL = 5,   /* a.iters puts, one more than the ring holds: the availability check */
	GT_EW_COUNTER = 6,     /* put_counter; wait(main); wait(companion) */
	GT_EW_TIMEOUT = 7,     /* poll_cq_at two slots past the last reservation (never posted) */
	GT_EW_COLLAPSED = 8,   /* put; poll_cq_collapsed_at(qp, 1) (a collapsed-CQ QP) */
};

template <enum doca_gpu_dev_verbs_nic_handler nic>
__device__ static void gt_errwait(const struct gt_args &a)
{
	constexpr enum doca_gpu_dev_verbs_resource_sharing_mode rsm = GT_GPU;
	const uint32_t gtid = blockIdx.x * blockDim.x + threadIdx.x;
	if (gridDim.x * blockDim.x != 1 || a.qps == NULL || (a.op == GT_EW_COUNTER && a.cqps == NULL)) {
		gt_report(a, GT_ERR_BAD_ARGS, gtid, 0);
		return;
	}
	struct doca_gpu_dev_verbs_qp *qp = (struct doca_gpu_dev_verbs_qp *)a.qps;
	const struct doca_gpu_dev_verbs_addr rdata = gt_addr(a.raddr, a.rkey);
	const struct doca_gpu_dev_verbs_addr ldata = gt_addr(a.laddr, a.lkey);
	const struct doca_gpu_dev_verbs_addr nodump = gt_addr(0, 0);
	doca_gpu_dev_verbs_ticket_t ticket = 0;
	int rc = 0;
	switch (a.op) {
	case GT_EW_WAIT:
		doca_gpu_dev_verbs_put<rsm, nic>(qp, rdata, ldata, a.size, &ticket);
		doca_gpu_dev_verbs_wait<rsm, nic>(qp, ticket);
		break;
	case GT_EW_WAIT_QP:
		doca_gpu_dev_verbs_p<uint64_t, rsm, nic>(qp, rdata, gt_pvalue(0, 8), &ticket);
		doca_gpu_dev_verbs_wait<rsm, nic>(qp);
		break;
	case GT_EW_POLL:
		doca_gpu_dev_verbs_put_signal<GT_SIG_ADD, rsm, nic>(qp, rdata, ldata, a.size, gt_addr(a.rsig, a.rkey),
								  gt_addr(a.lsig, a.lkey), 1, &ticket);
		rc = doca_gpu_dev_verbs_poll_cq_at<rsm>(doca_gpu_dev_verbs_qp_get_cq_sq(qp), ticket);
		break;
	case GT_EW_GET_WAIT:
		doca_gpu_dev_verbs_get<rsm, nic>(qp, rdata, ldata, a.size, nodump, &ticket);
		doca_gpu_dev_verbs_get_wait<rsm, nic>(qp, nodump, ticket);
		break;
	case GT_EW_GET_BLOCK:
		doca_gpu_dev_verbs_get<rsm, nic, GT_THREAD, DOCA_GPUNETIO_VERBS_MCST_DISABLED,
				       DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED>(qp, rdata, ldata, a.size, nodump, &ticket);
		break;
	case GT_EW_RING_FULL:
		for (uint32_t k = 0; k < a.iters; k++)
			doca_gpu_dev_verbs_put<rsm, nic>(qp, gt_addr(a.raddr + 64ull * (k % 64), a.rkey),
							 gt_addr(a.laddr + 64ull * (k % 64), a.lkey), 64, &ticket);
		break;
	case GT_EW_COUNTER: {
		struct doca_gpu_dev_verbs_qp *cqp = (struct doca_gpu_dev_verbs_qp *)a.cqps;
		doca_gpu_dev_verbs_put_counter<rsm, nic>(qp, rdata, ldata, a.size, cqp, gt_addr(a.rcnt, a.rkey),
							 gt_addr(a.lcnt + 128, a.lkey), 1);
		doca_gpu_dev_verbs_wait<rsm, nic>(qp);
		doca_gpu_dev_verbs_wait<rsm, nic>(cqp);
		struct gdaki_dev_qp_error *cout = (struct gdaki_dev_qp_error *)(uintptr_t)(a.lcnt + 64);
		const int cst = gdaki_dev_qp_get_error(cqp, cout);
		((volatile int *)(uintptr_t)(a.lcnt + 64))[9] = cst; /* + 100 */
		break;
	}
	case GT_EW_TIMEOUT: {
		const uint64_t next = doca_gpu_dev_verbs_atomic_read<uint64_t, rsm>(&qp->sq_rsvd_index);
		rc = doca_gpu_dev_verbs_poll_cq_at<rsm>(doca_gpu_dev_verbs_qp_get_cq_sq(qp), next + 1);
		break;
	}
	case GT_EW_COLLAPSED:
		doca_gpu_dev_verbs_put<rsm, nic>(qp, rdata, ldata, a.size, &ticket,
						 DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_AVAILABILITY_CHECK |
							 DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_CPU_PROXY_UPDATE_PI);
		rc = doca_gpu_dev_verbs_poll_cq_collapsed_at<rsm>(qp, 1);
		break;
	default:
		gt_report(a, GT_ERR_BAD_OP, gtid, 0);
		return;
	}
	struct gdaki_dev_qp_error *out = (struct gdaki_dev_qp_error *)(uintptr_t)a.lcnt;
	const int st = gdaki_dev_qp_get_error(qp, out);
	((volatile int *)(uintptr_t)a.lcnt)[8] = rc; /* + 32 */
	((volatile int *)(uintptr_t)a.lcnt)[9] = st; /* + 36 */
	__threadfence_system();
}

/* ---- extensions ---------------------------------------------------------------------------- */

/* Extension operations (gt_ext_<rsm>_<nic>), thread scope; EXCLUSIVE: thread gtid owns
 * args.qps[gtid], GPU: every thread shares args.qps[0].
 *   FETCH_ADD  fetch_add of gtid+1 to the shared signal word 0, fetch_wait; the returned old value
 *              is stored at lcnt + 8*idx (the NIC wrote it at lsig + 8*idx)
 *   CAS        compare_swap(word 0: 0 -> gtid+1) once per thread, old values as for FETCH_ADD
 *   SIGNAL_SET put_signal<SET> of op idx's data with value pvalue(idx), then signal<SET> of the
 *              same value, both to the thread's own word 1+gtid
 *   QUIET      every op a put without a wait, then gdaki_dev_quiet once, which must return 0
 *   FENCE      get of op idx's bytes into the second data half, gdaki_dev_fence, put of those
 *              bytes from there to the remote second half, quiet: the put sends what the get read */
enum { GT_EXT_FETCH_ADD = 0, GT_EXT_CAS = 1, GT_EXT_SIGNAL_SET = 2, GT_EXT_QUIET = 3, GT_EXT_FENCE = 4 };

template <enum doca_gpu_dev_verbs_resource_sharing_mode rsm, enum doca_gpu_dev_verbs_nic_handler nic>
__device__ static void gt_ext(const struct gt_args &a)
{
	const uint64_t deadline = gt_now() + a.timeout_ns;
	const uint32_t gtid = blockIdx.x * blockDim.x + threadIdx.x;
	if ((rsm == GT_EXCL && gtid >= a.nqps) || (rsm == GT_GPU && a.nqps != 1)) {
		gt_report(a, GT_ERR_BAD_ARGS, gtid, 0);
		return;
	}
	struct doca_gpu_dev_verbs_qp *qp = a.qps[rsm == GT_EXCL ? gtid : 0];
	const uint64_t half = 256ull << 10;
	for (uint32_t k = 0; k < a.iters; k++) {
		const uint32_t idx = gtid * a.iters + k;
		const uint64_t off = (uint64_t)idx * a.size;
		const struct doca_gpu_dev_verbs_addr lres = gt_addr(a.lsig + 8ull * idx, a.lkey);
		doca_gpu_dev_verbs_ticket_t t = 0;
		uint64_t old = 0;
		int rc = 0;
		switch (a.op) {
		case GT_EXT_FETCH_ADD:
		case GT_EXT_CAS:
			if (a.op == GT_EXT_FETCH_ADD)
				gdaki_dev_fetch_add<rsm, nic>(qp, gt_addr(a.rsig, a.rkey), lres, gtid + 1, &t);
			else
				gdaki_dev_compare_swap<rsm, nic>(qp, gt_addr(a.rsig, a.rkey), lres, 0, gtid + 1, &t);
			rc = gdaki_dev_fetch_wait<rsm>(qp, t, lres, &old);
			if (rc == 0)
				((volatile uint64_t *)(uintptr_t)a.lcnt)[idx] = old;
			break;
		case GT_EXT_SIGNAL_SET: {
			const struct doca_gpu_dev_verbs_addr own = gt_addr(a.rsig + 8ull * (1 + gtid), a.rkey);
			doca_gpu_dev_verbs_put_signal<GDAKI_VERBS_SIGNAL_OP_SET, rsm, nic>(
				qp, gt_addr(a.raddr + off, a.rkey), gt_addr(a.laddr + off, a.lkey), a.size, own, lres,
				gt_pvalue(idx, 8), &t);
			rc = gt_poll<rsm>(qp, t, deadline, false);
			if (rc == 0) {
				doca_gpu_dev_verbs_signal<GDAKI_VERBS_SIGNAL_OP_SET, rsm, nic>(qp, own, lres, gt_pvalue(idx, 8), &t);
				rc = gt_poll<rsm>(qp, t, deadline, false);
			}
			break;
		}
		case GT_EXT_QUIET:
			doca_gpu_dev_verbs_put<rsm, nic>(qp, gt_addr(a.raddr + off, a.rkey), gt_addr(a.laddr + off, a.lkey), a.size,
							 &t);
			break;
		case GT_EXT_FENCE:
			doca_gpu_dev_verbs_get<rsm, nic>(qp, gt_addr(a.raddr + off, a.rkey), gt_addr(a.laddr + half + off, a.lkey),
							 a.size, gt_addr(0, 0), &t);
			gdaki_dev_fence<rsm, nic>(qp, &t);
			doca_gpu_dev_verbs_put<rsm, nic>(qp, gt_addr(a.raddr + half + off, a.rkey),
							 gt_addr(a.laddr + half + off, a.lkey), a.size, &t);
			rc = gdaki_dev_quiet<rsm>(qp);
			break;
		default:
			gt_report(a, GT_ERR_BAD_OP, gtid, k);
			return;
		}
		if (rc != 0) {
			gt_report(a, rc == -ETIMEDOUT || rc == GT_ERR_TIMEOUT ? GT_ERR_TIMEOUT : GT_ERR_CQE, gtid, k);
			return;
		}
	}
	if (a.op == GT_EXT_QUIET && gdaki_dev_quiet<rsm>(qp) != 0)
		gt_report(a, GT_ERR_CQE, gtid, a.iters);
}

/* ---- two-sided API ---------------------------------------------------------------------------- */

/* Bounded wait for the receive completion of RQ index ticket on the QP's receive CQ. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode rsm>
__device__ static int gt_poll_rq(struct doca_gpu_dev_verbs_qp *qp, uint64_t ticket, uint64_t deadline)
{
	struct doca_gpu_dev_verbs_cq *cq = doca_gpu_dev_verbs_qp_get_cq_rq(qp);
	for (;;) {
		const int r = doca_gpu_dev_verbs_poll_one_cq_at<rsm, DOCA_GPUNETIO_VERBS_QP_RQ>(cq, ticket);
		if (r == 0)
			return 0;
		if (r != EBUSY)
			return GT_ERR_RECV_CQE;
		if (gt_now() > deadline)
			return GT_ERR_RECV_TIMEOUT;
	}
}

/* Length and bytes of two-sided message idx (at least 8 bytes: the first 4 hold idx). Mirrored in
 * Go (twosidedLen, twosidedByte). */
__device__ static __forceinline__ uint32_t gt_ts_len(uint32_t idx, uint32_t size)
{
	return 8 + (idx * 37u) % (size - 7);
}
__device__ static __forceinline__ uint8_t gt_ts_byte(uint32_t idx, uint32_t j) { return (uint8_t)(idx * 7u + j * 13u + 1u); }

/* Every thread (thread scope) or lane (warp scope) posts one receive of args.size bytes at
 * raddr + idx * size on the receiving QP (cqps[0], key args.rkey: the receiver's lkey), writes
 * message idx at laddr + idx * size and sends it on the sending QP (qps[0]), waits for its send and
 * its receive (bounded), then calls recv_wait (which returns at once) and checks the message that
 * landed in its buffer: RESP_SEND, the length of the message named by its first 4 bytes, and its
 * bytes. Messages land in RQ order, not per thread, hence the index in the payload. With args.op 1
 * recv_wait posts the MCST DUMP (1 byte at args.rsig, receiver's key) on the receiving QP. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode rsm, enum doca_gpu_dev_verbs_nic_handler nic,
	  enum doca_gpu_dev_verbs_exec_scope scope>
__device__ static void gt_twosided(const struct gt_args &a)
{
	const uint32_t gtid = blockIdx.x * blockDim.x + threadIdx.x;
	const uint64_t deadline = gt_now() + a.timeout_ns;
	if (a.nqps != 1 || a.cqps == (struct doca_gpu_dev_verbs_qp **)0 || a.size < 8 ||
	    (rsm == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA && gridDim.x != 1)) {
		gt_report(a, GT_ERR_BAD_ARGS, gtid, 0);
		return;
	}
	struct doca_gpu_dev_verbs_qp *sqp = a.qps[0], *rqp = a.cqps[0];
	for (uint32_t k = 0; k < a.iters; k++) {
		const uint32_t idx = gtid * a.iters + k;
		const uint64_t off = (uint64_t)idx * a.size;
		doca_gpu_dev_verbs_ticket_t rt = 0, st = 0;
		doca_gpu_dev_verbs_recv<rsm, nic, scope>(rqp, gt_addr(a.raddr + off, a.rkey), a.size, &rt);

		const uint32_t len = gt_ts_len(idx, a.size);
		uint8_t *src = (uint8_t *)(uintptr_t)(a.laddr + off);
		*(uint32_t *)src = idx;
		for (uint32_t j = 4; j < len; j++)
			src[j] = gt_ts_byte(idx, j);
		doca_gpu_dev_verbs_send<rsm, nic, scope>(sqp, gt_addr(a.laddr + off, a.lkey), len, &st);

		int r = gt_poll<rsm>(sqp, st, deadline, false);
		if (r != 0) {
			gt_report(a, r, gtid, k);
			return;
		}
		r = gt_poll_rq<rsm>(rqp, rt, deadline);
		if (r != 0) {
			gt_report(a, r, gtid, k);
			return;
		}
		struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)0;
		if (a.op == 1)
			doca_gpu_dev_verbs_recv_wait<rsm, nic, DOCA_GPUNETIO_VERBS_MCST_ENABLED>(rqp, gt_addr(a.rsig, a.rkey), &rt,
												&cqe);
		else
			doca_gpu_dev_verbs_recv_wait<rsm, nic>(rqp, gt_addr(a.rsig, a.rkey), &rt, &cqe);
		const uint8_t *dst = (const uint8_t *)(uintptr_t)(a.raddr + off);
		const uint32_t from = *(const volatile uint32_t *)dst;
		bool ok = cqe != (struct mlx5_cqe64 *)0 && (((const volatile uint8_t *)cqe)[63] >> 4) == 2 &&
			  doca_gpu_dev_verbs_cqe_is_inline(cqe) == 0 && from < gridDim.x * blockDim.x * a.iters &&
			  doca_gpu_dev_verbs_cqe_get_bytes(cqe) == gt_ts_len(from, a.size);
		for (uint32_t j = 4; ok && j < gt_ts_len(from, a.size); j++)
			ok = ((const volatile uint8_t *)dst)[j] == gt_ts_byte(from, j);
		if (!ok) {
			gt_report(a, GT_ERR_RECV_DATA, gtid, k);
			return;
		}
	}
}

/* ---- entry points -------------------------------------------------------------------------- */

#define GT_NIC_auto DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO
#define GT_NIC_proxy DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY
#define GT_NIC_db DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB
#define GT_NIC_nodbr DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR
#define GT_RSM_excl GT_EXCL
#define GT_RSM_gpu GT_GPU
#define GT_RSM_cta DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA
#define GT_SCOPE_thread GT_THREAD
#define GT_SCOPE_warp GT_WARP

#define GT_ONESIDED(rsm, scope, nic)                                                                         \
	extern "C" __global__ void gt_onesided_##rsm##_##scope##_##nic(struct gt_args a)                   \
	{                                                                                                  \
		gt_onesided<GT_RSM_##rsm, GT_NIC_##nic, GT_SCOPE_##scope>(a);                              \
	}
#define GT_LOWLEVEL(rsm, nic)                                                                              \
	extern "C" __global__ void gt_lowlevel_##rsm##_##nic(struct gt_args a)                             \
	{                                                                                                  \
		gt_lowlevel<GT_RSM_##rsm, GT_NIC_##nic>(a);                                                \
	}
#define GT_COUNTER(rsm, nic)                                                                               \
	extern "C" __global__ void gt_counter_##rsm##_##nic(struct gt_args a)                              \
	{                                                                                                  \
		gt_counter<GT_RSM_##rsm, GT_NIC_##nic>(a);                                                 \
	}
#define GT_ERRWAIT(nic)                                                                                    \
	extern "C" __global__ void gt_errwait_##nic(struct gt_args a)                                      \
	{                                                                                                  \
		gt_errwait<GT_NIC_##nic>(a);                                                               \
	}
#define GT_EXT(rsm, nic)                                                                                   \
	extern "C" __global__ void gt_ext_##rsm##_##nic(struct gt_args a)                                  \
	{                                                                                                  \
		gt_ext<GT_RSM_##rsm, GT_NIC_##nic>(a);                                                     \
	}
#define GT_TWOSIDED(rsm, scope, nic)                                                                       \
	extern "C" __global__ void gt_twosided_##rsm##_##scope##_##nic(struct gt_args a)                   \
	{                                                                                                  \
		gt_twosided<GT_RSM_##rsm, GT_NIC_##nic, GT_SCOPE_##scope>(a);                              \
	}
#define GT_ALL(nic)                                                                                        \
	GT_ONESIDED(excl, thread, nic)                                                                     \
	GT_ONESIDED(excl, warp, nic)                                                                       \
	GT_ONESIDED(gpu, thread, nic)                                                                      \
	GT_ONESIDED(gpu, warp, nic)                                                                        \
	GT_LOWLEVEL(excl, nic)                                                                             \
	GT_LOWLEVEL(gpu, nic)                                                                              \
	GT_COUNTER(excl, nic)                                                                              \
	GT_COUNTER(gpu, nic)                                                                               \
	GT_ERRWAIT(nic)                                                                                    \
	GT_EXT(excl, nic)                                                                                  \
	GT_EXT(gpu, nic)                                                                                   \
	GT_TWOSIDED(gpu, thread, nic)                                                                      \
	GT_TWOSIDED(gpu, warp, nic)                                                                        \
	GT_TWOSIDED(cta, thread, nic)

GT_ALL(auto)
GT_ALL(proxy)
GT_ALL(db)
GT_ALL(nodbr)

/* ---- The DOCA-family corpus (cuda/test/corpus) on the GPU (TestGPUFamilies) ----------------------- */
/* One thread runs one corpus function of the family that op names on qps[0], over size bytes at the
 * start of the data regions. The corpus functions wait without a deadline, as their families'
 * kernels do; the launch timeout bounds them. */
#include "corpus/sdk32.cu"
#include "corpus/sdk33.cu"
#include "corpus/sdk34.cu"
#include "corpus/os.cu"
#include "corpus/nccl.cu"

enum { GT_FAM_SDK32_PUT = 0, GT_FAM_SDK34_PUT = 1, GT_FAM_OS_PUT = 2, GT_FAM_NCCL_GET = 3, GT_FAM_SDK33_P_SIGNAL = 4 };

extern "C" __global__ void gt_family(struct gt_args a)
{
	struct doca_gpu_dev_verbs_qp *qp = a.qps[0];
	const struct doca_gpu_dev_verbs_addr r = gt_addr(a.raddr, a.rkey);
	const struct doca_gpu_dev_verbs_addr l = gt_addr(a.laddr, a.lkey);
	switch (a.op) {
	case GT_FAM_SDK32_PUT:
		corpus_sdk32_put_wait(qp, r, l, a.size);
		break;
	case GT_FAM_SDK34_PUT:
		corpus_sdk34_put_nop(qp, r, l, a.size);
		break;
	case GT_FAM_OS_PUT:
		corpus_os_put_wait(qp, r, l, a.size);
		break;
	case GT_FAM_NCCL_GET:
		corpus_nccl_get_mcst(qp, r, l, a.size, gt_addr(a.lcnt, a.lkey));
		break;
	case GT_FAM_SDK33_P_SIGNAL:
		corpus_sdk33_p_signal(qp, r, gt_pvalue(0, 8), gt_addr(a.rsig, a.rkey), gt_addr(a.lsig, a.lkey), 1);
		break;
	default:
		gt_report(a, GT_ERR_BAD_OP, 0, 0);
	}
}
