package verbs

import (
	"sync"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// The QP state machine. Which transitions exist, the opcode of each, and
// which qpc fields each one requires and may change optionally are the
// PRM's facts, defined once in internal/mlx5 (mlx5.Transitions,
// mlx5.TransitionFor). What verbs adds is its own fact: which qpc fields
// and optional-parameter bits each QPAttrMask bit stands for (attrFields).
// Modify's validation (legal states, required and allowed mask bits) and the
// opt_param_mask it writes are derived from the two.

// attrInfo is what one QPAttrMask bit means to the PRM.
type attrInfo struct {
	// fields are the qpc fields (mlx5.QPCFieldNames spelling) the attribute
	// sets; a transition that requires any of them requires the attribute.
	fields []string
	// opt are the opt_param_mask bits that carry the attribute in the
	// transitions that take it optionally.
	opt mlx5.OptParam
	// defaulted: when the bit is absent, Modify writes a default into the
	// fields (DOCA 3.0 does: no atomics, one outstanding READ/atomic), so
	// the attribute is allowed, never required.
	defaulted bool
	// notIn lists the transitions DOCA refuses the attribute in although
	// the PRM would take it: INIT -> RTR reuses the port given at
	// RST -> INIT, and RTR -> RTS does not take ALLOW_REMOTE_READ.
	notIn []mlx5.Opcode
}

// attrFields maps each QPAttrMask bit Modify programs to the PRM.
// QPAttrCurrentState and QPAttrNextState select the transition and are
// allowed in every one.
var attrFields = map[QPAttrMask]attrInfo{
	QPAttrPKeyIndex:        {fields: []string{"primary_address_path.pkey_index"}, opt: mlx5.OptPKeyIndex},
	QPAttrPortNum:          {fields: []string{"primary_address_path.vhca_port_num"}, opt: mlx5.OptPriPort, notIn: []mlx5.Opcode{mlx5.OpINIT2RTR}},
	QPAttrAllowRemoteWrite: {fields: []string{"rwe"}, opt: mlx5.OptRWE},
	QPAttrAllowRemoteRead:  {fields: []string{"rre"}, opt: mlx5.OptRRE, notIn: []mlx5.Opcode{mlx5.OpRTR2RTS}},
	QPAttrAtomicMode:       {fields: []string{"rae", "atomic_mode"}, opt: mlx5.OptRAE, defaulted: true},
	QPAttrRQPSN:            {fields: []string{"next_rcv_psn"}},
	QPAttrSQPSN:            {fields: []string{"next_send_psn"}},
	QPAttrDestQPNum:        {fields: []string{"remote_qpn"}},
	QPAttrPathMTU:          {fields: []string{"mtu"}},
	// In RTS -> RTS the AH changes the source GID index and the DSCP only.
	QPAttrAHAttr: {fields: []string{"primary_address_path.rgid_rip", "primary_address_path.src_addr_index",
		"primary_address_path.hop_limit", "primary_address_path.tclass", "primary_address_path.sl",
		"primary_address_path.rlid", "primary_address_path.grh", "primary_address_path.stat_rate",
		"primary_address_path.rmac", "primary_address_path.dscp", "primary_address_path.udp_sport"},
		opt: mlx5.OptSGIDIndex | mlx5.OptDSCP},
	QPAttrMinRNRTimer:     {fields: []string{"min_rnr_nak"}, opt: mlx5.OptRNRTimeout},
	QPAttrAckTimeout:      {fields: []string{"primary_address_path.ack_timeout"}, opt: mlx5.OptAckTimeout},
	QPAttrRetryCnt:        {fields: []string{"retry_count"}, opt: mlx5.OptRetryCount},
	QPAttrRNRRetry:        {fields: []string{"rnr_retry"}, opt: mlx5.OptRNRRetry},
	QPAttrMaxQPRDAtomic:   {fields: []string{"log_sra_max"}, opt: mlx5.OptSRAMax, defaulted: true},
	QPAttrMaxDestRDAtomic: {fields: []string{"log_rra_max"}, opt: mlx5.OptRRAMax, defaulted: true},
}

const stateMask = QPAttrCurrentState | QPAttrNextState

// transition is one QP transition as Modify validates it, derived from the
// PRM's description.
type transition struct {
	op       mlx5.Opcode
	prm      mlx5.Transition
	required QPAttrMask
	allowed  QPAttrMask // besides required
}

// prmState is the PRM number of a verbs QP state (they differ for ERR).
func (s QPState) prmState() mlx5.QPState {
	if s == QPStateERR {
		return mlx5.QPStateERR
	}
	return mlx5.QPState(s)
}

// findTransition returns the rule for cur -> next, or nil when the PRM has
// no such transition.
func findTransition(cur, next QPState) *transition {
	for _, t := range qpTransitions() {
		if t.prm.To == next.prmState() && t.prm.LegalFrom(cur.prmState()) {
			return t
		}
	}
	return nil
}

// qpTransitions derives every transition once.
var qpTransitions = sync.OnceValue(func() []*transition {
	var out []*transition
	for _, op := range mlx5.Transitions() {
		t, _ := mlx5.TransitionFor(op)
		out = append(out, deriveTransition(op, t))
	}
	return out
})

// deriveTransition computes the mask bits transition op requires and allows
// from its PRM description and attrFields.
func deriveTransition(op mlx5.Opcode, t mlx5.Transition) *transition {
	tr := &transition{op: op, prm: t, allowed: stateMask}
	required := map[string]bool{}
	for _, f := range t.Required {
		required[f] = true
	}
	for bit, a := range attrFields {
		if a.excluded(op) {
			continue
		}
		switch {
		case a.takes(required) && !a.defaulted:
			tr.required |= bit
		case a.takes(required) || a.opt&t.AllowedRC != 0:
			tr.allowed |= bit
		}
	}
	return tr
}

func (a attrInfo) excluded(op mlx5.Opcode) bool {
	for _, o := range a.notIn {
		if o == op {
			return true
		}
	}
	return false
}

func (a attrInfo) takes(fields map[string]bool) bool {
	for _, f := range a.fields {
		if fields[f] {
			return true
		}
	}
	return false
}

// checkMask returns the required attributes missing from mask and the
// attributes in mask that the transition does not take.
func (t *transition) checkMask(mask QPAttrMask) (missing, extra QPAttrMask) {
	return t.required &^ mask, mask &^ (t.required | t.allowed)
}

// optParams is the opt_param_mask of the transition for mask: the bits of
// the attributes in mask that the transition takes optionally.
func (t *transition) optParams(mask QPAttrMask) mlx5.OptParam {
	var opt mlx5.OptParam
	for bit, a := range attrFields {
		if mask&bit != 0 && !a.excluded(t.op) {
			opt |= a.opt & t.prm.AllowedRC
		}
	}
	return opt
}
