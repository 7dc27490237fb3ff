/*
 * GPUNetIO verbs device-visible structures: the QP and CQ descriptors the host exports to the GPU,
 * the 64-byte WQE view, memory addresses with keys and the masked-atomic operand layouts.
 *
 * Plain C (C11) and C++: the Go host code includes this file through cgo to fill the structs.
 * Layouts are fixed: CQ 64 bytes and WQE 64 bytes as in DOCA GPUNetIO 2.0; QP 392 bytes, DOCA
 * GPUNetIO 2.0's send half with the DOCA SDK's receive-queue fields (see the struct).
 */
#ifndef DOCA_GPUNETIO_VERBS_DEV_H
#define DOCA_GPUNETIO_VERBS_DEV_H

#include "doca_gpunetio_verbs_def.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A WQE index whose completion can be waited for. */
typedef uint64_t doca_gpu_dev_verbs_ticket_t;

/* A virtual address with its memory key; key is already big-endian and is stored verbatim. */
struct doca_gpu_dev_verbs_addr {
	uint64_t addr;
	__be32 key;
};

typedef struct __attribute__((packed)) {
	uint32_t add_data;
	uint32_t field_boundary;
	uint64_t reserved;
} doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t;

typedef struct __attribute__((packed)) {
	uint64_t add_data;
	uint64_t field_boundary;
} doca_gpu_dev_verbs_atomic_64_masked_fa_seg_t;

typedef struct __attribute__((packed)) {
	uint32_t swap_data;
	uint32_t compare_data;
	uint32_t swap_mask;
	uint32_t compare_mask;
} doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t;

typedef struct __attribute__((packed)) {
	uint64_t swap;
	uint64_t compare;
} doca_gpu_dev_verbs_atomic_64_masked_cs_seg_t;

#if defined(__cplusplus) && __cplusplus >= 201103L
static_assert(sizeof(doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t) == 16, "32-bit masked FA segment must be 16 bytes");
static_assert(sizeof(doca_gpu_dev_verbs_atomic_64_masked_fa_seg_t) == 16, "64-bit masked FA segment must be 16 bytes");
static_assert(sizeof(doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t) == 16, "32-bit masked CS segment must be 16 bytes");
static_assert(sizeof(doca_gpu_dev_verbs_atomic_64_masked_cs_seg_t) == 16, "64-bit masked CS segment must be 16 bytes");
#endif

/* One 64-byte send WQE building block, viewed per WQE kind. Builders need 16-byte alignment. */
#if !defined(__CUDACC_RTC__)
struct __attribute__((aligned(8))) doca_gpu_dev_verbs_wqe {
	union {
		uint8_t inl_data[64];
		struct {
			struct doca_gpunetio_ib_mlx5_wqe_data_seg dseg0;
			struct doca_gpunetio_ib_mlx5_wqe_data_seg dseg1;
			struct doca_gpunetio_ib_mlx5_wqe_data_seg dseg2;
			struct doca_gpunetio_ib_mlx5_wqe_data_seg dseg3;
		};
		struct {
			struct doca_gpunetio_ib_mlx5_wqe_ctrl_seg rw_cseg;
			struct doca_gpunetio_ib_mlx5_wqe_raddr_seg rw_rseg;
			struct doca_gpunetio_ib_mlx5_wqe_data_seg rw_dseg0;
			struct doca_gpunetio_ib_mlx5_wqe_data_seg rw_dseg1;
		};
		struct {
			struct doca_gpunetio_ib_mlx5_wqe_ctrl_seg at_cseg;
			struct doca_gpunetio_ib_mlx5_wqe_raddr_seg at_rseg;
			struct doca_gpunetio_ib_mlx5_wqe_atomic_seg at_seg;
			struct doca_gpunetio_ib_mlx5_wqe_data_seg at_dseg;
		};
		struct {
			struct doca_gpunetio_ib_mlx5_wqe_ctrl_seg snd_cseg;
			struct doca_gpunetio_ib_mlx5_wqe_data_seg snd_dseg0;
			struct doca_gpunetio_ib_mlx5_wqe_data_seg snd_dseg1;
			struct doca_gpunetio_ib_mlx5_wqe_data_seg snd_dseg2;
		};
		struct {
			struct doca_gpunetio_ib_mlx5_wqe_ctrl_seg wait_cseg;
			struct doca_gpunetio_ib_mlx5_wqe_wait_seg wait_dseg;
			struct doca_gpunetio_ib_mlx5_wqe_data_seg padding0;
			struct doca_gpunetio_ib_mlx5_wqe_data_seg padding1;
		};
	};
};
#else
/* NVRTC: one anonymous union per 16-byte quarter keeps every segment name at its offset; the
 * whole-slot alias inl_data[64] needs an anonymous struct and is not there (use (uint8_t *)wqe). */
