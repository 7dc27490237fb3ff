package verbs

import (
	"fmt"

	"github.com/gdaki/gpunetio/internal/docasdk"
)

// SDK mode: CQs and QPs created, driven and destroyed through the DOCA SDK
// (package docasdk). The Go objects keep the same bookkeeping (references,
// holds, Close order) as in open mode; what the device knows lives in the
// SDK, and the getters' values come from the SDK's getters, read once at
// creation (they are fixed for the object's life). Attribute objects (CQ
// attributes, QP init attributes, QP attributes, AH attributes) are this
// package's plain structs: an SDK attribute object is made from one for each
// create or modify and destroyed after it.

// sdkCQ is the SDK side of a CQ.
type sdkCQ struct {
	cq        docasdk.CQ
	entrySize uint8
	uarDB     uintptr
	ciDBR     uintptr
	armDBR    uintptr
}

// sdkQP is the SDK side of a QP.
type sdkQP struct {
	q    *QP
	qp   docasdk.QP
	uarA uintptr // doca_verbs_qp_get_uar_addr
}

// newCQAttrSDK makes the SDK CQ attributes for cfg.
func newCQAttrSDK(op string, cfg CQConfig) (_ docasdk.CQAttr, err error) {
	logUse(docasdk.ObjCQAttr, ModeSDK)
	a, err := docasdk.CQAttrCreate()
	if err != nil {
		return a, sdkErr(op, true, err, "CQ attributes")
	}
	defer func() {
		if err != nil {
			destroyQuietly("doca_verbs_cq_attr_destroy", a.Destroy)
		}
	}()
	steps := []struct {
		what string
		do   func() error
	}{
		{"size", func() error { return a.SetCQSize(cfg.Size) }},
		{"context", func() error {
			if cfg.UserContext == 0 {
				return nil
			}
			return a.SetCQContext(cfg.UserContext)
		}},
		{"external UMEM", func() error { return setExternalUMEM(a, cfg.UMem, cfg.UMemOffset) }},
		{"external UAR", func() error { return setExternalUAR(a, cfg.UAR) }},
		{"overrun", func() error {
			if !cfg.Overrun {
				return nil
			}
			return a.SetCQOverrun(1) // DOCA_VERBS_CQ_ENABLE_OVERRUN
		}},
		{"collapsed", func() error {
			if !cfg.Collapsed {
				return nil
			}
			return a.SetCQCollapsed(true)
		}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return a, sdkErr(op, true, err, "CQ attribute %s", s.what)
		}
	}
	return a, nil
}

// externalAttr is what the SDK's CQ attributes and QP init attributes have
// in common: a ring in the user's memory and the user's doorbell page.
type externalAttr interface {
	SetExternalUMEM(umem docasdk.UMEM, offset uint64) error
	SetExternalDatapathEn(on bool) error
	SetExternalUAR(uar docasdk.UAR) error
}

// setExternalUMEM places the ring at offset in u, when u is set. As DOCA
// does, the data path then runs outside the SDK: this package polls the CQ
// and posts the WQEs itself.
func setExternalUMEM(a externalAttr, u *UMem, offset uint64) error {
	if u == nil {
		return nil
	}
	if err := a.SetExternalUMEM(u.sdk, offset); err != nil {
		return err
	}
	return a.SetExternalDatapathEn(true)
}

// setExternalUAR makes u the doorbell page, when u is set.
func setExternalUAR(a externalAttr, u *UAR) error {
	if u == nil {
		return nil
	}
	return a.SetExternalUAR(u.sdk)
}

// destroyQuietly runs an SDK destroyer whose failure cannot be returned (a
// clean-up after another error), logging it.
func destroyQuietly(fn string, destroy func() error) {
	if err := destroy(); err != nil {
		logPrint(logErr, fn+": "+err.Error())
	}
}

