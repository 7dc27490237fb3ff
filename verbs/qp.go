package verbs

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/docasdk"
	"github.com/gdaki/gpunetio/internal/mlx5"
)

// QPConfig describes a queue pair (doca_verbs_qp_init_attr). Zero values are
// DOCA's defaults.
type QPConfig struct {
	// PD is the protection domain. Dev.NewQP takes it from the Dev
	// (doca_verbs_qp_init_attr_set_pd takes the device object in DOCA 3.0):
	// leave it nil or set it to the Dev's PD.
	PD     *PD
	SendCQ *CQ // required when SQWR > 0
	RecvCQ *CQ // required when RQWR > 0 or SRQ is set
	SRQ    *SRQ

	// SQSigAll is reported back by Query; as in DOCA it has no hardware
	// effect (each WQE says whether it wants a CQE).
	SQSigAll bool
	// SQWR is the number of send work requests (0: no send queue).
	SQWR uint32
	// RQWR is the number of receive work requests (0 and no SRQ: zero-size RQ).
	RQWR          uint32
	SendMaxSGE    uint32 // > 0 when SQWR > 0
	RecvMaxSGE    uint32 // > 0 when RQWR > 0
	MaxInlineData uint32 // inline bytes per send WQE; Query reports the real capacity
	UserIndex     uint32 // 24 bits, reported in CQEs
	Type          QPType // RC

	// UMem holds the work queue (RQ then SQ) at UMemOffset (which must be 0,
	// as in DOCA); DBRUMem the doorbell record at DBRUMemOffset. Give both or
	// neither: without them the QP allocates host memory for both.
	UMem          *UMem
	UMemOffset    uint64
	DBRUMem       *UMem
	DBRUMemOffset uint64
	// UAR is the doorbell page; without it the QP allocates one (BlueFlame,
	// falling back to non-cached). NO_DBR_EXT QPs need an external UAR.
	UAR *UAR

	UserContext uintptr
	// CoreDirectMaster lets the QP post WAIT / SEND_EN WQEs (qpc.cd_master).
	CoreDirectMaster bool
	SendDBRMode      SendDBRMode
	// EmulateNoDBRExt marks a DBR_VALID QP that GPU code drives as if it had
	// no DBR, with a CPU proxy writing the DBR (validated, then only
	// reported). Open mode only: the SDK does not support it
	// (ErrInvalidValue in SDK mode, as in DOCA 3.0).
	EmulateNoDBRExt bool
	// OrderingSemantic is the QP ordering semantic
	// (doca_verbs_qp_init_attr_set/get_ordering_semantic, DOCA GPUNetIO
	// 3.0). Only SDK mode supports anything but OrderingIBTA, and only with
	// an SDK that provides the setter (ModeInfo.SetOrderingSemantic);
	// otherwise creating the QP fails with ErrNotSupported.
	OrderingSemantic OrderingSemantic
	// CQEInline is responder scatter-to-CQE (the DOCA SDK's
	// doca_verbs_qp_init_attr_set_cqe_inline, qpc.cs_res): with
	// ScatterToCQE32B a receive of at most 32 bytes is written into its
	// 64-byte receive CQE (the CQE's inline format bit set) and not into
	// the receive buffer. It needs a receive queue or SRQ; open mode only
	// (ErrNotSupported in SDK mode). It is meant for receive CQs that
	// device code polls (doca_gpu_dev_verbs_cqe_get_inl_data reads the
	// bytes): CQ.Poll reports the length and does not copy the bytes into
	// the buffer.
	CQEInline ScatterToCQE
}

// QP is a queue pair (doca_verbs_qp).
type QP struct {
	node
	asyncPending atomic.Int64 // asynchronous events received and not acknowledged
	ctx          *Context
	dev          *Dev   // nil when made on a Context
	sdk          *sdkQP // SDK mode
	cfg          QPConfig
	obj          mlx5.Obj
	qpn          uint32

	sq      sqGeometry
	rq      rqGeometry
	hasRQ   bool
	wq      uintptr // start of the work queue (RQ first)
	sqAddr  uintptr
	dbr     uintptr
	db      uintptr // doorbell register used for this QP
	uar     *UAR
	ownUAR  bool
	buf     *hostBuf
	umem    *UMem
	devAttr *DeviceAttr
	held    []*node // the objects this QP references (PD, CQs, SRQ, external UMEMs and UAR)

	mu       sync.Mutex // state and cached modify inputs
	state    QPState
	addrType AddrType
	path     AHAttr // the address path programmed by INIT -> RTR
	portNum  uint16

	post poster // host-side posting state
}