struct __attribute__((aligned(8))) doca_gpu_dev_verbs_wqe {
	union {
		struct doca_gpunetio_ib_mlx5_wqe_data_seg dseg0;
		struct doca_gpunetio_ib_mlx5_wqe_ctrl_seg rw_cseg;
		struct doca_gpunetio_ib_mlx5_wqe_ctrl_seg at_cseg;
		struct doca_gpunetio_ib_mlx5_wqe_ctrl_seg snd_cseg;
		struct doca_gpunetio_ib_mlx5_wqe_ctrl_seg wait_cseg;
	};
	union {
		struct doca_gpunetio_ib_mlx5_wqe_data_seg dseg1;
		struct doca_gpunetio_ib_mlx5_wqe_raddr_seg rw_rseg;
		struct doca_gpunetio_ib_mlx5_wqe_raddr_seg at_rseg;
		struct doca_gpunetio_ib_mlx5_wqe_data_seg snd_dseg0;
		struct doca_gpunetio_ib_mlx5_wqe_wait_seg wait_dseg;
	};
	union {
		struct doca_gpunetio_ib_mlx5_wqe_data_seg dseg2;
		struct doca_gpunetio_ib_mlx5_wqe_data_seg rw_dseg0;
		struct doca_gpunetio_ib_mlx5_wqe_atomic_seg at_seg;
		struct doca_gpunetio_ib_mlx5_wqe_data_seg snd_dseg1;
		struct doca_gpunetio_ib_mlx5_wqe_data_seg padding0;
	};
	union {
		struct doca_gpunetio_ib_mlx5_wqe_data_seg dseg3;
		struct doca_gpunetio_ib_mlx5_wqe_data_seg rw_dseg1;
		struct doca_gpunetio_ib_mlx5_wqe_data_seg at_dseg;
		struct doca_gpunetio_ib_mlx5_wqe_data_seg snd_dseg2;
		struct doca_gpunetio_ib_mlx5_wqe_data_seg padding1;
	};
};
#endif

/* ---- Receive-side CQE views (DOCA SDK) ---------------------------------------------------------- */

/* rdma-core's CQE and data-segment types, which the SDK's two-sided signatures take: defined by
 * <infiniband/mlx5dv.h> or by the subset in doca_gpunetio_verbs_def.h. The same 64 and 16 bytes
 * are struct doca_gpunetio_ib_mlx5_cqe64 and struct doca_gpunetio_ib_mlx5_wqe_data_seg, and the
 * helpers below read them through those. */
struct mlx5_cqe64;
struct mlx5_wqe_data_seg;

/* A 64-byte CQE by the SDK 3.4 name (C++ code names it without the struct keyword). */
typedef struct doca_gpunetio_ib_mlx5_cqe64 doca_gpu_dev_verbs_cqe64;

/* A receive CQE whose payload (at most 32 bytes) the NIC scattered into the CQE itself
 * (doca_gpu_dev_verbs_cqe_is_inline): bytes 0..31 hold the data, 32..63 are the usual CQE tail. */
struct __attribute__((aligned(8))) doca_gpu_dev_verbs_cqe64_inline {
	uint8_t inl_data[32];
	__be32 srqn_uidx;
	__be32 imm_inval_pkey;
	uint8_t app;
	uint8_t app_op;
	__be16 app_info;
	__be32 byte_cnt;
	__be64 timestamp;
	__be32 sop_drop_qpn;
	__be16 wqe_counter;
	uint8_t signature;
	uint8_t op_own;
};

