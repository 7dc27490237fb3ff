package verbs

import (
	"sync"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// QPConfig describes a queue pair (doca_verbs_qp_init_attr). Zero values are
// DOCA's defaults.
type QPConfig struct {
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
	// no DBR, with a CPU proxy writing the DBR (validated, then only reported).
	EmulateNoDBRExt bool
}

// QP is a queue pair (doca_verbs_qp).
type QP struct {
	node
	ctx *Context
	cfg QPConfig
	obj mlx5.Obj
	qpn uint32

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

	mu       sync.Mutex // state and cached modify inputs
	state    QPState
	addrType AddrType
	portNum  uint16

	post poster // host-side posting state
}

// NewQP creates a queue pair in the RST state (doca_verbs_qp_create).
func NewQP(c *Context, cfg QPConfig) (qp *QP, err error) {
	const op = "doca_verbs_qp_create"
	if c == nil {
		return nil, newErr(op, ErrInvalidValue, "nil context")
	}
	if err := c.use(op); err != nil {
		return nil, err
	}
	if cfg.PD == nil {
		return nil, newErr(op, ErrInvalidValue, "no PD")
	}
	if cfg.PD.ctx != c {
		return nil, newErr(op, ErrInvalidValue, "PD belongs to device %s, not %s", cfg.PD.ctx.name, c.name)
	}
	if (cfg.UMem == nil) != (cfg.DBRUMem == nil) {
		return nil, newErr(op, ErrInvalidValue, "external WQ UMEM and DBR UMEM must be given together")
	}
	if cfg.UserIndex > maxUserIndex {
		return nil, newErr(op, ErrInvalidValue, "user index 0x%x does not fit 24 bits", cfg.UserIndex)
	}
	attr, err := c.caps()
	if err != nil {
		return nil, wrapErr(op, ErrInvalidValue, err, "device query")
	}
	if cfg.Type != QPTypeRC && cfg.Type != QPTypeUC {
		return nil, newErr(op, ErrInvalidValue, "QP type %v is not RC or UC", cfg.Type)
	}
	if cfg.Type == QPTypeRC && !attr.RCSupported {
		return nil, newErr(op, ErrNotSupported, "device does not support RC")
	}
	switch cfg.SendDBRMode {
	case SendDBRValid:
	case SendNoDBRExt:
		if !attr.SendDBRModeNoDBRExt {
			return nil, newErr(op, ErrNotSupported, "send DBR mode NO_DBR_EXT needs a device with send_dbr_mode_no_dbr_ext (ConnectX-8 class)")
		}
		if cfg.EmulateNoDBRExt {
			return nil, newErr(op, ErrInvalidValue, "EmulateNoDBRExt is for DBR_VALID QPs, not NO_DBR_EXT")
		}
		if cfg.UAR == nil {
			return nil, newErr(op, ErrInvalidValue, "NO_DBR_EXT QPs ring at UAR base + 0x600: give an external UAR")
		}
	default:
		return nil, newErr(op, ErrInvalidValue, "unknown send DBR mode %v", cfg.SendDBRMode)
	}
	if cfg.CoreDirectMaster && !attr.CoreDirect {
		return nil, newErr(op, ErrNotSupported, "core-direct master QPs need the cd capability")
	}
	if cfg.SQWR > 0 && cfg.SendCQ == nil {
		return nil, newErr(op, ErrInvalidValue, "a send queue (sq_wr %d) needs a send CQ", cfg.SQWR)
	}
	if (cfg.RQWR > 0 || cfg.SRQ != nil) && cfg.RecvCQ == nil {
		return nil, newErr(op, ErrInvalidValue, "a receive queue or SRQ needs a receive CQ")
	}
	for _, cq := range []*CQ{cfg.SendCQ, cfg.RecvCQ} {
		if cq != nil && cq.ctx != c {
			return nil, newErr(op, ErrInvalidValue, "CQ %d belongs to another device", cq.cqn)
		}
	}
	if cfg.SRQ != nil && cfg.SRQ.pd != cfg.PD {
		return nil, newErr(op, ErrInvalidValue, "SRQ %d is on another PD", cfg.SRQ.srqn)
	}

	q := &QP{ctx: c, cfg: cfg, devAttr: attr}
	if cfg.RQWR > 0 && cfg.SRQ == nil {
		if q.rq, err = sizeRQ(op, cfg.RQWR, cfg.RecvMaxSGE, attr.MaxQPWR, attr.MaxRQDescSize); err != nil {
			return nil, err
		}
		q.hasRQ = true
	}
	if cfg.SQWR > 0 {
		if q.sq, err = sizeSQ(op, cfg.SQWR, cfg.SendMaxSGE, cfg.MaxInlineData, attr.MaxSQDescSize, attr.MaxSendWQEBB); err != nil {
			return nil, err
		}
	}
	sqBytes := q.sq.wqebbs * wqebb
	wqBytes := q.rq.bytes + sqBytes
	if cfg.UMem != nil {
		if cfg.UMemOffset != 0 {
			return nil, newErr(op, ErrInvalidValue, "WQ UMEM offset %d: must be 0 (firmware gets no WQ offset)", cfg.UMemOffset)
		}
		if wqBytes > cfg.UMem.Size() {
			return nil, newErr(op, ErrInvalidValue, "work queue needs %d bytes, UMEM has %d", wqBytes, cfg.UMem.Size())
		}
		if cfg.DBRUMemOffset%8 != 0 || cfg.DBRUMemOffset+8 > cfg.DBRUMem.Size() {
			return nil, newErr(op, ErrInvalidValue, "DBR offset %d is not an 8-byte aligned offset inside the %d-byte UMEM", cfg.DBRUMemOffset, cfg.DBRUMem.Size())
		}
	}

	if err := cfg.PD.acquire(op); err != nil {
		return nil, err
	}
	var held []*node // what this QP holds a reference on, released on failure
	held = append(held, &cfg.PD.node)
	defer func() {
		if err != nil {
			q.teardown()
			for _, n := range held {
				n.release()
			}
		}
	}()
	for _, n := range []*node{nodeOf(cfg.SendCQ), nodeOf(cfg.RecvCQ), nodeOfSRQ(cfg.SRQ)} {
		if n == nil {
			continue
		}
		if err := n.acquire(op); err != nil {
			return nil, err
		}
		held = append(held, n)
	}

	var wqUMem, dbrUMem *UMem
	var dbrOff uint64
	if cfg.UMem != nil {
		wqUMem, dbrUMem, dbrOff = cfg.UMem, cfg.DBRUMem, cfg.DBRUMemOffset
		for _, u := range []*UMem{wqUMem, dbrUMem} {
			if err := u.acquire(op); err != nil {
				return nil, err
			}
			held = append(held, &u.node)
		}
	} else {
		dbrOff = alignUp(wqBytes, dbrArea)
		if q.buf, err = allocHost(op, dbrOff+dbrArea); err != nil {
			return nil, err
		}
		if q.umem, err = NewUMem(c, q.buf.addr(), uint64(len(q.buf.b)), 0, nil); err != nil {
			return nil, err
		}
		wqUMem, dbrUMem = q.umem, q.umem
	}
	q.wq = wqUMem.Addr()
	q.sqAddr = q.wq + uintptr(q.rq.bytes)
	q.dbr = dbrUMem.Addr() + uintptr(dbrOff)

	if cfg.UAR != nil {
		if err := cfg.UAR.acquire(op); err != nil {
			return nil, err
		}
		held = append(held, &cfg.UAR.node)
		q.uar = cfg.UAR
	} else {
		if q.uar, err = newUARFallback(c, op, UARBlueFlame, UARNonCache); err != nil {
			return nil, err
		}
		q.ownUAR = true
	}
	if cfg.SendDBRMode == SendNoDBRExt {
		q.db = q.uar.DBRLessAddr()
	} else {
		q.db = q.uar.RegAddr()
	}

	p := qpParams{
		st: cfg.Type, pdn: cfg.PD.PDN(), uarPage: q.uar.ID(), userIndex: cfg.UserIndex,
		sendDBRMode: cfg.SendDBRMode, dbrUMemID: dbrUMem.ID(), dbrOffset: dbrOff,
		cdMaster: cfg.CoreDirectMaster, wqUMemID: wqUMem.ID(), tsFormat: tsFormatFor(attr.TSFormat),
	}
	if cfg.SQWR > 0 {
		p.cqnSnd = cfg.SendCQ.cqn
		p.logSQ = q.sq.logSize
	} else {
		p.noSQ = true
	}
	switch {
	case cfg.SRQ != nil:
		p.cqnRcv, p.rqType, p.srqn = cfg.RecvCQ.cqn, rqTypeSRQ, cfg.SRQ.srqn
	case q.hasRQ:
		p.cqnRcv, p.rqType, p.logRQ, p.logRQStride = cfg.RecvCQ.cqn, rqTypeRegular, q.rq.logSize, q.rq.logStride
	default:
		p.rqType = rqTypeZero
		if cfg.RecvCQ != nil {
			p.cqnRcv = cfg.RecvCQ.cqn
		}
	}
	in, err := prmCreateQP(p)
	if err != nil {
		return nil, wrapErr(op, ErrInvalidValue, err, "build CREATE_QP")
	}
	q.obj, err = c.dev.CreateObj(in, make([]byte, prmCreateOutLen))
	if err != nil {
		return nil, driverErr(op, err, "CREATE_QP")
	}
	q.qpn = q.obj.ID()
	q.state = QPStateRST
	q.post.init(q)
	for _, cq := range []*CQ{cfg.SendCQ, cfg.RecvCQ} {
		if cq != nil {
			cq.users.add(q)
		}
	}
	q.init("QP")
	return q, nil
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
func tsFormatFor(capTS uint8) uint8 {
	if capTS == 0 {
		return 0
	}
	return 1
}

// teardown destroys what NewQP made (not the references it holds).
func (q *QP) teardown() error {
	const op = "doca_verbs_qp_destroy"
	if q.obj != nil {
		if err := q.obj.Destroy(); err != nil {
			return driverErr(op, err, "qpn 0x%x", q.qpn)
		}
		q.obj = nil
	}
	if q.ownUAR && q.uar != nil {
		if err := q.uar.Close(); err != nil {
			return err
		}
		q.uar = nil
	}
	if q.umem != nil {
		if err := q.umem.Close(); err != nil {
			return err
		}
		q.umem = nil
	}
	if q.buf != nil {
		if err := q.buf.free(); err != nil {
			return wrapErr(op, ErrOperatingSystem, err, "munmap QP work queue")
		}
		q.buf = nil
	}
	return nil
}

// Close destroys the QP (doca_verbs_qp_destroy).
func (q *QP) Close() error {
	done, err := q.beginClose("doca_verbs_qp_destroy")
	if done || err != nil {
		return err
	}
	err = q.teardown()
	if err == nil {
		for _, cq := range []*CQ{q.cfg.SendCQ, q.cfg.RecvCQ} {
			if cq != nil {
				cq.users.remove(q)
			}
		}
		q.cfg.PD.release()
		for _, n := range []*node{nodeOf(q.cfg.SendCQ), nodeOf(q.cfg.RecvCQ), nodeOfSRQ(q.cfg.SRQ)} {
			if n != nil {
				n.release()
			}
		}
		if q.cfg.UMem != nil {
			q.cfg.UMem.release()
			q.cfg.DBRUMem.release()
		}
		if !q.ownUAR {
			q.uar.release()
		}
	}
	q.endClose(err)
	return err
}

// QPN is the QP number.
func (q *QP) QPN() uint32 { return q.qpn }

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
	return WQInfo{SQAddr: q.sqAddr, SQWQEBBs: uint32(q.sq.wqebbs), RQAddr: q.wq,
		RQEntries: uint32(q.rq.entries), RQWQESize: uint32(q.rq.wqeSize), SQWQESize: uint32(q.sq.wqeSize)}
}

// DBRAddr is the 8-byte doorbell record (word 0 receive, word 1 send).
func (q *QP) DBRAddr() uintptr { return q.dbr }

// DoorbellAddr is the doorbell register this QP rings: UAR base + 0x800, or
// + 0x600 in NO_DBR_EXT mode (doca_verbs_qp_get_uar_addr).
func (q *QP) DoorbellAddr() uintptr { return q.db }

// UAR is the doorbell page.
func (q *QP) UAR() *UAR { return q.uar }

// SendDBRMode is the QP's send doorbell-record mode.
func (q *QP) SendDBRMode() SendDBRMode { return q.cfg.SendDBRMode }

// EmulateNoDBRExt reports QPConfig.EmulateNoDBRExt.
func (q *QP) EmulateNoDBRExt() bool { return q.cfg.EmulateNoDBRExt }

// Config returns the configuration with the derived values DOCA reports:
// SQWR is the real WR capacity, RQWR the RQ entries, RecvMaxSGE the rounded
// SGE count and MaxInlineData the real inline capacity.
func (q *QP) Config() QPConfig {
	c := q.cfg
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

// State is the state cached from the last successful Modify.
func (q *QP) State() QPState {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.state
}

// Context returns the device of the QP.
func (q *QP) Context() *Context { return q.ctx }

// PD returns the QP's protection domain.
func (q *QP) PD() *PD { return q.cfg.PD }

// SendCQ returns the send CQ.
func (q *QP) SendCQ() *CQ { return q.cfg.SendCQ }

// RecvCQ returns the receive CQ.
func (q *QP) RecvCQ() *CQ { return q.cfg.RecvCQ }

// DeviceAttr returns the capability snapshot taken at creation.
func (q *QP) DeviceAttr() *DeviceAttr { return q.devAttr }
