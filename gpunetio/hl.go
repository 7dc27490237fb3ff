package gpunetio

import (
	"errors"
	"fmt"
	"sync"
	"syscall"

	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/internal/docasdk"
	"github.com/gdaki/gpunetio/verbs"
)

// QPHLConfig is struct doca_gpu_verbs_qp_init_attr_hl (DOCA GPUNetIO 3.0).
type QPHLConfig struct {
	GPU *GPU
	// NetDev is the device object the CQ, QP, their UMEMs and the UAR are
	// made on (net_dev, DOCA 3.0). Without it, the high-level QP opens one
	// on PD for itself and closes it with the QP (what DOCA 2.0 programs
	// expect); with it, PD may be nil or must be NetDev's PD. Its mode must
	// be the GPU's (ErrInvalidValue otherwise).
	NetDev *verbs.Dev
	// PD is the protection domain (ibpd): required without NetDev.
	PD *verbs.PD
	// SQWQEs is rounded up to a power of two (at most 32768); the QPHL
	// reports the result (SQWQEs) instead of rewriting the config.
	SQWQEs         uint16
	NICHandler     NICHandler // AUTO, CPU_PROXY, GPU_SM_DB or GPU_SM_BF
	MemRegType     MemRegType
	SendDBRModeExt SendDBRModeExt
	CQCollapsed    bool
	// RingMem is the memory type of the rings and the GPU-written doorbell
	// record: MemGPU (the default: device memory) or MemCPUGPU (pinned host
	// memory mapped into the GPU, registered with the NIC as host memory,
	// never through dma-buf), for hosts where the NIC cannot reach GPU
	// memory. Other types are refused with ErrInvalidValue.
	RingMem MemType

	// OrderingSemantic is the QP ordering semantic (DOCA 3.0): anything but
	// the default, verbs.OrderingIBTA, needs SDK mode (ErrNotSupported
	// naming it otherwise), as the QP's setter is only called then.
	OrderingSemantic verbs.OrderingSemantic
	// RQWQEs is the receive queue's depth (rq_nwqe of the SDK-era
	// high-level attributes): 0 makes a send-only QP (a zero-size RQ, as
	// DOCA 3.0's high-level QPs); otherwise it is rounded up to a power of
	// two (at most 32768) and the QP gets a receive queue of that many
	// one-SGE (16-byte) WQEs at the start of its work queue, before the
	// SQ, and a receive CQ of as many entries, both in GPU memory; its
	// doorbell record (word 0 of the QP's record) is GPU-writable in every
	// NIC handler mode (with a CPU helper the record page is CPU_GPU
	// memory instead of plain host memory), since device code posts
	// receives itself.
	RQWQEs uint16
	// RecvInline asks for scatter-to-CQE (recv_inline): receives of at
	// most 32 bytes land in their receive CQE, not in the buffer
	// (verbs.QPConfig.CQEInline). It needs RQWQEs > 0.
	RecvInline bool
}

// QPHL is a high-level GPU QP (struct doca_gpu_verbs_qp_hl): a CQ and an
// RC QP whose rings and doorbell records live in GPU memory (the DBR in host
// memory when a CPU helper writes it), exported to the GPU. The QP is left in
// RST: connect it with ConnectRC (or verbs Modify), then pass
// GPUQP().DeviceQP() to kernels.
type QPHL struct {
	g       *GPU
	dev     *verbs.Dev
	ownDev  bool // opened on QPHLConfig.PD; closed with the QP
	n       uint32
	handler NICHandler
	ext     SendDBRModeExt

	cqRing          *Mem // the CQEs and, after them, the doorbell record (DOCA 3.0)
	cqRingU         *verbs.UMem
	cq              *verbs.CQ
	sqRing, sqDBR   *Mem   // sqRing: the work queue, the RQ ring first when there is one
	sqDBRHost       []byte // CPU-written DBR page
	sqRingU, sqDBRU *verbs.UMem
	qp              *verbs.QP
	uar             *verbs.UAR
	ownUAR          bool
	rqN             uint32 // receive WQEs (0: no receive queue)
	rcqRing         *Mem   // the receive CQ's CQEs and then its record
	rcqRingU        *verbs.UMem
	rcq             *verbs.CQ
	exp             *QP
	closed          bool
	group           *QPGroupHL // set on the two QPs of a group
}

