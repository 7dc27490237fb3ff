/*
 * GPUNetIO verbs definitions shared by host and device code: version macros, utility macros,
 * constants, enums and the mlx5 descriptor segment layouts.
 *
 * Source-compatible with both DOCA GPUNetIO families (see cuda/README.md, "Two families"): the
 * open-source headers (DOCA_GPUNETIO_IB_MLX5_* names, struct doca_gpunetio_ib_mlx5_*) and the DOCA
 * SDK 3.2-3.4 headers (DOCA_GPUNETIO_MLX5_* names, struct doca_gpu_dev_verbs_wqe_ctrl_seg, the
 * mlx5dv types). As in the SDK, <infiniband/mlx5dv.h> comes with this file where rdma-core's
 * headers are installed (not under NVRTC, nor with GDAKI_DOCA_NO_MLX5DV); elsewhere this file
 * declares the mlx5dv subset the SDK API and its kernels use, with rdma-core's names and layouts.
 * Include <infiniband/mlx5dv.h> before this file or not at all. Plain C (C11) and C++. The
 * platform types come from doca_gpunetio_verbs_prim.h (the system headers, or NVRTC's own
 * declarations).
 *
 * Struct attributes stand before the struct name: NVRTC ignores a trailing
 * __attribute__((packed)). NVRTC also has no anonymous structs, so under __CUDACC_RTC__ the
 * three structs that use them (ctrl segment, CQE, WQE view) keep every size and offset but drop
 * the aliases that only an anonymous struct can express (see cuda/README.md, "NVRTC").
 */
#ifndef DOCA_GPUNETIO_VERBS_DEF_H
#define DOCA_GPUNETIO_VERBS_DEF_H

#include "doca_gpunetio_verbs_prim.h"

/* rdma-core's mlx5 definitions, as the SDK's doca_gpunetio_verbs_def.h includes them. */
#if !defined(__CUDACC_RTC__) && !defined(GDAKI_DOCA_NO_MLX5DV) && defined(__has_include)
#if __has_include(<infiniband/mlx5dv.h>)
#include <infiniband/mlx5dv.h>
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Versions ---------------------------------------------------------------------------- */
#define DOCA_GPUNETIO_VERSION_MAJOR 3
#define DOCA_GPUNETIO_VERSION_MINOR 0
#define DOCA_GPUNETIO_VERSION_PATCH 0
#define DOCA_GPUNETIO_VERSION_MAJOR_SHIFT 16
#define DOCA_GPUNETIO_VERSION_MINOR_SHIFT 8
#define DOCA_GPUNETIO_VERSION_PATCH_SHIFT 0
/* Internal: the packed version word of major.minor.patch. */
#define DOCA_GPUNETIO_PRIV_VERSION(major, minor, patch)                                                    \
	(((major) << DOCA_GPUNETIO_VERSION_MAJOR_SHIFT) | ((minor) << DOCA_GPUNETIO_VERSION_MINOR_SHIFT) | \
	 ((patch) << DOCA_GPUNETIO_VERSION_PATCH_SHIFT))
#define DOCA_GPUNETIO_VERSION                                                                \
	DOCA_GPUNETIO_PRIV_VERSION(DOCA_GPUNETIO_VERSION_MAJOR, DOCA_GPUNETIO_VERSION_MINOR, \
				   DOCA_GPUNETIO_VERSION_PATCH)
#define DOCA_GPUNETIO_DEVICE_CODE_VERSION DOCA_GPUNETIO_VERSION
#define DOCA_GPUNETIO_HOST_CODE_VERSION DOCA_GPUNETIO_VERSION

#define DOCA_GPUNETIO_MIN_COMPAT_DEVICE_CODE_VERSION_MAJOR 2
#define DOCA_GPUNETIO_MIN_COMPAT_DEVICE_CODE_VERSION_MINOR 0
#define DOCA_GPUNETIO_MIN_COMPAT_DEVICE_CODE_VERSION_PATCH 0
#define DOCA_GPUNETIO_MIN_COMPAT_DEVICE_CODE_VERSION                                   \
	DOCA_GPUNETIO_PRIV_VERSION(DOCA_GPUNETIO_MIN_COMPAT_DEVICE_CODE_VERSION_MAJOR, \
				   DOCA_GPUNETIO_MIN_COMPAT_DEVICE_CODE_VERSION_MINOR, \
				   DOCA_GPUNETIO_MIN_COMPAT_DEVICE_CODE_VERSION_PATCH)

