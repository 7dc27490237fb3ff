package gpunetio

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/verbs"
)

// ExportConfig is what doca_gpu_verbs_export_qp takes besides the QP and CQ.
type ExportConfig struct {
	NICHandler     NICHandler
	SendDBRModeExt SendDBRModeExt
	// SQUMemDevPtr is accepted for parity with DOCA and ignored: the SQ
	// address comes from the verbs QP.
	SQUMemDevPtr DevPtr
}

// QP is a verbs QP exported to the GPU (struct doca_gpu_verbs_qp). It keeps
// the host template of the device QP, the CPU-proxy state and, once
// DeviceQP or GPU.ExportQPs ran, the device copy.
type QP struct {
	g       *GPU
	qp      *verbs.QP
	cq      *verbs.CQ
	rqCQ    *verbs.CQ // nil: exported without its receive queue
	ext     SendDBRModeExt
	handler NICHandler // resolved

	mu      sync.Mutex
	tmpl    devstruct.QP
	closed  bool
	holds   []*verbs.Hold // on the verbs QP and CQ while exported
	proxy   *Mem          // CPU proxy mailbox (8 bytes, CPU_GPU)
	uarDev  DevPtr        // exported doorbell (GPU-SM handlers)
	dev     *Mem          // device copy from DeviceQP
	devPtr  DevPtr        // the device copy in use (own or in an array)
	arr     *DevQPArray
	monitor int // services monitoring this QP
	lists   int // flat lists holding this QP's template

	// CPU assistance (proxy or SW-emulated DBR), read by ProgressProxy.
	cpuAssist bool
	qpn       uint32
	sqDB      uintptr // host doorbell register
	sqDBRec   uintptr // host send DBR word
	cpuDB     atomic.Uintptr
	progMu    sync.Mutex
	piLast    uint32
}

// ExportQP builds the exported handle and the host template of the device QP
// for qp, its send CQ and its receive CQ (doca_gpu_verbs_export_qp, whose
// cq_sq and cq_rq they are). Nothing is copied to the GPU until DeviceQP
// (or GPU.ExportQPs).
//
// rqCQ nil exports the send queue only (the receive-queue fields of the
// device QP stay zero; kernels must not post receives on it). With rqCQ,
// kernels post receives and wait for them (doca_gpu_dev_verbs_recv,
// doca_gpu_dev_verbs_recv_wait): rqCQ must be the QP's receive CQ and serve
// no other queue (not the send CQ), the QP's receive queue must hold
// 1..32768 entries of 16 bytes (one scatter entry, verbs.QPConfig.RecvMaxSGE
// 1) and rqCQ at least as many CQEs; its ring and the QP's doorbell record
// must be memory the GPU can write (device or CPU_GPU memory). The device
// QP's rq_dbrec is word 0 of the QP's doorbell record with every NIC
// handler: receives have no doorbell register, the NIC reads the record.
// need_mcst is set when the GPU does not see GPUDirect RDMA writes in order
// (CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING below OWNER).
//
// The export holds qp, sqCQ and rqCQ (verbs.QP.Hold, verbs.CQ.Hold) until Close:
// while exported, closing either (or what they use: their UAR, UMEMs, PD)
// fails with ErrInUse naming the export, so neither a kernel nor the CPU
// proxy can ring a freed doorbell page. A closed QP or CQ is refused
// (ErrBadState).
//
// NIC handler resolution: for every handler but CPU_PROXY the QP's doorbell
// register is exported to the GPU; if that fails an AUTO request falls back
// to CPU_PROXY, any other request fails. CPU_PROXY gets an 8-byte mailbox in
// CPU_GPU memory. AUTO then resolves to GPU_SM_NO_DBR for NO_DBR_EXT QPs or
// SW-emulated no-DBR, else GPU_SM_DB. CPU_PROXY_NO_DBR (DOCA SDK 3.4) is the
// CPU proxy for a NO_DBR_EXT QP: a mailbox as for CPU_PROXY, and the proxy
// rings the doorbell without a doorbell record (send DBR mode ext NO_DBR_HW,
// which the export implies when the config leaves VALID_DBR).
func (g *GPU) ExportQP(qp *verbs.QP, sqCQ, rqCQ *verbs.CQ, cfg ExportConfig) (*QP, error) {
	return g.exportQP("doca_gpu_verbs_export_qp", qp, sqCQ, rqCQ, cfg, "gpunetio.QP")
}

