/*
 * Posting-rate benchmark of the GPUNetIO device headers.
 *
 * GPU threads post 64-byte RDMA-write WQEs as fast as they can, with no NIC: QP structs, SQ rings
 * and doorbell records in GPU memory, one 4 KiB pinned host page per QP standing in for the UAR
 * (doorbell at 0x800), NIC handler GPU_SM_DB, availability check skipped. Every variant and the
 * plain references (not library code) run in the same process at three geometries; each figure
 * is the median of 5 runs of at least 10 ms.
 *
 * Two-sided rows (send.*, recv.*): 64-byte SEND WQEs through doca_gpu_dev_verbs_send and 16-byte
 * receive WQEs through doca_gpu_dev_verbs_recv (RQ ring and its doorbell record in GPU memory, word
 * 0 of the QP's record). Neither call takes a code_opt, so each checks slot availability; the
 * send and receive CQs say every earlier WQE completed (cqe_ci at its maximum), so the check
 * costs what it costs against a NIC that keeps up: a look at the CQ's consumer index once the
 * ring has wrapped, no wait.
 *
 * Each row gives the absolute rate, and where one is set the target in Mops/s (0.95x, or 1.5x
 * for the shared-QP warp put, of DOCA GPUNetIO 2.0.1's headers measured on an H100) with
 * "ok"/"MISS". Beside it, as a diagnostic: the ratio to the matching plain reference measured in
 * the same run, compared with DOCA's ratio to that reference, and DOCA's own figure.
 *
 * Build: nvcc -O3 -std=c++17 -arch=sm_90a -Icuda/include bench/postrate/post_rate.cu -o post_rate
 * Usage: post_rate [--runs N] [--min-ms MS] [--geom BxT]... [--only NAME,...] [--label L]
 *                  [--probe|--probe-only]
 *   --only runs only the named variants (and the references they are compared with);
 *   --probe adds a table per geometry that prices each piece of a doorbell (fence and store forms),
 *   per thread and per block, including the floor of our two-fence order.
 * scripts/post-rate.sh builds and runs it; --candidates there compares build-time variants.
 */
#include <doca_gpunetio_device.h>
#include <doca_gpunetio_dev_verbs_twosided.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(call)                                                                                         \
	do {                                                                                             \
		cudaError_t e_ = (call);                                                                 \
		if (e_ != cudaSuccess) {                                                                 \
			fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_), \
				cudaGetErrorString(e_));                                                 \
			exit(1);                                                                         \
		}                                                                                        \
	} while (0)

#define OPT_SKIP ((uint32_t)DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_AVAILABILITY_CHECK)
#define RSM_GPU DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU
#define RSM_EXCL DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE
#define NIC_AUTO DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO
#define SCOPE_THREAD DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD
#define SCOPE_WARP DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP
#define SIG_ADD DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD

/* ---- Library variants ----------------------------------------------------------------------- */

enum op_kind { OP_PUT, OP_P, OP_PUT_SIGNAL, OP_SEND, OP_RECV };

/* qp_div: threads per QP (0 = one QP for the whole grid). */
template <op_kind OP, enum doca_gpu_dev_verbs_exec_scope SCOPE, enum doca_gpu_dev_verbs_resource_sharing_mode RSM>
__global__ void k_lib(struct doca_gpu_dev_verbs_qp *qps, int qp_div, int iters)
{
	const unsigned int gtid = blockIdx.x * blockDim.x + threadIdx.x;
	struct doca_gpu_dev_verbs_qp *qp = qp_div == 0 ? qps : qps + gtid / qp_div;
	const struct doca_gpu_dev_verbs_addr raddr = {0x7f0000000000ull + gtid * 64ull, 0x11223344};
	const struct doca_gpu_dev_verbs_addr laddr = {0x7f2000000000ull + gtid * 64ull, 0x55667788};
	const struct doca_gpu_dev_verbs_addr saddr = {0x7f4000000000ull, 0x99aabbcc};
	doca_gpu_dev_verbs_ticket_t t = 0, acc = 0;
	for (int i = 0; i < iters; i++) {
		if (OP == OP_PUT)
			doca_gpu_dev_verbs_put<RSM, NIC_AUTO, SCOPE>(qp, raddr, laddr, 64, &t, OPT_SKIP);
		else if (OP == OP_P)
			doca_gpu_dev_verbs_p<uint64_t, RSM, NIC_AUTO, SCOPE>(qp, raddr, (uint64_t)i, &t, OPT_SKIP);
		else if (OP == OP_SEND)
			doca_gpu_dev_verbs_send<RSM, NIC_AUTO, SCOPE>(qp, laddr, 64, &t);
		else if (OP == OP_RECV)
			doca_gpu_dev_verbs_recv<RSM, NIC_AUTO, SCOPE>(qp, laddr, 64, &t);
		else
			doca_gpu_dev_verbs_put_signal<SIG_ADD, RSM, NIC_AUTO, SCOPE>(qp, raddr, laddr, 64, saddr, laddr, 1, &t,
										     OPT_SKIP);
		acc += t;
	}
	if (acc == 0xffffffffffffffffull)
		printf("unreachable %llu\n", (unsigned long long)acc);
}

