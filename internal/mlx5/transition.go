package mlx5

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// QP state transitions: the opt_param_mask bits, the per-transition rules
// shared by the verbs layer (what to fill in) and the emulator (what to
// accept and apply), the modify-QP Marshal and Unmarshal (the mailbox size
// follows the opcode), and the IBA timer encodings. ModifyQPIn, its layout
// and the sizes are generated from prm/transition.prm (transition_gen.go).

// OptParam is the opt_param_mask of a transition: which
// optional qpc fields the transition applies.
type OptParam uint32

const (
	OptAltAddrPath     OptParam = 1 << 0
	OptRRE             OptParam = 1 << 1
	OptRAE             OptParam = 1 << 2
	OptRWE             OptParam = 1 << 3
	OptPKeyIndex       OptParam = 1 << 4
	OptQKey            OptParam = 1 << 5
	OptRNRTimeout      OptParam = 1 << 6 // min_rnr_nak
	OptPrimaryAddrPath OptParam = 1 << 7
	OptSRAMax          OptParam = 1 << 8
	OptRRAMax          OptParam = 1 << 9
	OptPMState         OptParam = 1 << 10
	OptDrainSigErr     OptParam = 1 << 11 // INIT2INIT only
	OptRetryCount      OptParam = 1 << 12
	OptRNRRetry        OptParam = 1 << 13
	OptAckTimeout      OptParam = 1 << 14
	OptLAGTxAff        OptParam = 1 << 15
	OptPriPort         OptParam = 1 << 16
	OptDSCP            OptParam = 1 << 17 // gpunetio RTS2RTS only; not in the kernel enum
	OptSRQN            OptParam = 1 << 18
	OptCQNRcv          OptParam = 1 << 19
	OptSGIDIndex       OptParam = 1 << 23 // gpunetio RTS2RTS only; not in the kernel enum
	OptCounterSetID    OptParam = 1 << 25
)

// OptParamExt is opt_param_mask_95_32 (464-byte INIT2INIT/RTS2RTS only).
type OptParamExt uint64

const (
	OptExtDCIStream     OptParamExt = 1 << 0
	OptExtQoSQueueGroup OptParamExt = 1 << 1
	OptExtUDPSport      OptParamExt = 1 << 2 // RTS2RTS, cap rts2rts_qp_udp_sport
)

type optInfo struct {
	name   string
	fields []string // qpc field names; a trailing "." means every field with that prefix
}

var optParamInfo = map[OptParam]optInfo{
	OptAltAddrPath:     {"ALT_ADDR_PATH", []string{"secondary_address_path."}},
	OptRRE:             {"RRE", []string{"rre"}},
	OptRAE:             {"RAE", []string{"rae", "atomic_mode"}},
	OptRWE:             {"RWE", []string{"rwe"}},
	OptPKeyIndex:       {"PKEY_INDEX", []string{"primary_address_path.pkey_index"}},
	OptQKey:            {"Q_KEY", []string{"q_key"}},
	OptRNRTimeout:      {"RNR_TIMEOUT", []string{"min_rnr_nak"}},
	OptPrimaryAddrPath: {"PRIMARY_ADDR_PATH", []string{"primary_address_path."}},
	OptSRAMax:          {"SRA_MAX", []string{"log_sra_max"}},
	OptRRAMax:          {"RRA_MAX", []string{"log_rra_max"}},
	OptPMState:         {"PM_STATE", []string{"pm_state"}},
	OptDrainSigErr:     {"DRAIN_SIGERR", []string{"drain_sigerr"}},
	OptRetryCount:      {"RETRY_COUNT", []string{"retry_count"}},
	OptRNRRetry:        {"RNR_RETRY", []string{"rnr_retry"}},
	OptAckTimeout:      {"ACK_TIMEOUT", []string{"primary_address_path.ack_timeout"}},
	OptLAGTxAff:        {"LAG_TX_AFF", []string{"lag_tx_port_affinity"}},
	OptPriPort:         {"PRI_PORT", []string{"primary_address_path.vhca_port_num"}},
	OptDSCP:            {"DSCP", []string{"primary_address_path.dscp"}},
	OptSRQN:            {"SRQN", []string{"srqn_rmpn_xrqn"}},
	OptCQNRcv:          {"CQN_RCV", []string{"cqn_rcv"}},
	OptSGIDIndex:       {"SGID_INDEX", []string{"primary_address_path.src_addr_index"}},
	OptCounterSetID:    {"COUNTER_SET_ID", []string{"counter_set_id"}},
}