// newCQSDK creates the CQ through the SDK.
func (d *Dev) newCQSDK(op string, cfg CQConfig) (_ *CQ, err error) {
	if !isPow2(uint64(cfg.Size)) {
		return nil, newErr(op, ErrInvalidValue, "size %d is not a power of two", cfg.Size)
	}
	if cfg.DBRUMem != nil {
		return nil, openOnly(op, "a separate CQ doorbell-record UMEM (CQConfig.DBRUMem, removed in DOCA 3.0)")
	}
	if cfg.UMem != nil {
		if err := checkCQUMem(op, cfg); err != nil {
			return nil, err
		}
	}
	vctx, err := d.context(op)
	if err != nil {
		return nil, err
	}
	q := &CQ{ctx: d.ctx, dev: d, cfg: cfg, entries: cfg.Size, sdk: &sdkCQ{}}
	if err := d.acquire(op, "Dev", &q.node); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			if !q.sdk.cq.IsZero() {
				destroyQuietly("doca_verbs_cq_destroy", q.sdk.cq.Destroy)
			}
			for _, n := range q.held {
				n.release(&q.node)
			}
			d.release(&q.node)
		}
	}()
	for _, n := range []*node{nodeOfUMem(cfg.UMem), nodeOfUAR(cfg.UAR)} {
		if n == nil {
			continue
		}
		if err := n.acquire(op, n.kind, &q.node); err != nil {
			return nil, err
		}
		q.held = append(q.held, n)
	}
	q.uar = cfg.UAR
	attr, err := newCQAttrSDK(op, cfg)
	if err != nil {
		return nil, err
	}
	q.sdk.cq, err = docasdk.CQCreate(vctx, attr)
	destroyQuietly("doca_verbs_cq_attr_destroy", attr.Destroy)
	if err != nil {
		return nil, sdkErr(op, true, err, "CQ of %d entries", cfg.Size)
	}
	if q.ring, q.entries, q.sdk.entrySize, err = q.sdk.cq.WQ(); err != nil {
		return nil, sdkErr(op, true, err, "CQ ring")
	}
	if q.sdk.uarDB, q.sdk.ciDBR, q.sdk.armDBR, err = q.sdk.cq.DBRAddr(); err != nil {
		return nil, sdkErr(op, true, err, "CQ doorbells")
	}
	q.dbr = q.sdk.ciDBR
	if q.cqn, err = q.sdk.cq.CQN(); err != nil {
		return nil, sdkErr(op, true, err, "CQ number")
	}
	q.init("CQ", fmt.Sprintf("CQ 0x%x (SDK) on %s", q.cqn, d.ctx.name))
	return q, nil
}

func nodeOfUMem(u *UMem) *node {
	if u == nil {
		return nil
	}
	return &u.node
}

func nodeOfUAR(u *UAR) *node {
	if u == nil {
		return nil
	}
	return &u.node
}

// closeSDK destroys an SDK CQ: the SDK handle is released even when the SDK
// fails (DOCA 3.0), so the CQ is closed either way.
func (q *CQ) closeSDK(op string) error {
	var err error
	if derr := q.sdk.cq.Destroy(); derr != nil {
		err = sdkErr(op, false, derr, "cqn 0x%x", q.cqn)
	}
	for _, n := range q.held {
		n.release(&q.node)
	}
	q.held = nil
	q.dev.release(&q.node)
	return err
}

// newQPInitAttrSDK makes the SDK QP init attributes for cfg.
func (d *Dev) newQPInitAttrSDK(op string, cfg QPConfig) (_ docasdk.QPInitAttr, err error) {
	logUse(docasdk.ObjQPInitAttr, ModeSDK)
	a, err := docasdk.QPInitAttrCreate()
	if err != nil {
		return a, sdkErr(op, true, err, "QP init attributes")
	}
	defer func() {
		if err != nil {
			destroyQuietly("doca_verbs_qp_init_attr_destroy", a.Destroy)
		}
	}()
	vpd, err := d.verbsPD(op)
	if err != nil {
		return a, err
	}
	for _, s := range qpInitAttrSteps(a, vpd, cfg) {
		if err := s.do(); err != nil {
			if s.what == "ordering_semantic" {
				logPrint(logInfo, docasdk.MsgSetOrderingUnsupportedSDK)
			}
			return a, sdkErr(op, true, err, "QP init attribute %s", s.what)
		}
	}
	return a, nil
}

// initAttrStep is one setter of the SDK's QP init attributes.
type initAttrStep struct {
	what string
	do   func() error
}