// NewQP creates a queue pair in the RST state on the Dev's device
// (doca_verbs_qp_create). The PD is the Dev's; the CQs, UMEMs and UAR of
// cfg must be made on the same Dev (ErrInvalidValue otherwise), be open, and
// stay open while the QP exists: the QP references each of them, and the
// Dev. A nil Dev is ErrInvalidValue; an ordering semantic other than IBTA
// in open mode is ErrNotSupported; any other failure is ErrInitialization
// (DOCA 3.0) wrapping the cause (a bad configuration is ErrInvalidValue, a
// capability the device lacks ErrNotSupported, a driver failure ErrDriver).
//
// In SDK mode the QP is the SDK's (doca_verbs_qp_create on the Dev's
// imported context), with the Dev's PD imported into the SDK; its number,
// rings, doorbell record and register come from the SDK's getters, which
// package gpunetio's export reads. SRQs are open-mode objects and cannot be
// used, nor the host data path (PostSend, PostRecv).
func (d *Dev) NewQP(cfg QPConfig) (*QP, error) {
	const op = "doca_verbs_qp_create"
	if err := d.check(op); err != nil {
		return nil, err
	}
	if cfg.PD == nil {
		cfg.PD = d.pd
	} else if cfg.PD != d.pd {
		return nil, newErr(op, ErrInvalidValue, "QPConfig.PD is not the Dev's PD: Dev.NewQP uses the Dev's")
	}
	if cfg.OrderingSemantic != OrderingIBTA && d.mode == ModeOpen {
		logPrint(logInfo, docasdk.MsgSetOrderingUnsupportedOpen)
		return nil, sdkOnly(op, fmt.Sprintf("QP ordering semantic %v", cfg.OrderingSemantic))
	}
	if cfg.CQEInline != ScatterToCQENone && d.mode == ModeSDK {
		return nil, newErr(op, ErrNotSupported, "scatter-to-CQE (CQEInline %v) is set on open-mode QPs only", cfg.CQEInline)
	}
	logUse(docasdk.ObjQP, d.mode)
	for _, x := range []struct {
		n    *node
		dev  *Dev
		what string
	}{
		{nodeOf(cfg.SendCQ), devOfCQ(cfg.SendCQ), "send CQ"}, {nodeOf(cfg.RecvCQ), devOfCQ(cfg.RecvCQ), "receive CQ"},
		{nodeOfUMem(cfg.UMem), devOfUMem(cfg.UMem), "WQ UMEM"}, {nodeOfUMem(cfg.DBRUMem), devOfUMem(cfg.DBRUMem), "DBR UMEM"},
		{nodeOfUAR(cfg.UAR), devOfUAR(cfg.UAR), "UAR"},
	} {
		if x.n != nil && x.dev != d {
			return nil, initFailed(op, docasdk.ObjQP, newErr(op, ErrInvalidValue, "%s %s was not made on this Dev", x.what, x.n.userName()))
		}
	}
	if d.mode == ModeSDK {
		switch {
		case cfg.SRQ != nil:
			return nil, initFailed(op, docasdk.ObjQP, mixed(op, "SRQ "+cfg.SRQ.userName(), ModeOpen))
		case cfg.EmulateNoDBRExt:
			logPrint(logErr, "Failed to set emulate_no_dbr_ext: not supported by DOCA SDK")
			return nil, initFailed(op, docasdk.ObjQP, newErr(op, ErrInvalidValue, "EmulateNoDBRExt is not supported by the DOCA SDK"))
		}
	}
	q, err := newQP(op, d.ctx, d, cfg)
	if err != nil {
		return nil, initFailed(op, docasdk.ObjQP, err)
	}
	if d.mode == ModeOpen {
		logCreated(docasdk.ObjQP, unsafe.Pointer(q))
	}
	return q, nil
}

func devOfCQ(q *CQ) *Dev {
	if q == nil {
		return nil
	}
	return q.dev
}

func devOfUMem(u *UMem) *Dev {
	if u == nil {
		return nil
	}
	return u.dev
}

func devOfUAR(u *UAR) *Dev {
	if u == nil {
		return nil
	}
	return u.dev
}