var optExtInfo = map[OptParamExt]optInfo{
	OptExtDCIStream:     {"DCI_STREAM", nil},
	OptExtQoSQueueGroup: {"QOS_QUEUE_GROUP", nil},
	OptExtUDPSport:      {"UDP_SPORT", []string{"primary_address_path.udp_sport"}},
}

// String lists the set bits by name ("RRE|RWE"); unknown bits as hex.
func (m OptParam) String() string {
	if m == 0 {
		return "0"
	}
	var parts []string
	for bit := OptParam(1); bit != 0; bit <<= 1 {
		if m&bit == 0 {
			continue
		}
		if i, ok := optParamInfo[bit]; ok {
			parts = append(parts, i.name)
		} else {
			parts = append(parts, fmt.Sprintf("0x%x", uint32(bit)))
		}
	}
	return strings.Join(parts, "|")
}

// String lists the set bits by name; unknown bits as hex.
func (m OptParamExt) String() string {
	if m == 0 {
		return "0"
	}
	var parts []string
	for bit := OptParamExt(1); bit != 0; bit <<= 1 {
		if m&bit == 0 {
			continue
		}
		if i, ok := optExtInfo[bit]; ok {
			parts = append(parts, i.name)
		} else {
			parts = append(parts, fmt.Sprintf("0x%x", uint64(bit)))
		}
	}
	return strings.Join(parts, "|")
}

