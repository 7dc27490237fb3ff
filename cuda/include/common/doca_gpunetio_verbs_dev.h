/*
 * GPUNetIO verbs device-visible structures: the QP and CQ descriptors the host exports to the GPU,
 * the 64-byte WQE view, memory addresses with keys and the masked-atomic operand layouts.
 *
 * Plain C (C11) and C++: the Go host code includes this file through cgo to fill the structs.
 * Layouts are fixed (device-api.md section 3): QP 296 bytes, CQ 64 bytes, WQE 64 bytes.
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

typedef struct {
	uint32_t add_data;
	uint32_t field_boundary;
	uint64_t reserved;
} __attribute__((packed)) doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t;

typedef struct {
	uint64_t add_data;
	uint64_t field_boundary;
} __attribute__((packed)) doca_gpu_dev_verbs_atomic_64_masked_fa_seg_t;

typedef struct {
	uint32_t swap_data;
	uint32_t compare_data;
	uint32_t swap_mask;
	uint32_t compare_mask;
} __attribute__((packed)) doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t;

typedef struct {
	uint64_t swap;
	uint64_t compare;
} __attribute__((packed)) doca_gpu_dev_verbs_atomic_64_masked_cs_seg_t;

#if defined(__cplusplus) && __cplusplus >= 201103L
static_assert(sizeof(doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t) == 16, "32-bit masked FA segment must be 16 bytes");
static_assert(sizeof(doca_gpu_dev_verbs_atomic_64_masked_fa_seg_t) == 16, "64-bit masked FA segment must be 16 bytes");
static_assert(sizeof(doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t) == 16, "32-bit masked CS segment must be 16 bytes");
static_assert(sizeof(doca_gpu_dev_verbs_atomic_64_masked_cs_seg_t) == 16, "64-bit masked CS segment must be 16 bytes");
#endif

/* One 64-byte send WQE building block, viewed per WQE kind. Builders need 16-byte alignment. */
struct doca_gpu_dev_verbs_wqe {
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
} __attribute__((aligned(8)));

/* Device view of a completion queue (64 bytes). */
struct doca_gpu_dev_verbs_cq {
	uint8_t *cqe_daddr;
	uint32_t cq_num;
	uint32_t cqe_num;
	__be32 *dbrec;
	uint64_t cqe_ci;
	uint32_t cqe_mask;
	uint8_t cqe_size;
	uint8_t reserved1[3];
	uint64_t cqe_rsvd;
	enum doca_gpu_dev_verbs_mem_type mem_type;
	uint8_t reserved2[12];
} __attribute__((aligned(8), packed));

/* Device view of a send queue with its embedded send CQ (296 bytes). */
struct doca_gpu_dev_verbs_qp {
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
	uint8_t reserved1[8];
	uint8_t reserved2[64];
	struct doca_gpu_dev_verbs_cq cq_sq;
	uint8_t reserved3[64];
	enum doca_gpu_dev_verbs_nic_handler nic_handler;
	enum doca_gpu_dev_verbs_mem_type mem_type;
} __attribute__((aligned(8), packed));

#ifdef __cplusplus
}
#endif

#endif /* DOCA_GPUNETIO_VERBS_DEV_H */