// NewQP creates a queue pair in the RST state on device c
// (doca_verbs_qp_create), as Dev.NewQP does in open mode, with the PD of
// cfg. The PD, CQs, SRQ, UMEMs and UAR of cfg must belong to device c
// (ErrInvalidValue otherwise), be open, and stay open while the QP exists:
// the QP references each of them.
//
// Deprecated: DOCA GPUNetIO 3.0 makes QPs on a device object: use OpenDev
// and Dev.NewQP. This form runs in open mode only; in SDK mode it fails
// with ErrNotSupported.
func NewQP(c *Context, cfg QPConfig) (*QP, error) {
	const op = "doca_verbs_qp_create"
	if currentMode() == ModeSDK {
		return nil, openOnly(op, "NewQP on a Context (use Dev.NewQP)")
	}
	if c == nil {
		return nil, newErr(op, ErrInvalidValue, "nil context")
	}
	if cfg.OrderingSemantic != OrderingIBTA {
		logPrint(logInfo, docasdk.MsgSetOrderingUnsupportedOpen)
		return nil, sdkOnly(op, fmt.Sprintf("QP ordering semantic %v", cfg.OrderingSemantic))
	}
	q, err := newQP(op, c, nil, cfg)
	if err != nil {
		return nil, initFailed(op, docasdk.ObjQP, err)
	}
	return q, nil
}

// newQP checks cfg and builds the QP: the open implementation, or, for a
// Dev in SDK mode, the SDK's. The QP references d when it is not nil.
// It reads: check the configuration, reference what the QP uses, check the
// device's capabilities, then (open mode) size the queues, allocate the
// work queue and doorbell page and run CREATE_QP. On error everything taken
// so far is released.
func newQP(op string, c *Context, d *Dev, cfg QPConfig) (qp *QP, err error) {
	if err := checkQPConfig(op, c, cfg); err != nil {
		return nil, err
	}
	q := &QP{ctx: c, dev: d, cfg: cfg}
	// Reference the PD first: it keeps the device open while the QP is made.
	if err := cfg.PD.acquire(op, "PD", &q.node); err != nil {
		return nil, err
	}
	q.held = append(q.held, &cfg.PD.node)
	if d != nil {
		if err := d.acquire(op, "Dev", &q.node); err != nil {
			q.releaseHeld()
			return nil, err
		}
		q.held = append(q.held, &d.node)
	}
	defer func() {
		if err != nil {
			if terr := q.teardown(); terr != nil {
				err = errors.Join(err, terr)
			}
			q.releaseHeld()
		}
	}()
	for _, x := range []struct {
		n    *node
		kind string
	}{{nodeOf(cfg.SendCQ), "CQ"}, {nodeOf(cfg.RecvCQ), "CQ"}, {nodeOfSRQ(cfg.SRQ), "SRQ"}} {
		if x.n == nil {
			continue
		}
		if err := x.n.acquire(op, x.kind, &q.node); err != nil {
			return nil, err
		}
		q.held = append(q.held, x.n)
	}
	if q.devAttr, err = c.caps(); err != nil {
		return nil, wrapErr(op, codeOf(err), err, "device query")
	}
	if err := checkQPCaps(op, cfg, q.devAttr); err != nil {
		return nil, err
	}
	if d != nil && d.mode == ModeSDK {
		err = q.createSDK(op, d)
	} else {
		err = q.create(op)
	}
	if err != nil {
		return nil, err
	}
	return q, nil
}

