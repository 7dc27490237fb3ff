package gpunetio

//go:generate go run ../internal/enumgen

import "fmt"

// MemType is where MemAlloc places memory (enum doca_gpu_mem_type).
type MemType uint32

const (
	// MemGPU is device memory the CPU cannot access.
	MemGPU MemType = 0
	// MemGPUCPU is device memory with a CPU mapping through GDRCopy (BAR1).
	MemGPUCPU MemType = 1
	// MemCPUGPU is pinned host memory mapped into the GPU.
	MemCPUGPU MemType = 2
)

// NICHandler says who rings a QP's doorbell (enum doca_gpu_dev_verbs_nic_handler).
type NICHandler uint32

const (
	NICHandlerAuto       NICHandler = 0  // resolved at export: GPU_SM_DB if the GPU can map the UAR, else CPU_PROXY
	NICHandlerCPUProxy   NICHandler = 1  // the GPU posts a producer index, a CPU thread rings
	NICHandlerGPUSMDB    NICHandler = 2  // the GPU rings the doorbell (and writes the DBR)
	NICHandlerGPUSMBF    NICHandler = 6  // GPU SM with a BlueFlame UAR
	NICHandlerGPUSMNoDBR NICHandler = 10 // the GPU rings, no doorbell record
	// NICHandlerCPUProxyNoDBR (DOCA SDK 3.4): a CPU thread rings the doorbell of
	// a QP without a doorbell record (NO_DBR_EXT), CPU_PROXY|NO_DBR.
	NICHandlerCPUProxyNoDBR NICHandler = 9
	nicHandlerMax           NICHandler = 11
)

// The flag bits NIC handler values are made of
// (DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_*): GPU_SM_BF = GPU_SM|BF,
// GPU_SM_NO_DBR = GPU_SM|NO_DBR.
const (
	NICFlagCPUProxy NICHandler = 1 << 0
	NICFlagGPUSM    NICHandler = 1 << 1
	NICFlagBF       NICHandler = 1 << 2
	NICFlagNoDBR    NICHandler = 1 << 3
)

// ParseNICHandler accepts the names String returns (any case) and the
// numbers the reference examples take on their -p flag.
func ParseNICHandler(s string) (NICHandler, error) {
	for _, h := range []NICHandler{NICHandlerAuto, NICHandlerCPUProxy, NICHandlerGPUSMDB, NICHandlerGPUSMBF, NICHandlerGPUSMNoDBR, NICHandlerCPUProxyNoDBR} {
		if equalFold(s, h.String()) || s == fmt.Sprint(uint32(h)) {
			return h, nil
		}
	}
	return 0, newErr("ParseNICHandler", ErrInvalidValue, "%q is not a NIC handler (AUTO, CPU_PROXY, GPU_SM_DB, GPU_SM_BF, GPU_SM_NO_DBR, CPU_PROXY_NO_DBR)", s)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// SendDBRModeExt is how the doorbell record is kept (enum doca_gpu_verbs_send_dbr_mode_ext).
type SendDBRModeExt uint32

const (
	SendDBRValid        SendDBRModeExt = 0 // DBR written on every submit
	SendNoDBRHW         SendDBRModeExt = 1 // ConnectX-8 hardware no-DBR mode
	SendNoDBRSWEmulated SendDBRModeExt = 2 // GPU skips the DBR, a CPU helper writes it (needs GDRCopy)
)

// MemRegType says how the high-level helpers register GPU UMEMs
// (enum doca_gpu_verbs_mem_reg_type).
type MemRegType uint32

const (
	MemRegDefault     MemRegType = 0 // dma-buf, falling back to nvidia-peermem
	MemRegCUDADmabuf  MemRegType = 1 // dma-buf only
	MemRegCUDAPeermem MemRegType = 2 // nvidia-peermem only
)

// Device-side enumerations, with their exact values, for kernel launch
// parameters built from Go.

// ExecScope is enum doca_gpu_dev_verbs_exec_scope.
type ExecScope uint32

const (
	ExecScopeThread ExecScope = 0
	ExecScopeWarp   ExecScope = 1
)

// SyncScope is enum doca_gpu_dev_verbs_sync_scope.
type SyncScope uint32

const (
	SyncScopeSys    SyncScope = 0
	SyncScopeGPU    SyncScope = 1
	SyncScopeCTA    SyncScope = 2
	SyncScopeThread SyncScope = 3
)

// SharingMode is enum doca_gpu_dev_verbs_resource_sharing_mode.
type SharingMode uint32

const (
	SharingExclusive SharingMode = 0
	SharingCTA       SharingMode = 1
	SharingGPU       SharingMode = 2
)

// CodeOpt is the bit set enum doca_gpu_dev_verbs_gpu_code_opt.
type CodeOpt uint32

const (
	CodeOptDefault               CodeOpt = 0
	CodeOptAsyncStoreRelease     CodeOpt = 1 << 0
	CodeOptSkipAvailabilityCheck CodeOpt = 1 << 1
	CodeOptSkipDBRinging         CodeOpt = 1 << 2
	CodeOptCPUProxyUpdatePI      CodeOpt = 1 << 3
)