/* An error CQE by the SDK's name (the layout of struct doca_gpunetio_ib_mlx5_err_cqe_ex). */
struct __attribute__((aligned(4))) mlx5_err_cqe_ex {
	uint8_t rsvd0[32];
	__be32 srqn;
	uint8_t rsvd1[16];
	uint8_t hw_err_synd;
	uint8_t hw_synd_type;
	uint8_t vendor_err_synd;
	uint8_t syndrome;
	__be32 s_wqe_opcode_qpn;
	__be16 wqe_counter;
	uint8_t signature;
	uint8_t op_own;
};

/* ---- Extensions (not in DOCA; cuda/README.md, "Extensions") ------------------------------------ */

/* What stopped a QP's device code: gdaki_dev_qp_error.status. */
enum gdaki_dev_qp_error_status {
	GDAKI_DEV_QP_OK = 0,          /* nothing recorded */
	GDAKI_DEV_QP_ERR_CQE = 1,     /* an error CQE (REQ_ERR or RESP_ERR): the syndromes say why */
	GDAKI_DEV_QP_ERR_TIMEOUT = 2, /* a poll ran past the QP's poll_timeout */
};

/* gdaki_dev_qp_error.status while the first failure's record is being written (a few stores). */
#define GDAKI_DEV_QP_ERROR_BUSY 0x80000000u

/* The first failure that device code saw on a QP; written once, by the first poller that sees an
 * error CQE or times out, and kept until the host resets the QP's tracking. 24 bytes. */
struct gdaki_dev_qp_error {
	uint32_t status;          /* enum gdaki_dev_qp_error_status */
	uint8_t syndrome;         /* CQE syndrome (byte 55; 0x13 remote access, 0x15 retry exceeded, ...) */
	uint8_t vendor_syndrome;  /* CQE byte 54 */
	uint8_t hw_syndrome;      /* CQE byte 52 */
	uint8_t hw_syndrome_type; /* CQE byte 53 */
	uint8_t cqe_opcode;       /* op_own >> 4: 13 REQ_ERR, 14 RESP_ERR; 0 for a timeout */
	uint8_t wqe_opcode;       /* opcode of the failed WQE (CQE byte 56) */
	uint16_t wqe_counter;     /* the CQE's 16-bit WQE counter, native order */
	uint32_t reserved;
	uint64_t wqe_index; /* the 64-bit WQE index whose poll saw the error or timed out */
};

/* The extension area at the end of struct doca_gpu_dev_verbs_qp (64 bytes, after the SDK's
 * fields). The host writes poll_timeout between kernels (device code reads it through the
 * read-only cache); error belongs to device code. */
struct gdaki_dev_qp_ext {
	struct gdaki_dev_qp_error error;
	uint64_t poll_timeout; /* 0: polls wait without bound; else GPU clock ticks (clock64) */
	uint8_t reserved[32];
};

/* Bits of doca_gpu_dev_verbs_cq.gdaki_flags (reserved1[0]). */
enum {
	/* The CQ is embedded in a doca_gpu_dev_verbs_qp, whose gdaki extension area polls use: the
	 * cq_sq, or the cq_rq when GDAKI_DEV_CQ_FLAG_RQ is set too. The host export sets it; a CQ
	 * without it polls exactly as DOCA's (no record, no bound). */
	GDAKI_DEV_CQ_FLAG_IN_QP = 1 << 0,
	/* With GDAKI_DEV_CQ_FLAG_IN_QP: the CQ is the QP's cq_rq (receive completions). */
	GDAKI_DEV_CQ_FLAG_RQ = 1 << 1,
};

/* Device view of a completion queue (64 bytes). */
struct __attribute__((aligned(8), packed)) doca_gpu_dev_verbs_cq {
	uint8_t *cqe_daddr;
	uint32_t cq_num;
	uint32_t cqe_num;
	__be32 *dbrec;
	uint64_t cqe_ci;
	uint32_t cqe_mask;
	uint8_t cqe_size;
	union {
		uint8_t reserved1[3];
		uint8_t gdaki_flags; /* extension: GDAKI_DEV_CQ_FLAG_* */
	};
	uint64_t cqe_rsvd;
	enum doca_gpu_dev_verbs_mem_type mem_type;
	uint8_t reserved2[12];
};

