package gpunetio

import (
	"errors"
	"fmt"
	"sync"
	"syscall"

	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/verbs"
)

// QPHLConfig is struct doca_gpu_verbs_qp_init_attr_hl.
type QPHLConfig struct {
	GPU *GPU
	PD  *verbs.PD
	// SQWQEs is rounded up to a power of two (at most 32768); the QPHL
	// reports the result (SQWQEs) instead of rewriting the config.
	SQWQEs         uint16
	NICHandler     NICHandler // AUTO, CPU_PROXY, GPU_SM_DB or GPU_SM_BF
	MemRegType     MemRegType
	SendDBRModeExt SendDBRModeExt
	CQCollapsed    bool
}

// QPHL is a high-level GPU QP (struct doca_gpu_verbs_qp_hl): a CQ and an
// RC QP whose rings and doorbell records live in GPU memory (the DBR in host
// memory when a CPU helper writes it), exported to the GPU. The QP is left in
// RST: connect it with ConnectRC (or verbs Modify), then pass
// GPUQP().DeviceQP() to kernels.
type QPHL struct {
	g       *GPU
	n       uint32
	handler NICHandler
	ext     SendDBRModeExt

	cqRing, cqDBR   *Mem
	cqRingU, cqDBRU *verbs.UMem
	cq              *verbs.CQ
	sqRing, sqDBR   *Mem
	sqDBRHost       []byte // CPU-written DBR page
	sqRingU, sqDBRU *verbs.UMem
	qp              *verbs.QP
	uar             *verbs.UAR
	ownUAR          bool
	exp             *QP
	closed          bool
	group           *QPGroupHL // set on the two QPs of a group
}

// NewQPHL creates a high-level QP (doca_gpu_verbs_create_qp_hl).
func NewQPHL(cfg QPHLConfig) (*QPHL, error) {
	const op = "doca_gpu_verbs_create_qp_hl"
	if err := checkHL(op, cfg, true); err != nil {
		return nil, err
	}
	// Hold the PD while the QP is made: a closed PD is refused here, and
	// it cannot close half-way (the QP references it afterwards).
	h, err := cfg.PD.Hold("gpunetio: NewQPHL in progress")
	if err != nil {
		return nil, wrapErr(op, codeOf(err), err, "PD")
	}
	defer h.Release()
	uar, err := newHLUAR(op, cfg.PD.Context(), cfg.NICHandler)
	if err != nil {
		return nil, err
	}
	q, err := newQPHL(op, cfg, uar, false, false)
	if err != nil {
		uar.Close()
		return nil, err
	}
	q.ownUAR = true
	track(q, "QPHL", fmt.Sprintf("QP 0x%x (%v) on %s", q.qp.QPN(), q.handler, cfg.GPU.b.describe()))
	return q, nil
}

