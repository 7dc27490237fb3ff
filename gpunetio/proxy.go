package gpunetio

import (
	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mmio"
)

// ProgressProxy is one step of the CPU helper
// (doca_gpu_verbs_cpu_proxy_progress):
//
// Mode A (resolved handler CPU_PROXY or CPU_PROXY_NO_DBR): read the 64-bit mailbox the GPU
// writes its producer index to; when its low 32 bits changed, ring the
// doorbell {BE32(pi << 8), BE32(qpn << 8)} as one 64-bit store — with
// VALID_DBR (and SW-emulated, whose QP is DBR_VALID) as doorbell, DBR word
// BE32(pi & 0xffff), write barrier, doorbell again; with NO_DBR_HW the
// doorbell once (CPU_PROXY_NO_DBR always runs so). progressed is true.
//
// Mode B (GPU-SM handler with SW-emulated no-DBR): read sq_wqe_pi of the
// device QP through its CPU mapping; when it changed, write the DBR,
// barrier, ring once. progressed is always false, as in DOCA.
//
// ErrNotSupported for a QP that needs no CPU helper; ErrBadState in mode B
// before the device QP exists (DeviceQP / ExportQPs) and after unexport.
// Calls on one QP are serialised; a QP may be progressed by one Service and
// directly at the same time.
func (q *QP) ProgressProxy() (progressed bool, err error) {
	const op = "doca_gpu_verbs_cpu_proxy_progress"
	if err := q.made(op); err != nil {
		return false, err
	}
	if !q.cpuAssist {
		return false, newErr(op, ErrNotSupported, "QP 0x%x uses %v with %v: no CPU helper needed", q.qpn, q.handler, q.ext)
	}
	q.progMu.Lock()
	defer q.progMu.Unlock()
	src := q.cpuDB.Load()
	if src == 0 {
		return false, newErr(op, ErrBadState, "QP 0x%x has no device QP to watch (call DeviceQP first) or is unexported", q.qpn)
	}
	pi := uint32(mmio.Load64(hostPtr(src)))
	if pi == q.piLast {
		return false, nil
	}
	db := mlx5.SQDoorbellPI(q.qpn, pi).Uint64()
	dbr := mlx5.BE32Native(pi & 0xffff)
	if q.handler.cpuProxy() {
		if q.ext != SendNoDBRHW {
			mmio.Store64(hostPtr(q.sqDB), db)
			mmio.Store32(hostPtr(q.sqDBRec), dbr)
			mmio.WriteBarrier()
		}
		mmio.Store64(hostPtr(q.sqDB), db)
		q.piLast = pi
		return true, nil
	}
	mmio.Store32(hostPtr(q.sqDBRec), dbr)
	mmio.WriteBarrier()
	mmio.Store64(hostPtr(q.sqDB), db)
	q.piLast = pi
	return false, nil
}

// ProxyMailbox returns the CPU address of the 8-byte mailbox of a CPU_PROXY
// QP (0 otherwise): what the GPU stores its producer index to, for host code
// that plays the GPU in tests.
func (q *QP) ProxyMailbox() uintptr {
	if q == nil || !q.handler.cpuProxy() {
		return 0
	}
	return q.cpuDB.Load()
}