// NewQPHL creates a high-level QP (doca_gpu_verbs_create_qp_hl): on
// cfg.NetDev (or a device object it opens on cfg.PD), a UAR, a CQ whose
// ring and doorbell record share one GPU buffer and UMEM (DOCA 3.0), an RC
// QP whose SQ ring and doorbell record live in GPU memory (the record in
// host memory when a CPU helper writes it), exported to the GPU.
func NewQPHL(cfg QPHLConfig) (*QPHL, error) {
	const op = "doca_gpu_verbs_create_qp_hl"
	if err := checkHL(op, cfg, true); err != nil {
		return nil, err
	}
	dev, own, err := hlDev(op, cfg)
	if err != nil {
		return nil, err
	}
	// Hold the Dev while the QP is made: a closed one is refused here, and
	// it cannot close half-way (the objects reference it afterwards).
	h, err := dev.Hold("gpunetio: NewQPHL in progress")
	if err != nil {
		closeOwnDev(op, dev, own)
		return nil, wrapErr(op, codeOf(err), err, "device object")
	}
	defer h.Release()
	uar, err := newHLUAR(op, dev, cfg.NICHandler)
	if err != nil {
		h.Release()
		closeOwnDev(op, dev, own)
		return nil, err
	}
	q, err := newQPHL(op, cfg, dev, uar, false, false)
	if err != nil {
		uar.Close()
		h.Release()
		closeOwnDev(op, dev, own)
		return nil, err
	}
	q.ownUAR, q.ownDev = true, own
	track(q, "QPHL", fmt.Sprintf("QP 0x%x (%v) on %s", q.qp.QPN(), q.handler, cfg.GPU.b.describe()))
	return q, nil
}

// hlDev returns the device object of cfg, opening one on cfg.PD (own true)
// when cfg.NetDev is nil.
func hlDev(op string, cfg QPHLConfig) (dev *verbs.Dev, own bool, err error) {
	if cfg.NetDev != nil {
		if cfg.PD != nil && cfg.PD != cfg.NetDev.PD() {
			return nil, false, newErr(op, ErrInvalidValue, "PD is not NetDev's PD")
		}
		if m := cfg.NetDev.Mode(); m != cfg.GPU.Mode() {
			return nil, false, newErr(op, ErrInvalidValue, "the GPU is a %v-mode handle and NetDev a %v-mode one: objects of the two modes do not mix", cfg.GPU.Mode(), m)
		}
		return cfg.NetDev, false, nil
	}
	d, err := verbs.OpenDev(cfg.PD)
	if err != nil {
		return nil, false, wrapErr(op, codeOf(err), err, "open a device object on the PD")
	}
	if d.Mode() != cfg.GPU.Mode() {
		closeOwnDev(op, d, true)
		return nil, false, newErr(op, ErrInvalidValue, "the GPU is a %v-mode handle in a %v-mode process: objects of the two modes do not mix", cfg.GPU.Mode(), d.Mode())
	}
	return d, true, nil
}

func closeOwnDev(op string, d *verbs.Dev, own bool) {
	if !own {
		return
	}
	if err := d.Close(); err != nil {
		logf(LogErr, "%s: close the device object after a failure: %v", op, err)
	}
}