/* The host-code minimum really is 0.2.0 in the reference. */
#define DOCA_GPUNETIO_MIN_COMPAT_HOST_CODE_VERSION_MAJOR 0
#define DOCA_GPUNETIO_MIN_COMPAT_HOST_CODE_VERSION_MINOR 2
#define DOCA_GPUNETIO_MIN_COMPAT_HOST_CODE_VERSION_PATCH 0
#define DOCA_GPUNETIO_MIN_COMPAT_HOST_CODE_VERSION                                   \
	DOCA_GPUNETIO_PRIV_VERSION(DOCA_GPUNETIO_MIN_COMPAT_HOST_CODE_VERSION_MAJOR, \
				   DOCA_GPUNETIO_MIN_COMPAT_HOST_CODE_VERSION_MINOR, \
				   DOCA_GPUNETIO_MIN_COMPAT_HOST_CODE_VERSION_PATCH)

/* ---- Utility macros ------------------------------------------------------------------------ */
#if defined(__CUDACC_RTC__)
/* NVRTC has no __typeof__, and decltype(*p) is a reference: strip it, so that
 * DOCA_GPUNETIO_VOLATILE(*p) works there as it does with nvcc. */
#ifdef __cplusplus
extern "C++" {
#endif
template <typename T>
struct doca_priv_gpunetio_unref {
	typedef T type;
};
template <typename T>
struct doca_priv_gpunetio_unref<T &> {
	typedef T type;
};
template <typename T>
struct doca_priv_gpunetio_unref<T &&> {
	typedef T type;
};
#ifdef __cplusplus
}
#endif
#define TYPEOF(x) typename doca_priv_gpunetio_unref<decltype(x)>::type
#elif defined(__GNUC__)
#define TYPEOF(x) __typeof__(x)
#else
#define TYPEOF(x) decltype(x)
#endif

/* An lvalue that reads or writes x exactly once through a volatile pointer to its own type. */
#define DOCA_GPUNETIO_VOLATILE(x) (*(volatile TYPEOF(x) *)&(x))

#ifndef ACCESS_ONCE
#define ACCESS_ONCE(x) DOCA_GPUNETIO_VOLATILE(x)
#endif
#ifndef READ_ONCE
#define READ_ONCE(x) ACCESS_ONCE(x)
#endif
#ifndef WRITE_ONCE
#define WRITE_ONCE(x, v) (ACCESS_ONCE(x) = (v))
#endif

/* The SDK family's spellings of the same two (SDK 3.3: doca_gpunetio_verbs_def.h and
 * doca_gpunetio_dev_verbs_common.cuh). */
#ifndef DOCA_GPUNETIO_VERBS_VOLATILE
#define DOCA_GPUNETIO_VERBS_VOLATILE(x) (*(volatile TYPEOF(x) *)&(x))
#endif
#ifndef DOCA_GPUNETIO_VERBS_WRITE_ONCE
#define DOCA_GPUNETIO_VERBS_WRITE_ONCE(x, v) (DOCA_GPUNETIO_VERBS_VOLATILE(x) = (v))
#endif

#ifndef DOCA_GPUNETIO_VERBS_ENABLE_DEBUG
#define DOCA_GPUNETIO_VERBS_ENABLE_DEBUG 0
#endif

