package devstruct

/*
#cgo CFLAGS: -I${SRCDIR}/../../cuda/include
#include <stddef.h>
#include "common/doca_gpunetio_verbs_dev.h"

// The layout table: every struct of the shared header that kernels, the NIC
// or Go code rely on, as "struct.field" (offset, size), "struct" (0, sizeof)
// and "struct.align" (0, _Alignof).
struct ds_field {
	const char *name;
	size_t offset;
	size_t size;
};
#define DS_FIELD(T, f) {#T "." #f, offsetof(struct T, f), sizeof(((struct T *)0)->f)}
#define DS_SIZE(T) {#T, 0, sizeof(struct T)}
#define DS_ALIGN(T) {#T ".align", 0, _Alignof(struct T)}
#define DS_TFIELD(T, f) {#T "." #f, offsetof(T, f), sizeof(((T *)0)->f)}
#define DS_TSIZE(T) {#T, 0, sizeof(T)}

// The structs Go encodes in place list their fields once, as X-macros: each
// list makes both the table rows and the enum of offsets the Go constants
// read (ds_qp_sq_num, ds_err_status, ...).
typedef struct doca_gpu_dev_verbs_qp ds_qp;
typedef struct doca_gpu_dev_verbs_cq ds_cq;
typedef struct gdaki_dev_qp_ext ds_ext;
typedef struct gdaki_dev_qp_error ds_err;
#define DS_NAME_qp "doca_gpu_dev_verbs_qp"
#define DS_NAME_cq "doca_gpu_dev_verbs_cq"
#define DS_NAME_ext "gdaki_dev_qp_ext"
#define DS_NAME_err "gdaki_dev_qp_error"
#define DS_ROW(p, f) {DS_NAME_##p "." #f, offsetof(ds_##p, f), sizeof(((ds_##p *)0)->f)},
#define DS_OFF(p, f) ds_##p##_##f = offsetof(ds_##p, f),
#define DS_STRUCT_ROWS(p) {DS_NAME_##p, 0, sizeof(ds_##p)}, {DS_NAME_##p ".align", 0, _Alignof(ds_##p)},

#define DS_QP_FIELDS(X)                                                                            \
	X(qp, sq_rsvd_index) X(qp, sq_ready_index) X(qp, sq_wqe_pi) X(qp, sq_num) X(qp, sq_num_shift8) \
	X(qp, sq_num_shift8_be) X(qp, sq_num_shift8_be_1ds) X(qp, sq_num_shift8_be_2ds)             \
	X(qp, sq_num_shift8_be_3ds) X(qp, sq_num_shift8_be_4ds) X(qp, sq_num_shift8_be_5ds)          \
	X(qp, sq_lock) X(qp, sq_wqe_num) X(qp, sq_wqe_mask) X(qp, sq_wqe_daddr) X(qp, sq_dbrec)       \
	X(qp, sq_db) X(qp, rq_num) X(qp, rq_reserved0) X(qp, rq_wqe_pi) X(qp, rq_wqe_num)             \
	X(qp, rq_wqe_mask) X(qp, rq_wqe_daddr) X(qp, rq_dbrec) X(qp, rcv_wqe_size)                    \
	X(qp, rq_reserved1) X(qp, rq_rsvd_index) X(qp, rq_ready_index) X(qp, rq_lock)                 \
	X(qp, rq_reserved2) X(qp, cq_sq) X(qp, cq_rq) X(qp, nic_handler) X(qp, mem_type)              \
	X(qp, need_mcst) X(qp, need_dump) X(qp, reserved_mcst) X(qp, last_get_wqe_idx)                \
	X(qp, last_dump_wqe_idx) X(qp, last_recv_wqe_idx) X(qp, gdaki)
#define DS_CQ_FIELDS(X)                                                                             \
	X(cq, cqe_daddr) X(cq, cq_num) X(cq, cqe_num) X(cq, dbrec) X(cq, cqe_ci) X(cq, cqe_mask)       \
	X(cq, cqe_size) X(cq, reserved1) X(cq, gdaki_flags) X(cq, cqe_rsvd) X(cq, mem_type)           \
	X(cq, reserved2)
#define DS_EXT_FIELDS(X) X(ext, error) X(ext, poll_timeout) X(ext, reserved)
#define DS_ERR_FIELDS(X)                                                                            \
	X(err, status) X(err, syndrome) X(err, vendor_syndrome) X(err, hw_syndrome)                   \
	X(err, hw_syndrome_type) X(err, cqe_opcode) X(err, wqe_opcode) X(err, wqe_counter)            \
	X(err, reserved) X(err, wqe_index)

static const struct ds_field ds_fields[] = {
	DS_STRUCT_ROWS(qp) DS_QP_FIELDS(DS_ROW)
	DS_STRUCT_ROWS(cq) DS_CQ_FIELDS(DS_ROW)
	DS_STRUCT_ROWS(ext) DS_EXT_FIELDS(DS_ROW)
	DS_STRUCT_ROWS(err) DS_ERR_FIELDS(DS_ROW)

	DS_SIZE(doca_gpu_dev_verbs_wqe), DS_ALIGN(doca_gpu_dev_verbs_wqe),
	DS_FIELD(doca_gpu_dev_verbs_wqe, inl_data), DS_FIELD(doca_gpu_dev_verbs_wqe, dseg0),
	DS_FIELD(doca_gpu_dev_verbs_wqe, dseg1), DS_FIELD(doca_gpu_dev_verbs_wqe, dseg2),
	DS_FIELD(doca_gpu_dev_verbs_wqe, dseg3), DS_FIELD(doca_gpu_dev_verbs_wqe, rw_cseg),
	DS_FIELD(doca_gpu_dev_verbs_wqe, rw_rseg), DS_FIELD(doca_gpu_dev_verbs_wqe, rw_dseg0),
	DS_FIELD(doca_gpu_dev_verbs_wqe, rw_dseg1), DS_FIELD(doca_gpu_dev_verbs_wqe, at_cseg),
	DS_FIELD(doca_gpu_dev_verbs_wqe, at_rseg), DS_FIELD(doca_gpu_dev_verbs_wqe, at_seg),
	DS_FIELD(doca_gpu_dev_verbs_wqe, at_dseg), DS_FIELD(doca_gpu_dev_verbs_wqe, snd_cseg),
	DS_FIELD(doca_gpu_dev_verbs_wqe, snd_dseg0), DS_FIELD(doca_gpu_dev_verbs_wqe, snd_dseg1),
	DS_FIELD(doca_gpu_dev_verbs_wqe, snd_dseg2), DS_FIELD(doca_gpu_dev_verbs_wqe, wait_cseg),
	DS_FIELD(doca_gpu_dev_verbs_wqe, wait_dseg), DS_FIELD(doca_gpu_dev_verbs_wqe, padding0),
	DS_FIELD(doca_gpu_dev_verbs_wqe, padding1),

	DS_SIZE(doca_gpu_dev_verbs_addr), DS_ALIGN(doca_gpu_dev_verbs_addr),
	DS_FIELD(doca_gpu_dev_verbs_addr, addr), DS_FIELD(doca_gpu_dev_verbs_addr, key),

	DS_TSIZE(doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t),
	DS_TFIELD(doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t, add_data),
	DS_TFIELD(doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t, field_boundary),
	DS_TFIELD(doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t, reserved),
	DS_TSIZE(doca_gpu_dev_verbs_atomic_64_masked_fa_seg_t),
	DS_TFIELD(doca_gpu_dev_verbs_atomic_64_masked_fa_seg_t, add_data),
	DS_TFIELD(doca_gpu_dev_verbs_atomic_64_masked_fa_seg_t, field_boundary),
	DS_TSIZE(doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t),
	DS_TFIELD(doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t, swap_data),
	DS_TFIELD(doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t, compare_data),
	DS_TFIELD(doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t, swap_mask),
	DS_TFIELD(doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t, compare_mask),
	DS_TSIZE(doca_gpu_dev_verbs_atomic_64_masked_cs_seg_t),
	DS_TFIELD(doca_gpu_dev_verbs_atomic_64_masked_cs_seg_t, swap),
	DS_TFIELD(doca_gpu_dev_verbs_atomic_64_masked_cs_seg_t, compare),

	DS_SIZE(doca_gpunetio_ib_mlx5_wqe_ctrl_seg), DS_ALIGN(doca_gpunetio_ib_mlx5_wqe_ctrl_seg),
	DS_FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, opmod_idx_opcode),
	DS_FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, qpn_ds),
	DS_FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, signature),
	DS_FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, dci_stream_channel_id),
	DS_FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, fm_ce_se),
	DS_FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, signature_fm_ce_se),
	DS_FIELD(doca_gpunetio_ib_mlx5_wqe_ctrl_seg, imm),
	DS_SIZE(doca_gpunetio_ib_mlx5_wqe_data_seg), DS_ALIGN(doca_gpunetio_ib_mlx5_wqe_data_seg),
	DS_FIELD(doca_gpunetio_ib_mlx5_wqe_data_seg, byte_count), DS_FIELD(doca_gpunetio_ib_mlx5_wqe_data_seg, lkey),
	DS_FIELD(doca_gpunetio_ib_mlx5_wqe_data_seg, addr),
	DS_SIZE(doca_gpunetio_ib_mlx5_wqe_raddr_seg), DS_FIELD(doca_gpunetio_ib_mlx5_wqe_raddr_seg, raddr),
	DS_FIELD(doca_gpunetio_ib_mlx5_wqe_raddr_seg, rkey), DS_FIELD(doca_gpunetio_ib_mlx5_wqe_raddr_seg, reserved),
	DS_SIZE(doca_gpunetio_ib_mlx5_wqe_atomic_seg), DS_FIELD(doca_gpunetio_ib_mlx5_wqe_atomic_seg, swap_add),
	DS_FIELD(doca_gpunetio_ib_mlx5_wqe_atomic_seg, compare),
	DS_SIZE(doca_gpunetio_ib_mlx5_wqe_inl_data_seg),
	DS_SIZE(doca_gpunetio_ib_mlx5_wqe_wait_seg), DS_FIELD(doca_gpunetio_ib_mlx5_wqe_wait_seg, resv),
	DS_FIELD(doca_gpunetio_ib_mlx5_wqe_wait_seg, max_index), DS_FIELD(doca_gpunetio_ib_mlx5_wqe_wait_seg, qpn_cqn),

	DS_SIZE(doca_gpunetio_ib_mlx5_tm_cqe), DS_ALIGN(doca_gpunetio_ib_mlx5_tm_cqe),
	DS_FIELD(doca_gpunetio_ib_mlx5_tm_cqe, success), DS_FIELD(doca_gpunetio_ib_mlx5_tm_cqe, hw_phase_cnt),
	DS_FIELD(doca_gpunetio_ib_mlx5_tm_cqe, rsvd0),
	DS_SIZE(doca_gpunetio_ib_ibv_tmh), DS_ALIGN(doca_gpunetio_ib_ibv_tmh),
	DS_FIELD(doca_gpunetio_ib_ibv_tmh, opcode), DS_FIELD(doca_gpunetio_ib_ibv_tmh, reserved),
	DS_FIELD(doca_gpunetio_ib_ibv_tmh, app_ctx), DS_FIELD(doca_gpunetio_ib_ibv_tmh, tag),

	DS_SIZE(doca_gpunetio_ib_mlx5_cqe64), DS_ALIGN(doca_gpunetio_ib_mlx5_cqe64),
	DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, wqe_id), DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, ml_path),
	DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, slid), DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, flags_rqpn),
	DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, hds_ip_ext), DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, l4_hdr_type_etc),
	DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, vlan_info), DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, tm_cqe),
	DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, tmh), DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, srqn_uidx),
	DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, imm_inval_pkey), DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, app),
	DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, app_op), DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, app_info),
	DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, byte_cnt), DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, timestamp),
	DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, sop_drop_qpn), DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, wqe_counter),
	DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, signature), DS_FIELD(doca_gpunetio_ib_mlx5_cqe64, op_own),

	DS_SIZE(doca_gpunetio_ib_mlx5_err_cqe_ex), DS_ALIGN(doca_gpunetio_ib_mlx5_err_cqe_ex),
	DS_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, rsvd0), DS_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, srqn),
	DS_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, rsvd1), DS_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, hw_err_synd),
	DS_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, hw_synd_type),
	DS_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, vendor_err_synd),
	DS_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, syndrome), DS_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, s_wqe_opcode_qpn),
	DS_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, wqe_counter), DS_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, signature),
	DS_FIELD(doca_gpunetio_ib_mlx5_err_cqe_ex, op_own),
};

static size_t ds_layout(const struct ds_field **out)
{
	*out = ds_fields;
	return sizeof(ds_fields) / sizeof(ds_fields[0]);
}

enum {
	ds_qp_size = sizeof(ds_qp),
	ds_qp_align = _Alignof(ds_qp),
	ds_cq_size = sizeof(ds_cq),
	ds_cq_align = _Alignof(ds_cq),
	ds_ext_size = sizeof(ds_ext),
	ds_err_size = sizeof(ds_err),
	DS_QP_FIELDS(DS_OFF) DS_CQ_FIELDS(DS_OFF) DS_EXT_FIELDS(DS_OFF) DS_ERR_FIELDS(DS_OFF)

	ds_err_ok = GDAKI_DEV_QP_OK,
	ds_err_cqe = GDAKI_DEV_QP_ERR_CQE,
	ds_err_timeout = GDAKI_DEV_QP_ERR_TIMEOUT,
	ds_cq_flag_in_qp = GDAKI_DEV_CQ_FLAG_IN_QP,
	ds_cq_flag_rq = GDAKI_DEV_CQ_FLAG_RQ,

	ds_mem_type_gpu = DOCA_GPUNETIO_VERBS_MEM_TYPE_GPU,
	ds_mem_type_host = DOCA_GPUNETIO_VERBS_MEM_TYPE_HOST,
};
*/
import "C"

