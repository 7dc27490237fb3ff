package devhost

// #include "devhost.h"
import "C"

import (
	"errors"
	"fmt"
	"syscall"
)

// Sharing is enum doca_gpu_dev_verbs_resource_sharing_mode.
type Sharing int

// Sharing modes.
const (
	SharingExclusive Sharing = 0
	SharingCTA       Sharing = 1
	SharingGPU       Sharing = 2
)

// Handler is enum doca_gpu_dev_verbs_nic_handler.
type Handler int

// NIC handlers.
const (
	HandlerAuto       Handler = 0
	HandlerCPUProxy   Handler = 1
	HandlerGPUSMDB    Handler = 2
	HandlerGPUSMBF    Handler = 6
	HandlerGPUSMNoDBR Handler = 10
)

// CodeOpt is a set of enum doca_gpu_dev_verbs_gpu_code_opt flags.
type CodeOpt uint32

// Code options.
const (
	CodeOptDefault               CodeOpt = 0
	CodeOptAsyncStoreRelease     CodeOpt = 1 << 0
	CodeOptSkipAvailabilityCheck CodeOpt = 1 << 1
	CodeOptSkipDBRinging         CodeOpt = 1 << 2
	CodeOptCPUProxyUpdatePI      CodeOpt = 1 << 3
)

// SignalOp is enum doca_gpu_dev_verbs_signal_op: ADD, or the SET extension.
type SignalOp int

// Signal operations.
const (
	SignalAdd SignalOp = SignalOp(C.DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD)
	SignalSet SignalOp = SignalOp(C.GDAKI_VERBS_SIGNAL_OP_SET)
)

// ReadyMode is enum doca_gpu_dev_verbs_qp_ready_mode.
type ReadyMode int

// Ready modes.
const (
	ReadyDefault   ReadyMode = 0
	ReadyAtomicCAS ReadyMode = 1
	ReadyLdSt      ReadyMode = 2
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
	CtrlFenceFlag    = uint32(C.DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FENCE)
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