// checkQPConfig checks what a QP configuration names before anything is
// referenced: the objects exist, belong to c and fit together.
func checkQPConfig(op string, c *Context, cfg QPConfig) error {
	if c == nil {
		return newErr(op, ErrInvalidValue, "nil context")
	}
	if err := c.check(op); err != nil {
		return err
	}
	if err := c.checkPD(op, cfg.PD); err != nil {
		return err
	}
	if (cfg.UMem == nil) != (cfg.DBRUMem == nil) {
		return newErr(op, ErrInvalidValue, "external WQ UMEM and DBR UMEM must be given together")
	}
	if cfg.UserIndex > maxUserIndex {
		return newErr(op, ErrInvalidValue, "user index 0x%x does not fit 24 bits", cfg.UserIndex)
	}
	if cfg.Type != QPTypeRC && cfg.Type != QPTypeUC {
		return newErr(op, ErrInvalidValue, "QP type %v is not RC or UC", cfg.Type)
	}
	if cfg.SQWR > 0 && cfg.SendCQ == nil {
		return newErr(op, ErrInvalidValue, "a send queue (sq_wr %d) needs a send CQ", cfg.SQWR)
	}
	if (cfg.RQWR > 0 || cfg.SRQ != nil) && cfg.RecvCQ == nil {
		return newErr(op, ErrInvalidValue, "a receive queue or SRQ needs a receive CQ")
	}
	switch cfg.CQEInline {
	case ScatterToCQENone:
	case ScatterToCQE32B:
		if cfg.RQWR == 0 && cfg.SRQ == nil {
			return newErr(op, ErrInvalidValue, "scatter-to-CQE (CQEInline %v) needs a receive queue or SRQ", cfg.CQEInline)
		}
	default:
		return newErr(op, ErrInvalidValue, "unknown scatter-to-CQE mode %v", cfg.CQEInline)
	}
	for _, cq := range []*CQ{cfg.SendCQ, cfg.RecvCQ} {
		if cq != nil && cq.ctx != c {
			return newErr(op, ErrInvalidValue, "CQ %d belongs to another device", cq.cqn)
		}
	}
	if cfg.SRQ != nil && cfg.SRQ.pd != cfg.PD {
		return newErr(op, ErrInvalidValue, "SRQ %d is on another PD", cfg.SRQ.srqn)
	}
	if cfg.UMem != nil {
		if err := cfg.UMem.sameDevice(op, c, "WQ UMEM"); err != nil {
			return err
		}
		if err := cfg.DBRUMem.sameDevice(op, c, "DBR UMEM"); err != nil {
			return err
		}
	}
	if cfg.UAR != nil {
		if err := cfg.UAR.sameDevice(op, c); err != nil {
			return err
		}
	}
	return nil
}

// checkQPCaps checks the configuration against the device's capabilities.
func checkQPCaps(op string, cfg QPConfig, attr *DeviceAttr) error {
	if cfg.Type == QPTypeRC && !attr.RCSupported {
		return newErr(op, ErrNotSupported, "device does not support RC")
	}
	switch cfg.SendDBRMode {
	case SendDBRValid:
	case SendNoDBRExt:
		if !attr.SendDBRModeNoDBRExt {
			return newErr(op, ErrNotSupported, "send DBR mode NO_DBR_EXT needs a device with send_dbr_mode_no_dbr_ext (ConnectX-8 class)")
		}
		if cfg.EmulateNoDBRExt {
			return newErr(op, ErrInvalidValue, "EmulateNoDBRExt is for DBR_VALID QPs, not NO_DBR_EXT")
		}
		if cfg.UAR == nil {
			return newErr(op, ErrInvalidValue, "NO_DBR_EXT QPs ring at UAR base + 0x600: give an external UAR")
		}
	default:
		return newErr(op, ErrInvalidValue, "unknown send DBR mode %v", cfg.SendDBRMode)
	}
	if cfg.CoreDirectMaster && !attr.CoreDirect {
		return newErr(op, ErrNotSupported, "core-direct master QPs need the cd capability")
	}
	return nil
}

// createSDK makes the QP through the SDK (SDK mode); the caller cleans up
// on error.
func (q *QP) createSDK(op string, d *Dev) error {
	cfg := q.cfg
	for _, u := range []*UMem{cfg.UMem, cfg.DBRUMem} {
		if u == nil {
			continue
		}
		if err := u.acquire(op, "UMem", &q.node); err != nil {
			return err
		}
		q.held = append(q.held, &u.node)
	}
	if cfg.UAR != nil {
		if err := cfg.UAR.acquire(op, "UAR", &q.node); err != nil {
			return err
		}
		q.held = append(q.held, &cfg.UAR.node)
		q.uar = cfg.UAR
	}
	if err := d.newQPSDK(op, q); err != nil {
		return err
	}
	q.state = QPStateRST
	q.attachCQs()
	q.init("QP", fmt.Sprintf("QP 0x%x (SDK) on %s", q.qpn, q.ctx.name))
	return nil
}