// qpInitAttrSteps lists the setters that give a the configuration cfg, in
// the order DOCA calls them; a setter of an absent option does nothing.
func qpInitAttrSteps(a docasdk.QPInitAttr, vpd docasdk.VerbsPD, cfg QPConfig) []initAttrStep {
	type step = initAttrStep
	return []step{
		{"pd", func() error { return a.SetPD(vpd) }},
		{"send cq", func() error {
			if cfg.SendCQ == nil {
				return nil
			}
			return a.SetSendCQ(cfg.SendCQ.sdk.cq)
		}},
		{"receive cq", func() error {
			if cfg.RecvCQ == nil {
				return nil
			}
			return a.SetReceiveCQ(cfg.RecvCQ.sdk.cq)
		}},
		{"sq_sig_all", func() error { return a.SetSQSigAll(cfg.SQSigAll) }},
		{"sq_wr", func() error { return a.SetSQWR(cfg.SQWR) }},
		{"rq_wr", func() error { return a.SetRQWR(cfg.RQWR) }},
		{"send_max_sges", func() error { return a.SetSendMaxSGEs(cfg.SendMaxSGE) }},
		{"receive_max_sges", func() error { return a.SetReceiveMaxSGEs(cfg.RecvMaxSGE) }},
		{"max_inline_data", func() error { return a.SetMaxInlineData(cfg.MaxInlineData) }},
		{"user_index", func() error { return a.SetUserIndex(cfg.UserIndex) }},
		{"qp_type", func() error { return a.SetQPType(uint32(cfg.Type)) }},
		{"external umem", func() error { return setExternalUMEM(a, cfg.UMem, cfg.UMemOffset) }},
		{"external umem dbr", func() error {
			if cfg.DBRUMem == nil {
				return nil
			}
			return a.SetExternalDBRUMEM(cfg.DBRUMem.sdk, cfg.DBRUMemOffset)
		}},
		{"external uar", func() error { return setExternalUAR(a, cfg.UAR) }},
		{"qp_context", func() error {
			if cfg.UserContext == 0 {
				return nil
			}
			return a.SetQPContext(cfg.UserContext)
		}},
		{"core_direct_master", func() error { return a.SetCoreDirectMaster(cfg.CoreDirectMaster) }},
		{"send_dbr_mode", func() error { return a.SetSendDBRMode(uint32(cfg.SendDBRMode)) }},
		{"ordering_semantic", func() error {
			if cfg.OrderingSemantic == OrderingIBTA {
				return nil // as DOCA's high-level helpers: set only when not the default
			}
			return a.SetOrderingSemantic(uint32(cfg.OrderingSemantic))
		}},
	}
}

// newQPSDK creates the QP through the SDK; q carries the checked
// configuration and the references already taken.
func (d *Dev) newQPSDK(op string, q *QP) error {
	cfg := q.cfg
	vctx, err := d.context(op)
	if err != nil {
		return err
	}
	attr, err := d.newQPInitAttrSDK(op, cfg)
	if err != nil {
		return err
	}
	s := &sdkQP{q: q}
	s.qp, err = docasdk.QPCreate(vctx, attr)
	destroyQuietly("doca_verbs_qp_init_attr_destroy", attr.Destroy)
	if err != nil {
		return sdkErr(op, true, err, "QP")
	}
	q.sdk = s
	// The getters DOCA's export reads, read once.
	if q.qpn, err = s.qp.QPN(); err != nil {
		return sdkErr(op, true, err, "QP number")
	}
	wq, err := s.qp.WQ()
	if err != nil {
		return sdkErr(op, true, err, "QP work queues")
	}
	q.sqAddr, q.wq = wq.SQ, wq.RQ
	q.sq.wqebbs, q.sq.wqeSize = uint64(wq.SQEntries), wqebb
	q.rq.entries, q.rq.wqeSize = uint64(wq.RQEntries), uint64(wq.RWQESize)
	if q.dbr, err = s.qp.DBRAddr(); err != nil {
		return sdkErr(op, true, err, "QP doorbell record")
	}
	if s.uarA, err = s.qp.UARAddr(); err != nil {
		return sdkErr(op, true, err, "QP doorbell register")
	}
	q.db = s.uarA
	// The send doorbell-record mode, as DOCA's export reads it: query,
	// then the init attributes' getter.
	if mode, err := s.sendDBRMode(op); err != nil {
		return err
	} else if mode != cfg.SendDBRMode {
		return newErr(op, ErrUnexpected, "the SDK reports send DBR mode %v for a QP created with %v", mode, cfg.SendDBRMode)
	}
	return nil
}