/* Device view of a QP: its send queue, its receive queue and both CQs (392 bytes).
 *
 * Bytes 0..87 and cq_sq at 160 are DOCA GPUNetIO 2.0's layout. The receive-queue block (88..159)
 * has the names, types and offsets of the DOCA SDK's; cq_rq sits at 224 (where the open-source
 * layout reserves 64 bytes), nic_handler and mem_type stay at 288 and 292, and the SDK's need_mcst
 * and last_*_wqe_idx follow. The gdaki extension area closes the struct (cuda/README.md,
 * "Device QP layout"). */
struct __attribute__((aligned(8), packed)) doca_gpu_dev_verbs_qp {
	uint64_t sq_rsvd_index;
	uint64_t sq_ready_index;
	uint64_t sq_wqe_pi;
	uint32_t sq_num;
	uint32_t sq_num_shift8;
	uint32_t sq_num_shift8_be;
	uint32_t sq_num_shift8_be_1ds;
	uint32_t sq_num_shift8_be_2ds;
	uint32_t sq_num_shift8_be_3ds;
	uint32_t sq_num_shift8_be_4ds;
	uint32_t sq_num_shift8_be_5ds;
	int sq_lock;
	uint16_t sq_wqe_num;
	uint16_t sq_wqe_mask;
	uint8_t *sq_wqe_daddr;
	__be32 *sq_dbrec;
	uint64_t *sq_db;

	/* Receive queue: 16-byte WQEs (one scatter entry each), no UAR doorbell. */
	uint32_t rq_num;         /* the QP number */
	uint8_t rq_reserved0[4];
	uint64_t rq_wqe_pi;      /* producer index the doorbell record holds (64-bit, never wraps) */
	uint32_t rq_wqe_num;     /* entries, a power of two, at most 32768 */
	uint32_t rq_wqe_mask;    /* rq_wqe_num - 1 */
	uint8_t *rq_wqe_daddr;   /* the ring (GPU-visible address) */
	__be32 *rq_dbrec;        /* doorbell-record word 0 (receive counter), GPU-writable */
	uint32_t rcv_wqe_size;   /* 16, the stride in bytes (device code uses the fixed shift) */
	uint8_t rq_reserved1[4];
	uint64_t rq_rsvd_index;  /* receives reserved */
	uint64_t rq_ready_index; /* receives written and published */
	int rq_lock;             /* spin lock of the RQ submit (CTA/GPU sharing) */
	uint8_t rq_reserved2[4];

	struct doca_gpu_dev_verbs_cq cq_sq;
	struct doca_gpu_dev_verbs_cq cq_rq; /* the receive CQ, dedicated to this RQ */
	enum doca_gpu_dev_verbs_nic_handler nic_handler;
	enum doca_gpu_dev_verbs_mem_type mem_type;
	union {
		bool need_mcst; /* GPUDirect RDMA writes need a DUMP (MCST) to be visible in order */
		bool need_dump; /* the earlier SDK name of need_mcst */
	};
	uint8_t reserved_mcst[7]; /* zero: SDK code loads need_mcst as a 4-byte word */
	uint64_t last_get_wqe_idx;
	uint64_t last_dump_wqe_idx;
	uint64_t last_recv_wqe_idx;
	struct gdaki_dev_qp_ext gdaki; /* extension: error record and poll bound */
};

/* ---- Layout checks ---------------------------------------------------------------------------- */
/* Every size, alignment and offset that kernels, the NIC or the Go host code rely on, checked by
 * each compiler that includes this header (nvcc, NVRTC, g++, and gcc for the cgo host code). */