func checkHL(op string, cfg QPHLConfig, allowBF bool) error {
	if cfg.GPU == nil || (cfg.PD == nil && cfg.NetDev == nil) {
		logf(LogErr, "Invalid input value: gpu_dev %p ibpd %p net_dev %p sq_nwqe %d", cfg.GPU, cfg.PD, cfg.NetDev, cfg.SQWQEs)
		return newErr(op, ErrInvalidValue, "a GPU and a NetDev (or PD) are required")
	}
	if err := cfg.GPU.use(op); err != nil {
		return err
	}
	if cfg.OrderingSemantic != verbs.OrderingIBTA && cfg.GPU.Mode() != ModeSDK {
		logf(LogInfo, "%s", docasdk.MsgSetOrderingUnsupportedOpen)
		return newErr(op, ErrNotSupported, "QP ordering semantic %v needs SDK mode (DOCA_SDK_LIB_PATH naming a DOCA SDK); this GPU is an open-mode handle", cfg.OrderingSemantic)
	}
	if cfg.SQWQEs == 0 || cfg.SQWQEs > 1<<15 {
		return newErr(op, ErrInvalidValue, "SQWQEs %d: want 1..32768", cfg.SQWQEs)
	}
	if cfg.RQWQEs > 1<<15 {
		return newErr(op, ErrInvalidValue, "RQWQEs %d: want 0 (no receive queue) or 1..32768", cfg.RQWQEs)
	}
	if cfg.RecvInline && cfg.RQWQEs == 0 {
		return newErr(op, ErrInvalidValue, "RecvInline (scatter-to-CQE) needs a receive queue: RQWQEs is 0")
	}
	switch cfg.NICHandler {
	case NICHandlerAuto, NICHandlerCPUProxy, NICHandlerGPUSMDB:
	case NICHandlerCPUProxyNoDBR:
		if cfg.SendDBRModeExt != SendDBRValid && cfg.SendDBRModeExt != SendNoDBRHW {
			return newErr(op, ErrInvalidValue, "NIC handler CPU_PROXY_NO_DBR makes a NO_DBR_HW QP, not %v", cfg.SendDBRModeExt)
		}
	case NICHandlerGPUSMBF:
		if !allowBF {
			return newErr(op, ErrInvalidValue, "QP groups do not support GPU_SM_BF")
		}
	default:
		return newErr(op, ErrInvalidValue, "NIC handler %v: want AUTO, CPU_PROXY, CPU_PROXY_NO_DBR, GPU_SM_DB or GPU_SM_BF (GPU_SM_NO_DBR comes from SendDBRModeExt)", cfg.NICHandler)
	}
	switch cfg.MemRegType {
	case MemRegDefault, MemRegCUDADmabuf, MemRegCUDAPeermem:
	default:
		return newErr(op, ErrInvalidValue, "unknown memory registration type %v", cfg.MemRegType)
	}
	switch cfg.SendDBRModeExt {
	case SendDBRValid, SendNoDBRHW:
	case SendNoDBRSWEmulated:
		if err := cfg.GPU.b.gdrAvailable(); err != nil {
			return wrapErr(op, ErrInvalidValue, err, "NO_DBR_SW_EMULATED needs GDRCopy")
		}
	default:
		return newErr(op, ErrInvalidValue, "unknown send DBR mode ext %v", cfg.SendDBRModeExt)
	}
	if cfg.RingMem != MemGPU && cfg.RingMem != MemCPUGPU {
		return newErr(op, ErrInvalidValue, "RingMem %v: want GPU or CPU_GPU", cfg.RingMem)
	}
	return nil
}

// newHLUAR: BlueFlame for GPU_SM_BF, else non-cached dedicated falling back
// to non-cached; the error of the last try is returned (DOCA reports success).
func newHLUAR(op string, d *verbs.Dev, h NICHandler) (*verbs.UAR, error) {
	if h == NICHandlerGPUSMBF {
		return d.NewUAR(verbs.UARBlueFlame)
	}
	u, err := d.NewUAR(verbs.UARNonCacheDedicated)
	if err == nil {
		return u, nil
	}
	logf(LogInfo, "%s: no dedicated non-cached UAR (%v), using a shared one", op, err)
	return d.NewUAR(verbs.UARNonCache)
}

func nextPow2(v uint32) uint32 {
	n := uint32(1)
	for n < v {
		n <<= 1
	}
	return n
}

// hlOwner names what a QPHL's rings and doorbell records belong to.
const hlOwner = "a high-level QP (QPHL)"

