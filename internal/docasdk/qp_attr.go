package docasdk

import "unsafe"

// QPAttrCreate creates QP attributes: doca_verbs_qp_attr_create.
func QPAttrCreate() (QPAttr, error) {
	p, err := create(symQPAttrCreate, func(out *unsafe.Pointer) int32 {
		return tOut(symQPAttrCreate, out)
	})
	return QPAttr{p}, err
}

// Destroy releases the attributes (doca_verbs_qp_attr_destroy) and clears a.
func (a *QPAttr) Destroy() error {
	if a == nil {
		return refused(symQPAttrDestroy, CodeInvalidValue, ErrNilHandle)
	}
	return destroy(symQPAttrDestroy, "qp_attr", &a.qpAttr)
}

func (a QPAttr) handleArg() arg { return arg{"qp_attr", a.qpAttr} }

// SetNextState sets enum doca_verbs_qp_state for modify:
// doca_verbs_qp_attr_set_next_state.
func (a QPAttr) SetNextState(st uint32) error {
	return setInt(symQPAttrSetNextState, a.handleArg(), int32(st))
}

// SetCurrentState sets enum doca_verbs_qp_state:
// doca_verbs_qp_attr_set_current_state.
func (a QPAttr) SetCurrentState(st uint32) error {
	return setInt(symQPAttrSetCurrentState, a.handleArg(), int32(st))
}

// CurrentState returns enum doca_verbs_qp_state (as query filled it):
// doca_verbs_qp_attr_get_current_state.
func (a QPAttr) CurrentState() (uint32, error) {
	return valueEnum(symQPAttrGetCurrentState, a.handleArg())
}

// SetPathMTU sets enum doca_verbs_mtu_size: doca_verbs_qp_attr_set_path_mtu.
func (a QPAttr) SetPathMTU(mtu uint32) error {
	return setInt(symQPAttrSetPathMTU, a.handleArg(), int32(mtu))
}

// SetRQPSN sets the receive PSN: doca_verbs_qp_attr_set_rq_psn.
func (a QPAttr) SetRQPSN(psn uint32) error { return setU32(symQPAttrSetRQPSN, a.handleArg(), psn) }

// SetSQPSN sets the send PSN: doca_verbs_qp_attr_set_sq_psn.
func (a QPAttr) SetSQPSN(psn uint32) error { return setU32(symQPAttrSetSQPSN, a.handleArg(), psn) }

// SetDestQPNum sets the remote QP number: doca_verbs_qp_attr_set_dest_qp_num.
func (a QPAttr) SetDestQPNum(qpn uint32) error {
	return setU32(symQPAttrSetDestQPNum, a.handleArg(), qpn)
}

// SetAllowRemoteWrite allows RDMA writes from the peer:
// doca_verbs_qp_attr_set_allow_remote_write.
func (a QPAttr) SetAllowRemoteWrite(on bool) error {
	return setBool(symQPAttrSetAllowRemoteWrite, a.handleArg(), on)
}

// SetAllowRemoteRead allows RDMA reads from the peer:
// doca_verbs_qp_attr_set_allow_remote_read.
func (a QPAttr) SetAllowRemoteRead(on bool) error {
	return setBool(symQPAttrSetAllowRemoteRead, a.handleArg(), on)
}

// SetAtomicMode sets enum doca_verbs_qp_atomic_mode:
// doca_verbs_qp_attr_set_atomic_mode.
func (a QPAttr) SetAtomicMode(m uint32) error {
	return setInt(symQPAttrSetAtomicMode, a.handleArg(), int32(m))
}

// SetAHAttr sets the address handle attributes:
// doca_verbs_qp_attr_set_ah_attr.
func (a QPAttr) SetAHAttr(ah AHAttr) error {
	return setP(symQPAttrSetAHAttr, a.handleArg(), arg{"ah_attr", ah.ahAttr})
}

// SetPKeyIndex sets the P_Key index: doca_verbs_qp_attr_set_pkey_index.
func (a QPAttr) SetPKeyIndex(v uint16) error {
	return setU16(symQPAttrSetPKeyIndex, a.handleArg(), v)
}

// SetPortNum sets the port number: doca_verbs_qp_attr_set_port_num.
func (a QPAttr) SetPortNum(v uint16) error { return setU16(symQPAttrSetPortNum, a.handleArg(), v) }

// SetAckTimeout sets the ACK timeout exponent:
// doca_verbs_qp_attr_set_ack_timeout.
func (a QPAttr) SetAckTimeout(v uint16) error {
	return setU16(symQPAttrSetAckTimeout, a.handleArg(), v)
}

// SetRetryCnt sets the retry count: doca_verbs_qp_attr_set_retry_cnt.
func (a QPAttr) SetRetryCnt(v uint16) error { return setU16(symQPAttrSetRetryCnt, a.handleArg(), v) }

// SetRNRRetry sets the RNR retry count: doca_verbs_qp_attr_set_rnr_retry.
func (a QPAttr) SetRNRRetry(v uint16) error { return setU16(symQPAttrSetRNRRetry, a.handleArg(), v) }

// SetMinRNRTimer sets the minimum RNR NAK timer:
// doca_verbs_qp_attr_set_min_rnr_timer.
func (a QPAttr) SetMinRNRTimer(v uint16) error {
	return setU16(symQPAttrSetMinRNRTimer, a.handleArg(), v)
}

// SetMaxRDAtomic sets the outstanding RDMA reads/atomics as initiator:
// doca_verbs_qp_attr_set_max_rd_atomic.
func (a QPAttr) SetMaxRDAtomic(v uint8) error {
	return setU8(symQPAttrSetMaxRDAtomic, a.handleArg(), v)
}

// SetMaxDestRDAtomic sets the outstanding RDMA reads/atomics as responder:
// doca_verbs_qp_attr_set_max_dest_rd_atomic.
func (a QPAttr) SetMaxDestRDAtomic(v uint8) error {
	return setU8(symQPAttrSetMaxDestRDAtomic, a.handleArg(), v)
}
