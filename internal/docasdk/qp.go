package docasdk

import "unsafe"

// QPCreate creates a QP on an imported verbs context:
// doca_verbs_qp_create.
func QPCreate(vctx VerbsContext, initAttr QPInitAttr) (QP, error) {
	p, err := create(symQPCreate, func(out *unsafe.Pointer) int32 {
		return tPPOut(symQPCreate, vctx.vctx, initAttr.qpInitAttr, out)
	}, arg{"context", vctx.vctx}, initAttr.handleArg())
	return QP{p}, err
}

// Destroy destroys the QP (doca_verbs_qp_destroy) and clears q.
func (q *QP) Destroy() error {
	if q == nil {
		return refused(symQPDestroy, CodeInvalidValue, ErrNilHandle)
	}
	return destroy(symQPDestroy, "qp", &q.qp)
}

func (q QP) handleArg() arg { return arg{"qp", q.qp} }

// Modify applies the attributes selected by mask (DOCA_VERBS_QP_ATTR_*
// bits): doca_verbs_qp_modify.
func (q QP) Modify(attr QPAttr, mask int32) error {
	s := symQPModify
	if err := begin(s, q.handleArg(), attr.handleArg()); err != nil {
		return err
	}
	return status(s, tQPModify(s, q.qp, attr.qpAttr, mask))
}

// Query fills attr and initAttr from the QP and returns the mask of the
// attributes the SDK reported: doca_verbs_qp_query.
func (q QP) Query(attr QPAttr, initAttr QPInitAttr) (mask int32, err error) {
	s := symQPQuery
	if err := begin(s, q.handleArg(), attr.handleArg(), initAttr.handleArg()); err != nil {
		return 0, err
	}
	mask, rc := tQPQuery(s, q.qp, attr.qpAttr, initAttr.qpInitAttr)
	if err := status(s, rc); err != nil {
		return 0, err
	}
	return mask, nil
}

// QPWorkQueues is where a QP's rings are: what doca_verbs_qp_get_wq reports.
type QPWorkQueues struct {
	SQ        uintptr // send queue
	SQEntries uint32
	RQ        uintptr // receive queue
	RQEntries uint32
	RWQESize  uint32 // bytes per receive WQE
}

// WQ returns the QP's rings: doca_verbs_qp_get_wq.
func (q QP) WQ() (QPWorkQueues, error) {
	s := symQPGetWQ
	if err := begin(s, q.handleArg()); err != nil {
		return QPWorkQueues{}, err
	}
	w, rc := tQPGetWQ(s, q.qp)
	if err := status(s, rc); err != nil {
		return QPWorkQueues{}, err
	}
	return w, nil
}

// DBRAddr returns the doorbell record's address: doca_verbs_qp_get_dbr_addr.
func (q QP) DBRAddr() (uintptr, error) { return valueAddr(symQPGetDBRAddr, q.handleArg()) }

// UARAddr returns the doorbell register's address:
// doca_verbs_qp_get_uar_addr.
func (q QP) UARAddr() (uintptr, error) { return valueAddr(symQPGetUARAddr, q.handleArg()) }

// QPN returns the QP number: doca_verbs_qp_get_qpn.
func (q QP) QPN() (uint32, error) { return valueU32(symQPGetQPN, q.handleArg()) }
