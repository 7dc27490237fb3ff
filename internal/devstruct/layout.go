package devstruct

/*
#cgo CFLAGS: -I${SRCDIR}/../../cuda/include
#include <stddef.h>
#include "common/doca_gpunetio_verbs_dev.h"

typedef struct doca_gpu_dev_verbs_qp ds_qp;
typedef struct doca_gpu_dev_verbs_cq ds_cq;

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

// Offsets exported for code that touches one field of a device QP in place
// (the CPU helper reads sq_wqe_pi; reset rewrites the indices).
const (
	OffsetSQWQEPI    = offSQWQEPI
	OffsetCQSQ       = offCQSQ
	OffsetNICHandler = offNICHandler
)
