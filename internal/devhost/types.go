package devhost

// #include "devhost.h"
import "C"

import (
	"errors"
	"fmt"
	"syscall"
)

// The enumerations below take their values from the device header through cgo: the header is
// their one definition.

// Sharing is enum doca_gpu_dev_verbs_resource_sharing_mode.
type Sharing int

// Sharing modes.
const (
	SharingExclusive = Sharing(C.DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE)
	SharingCTA       = Sharing(C.DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA)
	SharingGPU       = Sharing(C.DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU)
)

// Handler is enum doca_gpu_dev_verbs_nic_handler.
type Handler int

// NIC handlers.
const (
	HandlerAuto       = Handler(C.DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO)
	HandlerCPUProxy   = Handler(C.DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY)
	HandlerGPUSMDB    = Handler(C.DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB)
	HandlerGPUSMBF    = Handler(C.DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF)
	HandlerGPUSMNoDBR = Handler(C.DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR)
)

// CodeOpt is a set of enum doca_gpu_dev_verbs_gpu_code_opt flags.
type CodeOpt uint32

// Code options.
const (
	CodeOptDefault               = CodeOpt(C.DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT)
	CodeOptAsyncStoreRelease     = CodeOpt(C.DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_ASYNC_STORE_RELEASE)
	CodeOptSkipAvailabilityCheck = CodeOpt(C.DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_AVAILABILITY_CHECK)
	CodeOptSkipDBRinging         = CodeOpt(C.DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_DB_RINGING)
	CodeOptCPUProxyUpdatePI      = CodeOpt(C.DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_CPU_PROXY_UPDATE_PI)
)

// SignalOp is enum doca_gpu_dev_verbs_signal_op: ADD, or the SET extension.
type SignalOp int

// Signal operations.
const (
	SignalAdd = SignalOp(C.DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD)
	SignalSet = SignalOp(C.GDAKI_VERBS_SIGNAL_OP_SET)
)

// ReadyMode is enum doca_gpu_dev_verbs_qp_ready_mode.
type ReadyMode int

// Ready modes.
const (
	ReadyDefault   = ReadyMode(C.DOCA_GPUNETIO_VERBS_READY_MODE_DEFAULT)
	ReadyAtomicCAS = ReadyMode(C.DOCA_GPUNETIO_VERBS_READY_MODE_ATOMIC_CAS)
	ReadyLdSt      = ReadyMode(C.DOCA_GPUNETIO_VERBS_READY_MODE_LD_ST)
)

// Ctrl-segment flag values (enum doca_gpu_dev_verbs_wqe_ctrl_flags) and opcodes used by the builders.
const (
	CtrlCQUpdate = uint32(C.DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE)
	CtrlFence    = uint32(C.DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FENCE)

	OpNOP            = uint32(C.DOCA_GPUNETIO_IB_MLX5_OPCODE_NOP)
	OpRDMAWrite      = uint32(C.DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE)
	OpRDMAWriteImm   = uint32(C.DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE_IMM)
	OpRDMARead       = uint32(C.DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_READ)
	OpAtomicCS       = uint32(C.DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_CS)
	OpAtomicFA       = uint32(C.DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_FA)
	OpAtomicMaskedCS = uint32(C.DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_MASKED_CS)
	OpAtomicMaskedFA = uint32(C.DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_MASKED_FA)
	OpWait           = uint32(C.DOCA_GPUNETIO_IB_MLX5_OPCODE_WAIT)
	OpDump           = uint32(C.DOCA_GPUNETIO_IB_MLX5_OPCODE_DUMP)

	CQEOpReq     = uint8(C.DOCA_GPUNETIO_IB_MLX5_CQE_REQ)
	CQEOpReqErr  = uint8(C.DOCA_GPUNETIO_IB_MLX5_CQE_REQ_ERR)
	CQEOpRespErr = uint8(C.DOCA_GPUNETIO_IB_MLX5_CQE_RESP_ERR)
	CQEOpInvalid = uint8(C.DOCA_GPUNETIO_IB_MLX5_CQE_INVALID)
)

// Addr is struct doca_gpu_dev_verbs_addr: an address and its memory key, already big-endian.
type Addr struct {
	Addr uint64
	Key  uint32
}

// ErrTimeout is returned when a bounded host-side wait expires.
var ErrTimeout = errors.New("devhost: timed out")

// pollError converts a device poll status (0, -EIO, -ETIMEDOUT, EBUSY) into an error naming the
// operation.
func pollError(op string, index uint64, status C.int) error {
	switch {
	case status == 0:
		return nil
	case status == -C.int(syscall.EIO):
		return fmt.Errorf("devhost: %s %d: error CQE: %w", op, index, syscall.EIO)
	case status == C.int(syscall.EBUSY):
		return fmt.Errorf("devhost: %s %d: completion not visible: %w", op, index, syscall.EBUSY)
	case status == -C.int(syscall.ETIMEDOUT):
		return fmt.Errorf("devhost: %s %d: the QP's poll bound ran out: %w", op, index, syscall.ETIMEDOUT)
	default:
		return fmt.Errorf("devhost: %s %d: unexpected status %d: %w", op, index, int(status), syscall.EINVAL)
	}
}

func (s Sharing) valid() bool { return s == SharingExclusive || s == SharingCTA || s == SharingGPU }

func (h Handler) valid() bool {
	switch h {
	case HandlerAuto, HandlerCPUProxy, HandlerGPUSMDB, HandlerGPUSMBF, HandlerGPUSMNoDBR:
		return true
	}
	return false
}