// sendDBRMode queries the QP's send doorbell-record mode from the SDK.
func (s *sdkQP) sendDBRMode(op string) (SendDBRMode, error) {
	var m uint32
	err := s.query(op, func(_ docasdk.QPAttr, init docasdk.QPInitAttr) (err error) {
		if m, err = init.SendDBRMode(); err != nil {
			return sdkErr(op, false, err, "send DBR mode of QP 0x%x", s.q.qpn)
		}
		return nil
	})
	return SendDBRMode(m), err
}

// state queries the QP's state from the SDK.
func (s *sdkQP) state(op string) (QPState, error) {
	var st uint32
	err := s.query(op, func(attr docasdk.QPAttr, _ docasdk.QPInitAttr) (err error) {
		if st, err = attr.CurrentState(); err != nil {
			return sdkErr(op, false, err, "state of QP 0x%x", s.q.qpn)
		}
		if !QPState(st).valid() {
			return newErr(op, ErrUnexpected, "the SDK reports QP state %d", st)
		}
		return nil
	})
	return QPState(st), err
}

// query makes the two attribute objects a query fills, queries the QP into
// them, hands them to read and destroys them.
func (s *sdkQP) query(op string, read func(docasdk.QPAttr, docasdk.QPInitAttr) error) error {
	logUse(docasdk.ObjQPAttr, ModeSDK)
	attr, err := docasdk.QPAttrCreate()
	if err != nil {
		return sdkErr(op, false, err, "QP attributes")
	}
	defer destroyQuietly("doca_verbs_qp_attr_destroy", attr.Destroy)
	logUse(docasdk.ObjQPInitAttr, ModeSDK)
	init, err := docasdk.QPInitAttrCreate()
	if err != nil {
		return sdkErr(op, false, err, "QP init attributes")
	}
	defer destroyQuietly("doca_verbs_qp_init_attr_destroy", init.Destroy)
	if _, err := s.qp.Query(attr, init); err != nil {
		return sdkErr(op, false, err, "query QP 0x%x", s.q.qpn)
	}
	return read(attr, init)
}

