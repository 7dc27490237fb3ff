package devhost

// #include "families.h"
import "C"

// The family corpus (cuda/test/corpus): kernels written the way users of each DOCA GPUNetIO
// family write them, compiled as host C++. The SDK-style ones (SDK 3.2, 3.3, 3.4) are built with
// GDAKI_DOCA_FAMILY_SDK and flat includes, the open-source ones (GPUNetIO 2.0/3.0, NCCL's copy)
// without it and with sub-directory includes. Each call runs the corpus function as it is: the
// ones that wait block until the completion arrives (or the QP's poll bound runs out).

// SDK32PutWait: put<GPU, AUTO, THREAD>, then wait(qp, &ticket). Returns the ticket.
func (q *QP) SDK32PutWait(raddr, laddr Addr, size uint64) uint64 {
	return uint64(C.devhost_sdk32_put_wait(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint64_t(size)))
}

// SDK32GetWait: get, then get_wait(qp, daddr, &ticket), with MCST when the QP's need_mcst says
// so. Returns the get's ticket.
func (q *QP) SDK32GetWait(raddr, laddr Addr, size uint64, daddr Addr) uint64 {
	return uint64(C.devhost_sdk32_get_wait(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint64_t(size), C.uint64_t(daddr.Addr), C.uint32_t(daddr.Key)))
}

// SDK33WriteLowLevel builds one RDMA WRITE with the SDK's spellings (EXCLUSIVE sharing) and
// submits it through submit_db<EXCL, GPU, CODE_OPT_DEFAULT>. It returns the WQE's fm_ce_se byte as
// struct doca_gpu_dev_verbs_wqe_ctrl_seg reads it (0xff if the opcode read back is wrong) and the
// WQE index.
func (q *QP) SDK33WriteLowLevel(raddr, laddr Addr, size uint32) (fmCeSe uint32, ticket uint64) {
	var t C.uint64_t
	f := C.devhost_sdk33_write_lowlevel(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint32_t(size), &t)
	return uint32(f), uint64(t)
}

// SDK33PutCounter: put_counter<GPU, AUTO, EXEC_SCOPE_THREAD>, then wait(companion).
func (q *QP) SDK33PutCounter(raddr, laddr Addr, size uint64, companion *QP, craddr, claddr Addr, val uint64) {
	C.devhost_sdk33_put_counter(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint64_t(size), companion.p, C.uint64_t(craddr.Addr), C.uint32_t(craddr.Key),
		C.uint64_t(claddr.Addr), C.uint32_t(claddr.Key), C.uint64_t(val))
}

// SDK33PSignal: p_signal<uint64_t, ADD, EXEC_SCOPE_THREAD, GPU, AUTO>, then wait(qp, &ticket).
func (q *QP) SDK33PSignal(raddr Addr, value uint64, sraddr, sladdr Addr, sigVal uint64) uint64 {
	return uint64(C.devhost_sdk33_p_signal(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(value),
		C.uint64_t(sraddr.Addr), C.uint32_t(sraddr.Key), C.uint64_t(sladdr.Addr), C.uint32_t(sladdr.Key),
		C.uint64_t(sigVal)))
}

// SDK34PutNOP: a put naming CPU_PROXY_NO_DBR when the QP carries it (AUTO otherwise), then a NOP
// waited for by pointer. Returns the NOP's ticket.
func (q *QP) SDK34PutNOP(raddr, laddr Addr, size uint64) uint64 {
	return uint64(C.devhost_sdk34_put_nop(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint64_t(size)))
}

// OSPutWait: put with a trailing code option (CPU_PROXY_UPDATE_PI), then wait(qp, ticket).
func (q *QP) OSPutWait(raddr, laddr Addr, size uint64) uint64 {
	return uint64(C.devhost_os_put_wait(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint64_t(size)))
}

// OSPutCounter: put_counter with a trailing code option, then wait(companion).
func (q *QP) OSPutCounter(raddr, laddr Addr, size uint64, companion *QP, craddr, claddr Addr, val uint64) {
	C.devhost_os_put_counter(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint64_t(size), companion.p, C.uint64_t(craddr.Addr), C.uint32_t(craddr.Key),
		C.uint64_t(claddr.Addr), C.uint32_t(claddr.Key), C.uint64_t(val))
}

// OSWriteFenced builds an RDMA WRITE with CQ_UPDATE | the open-source FENCE (EXCLUSIVE) and
// submits it; returns fm_ce_se as written and the WQE index.
func (q *QP) OSWriteFenced(raddr, laddr Addr, size uint32) (fmCeSe uint32, ticket uint64) {
	var t C.uint64_t
	f := C.devhost_os_write_fenced(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint32_t(size), &t)
	return uint32(f), uint64(t)
}

// NCCLGetMCST: get, doca_gpu_dev_verbs_mcst (a DUMP), wait on the DUMP by value. Returns the
// DUMP's ticket.
func (q *QP) NCCLGetMCST(raddr, laddr Addr, size uint64, daddr Addr) uint64 {
	return uint64(C.devhost_nccl_get_mcst(q.p, C.uint64_t(raddr.Addr), C.uint32_t(raddr.Key), C.uint64_t(laddr.Addr),
		C.uint32_t(laddr.Key), C.uint64_t(size), C.uint64_t(daddr.Addr), C.uint32_t(daddr.Key)))
}

// Family selects how a build of the headers numbers NIC handlers.
type Family int

const (
	FamilyOpen Family = iota // the default: the open-source values
	FamilySDK                // GDAKI_DOCA_FAMILY_SDK: the SDK's values
)

// NICHandlerValue is the value of a NIC handler enumerator (which: 0 AUTO, 1 CPU_PROXY,
// 2 GPU_SM_DB, 3 GPU_SM_BF, 4 GPU_SM_NO_DBR, 5 CPU_PROXY_NO_DBR) in a build of family f; -1 for
// another which.
func NICHandlerValue(f Family, which int) int {
	if f == FamilySDK {
		return int(C.devhost_sdk_nic_handler_value(C.int(which)))
	}
	return int(C.devhost_os_nic_handler_value(C.int(which)))
}

// QPNICHandler is gdaki_dev_qp_nic_handler(qp) in a build of family f: the QP's handler in that
// build's numbering.
func (q *QP) QPNICHandler(f Family) int {
	if f == FamilySDK {
		return int(C.devhost_sdk_qp_nic_handler(q.p))
	}
	return int(C.devhost_os_qp_nic_handler(q.p))
}
