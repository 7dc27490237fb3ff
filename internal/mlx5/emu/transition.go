package emu

import (
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// The transition rules (legal source states, required fields, the optional
// fields each service type may set, the extended mask) are mlx5's table
// (mlx5.TransitionFor); the emulator adds only what the device's
// capabilities decide (DSCP and UDP source port in RTS2RTS).

var (
	fOptMask    = mlx5.ModifyQPInFields.OptParamMask
	fOptMaskExt = mlx5.ModifyQPInFields.OptParamMask95_32
)

// transitionOf returns the rules of a QP transition opcode.
func transitionOf(op uint16) (mlx5.Transition, bool) { return mlx5.TransitionFor(mlx5.Opcode(op)) }

// modifyQP executes a transition command; n.mu held (read or write).
func (q *qp) modify(op uint16, in []byte) fwError {
	t, _ := transitionOf(op)
	q.lockBoth()
	defer q.unlockBoth()
	cur := q.state.Load()
	if !t.LegalFrom(mlx5.QPState(cur)) {
		return fwError(SynQPBadTransition)
	}
	to := uint32(t.To)
	if t.Op == mlx5.Op2ERR || t.Op == mlx5.Op2RST { // no context
		if to == stRST {
			q.reset()
		}
		q.setState(to)
		return 0
	}
	mask := mlx5.OptParam(mlx5.Get32(in, fOptMask))
	st := mlx5.ServiceType(mlx5.Get(q.qpc[:], qf.ST))
	if mask&^t.Allowed(st) != 0 {
		return fwError(SynQPOptMask)
	}
	if mask&mlx5.OptDSCP != 0 && !q.nic.caps.general.RTS2RTSQPDSCP {
		return fwError(SynQPOptMask)
	}
	var ext mlx5.OptParamExt
	if len(in) >= mlx5.ModifyQPInExtLen {
		// Read whatever the transition: a long mailbox with extended bits
		// the transition does not accept is refused, not ignored.
		ext = mlx5.OptParamExt(mlx5.Get(in, fOptMaskExt))
		if ext&^t.AllowedExt != 0 || (ext != 0 && !q.nic.caps.general.RTS2RTSQPUDPSport) {
			return fwError(SynQPOptMask)
		}
	}
	cmd, err := mlx5.UnmarshalModifyQPIn(in[:modifyLen(t, len(in))])
	if err != nil {
		return fwError(SynBadInLen) // not reached: the length was checked
	}
	fields, err := mlx5.AppliedFields(t.Op, st, mask, ext)
	if err != nil {
		return fwError(SynQPOptMask) // not reached: the masks were checked
	}
	ctx, _ := mlx5.DecodeQPContext(q.qpc[:])
	if ctx.CopyFields(&cmd.QPC, fields) != nil {
		return fwError(SynReserved) // not reached: the table names qpc fields
	}
	next := q.qpc
	_ = ctx.Encode(next[:]) // the named fields; reserved bits stay as created
	if e := q.validate(next[:], to); e != 0 {
		return e
	}
	q.qpc = next
	q.apply(cur, to)
	q.setState(to)
	return 0
}

// modifyLen is the mailbox size a transition's input is parsed at: the long
// form where the transition has one and the mailbox holds it, else the
// 272-byte form (firmware ignores bytes past the form it reads).
func modifyLen(t mlx5.Transition, n int) int {
	for _, l := range t.Lens {
		if l == mlx5.ModifyQPInExtLen && n >= l {
			return l
		}
	}
	return mlx5.ModifyQPInLen
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
		copy(g[:], mlx5.Bytes(b, ads(adf.RGID).Bit, len(g)))
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
	copy(q.rgid[:], mlx5.Bytes(b, ads(adf.RGID).Bit, len(q.rgid)))
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
		q.req.lastProgress = q.nic.now()
	}
}

// reset forgets all queue state (2RST); both locks held.
func (q *qp) reset() {
	q.req.init(q)
	q.resetWatch()
	q.dbHint.Store(0)
	q.resp = responder{}
}