import "unsafe"

// Sizes and alignments of the device structs, as the C compiler lays out the
// shared header.
const (
	QPSize  = int(C.ds_qp_size)
	QPAlign = int(C.ds_qp_align)
	CQSize  = int(C.ds_cq_size)
	CQAlign = int(C.ds_cq_align)
)

// Memory-type values of enum doca_gpu_dev_verbs_mem_type.
const (
	MemTypeHost = uint32(C.ds_mem_type_host)
	MemTypeGPU  = uint32(C.ds_mem_type_gpu)
)

// Field offsets inside struct doca_gpu_dev_verbs_qp, from offsetof.
const (
	offSQRsvdIndex   = int(C.ds_qp_sq_rsvd_index)
	offSQReadyIndex  = int(C.ds_qp_sq_ready_index)
	offSQWQEPI       = int(C.ds_qp_sq_wqe_pi)
	offSQNum         = int(C.ds_qp_sq_num)
	offSQNumShift8   = int(C.ds_qp_sq_num_shift8)
	offSQNumShift8BE = int(C.ds_qp_sq_num_shift8_be)
	offSQNumBE1DS    = int(C.ds_qp_sq_num_shift8_be_1ds)
	offSQNumBE2DS    = int(C.ds_qp_sq_num_shift8_be_2ds)
	offSQNumBE3DS    = int(C.ds_qp_sq_num_shift8_be_3ds)
	offSQNumBE4DS    = int(C.ds_qp_sq_num_shift8_be_4ds)
	offSQNumBE5DS    = int(C.ds_qp_sq_num_shift8_be_5ds)
	offSQLock        = int(C.ds_qp_sq_lock)
	offSQWQENum      = int(C.ds_qp_sq_wqe_num)
	offSQWQEMask     = int(C.ds_qp_sq_wqe_mask)
	offSQWQEDAddr    = int(C.ds_qp_sq_wqe_daddr)
	offSQDBRec       = int(C.ds_qp_sq_dbrec)
	offSQDB          = int(C.ds_qp_sq_db)
	offRQNum         = int(C.ds_qp_rq_num)
	offRQReserved0   = int(C.ds_qp_rq_reserved0)
	offRQWQEPI       = int(C.ds_qp_rq_wqe_pi)
	offRQWQENum      = int(C.ds_qp_rq_wqe_num)
	offRQWQEMask     = int(C.ds_qp_rq_wqe_mask)
	offRQWQEDAddr    = int(C.ds_qp_rq_wqe_daddr)
	offRQDBRec       = int(C.ds_qp_rq_dbrec)
	offRcvWQESize    = int(C.ds_qp_rcv_wqe_size)
	offRQReserved1   = int(C.ds_qp_rq_reserved1)
	offRQRsvdIndex   = int(C.ds_qp_rq_rsvd_index)
	offRQReadyIndex  = int(C.ds_qp_rq_ready_index)
	offRQLock        = int(C.ds_qp_rq_lock)
	offRQReserved2   = int(C.ds_qp_rq_reserved2)
	offCQSQ          = int(C.ds_qp_cq_sq)
	offCQRQ          = int(C.ds_qp_cq_rq)
	offNICHandler    = int(C.ds_qp_nic_handler)
	offQPMemType     = int(C.ds_qp_mem_type)
	offNeedMCST      = int(C.ds_qp_need_mcst)
	offNeedDump      = int(C.ds_qp_need_dump)
	offReservedMCST  = int(C.ds_qp_reserved_mcst)
	offLastGetWQE    = int(C.ds_qp_last_get_wqe_idx)
	offLastDumpWQE   = int(C.ds_qp_last_dump_wqe_idx)
	offLastRecvWQE   = int(C.ds_qp_last_recv_wqe_idx)
)

