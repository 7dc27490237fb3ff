package emu

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

var (
	qf  = mlx5.QPCFields
	adf = mlx5.ADSFields
)

// CREATE_QP input fields beyond the qpc that the kernel writes (and the
// command tests corrupt); firmware reads the decoded CreateQPIn.
var (
	fQPOptMask   = mlx5.CreateQPInFields.OptParamMask
	fWQUMEMValid = mlx5.CreateQPInFields.WQUMEMValid
)

const (
	qpcByte        = mlx5.QPCMailboxBit / 8 // qpc position in CREATE/MODIFY/QUERY mailboxes
	qpcLen         = mlx5.QPCLen
	adsBit         = mlx5.QPCPrimaryPathBit // primary address path inside the qpc
	maxSGEPerWQE   = mlx5.MaxDS             // a WQE holds at most 63 16-byte units, so at most 63 SGEs
	ackReqInterval = 32                     // a requester asks for an ACK at least every this many messages
)

func ads(f mlx5.Field) mlx5.Field { return f.At(adsBit) }

// QP states (qpc.state) as the emulator's atomic state word holds them.
const (
	stRST  = uint32(mlx5.QPStateRST)
	stINIT = uint32(mlx5.QPStateINIT)
	stRTR  = uint32(mlx5.QPStateRTR)
	stRTS  = uint32(mlx5.QPStateRTS)
	stERR  = uint32(mlx5.QPStateERR)
)

// qp is a queue pair: its context, its rings, the requester engine state
// (guarded by mu) and the responder state (guarded by rmu).
type qp struct {
	// inPlaceFrames counts the frames this QP sent with sendInPlace, for
	// tests (first: 64-bit aligned on 32-bit platforms).
	inPlaceFrames atomic.Uint64

	nic   *NIC
	ctx   *devCtx
	qpn   uint32
	uc    bool
	pd    *pd
	uar   *uar
	scq   *cq
	rcq   *cq
	wq    *umem
	dbr   *umem
	doff  uint64
	sqOff uint64 // SQ byte offset in the wq span
	sqLog uint8
	noSQ  bool
	rqOff uint64
	rqLog uint8
	rqStr uint8 // log2 of the RQ stride in bytes
	rqT   uint8 // rq_type
	srq   *rmp  // rq_type 1
	noDBR bool
	cdM   bool
	uidx  uint32
	cs32  bool // cs_res: receives of at most 32 bytes land in their CQE

	state  atomic.Uint32 // QP state, written under mu and rmu together
	kick   atomic.Bool   // DBR-less: a doorbell on the QP's page asks for a recovery scan
	pageDB atomic.Int64  // DBR-less: when a doorbell was last seen on the page (ns since epoch)
	// DBR mode with the DBR in device memory: a doorbell on the QP's page
	// (or a state change) asks for the DBR to be read; dbHint is the
	// producer index of the QP's newest doorbell | hintValid.
	dbrKick atomic.Bool
	dbHint  atomic.Uint32

	// mu is taken by the engine every round: off the line of state, which
	// the responder reads on every request (a miss each time otherwise).
	_ [64]byte
	// mu guards the context bytes and the requester.
	mu   sync.Mutex
	qpc  [qpcLen]byte
	dead bool // destroyed (both locks)

	// Path and requester parameters, cached from the qpc at transitions.
	mtu        int
	logMsgMax  uint8
	remoteQPN  uint32
	rgid       mlx5.GID
	ackTimeout time.Duration // 0: infinite
	retryCount uint8
	rnrRetry   uint8
	maxRA      int
	ackFreq    int

	req requester
	wt  watchState // the GPU's watch of the send queue (watch.go)

	// Recovery scan snapshot (DBR-less QPs), guarded by mu.
	scanIdx uint16
	scanLen int
	scanAt  time.Time
	scanBuf [localBBs * wqebb]byte
	scanTmp [localBBs * wqebb]byte

	// rmu guards the responder (on lines of its own: the requester above
	// is the engine's).
	_    [64]byte
	rmu  sync.Mutex
	resp responder
}