#if DOCA_GPUNETIO_VERBS_ENABLE_DEBUG == 1 && defined(__CUDACC_RTC__)
/* NVRTC has no <assert.h>: the device assert it would expand to, with NVRTC's built-in. */
#define DOCA_GPUNETIO_VERBS_ASSERT(x) \
	((x) ? (void)0 : __assertfail(#x, __FILE__, __LINE__, __func__, sizeof(char)))
#elif DOCA_GPUNETIO_VERBS_ENABLE_DEBUG == 1
#include <assert.h>
#define DOCA_GPUNETIO_VERBS_ASSERT(x) assert(x)
#else
#define DOCA_GPUNETIO_VERBS_ASSERT(x) \
	do {                          \
	} while (0)
#endif

/* ---- Constants ------------------------------------------------------------------------------ */
#define DOCA_GPUNETIO_VERBS_WARP_SIZE 32
#define DOCA_GPUNETIO_VERBS_WARP_FULL_MASK 0xffffffff
#define DOCA_GPUNETIO_VERBS_PAGE_SIZE 65536
#define DOCA_GPUNETIO_VERBS_CQE_CI_MASK 0xFFFFFF
#define DOCA_GPUNETIO_VERBS_WQE_PI_MASK 0xFFFF
#define DOCA_GPUNETIO_IB_MLX5_WQE_SQ_SHIFT 6
#define DOCA_GPUNETIO_MLX5_WQE_SQ_SHIFT 6 /* SDK spelling */
/* Receive WQEs are one 16-byte scatter entry (the DOCA SDK's name). */
#ifndef DOCA_GPUNETIO_MLX5_WQE_RQ_SHIFT
#define DOCA_GPUNETIO_MLX5_WQE_RQ_SHIFT 4
#endif
#define DOCA_GPUNETIO_VERBS_MKEY_SWAPPED 1
#define DOCA_GPUNETIO_VERBS_MAX_INLINE_SIZE 28
#define DOCA_GPUNETIO_VERBS_MLX5_CQE_OPCODE_SHIFT 4
#define DOCA_GPUNETIO_VERBS_CQE_SIZE 64
#define DOCA_GPUNETIO_VERBS_WQE_IDX_SHIFT 8
#define DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE_SHIFT 30
#define DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE (1ULL << DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE_SHIFT)
#define DOCA_GPUNETIO_4_BYTE_ATOMIC_EXT_OPMOD 0x08000000
#define DOCA_GPUNETIO_8_BYTE_ATOMIC_EXT_OPMOD 0x09000000

/* ---- mlx5 send opcodes ---------------------------------------------------------------------- */
enum {
	DOCA_GPUNETIO_IB_MLX5_OPCODE_NOP = 0x00,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_SEND_INVAL = 0x01,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE = 0x08,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE_IMM = 0x09,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_SEND = 0x0a,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_SEND_IMM = 0x0b,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_TSO = 0x0e,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_READ = 0x10,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_CS = 0x11,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_FA = 0x12,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_MASKED_CS = 0x14,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_MASKED_FA = 0x15,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_FMR = 0x19,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_LOCAL_INVAL = 0x1b,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_WAIT = 0x0f,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_CONFIG_CMD = 0x1f,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_SET_PSV = 0x20,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_DUMP = 0x23,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_UMR = 0x25,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_TAG_MATCHING = 0x28,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_FLOW_TBL_ACCESS = 0x2c,
	DOCA_GPUNETIO_IB_MLX5_OPCODE_MMO = 0x2F,
};

/* The SDK family's spelling of the same opcodes. */
enum {
	DOCA_GPUNETIO_MLX5_OPCODE_NOP = DOCA_GPUNETIO_IB_MLX5_OPCODE_NOP,
	DOCA_GPUNETIO_MLX5_OPCODE_SEND_INVAL = DOCA_GPUNETIO_IB_MLX5_OPCODE_SEND_INVAL,
	DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE = DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE,
	DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE_IMM = DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE_IMM,
	DOCA_GPUNETIO_MLX5_OPCODE_SEND = DOCA_GPUNETIO_IB_MLX5_OPCODE_SEND,
	DOCA_GPUNETIO_MLX5_OPCODE_SEND_IMM = DOCA_GPUNETIO_IB_MLX5_OPCODE_SEND_IMM,
	DOCA_GPUNETIO_MLX5_OPCODE_TSO = DOCA_GPUNETIO_IB_MLX5_OPCODE_TSO,
	DOCA_GPUNETIO_MLX5_OPCODE_WAIT = DOCA_GPUNETIO_IB_MLX5_OPCODE_WAIT,
	DOCA_GPUNETIO_MLX5_OPCODE_RDMA_READ = DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_READ,
	DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_CS = DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_CS,
	DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_FA = DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_FA,
	DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_MASKED_CS = DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_MASKED_CS,
	DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_MASKED_FA = DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_MASKED_FA,
	DOCA_GPUNETIO_MLX5_OPCODE_FMR = DOCA_GPUNETIO_IB_MLX5_OPCODE_FMR,
	DOCA_GPUNETIO_MLX5_OPCODE_LOCAL_INVAL = DOCA_GPUNETIO_IB_MLX5_OPCODE_LOCAL_INVAL,
	DOCA_GPUNETIO_MLX5_OPCODE_CONFIG_CMD = DOCA_GPUNETIO_IB_MLX5_OPCODE_CONFIG_CMD,
	DOCA_GPUNETIO_MLX5_OPCODE_SET_PSV = DOCA_GPUNETIO_IB_MLX5_OPCODE_SET_PSV,
	DOCA_GPUNETIO_MLX5_OPCODE_DUMP = DOCA_GPUNETIO_IB_MLX5_OPCODE_DUMP,
	DOCA_GPUNETIO_MLX5_OPCODE_UMR = DOCA_GPUNETIO_IB_MLX5_OPCODE_UMR,
	DOCA_GPUNETIO_MLX5_OPCODE_TAG_MATCHING = DOCA_GPUNETIO_IB_MLX5_OPCODE_TAG_MATCHING,
	DOCA_GPUNETIO_MLX5_OPCODE_FLOW_TBL_ACCESS = DOCA_GPUNETIO_IB_MLX5_OPCODE_FLOW_TBL_ACCESS,
	DOCA_GPUNETIO_MLX5_OPCODE_MMO = DOCA_GPUNETIO_IB_MLX5_OPCODE_MMO,
};

/* ---- Control-segment flags ------------------------------------------------------------------ */
/* Completion-event field (bits 3:2 of fm_ce_se). */
enum {
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CE_CQE_ON_CQE_ERROR = 0x0,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CE_CQE_ON_FIRST_CQE_ERROR = 0x1,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CE_CQE_ALWAYS = 0x2,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CE_CQE_AND_EQE = 0x3,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ON_CQE_ERROR = 0x0, /* SDK spellings */
	DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ON_FIRST_CQE_ERROR = 0x1,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ALWAYS = 0x2,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_AND_EQE = 0x3,
};

/* Fence-mode field (bits 7:5 of fm_ce_se). */
enum {
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_NO_FENCE = 0x0,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_INITIATOR_SMALL_FENCE = 0x1,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_FENCE = 0x2,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_STRONG_ORDERING = 0x3,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_FENCE_AND_INITIATOR_SMALL_FENCE = 0x4,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_CUSTOM = 0x100,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_NO_FENCE = 0x0, /* SDK spellings */
	DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_INITIATOR_SMALL_FENCE = 0x1,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_FENCE = 0x2,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_STRONG_ORDERING = 0x3,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_FENCE_AND_INITIATOR_SMALL_FENCE = 0x4,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_CUSTOM = 0x100,
};

/* Ready-made values of the fm_ce_se byte, in both families' spellings. The one value that
 * differs is FENCE: the open-source DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FENCE is fence mode 2 (FENCE,
 * 0x40); the SDK's DOCA_GPUNETIO_MLX5_WQE_CTRL_FENCE is fence mode 4 (FENCE_AND_INITIATOR_SMALL_FENCE,
 * 0x80). Each name keeps its own family's value. */
enum doca_gpu_dev_verbs_wqe_ctrl_flags {
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE = DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CE_CQE_ALWAYS << 2,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_ERROR_UPDATE = DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CE_CQE_ON_CQE_ERROR << 2,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_FIRST_CQE_ERROR = DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CE_CQE_ON_FIRST_CQE_ERROR << 2,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_SOLICITED = 1 << 1,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FENCE = DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_FENCE << 5,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE = DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_INITIATOR_SMALL_FENCE << 5,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_STRONG_ORDERING = DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_STRONG_ORDERING << 5,
	DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE_FENCE =
		(DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CE_CQE_ALWAYS << 2) | (DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_FENCE << 5),
	DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE = DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ALWAYS << 2,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_ERROR_UPDATE = DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ON_CQE_ERROR << 2,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_FIRST_CQE_ERROR = DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ON_FIRST_CQE_ERROR << 2,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_SOLICITED = 1 << 1,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_FENCE = DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_FENCE_AND_INITIATOR_SMALL_FENCE << 5,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE = DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_INITIATOR_SMALL_FENCE << 5,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_STRONG_ORDERING = DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_STRONG_ORDERING << 5,
};

/* Doorbell-record word indices. */
enum {
	DOCA_GPUNETIO_IB_MLX5_RCV_DBR = 0,
	DOCA_GPUNETIO_IB_MLX5_SND_DBR = 1,
	DOCA_GPUNETIO_MLX5_RCV_DBR = 0, /* SDK spellings */
	DOCA_GPUNETIO_MLX5_SND_DBR = 1,
};

/* ---- Named enums ---------------------------------------------------------------------------- */
enum doca_gpu_dev_verbs_mem_type {
	DOCA_GPUNETIO_VERBS_MEM_TYPE_AUTO = 0,
	DOCA_GPUNETIO_VERBS_MEM_TYPE_HOST = 1,
	DOCA_GPUNETIO_VERBS_MEM_TYPE_GPU = 2,
	DOCA_GPUNETIO_VERBS_MEM_TYPE_MAX = INT_MAX,
};

enum doca_gpu_verbs_send_dbr_mode_ext {
	DOCA_GPUNETIO_VERBS_SEND_DBR_MODE_EXT_VALID_DBR = 0,
	DOCA_GPUNETIO_VERBS_SEND_DBR_MODE_EXT_NO_DBR_HW = 1,
	DOCA_GPUNETIO_VERBS_SEND_DBR_MODE_EXT_NO_DBR_SW_EMULATED = 2,
};

enum doca_gpu_dev_verbs_qp_type {
	DOCA_GPUNETIO_VERBS_QP_SQ = 0,
	DOCA_GPUNETIO_VERBS_QP_RQ = 1, /* the receive queue (DOCA SDK 3.2) */
};

enum doca_gpu_dev_verbs_exec_scope {
	DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD = 0,
	DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP = 1,
};

/* Numeric order matters: "at least GPU scope" is min(scope, GPU). */
enum doca_gpu_dev_verbs_sync_scope {
	DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS = 0,
	DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU = 1,
	DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA = 2,
	DOCA_GPUNETIO_VERBS_SYNC_SCOPE_THREAD = 3,
	DOCA_GPUNETIO_VERBS_SYNC_SCOPE_MAX = INT_MAX,
};

enum doca_gpu_dev_verbs_resource_sharing_mode {
	DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE = 0,
	DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA = 1,
	DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU = 2,
	DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_MAX = INT_MAX,
};

/* NIC handlers. The open-source family builds the values from flags (BF = 6, NO_DBR = 10), the
 * SDK numbers them (BF = 3, NO_DBR = 4; 3.4 adds CPU_PROXY_NO_DBR). The value travels in the
 * exported QP (nic_handler), so it is data, not only a name: by default the enumerators have the
 * open-source values, which our host writes, and CPU_PROXY_NO_DBR is FLAG_CPU_PROXY | FLAG_NO_DBR
 * (9). A kernel compiled with GDAKI_DOCA_FAMILY_SDK defined gets the SDK's numbers (3, 4, 5) instead,
 * so that it can compare qp->nic_handler with them on a QP the SDK exported; the headers' own
 * dispatch reads either numbering in that mode (cuda/README.md, "Two families"). */
enum {
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_CPU_PROXY = 1 << 0,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_GPU_SM = 1 << 1,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_BF = 1 << 2,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_NO_DBR = 1 << 3,
	/* ncclx's free-flow proxy: refused (a submit naming it stops the build). */
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_FREE_FLOW = 1 << 4,
};

enum doca_gpu_dev_verbs_nic_handler {
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO = 0,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY = DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_CPU_PROXY,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB = DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_GPU_SM,
#if defined(GDAKI_DOCA_FAMILY_SDK)
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF = 3,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR = 4,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY_NO_DBR = 5,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_TYPE_MAX = 6,
#else
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF =
		DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_GPU_SM | DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_BF,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR =
		DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_GPU_SM | DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_NO_DBR,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY_NO_DBR =
		DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_CPU_PROXY | DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_NO_DBR,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_TYPE_MAX =
		DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_GPU_SM | DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_NO_DBR | 1,
#endif
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY_FREE_FLOW =
		DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_CPU_PROXY | DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_FREE_FLOW,
};

enum doca_gpu_dev_verbs_gpu_code_opt {
	DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT = 0,
	DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_ASYNC_STORE_RELEASE = 1 << 0,
	DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_AVAILABILITY_CHECK = 1 << 1,
	DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_DB_RINGING = 1 << 2,
	DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_CPU_PROXY_UPDATE_PI = 1 << 3,
	/* SDK 3.4. A hint that a BlueFlame submit may skip its safety doorbell: ours always rings
	 * it (the submit is the same as without the bit). Its own bit. */
	DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_BF_UNRELIABLE = 1 << 4,
	/* SDK 3.3, where it is 1 << 1, the bit the open-source family gives SKIP_AVAILABILITY_CHECK.
	 * It tells the SDK's host proxy that GDRCopy exists; no device function reads it. Its own
	 * bit here, so that both names keep their meaning. */
	DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_HAS_GDRCOPY = 1 << 5,
	DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_MAX = INT_MAX,
};

enum doca_gpu_dev_verbs_signal_op {
	DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD = 0,
	/* Extension (not in DOCA): the signal word is set to sig_val (an 8-byte RDMA WRITE). */
	GDAKI_VERBS_SIGNAL_OP_SET = 1,
};

enum doca_gpu_dev_verbs_dump_mode {
	DOCA_GPUNETIO_VERBS_DUMP = 0,
	DOCA_GPUNETIO_VERBS_NODUMP = 1,
	DOCA_GPUNETIO_VERBS_DUMP_AUTO = 2,
};

enum doca_gpu_dev_verbs_blocking_mode {
	DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED = 0,
	DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED = 1,
};

/* ENABLED posts a DUMP WQE after RDMA reads; DISABLED does not. */
enum doca_gpu_dev_verbs_mcst_mode {
	DOCA_GPUNETIO_VERBS_MCST_DISABLED = 0,
	DOCA_GPUNETIO_VERBS_MCST_ENABLED = 1,
};

enum {
	DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_RDMA_WRITE_INL_MIN = 3,
	DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_RDMA_WRITE_INL_MAX = 4,
	DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_ATOMIC_FA_CAS = 4,
	DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_WAIT = 2,
};

enum {
	DOCA_GPUNETIO_IB_MLX5_INLINE_SEG = 0x80000000,
};

enum {
	DOCA_GPUNETIO_IB_MLX5_CQE_OWNER_MASK = 1,
	DOCA_GPUNETIO_IB_MLX5_CQE_REQ = 0,
	DOCA_GPUNETIO_IB_MLX5_CQE_RESP_WR_IMM = 1,
	DOCA_GPUNETIO_IB_MLX5_CQE_RESP_SEND = 2,
	DOCA_GPUNETIO_IB_MLX5_CQE_RESP_SEND_IMM = 3,
	DOCA_GPUNETIO_IB_MLX5_CQE_RESP_SEND_INV = 4,
	DOCA_GPUNETIO_IB_MLX5_CQE_RESIZE_CQ = 5,
	DOCA_GPUNETIO_IB_MLX5_CQE_NO_PACKET = 6,
	DOCA_GPUNETIO_IB_MLX5_CQE_SIG_ERR = 12,
	DOCA_GPUNETIO_IB_MLX5_CQE_REQ_ERR = 13,
	DOCA_GPUNETIO_IB_MLX5_CQE_RESP_ERR = 14,
	DOCA_GPUNETIO_IB_MLX5_CQE_INVALID = 15,
};

enum doca_gpu_dev_verbs_atomic_ext_bytes {
	DOCA_GPUNETIO_VERBS_ATOMIC_EXT_BYTES_4 = 4,
	DOCA_GPUNETIO_VERBS_ATOMIC_EXT_BYTES_8 = 8,
};

enum doca_gpu_dev_verbs_qp_ready_mode {
	DOCA_GPUNETIO_VERBS_READY_MODE_DEFAULT = 0,
	DOCA_GPUNETIO_VERBS_READY_MODE_ATOMIC_CAS = 1,
	DOCA_GPUNETIO_VERBS_READY_MODE_LD_ST = 2,
};

/* ---- mlx5 segment layouts ------------------------------------------------------------------- */
struct __attribute__((packed)) doca_gpunetio_ib_mlx5_wqe_data_seg {
	__be32 byte_count;
	__be32 lkey;
	__be64 addr;
};

/* NVRTC (no anonymous structs): the three bytes at 8..11 by name, without the 4-byte alias
 * signature_fm_ce_se. */
struct __attribute__((packed, aligned(4))) doca_gpunetio_ib_mlx5_wqe_ctrl_seg {
	__be32 opmod_idx_opcode;
	__be32 qpn_ds;
#if !defined(__CUDACC_RTC__)
	union {
		struct __attribute__((packed)) {
#endif
			uint8_t signature;
			__be16 dci_stream_channel_id;
			uint8_t fm_ce_se;
#if !defined(__CUDACC_RTC__)
		};
		struct __attribute__((packed)) {
			__be32 signature_fm_ce_se;
		};
	};
#endif
	__be32 imm;
};

struct __attribute__((packed)) doca_gpunetio_ib_mlx5_wqe_raddr_seg {
	__be64 raddr;
	__be32 rkey;
	__be32 reserved;
};

struct __attribute__((packed)) doca_gpunetio_ib_mlx5_wqe_atomic_seg {
	__be64 swap_add;
	__be64 compare;
};

struct doca_gpunetio_ib_mlx5_wqe_inl_data_seg {
	uint32_t byte_count;
};

struct __attribute__((packed)) doca_gpunetio_ib_mlx5_wqe_wait_seg {
	uint32_t resv[2];
	__be32 max_index;
	__be32 qpn_cqn;
};

struct doca_gpunetio_ib_mlx5_tm_cqe {
	__be32 success;
	__be16 hw_phase_cnt;
	uint8_t rsvd0[12];
};

struct doca_gpunetio_ib_ibv_tmh {
	uint8_t opcode;
	uint8_t reserved[3];
	__be32 app_ctx;
	__be64 tag;
};

/* NVRTC (no anonymous structs): the receive fields of bytes 0..31 by name, without the tm_cqe
 * and tmh views of them. */
struct doca_gpunetio_ib_mlx5_cqe64 {
#if !defined(__CUDACC_RTC__)
	union {
		struct {
#endif
			uint8_t rsvd0[2];
			__be16 wqe_id;
			uint8_t rsvd4[13];
			uint8_t ml_path;
			uint8_t rsvd20[4];
			__be16 slid;
			__be32 flags_rqpn;
			uint8_t hds_ip_ext;
			uint8_t l4_hdr_type_etc;
			__be16 vlan_info;
#if !defined(__CUDACC_RTC__)
		};
		struct doca_gpunetio_ib_mlx5_tm_cqe tm_cqe;
		struct doca_gpunetio_ib_ibv_tmh tmh;
	};
#endif
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

struct doca_gpunetio_ib_mlx5_err_cqe_ex {
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


/* ---- SDK family segment names ---------------------------------------------------------------- */
/* The SDK's control segment (also the open-source name before 2.0): bytes 9..10 are reserved
 * instead of the DCI stream channel, 8-byte alignment. Same 16 bytes as
 * struct doca_gpunetio_ib_mlx5_wqe_ctrl_seg. NVRTC: without the signature_fm_ce_se alias. */
struct __attribute__((aligned(8))) doca_gpu_dev_verbs_wqe_ctrl_seg {
	__be32 opmod_idx_opcode;
	__be32 qpn_ds;
#if !defined(__CUDACC_RTC__)
	union {
		struct {
#endif
			uint8_t signature;
			uint8_t rsvd[2];
			uint8_t fm_ce_se;
#if !defined(__CUDACC_RTC__)
		};
		struct {
			__be32 signature_fm_ce_se;
		};
	};
#endif
	__be32 imm;
};

/* The SDK's WAIT segment: struct doca_gpunetio_ib_mlx5_wqe_wait_seg, 8-byte aligned. */
struct __attribute__((packed, aligned(8))) doca_gpu_dev_verbs_wqe_wait_seg {
	uint32_t resv[2];
	__be32 max_index;
	__be32 qpn_cqn;
};

/* ---- mlx5dv subset (no rdma-core headers: NVRTC, GDAKI_DOCA_NO_MLX5DV, or none installed) ------ */
/* What the SDK's API and SDK-style kernels take from <infiniband/mlx5dv.h>, with rdma-core's
 * names, values and layouts. struct mlx5_cqe64 has no tm_cqe / tmh views here (they need
 * <infiniband/verbs.h> types). */
#if !defined(_MLX5DV_H_) && !defined(GDAKI_DOCA_MLX5DV_SUBSET)
#define GDAKI_DOCA_MLX5DV_SUBSET 1
enum {
	MLX5_RCV_DBR = 0,
	MLX5_SND_DBR = 1,
};

enum {
	MLX5_OPCODE_NOP = 0x00,
	MLX5_OPCODE_SEND_INVAL = 0x01,
	MLX5_OPCODE_RDMA_WRITE = 0x08,
	MLX5_OPCODE_RDMA_WRITE_IMM = 0x09,
	MLX5_OPCODE_SEND = 0x0a,
	MLX5_OPCODE_SEND_IMM = 0x0b,
	MLX5_OPCODE_TSO = 0x0e,
	MLX5_OPCODE_RDMA_READ = 0x10,
	MLX5_OPCODE_ATOMIC_CS = 0x11,
	MLX5_OPCODE_ATOMIC_FA = 0x12,
	MLX5_OPCODE_ATOMIC_MASKED_CS = 0x14,
	MLX5_OPCODE_ATOMIC_MASKED_FA = 0x15,
	MLX5_OPCODE_FMR = 0x19,
	MLX5_OPCODE_LOCAL_INVAL = 0x1b,
	MLX5_OPCODE_CONFIG_CMD = 0x1f,
	MLX5_OPCODE_SET_PSV = 0x20,
	MLX5_OPCODE_UMR = 0x25,
	MLX5_OPCODE_TAG_MATCHING = 0x28,
	MLX5_OPCODE_FLOW_TBL_ACCESS = 0x2c,
	MLX5_OPCODE_MMO = 0x2F,
};

enum {
	MLX5_INLINE_SCATTER_32 = 0x4,
	MLX5_INLINE_SCATTER_64 = 0x8,
};

enum {
	MLX5_CQE_OWNER_MASK = 1,
	MLX5_CQE_REQ = 0,
	MLX5_CQE_RESP_WR_IMM = 1,
	MLX5_CQE_RESP_SEND = 2,
	MLX5_CQE_RESP_SEND_IMM = 3,
	MLX5_CQE_RESP_SEND_INV = 4,
	MLX5_CQE_RESIZE_CQ = 5,
	MLX5_CQE_NO_PACKET = 6,
	MLX5_CQE_SIG_ERR = 12,
	MLX5_CQE_REQ_ERR = 13,
	MLX5_CQE_RESP_ERR = 14,
	MLX5_CQE_INVALID = 15,
};

enum {
	MLX5_WQE_CTRL_CQ_UPDATE = 2 << 2,
	MLX5_WQE_CTRL_SOLICITED = 1 << 1,
	MLX5_WQE_CTRL_FENCE = 4 << 5,
	MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE = 1 << 5,
};

enum {
	MLX5_INLINE_SEG = 0x80000000,
};

struct mlx5_cqe64 {
	uint8_t rsvd0[2];
	__be16 wqe_id;
	uint8_t rsvd4[13];
	uint8_t ml_path;
	uint8_t rsvd20[4];
	__be16 slid;
	__be32 flags_rqpn;
	uint8_t hds_ip_ext;
	uint8_t l4_hdr_type_etc;
	__be16 vlan_info;
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

struct mlx5_wqe_data_seg {
	__be32 byte_count;
	__be32 lkey;
	__be64 addr;
};

struct __attribute__((packed, aligned(4))) mlx5_wqe_ctrl_seg {
	__be32 opmod_idx_opcode;
	__be32 qpn_ds;
	uint8_t signature;
	__be16 dci_stream_channel_id;
	uint8_t fm_ce_se;
	__be32 imm;
};

struct mlx5_wqe_raddr_seg {
	__be64 raddr;
	__be32 rkey;
	__be32 reserved;
};

struct mlx5_wqe_atomic_seg {
	__be64 swap_add;
	__be64 compare;
};

struct mlx5_wqe_inl_data_seg {
	uint32_t byte_count;
};
#endif /* mlx5dv subset */

#ifdef __cplusplus
}
#endif

/* As in the SDK, whose doca_gpunetio_verbs_def.h declares the ticket type and the device structs
 * itself: host code that includes only this file sees them too. */
#include "doca_gpunetio_verbs_dev.h"

#endif /* DOCA_GPUNETIO_VERBS_DEF_H */