// create makes the open-mode QP: queue geometry, work queue memory,
// doorbells, then CREATE_QP; the caller cleans up on error.
func (q *QP) create(op string) error {
	wqBytes, err := q.sizeQueues(op)
	if err != nil {
		return err
	}
	wq, dbr, dbrOff, err := q.allocWQ(op, wqBytes)
	if err != nil {
		return err
	}
	if err := q.attachUAR(op); err != nil {
		return err
	}
	in, err := createQPIn(q, wq, dbr, dbrOff).Marshal()
	if err != nil {
		return wrapErr(op, ErrInvalidValue, err, "build CREATE_QP")
	}
	if q.obj, err = q.ctx.dev.CreateObj(in, make([]byte, prmCreateOutLen)); err != nil {
		return driverErr(op, err, "CREATE_QP")
	}
	q.qpn = q.obj.ID()
	q.state = QPStateRST
	q.post.init(q)
	q.attachCQs()
	evs := []mlx5.EventType{mlx5.EventWQCatasError, mlx5.EventWQInvalReqError, mlx5.EventWQAccessError}
	if q.cfg.SRQ != nil {
		evs = append(evs, mlx5.EventSRQLastWQE)
	}
	q.ctx.subscribeAsync(q.obj, cookieQP|uint64(q.qpn), q, evs...)
	q.init("QP", fmt.Sprintf("QP 0x%x on %s", q.qpn, q.ctx.name))
	return nil
}

// attachCQs tells the QP's CQs about it.
func (q *QP) attachCQs() {
	for _, cq := range []*CQ{q.cfg.SendCQ, q.cfg.RecvCQ} {
		if cq != nil {
			cq.qps.add(q)
		}
	}
}

// sizeQueues computes the SQ and RQ geometry and returns the work queue's
// size in bytes, checking it against an external UMEM.
func (q *QP) sizeQueues(op string) (uint64, error) {
	cfg, attr := q.cfg, q.devAttr
	var err error
	if cfg.RQWR > 0 && cfg.SRQ == nil {
		if q.rq, err = sizeRQ(op, cfg.RQWR, cfg.RecvMaxSGE, attr.MaxQPWR, attr.MaxRQDescSize); err != nil {
			return 0, err
		}
		q.hasRQ = true
	}
	if cfg.SQWR > 0 {
		if q.sq, err = sizeSQ(op, cfg.SQWR, cfg.SendMaxSGE, cfg.MaxInlineData, attr.MaxSQDescSize, attr.MaxSendWQEBB); err != nil {
			return 0, err
		}
	}
	wqBytes := q.rq.bytes + q.sq.wqebbs*wqebb
	if cfg.UMem != nil {
		if cfg.UMemOffset != 0 {
			return 0, newErr(op, ErrInvalidValue, "WQ UMEM offset %d: must be 0 (firmware gets no WQ offset)", cfg.UMemOffset)
		}
		if wqBytes > cfg.UMem.Size() {
			return 0, newErr(op, ErrInvalidValue, "work queue needs %d bytes, UMEM has %d", wqBytes, cfg.UMem.Size())
		}
		if cfg.DBRUMemOffset%8 != 0 || cfg.DBRUMemOffset > cfg.DBRUMem.Size() || cfg.DBRUMem.Size()-cfg.DBRUMemOffset < 8 {
			return 0, newErr(op, ErrInvalidValue, "DBR offset %d is not an 8-byte aligned offset inside the %d-byte UMEM", cfg.DBRUMemOffset, cfg.DBRUMem.Size())
		}
	}
	return wqBytes, nil
}

// allocWQ references the external WQ and DBR UMEMs, or allocates host
// memory with the doorbell record after the work queue and registers it; it
// returns the UMEMs and the DBR offset and sets the QP's addresses.
func (q *QP) allocWQ(op string, wqBytes uint64) (wq, dbr *UMem, dbrOff uint64, err error) {
	cfg := q.cfg
	if cfg.UMem != nil {
		wq, dbr, dbrOff = cfg.UMem, cfg.DBRUMem, cfg.DBRUMemOffset
		for _, u := range []*UMem{wq, dbr} {
			if err := u.acquire(op, "UMem", &q.node); err != nil {
				return nil, nil, 0, err
			}
			q.held = append(q.held, &u.node)
		}
	} else {
		dbrOff = alignUp(wqBytes, dbrArea)
		if q.buf, err = allocHost(op, dbrOff+dbrArea); err != nil {
			return nil, nil, 0, err
		}
		if q.umem, err = newUMem(op, q.ctx, nil, q.buf.addr(), uint64(len(q.buf.b)), 0, nil); err != nil {
			return nil, nil, 0, err
		}
		if err := q.umem.acquire(op, "UMem", &q.node); err != nil {
			return nil, nil, 0, err
		}
		wq, dbr = q.umem, q.umem
	}
	q.wq = wq.Addr()
	q.sqAddr = q.wq + uintptr(q.rq.bytes)
	q.dbr = dbr.Addr() + uintptr(dbrOff)
	return wq, dbr, dbrOff, nil
}