/* Low-level: one QP per thread, a doorbell per B WQEs. */
template <int B>
__global__ void k_ll_thread(struct doca_gpu_dev_verbs_qp *qps, int iters)
{
	const unsigned int gtid = blockIdx.x * blockDim.x + threadIdx.x;
	struct doca_gpu_dev_verbs_qp *qp = qps + gtid;
	uint64_t idx = doca_gpu_dev_verbs_atomic_read<uint64_t, RSM_EXCL>(&qp->sq_wqe_pi);
	for (int i = 0; i < iters; i += B) {
		for (int k = 0; k < B; k++, idx++) {
			struct doca_gpu_dev_verbs_wqe *w = doca_gpu_dev_verbs_get_wqe_ptr(qp, idx);
			doca_gpu_dev_verbs_wqe_prepare_write(qp, w, idx, DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE,
							     DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 0, 0x7f0000000000ull,
							     0x11223344, 0x7f2000000000ull, 0x55667788, 64);
		}
		doca_gpu_dev_verbs_submit<RSM_EXCL>(qp, idx);
	}
}

/* Low-level: one QP per block; every thread writes a WQE, one thread submits. */
__global__ void k_ll_block(struct doca_gpu_dev_verbs_qp *qps, int iters)
{
	struct doca_gpu_dev_verbs_qp *qp = qps + blockIdx.x;
	uint64_t base = doca_gpu_dev_verbs_atomic_read<uint64_t, RSM_EXCL>(&qp->sq_wqe_pi);
	for (int i = 0; i < iters; i++) {
		const uint64_t idx = base + threadIdx.x;
		struct doca_gpu_dev_verbs_wqe *w = doca_gpu_dev_verbs_get_wqe_ptr(qp, idx);
		doca_gpu_dev_verbs_wqe_prepare_write(qp, w, idx, DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE,
						     DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE, 0, 0x7f0000000000ull,
						     0x11223344, 0x7f2000000000ull, 0x55667788, 64);
		__syncthreads();
		if (threadIdx.x == 0)
			doca_gpu_dev_verbs_submit<RSM_EXCL>(qp, base + blockDim.x);
		__syncthreads();
		base += blockDim.x;
	}
}

/* ---- Plain references (not library code) ---------------------------------------------------- */

/* What the plain references do: raw.shared = one atomicAdd on a shared counter + three 16-byte stores
 * of a 64-byte WQE into one ring; +db.gpu / +db.sys = the same plus a GPU- / system-scope release
 * fence and an 8-byte store to the doorbell page per op; raw.thread = the same with a counter and
 * a ring (and doorbell page) per thread. The doorbell store is the one the library uses
 * (st.mmio.relaxed.sys): a plain volatile store would be merged across the lanes of a warp that
 * hit one address, so raw.shared+db would ring once per warp instead of once per op. The two
 * "extra" rows below show those variants; they are not used as references. */
enum raw_db { DB_NONE, DB_GPU, DB_SYS, DB_GPU_VOLATILE };

__device__ __forceinline__ void raw_write_wqe(uint8_t *slot, uint64_t v)
{
	uint4 *p = (uint4 *)slot;
	p[0] = make_uint4((uint32_t)v, 1, 2, 3);
	p[1] = make_uint4(4, 5, 6, 7);
	p[2] = make_uint4(8, 9, 10, 11);
}