// exportQP is ExportQP; what names the exporting object in the holds.
func (g *GPU) exportQP(op string, qp *verbs.QP, sqCQ, rqCQ *verbs.CQ, cfg ExportConfig, what string) (_ *QP, err error) {
	if err := g.use(op); err != nil {
		return nil, err
	}
	if qp == nil || sqCQ == nil {
		return nil, newErr(op, ErrInvalidValue, "nil QP or CQ")
	}
	if cfg.NICHandler == NICHandlerCPUProxyNoDBR && cfg.SendDBRModeExt == SendDBRValid {
		cfg.SendDBRModeExt = SendNoDBRHW // the handler names the mode
	}
	q := &QP{g: g, qp: qp, cq: sqCQ, rqCQ: rqCQ, ext: cfg.SendDBRModeExt, qpn: qp.QPN()}
	defer func() {
		if err != nil {
			q.release()
			q.releaseHolds()
		}
	}()
	// Hold first: it refuses closed objects and keeps them open from here on.
	holder := fmt.Sprintf("%s export of QP 0x%x to %s", what, qp.QPN(), g.b.describe())
	holds := []interface {
		Hold(string) (*verbs.Hold, error)
	}{qp, sqCQ}
	if rqCQ != nil {
		holds = append(holds, rqCQ)
	}
	for _, h := range holds {
		hd, herr := h.Hold(holder)
		if herr != nil {
			return nil, wrapErr(op, codeOf(herr), herr, "QP 0x%x, CQ 0x%x", qp.QPN(), sqCQ.CQN())
		}
		q.holds = append(q.holds, hd)
	}
	if err := g.checkExport(op, qp, sqCQ, cfg); err != nil {
		return nil, err
	}
	if err := checkExportRQ(op, qp, sqCQ, rqCQ); err != nil {
		return nil, err
	}
	q.fillTemplate()
	if rqCQ != nil {
		if err := q.fillRQ(op); err != nil {
			return nil, err
		}
	}
	resolved, err := g.exportDoorbell(op, q, cfg)
	if err != nil {
		return nil, err
	}
	q.handler = resolved
	q.tmpl.NICHandler = uint32(resolved)
	track(q, "QP", holder)
	logf(LogDebug, "%s: QP 0x%x exported with %v, %v", op, qp.QPN(), resolved, cfg.SendDBRModeExt)
	return q, nil
}

// checkExport checks the NIC handler and send DBR mode against the QP and
// the GPU, and that the QP and CQ fit a device QP.
func (g *GPU) checkExport(op string, qp *verbs.QP, sqCQ *verbs.CQ, cfg ExportConfig) error {
	switch cfg.NICHandler {
	case NICHandlerAuto, NICHandlerCPUProxy, NICHandlerGPUSMDB, NICHandlerGPUSMBF, NICHandlerGPUSMNoDBR:
	case NICHandlerCPUProxyNoDBR:
		if cfg.SendDBRModeExt != SendNoDBRHW {
			return newErr(op, ErrInvalidValue, "NIC handler CPU_PROXY_NO_DBR needs send DBR mode ext NO_DBR_HW, not %v", cfg.SendDBRModeExt)
		}
	default:
		return newErr(op, ErrInvalidValue, "unknown NIC handler %v", cfg.NICHandler)
	}
	switch cfg.SendDBRModeExt {
	case SendDBRValid:
		if cfg.NICHandler == NICHandlerGPUSMNoDBR {
			return newErr(op, ErrInvalidValue, "NIC handler GPU_SM_NO_DBR needs a no-DBR send mode, not VALID_DBR")
		}
		if qp.SendDBRMode() != verbs.SendDBRValid {
			return newErr(op, ErrInvalidValue, "send DBR mode ext VALID_DBR needs a DBR_VALID QP, QP is %v", qp.SendDBRMode())
		}
	case SendNoDBRHW:
		if qp.SendDBRMode() != verbs.SendNoDBRExt {
			return newErr(op, ErrInvalidValue, "send DBR mode ext NO_DBR_HW needs a NO_DBR_EXT QP, QP is %v", qp.SendDBRMode())
		}
	case SendNoDBRSWEmulated:
		if err := g.b.gdrAvailable(); err != nil {
			return wrapErr(op, ErrInvalidValue, err, "send DBR mode ext NO_DBR_SW_EMULATED needs GDRCopy")
		}
	default:
		return newErr(op, ErrInvalidValue, "unknown send DBR mode ext %v", cfg.SendDBRModeExt)
	}
	if qp.SendCQ() != sqCQ {
		return newErr(op, ErrInvalidValue, "CQ %d is not the send CQ of QP 0x%x", sqCQ.CQN(), qp.QPN())
	}
	wq := qp.WQ()
	if wq.SQWQEBBs == 0 || wq.SQWQEBBs > 1<<15 {
		return newErr(op, ErrInvalidValue, "SQ of %d WQEBBs: the device QP holds 1..32768", wq.SQWQEBBs)
	}
	if _, entries, _ := sqCQ.Ring(); entries < wq.SQWQEBBs {
		logf(LogWarning, "%s: CQ %d has %d entries for %d SQ WQEBBs: GPU completion tracking needs one CQE per WQE", op, sqCQ.CQN(), entries, wq.SQWQEBBs)
	}
	return nil
}

