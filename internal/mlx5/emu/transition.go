package emu

import (
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Optional-parameter mask bits (opt_param_mask).
const (
	optAltPath    = 1 << 0
	optRRE        = 1 << 1
	optRAE        = 1 << 2
	optRWE        = 1 << 3
	optPKey       = 1 << 4
	optQKey       = 1 << 5
	optRNRTimeout = 1 << 6
	optPriPath    = 1 << 7
	optSRAMax     = 1 << 8
	optRRAMax     = 1 << 9
	optPMState    = 1 << 10
	optRetryCount = 1 << 12
	optRNRRetry   = 1 << 13
	optAckTimeout = 1 << 14
	optLAGTXAff   = 1 << 15
	optPriPort    = 1 << 16
	optDSCP       = 1 << 17
	optSGID       = 1 << 23
	optCounterSet = 1 << 25

	optExtUDPSport = 1 << 2 // opt_param_mask_95_32: udp_sport on RTS2RTS
)

var fOptMaskExt = mlx5.ModifyQPInFields.OptParamMask95_32

// adsAll is every primary-path field a path change writes (pkey_index and
// ack_timeout have their own mask bits / transitions).
var adsAll = []mlx5.Field{
	ads(adf.FL), ads(adf.FreeAR), ads(adf.GRH), ads(adf.MLID), ads(adf.RLID), ads(adf.SrcAddrIndex),
	ads(adf.StatRate), ads(adf.HopLimit), ads(adf.TClass), ads(adf.FlowLabel), ads(adf.FDSCP), ads(adf.FECN),
	ads(adf.FEthPrio), ads(adf.ECN), ads(adf.DSCP), ads(adf.UDPSport), ads(adf.DEICFI), ads(adf.EthPrio),
	ads(adf.SL), ads(adf.VHCAPortNum),
}

// optFields maps each optional mask bit to the qpc fields it enables.
var optFields = map[uint32][]mlx5.Field{
	optRRE:        {qf.RRE},
	optRAE:        {qf.RAE, qf.AtomicMode},
	optRWE:        {qf.RWE},
	optPKey:       {ads(adf.PKeyIndex)},
	optQKey:       {qf.QKey},
	optRNRTimeout: {qf.MinRNRNak},
	optSRAMax:     {qf.LogSRAMax},
	optRRAMax:     {qf.LogRRAMax},
	optPMState:    {qf.PMState},
	optRetryCount: {qf.RetryCount},
	optRNRRetry:   {qf.RNRRetry},
	optAckTimeout: {ads(adf.AckTimeout)},
	optLAGTXAff:   {qf.LAGTXPortAffinity},
	optPriPort:    {ads(adf.VHCAPortNum)},
	optDSCP:       {ads(adf.DSCP)},
	optSGID:       {ads(adf.SrcAddrIndex)},
	optCounterSet: {qf.CounterSetID},
}

// transition is one QP state change command.
type transition struct {
	from     uint32 // bit set of legal source states
	to       uint32
	required []mlx5.Field
	rawReq   bool   // required: the primary path (RGID and RMAC as bytes too)
	allowed  uint32 // optional mask bits accepted
}

func states(s ...uint32) uint32 {
	var m uint32
	for _, x := range s {
		m |= 1 << x
	}
	return m
}

// transitions follows the kernel's allowed optional masks for RC
// and the required fields of each transition.
var transitions = map[uint16]transition{
	mlx5.OpRST2INIT: {from: states(stRST), to: stINIT,
		required: []mlx5.Field{ads(adf.PKeyIndex), ads(adf.VHCAPortNum), qf.PMState, qf.RRE, qf.RWE, qf.RAE, qf.AtomicMode, qf.CounterSetID}},
	mlx5.OpINIT2INIT: {from: states(stINIT), to: stINIT,
		allowed: optRRE | optRAE | optRWE | optPKey | optPriPort | optLAGTXAff | optCounterSet},
	mlx5.OpINIT2RTR: {from: states(stINIT), to: stRTR,
		required: append([]mlx5.Field{qf.MTU, qf.LogMsgMax, qf.RemoteQPN, qf.NextRcvPSN, qf.MinRNRNak, qf.LogRRAMax}, adsAll...),
		rawReq:   true,
		allowed:  optAltPath | optRRE | optRAE | optRWE | optPKey | optLAGTXAff | optCounterSet},
	mlx5.OpRTR2RTS: {from: states(stRTR), to: stRTS,
		required: []mlx5.Field{qf.NextSendPSN, qf.RetryCount, qf.RNRRetry, ads(adf.AckTimeout), qf.LogSRAMax, qf.LogAckReqFreq},
		allowed:  optAltPath | optRRE | optRAE | optRWE | optPMState | optRNRTimeout | optCounterSet},
	mlx5.OpRTS2RTS: {from: states(stRTS), to: stRTS,
		allowed: optRRE | optRAE | optRWE | optRNRTimeout | optPMState | optAltPath | optDSCP | optSGID},
	mlx5.OpSQERR2RTS: {from: 0, to: stRTS}, // SQER is not reachable on RC/UC
	mlx5.Op2ERR:      {from: states(stRST, stINIT, stRTR, stRTS, stERR), to: stERR},
	mlx5.Op2RST:      {from: states(stRST, stINIT, stRTR, stRTS, stERR), to: stRST},
}

// modifyQP executes a transition command; n.mu held (read or write).
func (q *qp) modify(op uint16, in []byte) fwError {
	t := transitions[op]
	q.lockBoth()
	defer q.unlockBoth()
	cur := q.state.Load()
	if t.from&(1<<cur) == 0 {
		return fwError(SynQPBadTransition)
	}
	if op == mlx5.Op2ERR || op == mlx5.Op2RST {
		if op == mlx5.Op2RST {
			q.reset()
		}
		q.setState(t.to)
		return 0
	}
	mask := mlx5.Get32(in, fQPOptMask)
	allowed := t.allowed
	if d, ok := mlx5.TransitionFor(op); ok {
		st := mlx5.ServiceType(mlx5.Get(q.qpc[:], qf.ST))
		allowed = uint32(d.Allowed(st))
	}
	if mask&^allowed != 0 {
		return fwError(SynQPOptMask)
	}
	if mask&optDSCP != 0 && !q.nic.caps.general.RTS2RTSQPDSCP {
		return fwError(SynQPOptMask)
	}
	var ext uint64
	if len(in) >= mlx5.ModifyQPInExtLen {
		ext = mlx5.Get(in, fOptMaskExt)
		if ext&^optExtUDPSport != 0 || (ext != 0 && (op != mlx5.OpRTS2RTS || !q.nic.caps.general.RTS2RTSQPUDPSport)) {
			return fwError(SynQPOptMask)
		}
	}
	src := in[qpcByte : qpcByte+qpcLen]
	next := q.qpc
	for _, f := range t.required {
		mlx5.Set(next[:], f, mlx5.Get(src, f))
	}
	if t.rawReq {
		copy(next[rgidBit/8:rgidBit/8+16], src[rgidBit/8:rgidBit/8+16])
		rmac := (adsBit + adf.RMAC.Bit) / 8
		copy(next[rmac:rmac+6], src[rmac:rmac+6])
	}
	for bit, fs := range optFields {
		if mask&bit != 0 {
			for _, f := range fs {
				mlx5.Set(next[:], f, mlx5.Get(src, f))
			}
		}
	}
	if ext&optExtUDPSport != 0 {
		mlx5.Set(next[:], ads(adf.UDPSport), mlx5.Get(src, ads(adf.UDPSport)))
	}
	if mask&optAltPath != 0 {
		copy(next[adsAltBit/8:adsAltBit/8+adsLenBytes], src[adsAltBit/8:adsAltBit/8+adsLenBytes])
	}
	if e := q.validate(next[:], t.to); e != 0 {
		return e
	}
	q.qpc = next
	q.apply(cur, t.to)
	q.setState(t.to)
	return 0
}

// validate checks a context about to be committed for state to.
func (q *qp) validate(b []byte, to uint32) fwError {
	if mlx5.Get(b, ads(adf.VHCAPortNum)) > 1 {
		return fwError(SynQPPort)
	}
	if mlx5.Get(b, ads(adf.PKeyIndex)) >= 128 {
		return fwError(SynQPPKey)
	}
	if pm := mlx5.Get(b, qf.PMState); pm != 3 && pm != 0 {
		return fwError(SynQPPMState)
	}
	am := mlx5.Get(b, qf.AtomicMode)
	if am > 3 || (am != 0 && !mlx5.GetBool(b, qf.RAE)) {
		return fwError(SynQPAtomicMode)
	}
	if to >= stRTR {
		if m := mlx5.Get(b, qf.MTU); m < 1 || m > portMTU {
			return fwError(SynQPMTU)
		}
		if mlx5.Get(b, qf.LogMsgMax) > capLogMaxMsg {
			return fwError(SynQPMsgMax)
		}
		if mlx5.Get(b, qf.LogRRAMax) > capLogMaxRA {
			return fwError(SynQPRRAMax)
		}
		if mlx5.Get(b, ads(adf.SrcAddrIndex)) != 0 {
			return fwError(SynQPSrcGID)
		}
		var g mlx5.GID
		copy(g[:], b[rgidBit/8:rgidBit/8+16])
		if !ipv4Mapped(g) {
			return fwError(SynQPRemoteGID)
		}
		if sp := mlx5.Get(b, ads(adf.UDPSport)); sp != 0 && sp < capSportMin {
			return fwError(SynQPUDPSport)
		}
		if mlx5.Get(b, qf.RemoteQPN) == 0 {
			return fwError(SynQPRemoteQPN)
		}
	}
	if to == stRTS && mlx5.Get(b, qf.LogSRAMax) > capLogMaxRA {
		return fwError(SynQPSRAMax)
	}
	return 0
}

func ipv4Mapped(g mlx5.GID) bool {
	for i := 0; i < 10; i++ {
		if g[i] != 0 {
			return false
		}
	}
	return g[10] == 0xff && g[11] == 0xff
}

// apply refreshes the cached parameters after a committed transition; both
// locks held.
func (q *qp) apply(from, to uint32) {
	b := q.qpc[:]
	q.mtu = 128 << mlx5.Get(b, qf.MTU)
	q.logMsgMax = uint8(mlx5.Get(b, qf.LogMsgMax))
	q.remoteQPN = mlx5.Get32(b, qf.RemoteQPN)
	copy(q.rgid[:], b[rgidBit/8:rgidBit/8+16])
	if t := mlx5.Get(b, ads(adf.AckTimeout)); t != 0 {
		q.ackTimeout = time.Duration(4096<<t) * time.Nanosecond
	} else {
		q.ackTimeout = 0
	}
	q.retryCount = uint8(mlx5.Get(b, qf.RetryCount))
	q.rnrRetry = uint8(mlx5.Get(b, qf.RNRRetry))
	q.maxRA = 1 << mlx5.Get(b, qf.LogSRAMax)
	q.ackFreq = 1 << mlx5.Get(b, qf.LogAckReqFreq)
	if q.ackFreq > ackReqInterval {
		q.ackFreq = ackReqInterval
	}
	r := &q.resp
	r.rre = mlx5.GetBool(b, qf.RRE)
	r.rwe = mlx5.GetBool(b, qf.RWE)
	r.rae = mlx5.GetBool(b, qf.RAE)
	r.atomicMode = uint8(mlx5.Get(b, qf.AtomicMode))
	r.minRNR = uint8(mlx5.Get(b, qf.MinRNRNak))
	if from == stINIT && to == stRTR {
		r.epsn = mlx5.Get32(b, qf.NextRcvPSN)
	}
	if from == stRTR && to == stRTS {
		q.req.npsn = mlx5.Get32(b, qf.NextSendPSN)
		q.req.hpsn = q.req.npsn
		q.req.lastAcked = (q.req.npsn - 1) & mask24
		q.req.lastProgress = time.Now()
	}
}

// reset forgets all queue state (2RST); both locks held.
func (q *qp) reset() {
	q.req.init(q)
	q.dbHint.Store(0)
	q.resp = responder{}
}