__device__ __forceinline__ void raw_db_store(uint64_t *p, uint64_t v)
{
#if defined(DOCA_GPUNETIO_VERBS_HAS_STORE_RELAXED_MMIO)
	asm volatile("st.mmio.relaxed.sys.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
	asm volatile("st.relaxed.sys.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#endif
}

/* The doorbell record: a relaxed system-scope 4-byte store. */
__device__ __forceinline__ void raw_dbr_store(uint32_t *p, uint32_t v)
{
	asm volatile("st.relaxed.sys.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* A 48-byte WQE written as the WQE builders write it: three st.weak.cs.v2.b64 stores. */
__device__ __forceinline__ void raw_write_wqe_cs(uint64_t *q, uint64_t i)
{
	asm volatile("st.weak.cs.v2.b64 [%0], {%1, %2};" ::"l"(q), "l"(i), "l"(1ull) : "memory");
	asm volatile("st.weak.cs.v2.b64 [%0], {%1, %2};" ::"l"(q + 2), "l"(2ull), "l"(3ull) : "memory");
	asm volatile("st.weak.cs.v2.b64 [%0], {%1, %2};" ::"l"(q + 4), "l"(4ull), "l"(5ull) : "memory");
}

template <raw_db MODE>
__device__ __forceinline__ void raw_ring(uint64_t *db, uint64_t v)
{
#if defined(DOCA_GPUNETIO_VERBS_HAS_FENCE_ACQUIRE_RELEASE_PTX)
	if (MODE == DB_GPU || MODE == DB_GPU_VOLATILE)
		asm volatile("fence.release.gpu;" ::: "memory");
	else if (MODE == DB_SYS)
		asm volatile("fence.release.sys;" ::: "memory");
#else
	if (MODE == DB_GPU || MODE == DB_GPU_VOLATILE)
		asm volatile("fence.acq_rel.gpu;" ::: "memory");
	else if (MODE == DB_SYS)
		asm volatile("fence.acq_rel.sys;" ::: "memory");
#endif
	if (MODE == DB_GPU_VOLATILE)
		*(volatile uint64_t *)db = v;
	else if (MODE != DB_NONE)
		raw_db_store(db, v);
}

/* One shared counter and ring for the whole grid. */
template <raw_db MODE>
__global__ void k_raw_shared(unsigned long long *ctr, uint8_t *ring, uint32_t mask, uint64_t *db, int iters)
{
	for (int i = 0; i < iters; i++) {
		const unsigned long long idx = atomicAdd(ctr, 1ull);
		raw_write_wqe(ring + (idx & mask) * 64, idx);
		raw_ring<MODE>(db, idx);
	}
}

/* A counter, a ring and a doorbell page per thread. REG_IDX keeps the index in a register instead
 * (an extra row: it shows what the per-op counter round trip costs). */
template <raw_db MODE, bool REG_IDX>
__global__ void k_raw_thread(unsigned long long *ctrs, uint8_t *rings, uint32_t mask, uint64_t *dbs, int iters)
{
	const unsigned int gtid = blockIdx.x * blockDim.x + threadIdx.x;
	uint8_t *ring = rings + (size_t)gtid * (mask + 1) * 64;
	uint64_t *db = (uint64_t *)((uint8_t *)dbs + (size_t)gtid * 4096 + 0x800);
	for (int i = 0; i < iters; i++) {
		const unsigned long long idx = REG_IDX ? (unsigned long long)i : atomicAdd(ctrs + gtid, 1ull);
		raw_write_wqe(ring + (idx & mask) * 64, idx);
		raw_ring<MODE>(db, idx);
	}
}

/* ---- Doorbell cost breakdown (--probe): what each piece of a submit costs ---------------------- */

/* Per-thread ring and doorbell page, as raw.thread; V selects the store and fence forms. */
enum probe_kind {
	PR_PLAIN,	 /* three plain 16-byte stores (raw.thread with the index in a register) */
	PR_CS,		 /* three st.weak.cs.v2.b64 stores (what the WQE builders emit) */
	PR_SC_VOL,	 /* + __threadfence() + volatile 8-byte store */
	PR_REL_VOL,	 /* + fence.release.gpu + volatile store */
	PR_REL_MMIO,	 /* + fence.release.gpu + st.mmio.relaxed.sys */
	PR_ACQREL_MMIO,	 /* + fence.acq_rel.gpu + st.mmio.relaxed.sys */
	PR_SYS_MMIO,	 /* + fence.release.sys + st.mmio.relaxed.sys */
	PR_REL_RLXSYS,	 /* + fence.release.gpu + st.relaxed.sys.b64 */
	PR_DB_DBR_DB,	 /* GPU_SM_DB's sequence: fence, DB, DBR, fence, DB (two fences, two MMIO stores) */
	PR_DBR_DB,	 /* DBR, fence, DB: one fence, one MMIO store (cost floor; the DBR is not ordered after the WQEs) */
	PR_F_DBR_F_DB,	 /* fence, DBR, fence, DB: our order, that of every mlx5 provider */
	PR_MEMIDX,	 /* stores, with the index loaded from and stored to memory each op (plain) */
	PR_MEMIDX_DB,	 /* the same + fence.release.gpu + mmio doorbell */
	PR_COUNT
};
static const char *const probe_name[PR_COUNT] = {
	"3 plain st.v4",	 "3 st.weak.cs",	  "+fence.sc.gpu+volatile",   "+fence.release.gpu+volatile",
	"+fence.release.gpu+mmio", "+fence.acq_rel.gpu+mmio", "+fence.release.sys+mmio", "+fence.release.gpu+st.relaxed.sys",
	"+DB,DBR,fence,DB (mmio)", "+DBR,fence,DB (mmio)", "+fence,DBR,fence,DB (ours)", "index in memory", "index in memory+fence+mmio",
};

template <int V>
__global__ void k_probe(uint8_t *rings, uint32_t mask, uint64_t *dbs, uint32_t *dbrs, int iters)
{
	const unsigned int gtid = blockIdx.x * blockDim.x + threadIdx.x;
	uint8_t *ring = rings + (size_t)gtid * (mask + 1) * 64;
	uint64_t *db = (uint64_t *)((uint8_t *)dbs + (size_t)gtid * 4096 + 0x800);
	uint32_t *dbr = dbrs + gtid * 2 + 1;
	for (int i = 0; i < iters; i++) {
		uint32_t at = (uint32_t)i;
		if (V == PR_MEMIDX || V == PR_MEMIDX_DB) {
			at = dbr[-1];
			dbr[-1] = at + 1;
		}
		uint8_t *slot = ring + (at & mask) * 64;
		if (V == PR_PLAIN) {
			raw_write_wqe(slot, (uint64_t)i);
			continue;
		}
		raw_write_wqe_cs((uint64_t *)slot, (uint64_t)i);
		switch (V) {
		case PR_SC_VOL:
			__threadfence();
			*(volatile uint64_t *)db = (uint64_t)i;
			break;
		case PR_REL_VOL:
			doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
			*(volatile uint64_t *)db = (uint64_t)i;
			break;
		case PR_REL_MMIO:
		case PR_MEMIDX_DB: /* its index store is above */
			doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
			raw_db_store(db, (uint64_t)i);
			break;
		case PR_ACQREL_MMIO:
			asm volatile("fence.acq_rel.gpu;" ::: "memory");
			raw_db_store(db, (uint64_t)i);
			break;
		case PR_SYS_MMIO:
			doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
			raw_db_store(db, (uint64_t)i);
			break;
		case PR_REL_RLXSYS:
			doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
			asm volatile("st.relaxed.sys.global.b64 [%0], %1;" ::"l"(db), "l"((uint64_t)i) : "memory");
			break;
		case PR_DB_DBR_DB:
			doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
			raw_db_store(db, (uint64_t)i);
			raw_dbr_store(dbr, (uint32_t)i);
			doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
			raw_db_store(db, (uint64_t)i);
			break;
		case PR_F_DBR_F_DB:
			doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
			/* fall through */
		case PR_DBR_DB:
			raw_dbr_store(dbr, (uint32_t)i);
			doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
			raw_db_store(db, (uint64_t)i);
			break;
		default:
			break;
		}
	}
}

/* The ll.block shape (every thread writes a WQE into its block's ring, one thread rings for the
 * block) with nothing but the doorbell sequence: what each order costs per block, and the floor
 * that our two fences put under ll.block. */
enum probe_block_kind {
	PB_NONE,	/* WQE stores and the two barriers, no doorbell */
	PB_ONE_FENCE,	/* + fence, DB: one fence and one MMIO store (no DBR; not a valid GPU_SM_DB submit) */
	PB_F_DBR_F_DB,	/* + fence, DBR, fence, DB: our order */
	PB_F_DB_DBR_F_DB, /* + fence, DB, DBR, fence, DB: DOCA's order */
	PB_COUNT
};
static const char *const probe_block_name[PB_COUNT] = {
	"block: stores + 2 bars", "block: +fence,DB (floor, 1 fence)", "block: +fence,DBR,fence,DB (ours)",
	"block: +fence,DB,DBR,fence,DB (DOCA)",
};

template <int V>
__global__ void k_probe_block(uint8_t *rings, uint32_t mask, uint64_t *dbs, uint32_t *dbrs, int iters)
{
	uint8_t *ring = rings + (size_t)blockIdx.x * (mask + 1) * 64;
	uint64_t *db = (uint64_t *)((uint8_t *)dbs + (size_t)blockIdx.x * 4096 + 0x800);
	uint32_t *dbr = dbrs + blockIdx.x * 2 + 1;
	uint32_t base = 0;
	for (int i = 0; i < iters; i++) {
		uint64_t *q = (uint64_t *)(ring + ((base + threadIdx.x) & mask) * 64);
		raw_write_wqe_cs(q, (uint64_t)i);
		__syncthreads();
		base += blockDim.x;
		if (threadIdx.x == 0 && V != PB_NONE) {
			doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
			if (V == PB_F_DB_DBR_F_DB)
				raw_db_store(db, base);
			if (V != PB_ONE_FENCE) {
				raw_dbr_store(dbr, base);
				doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
			}
			raw_db_store(db, base);
		}
		__syncthreads();
	}
}

/* ---- Host side --------------------------------------------------------------------------------- */

struct qp_set {
	int n = 0;
	uint16_t wqes = 0;
	struct doca_gpu_dev_verbs_qp *d_qps = nullptr;
	uint8_t *d_rings = nullptr;
	uint8_t *d_dbr = nullptr;
	uint8_t *d_cqes = nullptr;
	uint8_t *d_rq = nullptr;
	uint8_t *h_uar = nullptr;
};

static uint32_t be32(uint32_t v) { return __builtin_bswap32(v); }

/* rq: the QPs also get a receive queue of wqes 16-byte entries, and both CQs report every WQE
 * complete (the two-sided rows). */
static qp_set make_qps(int n, uint16_t wqes, uint8_t *h_uar_pages, bool rq = false)
{
	qp_set s;
	s.n = n;
	s.wqes = wqes;
	if (rq) {
		CK(cudaMalloc(&s.d_rq, (size_t)n * wqes * 16));
		CK(cudaMemset(s.d_rq, 0, (size_t)n * wqes * 16));
	}
	CK(cudaMalloc(&s.d_qps, sizeof(struct doca_gpu_dev_verbs_qp) * n));
	CK(cudaMalloc(&s.d_rings, (size_t)n * wqes * 64));
	CK(cudaMalloc(&s.d_dbr, (size_t)n * 8));
	CK(cudaMalloc(&s.d_cqes, 64 * 64));
	CK(cudaMemset(s.d_rings, 0, (size_t)n * wqes * 64));
	CK(cudaMemset(s.d_dbr, 0, (size_t)n * 8));
	CK(cudaMemset(s.d_cqes, 0xff, 64 * 64));
	s.h_uar = h_uar_pages;
	uint8_t *d_uar = nullptr;
	CK(cudaHostGetDevicePointer((void **)&d_uar, h_uar_pages, 0));
	std::vector<struct doca_gpu_dev_verbs_qp> img(n);
	for (int i = 0; i < n; i++) {
		struct doca_gpu_dev_verbs_qp &q = img[i];
		memset(&q, 0, sizeof(q));
		const uint32_t qpn = 0x100 + i;
		q.sq_num = qpn;
		q.sq_num_shift8 = qpn << 8;
		q.sq_num_shift8_be = be32(qpn << 8);
		q.sq_num_shift8_be_1ds = be32((qpn << 8) | 1);
		q.sq_num_shift8_be_2ds = be32((qpn << 8) | 2);
		q.sq_num_shift8_be_3ds = be32((qpn << 8) | 3);
		q.sq_num_shift8_be_4ds = be32((qpn << 8) | 4);
		q.sq_num_shift8_be_5ds = be32((qpn << 8) | 5);
		q.sq_wqe_num = wqes;
		q.sq_wqe_mask = (uint16_t)(wqes - 1);
		q.sq_wqe_daddr = s.d_rings + (size_t)i * wqes * 64;
		q.sq_dbrec = (__be32 *)(s.d_dbr + (size_t)i * 8 + 4);
		q.sq_db = (uint64_t *)(d_uar + (size_t)i * 4096 + 0x800);
		q.nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB;
		q.mem_type = DOCA_GPUNETIO_VERBS_MEM_TYPE_GPU;
		q.cq_sq.cqe_daddr = s.d_cqes;
		q.cq_sq.cqe_num = 64;
		q.cq_sq.cqe_mask = 63;
		q.cq_sq.cqe_size = 64;
		q.cq_sq.mem_type = DOCA_GPUNETIO_VERBS_MEM_TYPE_GPU;
		if (rq) {
			q.rq_num = qpn;
			q.rq_wqe_num = wqes;
			q.rq_wqe_mask = wqes - 1u;
			q.rq_wqe_daddr = s.d_rq + (size_t)i * wqes * 16;
			q.rq_dbrec = (__be32 *)(s.d_dbr + (size_t)i * 8);
			q.rcv_wqe_size = 16;
			q.cq_rq = q.cq_sq;
			q.cq_sq.cqe_ci = ~0ull;
			q.cq_rq.cqe_ci = ~0ull;
		}
	}
	CK(cudaMemcpy(s.d_qps, img.data(), sizeof(img[0]) * n, cudaMemcpyHostToDevice));
	return s;
}

static void free_qps(qp_set &s)
{
	cudaFree(s.d_qps);
	cudaFree(s.d_rings);
	cudaFree(s.d_dbr);
	cudaFree(s.d_cqes);
	cudaFree(s.d_rq);
	s = qp_set();
}

struct geom {
	int blocks, threads;
};

/* DOCA GPUNetIO 2.0.1's headers, Mops/s measured on an H100 (2026-11-22), per geometry (1x32, 1x256, 132x256). */
struct anchor_row {
	const char *name;
	double v[3];
};
static const anchor_row anchor[] = {
	{"put.thread.gpu", {0.362, 0.771, 0.029}},   {"put.warp.gpu", {10.92, 24.91, 15.30}},
	{"put.thread.excl", {20.26, 74.48, 217.6}},  {"put.warp.excl", {37.32, 169.96, 11874}},
	{"ll.thread.b1", {23.57, 90.51, 286}},       {"ll.thread.b32", {234.3, 300.9, 6377}},
	{"ll.block", {38.06, 191.0, 10221}},         {"raw.shared", {117.6, 462.2, 25409}},
	{"raw.shared+db.gpu", {48.5, 226.1, 332.5}}, {"raw.shared+db.sys", {32.2, 155.1, 332.1}},
	{"raw.thread", {75.5, 263.7, 7329}},         {"raw.thread+db.gpu", {39.4, 169.7, 618}},
};

/* Targets in absolute Mops/s (per geometry 1x32, 1x256, 132x256; 0 = none): 0.95x of DOCA's figures
 * from the run of 2026-11-23 for the low-level variants, 1.5x of DOCA for the shared-QP warp put. */
static const anchor_row target[] = {
	{"put.warp.gpu", {16.4, 0, 0}},
	{"ll.block", {36.2, 181.4, 0}},
	{"ll.thread.b32", {0, 0, 6048}},
};

static int anchor_col(const geom &g)
{
	if (g.blocks == 1 && g.threads == 32)
		return 0;
	if (g.blocks == 1 && g.threads == 256)
		return 1;
	if (g.blocks == 132 && g.threads == 256)
		return 2;
	return -1;
}

static double row_value(const anchor_row *rows, size_t n, const char *name, int col)
{
	if (col < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].name, name) == 0)
			return rows[i].v[col];
	return 0;
}

static double anchor_value(const char *name, int col)
{
	return row_value(anchor, sizeof(anchor) / sizeof(anchor[0]), name, col);
}

static double target_value(const char *name, int col)
{
	return row_value(target, sizeof(target) / sizeof(target[0]), name, col);
}

/* --only: the variants to run ("" = all). A reference runs when a selected variant needs it. */
static std::vector<std::string> only;

static bool selected(const char *name)
{
	if (only.empty())
		return true;
	for (const std::string &o : only)
		if (o == name)
			return true;
	return false;
}

struct result {
	std::string name, ref;
	double mops;
};

struct runner {
	int runs = 5;
	double min_ms = 10.0;
	cudaEvent_t a, b;

	/* The milliseconds of one launch(iters). */
	template <typename L>
	float timed(L &launch, int iters)
	{
		float ms = 0;
		CK(cudaEventRecord(a));
		launch(iters);
		CK(cudaEventRecord(b));
		CK(cudaEventSynchronize(b));
		CK(cudaGetLastError());
		CK(cudaEventElapsedTime(&ms, a, b));
		return ms;
	}

	/* launch(iters) runs one kernel; ops_per_iter counts operations per loop iteration. */
	template <typename L>
	double measure(L launch, double ops_per_iter)
	{
		int iters = 1;
		for (;;) {
			const float ms = timed(launch, iters);
			if (ms >= min_ms || iters >= (1 << 24))
				break;
			int next = ms > 0.05 ? (int)(iters * (min_ms * 1.3 / ms)) + 1 : iters * 8;
			iters = std::max(iters * 2, std::min(next, iters * 64));
		}
		std::vector<double> rates;
		for (int r = 0; r < runs; r++)
			rates.push_back(ops_per_iter * iters / (timed(launch, iters) * 1e3));
		std::sort(rates.begin(), rates.end());
		return rates[rates.size() / 2];
	}
};

static void run_geom(runner &R, const geom &g)
{
	const int T = g.blocks * g.threads;
	const int col = anchor_col(g);
	uint8_t *h_uar = nullptr;
	CK(cudaHostAlloc((void **)&h_uar, (size_t)(T + 1) * 4096, cudaHostAllocMapped | cudaHostAllocPortable));
	memset(h_uar, 0, (size_t)(T + 1) * 4096);
	std::vector<result> res;
	const dim3 grid(g.blocks), block(g.threads);

	/* Shared QP (whole grid). */
	{
		qp_set s = make_qps(1, 32768, h_uar);
		auto run = [&](const char *name, auto kern) {
			if (selected(name))
				res.push_back({name, "raw.shared+db.gpu",
					       R.measure([&](int it) { kern<<<grid, block>>>(s.d_qps, 0, it); }, T)});
		};
		run("put.thread.gpu", k_lib<OP_PUT, SCOPE_THREAD, RSM_GPU>);
		run("put.warp.gpu", k_lib<OP_PUT, SCOPE_WARP, RSM_GPU>);
		run("p.thread.gpu", k_lib<OP_P, SCOPE_THREAD, RSM_GPU>);
		run("p.warp.gpu", k_lib<OP_P, SCOPE_WARP, RSM_GPU>);
		run("put_signal.thread.gpu", k_lib<OP_PUT_SIGNAL, SCOPE_THREAD, RSM_GPU>);
		run("put_signal.warp.gpu", k_lib<OP_PUT_SIGNAL, SCOPE_WARP, RSM_GPU>);
		free_qps(s);
	}
	/* Two-sided on a shared QP (whole grid), then one QP per thread / per warp. */
	{
		qp_set s = make_qps(1, 32768, h_uar, true);
		auto run = [&](const char *name, auto kern) {
			if (selected(name))
				res.push_back({name, "raw.shared+db.gpu",
					       R.measure([&](int it) { kern<<<grid, block>>>(s.d_qps, 0, it); }, T)});
		};
		run("send.thread.gpu", k_lib<OP_SEND, SCOPE_THREAD, RSM_GPU>);
		run("send.warp.gpu", k_lib<OP_SEND, SCOPE_WARP, RSM_GPU>);
		run("recv.thread.gpu", k_lib<OP_RECV, SCOPE_THREAD, RSM_GPU>);
		run("recv.warp.gpu", k_lib<OP_RECV, SCOPE_WARP, RSM_GPU>);
		free_qps(s);
	}
	{
		qp_set s = make_qps(T, 256, h_uar, true);
		auto run = [&](const char *name, const char *ref, int div, auto kern) {
			if (selected(name))
				res.push_back({name, ref, R.measure([&](int it) { kern<<<grid, block>>>(s.d_qps, div, it); }, T)});
		};
		run("send.thread.excl", "raw.thread+db.gpu", 1, k_lib<OP_SEND, SCOPE_THREAD, RSM_EXCL>);
		run("send.warp.excl", "raw.thread", 32, k_lib<OP_SEND, SCOPE_WARP, RSM_EXCL>);
		run("recv.thread.excl", "raw.thread+db.gpu", 1, k_lib<OP_RECV, SCOPE_THREAD, RSM_EXCL>);
		run("recv.warp.excl", "raw.thread", 32, k_lib<OP_RECV, SCOPE_WARP, RSM_EXCL>);
		free_qps(s);
	}
	/* One QP per thread (exclusive), one per warp (warp scope), batched low level, per block. */
	{
		qp_set s = make_qps(T, 256, h_uar);
		auto run = [&](const char *name, const char *ref, int div, auto kern) {
			if (selected(name))
				res.push_back({name, ref, R.measure([&](int it) { kern<<<grid, block>>>(s.d_qps, div, it); }, T)});
		};
		run("put.thread.excl", "raw.thread+db.gpu", 1, k_lib<OP_PUT, SCOPE_THREAD, RSM_EXCL>);
		run("p.thread.excl", "raw.thread+db.gpu", 1, k_lib<OP_P, SCOPE_THREAD, RSM_EXCL>);
		run("put_signal.thread.excl", "raw.thread+db.gpu", 1, k_lib<OP_PUT_SIGNAL, SCOPE_THREAD, RSM_EXCL>);
		run("put.warp.excl", "raw.thread", 32, k_lib<OP_PUT, SCOPE_WARP, RSM_EXCL>);
		run("p.warp.excl", "raw.thread", 32, k_lib<OP_P, SCOPE_WARP, RSM_EXCL>);
		run("put_signal.warp.excl", "raw.thread", 32, k_lib<OP_PUT_SIGNAL, SCOPE_WARP, RSM_EXCL>);
		if (selected("ll.thread.b1"))
			res.push_back({"ll.thread.b1", "raw.thread+db.gpu",
				       R.measure([&](int it) { k_ll_thread<1><<<grid, block>>>(s.d_qps, it); }, T)});
		if (selected("ll.thread.b32"))
			res.push_back({"ll.thread.b32", "raw.thread",
				       R.measure([&](int it) { k_ll_thread<32><<<grid, block>>>(s.d_qps, it * 32); }, T * 32.0)});
		if (selected("ll.block"))
			res.push_back({"ll.block", "raw.thread",
				       R.measure([&](int it) { k_ll_block<<<grid, block>>>(s.d_qps, it); }, T)});
		free_qps(s);
	}
	/* Plain references. */
	{
		unsigned long long *ctr, *ctrs;
		uint8_t *ring, *rings;
		CK(cudaMalloc(&ctr, 8));
		CK(cudaMemset(ctr, 0, 8));
		CK(cudaMalloc(&ctrs, (size_t)T * 8));
		CK(cudaMemset(ctrs, 0, (size_t)T * 8));
		CK(cudaMalloc(&ring, 32768 * 64));
		CK(cudaMalloc(&rings, (size_t)T * 256 * 64));
		uint64_t *d_uar;
		CK(cudaHostGetDevicePointer((void **)&d_uar, h_uar, 0));
		uint64_t *db = (uint64_t *)((uint8_t *)d_uar + (size_t)T * 4096 + 0x800);
		/* A reference runs when it is selected or when a variant measured above compares with it. */
		auto needed = [&](const char *name) {
			if (selected(name))
				return true;
			for (const result &r : res)
				if (r.ref == name)
					return true;
			return false;
		};
		auto shared = [&](const char *name, auto kern) {
			if (needed(name))
				res.push_back({name, "", R.measure([&](int it) { kern<<<grid, block>>>(ctr, ring, 32767, db, it); }, T)});
		};
		auto thread = [&](const char *name, auto kern) {
			if (needed(name))
				res.push_back({name, "", R.measure([&](int it) { kern<<<grid, block>>>(ctrs, rings, 255, d_uar, it); }, T)});
		};
		shared("raw.shared", k_raw_shared<DB_NONE>);
		shared("raw.shared+db.gpu", k_raw_shared<DB_GPU>);
		shared("raw.shared+db.sys", k_raw_shared<DB_SYS>);
		thread("raw.thread", k_raw_thread<DB_NONE, false>);
		thread("raw.thread+db.gpu", k_raw_thread<DB_GPU, false>);
		shared("extra: shared+db.gpu volatile", k_raw_shared<DB_GPU_VOLATILE>);
		thread("extra: thread, index in reg", k_raw_thread<DB_NONE, true>);
		thread("extra: thread+db.gpu, reg idx", k_raw_thread<DB_GPU, true>);
		cudaFree(ctr);
		cudaFree(ctrs);
		cudaFree(ring);
		cudaFree(rings);
	}
	CK(cudaFreeHost(h_uar));

	printf("\n== geometry %d block(s) x %d threads ==\n", g.blocks, g.threads);
	printf("%-30s %11s %9s %11s %10s %6s | %-18s %8s %9s %8s %10s %8s\n", "variant", "Mops/s", "ns/op", "ns/op/thr",
	       "target", "", "raw ref", "ratio", "DOCA ratio", "our/DOCA", "DOCA Mops", "abs");
	std::vector<std::string> verdicts;
	for (const result &r : res) {
		double raw = 0;
		for (const result &x : res)
			if (!r.ref.empty() && x.name == r.ref)
				raw = x.mops;
		const double ratio = raw > 0 ? r.mops / raw : 0;
		const double av = anchor_value(r.name.c_str(), col);
		const double araw = r.ref.empty() ? 0 : anchor_value(r.ref.c_str(), col);
		const double aratio = (av > 0 && araw > 0) ? av / araw : 0;
		char rs[32] = "-", ars[32] = "-", ors[32] = "-", avs[32] = "-", abs_[32] = "-";
		if (av > 0) {
			snprintf(avs, sizeof(avs), "%.2f", av);
			snprintf(abs_, sizeof(abs_), "%.2fx", r.mops / av);
		}
		if (ratio > 0)
			snprintf(rs, sizeof(rs), "%.4f", ratio);
		if (aratio > 0)
			snprintf(ars, sizeof(ars), "%.4f", aratio);
		if (ratio > 0 && aratio > 0)
			snprintf(ors, sizeof(ors), "%.2fx", ratio / aratio);
		const double tv = target_value(r.name.c_str(), col);
		char ts[32] = "-", tok[16] = "";
		if (tv > 0) {
			snprintf(ts, sizeof(ts), "%.1f", tv);
			snprintf(tok, sizeof(tok), "%s", r.mops >= tv ? "ok" : "MISS");
			char line[200];
			snprintf(line, sizeof(line), "TARGET %-14s %3dx%-4d %10.2f Mops/s  target %8.1f  %5.3fx  %s", r.name.c_str(),
				 g.blocks, g.threads, r.mops, tv, r.mops / tv, tok);
			verdicts.push_back(line);
		}
		/* ns/op: aggregate (1 / rate); ns/op/thr: as seen by one posting thread (threads / rate);
		 * target: absolute Mops/s to reach; after the bar, diagnostics: the ratio to the plain
		 * reference of this run against DOCA's ratio, DOCA's own figure and ours / that. */
		printf("%-30s %11.3f %9.3f %11.1f %10s %6s | %-18s %8s %9s %8s %10s %8s\n", r.name.c_str(), r.mops,
		       1e3 / r.mops, 1e3 * T / r.mops, ts, tok, r.ref.empty() ? "-" : r.ref.c_str(), rs, ars, ors, avs,
		       abs_);
	}
	for (const std::string &v : verdicts)
		printf("%s\n", v.c_str());
}

/* Prints the doorbell cost breakdown at one geometry: each row adds one piece to raw.thread. */
static void run_probe(runner &R, const geom &g)
{
	typedef void (*probe_fn)(uint8_t *, uint32_t, uint64_t *, uint32_t *, int);
	static const probe_fn kern[PR_COUNT] = {
		k_probe<PR_PLAIN>,	 k_probe<PR_CS>,	  k_probe<PR_SC_VOL>,	   k_probe<PR_REL_VOL>,
		k_probe<PR_REL_MMIO>,	 k_probe<PR_ACQREL_MMIO>, k_probe<PR_SYS_MMIO>,	   k_probe<PR_REL_RLXSYS>,
		k_probe<PR_DB_DBR_DB>, k_probe<PR_DBR_DB>,	  k_probe<PR_F_DBR_F_DB>, k_probe<PR_MEMIDX>, k_probe<PR_MEMIDX_DB>,
	};
	const int T = g.blocks * g.threads;
	uint8_t *h_uar = nullptr, *rings = nullptr;
	uint32_t *dbrs = nullptr;
	uint64_t *d_uar = nullptr;
	CK(cudaHostAlloc((void **)&h_uar, (size_t)T * 4096, cudaHostAllocMapped | cudaHostAllocPortable));
	CK(cudaHostGetDevicePointer((void **)&d_uar, h_uar, 0));
	CK(cudaMalloc(&rings, (size_t)T * 256 * 64));
	CK(cudaMalloc(&dbrs, (size_t)T * 8));
	printf("\n== doorbell cost breakdown, %d block(s) x %d threads, a ring and a doorbell page per thread ==\n",
	       g.blocks, g.threads);
	printf("%-36s %12s %11s\n", "per op", "Mops/s", "ns/op/thr");
	for (int v = 0; v < PR_COUNT; v++) {
		const double m = R.measure(
			[&](int it) { kern[v]<<<g.blocks, g.threads>>>(rings, 255, d_uar, dbrs, it); }, T);
		printf("%-36s %12.3f %11.1f\n", probe_name[v], m, 1e3 * T / m);
	}
	static const probe_fn bkern[PB_COUNT] = {k_probe_block<PB_NONE>, k_probe_block<PB_ONE_FENCE>,
						  k_probe_block<PB_F_DBR_F_DB>, k_probe_block<PB_F_DB_DBR_F_DB>};
	printf("-- the ll.block shape: a ring per block, %d WQEs per doorbell (compare with ll.block) --\n", g.threads);
	for (int v = 0; v < PB_COUNT; v++) {
		const double m = R.measure(
			[&](int it) { bkern[v]<<<g.blocks, g.threads>>>(rings, 255, d_uar, dbrs, it); }, T);
		printf("%-36s %12.3f %11.1f\n", probe_block_name[v], m, 1e3 * T / m);
	}
	cudaFree(rings);
	cudaFree(dbrs);
	CK(cudaFreeHost(h_uar));
}

int main(int argc, char **argv)
{
	runner R;
	std::vector<geom> geoms;
	bool probe = false, main_table = true;
	const char *label = "default build";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			R.runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--min-ms") && i + 1 < argc)
			R.min_ms = atof(argv[++i]);
		else if (!strcmp(argv[i], "--probe"))
			probe = true;
		else if (!strcmp(argv[i], "--label") && i + 1 < argc)
			label = argv[++i];
		else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			std::string list = argv[++i];
			for (size_t at = 0; at <= list.size();) {
				size_t comma = list.find(',', at);
				if (comma == std::string::npos)
					comma = list.size();
				if (comma > at)
					only.push_back(list.substr(at, comma - at));
				at = comma + 1;
			}
		}
		else if (!strcmp(argv[i], "--probe-only"))
			probe = true, main_table = false;
		else if (!strcmp(argv[i], "--geom") && i + 1 < argc) {
			geom g;
			if (sscanf(argv[++i], "%dx%d", &g.blocks, &g.threads) != 2 || g.threads % 32 != 0) {
				fprintf(stderr, "bad --geom %s (BLOCKSxTHREADS, threads a multiple of 32)\n", argv[i]);
				return 2;
			}
			geoms.push_back(g);
		} else {
			fprintf(stderr, "usage: %s [--runs N] [--min-ms MS] [--geom BxT]... [--only NAME,...] [--label L] [--probe|--probe-only]\n",
				argv[0]);
			return 2;
		}
	}
	if (geoms.empty())
		geoms = {{1, 32}, {1, 256}, {132, 256}};
	int dev = 0;
	cudaDeviceProp prop;
	CK(cudaGetDevice(&dev));
	CK(cudaGetDeviceProperties(&prop, dev));
	printf("post_rate [%s]: %s, CUDA runtime %d, median of %d runs >= %.1f ms; ops = calls (put_signal = 2 WQEs)\n",
	       label, prop.name, CUDART_VERSION, R.runs, R.min_ms);
	CK(cudaEventCreate(&R.a));
	CK(cudaEventCreate(&R.b));
	for (const geom &g : geoms) {
		if (main_table)
			run_geom(R, g);
		if (probe)
			run_probe(R, g);
	}
	return 0;
}