// modify applies attr through the SDK: an SDK QP attribute object (and AH
// attribute object) made from the fields in mask, doca_verbs_qp_modify with
// the same mask, both destroyed after.
func (s *sdkQP) modify(op string, attr *QPAttr, mask QPAttrMask) (err error) {
	logUse(docasdk.ObjQPAttr, ModeSDK)
	a, err := docasdk.QPAttrCreate()
	if err != nil {
		return sdkErr(op, false, err, "QP attributes")
	}
	defer destroyQuietly("doca_verbs_qp_attr_destroy", a.Destroy)
	var ah docasdk.AHAttr
	defer func() {
		if !ah.IsZero() {
			destroyQuietly("doca_verbs_ah_attr_destroy", ah.Destroy)
		}
	}()
	type setter struct {
		bit  QPAttrMask
		what string
		do   func() error
	}
	setters := []setter{
		{QPAttrNextState, "next_state", func() error { return a.SetNextState(uint32(attr.NextState)) }},
		{QPAttrCurrentState, "current_state", func() error { return a.SetCurrentState(uint32(attr.CurrentState)) }},
		{QPAttrPathMTU, "path_mtu", func() error { return a.SetPathMTU(uint32(attr.PathMTU)) }},
		{QPAttrRQPSN, "rq_psn", func() error { return a.SetRQPSN(attr.RQPSN) }},
		{QPAttrSQPSN, "sq_psn", func() error { return a.SetSQPSN(attr.SQPSN) }},
		{QPAttrDestQPNum, "dest_qp_num", func() error { return a.SetDestQPNum(attr.DestQPNum) }},
		{QPAttrAllowRemoteWrite, "allow_remote_write", func() error { return a.SetAllowRemoteWrite(attr.AllowRemoteWrite) }},
		{QPAttrAllowRemoteRead, "allow_remote_read", func() error { return a.SetAllowRemoteRead(attr.AllowRemoteRead) }},
		{QPAttrAtomicMode, "atomic_mode", func() error { return a.SetAtomicMode(uint32(attr.RemoteAtomic)) }},
		{QPAttrAHAttr, "ah_attr", func() error {
			var err error
			ah, err = s.ahAttr(op, attr.AH)
			if err != nil {
				return err
			}
			return a.SetAHAttr(ah)
		}},
		{QPAttrPKeyIndex, "pkey_index", func() error { return a.SetPKeyIndex(attr.PKeyIndex) }},
		{QPAttrPortNum, "port_num", func() error { return a.SetPortNum(attr.PortNum) }},
		{QPAttrAckTimeout, "ack_timeout", func() error { return a.SetAckTimeout(uint16(attr.AckTimeout)) }},
		{QPAttrRetryCnt, "retry_cnt", func() error { return a.SetRetryCnt(uint16(attr.RetryCnt)) }},
		{QPAttrRNRRetry, "rnr_retry", func() error { return a.SetRNRRetry(uint16(attr.RNRRetry)) }},
		{QPAttrMinRNRTimer, "min_rnr_timer", func() error { return a.SetMinRNRTimer(uint16(attr.MinRNRTimer)) }},
		{QPAttrMaxQPRDAtomic, "max_rd_atomic", func() error { return a.SetMaxRDAtomic(attr.MaxRDAtomic) }},
		{QPAttrMaxDestRDAtomic, "max_dest_rd_atomic", func() error { return a.SetMaxDestRDAtomic(attr.MaxDestRDAtomic) }},
	}
	for _, st := range setters {
		if mask&st.bit == 0 {
			continue
		}
		if err := st.do(); err != nil {
			if e, ok := err.(*Error); ok {
				return e
			}
			return sdkErr(op, false, err, "QP attribute %s", st.what)
		}
	}
	if err := s.qp.Modify(a, int32(mask)); err != nil {
		return sdkErr(op, false, err, "modify QP 0x%x (%v)", s.q.qpn, mask)
	}
	return nil
}

// ahAttr makes the SDK AH attributes for ah, on the Dev's imported context.
func (s *sdkQP) ahAttr(op string, ah *AHAttr) (_ docasdk.AHAttr, err error) {
	d := s.q.dev
	vctx, err := d.context(op)
	if err != nil {
		return docasdk.AHAttr{}, err
	}
	logUse(docasdk.ObjAHAttr, ModeSDK)
	h, err := docasdk.AHAttrCreate(vctx)
	if err != nil {
		return h, sdkErr(op, false, err, "AH attributes")
	}
	setters := []struct {
		what string
		do   func() error
	}{
		{"gid", func() error { return h.SetGID(ah.GID) }},
		{"addr_type", func() error { return h.SetAddrType(uint32(ah.AddrType)) }},
		{"dlid", func() error { return h.SetDLID(ah.DLID) }},
		{"sl", func() error { return h.SetSL(ah.SL) }},
		{"sgid_index", func() error { return h.SetSGIDIndex(ah.SGIDIndex) }},
		{"static_rate", func() error { return h.SetStaticRate(ah.StaticRate) }},
		{"hop_limit", func() error { return h.SetHopLimit(ah.HopLimit) }},
		{"traffic_class", func() error { return h.SetTrafficClass(ah.TrafficClass) }},
	}
	for _, st := range setters {
		if err := st.do(); err != nil {
			return h, sdkErr(op, false, err, "AH attribute %s", st.what)
		}
	}
	return h, nil
}

// closeSDK destroys an SDK QP; the handle is released even when the SDK
// fails (DOCA 3.0), so the QP is closed either way.
func (q *QP) closeSDK(op string) error {
	var err error
	if derr := q.sdk.qp.Destroy(); derr != nil {
		err = sdkErr(op, false, derr, "qpn 0x%x", q.qpn)
	}
	return err
}