// Field offsets inside struct doca_gpu_dev_verbs_cq, from offsetof.
const (
	offCQEDAddr    = int(C.ds_cq_cqe_daddr)
	offCQNum       = int(C.ds_cq_cq_num)
	offCQENum      = int(C.ds_cq_cqe_num)
	offCQDBRec     = int(C.ds_cq_dbrec)
	offCQECI       = int(C.ds_cq_cqe_ci)
	offCQEMask     = int(C.ds_cq_cqe_mask)
	offCQESize     = int(C.ds_cq_cqe_size)
	offCQReserved1 = int(C.ds_cq_reserved1)
	offCQERsvd     = int(C.ds_cq_cqe_rsvd)
	offCQMemType   = int(C.ds_cq_mem_type)
	offCQReserved2 = int(C.ds_cq_reserved2)
)

// Offsets inside the extension area (struct gdaki_dev_qp_ext, the QP's last
// 64 bytes) and its error record (struct gdaki_dev_qp_error).
const (
	offExt            = int(C.ds_qp_gdaki)
	offCQFlags        = int(C.ds_cq_gdaki_flags)
	extSize           = int(C.ds_ext_size)
	offExtError       = int(C.ds_ext_error)
	offExtPollTimeout = int(C.ds_ext_poll_timeout)
	offExtReserved    = int(C.ds_ext_reserved)
	offErrStatus      = int(C.ds_err_status)
	offErrSyndrome    = int(C.ds_err_syndrome)
	offErrVendor      = int(C.ds_err_vendor_syndrome)
	offErrHW          = int(C.ds_err_hw_syndrome)
	offErrHWType      = int(C.ds_err_hw_syndrome_type)
	offErrCQEOpcode   = int(C.ds_err_cqe_opcode)
	offErrWQEOpcode   = int(C.ds_err_wqe_opcode)
	offErrWQECounter  = int(C.ds_err_wqe_counter)
	offErrReserved    = int(C.ds_err_reserved)
	offErrWQEIndex    = int(C.ds_err_wqe_index)
)

