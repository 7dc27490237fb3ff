package verbs

// The QP state machine as DOCA Verbs 3.0 enforces it (see the package doc):
// which transitions exist, which QPAttr fields each one requires and allows,
// and the PRM optional-parameter bits each allowed field maps to.

type transition struct {
	from, to QPState // from is ignored for the "any" transitions
	any      bool
	required QPAttrMask
	allowed  QPAttrMask // besides required
}

const stateMask = QPAttrCurrentState | QPAttrNextState

var transitions = []transition{
	{to: QPStateRST, any: true, allowed: stateMask},
	{to: QPStateERR, any: true, allowed: stateMask},
	{from: QPStateRST, to: QPStateINIT,
		required: QPAttrPKeyIndex | QPAttrPortNum | QPAttrAllowRemoteWrite | QPAttrAllowRemoteRead,
		allowed:  stateMask | QPAttrAtomicMode},
	{from: QPStateINIT, to: QPStateINIT,
		allowed: stateMask | QPAttrPKeyIndex | QPAttrPortNum | QPAttrAllowRemoteWrite | QPAttrAllowRemoteRead | QPAttrAtomicMode},
	{from: QPStateINIT, to: QPStateRTR,
		required: QPAttrRQPSN | QPAttrDestQPNum | QPAttrPathMTU | QPAttrAHAttr | QPAttrMinRNRTimer,
		allowed:  stateMask | QPAttrPKeyIndex | QPAttrAllowRemoteWrite | QPAttrAllowRemoteRead | QPAttrAtomicMode | QPAttrMaxDestRDAtomic},
	{from: QPStateRTR, to: QPStateRTS,
		required: QPAttrSQPSN | QPAttrAckTimeout | QPAttrRetryCnt | QPAttrRNRRetry,
		allowed:  stateMask | QPAttrMinRNRTimer | QPAttrAllowRemoteWrite | QPAttrAtomicMode | QPAttrMaxQPRDAtomic},
	{from: QPStateRTS, to: QPStateRTS,
		allowed: stateMask | QPAttrAllowRemoteWrite | QPAttrAllowRemoteRead | QPAttrAtomicMode | QPAttrMinRNRTimer | QPAttrAHAttr},
}

// findTransition returns the rule for cur -> next, or nil when the
// transition does not exist.
func findTransition(cur, next QPState) *transition {
	for i := range transitions {
		t := &transitions[i]
		if t.to != next {
			continue
		}
		if t.any || t.from == cur {
			return t
		}
	}
	return nil
}

// checkMask returns the required attributes missing from mask and the
// attributes in mask that the transition does not take.
func (t *transition) checkMask(mask QPAttrMask) (missing, extra QPAttrMask) {
	return t.required &^ mask, mask &^ (t.required | t.allowed)
}

// PRM opt_param_mask bits of the QP transition commands that DOCA maps
// attributes to.
const (
	optRRE       = 1 << 1
	optRAE       = 1 << 2 // rae and atomic_mode (DOCA 3.0)
	optRWE       = 1 << 3
	optPKeyIndex = 1 << 4
	optRNRTimer  = 1 << 6
	optPriPort   = 1 << 16
	optDSCP      = 1 << 17
	optSGIDIndex = 1 << 23
)

// optParams computes the PRM optional-parameter mask of a transition from
// the attribute mask, keeping only what the transition may change
// optionally. RST -> INIT writes none (every field it sets is required).
func optParams(from, to QPState, mask QPAttrMask) uint32 {
	var valid QPAttrMask
	switch {
	case from == QPStateINIT && to == QPStateINIT:
		valid = QPAttrAllowRemoteWrite | QPAttrAllowRemoteRead | QPAttrPKeyIndex | QPAttrPortNum | QPAttrAtomicMode
	case from == QPStateINIT && to == QPStateRTR:
		valid = QPAttrAllowRemoteWrite | QPAttrAllowRemoteRead | QPAttrPKeyIndex | QPAttrAtomicMode
	case from == QPStateRTR && to == QPStateRTS:
		valid = QPAttrAllowRemoteWrite | QPAttrMinRNRTimer | QPAttrAtomicMode
	case from == QPStateRTS && to == QPStateRTS:
		valid = QPAttrAllowRemoteWrite | QPAttrAllowRemoteRead | QPAttrAHAttr | QPAttrMinRNRTimer | QPAttrAtomicMode
	default:
		return 0
	}
	m := mask & valid
	var opt uint32
	if m&QPAttrAllowRemoteRead != 0 {
		opt |= optRRE
	}
	if m&QPAttrAllowRemoteWrite != 0 {
		opt |= optRWE
	}
	if m&QPAttrAtomicMode != 0 {
		opt |= optRAE
	}
	if m&QPAttrPKeyIndex != 0 {
		opt |= optPKeyIndex
	}
	if m&QPAttrMinRNRTimer != 0 {
		opt |= optRNRTimer
	}
	if m&QPAttrPortNum != 0 {
		opt |= optPriPort
	}
	if m&QPAttrAHAttr != 0 {
		opt |= optDSCP | optSGIDIndex
	}
	return opt
}
