package devstruct

/*
#cgo CFLAGS: -I${SRCDIR}/../../cuda/include
#include <stddef.h>
#include "common/doca_gpunetio_verbs_dev.h"

typedef struct doca_gpu_dev_verbs_qp ds_qp;
typedef struct doca_gpu_dev_verbs_cq ds_cq;
typedef struct gdaki_dev_qp_ext ds_ext;
typedef struct gdaki_dev_qp_error ds_err;

enum {
	ds_qp_size = sizeof(ds_qp),
	ds_qp_align = _Alignof(ds_qp),
	ds_cq_size = sizeof(ds_cq),
	ds_cq_align = _Alignof(ds_cq),

	ds_qp_sq_rsvd_index = offsetof(ds_qp, sq_rsvd_index),
	ds_qp_sq_ready_index = offsetof(ds_qp, sq_ready_index),
	ds_qp_sq_wqe_pi = offsetof(ds_qp, sq_wqe_pi),
	ds_qp_sq_num = offsetof(ds_qp, sq_num),
	ds_qp_sq_num_shift8 = offsetof(ds_qp, sq_num_shift8),
	ds_qp_sq_num_shift8_be = offsetof(ds_qp, sq_num_shift8_be),
	ds_qp_sq_num_shift8_be_1ds = offsetof(ds_qp, sq_num_shift8_be_1ds),
	ds_qp_sq_num_shift8_be_2ds = offsetof(ds_qp, sq_num_shift8_be_2ds),
	ds_qp_sq_num_shift8_be_3ds = offsetof(ds_qp, sq_num_shift8_be_3ds),
	ds_qp_sq_num_shift8_be_4ds = offsetof(ds_qp, sq_num_shift8_be_4ds),
	ds_qp_sq_num_shift8_be_5ds = offsetof(ds_qp, sq_num_shift8_be_5ds),
	ds_qp_sq_lock = offsetof(ds_qp, sq_lock),
	ds_qp_sq_wqe_num = offsetof(ds_qp, sq_wqe_num),
	ds_qp_sq_wqe_mask = offsetof(ds_qp, sq_wqe_mask),
	ds_qp_sq_wqe_daddr = offsetof(ds_qp, sq_wqe_daddr),
	ds_qp_sq_dbrec = offsetof(ds_qp, sq_dbrec),
	ds_qp_sq_db = offsetof(ds_qp, sq_db),
	ds_qp_reserved1 = offsetof(ds_qp, reserved1),
	ds_qp_reserved2 = offsetof(ds_qp, reserved2),
	ds_qp_cq_sq = offsetof(ds_qp, cq_sq),
	ds_qp_reserved3 = offsetof(ds_qp, reserved3),
	ds_qp_nic_handler = offsetof(ds_qp, nic_handler),
	ds_qp_mem_type = offsetof(ds_qp, mem_type),

	ds_cq_cqe_daddr = offsetof(ds_cq, cqe_daddr),
	ds_cq_cq_num = offsetof(ds_cq, cq_num),
	ds_cq_cqe_num = offsetof(ds_cq, cqe_num),
	ds_cq_dbrec = offsetof(ds_cq, dbrec),
	ds_cq_cqe_ci = offsetof(ds_cq, cqe_ci),
	ds_cq_cqe_mask = offsetof(ds_cq, cqe_mask),
	ds_cq_cqe_size = offsetof(ds_cq, cqe_size),
	ds_cq_reserved1 = offsetof(ds_cq, reserved1),
	ds_cq_cqe_rsvd = offsetof(ds_cq, cqe_rsvd),
	ds_cq_mem_type = offsetof(ds_cq, mem_type),
	ds_cq_reserved2 = offsetof(ds_cq, reserved2),

	ds_qp_gdaki = offsetof(ds_qp, gdaki),
	ds_cq_gdaki_flags = offsetof(ds_cq, gdaki_flags),
	ds_ext_size = sizeof(ds_ext),
	ds_ext_error = offsetof(ds_ext, error),
	ds_ext_poll_timeout = offsetof(ds_ext, poll_timeout),
	ds_ext_reserved = offsetof(ds_ext, reserved),
	ds_err_size = sizeof(ds_err),
	ds_err_status = offsetof(ds_err, status),
	ds_err_syndrome = offsetof(ds_err, syndrome),
	ds_err_vendor_syndrome = offsetof(ds_err, vendor_syndrome),
	ds_err_hw_syndrome = offsetof(ds_err, hw_syndrome),
	ds_err_hw_syndrome_type = offsetof(ds_err, hw_syndrome_type),
	ds_err_cqe_opcode = offsetof(ds_err, cqe_opcode),
	ds_err_wqe_opcode = offsetof(ds_err, wqe_opcode),
	ds_err_wqe_counter = offsetof(ds_err, wqe_counter),
	ds_err_reserved = offsetof(ds_err, reserved),
	ds_err_wqe_index = offsetof(ds_err, wqe_index),
	ds_err_ok = GDAKI_DEV_QP_OK,
	ds_err_cqe = GDAKI_DEV_QP_ERR_CQE,
	ds_err_timeout = GDAKI_DEV_QP_ERR_TIMEOUT,
	ds_cq_flag_in_qp = GDAKI_DEV_CQ_FLAG_IN_QP,

	ds_mem_type_gpu = DOCA_GPUNETIO_VERBS_MEM_TYPE_GPU,
	ds_mem_type_host = DOCA_GPUNETIO_VERBS_MEM_TYPE_HOST,
};
*/
import "C"

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
	offQPReserved1   = int(C.ds_qp_reserved1)
	offQPReserved2   = int(C.ds_qp_reserved2)
	offCQSQ          = int(C.ds_qp_cq_sq)
	offQPReserved3   = int(C.ds_qp_reserved3)
	offNICHandler    = int(C.ds_qp_nic_handler)
	offQPMemType     = int(C.ds_qp_mem_type)
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

// Offsets inside the extension area (struct gdaki_dev_qp_ext, in the QP's
// reserved2 bytes) and its error record (struct gdaki_dev_qp_error).
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

// CQFlagInQP is GDAKI_DEV_CQ_FLAG_IN_QP: the CQ is the cq_sq of a device QP,
// so device polls use the QP's error record and poll bound.
const CQFlagInQP = uint8(C.ds_cq_flag_in_qp)

// Offsets exported for code that touches one field of a device QP in place
// (the CPU helper reads sq_wqe_pi; reset rewrites the indices; the error
// query reads the record; the poll bound is written between kernels).
const (
	OffsetSQWQEPI     = offSQWQEPI
	OffsetCQSQ        = offCQSQ
	OffsetNICHandler  = offNICHandler
	OffsetQPError     = offExt + offExtError
	OffsetPollTimeout = offExt + offExtPollTimeout
)