// QPErrorSize is sizeof(struct gdaki_dev_qp_error).
const QPErrorSize = int(C.ds_err_size)

// qpErrWriting is the status of a record device code is writing
// (GDAKI_DEV_QP_ERROR_BUSY).
const qpErrWriting = uint32(C.GDAKI_DEV_QP_ERROR_BUSY)

// Values of gdaki_dev_qp_error.status (enum gdaki_dev_qp_error_status).
const (
	QPErrNone    = uint32(C.ds_err_ok)
	QPErrCQE     = uint32(C.ds_err_cqe)
	QPErrTimeout = uint32(C.ds_err_timeout)
)

// CQFlagInQP is GDAKI_DEV_CQ_FLAG_IN_QP: the CQ is embedded in a device QP
// (its cq_sq, or its cq_rq with CQFlagRQ too), so device polls use the QP's
// error record and poll bound.
const CQFlagInQP = uint8(C.ds_cq_flag_in_qp)

// CQFlagRQ is GDAKI_DEV_CQ_FLAG_RQ: with CQFlagInQP, the CQ is the QP's
// cq_rq.
const CQFlagRQ = uint8(C.ds_cq_flag_rq)

// Offsets exported for code that touches one field of a device QP in place
// (the CPU helper reads sq_wqe_pi; reset rewrites the indices; the error
// query reads the record; the poll bound is written between kernels).
const (
	OffsetSQWQEPI     = offSQWQEPI
	OffsetCQSQ        = offCQSQ
	OffsetCQRQ        = offCQRQ
	OffsetNICHandler  = offNICHandler
	OffsetQPError     = offExt + offExtError
	OffsetPollTimeout = offExt + offExtPollTimeout
)