#if DOCA_GPUNETIO_PRIV_HAVE_STATIC_ASSERT
#define DOCA_GPUNETIO_PRIV_CHECK_SIZE(s, n) DOCA_GPUNETIO_PRIV_STATIC_ASSERT(sizeof(struct s) == (n), "sizeof(struct " #s ")")
#define DOCA_GPUNETIO_PRIV_CHECK_ALIGN(s, n) \
	DOCA_GPUNETIO_PRIV_STATIC_ASSERT(DOCA_GPUNETIO_PRIV_ALIGNOF(struct s) == (n), "alignof(struct " #s ")")
#if DOCA_GPUNETIO_PRIV_CONST_OFFSETOF
#define DOCA_GPUNETIO_PRIV_CHECK_FIELD(s, f, off, n)                                                     \
	DOCA_GPUNETIO_PRIV_STATIC_ASSERT(DOCA_GPUNETIO_PRIV_OFFSETOF(struct s, f) == (off) &&            \
						 sizeof(((struct s *)0)->f) == (n),                      \
					 "offset or size of " #s "." #f)
#else
#define DOCA_GPUNETIO_PRIV_CHECK_FIELD(s, f, off, n) \
	DOCA_GPUNETIO_PRIV_STATIC_ASSERT(sizeof(((struct s *)0)->f) == (n), "size of " #s "." #f)
#endif

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpu_dev_verbs_qp, 392);
DOCA_GPUNETIO_PRIV_CHECK_ALIGN(doca_gpu_dev_verbs_qp, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_rsvd_index, 0, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_ready_index, 8, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_wqe_pi, 16, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_num, 24, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_num_shift8, 28, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_num_shift8_be, 32, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_num_shift8_be_1ds, 36, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_num_shift8_be_2ds, 40, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_num_shift8_be_3ds, 44, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_num_shift8_be_4ds, 48, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_num_shift8_be_5ds, 52, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_lock, 56, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_wqe_num, 60, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_wqe_mask, 62, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_wqe_daddr, 64, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_dbrec, 72, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, sq_db, 80, 8);
/* The receive-queue block: the DOCA SDK's offsets, sizes and types. */
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, rq_num, 88, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, rq_reserved0, 92, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, rq_wqe_pi, 96, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, rq_wqe_num, 104, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, rq_wqe_mask, 108, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, rq_wqe_daddr, 112, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, rq_dbrec, 120, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, rcv_wqe_size, 128, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, rq_reserved1, 132, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, rq_rsvd_index, 136, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, rq_ready_index, 144, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, rq_lock, 152, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, rq_reserved2, 156, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, cq_sq, 160, 64);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, cq_rq, 224, 64);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, nic_handler, 288, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, mem_type, 292, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, need_mcst, 296, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, need_dump, 296, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, reserved_mcst, 297, 7);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, last_get_wqe_idx, 304, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, last_dump_wqe_idx, 312, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, last_recv_wqe_idx, 320, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_qp, gdaki, 328, 64);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cq, gdaki_flags, 37, 1);
DOCA_GPUNETIO_PRIV_CHECK_SIZE(gdaki_dev_qp_ext, 64);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(gdaki_dev_qp_ext, error, 0, 24);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(gdaki_dev_qp_ext, poll_timeout, 24, 8);
DOCA_GPUNETIO_PRIV_CHECK_SIZE(gdaki_dev_qp_error, 24);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(gdaki_dev_qp_error, status, 0, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(gdaki_dev_qp_error, syndrome, 4, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(gdaki_dev_qp_error, vendor_syndrome, 5, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(gdaki_dev_qp_error, hw_syndrome, 6, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(gdaki_dev_qp_error, hw_syndrome_type, 7, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(gdaki_dev_qp_error, cqe_opcode, 8, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(gdaki_dev_qp_error, wqe_opcode, 9, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(gdaki_dev_qp_error, wqe_counter, 10, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(gdaki_dev_qp_error, wqe_index, 16, 8);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpu_dev_verbs_cq, 64);
DOCA_GPUNETIO_PRIV_CHECK_ALIGN(doca_gpu_dev_verbs_cq, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cq, cqe_daddr, 0, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cq, cq_num, 8, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cq, cqe_num, 12, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cq, dbrec, 16, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cq, cqe_ci, 24, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cq, cqe_mask, 32, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cq, cqe_size, 36, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cq, reserved1, 37, 3);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cq, cqe_rsvd, 40, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cq, mem_type, 48, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cq, reserved2, 52, 12);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpu_dev_verbs_wqe, 64);
DOCA_GPUNETIO_PRIV_CHECK_ALIGN(doca_gpu_dev_verbs_wqe, 8);
#if !defined(__CUDACC_RTC__)
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, inl_data, 0, 64);
#endif
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, dseg0, 0, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, dseg1, 16, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, dseg2, 32, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, dseg3, 48, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, rw_cseg, 0, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, rw_rseg, 16, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, rw_dseg0, 32, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, rw_dseg1, 48, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, at_cseg, 0, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, at_rseg, 16, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, at_seg, 32, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, at_dseg, 48, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, snd_cseg, 0, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, snd_dseg0, 16, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, snd_dseg1, 32, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, snd_dseg2, 48, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, wait_cseg, 0, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, wait_dseg, 16, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, padding0, 32, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe, padding1, 48, 16);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpu_dev_verbs_addr, 16);
DOCA_GPUNETIO_PRIV_CHECK_ALIGN(doca_gpu_dev_verbs_addr, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_addr, addr, 0, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_addr, key, 8, 4);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, 16);
DOCA_GPUNETIO_PRIV_CHECK_ALIGN(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, opmod_idx_opcode, 0, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, qpn_ds, 4, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, signature, 8, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, dci_stream_channel_id, 9, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, fm_ce_se, 11, 1);
#if !defined(__CUDACC_RTC__)
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, signature_fm_ce_se, 8, 4);
#endif
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, imm, 12, 4);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpunetio_ib_mlx5_wqe_data_seg, 16);
DOCA_GPUNETIO_PRIV_CHECK_ALIGN(doca_gpunetio_ib_mlx5_wqe_data_seg, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_data_seg, byte_count, 0, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_data_seg, lkey, 4, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_data_seg, addr, 8, 8);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpunetio_ib_mlx5_wqe_raddr_seg, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_raddr_seg, raddr, 0, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_raddr_seg, rkey, 8, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_raddr_seg, reserved, 12, 4);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpunetio_ib_mlx5_wqe_atomic_seg, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_atomic_seg, swap_add, 0, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_atomic_seg, compare, 8, 8);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpunetio_ib_mlx5_wqe_inl_data_seg, 4);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpunetio_ib_mlx5_wqe_wait_seg, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_wait_seg, resv, 0, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_wait_seg, max_index, 8, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_wqe_wait_seg, qpn_cqn, 12, 4);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpunetio_ib_mlx5_tm_cqe, 20);
DOCA_GPUNETIO_PRIV_CHECK_ALIGN(doca_gpunetio_ib_mlx5_tm_cqe, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_tm_cqe, success, 0, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_tm_cqe, hw_phase_cnt, 4, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_tm_cqe, rsvd0, 6, 12);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpunetio_ib_ibv_tmh, 16);
DOCA_GPUNETIO_PRIV_CHECK_ALIGN(doca_gpunetio_ib_ibv_tmh, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_ibv_tmh, opcode, 0, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_ibv_tmh, reserved, 1, 3);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_ibv_tmh, app_ctx, 4, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_ibv_tmh, tag, 8, 8);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpunetio_ib_mlx5_cqe64, 64);
DOCA_GPUNETIO_PRIV_CHECK_ALIGN(doca_gpunetio_ib_mlx5_cqe64, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, wqe_id, 2, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, ml_path, 17, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, slid, 22, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, flags_rqpn, 24, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, hds_ip_ext, 28, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, l4_hdr_type_etc, 29, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, vlan_info, 30, 2);
#if !defined(__CUDACC_RTC__)
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, tm_cqe, 0, 20);
#endif
#if !defined(__CUDACC_RTC__)
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, tmh, 0, 16);
#endif
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, srqn_uidx, 32, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, imm_inval_pkey, 36, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, app, 40, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, app_op, 41, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, app_info, 42, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, byte_cnt, 44, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, timestamp, 48, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, sop_drop_qpn, 56, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, wqe_counter, 60, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, signature, 62, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_cqe64, op_own, 63, 1);