// expandFields resolves "prefix." entries to every qpc field with that prefix.
func expandFields(specs []string, all []string, out []string) []string {
	for _, s := range specs {
		if strings.HasSuffix(s, ".") {
			for _, n := range all {
				if strings.HasPrefix(n, s) {
					out = append(out, n)
				}
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// Fields returns the qpc field names (QPCFieldNames spelling) the set bits
// enable, in bit order. Unknown bits enable nothing.
func (m OptParam) Fields() []string {
	all := QPCFieldNames()
	var out []string
	for bit := OptParam(1); bit != 0; bit <<= 1 {
		if m&bit != 0 {
			out = expandFields(optParamInfo[bit].fields, all, out)
		}
	}
	return out
}

// Fields returns the qpc field names the set bits enable (DCI_STREAM and
// QOS_QUEUE_GROUP enable qpc_data_ext members, not qpc fields).
func (m OptParamExt) Fields() []string {
	all := QPCFieldNames()
	var out []string
	for bit := OptParamExt(1); bit != 0; bit <<= 1 {
		if m&bit != 0 {
			out = expandFields(optExtInfo[bit].fields, all, out)
		}
	}
	return out
}

// Transition describes one QP transition command: the one definition the
// verbs layer (what to fill) and the emulator (what to accept and apply)
// share.
//
//   - From: the states the QP may be in; anything else is a bad-state error.
//   - Required: qpc fields the transition always takes from the mailbox,
//     regardless of the mask (zero is taken literally, so the sender must fill
//     them). Section 2.8.2.
//   - AllowedRC / AllowedUC: the optional fields the transition accepts, as
//     the kernel's allowed opt_param_mask per service type;
//     a bit outside it is rejected (the emulator answers BAD_PARAM).
//   - AllowedExt: opt_param_mask_95_32 bits accepted (464-byte form only).
//   - Len: the mailbox size Marshal produces; Lens: all sizes accepted.
type Transition struct {
	Op         Opcode
	From       []QPState
	To         QPState
	Len        int
	Lens       []int
	Required   []string
	AllowedRC  OptParam
	AllowedUC  OptParam
	AllowedExt OptParamExt
}

var anyLiveState = []QPState{QPStateRST, QPStateINIT, QPStateRTR, QPStateRTS, QPStateSQER, QPStateSQD}

var transitions = map[Opcode]Transition{
	OpRST2INIT: {
		Op: OpRST2INIT, From: []QPState{QPStateRST}, To: QPStateINIT,
		Len: ModifyQPInLen, Lens: []int{ModifyQPInLen},
		Required: []string{"primary_address_path.vhca_port_num", "primary_address_path.pkey_index",
			"pm_state", "rre", "rwe", "rae", "atomic_mode", "counter_set_id"},
	},
	OpINIT2INIT: {
		Op: OpINIT2INIT, From: []QPState{QPStateINIT}, To: QPStateINIT,
		Len: ModifyQPInExtLen, Lens: []int{ModifyQPInLen, ModifyQPInExtLen},
		AllowedRC: OptRRE | OptRAE | OptRWE | OptPKeyIndex | OptPriPort | OptLAGTxAff,
		AllowedUC: OptRWE | OptPKeyIndex | OptPriPort | OptLAGTxAff,
	},
	OpINIT2RTR: {
		Op: OpINIT2RTR, From: []QPState{QPStateINIT}, To: QPStateRTR,
		Len: ModifyQPInLen, Lens: []int{ModifyQPInLen},
		Required: []string{"mtu", "log_msg_max", "remote_qpn", "next_rcv_psn", "min_rnr_nak", "log_rra_max",
			// the primary path except pkey_index (optional) and ack_timeout (RTR2RTS)
			"primary_address_path.fl", "primary_address_path.free_ar", "primary_address_path.grh",
			"primary_address_path.mlid", "primary_address_path.rlid", "primary_address_path.src_addr_index",
			"primary_address_path.stat_rate", "primary_address_path.hop_limit", "primary_address_path.tclass",
			"primary_address_path.flow_label", "primary_address_path.rgid_rip", "primary_address_path.f_dscp",
			"primary_address_path.f_ecn", "primary_address_path.f_eth_prio", "primary_address_path.ecn",
			"primary_address_path.dscp", "primary_address_path.udp_sport", "primary_address_path.dei_cfi",
			"primary_address_path.eth_prio", "primary_address_path.sl", "primary_address_path.vhca_port_num",
			"primary_address_path.rmac"},
		AllowedRC: OptAltAddrPath | OptRRE | OptRAE | OptRWE | OptPKeyIndex | OptLAGTxAff,
		AllowedUC: OptAltAddrPath | OptRWE | OptPKeyIndex | OptLAGTxAff,
	},
	OpRTR2RTS: {
		Op: OpRTR2RTS, From: []QPState{QPStateRTR}, To: QPStateRTS,
		Len: ModifyQPInLen, Lens: []int{ModifyQPInLen},
		Required: []string{"next_send_psn", "retry_count", "rnr_retry", "primary_address_path.ack_timeout",
			"log_sra_max", "log_ack_req_freq"},
		AllowedRC: OptAltAddrPath | OptRRE | OptRAE | OptRWE | OptPMState | OptRNRTimeout,
		AllowedUC: OptAltAddrPath | OptRWE | OptPMState,
	},
	// RTS2RTS: the kernel's verbs table, plus what DOCA sends a ConnectX
	// over DevX to move an RTS QP to another source GID and DSCP
	// (SGID_INDEX, and DSCP with cap rts2rts_qp_dscp) and UDP source port
	// (opt_param_mask_95_32, cap rts2rts_qp_udp_sport). The rest of the
	// primary path (remote GID, MAC, ...) cannot change in RTS: a ConnectX
	// moves an RC QP to another path only by path migration (ALT_ADDR_PATH
	// then PM_STATE), so PRIMARY_ADDR_PATH is refused.
	OpRTS2RTS: {
		Op: OpRTS2RTS, From: []QPState{QPStateRTS}, To: QPStateRTS,
		Len: ModifyQPInExtLen, Lens: []int{ModifyQPInLen, ModifyQPInExtLen},
		AllowedRC:  OptRRE | OptRAE | OptRWE | OptRNRTimeout | OptPMState | OptAltAddrPath | OptSGIDIndex | OptDSCP,
		AllowedUC:  OptRWE | OptPMState | OptAltAddrPath | OptSGIDIndex | OptDSCP,
		AllowedExt: OptExtUDPSport,
	},
	OpSQERR2RTS: {
		Op: OpSQERR2RTS, From: []QPState{QPStateSQER}, To: QPStateRTS,
		Len: ModifyQPInLen, Lens: []int{ModifyQPInLen},
	},
	Op2ERR: {
		Op: Op2ERR, From: anyLiveState, To: QPStateERR,
		Len: ModifyQPInDropLen, Lens: []int{ModifyQPInDropLen},
	},
	Op2RST: {
		Op: Op2RST, From: append(append([]QPState{}, anyLiveState...), QPStateERR), To: QPStateRST,
		Len: ModifyQPInDropLen, Lens: []int{ModifyQPInDropLen},
	},
}

// TransitionFor returns the description of transition opcode op.
func TransitionFor(op Opcode) (Transition, bool) {
	t, ok := transitions[op]
	if ok {
		t.From = append([]QPState(nil), t.From...)
		t.Lens = append([]int(nil), t.Lens...)
		t.Required = append([]string(nil), t.Required...)
	}
	return t, ok
}

// Transitions lists every transition opcode in ascending order.
func Transitions() []Opcode {
	ops := make([]Opcode, 0, len(transitions))
	for op := range transitions {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i] < ops[j] })
	return ops
}

// LegalFrom reports whether the transition may start in state s.
func (t Transition) LegalFrom(s QPState) bool {
	for _, f := range t.From {
		if f == s {
			return true
		}
	}
	return false
}

// Allowed returns the optional mask accepted for service type st (RC or UC;
// other types accept no optional field).
func (t Transition) Allowed(st ServiceType) OptParam {
	switch st {
	case STRC:
		return t.AllowedRC
	case STUC:
		return t.AllowedUC
	}
	return 0
}

// AllowedOptParams returns the optional mask an RC QP accepts in transition
// op (0 for non-transitions and for RST2INIT, where every field is required).
func AllowedOptParams(op Opcode) OptParam { return transitions[op].AllowedRC }

// TransitionFields returns, for an RC QP, the qpc fields transition op
// always applies and the ones it may apply when their mask bit is set.
func TransitionFields(op Opcode) (required, optional []string) {
	t := transitions[op]
	return append([]string(nil), t.Required...), t.AllowedRC.Fields()
}

// AppliedFields returns the qpc fields a transition applies for a QP of
// service type st given the masks of the command: the required fields, then
// the fields of each mask bit. A bit the transition does not allow is an
// ErrInvalid error naming it (the emulator answers BAD_PARAM).
func AppliedFields(op Opcode, st ServiceType, mask OptParam, ext OptParamExt) ([]string, error) {
	t, ok := transitions[op]
	what := "apply " + OpcodeName(op)
	if !ok {
		return nil, &LayoutError{Op: what, Field: "opcode", Err: ErrOpcode, Detail: "not a QP transition"}
	}
	if bad := mask &^ t.Allowed(st); bad != 0 {
		return nil, &LayoutError{Op: what, Field: "opt_param_mask", Err: ErrInvalid,
			Detail: fmt.Sprintf("%v not allowed for %v", bad, st)}
	}
	if bad := ext &^ t.AllowedExt; bad != 0 {
		return nil, &LayoutError{Op: what, Field: "opt_param_mask_95_32", Err: ErrInvalid,
			Detail: fmt.Sprintf("%v not allowed for %v", bad, st)}
	}
	out := append([]string(nil), t.Required...)
	out = append(out, mask.Fields()...)
	return append(out, ext.Fields()...), nil
}

// Marshal builds the transition mailbox in the size Transition.Len gives.
// Fields the short forms cannot carry must be zero (ErrInvalid otherwise);
// qpc_ext is only valid in the 464-byte form.
func (in ModifyQPIn) Marshal() ([]byte, error) {
	t, ok := transitions[in.Opcode]
	if !ok {
		return nil, &LayoutError{Op: "marshal modify QP", Field: "opcode", Err: ErrOpcode,
			Detail: OpcodeName(in.Opcode) + " is not a QP transition"}
	}
	name := "marshal " + OpcodeName(in.Opcode) + " in"
	n := t.Len
	if n < ModifyQPInLen && (in.QPCExt || in.OptParamMask != 0 || in.QPC != (QPContext{})) {
		return nil, &LayoutError{Op: name, Field: "qpc", Err: ErrInvalid,
			Detail: "the 16-byte form carries only the qpn"}
	}
	if n < ModifyQPInExtLen && (in.QPCExt || in.OptParamMask95_32 != 0 || in.Ext != (QPCDataExt{})) {
		return nil, &LayoutError{Op: name, Field: "opt_param_mask_95_32", Err: ErrInvalid,
			Detail: "the 272-byte form has no extended fields"}
	}
	b, _ := marshalIn(OpcodeName(in.Opcode)+" in", in.CmdHeader, in.Opcode, n)
	if err := encodeFields(name, b, n, in.bindings(n)); err != nil {
		return nil, err
	}
	return b, nil
}

// UnmarshalModifyQPIn parses any transition input; the opcode must be a
// transition and the size one the transition accepts.
func UnmarshalModifyQPIn(b []byte) (ModifyQPIn, error) {
	var in ModifyQPIn
	h, err := DecodeCmdHeader(b)
	if err != nil {
		return in, err
	}
	t, ok := transitions[h.Opcode]
	if !ok {
		return in, &LayoutError{Op: "unmarshal modify QP", Field: "opcode", Err: ErrOpcode,
			Detail: OpcodeName(h.Opcode) + " is not a QP transition"}
	}
	name := "unmarshal " + OpcodeName(h.Opcode) + " in"
	if err := exactLen(name, b, t.Lens...); err != nil {
		return in, err
	}
	in.CmdHeader = h
	err = decodeFields(name, b, len(b), in.bindings(len(b)))
	return in, err
}

// NewModifyQPIn starts a transition input for qpn.
func NewModifyQPIn(op Opcode, qpn uint32) ModifyQPIn {
	return ModifyQPIn{CmdHeader: CmdHeader{Opcode: op}, QPN: qpn}
}

// Timer encodings.

// MaxTimerCode is the largest ack_timeout / min_rnr_nak code (5 bits).
const MaxTimerCode = 31

// AckTimeoutInfinite is what AckTimeout returns for code 0: no timeout.
const AckTimeoutInfinite time.Duration = -1

// AckTimeout converts an ack_timeout code to the local ACK timeout
// 4.096 µs × 2^code; code 0 means infinite (AckTimeoutInfinite).
func AckTimeout(code uint8) (time.Duration, error) {
	if code > MaxTimerCode {
		return 0, &LayoutError{Op: "decode ack_timeout", Field: "ack_timeout", Err: ErrRange,
			Detail: fmt.Sprintf("code %d above %d", code, MaxTimerCode)}
	}
	if code == 0 {
		return AckTimeoutInfinite, nil
	}
	return 4096 * time.Nanosecond << code, nil
}

// AckTimeoutCode returns the smallest code whose timeout is at least d
// (d <= 0 gives 0, infinite); durations above the largest code are an
// ErrRange error.
func AckTimeoutCode(d time.Duration) (uint8, error) {
	if d <= 0 {
		return 0, nil
	}
	for c := uint8(1); c <= MaxTimerCode; c++ {
		if t, _ := AckTimeout(c); t >= d {
			return c, nil
		}
	}
	return 0, &LayoutError{Op: "encode ack_timeout", Field: "ack_timeout", Err: ErrRange,
		Detail: fmt.Sprintf("%v above the largest timeout", d)}
}

// rnrNakUnits is the RNR NAK delay per min_rnr_nak code in 10 µs units.
var rnrNakUnits = [MaxTimerCode + 1]uint32{
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
}

// MinRNRNak converts a min_rnr_nak code to the RNR NAK delay (code 0 is
// the longest, 655.36 ms).
func MinRNRNak(code uint8) (time.Duration, error) {
	if code > MaxTimerCode {
		return 0, &LayoutError{Op: "decode min_rnr_nak", Field: "min_rnr_nak", Err: ErrRange,
			Detail: fmt.Sprintf("code %d above %d", code, MaxTimerCode)}
	}
	return time.Duration(rnrNakUnits[code]) * 10 * time.Microsecond, nil
}

// MinRNRNakCode returns the code of the shortest delay that is at least d.
// Durations above 655.36 ms are an ErrRange error.
func MinRNRNakCode(d time.Duration) (uint8, error) {
	best, found := uint8(0), false
	for c := uint8(0); c <= MaxTimerCode; c++ {
		t, _ := MinRNRNak(c)
		if t >= d && (!found || t < time.Duration(rnrNakUnits[best])*10*time.Microsecond) {
			best, found = c, true
		}
	}
	if !found {
		return 0, &LayoutError{Op: "encode min_rnr_nak", Field: "min_rnr_nak", Err: ErrRange,
			Detail: fmt.Sprintf("%v above the longest delay", d)}
	}
	return best, nil
}