// Offsets of the fields device code and the host's in-place accessors
// touch besides those above: the reservation and readiness indexes, the SQ
// lock word, and, inside struct doca_gpu_dev_verbs_cq, the consumer index,
// the reserved-CQE count and the extension flag byte.
const (
	OffsetSQRsvdIndex  = offSQRsvdIndex
	OffsetSQReadyIndex = offSQReadyIndex
	OffsetSQLock       = offSQLock
	OffsetRQWQEPI      = offRQWQEPI
	OffsetRQRsvdIndex  = offRQRsvdIndex
	OffsetRQReadyIndex = offRQReadyIndex
	OffsetRQLock       = offRQLock
	OffsetCQECI        = offCQECI   // relative to the CQ
	OffsetCQERsvd      = offCQERsvd // relative to the CQ
	OffsetCQFlags      = offCQFlags // relative to the CQ
)

// Field is one entry of the layout table: Name is "struct.field" with its
// offset and size, "struct" with offset 0 and sizeof, or "struct.align" with
// offset 0 and _Alignof as the size. Structs declared with typedef appear
// under the typedef name.
type Field struct {
	Name   string
	Offset uintptr
	Size   uintptr
}

// Layout returns the offsets, sizes and alignments of every struct of the
// shared device header that kernels, the NIC or Go code rely on (the device
// QP and CQ, the extension area and error record, the 64-byte WQE view, the
// mlx5 WQE segments, the masked-atomic operands, the CQE and error CQE), as
// the C compiler lays them out. This table and the constants of this
// package are the only place the Go side learns the layout.
func Layout() []Field {
	var p *C.struct_ds_field
	n := int(C.ds_layout(&p))
	fields := unsafe.Slice(p, n)
	out := make([]Field, n)
	for i, f := range fields {
		out[i] = Field{Name: C.GoString(f.name), Offset: uintptr(f.offset), Size: uintptr(f.size)}
	}
	return out
}

// LayoutOf returns the table entry called name ("doca_gpu_dev_verbs_qp.cq_sq",
// "doca_gpu_dev_verbs_cq", ...).
func LayoutOf(name string) (Field, bool) {
	for _, f := range Layout() {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}