// createQP executes CREATE_QP; n.mu held. The mailbox is decoded by
// mlx5.UnmarshalCreateQPIn (its 272-byte form: firmware reads no further).
func (c *devCtx) createQP(in, out []byte) fwError {
	n := c.nic
	cmd, err := mlx5.UnmarshalCreateQPIn(in[:mlx5.CreateQPInLen])
	if err != nil {
		return fwError(SynBadInLen) // not reached: checkLen ran
	}
	if cmd.OptParamMask != 0 || cmd.QPCExt {
		return fwError(SynReserved)
	}
	x := &cmd.QPC
	if x.State != mlx5.QPStateRST || x.HWSQWQEBBCounter != 0 || x.NextSendPSN != 0 || x.LastAckedPSN != 0 || x.HWRQCounter != 0 {
		return fwError(SynReserved)
	}
	if x.ST != mlx5.STRC && x.ST != mlx5.STUC {
		return fwError(SynQPServiceType)
	}
	p := n.pds[x.PD]
	if p == nil || p.ctx != c {
		return fwError(SynQPPD)
	}
	u := n.uars[x.UARPage]
	if u == nil || u.ctx != c {
		return fwError(SynQPUAR)
	}
	if x.PMState != mlx5.PMStateArmed && x.PMState != mlx5.PMStateMigrated {
		return fwError(SynQPPMState)
	}
	noSQ := x.NoSQ
	var scq *cq
	if !noSQ {
		scq = n.cqs[x.CQNSnd]
		if scq == nil || scq.ctx != c {
			return fwError(SynQPCQSnd)
		}
	}
	sqLog := x.LogSQSize
	if sqLog > capLogMaxQPSz {
		return fwError(SynQPSQSize)
	}
	rqT := x.RQType
	rqLog := x.LogRQSize
	rqStr := x.LogRQStride + 4
	var rcq *cq
	var srq *rmp
	var rqBytes uint64
	switch rqT {
	case mlx5.RQTypeRegular:
		if rqLog > capLogMaxQPSz || 1<<rqStr > capMaxWQESzRQ {
			return fwError(SynQPRQSize)
		}
		rqBytes = uint64(1) << (rqLog + rqStr)
	case mlx5.RQTypeZeroSize:
		if rqLog != 0 || rqStr != 4 {
			return fwError(SynQPRQSize)
		}
	case mlx5.RQTypeSRQ:
		srq = n.rmps[x.SRQNRMPNXRQN]
		if srq == nil || srq.ctx != c || rqLog != 0 {
			return fwError(SynQPSRQ)
		}
	default:
		return fwError(SynQPRQType)
	}
	if cn := x.CQNRcv; cn != 0 || rqT != mlx5.RQTypeZeroSize {
		rcq = n.cqs[cn]
		if rcq == nil || rcq.ctx != c {
			return fwError(SynQPCQRcv)
		}
	}
	mode := x.SendDBRMode
	switch {
	case mode == mlx5.SendDBRValid:
	case mode == mlx5.SendDBRNoDBRExt && n.caps.noDBR():
		if sqLog > n.caps.general2.LogMaxSendDBRLessQPSQ {
			return fwError(SynQPNoDBRSize)
		}
	default:
		return fwError(SynQPDBRMode)
	}
	if x.TSFormat > 2 {
		return fwError(SynQPTSFormat)
	}
	if x.CDSlaveSend || x.CDSlaveReceive {
		return fwError(SynQPCDSlave)
	}
	// Scatter-to-CQE: the responder's 32-byte form only. Every CQ here has
	// 64-byte CQEs, which hold no 64-byte payload, and the requester's
	// form (READ responses and atomic results into the CQE) is not
	// emulated.
	if (x.CSRes != mlx5.ResScatNone && x.CSRes != mlx5.ResScatData32CQE) || x.CSReq != 0 {
		return fwError(SynQPScatterCQE)
	}
	wq := c.umemOf(cmd.WQUMEMID)
	if wq == nil {
		return fwError(SynQPWQUMEM)
	}
	woff := cmd.WQUMEMOffset
	sqBytes := uint64(64) << sqLog
	if noSQ {
		sqBytes = 0
	}
	if !wq.fits(woff, rqBytes+sqBytes, 1) || (wq.mem.base+uintptr(woff))%4096 != 0 || rqBytes+sqBytes == 0 {
		return fwError(SynQPWQRange)
	}
	dbr := c.umemOf(x.DBRUMEMID)
	if dbr == nil {
		return fwError(SynQPDBRUMEM)
	}
	doff := x.DBRAddr
	if !dbr.fits(doff, 8, 8) {
		return fwError(SynQPDBRRange)
	}
	if len(n.qps) >= 1<<capLogMaxQP {
		return fwError(SynLimitQP)
	}
	qpn, _, ok := n.ids.qp.alloc(func(i uint32) bool { return n.qps[i] != nil })
	if !ok {
		return fwError(SynLimitQP)
	}
	q := &qp{nic: n, ctx: c, qpn: qpn, uc: x.ST == mlx5.STUC, pd: p, uar: u, scq: scq, rcq: rcq, wq: wq, dbr: dbr, doff: doff,
		sqOff: woff + rqBytes, sqLog: sqLog, noSQ: noSQ, rqOff: woff, rqLog: rqLog, rqStr: rqStr, rqT: uint8(rqT),
		noDBR: mode == mlx5.SendDBRNoDBRExt, cdM: x.CDMaster, uidx: x.UserIndex, srq: srq,
		cs32: x.CSRes == mlx5.ResScatData32CQE}
	copy(q.qpc[:], in[qpcByte:qpcByte+qpcLen]) // as sent, reserved bits included (QUERY_QP returns them)
	mlx5.SetBool(q.qpc[:], qf.DBRUMEMValid, true)
	q.req.init(q)
	n.qps[q.qpn] = q
	p.refs++
	u.refs++
	wq.refs++
	dbr.refs++
	if scq != nil {
		scq.refs++
	}
	if rcq != nil {
		rcq.refs++
	}
	if srq != nil {
		srq.refs++
	}
	c.live++
	if q.onDevice() {
		n.devQPs.Add(1)
	}
	n.refreshQPs()
	mlx5.Set(out, mlx5.ObjIDField, uint64(q.qpn))
	return 0
}