// attachUAR references the configured UAR or allocates the QP's own, and
// sets the doorbell address the send DBR mode rings.
func (q *QP) attachUAR(op string) error {
	if u := q.cfg.UAR; u != nil {
		if err := u.acquire(op, "UAR", &q.node); err != nil {
			return err
		}
		q.held = append(q.held, &u.node)
		q.uar = u
	} else {
		u, err := newUARFallback(q.ctx, op, UARBlueFlame, UARNonCache)
		if err != nil {
			return err
		}
		q.uar, q.ownUAR = u, true
		// The QP's own page: QP.UAR returns it, and closing it under the
		// QP would leave the doorbell unmapped.
		if err := u.acquire(op, "UAR", &q.node); err != nil {
			return err
		}
	}
	if q.cfg.SendDBRMode == SendNoDBRExt {
		q.db = q.uar.DBRLessAddr()
	} else {
		q.db = q.uar.RegAddr()
	}
	return nil
}

// createQPIn is the CREATE_QP command of q: its configuration, the queue
// geometry, the UAR and the work queue and doorbell record UMEMs.
func createQPIn(q *QP, wq, dbr *UMem, dbrOff uint64) mlx5.CreateQPIn {
	cfg := q.cfg
	c := mlx5.QPContext{
		ST: mlx5.STRC, PD: cfg.PD.PDN(), UARPage: q.uar.ID(), UserIndex: cfg.UserIndex,
		SendDBRMode: mlx5.SendDBRMode(cfg.SendDBRMode), DBRUMEMValid: true, DBRUMEMID: dbr.ID(), DBRAddr: dbrOff,
		CDMaster: cfg.CoreDirectMaster, TSFormat: tsFormatFor(q.devAttr.TSFormat),
	}
	if cfg.Type == QPTypeUC {
		c.ST = mlx5.STUC
	}
	if cfg.SQWR > 0 {
		c.CQNSnd, c.LogSQSize = cfg.SendCQ.cqn, uint8(q.sq.logSize)
	} else {
		c.NoSQ = true
	}
	if cfg.CQEInline == ScatterToCQE32B {
		c.CSRes = mlx5.ResScatData32CQE
	}
	switch {
	case cfg.SRQ != nil:
		c.CQNRcv, c.RQType, c.SRQNRMPNXRQN = cfg.RecvCQ.cqn, mlx5.RQTypeSRQ, cfg.SRQ.srqn
	case q.hasRQ:
		c.CQNRcv, c.RQType = cfg.RecvCQ.cqn, mlx5.RQTypeRegular
		c.LogRQSize, c.LogRQStride = uint8(q.rq.logSize), uint8(q.rq.logStride)
	default:
		c.RQType = mlx5.RQTypeZeroSize
		if cfg.RecvCQ != nil {
			c.CQNRcv = cfg.RecvCQ.cqn
		}
	}
	return mlx5.CreateQPIn{CmdHeader: mlx5.CmdHeader{Opcode: mlx5.OpCreateQP}, QPC: c, WQUMEMID: wq.ID(), WQUMEMValid: true}
}

// releaseHeld drops the references NewQP took on other objects.
func (q *QP) releaseHeld() {
	for _, n := range q.held {
		n.release(&q.node)
	}
	q.held = nil
}

func nodeOf(cq *CQ) *node {
	if cq == nil {
		return nil
	}
	return &cq.node
}

func nodeOfSRQ(s *SRQ) *node {
	if s == nil {
		return nil
	}
	return &s.node
}

// tsFormatFor picks qpc.ts_format from the sq_ts_format capability: free
// running (0) when that is all the device has, else DEFAULT (1).
func tsFormatFor(capTS uint8) mlx5.TSFormat {
	if capTS == 0 {
		return mlx5.TSFreeRunning
	}
	return mlx5.TSDefault
}

