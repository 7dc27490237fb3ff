package docasdk

import "unsafe"

// QPInitAttrCreate creates QP init attributes:
// doca_verbs_qp_init_attr_create.
func QPInitAttrCreate() (QPInitAttr, error) {
	p, err := create(symQPInitAttrCreate, func(out *unsafe.Pointer) int32 {
		return tOut(symQPInitAttrCreate, out)
	})
	return QPInitAttr{p}, err
}

// Destroy releases the attributes (doca_verbs_qp_init_attr_destroy) and
// clears a.
func (a *QPInitAttr) Destroy() error {
	if a == nil {
		return refused(symQPInitAttrDestroy, CodeInvalidValue, ErrNilHandle)
	}
	return destroy(symQPInitAttrDestroy, "qp_init_attr", &a.qpInitAttr)
}

func (a QPInitAttr) handleArg() arg { return arg{"qp_init_attr", a.qpInitAttr} }

// SetPD sets the PD: doca_verbs_qp_init_attr_set_pd.
func (a QPInitAttr) SetPD(pd VerbsPD) error {
	return setP(symQPInitAttrSetPD, a.handleArg(), arg{"pd", pd.vpd})
}

// SetSendCQ sets the send CQ: doca_verbs_qp_init_attr_set_send_cq.
func (a QPInitAttr) SetSendCQ(cq CQ) error {
	return setP(symQPInitAttrSetSendCQ, a.handleArg(), arg{"send_cq", cq.cq})
}

// SetReceiveCQ sets the receive CQ: doca_verbs_qp_init_attr_set_receive_cq.
func (a QPInitAttr) SetReceiveCQ(cq CQ) error {
	return setP(symQPInitAttrSetReceiveCQ, a.handleArg(), arg{"receive_cq", cq.cq})
}

// SetSQSigAll asks for a CQE for every send WQE:
// doca_verbs_qp_init_attr_set_sq_sig_all.
func (a QPInitAttr) SetSQSigAll(on bool) error {
	return setBool(symQPInitAttrSetSQSigAll, a.handleArg(), on)
}

// SetSQWR sets the send queue size in WQEs: doca_verbs_qp_init_attr_set_sq_wr.
func (a QPInitAttr) SetSQWR(n uint32) error { return setU32(symQPInitAttrSetSQWR, a.handleArg(), n) }

// SetRQWR sets the receive queue size in WQEs:
// doca_verbs_qp_init_attr_set_rq_wr.
func (a QPInitAttr) SetRQWR(n uint32) error { return setU32(symQPInitAttrSetRQWR, a.handleArg(), n) }

// SetSendMaxSGEs sets the scatter/gather entries per send WQE:
// doca_verbs_qp_init_attr_set_send_max_sges.
func (a QPInitAttr) SetSendMaxSGEs(n uint32) error {
	return setU32(symQPInitAttrSetSendMaxSGEs, a.handleArg(), n)
}

// SetReceiveMaxSGEs sets the scatter entries per receive WQE:
// doca_verbs_qp_init_attr_set_receive_max_sges.
func (a QPInitAttr) SetReceiveMaxSGEs(n uint32) error {
	return setU32(symQPInitAttrSetReceiveMaxSGEs, a.handleArg(), n)
}

// SetMaxInlineData sets the inline data limit in bytes:
// doca_verbs_qp_init_attr_set_max_inline_data.
func (a QPInitAttr) SetMaxInlineData(n uint32) error {
	return setU32(symQPInitAttrSetMaxInlineData, a.handleArg(), n)
}

// SetUserIndex sets the user index: doca_verbs_qp_init_attr_set_user_index.
func (a QPInitAttr) SetUserIndex(v uint32) error {
	return setU32(symQPInitAttrSetUserIndex, a.handleArg(), v)
}

// SetQPType sets the QP type (DOCA_VERBS_QP_TYPE_*):
// doca_verbs_qp_init_attr_set_qp_type.
func (a QPInitAttr) SetQPType(t uint32) error {
	return setU32(symQPInitAttrSetQPType, a.handleArg(), t)
}