// fillTemplate writes the SQ and CQ of the device QP template.
func (q *QP) fillTemplate() {
	qp, sqCQ := q.qp, q.cq
	wq := qp.WQ()
	ring, entries, _ := sqCQ.Ring()
	_, ciDBR, _ := sqCQ.Doorbells()
	t := &q.tmpl
	t.SetQPN(qp.QPN())
	t.SQWQENum = uint16(wq.SQWQEBBs)
	t.SQWQEMask = uint16(wq.SQWQEBBs - 1)
	t.SQWQEDAddr = uint64(wq.SQAddr)
	t.SQDBRec = uint64(qp.DBRAddr() + 4)
	t.MemType = devstruct.MemTypeGPU
	t.CQ = devstruct.CQ{CQEDAddr: uint64(ring), CQNum: sqCQ.CQN(), CQENum: entries, DBRec: uint64(ciDBR),
		CQEMask: entries - 1, CQESize: 64, Flags: devstruct.CQFlagInQP, MemType: devstruct.MemTypeGPU}
}

// maxRQEntries is the largest receive ring a device QP takes: device code
// keeps RQ indexes modulo 2^16 and needs the ring to be smaller than that.
const maxRQEntries = 1 << 15

// rqWQESize is the receive WQE the device code writes: one 16-byte scatter
// entry (DOCA_GPUNETIO_MLX5_WQE_RQ_SHIFT).
const rqWQESize = 16

// checkExportRQ checks the receive half of an export: a receive CQ needs a
// receive ring of 16-byte WQEs that it serves alone and that fits it.
func checkExportRQ(op string, qp *verbs.QP, sqCQ, rqCQ *verbs.CQ) error {
	if rqCQ == nil {
		return nil
	}
	wq := qp.WQ()
	switch {
	case rqCQ == sqCQ:
		return newErr(op, ErrInvalidValue, "receive CQ %d is the send CQ: device receives need a CQ of their own", rqCQ.CQN())
	case qp.RecvCQ() != rqCQ:
		return newErr(op, ErrInvalidValue, "CQ %d is not the receive CQ of QP 0x%x", rqCQ.CQN(), qp.QPN())
	case wq.RQEntries == 0:
		return newErr(op, ErrInvalidValue, "receive CQ %d given for QP 0x%x, which has no receive queue", rqCQ.CQN(), qp.QPN())
	case qp.Config().SRQ != nil:
		return newErr(op, ErrInvalidValue, "QP 0x%x receives through an SRQ: device receives need its own receive queue", qp.QPN())
	case wq.RQEntries > maxRQEntries || wq.RQEntries&(wq.RQEntries-1) != 0:
		return newErr(op, ErrInvalidValue, "receive queue of %d entries: the device QP takes a power of two up to %d", wq.RQEntries, maxRQEntries)
	case wq.RQWQESize != rqWQESize:
		return newErr(op, ErrInvalidValue, "receive WQEs of %d bytes: device receives write one %d-byte scatter entry (RecvMaxSGE 1)", wq.RQWQESize, rqWQESize)
	}
	if _, entries, _ := rqCQ.Ring(); entries < wq.RQEntries {
		return newErr(op, ErrInvalidValue, "receive CQ %d of %d entries is smaller than the receive queue (%d): device receive tickets need one CQE per receive", rqCQ.CQN(), entries, wq.RQEntries)
	}
	return nil
}