// teardown destroys what NewQP made (not the references it holds). It can
// be called again after a failure.
func (q *QP) teardown() error {
	const op = "doca_verbs_qp_destroy"
	if q.sdk != nil {
		err := q.closeSDK(op)
		q.sdk = nil
		return err
	}
	if err := destroyObj(op, &q.obj, "qpn 0x%x", q.qpn); err != nil {
		return err
	}
	q.ctx.unsubscribeAsync(cookieQP | uint64(q.qpn))
	if q.ownUAR && q.uar != nil {
		if err := q.closeOwned(op, "UAR", &q.uar.node, q.uar.Close); err != nil {
			return err
		}
		q.uar = nil
	}
	if q.umem != nil {
		if err := q.closeOwned(op, "UMem", &q.umem.node, q.umem.Close); err != nil {
			return err
		}
		q.umem = nil
	}
	return freeRing(op, &q.buf, "QP work queue")
}

// Close destroys the QP (doca_verbs_qp_destroy). It fails with ErrInUse
// while a Hold is taken on the QP (package gpunetio holds the QPs it
// exports). It waits for PostSend, PostRecv, Modify and Query calls in
// progress; every call after it fails with ErrBadState.
func (q *QP) Close() error {
	const op = "doca_verbs_qp_destroy"
	if q == nil {
		logPrint(logErr, "Failed to destroy qp: parameter verbs_qp is NULL")
		return newErr(op, ErrInvalidValue, "nil QP")
	}
	if q.use(op, "QP") == nil {
		if err := checkAsyncAcked(op, q.userName(), &q.asyncPending); err != nil {
			return err
		}
	}
	done, err := q.beginClose(op, "QP")
	if done || err != nil {
		return err
	}
	sdk := q.sdk != nil
	err = q.teardown()
	if err != nil && !sdk {
		q.endClose(err)
		return err
	}
	// Gone (an SDK QP is released even when the SDK fails, as in DOCA 3.0).
	for _, cq := range []*CQ{q.cfg.SendCQ, q.cfg.RecvCQ} {
		if cq != nil {
			cq.qps.remove(q)
		}
	}
	q.releaseHeld()
	q.endClose(nil)
	return err
}

// check refuses a nil, zero-value or closed QP.
func (q *QP) check(op string) error {
	if q == nil {
		return newErr(op, ErrInvalidValue, "nil QP")
	}
	return q.use(op, "QP")
}

// enterQP holds q open for a call that touches its rings, doorbell or
// device object (leave with q.leave).
func (q *QP) enterQP(op string) error {
	if q == nil {
		return newErr(op, ErrInvalidValue, "nil QP")
	}
	return q.enter(op, "QP")
}

// Hold takes a reference that keeps the QP, its rings, doorbell record and
// doorbell page alive (Close fails with ErrInUse naming holder) until
// Hold.Release; ErrBadState if it is closed. Package gpunetio holds every
// QP it exports.
func (q *QP) Hold(holder string) (*Hold, error) {
	const op = "QP.Hold"
	if q == nil {
		return nil, newErr(op, ErrInvalidValue, "nil QP")
	}
	return q.hold(op, "QP", holder)
}

// The getters return values fixed at creation, and zero values for a nil
// or zero QP.

// QPN is the QP number.
func (q *QP) QPN() uint32 {
	if q == nil {
		return 0
	}
	return q.qpn
}

// WQInfo locates the work queues (doca_verbs_qp_get_wq).
type WQInfo struct {
	SQAddr    uintptr
	SQWQEBBs  uint32 // send ring size in 64-byte WQEBBs
	RQAddr    uintptr
	RQEntries uint32
	RQWQESize uint32 // bytes per receive WQE
	SQWQESize uint32 // bytes reserved per send WR (a multiple of 64)
}

// WQ returns the work-queue geometry.
func (q *QP) WQ() WQInfo {
	if q == nil {
		return WQInfo{}
	}
	return WQInfo{SQAddr: q.sqAddr, SQWQEBBs: uint32(q.sq.wqebbs), RQAddr: q.wq,
		RQEntries: uint32(q.rq.entries), RQWQESize: uint32(q.rq.wqeSize), SQWQESize: uint32(q.sq.wqeSize)}
}

// DBRAddr is the 8-byte doorbell record (word 0 receive, word 1 send).
func (q *QP) DBRAddr() uintptr {
	if q == nil {
		return 0
	}
	return q.dbr
}