/* The SDK family's segment names and the mlx5dv types (rdma-core's or the subset of
 * doca_gpunetio_verbs_def.h): the same bytes as the open-source segments. */
DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpu_dev_verbs_wqe_ctrl_seg, 16);
DOCA_GPUNETIO_PRIV_CHECK_ALIGN(doca_gpu_dev_verbs_wqe_ctrl_seg, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe_ctrl_seg, opmod_idx_opcode, 0, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe_ctrl_seg, qpn_ds, 4, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe_ctrl_seg, signature, 8, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe_ctrl_seg, rsvd, 9, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe_ctrl_seg, fm_ce_se, 11, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe_ctrl_seg, imm, 12, 4);
#if !defined(__CUDACC_RTC__)
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe_ctrl_seg, signature_fm_ce_se, 8, 4);
#endif
DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpu_dev_verbs_wqe_wait_seg, 16);
DOCA_GPUNETIO_PRIV_CHECK_ALIGN(doca_gpu_dev_verbs_wqe_wait_seg, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe_wait_seg, max_index, 8, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_wqe_wait_seg, qpn_cqn, 12, 4);
DOCA_GPUNETIO_PRIV_CHECK_SIZE(mlx5_cqe64, 64);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_cqe64, imm_inval_pkey, 36, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_cqe64, byte_cnt, 44, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_cqe64, wqe_counter, 60, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_cqe64, op_own, 63, 1);
DOCA_GPUNETIO_PRIV_CHECK_SIZE(mlx5_wqe_ctrl_seg, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_wqe_ctrl_seg, fm_ce_se, 11, 1);
DOCA_GPUNETIO_PRIV_CHECK_SIZE(mlx5_wqe_data_seg, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_wqe_data_seg, addr, 8, 8);
DOCA_GPUNETIO_PRIV_CHECK_SIZE(mlx5_wqe_raddr_seg, 16);
DOCA_GPUNETIO_PRIV_CHECK_SIZE(mlx5_wqe_atomic_seg, 16);
DOCA_GPUNETIO_PRIV_CHECK_SIZE(mlx5_wqe_inl_data_seg, 4);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpu_dev_verbs_cqe64_inline, 64);
DOCA_GPUNETIO_PRIV_CHECK_ALIGN(doca_gpu_dev_verbs_cqe64_inline, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cqe64_inline, inl_data, 0, 32);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cqe64_inline, srqn_uidx, 32, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cqe64_inline, imm_inval_pkey, 36, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cqe64_inline, app, 40, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cqe64_inline, app_op, 41, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cqe64_inline, app_info, 42, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cqe64_inline, byte_cnt, 44, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cqe64_inline, timestamp, 48, 8);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cqe64_inline, sop_drop_qpn, 56, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cqe64_inline, wqe_counter, 60, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cqe64_inline, signature, 62, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpu_dev_verbs_cqe64_inline, op_own, 63, 1);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(mlx5_err_cqe_ex, 64);
DOCA_GPUNETIO_PRIV_CHECK_ALIGN(mlx5_err_cqe_ex, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_err_cqe_ex, rsvd0, 0, 32);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_err_cqe_ex, srqn, 32, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_err_cqe_ex, rsvd1, 36, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_err_cqe_ex, hw_err_synd, 52, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_err_cqe_ex, hw_synd_type, 53, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_err_cqe_ex, vendor_err_synd, 54, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_err_cqe_ex, syndrome, 55, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_err_cqe_ex, s_wqe_opcode_qpn, 56, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_err_cqe_ex, wqe_counter, 60, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_err_cqe_ex, signature, 62, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(mlx5_err_cqe_ex, op_own, 63, 1);

DOCA_GPUNETIO_PRIV_CHECK_SIZE(doca_gpunetio_ib_mlx5_err_cqe_ex, 64);
DOCA_GPUNETIO_PRIV_CHECK_ALIGN(doca_gpunetio_ib_mlx5_err_cqe_ex, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, rsvd0, 0, 32);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, srqn, 32, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, rsvd1, 36, 16);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, hw_err_synd, 52, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, hw_synd_type, 53, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, vendor_err_synd, 54, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, syndrome, 55, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, s_wqe_opcode_qpn, 56, 4);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, wqe_counter, 60, 2);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, signature, 62, 1);
DOCA_GPUNETIO_PRIV_CHECK_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, op_own, 63, 1);

#undef DOCA_GPUNETIO_PRIV_CHECK_SIZE
#undef DOCA_GPUNETIO_PRIV_CHECK_ALIGN
#undef DOCA_GPUNETIO_PRIV_CHECK_FIELD
#endif /* DOCA_GPUNETIO_PRIV_HAVE_STATIC_ASSERT */

#ifdef __cplusplus
}
#endif

#endif /* DOCA_GPUNETIO_VERBS_DEV_H */