// fillRQ writes the receive queue, the receive CQ and need_mcst of the
// device QP template.
func (q *QP) fillRQ(op string) error {
	qp, rqCQ := q.qp, q.rqCQ
	wq := qp.WQ()
	ring, entries, _ := rqCQ.Ring()
	_, ciDBR, _ := rqCQ.Doorbells()
	ord, err := q.g.b.rdmaWritesOrdering()
	if err != nil {
		return wrapErr(op, ErrDriver, err, "query the GPUDirect RDMA write ordering of %s", q.g.b.describe())
	}
	t := &q.tmpl
	t.RQNum = qp.QPN()
	t.RQWQEDAddr = uint64(wq.RQAddr)
	t.RQWQENum = wq.RQEntries
	t.RQWQEMask = wq.RQEntries - 1
	t.RQDBRec = uint64(qp.DBRAddr()) // word 0: the receive counter
	t.RcvWQESize = wq.RQWQESize
	t.CQRQ = devstruct.CQ{CQEDAddr: uint64(ring), CQNum: rqCQ.CQN(), CQENum: entries, DBRec: uint64(ciDBR),
		CQEMask: entries - 1, CQESize: 64, Flags: devstruct.CQFlagInQP | devstruct.CQFlagRQ, MemType: devstruct.MemTypeGPU}
	t.NeedMCST = 0
	if ord < cuda.RDMAWritesOrderingOwner {
		t.NeedMCST = 1
	}
	return nil
}

// exportDoorbell decides who rings the QP's doorbell and sets it up: the
// GPU through the exported UAR, or (CPU_PROXY, or AUTO when the GPU cannot
// map the UAR) a CPU thread reading a mailbox the GPU writes. It returns
// the resolved NIC handler.
func (g *GPU) exportDoorbell(op string, q *QP, cfg ExportConfig) (NICHandler, error) {
	qp, t := q.qp, &q.tmpl
	dbHost := qp.DoorbellAddr()
	resolved := cfg.NICHandler
	if !cfg.NICHandler.cpuProxy() {
		d, uerr := g.ExportUAR(qp.UAR(), dbHost)
		switch {
		case uerr == nil:
			q.uarDev = d
			t.SQDB = uint64(d)
		case cfg.NICHandler == NICHandlerAuto:
			logf(LogWarning, "%s: QP 0x%x: GPU cannot map the doorbell, falling back to the CPU proxy: %v", op, qp.QPN(), uerr)
			resolved = NICHandlerCPUProxy
		default:
			return 0, uerr
		}
	}
	if resolved.cpuProxy() {
		m, merr := g.memAllocFor(fmt.Sprintf("the proxy mailbox of exported QP 0x%x", qp.QPN()), 8, 0, MemCPUGPU)
		if merr != nil {
			return 0, merr
		}
		q.proxy = m
		hostSlice(m.Host, 8)[0] = 0
		t.SQDB = uint64(m.Dev)
		q.cpuAssist, q.sqDB, q.sqDBRec = true, dbHost, qp.DBRAddr()+4
		q.cpuDB.Store(m.Host)
		return resolved, nil
	}
	if cfg.SendDBRModeExt == SendNoDBRSWEmulated {
		// Unlike DOCA, the helper also gets the QPN it needs for the doorbell.
		q.cpuAssist, q.sqDB, q.sqDBRec = true, dbHost, qp.DBRAddr()+4
	}
	if cfg.NICHandler == NICHandlerAuto {
		resolved = NICHandlerGPUSMDB
		if qp.SendDBRMode() == verbs.SendNoDBRExt || cfg.SendDBRModeExt == SendNoDBRSWEmulated {
			resolved = NICHandlerGPUSMNoDBR
		}
	}
	return resolved, nil
}

// releaseHolds lets the verbs QP and CQ close again.
func (q *QP) releaseHolds() {
	for _, h := range q.holds {
		h.Release()
	}
	q.holds = nil
}

// made refuses a nil QP and a zero value (one ExportQP did not return).
func (q *QP) made(op string) error {
	if q == nil {
		return newErr(op, ErrInvalidValue, "nil QP")
	}
	if q.g == nil {
		return newErr(op, ErrInvalidValue, "QP is a zero value, not one made by GPU.ExportQP")
	}
	return nil
}

// codeOf is the DOCA code of err (ErrDriver for an error without one).
func codeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ErrDriver
}

// release frees what the export made; mu need not be held (no sharing yet,
// or called from Close with mu held).
func (q *QP) release() error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	if q.proxy != nil {
		keep(q.proxy.free())
		q.proxy = nil
	}
	if q.uarDev != 0 {
		keep(q.g.UnexportUAR(q.uarDev))
		q.uarDev = 0
	}
	if q.dev != nil {
		keep(q.dev.free())
		q.dev = nil
	}
	q.cpuDB.Store(0)
	q.devPtr = 0
	return first
}