// DoorbellAddr is the doorbell register this QP rings: UAR base + 0x800, or
// + 0x600 in NO_DBR_EXT mode (doca_verbs_qp_get_uar_addr).
func (q *QP) DoorbellAddr() uintptr {
	if q == nil {
		return 0
	}
	return q.db
}

// UAR is the doorbell page.
func (q *QP) UAR() *UAR {
	if q == nil {
		return nil
	}
	return q.uar
}

// SendDBRMode is the QP's send doorbell-record mode.
func (q *QP) SendDBRMode() SendDBRMode {
	if q == nil {
		return 0
	}
	return q.cfg.SendDBRMode
}

// EmulateNoDBRExt reports QPConfig.EmulateNoDBRExt.
func (q *QP) EmulateNoDBRExt() bool {
	if q == nil {
		return false
	}
	return q.cfg.EmulateNoDBRExt
}

// Config returns the configuration with the derived values DOCA reports:
// SQWR is the real WR capacity, RQWR the RQ entries, RecvMaxSGE the rounded
// SGE count and MaxInlineData the real inline capacity.
func (q *QP) Config() QPConfig {
	if q == nil {
		return QPConfig{}
	}
	c := q.cfg
	if q.sdk != nil {
		return c // the SDK reports no derived sizes
	}
	if q.cfg.SQWR > 0 {
		c.SQWR = q.sq.wrCap
		if q.cfg.MaxInlineData > 0 {
			c.MaxInlineData = q.sq.maxInline
		}
	}
	if q.hasRQ {
		c.RQWR = uint32(q.rq.entries)
		c.RecvMaxSGE = q.rq.sges
	}
	return c
}

// UserContext returns QPConfig.UserContext
// (doca_verbs_qp_init_attr_get_qp_context after a query); never
// interpreted. 0 for a nil QP.
func (q *QP) UserContext() uintptr {
	if q == nil {
		return 0
	}
	return q.cfg.UserContext
}

// State is the QP's state. After a successful Modify it is the state
// Modify moved the QP to; but the device moves an RTR or RTS QP to ERR by
// itself (an error completion, a CQ error), so in those two states State
// asks the device (QUERY_QP, one firmware command) and reports ERR when the
// device says so. Poll also records ERR when it returns an error
// completion of the QP. A nil, zero or closed QP reports the last state
// known.
func (q *QP) State() QPState {
	if q == nil {
		return QPStateRST
	}
	st := q.cachedState()
	if st != QPStateRTR && st != QPStateRTS {
		return st
	}
	if err := q.enterQP("QP.State"); err != nil {
		return st
	}
	defer q.leave()
	var fw QPState
	var err error
	if q.sdk != nil {
		fw, err = q.sdk.state("QP.State")
	} else {
		fw, err = q.queryState()
	}
	if err == nil && fw == QPStateERR {
		q.mu.Lock()
		if q.state == st {
			q.state = QPStateERR
		}
		st = q.state
		q.mu.Unlock()
	}
	return st
}

// cachedState is the state of the last Modify, or ERR once an error was
// seen; the data path uses it (no firmware command).
func (q *QP) cachedState() QPState {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.state
}

// sawError records that the device moved the QP to ERR: Poll returned an
// error completion of it, or its CQ is in error. Only RTR and RTS QPs move
// to ERR by themselves.
func (q *QP) sawError() {
	q.mu.Lock()
	if q.state == QPStateRTR || q.state == QPStateRTS {
		q.state = QPStateERR
	}
	q.mu.Unlock()
}

// Context returns the device of the QP.
func (q *QP) Context() *Context {
	if q == nil {
		return nil
	}
	return q.ctx
}

// PD returns the QP's protection domain.
func (q *QP) PD() *PD {
	if q == nil {
		return nil
	}
	return q.cfg.PD
}

// SendCQ returns the send CQ.
func (q *QP) SendCQ() *CQ {
	if q == nil {
		return nil
	}
	return q.cfg.SendCQ
}

// RecvCQ returns the receive CQ.
func (q *QP) RecvCQ() *CQ {
	if q == nil {
		return nil
	}
	return q.cfg.RecvCQ
}

// DeviceAttr returns the capability snapshot taken at creation.
func (q *QP) DeviceAttr() *DeviceAttr {
	if q == nil {
		return nil
	}
	return q.devAttr
}