func newQPHL(op string, cfg QPHLConfig, dev *verbs.Dev, uar *verbs.UAR, cqUAR bool, companion bool) (_ *QPHL, err error) {
	g := cfg.GPU
	if cfg.NICHandler == NICHandlerCPUProxyNoDBR {
		cfg.SendDBRModeExt = SendNoDBRHW // a QP without a doorbell record, rung by the CPU proxy
	}
	q := &QPHL{g: g, dev: dev, n: nextPow2(uint32(cfg.SQWQEs)), ext: cfg.SendDBRModeExt, uar: uar}
	if cfg.RQWQEs > 0 && !companion {
		// A group's companion only posts WAITs: no receive queue.
		q.rqN = nextPow2(uint32(cfg.RQWQEs))
	}
	defer func() {
		if err != nil {
			if cerr := q.teardown(); cerr != nil {
				logf(LogErr, "%s: clean-up after failure: %v", op, cerr)
			}
		}
	}()
	if q.cqRing, q.cqRingU, q.cq, err = q.newCQ(op, cfg, cqUAR, q.n); err != nil {
		return nil, err
	}
	if q.rqN > 0 {
		if q.rcqRing, q.rcqRingU, q.rcq, err = q.newCQ(op, cfg, cqUAR, q.rqN); err != nil {
			return nil, err
		}
	}
	h, err := resolveHandler(cfg, uar)
	if err != nil {
		return nil, err
	}
	if err := q.newSQ(op, cfg, h); err != nil {
		return nil, err
	}
	qpCfg := verbs.QPConfig{SendCQ: q.cq, SQWR: q.n, SendMaxSGE: 1, RecvMaxSGE: 1,
		UMem: q.sqRingU, DBRUMem: q.sqDBRU, UAR: uar, CoreDirectMaster: companion,
		OrderingSemantic: cfg.OrderingSemantic}
	if cfg.SendDBRModeExt == SendNoDBRHW {
		qpCfg.SendDBRMode = verbs.SendNoDBRExt
	}
	if q.rqN > 0 {
		qpCfg.RecvCQ, qpCfg.RQWR = q.rcq, q.rqN
		if cfg.RecvInline {
			qpCfg.CQEInline = verbs.ScatterToCQE32B
		}
	}
	if q.qp, err = dev.NewQP(qpCfg); err != nil {
		return nil, err
	}
	wq := q.qp.WQ()
	if got := wq.SQWQEBBs; got != q.n {
		return nil, newErr(op, ErrUnexpected, "SQ has %d WQEBBs for %d WQEs: the device QP needs one WQEBB per WQE", got, q.n)
	}
	if q.rqN > 0 && (wq.RQEntries != q.rqN || wq.RQWQESize != rqWQESize) {
		return nil, newErr(op, ErrUnexpected, "RQ has %d WQEs of %d bytes for %d: the device QP needs %d-byte receive WQEs, one per receive", wq.RQEntries, wq.RQWQESize, q.rqN, rqWQESize)
	}
	if q.exp, err = g.exportQP(op, q.qp, q.cq, q.rcq, ExportConfig{NICHandler: h, SendDBRModeExt: cfg.SendDBRModeExt, SQUMemDevPtr: q.sqRing.Dev}, "gpunetio.QPHL"); err != nil {
		return nil, err
	}
	if q.rqN > 0 && q.sqDBR != nil && q.sqDBR.Type == MemCPUGPU {
		// The record page is CPU_GPU memory, registered by its host
		// address: device code reaches word 0 through the page's device
		// mapping, which need not be the same address.
		q.exp.mu.Lock()
		q.exp.tmpl.RQDBRec = uint64(q.sqDBR.Dev)
		q.exp.mu.Unlock()
	}
	q.handler = q.exp.NICHandler()
	return q, nil
}

// newCQ makes a CQ of n entries for the QP (DOCA 3.0): one GPU buffer of
// align_up(n*64+8, page) bytes, the CQEs initialised to "not yet written"
// (op_own 0xF1), then the doorbell record, zeroed, at n*64; one UMEM over
// both. The send CQ has the SQ's depth, the receive CQ the RQ's.
func (q *QPHL) newCQ(op string, cfg QPHLConfig, cqUAR bool, n uint32) (ring *Mem, u *verbs.UMem, cq *verbs.CQ, err error) {
	g := q.g
	defer func() {
		if err != nil {
			// Nothing half-made goes back to the caller.
			if u != nil {
				if cerr := u.Close(); cerr != nil {
					logf(LogErr, "%s: clean-up after failure: %v", op, cerr)
				}
			}
			if ring != nil {
				if cerr := ring.free(); cerr != nil {
					logf(LogErr, "%s: clean-up after failure: %v", op, cerr)
				}
			}
			ring, u, cq = nil, nil, nil
		}
	}()
	cqBytes := alignUp(uintptr(n)*64+8, hostPage)
	if ring, err = g.memAllocFor(hlOwner, cqBytes, hostPage, cfg.RingMem); err != nil {
		return nil, nil, nil, err
	}
	init := make([]byte, cqBytes)
	for i := 63; i < int(n)*64; i += 64 {
		init[i] = 0xf1
	}
	if err = g.b.memcpyHtoD(uintptr(ring.Dev), init); err != nil {
		return ring, nil, nil, wrapErr(op, ErrDriver, err, "initialise the CQ ring")
	}
	if u, err = q.regUMem(op, q.dev, ring, cfg.MemRegType); err != nil {
		return ring, nil, nil, err
	}
	cqCfg := verbs.CQConfig{Size: n, UMem: u, Overrun: true, Collapsed: cfg.CQCollapsed}
	if cqUAR {
		cqCfg.UAR = q.uar
	}
	if cq, err = q.dev.NewCQ(cqCfg); err != nil {
		return ring, u, nil, err
	}
	return ring, u, cq, nil
}

// resolveHandler resolves AUTO (GPU_SM_DB when the GPU can map the UAR,
// else CPU_PROXY) and moves GPU_SM_DB to GPU_SM_NO_DBR for the no-DBR send
// modes.
func resolveHandler(cfg QPHLConfig, uar *verbs.UAR) (NICHandler, error) {
	h := cfg.NICHandler
	if h == NICHandlerAuto {
		ok, err := cfg.GPU.CanGPURegisterUAR(uar)
		if err != nil {
			return 0, err
		}
		h = NICHandlerCPUProxy
		if ok {
			h = NICHandlerGPUSMDB
		}
	}
	if cfg.SendDBRModeExt != SendDBRValid && h == NICHandlerGPUSMDB {
		h = NICHandlerGPUSMNoDBR
	}
	return h, nil
}

