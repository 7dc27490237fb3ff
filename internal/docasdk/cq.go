package docasdk

import "unsafe"

// CQAttrCreate creates CQ attributes: doca_verbs_cq_attr_create.
func CQAttrCreate() (CQAttr, error) {
	p, err := create(symCQAttrCreate, func(out *unsafe.Pointer) int32 {
		return tOut(symCQAttrCreate, out)
	})
	return CQAttr{p}, err
}

// Destroy releases the attributes (doca_verbs_cq_attr_destroy) and clears a.
func (a *CQAttr) Destroy() error {
	if a == nil {
		return refused(symCQAttrDestroy, CodeInvalidValue, ErrNilHandle)
	}
	return destroy(symCQAttrDestroy, "cq_attr", &a.cqAttr)
}

func (a CQAttr) handleArg() arg { return arg{"cq_attr", a.cqAttr} }

// SetCQSize sets the number of CQEs: doca_verbs_cq_attr_set_cq_size.
func (a CQAttr) SetCQSize(n uint32) error { return setU32(symCQAttrSetCQSize, a.handleArg(), n) }

// SetCQContext sets the user context value: doca_verbs_cq_attr_set_cq_context.
func (a CQAttr) SetCQContext(ctx uintptr) error {
	return setAddr(symCQAttrSetCQContext, a.handleArg(), ctx)
}

// SetExternalDatapathEn tells the SDK that the data path (CQ polling) is
// driven outside it, by the GPU: doca_verbs_cq_attr_set_external_datapath_en.
func (a CQAttr) SetExternalDatapathEn(on bool) error {
	return setU8Bool(symCQAttrSetExternalDatapathEn, a.handleArg(), on)
}

// SetExternalUMEM places the CQ ring (and, in 3.0, its doorbell record right
// after the CQEs) in umem at offset: doca_verbs_cq_attr_set_external_umem.
func (a CQAttr) SetExternalUMEM(umem UMEM, offset uint64) error {
	return setPU64(symCQAttrSetExternalUMEM, a.handleArg(), arg{"umem", umem.umem}, offset)
}

// SetExternalUAR sets the UAR the CQ uses: doca_verbs_cq_attr_set_external_uar.
func (a CQAttr) SetExternalUAR(uar UAR) error {
	return setP(symCQAttrSetExternalUAR, a.handleArg(), arg{"uar", uar.uar})
}

// SetCQOverrun sets enum doca_verbs_cq_overrun:
// doca_verbs_cq_attr_set_cq_overrun.
func (a CQAttr) SetCQOverrun(v uint32) error {
	return setInt(symCQAttrSetCQOverrun, a.handleArg(), int32(v))
}

// SetCQCollapsed sets collapsed mode: doca_verbs_cq_attr_set_cq_collapsed.
func (a CQAttr) SetCQCollapsed(on bool) error {
	return setU8Bool(symCQAttrSetCQCollapsed, a.handleArg(), on)
}

// CQCreate creates a CQ on an imported verbs context: doca_verbs_cq_create.
func CQCreate(vctx VerbsContext, attr CQAttr) (CQ, error) {
	p, err := create(symCQCreate, func(out *unsafe.Pointer) int32 {
		return tPPOut(symCQCreate, vctx.vctx, attr.cqAttr, out)
	}, arg{"context", vctx.vctx}, attr.handleArg())
	return CQ{p}, err
}

// Destroy destroys the CQ (doca_verbs_cq_destroy) and clears c.
func (c *CQ) Destroy() error {
	if c == nil {
		return refused(symCQDestroy, CodeInvalidValue, ErrNilHandle)
	}
	return destroy(symCQDestroy, "cq", &c.cq)
}

// WQ returns the CQ ring's address, number of CQEs and CQE size:
// doca_verbs_cq_get_wq.
func (c CQ) WQ() (buf uintptr, n uint32, entrySize uint8, err error) {
	if err := begin(symCQGetWQ, arg{"cq", c.cq}); err != nil {
		return 0, 0, 0, err
	}
	buf, n, entrySize, rc := tCQGetWQ(symCQGetWQ, c.cq)
	if err := status(symCQGetWQ, rc); err != nil {
		return 0, 0, 0, err
	}
	return buf, n, entrySize, nil
}

// DBRAddr returns the CQ's UAR doorbell register and its consumer-index and
// arm doorbell records: doca_verbs_cq_get_dbr_addr.
func (c CQ) DBRAddr() (uarDBReg, ciDBR, armDBR uintptr, err error) {
	if err := begin(symCQGetDBRAddr, arg{"cq", c.cq}); err != nil {
		return 0, 0, 0, err
	}
	uarDBReg, ciDBR, armDBR, rc := tCQGetDBRAddr(symCQGetDBRAddr, c.cq)
	if err := status(symCQGetDBRAddr, rc); err != nil {
		return 0, 0, 0, err
	}
	return uarDBReg, ciDBR, armDBR, nil
}

// CQN returns the CQ number: doca_verbs_cq_get_cqn.
func (c CQ) CQN() (uint32, error) { return valueU32(symCQGetCQN, arg{"cq", c.cq}) }