// SetExternalUMEM places the work queues in umem at offset:
// doca_verbs_qp_init_attr_set_external_umem.
func (a QPInitAttr) SetExternalUMEM(umem UMEM, offset uint64) error {
	return setPU64(symQPInitAttrSetExternalUMEM, a.handleArg(), arg{"external_umem", umem.umem}, offset)
}

// SetExternalDBRUMEM places the doorbell record in umem at offset: the SDK's
// doca_verbs_qp_init_attr_set_external_dbr_umem (the 3.0 open API calls it
// doca_verbs_qp_init_attr_set_external_umem_dbr).
func (a QPInitAttr) SetExternalDBRUMEM(umem UMEM, offset uint64) error {
	return setPU64(symQPInitAttrSetExternalDBRUMEM, a.handleArg(), arg{"external_umem_dbr", umem.umem}, offset)
}

// SetExternalDatapathEn tells the SDK that the data path (WQE posting) is
// driven outside it, by the GPU:
// doca_verbs_qp_init_attr_set_external_datapath_en.
func (a QPInitAttr) SetExternalDatapathEn(on bool) error {
	return setU8Bool(symQPInitAttrSetExternalDatapathEn, a.handleArg(), on)
}

// SetExternalUAR sets the UAR the QP rings:
// doca_verbs_qp_init_attr_set_external_uar.
func (a QPInitAttr) SetExternalUAR(uar UAR) error {
	return setP(symQPInitAttrSetExternalUAR, a.handleArg(), arg{"external_uar", uar.uar})
}

// SetQPContext sets the user context value:
// doca_verbs_qp_init_attr_set_qp_context.
func (a QPInitAttr) SetQPContext(ctx uintptr) error {
	return setAddr(symQPInitAttrSetQPContext, a.handleArg(), ctx)
}

// QPContext returns the user context value:
// doca_verbs_qp_init_attr_get_qp_context.
func (a QPInitAttr) QPContext() (uintptr, error) {
	return valueAddr(symQPInitAttrGetQPContext, a.handleArg())
}

// SetCoreDirectMaster sets core-direct master mode:
// doca_verbs_qp_init_attr_set_core_direct_master.
func (a QPInitAttr) SetCoreDirectMaster(on bool) error {
	return setU8Bool(symQPInitAttrSetCoreDirectMaster, a.handleArg(), on)
}

// SetSendDBRMode sets enum doca_verbs_qp_send_dbr_mode:
// doca_verbs_qp_init_attr_set_send_dbr_mode.
func (a QPInitAttr) SetSendDBRMode(m uint32) error {
	return setInt(symQPInitAttrSetSendDBRMode, a.handleArg(), int32(m))
}

// SendDBRMode returns enum doca_verbs_qp_send_dbr_mode:
// doca_verbs_qp_init_attr_get_send_dbr_mode.
func (a QPInitAttr) SendDBRMode() (uint32, error) {
	return valueEnum(symQPInitAttrGetSendDBRMode, a.handleArg())
}

// SetOrderingSemantic sets enum doca_verbs_qp_ordering_semantic:
// doca_verbs_qp_init_attr_set_ordering_semantic. An SDK without it makes the
// call fail with ErrNoOrderingSemantic (Decision.SetOrderingSemantic says so
// in advance).
func (a QPInitAttr) SetOrderingSemantic(v uint32) error {
	return setInt(symQPInitAttrSetOrderingSemantic, a.handleArg(), int32(v))
}

// OrderingSemantic returns enum doca_verbs_qp_ordering_semantic:
// doca_verbs_qp_init_attr_get_ordering_semantic; ErrNoOrderingSemantic
// where the SDK lacks it.
func (a QPInitAttr) OrderingSemantic() (uint32, error) {
	return valueEnum(symQPInitAttrGetOrderingSemantic, a.handleArg())
}