// Close unexports the QP (doca_gpu_verbs_unexport_qp): frees the mailbox,
// the device copy and the doorbell export, and releases the holds on the
// verbs QP and CQ, which may then be closed. It refuses with ErrInUse while
// a DevQPArray holding the QP is open, a FlatList copies its template or a
// Service monitors it. A second Close returns nil.
func (q *QP) Close() error {
	const op = "doca_gpu_verbs_unexport_qp"
	if err := q.made(op); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil
	}
	if q.arr != nil {
		return newErr(op, ErrInUse, "QP 0x%x is in a multi-QP export: close the DevQPArray first", q.qpn)
	}
	if q.lists > 0 {
		return newErr(op, ErrInUse, "QP 0x%x is in %d flat list(s): close them first", q.qpn, q.lists)
	}
	if q.monitor > 0 {
		return newErr(op, ErrInUse, "QP 0x%x is monitored by %d service(s)", q.qpn, q.monitor)
	}
	q.progMu.Lock()
	defer q.progMu.Unlock()
	if err := q.release(); err != nil {
		return err
	}
	q.releaseHolds()
	q.closed = true
	untrack(q)
	return nil
}

// DeviceQP returns the GPU address of the device QP to pass to kernels
// (doca_gpu_verbs_get_qp_dev). The first call allocates it (GPU memory, or
// GPU_CPU memory for SW-emulated no-DBR, so the CPU helper can read
// sq_wqe_pi) and copies the template; later calls return the same address.
// After GPU.ExportQPs it returns the QP's element of the array.
func (q *QP) DeviceQP() (DevPtr, error) {
	const op = "doca_gpu_verbs_get_qp_dev"
	if err := q.made(op); err != nil {
		return 0, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, newErr(op, ErrBadState, "QP is unexported")
	}
	if q.devPtr != 0 {
		return q.devPtr, nil
	}
	t := MemGPU
	if q.swEmulated() {
		t = MemGPUCPU
	}
	m, err := q.g.memAllocFor(fmt.Sprintf("the device QP of exported QP 0x%x", q.qpn), uintptr(devstruct.QPSize), 0, t)
	if err != nil {
		return 0, err
	}
	if err := q.g.b.memcpyHtoD(uintptr(m.Dev), q.tmpl.Encode()); err != nil {
		m.free()
		return 0, wrapErr(op, ErrDriver, err, "copy the device QP to %#x", m.Dev)
	}
	q.dev, q.devPtr = m, m.Dev
	if q.swEmulated() {
		q.cpuDB.Store(m.Host + uintptr(devstruct.OffsetSQWQEPI))
	}
	return q.devPtr, nil
}

// swEmulated: the CPU helper runs mode B (GPU-SM handler with SW-emulated
// no-DBR). With CPU_PROXY the mailbox protocol is used whatever the ext
// mode: the kernel writes the mailbox, and the helper runs the full proxy
// sequence on it.
func (q *QP) swEmulated() bool {
	return q.ext == SendNoDBRSWEmulated && q.handler != NICHandlerCPUProxy
}

// cpuProxy: a CPU thread rings the doorbell from the mailbox the GPU writes
// (CPU_PROXY, and CPU_PROXY_NO_DBR for a QP without a doorbell record).
func (h NICHandler) cpuProxy() bool {
	return h == NICHandlerCPUProxy || h == NICHandlerCPUProxyNoDBR
}

// template returns a copy of the host template of the device QP (the
// struct kernels receive; its layout is defined by the device headers, so it
// is not part of the Go API).
func (q *QP) template() devstruct.QP {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.tmpl
}

// The getters return values fixed at export, and zero values for a nil or
// zero QP.

// NICHandler is the resolved handler (never AUTO).
func (q *QP) NICHandler() NICHandler {
	if q == nil {
		return 0
	}
	return q.handler
}

// CPUAssisted reports whether a CPU must run ProgressProxy for this QP (CPU
// proxy, or SW-emulated no-DBR): decide on this, not on the requested
// handler.
func (q *QP) CPUAssisted() bool { return q != nil && q.cpuAssist }

// SendDBRModeExt is the mode given at export.
func (q *QP) SendDBRModeExt() SendDBRModeExt {
	if q == nil {
		return 0
	}
	return q.ext
}

// VerbsQP is the exported verbs QP.
func (q *QP) VerbsQP() *verbs.QP {
	if q == nil {
		return nil
	}
	return q.qp
}

// CQ is the send CQ given at export.
func (q *QP) CQ() *verbs.CQ {
	if q == nil {
		return nil
	}
	return q.cq
}

// RecvCQ is the receive CQ given at export (nil for a send-only export).
func (q *QP) RecvCQ() *verbs.CQ {
	if q == nil {
		return nil
	}
	return q.rqCQ
}

// GPU is the GPU the QP is exported to.
func (q *QP) GPU() *GPU {
	if q == nil {
		return nil
	}
	return q.g
}