// newSQ allocates the SQ ring (GPU memory, zeroed) and its doorbell record:
// a host page when a CPU writes it (CPU_PROXY, NO_DBR_SW_EMULATED), else
// GPU memory; and registers both as UMEMs.
func (q *QPHL) newSQ(op string, cfg QPHLConfig, h NICHandler) (err error) {
	g, dev := q.g, q.dev
	ringBytes := alignUp(q.rqBytes()+uintptr(q.n)*64, hostPage)
	if q.sqRing, err = g.memAllocFor(hlOwner, ringBytes, hostPage, cfg.RingMem); err != nil {
		return err
	}
	if err = g.b.memsetD8(uintptr(q.sqRing.Dev), 0, ringBytes); err != nil {
		return wrapErr(op, ErrDriver, err, "clear the SQ ring")
	}
	if q.sqRingU, err = q.regUMem(op, dev, q.sqRing, cfg.MemRegType); err != nil {
		return err
	}
	if (h.cpuProxy() || cfg.SendDBRModeExt == SendNoDBRSWEmulated) && q.rqN > 0 {
		// A CPU writes the send record (word 1), device code the receive
		// record (word 0): memory both reach.
		if q.sqDBR, err = g.memAllocFor(hlOwner, hostPage, hostPage, MemCPUGPU); err != nil {
			return err
		}
		q.sqDBRU, err = dev.NewUMem(q.sqDBR.Host, uint64(hostPage), verbs.AccessLocalWrite, nil)
		return err
	}
	if h.cpuProxy() || cfg.SendDBRModeExt == SendNoDBRSWEmulated {
		if q.sqDBRHost, err = mmapHost(hostPage); err != nil {
			return wrapErr(op, ErrNoMemory, err, "DBR page")
		}
		q.sqDBRU, err = dev.NewUMem(uintptr(addrOf(q.sqDBRHost)), uint64(hostPage), verbs.AccessLocalWrite, nil)
		return err
	}
	if q.sqDBR, err = g.memAllocFor(hlOwner, hostPage, hostPage, cfg.RingMem); err != nil {
		return err
	}
	if err = g.b.memsetD8(uintptr(q.sqDBR.Dev), 0, hostPage); err != nil {
		return wrapErr(op, ErrDriver, err, "clear the QP DBR")
	}
	q.sqDBRU, err = q.regUMem(op, dev, q.sqDBR, cfg.MemRegType)
	return err
}

// rqBytes is the size of the RQ ring at the start of the work queue: the
// receive WQEs, at least 64 bytes (the smallest RQ a QP takes).
func (q *QPHL) rqBytes() uintptr {
	if q.rqN == 0 {
		return 0
	}
	return max(uintptr(q.rqN)*rqWQESize, 64)
}

// regUMem registers a GPU buffer per the memory registration type: dma-buf
// first (DEFAULT falls back to nvidia-peermem), or nvidia-peermem only.
func (q *QPHL) regUMem(op string, dev *verbs.Dev, m *Mem, t MemRegType) (*verbs.UMem, error) {
	addr, size := uintptr(m.Dev), uint64(alignUp(m.Size, hostPage))
	if m.Type == MemCPUGPU {
		// Host memory: the NIC reaches it at its CPU address, never
		// through a dma-buf.
		return dev.NewUMem(m.Host, size, verbs.AccessLocalWrite, nil)
	}
	if t == MemRegCUDAPeermem {
		return dev.NewUMem(addr, size, verbs.AccessLocalWrite, nil)
	}
	fd, err := q.g.GetDmabufFD(m.Dev, uintptr(size))
	if err != nil {
		if t == MemRegCUDADmabuf {
			return nil, err
		}
		logf(LogWarning, "%s: no dma-buf for %#x (%v): registering through nvidia-peermem", op, m.Dev, err)
		return dev.NewUMem(addr, size, verbs.AccessLocalWrite, nil)
	}
	defer syscall.Close(fd)
	u, err := dev.NewUMem(addr, size, verbs.AccessLocalWrite, &verbs.Dmabuf{FD: fd, GPU: q.g.VerbsRef()})
	if err != nil && t == MemRegDefault && dev.Mode() == ModeOpen {
		logf(LogWarning, "%s: dma-buf registration of %#x failed (%v): retrying through nvidia-peermem", op, m.Dev, err)
		return dev.NewUMem(addr, size, verbs.AccessLocalWrite, nil)
	}
	return u, err
}