func checkHL(op string, cfg QPHLConfig, allowBF bool) error {
	if cfg.GPU == nil || cfg.PD == nil {
		return newErr(op, ErrInvalidValue, "GPU and PD are required")
	}
	if err := cfg.GPU.use(op); err != nil {
		return err
	}
	if cfg.SQWQEs == 0 || cfg.SQWQEs > 1<<15 {
		return newErr(op, ErrInvalidValue, "SQWQEs %d: want 1..32768", cfg.SQWQEs)
	}
	switch cfg.NICHandler {
	case NICHandlerAuto, NICHandlerCPUProxy, NICHandlerGPUSMDB:
	case NICHandlerGPUSMBF:
		if !allowBF {
			return newErr(op, ErrInvalidValue, "QP groups do not support GPU_SM_BF")
		}
	default:
		return newErr(op, ErrInvalidValue, "NIC handler %v: want AUTO, CPU_PROXY, GPU_SM_DB or GPU_SM_BF (GPU_SM_NO_DBR comes from SendDBRModeExt)", cfg.NICHandler)
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
	return nil
}

// newHLUAR: BlueFlame for GPU_SM_BF, else non-cached dedicated falling back
// to non-cached; the error of the last try is returned (DOCA reports success).
func newHLUAR(op string, c *verbs.Context, h NICHandler) (*verbs.UAR, error) {
	if h == NICHandlerGPUSMBF {
		return verbs.NewUAR(c, verbs.UARBlueFlame)
	}
	u, err := verbs.NewUAR(c, verbs.UARNonCacheDedicated)
	if err == nil {
		return u, nil
	}
	logf(LogInfo, "%s: no dedicated non-cached UAR (%v), using a shared one", op, err)
	return verbs.NewUAR(c, verbs.UARNonCache)
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

func newQPHL(op string, cfg QPHLConfig, uar *verbs.UAR, cqUAR bool, companion bool) (_ *QPHL, err error) {
	g := cfg.GPU
	ctx := cfg.PD.Context()
	q := &QPHL{g: g, n: nextPow2(uint32(cfg.SQWQEs)), ext: cfg.SendDBRModeExt, uar: uar}
	defer func() {
		if err != nil {
			if cerr := q.teardown(); cerr != nil {
				logf(LogErr, "%s: clean-up after failure: %v", op, cerr)
			}
		}
	}()
	ringBytes := alignUp(uintptr(q.n)*64, hostPage)

	// CQ: ring initialised to "not yet written" (op_own 0xF1), zeroed DBR.
	if q.cqRing, err = g.memAllocFor(hlOwner, ringBytes, hostPage, MemGPU); err != nil {
		return nil, err
	}
	init := make([]byte, ringBytes)
	for i := 63; i < len(init); i += 64 {
		init[i] = 0xf1
	}
	if err = g.b.memcpyHtoD(uintptr(q.cqRing.Dev), init); err != nil {
		return nil, wrapErr(op, ErrDriver, err, "initialise the CQ ring")
	}
	if q.cqRingU, err = q.regUMem(op, ctx, q.cqRing, cfg.MemRegType); err != nil {
		return nil, err
	}
	if q.cqDBR, err = g.memAllocFor(hlOwner, hostPage, hostPage, MemGPU); err != nil {
		return nil, err
	}
	if err = g.b.memsetD8(uintptr(q.cqDBR.Dev), 0, hostPage); err != nil {
		return nil, wrapErr(op, ErrDriver, err, "clear the CQ DBR")
	}
	if q.cqDBRU, err = q.regUMem(op, ctx, q.cqDBR, cfg.MemRegType); err != nil {
		return nil, err
	}
	cqCfg := verbs.CQConfig{Size: q.n, UMem: q.cqRingU, DBRUMem: q.cqDBRU, Overrun: true, Collapsed: cfg.CQCollapsed}
	if cqUAR {
		cqCfg.UAR = uar
	}
	if q.cq, err = verbs.NewCQ(ctx, cqCfg); err != nil {
		return nil, err
	}

	// Handler resolution.
	h := cfg.NICHandler
	if h == NICHandlerAuto {
		ok, cerr := g.CanGPURegisterUAR(uar)
		if cerr != nil {
			return nil, cerr
		}
		h = NICHandlerCPUProxy
		if ok {
			h = NICHandlerGPUSMDB
		}
	}
	if cfg.SendDBRModeExt != SendDBRValid && h == NICHandlerGPUSMDB {
		h = NICHandlerGPUSMNoDBR
	}

	// SQ ring (zeroed) and DBR (host page when the CPU writes it).
	if q.sqRing, err = g.memAllocFor(hlOwner, ringBytes, hostPage, MemGPU); err != nil {
		return nil, err
	}
	if err = g.b.memsetD8(uintptr(q.sqRing.Dev), 0, ringBytes); err != nil {
		return nil, wrapErr(op, ErrDriver, err, "clear the SQ ring")
	}
	if q.sqRingU, err = q.regUMem(op, ctx, q.sqRing, cfg.MemRegType); err != nil {
		return nil, err
	}
	if h == NICHandlerCPUProxy || cfg.SendDBRModeExt == SendNoDBRSWEmulated {
		if q.sqDBRHost, err = mmapHost(hostPage); err != nil {
			return nil, wrapErr(op, ErrNoMemory, err, "DBR page")
		}
		if q.sqDBRU, err = verbs.NewUMem(ctx, uintptr(addrOf(q.sqDBRHost)), uint64(hostPage), verbs.AccessLocalWrite, nil); err != nil {
			return nil, err
		}
	} else {
		if q.sqDBR, err = g.memAllocFor(hlOwner, hostPage, hostPage, MemGPU); err != nil {
			return nil, err
		}
		if err = g.b.memsetD8(uintptr(q.sqDBR.Dev), 0, hostPage); err != nil {
			return nil, wrapErr(op, ErrDriver, err, "clear the QP DBR")
		}
		if q.sqDBRU, err = q.regUMem(op, ctx, q.sqDBR, cfg.MemRegType); err != nil {
			return nil, err
		}
	}
	qpCfg := verbs.QPConfig{PD: cfg.PD, SendCQ: q.cq, SQWR: q.n, SendMaxSGE: 1, RecvMaxSGE: 1,
		UMem: q.sqRingU, DBRUMem: q.sqDBRU, UAR: uar, CoreDirectMaster: companion}
	if cfg.SendDBRModeExt == SendNoDBRHW {
		qpCfg.SendDBRMode = verbs.SendNoDBRExt
	}
	if q.qp, err = verbs.NewQP(ctx, qpCfg); err != nil {
		return nil, err
	}
	if got := q.qp.WQ().SQWQEBBs; got != q.n {
		return nil, newErr(op, ErrUnexpected, "SQ has %d WQEBBs for %d WQEs: the device QP needs one WQEBB per WQE", got, q.n)
	}
	if q.exp, err = g.exportQP(op, q.qp, q.cq, ExportConfig{NICHandler: h, SendDBRModeExt: cfg.SendDBRModeExt, SQUMemDevPtr: q.sqRing.Dev}, "gpunetio.QPHL"); err != nil {
		return nil, err
	}
	q.handler = q.exp.NICHandler()
	return q, nil
}

// regUMem registers a GPU buffer per the memory registration type: dma-buf
// first (DEFAULT falls back to nvidia-peermem), or nvidia-peermem only.
func (q *QPHL) regUMem(op string, ctx *verbs.Context, m *Mem, t MemRegType) (*verbs.UMem, error) {
	addr, size := uintptr(m.Dev), uint64(alignUp(m.Size, hostPage))
	if t == MemRegCUDAPeermem {
		return verbs.NewUMem(ctx, addr, size, verbs.AccessLocalWrite, nil)
	}
	fd, err := q.g.DmabufFD(m.Dev, uintptr(size))
	if err != nil {
		if t == MemRegCUDADmabuf {
			return nil, err
		}
		logf(LogWarning, "%s: no dma-buf for %#x (%v): registering through nvidia-peermem", op, m.Dev, err)
		return verbs.NewUMem(ctx, addr, size, verbs.AccessLocalWrite, nil)
	}
	defer syscall.Close(fd)
	u, err := verbs.NewUMem(ctx, addr, size, verbs.AccessLocalWrite, &verbs.Dmabuf{FD: fd})
	if err != nil && t == MemRegDefault {
		logf(LogWarning, "%s: dma-buf registration of %#x failed (%v): retrying through nvidia-peermem", op, m.Dev, err)
		return verbs.NewUMem(ctx, addr, size, verbs.AccessLocalWrite, nil)
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
	for _, u := range []**verbs.UMem{&q.cqRingU, &q.cqDBRU} {
		if *u != nil {
			step((*u).Close())
			*u = nil
		}
	}
	for _, m := range []**Mem{&q.cqRing, &q.cqDBR} {
		if *m != nil {
			step((*m).free())
			*m = nil
		}
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

// SQRing is the GPU memory of the SQ ring.
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

// QPGroupHL is a main QP plus a companion QP (core-direct master, for the
// device counter API), sharing one UAR (struct doca_gpu_verbs_qp_group_hl).
type QPGroupHL struct {
	Main, Companion *QPHL
	uar             *verbs.UAR
	closed          bool
}

// NewQPGroupHL creates the two QPs (doca_gpu_verbs_create_qp_group_hl). The
// handler must be AUTO, CPU_PROXY or GPU_SM_DB.
func NewQPGroupHL(cfg QPHLConfig) (*QPGroupHL, error) {
	const op = "doca_gpu_verbs_create_qp_group_hl"
	if err := checkHL(op, cfg, false); err != nil {
		return nil, err
	}
	h, err := cfg.PD.Hold("gpunetio: NewQPGroupHL in progress")
	if err != nil {
		return nil, wrapErr(op, codeOf(err), err, "PD")
	}
	defer h.Release()
	uar, err := newHLUAR(op, cfg.PD.Context(), NICHandlerAuto)
	if err != nil {
		return nil, err
	}
	grp := &QPGroupHL{uar: uar}
	if grp.Main, err = newQPHL(op, cfg, uar, true, false); err != nil {
		uar.Close()
		return nil, err
	}
	if grp.Companion, err = newQPHL(op, cfg, uar, true, true); err != nil {
		grp.Main.close()
		uar.Close()
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