// destroyQP executes DESTROY_QP; n.mu held.
func (c *devCtx) destroyQP(q *qp) fwError {
	n := c.nic
	q.lockBoth()
	q.setState(stRST)
	q.dead = true
	q.req.pf.release()
	q.closeWatch()
	q.unlockBoth()
	delete(n.qps, q.qpn)
	q.pd.refs--
	q.uar.refs--
	q.wq.refs--
	q.dbr.refs--
	if q.scq != nil {
		q.scq.refs--
	}
	if q.rcq != nil {
		q.rcq.refs--
	}
	if q.srq != nil {
		q.srq.refs--
	}
	c.live--
	if q.onDevice() {
		n.devQPs.Add(-1)
	}
	n.refreshQPs()
	return 0
}

// onDevice reports whether the QP's send ring or DBR is in device memory.
func (q *qp) onDevice() bool { return q.wq.mem.gpu != nil || q.dbr.mem.gpu != nil }

func (q *qp) lockBoth()   { q.mu.Lock(); q.rmu.Lock() }
func (q *qp) unlockBoth() { q.rmu.Unlock(); q.mu.Unlock() }

// setState changes the state; both locks held.
func (q *qp) setState(s uint32) {
	if old := q.state.Swap(s); s == stERR && old != stERR {
		q.errorEvents(evNone) // software's 2ERR: SRQ_LAST_WQE only
	}
	q.dbrKick.Store(true)
	mlx5.Set(q.qpc[:], qf.State, uint64(s))
	if s == stERR {
		q.kick.Store(true)
	}
}

// toError moves the QP to ERR from the engine or the responder (only one
// of the two locks held): the state is atomic and the flush happens in the
// engine, under mu.
//
// The move raises the QP's asynchronous event ev (evNone for none) and,
// for a QP of an SRQ, SRQ_LAST_WQE, once: a QP already in ERR raises
// nothing.
func (q *qp) toError(ev mlx5.EventType) {
	old := q.state.Swap(stERR)
	q.kick.Store(true)
	q.nic.kick()
	if old != stERR {
		q.errorEvents(ev)
	}
}

// evNone asks toError for no QP event.
const evNone mlx5.EventType = 0xff

// errorEvents raises the events of a QP that entered ERR: ev, then
// SRQ_LAST_WQE for a QP of an SRQ (its last WQE was reached: no receive
// of the SRQ will complete on it any more).
func (q *qp) errorEvents(ev mlx5.EventType) {
	if ev != evNone {
		q.nic.raiseAsync(mlx5.QPEventEQE(ev, q.qpn))
	}
	if q.srq != nil {
		q.nic.raiseAsync(mlx5.QPEventEQE(mlx5.EventSRQLastWQE, q.qpn))
	}
}

// query fills QUERY_QP's output (out holds QueryQPOutLen bytes: checkLen
// ran): the context as created and modified, reserved bits included, with
// the live state and counters.
func (q *qp) query(out []byte) {
	q.lockBoth()
	defer q.unlockBoth()
	c, _ := mlx5.DecodeQPContext(q.qpc[:])
	st := q.state.Load()
	c.State = mlx5.QPState(st)
	r := &q.req
	c.HWSQWQEBBCounter, c.SWSQWQEBBCounter = r.ci, r.pi
	if st >= stRTS {
		c.NextSendPSN = r.npsn & mask24
		c.LastAckedPSN = r.lastAcked & mask24
		c.CurRetryCount = uint8(r.retries & 7)
		c.CurRNRRetry = uint8(r.rnrRetries & 7)
	}
	if st >= stRTR {
		c.NextRcvPSN, c.RMSN = q.resp.epsn&mask24, q.resp.msn&mask24
	}
	c.HWRQCounter = q.resp.rqCI
	if v, err := q.dbr.mem.load32(q.doff + mlx5.QPDBRRecvOffset); err == nil {
		c.SWRQCounter = v
	}
	copy(out[qpcByte:], q.qpc[:]) // the bits no member names
	_ = mlx5.QueryQPOut{QPC: c}.MarshalTo(out)
}

const mask24 = 1<<24 - 1