// teardown destroys in DOCA's order (export, QP, SQ memory, CQ, CQ memory),
// continuing past errors
// and returning the first; the UAR is closed by the owner.
func (q *QPHL) teardown() error {
	var errs []error
	step := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if q.exp != nil {
		// An export still in use (array, service) keeps everything alive.
		if err := q.exp.Close(); err != nil {
			return err
		}
		q.exp = nil
	}
	if q.qp != nil {
		step(q.qp.Close())
		q.qp = nil
	}
	for _, u := range []**verbs.UMem{&q.sqRingU, &q.sqDBRU} {
		if *u != nil {
			step((*u).Close())
			*u = nil
		}
	}
	for _, m := range []**Mem{&q.sqRing, &q.sqDBR} {
		if *m != nil {
			step((*m).free())
			*m = nil
		}
	}
	if q.sqDBRHost != nil {
		step(syscall.Munmap(q.sqDBRHost))
		q.sqDBRHost = nil
	}
	if q.cq != nil {
		step(q.cq.Close())
		q.cq = nil
	}
	if q.cqRingU != nil {
		step(q.cqRingU.Close())
		q.cqRingU = nil
	}
	if q.cqRing != nil {
		step(q.cqRing.free())
		q.cqRing = nil
	}
	if q.rcq != nil {
		step(q.rcq.Close())
		q.rcq = nil
	}
	if q.rcqRingU != nil {
		step(q.rcqRingU.Close())
		q.rcqRingU = nil
	}
	if q.rcqRing != nil {
		step(q.rcqRing.free())
		q.rcqRing = nil
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}

// Close destroys everything NewQPHL made (doca_gpu_verbs_destroy_qp_hl).
// The verbs QP must be idle and no kernel may use it. It refuses with
// ErrInUse while the exported QP is in a DevQPArray or FlatList or
// monitored by a Service, and for the QPs of a QPGroupHL (close the
// group). A second Close returns nil.
func (q *QPHL) Close() error {
	const op = "doca_gpu_verbs_destroy_qp_hl"
	if err := q.made(op); err != nil {
		return err
	}
	if q.group != nil {
		if q.closed {
			return nil
		}
		return newErr(op, ErrInUse, "QP 0x%x is part of a QPGroupHL: close the group", q.qpn())
	}
	return q.close()
}

// made refuses a nil QPHL and a zero value (one NewQPHL did not return).
func (q *QPHL) made(op string) error {
	if q == nil {
		return newErr(op, ErrInvalidValue, "nil QP")
	}
	if q.g == nil {
		return newErr(op, ErrInvalidValue, "QPHL is a zero value, not one made by NewQPHL or NewQPGroupHL")
	}
	return nil
}

func (q *QPHL) qpn() uint32 { return q.qp.QPN() }

// close is Close without the group check.
func (q *QPHL) close() error {
	if q.closed {
		return nil
	}
	err := q.teardown()
	if q.ownUAR && q.uar != nil && err == nil {
		err = q.uar.Close()
		if err == nil {
			q.uar = nil
		}
	}
	if q.ownDev && q.dev != nil && err == nil {
		err = q.dev.Close()
		if err == nil {
			q.dev = nil
		}
	}
	if err == nil {
		q.closed = true
		untrack(q)
	}
	return err
}

// LocalEndpoint describes the high-level QP for its peer: the GID at
// gidIndex and the LID, active MTU and link layer of port, the QPN, PSN 0
// (verbs.QP.LocalEndpoint). Add the regions the peer may access before
// sending it.
func (q *QPHL) LocalEndpoint(port uint8, gidIndex uint32) (verbs.LocalEndpoint, error) {
	const op = "QPHL.LocalEndpoint"
	if err := q.usable(op); err != nil {
		return verbs.LocalEndpoint{}, err
	}
	return q.qp.LocalEndpoint(port, gidIndex)
}

// ConnectRC moves the high-level QP from RST to RTS towards remote in one
// call, with the DOCA examples' defaults and opts' overrides
// (verbs.QP.ConnectRC, which documents both). After it the QP is ready for
// kernels: pass GPUQP().DeviceQP() to them. On failure the QP is left in
// RST.
func (q *QPHL) ConnectRC(local verbs.LocalEndpoint, remote verbs.Endpoint, opts *verbs.ConnectOptions) error {
	const op = "QPHL.ConnectRC"
	if err := q.usable(op); err != nil {
		return err
	}
	return q.qp.ConnectRC(local, remote, opts)
}

func (q *QPHL) usable(op string) error {
	if err := q.made(op); err != nil {
		return err
	}
	if q.closed || q.qp == nil {
		return newErr(op, ErrBadState, "the high-level QP is closed")
	}
	return nil
}

// The getters return nil or zero for a nil, zero or closed QPHL.

// QP is the verbs QP.
func (q *QPHL) QP() *verbs.QP {
	if q == nil {
		return nil
	}
	return q.qp
}

// CQ is its send CQ.
func (q *QPHL) CQ() *verbs.CQ {
	if q == nil {
		return nil
	}
	return q.cq
}

// UAR is the doorbell page.
func (q *QPHL) UAR() *verbs.UAR {
	if q == nil {
		return nil
	}
	return q.uar
}

// GPUQP is the exported QP (DeviceQP, ProgressProxy, ...).
func (q *QPHL) GPUQP() *QP {
	if q == nil {
		return nil
	}
	return q.exp
}

// NICHandler is the resolved handler.
func (q *QPHL) NICHandler() NICHandler {
	if q == nil {
		return 0
	}
	return q.handler
}

// SQWQEs is the SQ (and CQ) depth after rounding up.
func (q *QPHL) SQWQEs() uint32 {
	if q == nil {
		return 0
	}
	return q.n
}

// SQRing is the GPU memory of the work queue: the SQ ring, after the RQ
// ring (RQRing) when the QP has a receive queue.
func (q *QPHL) SQRing() *Mem {
	if q == nil {
		return nil
	}
	return q.sqRing
}

// CQRing is the GPU memory of the CQ ring.
func (q *QPHL) CQRing() *Mem {
	if q == nil {
		return nil
	}
	return q.cqRing
}

// RQWQEs is the receive queue's depth after rounding up (0: none).
func (q *QPHL) RQWQEs() uint32 {
	if q == nil {
		return 0
	}
	return q.rqN
}

// RQRing is the GPU address of the RQ ring (RQWQEs 16-byte receive WQEs at
// the start of SQRing's memory), 0 without a receive queue.
func (q *QPHL) RQRing() DevPtr {
	if q == nil || q.rqN == 0 || q.sqRing == nil {
		return 0
	}
	return q.sqRing.Dev
}

// RecvCQ is the receive CQ (nil without a receive queue).
func (q *QPHL) RecvCQ() *verbs.CQ {
	if q == nil {
		return nil
	}
	return q.rcq
}

// RecvCQRing is the GPU memory of the receive CQ ring (nil without a
// receive queue): RQWQEs CQEs, then the CQ's doorbell record.
func (q *QPHL) RecvCQRing() *Mem {
	if q == nil {
		return nil
	}
	return q.rcqRing
}

// QPGroupHL is a main QP plus a companion QP (core-direct master, for the
// device counter API), sharing one UAR (struct doca_gpu_verbs_qp_group_hl).
type QPGroupHL struct {
	Main, Companion *QPHL
	uar             *verbs.UAR
	dev             *verbs.Dev // opened for the group (no NetDev given)
	closed          bool
}

// NewQPGroupHL creates the two QPs (doca_gpu_verbs_create_qp_group_hl). The
// handler must be AUTO, CPU_PROXY or GPU_SM_DB.
func NewQPGroupHL(cfg QPHLConfig) (*QPGroupHL, error) {
	const op = "doca_gpu_verbs_create_qp_group_hl"
	if err := checkHL(op, cfg, false); err != nil {
		return nil, err
	}
	// DOCA 3.0 does not check net_dev here; this does (hlDev).
	dev, own, err := hlDev(op, cfg)
	if err != nil {
		return nil, err
	}
	h, err := dev.Hold("gpunetio: NewQPGroupHL in progress")
	if err != nil {
		closeOwnDev(op, dev, own)
		return nil, wrapErr(op, codeOf(err), err, "device object")
	}
	defer h.Release()
	uar, err := newHLUAR(op, dev, NICHandlerAuto)
	if err != nil {
		h.Release()
		closeOwnDev(op, dev, own)
		return nil, err
	}
	grp := &QPGroupHL{uar: uar}
	if own {
		grp.dev = dev
	}
	if grp.Main, err = newQPHL(op, cfg, dev, uar, true, false); err != nil {
		uar.Close()
		h.Release()
		closeOwnDev(op, dev, own)
		return nil, err
	}
	if grp.Companion, err = newQPHL(op, cfg, dev, uar, true, true); err != nil {
		grp.Main.close()
		uar.Close()
		h.Release()
		closeOwnDev(op, dev, own)
		return nil, err
	}
	grp.Main.group, grp.Companion.group = grp, grp
	track(grp, "QPGroupHL", fmt.Sprintf("QPs 0x%x and 0x%x on %s", grp.Main.qpn(), grp.Companion.qpn(), cfg.GPU.b.describe()))
	return grp, nil
}

// Close destroys the companion, then the main QP, then the shared UAR
// (DOCA frees the UAR before the companion). The two QPs close only
// through it.
func (g *QPGroupHL) Close() error {
	const op = "doca_gpu_verbs_destroy_qp_group_hl"
	if g == nil {
		return newErr(op, ErrInvalidValue, "nil group")
	}
	if g.uar == nil {
		return newErr(op, ErrInvalidValue, "QPGroupHL is a zero value, not one made by NewQPGroupHL")
	}
	if g.closed {
		return nil
	}
	for _, q := range []*QPHL{g.Companion, g.Main} {
		if err := q.close(); err != nil {
			return err
		}
	}
	if err := g.uar.Close(); err != nil {
		return err
	}
	if g.dev != nil {
		if err := g.dev.Close(); err != nil {
			return err
		}
		g.dev = nil
	}
	g.closed = true
	untrack(g)
	return nil
}

// FlatList is a contiguous GPU array of the host templates of high-level
// QPs (doca_gpu_verbs_qp_flat_list_create_hl). It is an independent copy:
// do not mix it with the per-QP device QP of the same QP in kernels. While
// it is open, its QPs cannot be closed (ErrInUse): kernels given the list
// would use freed rings.
type FlatList struct {
	mem    *Mem
	n      int
	qps    []*QP
	mu     sync.Mutex
	closed bool
}

// NewQPFlatList copies the templates of qps (all on one GPU) into one GPU
// allocation, counted in the GPU's allocation table.
func NewQPFlatList(qps []*QPHL) (_ *FlatList, err error) {
	const op = "doca_gpu_verbs_qp_flat_list_create_hl"
	if len(qps) == 0 {
		return nil, newErr(op, ErrInvalidValue, "no QPs")
	}
	var g *GPU
	img := make([]byte, devstruct.QPSize*len(qps))
	var exps []*QP
	defer func() {
		if err != nil {
			unlist(exps)
		}
	}()
	for i, q := range qps {
		if q == nil || q.exp == nil || q.closed {
			return nil, newErr(op, ErrInvalidValue, "QP %d is nil, a zero value or closed", i)
		}
		if g == nil {
			g = q.g
		} else if q.g != g {
			return nil, newErr(op, ErrInvalidValue, "QP %d is on another GPU", i)
		}
		e := q.exp
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return nil, newErr(op, ErrBadState, "QP %d is unexported", i)
		}
		e.lists++
		e.tmpl.Put(img[i*devstruct.QPSize:])
		e.mu.Unlock()
		exps = append(exps, e)
	}
	m, err := g.memAllocFor("a FlatList", uintptr(len(img)), 0, MemGPU)
	if err != nil {
		return nil, err
	}
	if err := g.b.memcpyHtoD(uintptr(m.Dev), img); err != nil {
		m.free()
		return nil, wrapErr(op, ErrDriver, err, "copy %d device QPs", len(qps))
	}
	f := &FlatList{mem: m, n: len(qps), qps: exps}
	track(f, "FlatList", fmt.Sprintf("%d device QPs at %#x on %s", len(qps), m.Dev, g.b.describe()))
	return f, nil
}

func unlist(exps []*QP) {
	for _, e := range exps {
		e.mu.Lock()
		e.lists--
		e.mu.Unlock()
	}
}

// Ptr is the GPU address of element 0 (0 for a nil or zero list).
func (f *FlatList) Ptr() DevPtr {
	if f == nil || f.mem == nil {
		return 0
	}
	return f.mem.Dev
}

// Len is the number of QPs.
func (f *FlatList) Len() int {
	if f == nil {
		return 0
	}
	return f.n
}

// Close frees the array (doca_gpu_verbs_qp_flat_list_destroy_hl), after
// which its QPs can be closed. A second Close returns nil.
func (f *FlatList) Close() error {
	const op = "doca_gpu_verbs_qp_flat_list_destroy_hl"
	if f == nil {
		return newErr(op, ErrInvalidValue, "nil list")
	}
	if f.mem == nil {
		return newErr(op, ErrInvalidValue, "FlatList is a zero value, not one made by NewQPFlatList")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	if err := f.mem.free(); err != nil {
		return err
	}
	unlist(f.qps)
	f.closed = true
	untrack(f)
	return nil
}
