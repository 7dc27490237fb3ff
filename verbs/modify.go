package verbs

import (
	"math/rand"
	"sync"
	"time"
)

// AHAttr is an address handle description (doca_verbs_ah_attr): where the
// peer is. A value object; Modify copies what it needs.
type AHAttr struct {
	GID          GID
	AddrType     AddrType
	DLID         uint32 // InfiniBand destination LID
	SL           uint8
	SGIDIndex    uint8 // local GID index
	StaticRate   uint8
	HopLimit     uint8
	TrafficClass uint8
}

// QPAttr carries the attributes of a QP transition (doca_verbs_qp_attr).
// Modify applies the fields named in its mask.
type QPAttr struct {
	NextState, CurrentState QPState
	PathMTU                 MTU
	RQPSN, SQPSN            uint32 // 24 bits; higher bits are dropped
	DestQPNum               uint32
	AllowRemoteWrite        bool
	AllowRemoteRead         bool
	// RemoteAtomic is the atomic mode (doca_verbs_qp_attr_set_atomic_mode,
	// DOCA GPUNetIO 3.0): what atomics the peer may execute on this QP's
	// memory. As in DOCA 3.0 it is applied only with QPAttrAtomicMode in
	// the mask (RST -> INIT and the four transitions after it take it);
	// without the bit the QP keeps its atomic mode, and a QP never given
	// one refuses remote atomics (the requester's completion is
	// WCRemAccessErr). INIT -> RTR logs a WARNING when it is not AtomicNone
	// and the bit is absent, as DOCA does.
	RemoteAtomic AtomicMode
	AH           *AHAttr
	PKeyIndex    uint16
	PortNum      uint16
	AckTimeout   uint8 // 4.096 us * 2^n, 0 = infinite; 0..31
	RetryCnt     uint8 // 0..7
	RNRRetry     uint8 // 0..7, 7 = infinite
	MinRNRTimer  uint8 // IB-encoded, 0..31
	// MaxRDAtomic / MaxDestRDAtomic are outstanding READ/atomic requests as
	// requester / responder: powers of two up to the device limits, or 0,
	// which programs one (log 0), as DOCA 3.0 does.
	MaxRDAtomic     uint8
	MaxDestRDAtomic uint8
}

var (
	sportOnce sync.Once
	sportRand *rand.Rand
	sportMu   sync.Mutex
)

// randomSport picks a RoCE v2 UDP source port in [lo, hi].
func randomSport(lo, hi uint16) uint16 {
	sportOnce.Do(func() { sportRand = rand.New(rand.NewSource(time.Now().UnixNano())) })
	if hi < lo || lo == 0 {
		lo, hi = 0xc000, 0xffff
	}
	sportMu.Lock()
	defer sportMu.Unlock()
	return lo + uint16(sportRand.Intn(int(hi-lo)+1))
}

// Modify moves the QP through its state machine (doca_verbs_qp_modify),
// applying the attributes named in mask. The current state is the one cached
// from the last successful Modify unless mask has QPAttrCurrentState.
// Transitions: any -> RST, any -> ERR, RST -> INIT, INIT -> INIT,
// INIT -> RTR, RTR -> RTS, RTS -> RTS; each requires and allows the fields
// listed in the package documentation.
func (q *QP) Modify(a *QPAttr, mask QPAttrMask) error {
	const op = "doca_verbs_qp_modify"
	if err := q.enterQP(op); err != nil {
		return err
	}
	defer q.leave()
	if a == nil {
		return newErr(op, ErrInvalidValue, "nil attributes")
	}
	attr := *a // PSN masking must not write the caller's struct
	if mask&QPAttrCurrentState != 0 && !attr.CurrentState.valid() {
		return newErr(op, ErrInvalidValue, "current state %v", attr.CurrentState)
	}
	if mask&QPAttrNextState != 0 && !attr.NextState.valid() {
		return newErr(op, ErrInvalidValue, "next state %v", attr.NextState)
	}
	if mask&QPAttrPathMTU != 0 && attr.PathMTU > MTU4096 {
		return newErr(op, ErrInvalidValue, "path MTU %v: must be 256..4096", attr.PathMTU)
	}
	attr.RQPSN &= psnMask
	attr.SQPSN &= psnMask
	da := q.devAttr
	if mask&QPAttrAHAttr != 0 {
		if attr.AH == nil {
			return newErr(op, ErrInvalidValue, "AH_ATTR in the mask but no AH attributes")
		}
		if attr.AH.AddrType > AddrTypeIBNoGRH {
			return newErr(op, ErrInvalidValue, "address type %v", attr.AH.AddrType)
		}
		if uint32(attr.AH.SGIDIndex) >= da.GIDTableSize {
			return newErr(op, ErrInvalidValue, "sgid index %d: the GID table has %d entries", attr.AH.SGIDIndex, da.GIDTableSize)
		}
	}
	if mask&QPAttrPKeyIndex != 0 && attr.PKeyIndex > da.MaxPKeys {
		return newErr(op, ErrInvalidValue, "pkey index %d exceeds %d", attr.PKeyIndex, da.MaxPKeys)
	}
	if mask&QPAttrPortNum != 0 && (attr.PortNum < 1 || attr.PortNum > uint16(da.PhysPortCnt)) {
		return newErr(op, ErrInvalidValue, "port %d: the device has ports 1..%d", attr.PortNum, da.PhysPortCnt)
	}
	if mask&QPAttrAckTimeout != 0 && attr.AckTimeout > 31 {
		return newErr(op, ErrInvalidValue, "ack timeout %d exceeds 31", attr.AckTimeout)
	}
	if mask&QPAttrRetryCnt != 0 && attr.RetryCnt > 7 {
		return newErr(op, ErrInvalidValue, "retry count %d exceeds 7", attr.RetryCnt)
	}
	if mask&QPAttrRNRRetry != 0 && attr.RNRRetry > 7 {
		return newErr(op, ErrInvalidValue, "RNR retry %d exceeds 7", attr.RNRRetry)
	}
	if mask&QPAttrMinRNRTimer != 0 && attr.MinRNRTimer > 31 {
		return newErr(op, ErrInvalidValue, "min RNR timer %d exceeds 31", attr.MinRNRTimer)
	}
	if mask&QPAttrMaxQPRDAtomic != 0 {
		if v := attr.MaxRDAtomic; v != 0 && (!isPow2(uint64(v)) || v > maxRD(da.MaxQPRDAtom, da.LogMaxRAReqQP)) {
			return newErr(op, ErrInvalidValue, "max_rd_atomic %d: must be 0 or a power of two up to %d", v, maxRD(da.MaxQPRDAtom, da.LogMaxRAReqQP))
		}
	}
	if mask&QPAttrMaxDestRDAtomic != 0 {
		if v := attr.MaxDestRDAtomic; v != 0 && (!isPow2(uint64(v)) || v > maxRD(da.MaxQPInitRDAtom, da.LogMaxRAResQP)) {
			return newErr(op, ErrInvalidValue, "max_dest_rd_atomic %d: must be 0 or a power of two up to %d", v, maxRD(da.MaxQPInitRDAtom, da.LogMaxRAResQP))
		}
	}
	if mask&QPAttrAtomicMode != 0 && !attr.RemoteAtomic.valid() {
		return newErr(op, ErrInvalidValue, "remote atomic mode %v: want NONE, IB_SPEC, ONLY_8BYTES or UP_TO_8..256BYTES", attr.RemoteAtomic)
	}

	q.mu.Lock()
	defer q.mu.Unlock()
	cur := q.state
	if mask&QPAttrCurrentState != 0 {
		cur = attr.CurrentState
	}
	next := cur
	if mask&QPAttrNextState != 0 {
		next = attr.NextState
	}
	t := findTransition(cur, next)
	if t == nil {
		return newErr(op, ErrInvalidValue, "no transition %v -> %v", cur, next)
	}
	if missing, extra := t.checkMask(mask); missing != 0 || extra != 0 {
		if missing != 0 {
			return newErr(op, ErrInvalidValue, "%v -> %v needs %v", cur, next, missing)
		}
		return newErr(op, ErrInvalidValue, "%v -> %v does not take %v", cur, next, extra)
	}

	if cur == QPStateINIT && next == QPStateRTR && mask&QPAttrAtomicMode == 0 && attr.RemoteAtomic != AtomicNone {
		// DOCA 3.0 warns here, and only here.
		logPrint(logWarning, "verbs_qp_attr atomic_mode is set but attr_mask flag DOCA_VERBS_QP_ATTR_ATOMIC_MODE is not set")
	}
	if q.sdk != nil {
		if cur == QPStateRTS && next == QPStateRTS && mask&QPAttrAHAttr != 0 {
			if field := pathChange(&q.path, attr.AH); field != "" {
				return newErr(op, ErrNotSupported, "RTS -> RTS changes only the source GID index and traffic class of the address path, not its %s: reconnect the QP (RST -> RTS) instead", field)
			}
		}
		if err := q.sdk.modify(op, &attr, mask); err != nil {
			return err
		}
		q.afterModify(cur, next, &attr)
		return nil
	}

	p := modifyParams{qpn: q.qpn, from: cur, to: next, optMask: optParams(cur, next, mask)}
	rwe := attr.AllowRemoteWrite
	rre := mask&QPAttrAllowRemoteRead != 0 && attr.AllowRemoteRead
	// DOCA 3.0 writes rae and atomic_mode only with the ATOMIC_MODE bit.
	atomic, setAtomic := attr.RemoteAtomic, mask&QPAttrAtomicMode != 0
	switch {
	case next == QPStateRST || next == QPStateERR:
	case cur == QPStateRST: // RST -> INIT
		p.port, p.setPort = uint8(attr.PortNum), true
		p.pkeyIndex, p.setPKey = attr.PKeyIndex, true
		p.pmState = true
		p.rwe, p.rre, p.setAccess = rwe, rre, true
		p.atomic, p.setAtomic = atomic, setAtomic
	case cur == QPStateINIT && next == QPStateINIT:
		p.port, p.setPort = uint8(attr.PortNum), mask&QPAttrPortNum != 0
		p.pkeyIndex, p.setPKey = attr.PKeyIndex, mask&QPAttrPKeyIndex != 0
		p.rwe, p.rre, p.setAccess = rwe, rre, true
		p.atomic, p.setAtomic = atomic, setAtomic
	case next == QPStateRTR:
		ah := attr.AH
		p.rtr = true
		p.rqPSN, p.destQPN, p.mtu = attr.RQPSN, attr.DestQPNum, attr.PathMTU
		p.minRNR, p.setMinRNR = attr.MinRNRTimer, true
		p.pkeyIndex, p.setPKey = attr.PKeyIndex, true
		p.rwe, p.rre, p.setAccess = rwe, rre, true
		p.atomic, p.setAtomic = atomic, setAtomic
		if mask&QPAttrMaxDestRDAtomic != 0 {
			p.logRRA, p.setRRA = logRD(attr.MaxDestRDAtomic), true
		}
		p.staticRate = ah.StaticRate
		if ah.AddrType == AddrTypeIBGRH || ah.AddrType == AddrTypeIBNoGRH {
			p.tclass, p.rlid, p.sl = ah.TrafficClass, uint16(ah.DLID), ah.SL
		}
		if ah.AddrType != AddrTypeIBNoGRH {
			p.rgid, p.hopLimit, p.sgidIndex, p.setGRH = ah.GID, ah.HopLimit, ah.SGIDIndex, true
		}
		p.grh = ah.AddrType == AddrTypeIBGRH
		p.port = uint8(q.portNum)
		if ah.AddrType.roce() {
			mac, err := q.resolveMAC(ah)
			if err != nil {
				return err
			}
			p.rmac = mac
			v2, err := prmRoCEv2(q.ctx.dev, ah.SGIDIndex)
			if err != nil {
				return driverErr(op, err, "QUERY_ROCE_ADDRESS for sgid index %d", ah.SGIDIndex)
			}
			if v2 {
				p.udpSport = randomSport(da.MinUDPSport, da.MaxUDPSport)
				p.dscp = ah.TrafficClass >> 2
			}
		}
	case next == QPStateRTS && cur == QPStateRTR:
		p.rts = true
		p.sqPSN = attr.SQPSN
		p.ackTimeout, p.setAck = attr.AckTimeout, mask&QPAttrAckTimeout != 0
		p.retry, p.setRetry = attr.RetryCnt, mask&QPAttrRetryCnt != 0
		p.rnrRetry, p.setRNRRetry = attr.RNRRetry, mask&QPAttrRNRRetry != 0
		p.minRNR, p.setMinRNR = attr.MinRNRTimer, mask&QPAttrMinRNRTimer != 0
		p.rwe, p.setAccess = rwe, true
		p.atomic, p.setAtomic = atomic, setAtomic
		if mask&QPAttrMaxQPRDAtomic != 0 {
			p.logSRA, p.setSRA = logRD(attr.MaxRDAtomic), true
		}
	default: // RTS -> RTS
		p.minRNR, p.setMinRNR = attr.MinRNRTimer, mask&QPAttrMinRNRTimer != 0
		p.rwe, p.rre, p.setAccess = rwe, rre, true
		p.atomic, p.setAtomic = atomic, setAtomic
		if mask&QPAttrAHAttr != 0 {
			if field := pathChange(&q.path, attr.AH); field != "" {
				return newErr(op, ErrNotSupported, "RTS -> RTS changes only the source GID index and traffic class of the address path, not its %s: "+
					"a ConnectX moves an RTS QP to another remote address only by path migration, which this package does not do; reconnect the QP (RST -> RTS) instead", field)
			}
			p.sgidIndex, p.setSGID = attr.AH.SGIDIndex, true
			if da.RTS2RTSQPDSCP && da.PortType == 1 {
				if v2, err := prmRoCEv2(q.ctx.dev, attr.AH.SGIDIndex); err == nil && v2 {
					p.dscp, p.setDSCP = attr.AH.TrafficClass>>2, true
				}
			}
		}
	}
	in, outLen, err := prmModifyQP(p)
	if err != nil {
		return wrapErr(op, ErrInvalidValue, err, "build %v -> %v", cur, next)
	}
	if err := q.obj.Modify(in, make([]byte, outLen)); err != nil {
		return driverErr(op, err, "%v -> %v on QP 0x%x", cur, next, q.qpn)
	}
	q.afterModify(cur, next, &attr)
	return nil
}

// afterModify records a successful transition; q.mu is held.
func (q *QP) afterModify(cur, next QPState, attr *QPAttr) {
	q.state = next
	switch {
	case cur == QPStateRST && next == QPStateINIT:
		q.portNum = attr.PortNum
	case next == QPStateRTR:
		q.addrType = attr.AH.AddrType
		q.path = *attr.AH
	case next == QPStateRST && q.sdk == nil:
		q.post.reset()
	}
}

// logRD is the PRM log of an outstanding READ/atomic count: 0 (unset, as
// DOCA 3.0 allows) programs 0, like 1.
func logRD(v uint8) uint32 {
	if v == 0 {
		return 0
	}
	return log2(uint64(v))
}

// maxRD is the outstanding READ/atomic limit: the ibv value, bounded by the
// PRM log cap when that is smaller.
func maxRD(ibv uint8, logCap uint8) uint8 {
	m := ibv
	if logCap < 8 && (m == 0 || 1<<logCap < int(m)) {
		m = uint8(1 << logCap)
	}
	return m
}

// resolveMAC finds the next-hop MAC of a RoCE peer. Real devices resolve it
// through a temporary address handle (the kernel's neighbour lookup); the
// emulated device needs no MAC and the driver returns a derived one.
func (q *QP) resolveMAC(ah *AHAttr) ([6]byte, error) {
	if r, ok := q.ctx.dev.(macResolver); ok {
		port := q.portNum
		if port == 0 {
			port = 1
		}
		mac, err := r.ResolveMAC(q.cfg.PD.pd, uint8(port), ah.SGIDIndex, [16]byte(ah.GID), ah.HopLimit)
		if err != nil {
			return mac, driverErr("doca_verbs_qp_modify", err, "resolve the MAC of %v", ah.GID)
		}
		return mac, nil
	}
	// Without a resolver: the MAC embedded in a link-local GID, else zero.
	var mac [6]byte
	g := ah.GID
	if g[0] == 0xfe && g[1] == 0x80 && g[11] == 0xff && g[12] == 0xfe {
		mac = [6]byte{g[8] ^ 2, g[9], g[10], g[13], g[14], g[15]}
	}
	return mac, nil
}

// Query reads the QP's attributes from the device (doca_verbs_qp_query) and
// returns them with the creation configuration (as Config reports it). In
// SDK mode the SDK reports the state only (DOCA 3.0 keeps no other QP
// attribute getter): CurrentState and NextState are filled, the other
// fields are zero.
func (q *QP) Query() (QPAttr, QPConfig, error) {
	const op = "doca_verbs_qp_query"
	if err := q.enterQP(op); err != nil {
		return QPAttr{}, QPConfig{}, err
	}
	defer q.leave()
	if q.sdk != nil {
		st, err := q.sdk.state(op)
		if err != nil {
			return QPAttr{}, QPConfig{}, err
		}
		if st == QPStateERR {
			q.sawError()
		}
		return QPAttr{CurrentState: st, NextState: st}, q.Config(), nil
	}
	r, err := q.queryQP(op)
	if err != nil {
		return QPAttr{}, QPConfig{}, err
	}
	a := QPAttr{
		RQPSN: r.rqPSN, SQPSN: r.sqPSN, DestQPNum: r.destQPN, PKeyIndex: r.pkeyIndex,
		PortNum: uint16(r.port), AckTimeout: r.ackTimeout, RetryCnt: r.retry, RNRRetry: r.rnrRetry,
		MinRNRTimer: r.minRNR, AllowRemoteWrite: r.rwe, AllowRemoteRead: r.rre,
		MaxRDAtomic: uint8(1 << r.logSRA), MaxDestRDAtomic: uint8(1 << r.logRRA),
	}
	st, err := qpStateFromPRM(op, r.state)
	if err != nil {
		return QPAttr{}, QPConfig{}, err
	}
	if st == QPStateERR {
		q.sawError()
	}
	a.CurrentState, a.NextState = st, st
	switch {
	case r.mtu == 0: // never programmed: leave the zero value (256) rather than fail
	case r.mtu >= 1 && r.mtu <= 5:
		a.PathMTU = MTU(r.mtu - 1)
	case r.mtu == 7:
		a.PathMTU = MTURawEthernet
	default:
		return QPAttr{}, QPConfig{}, newErr(op, ErrUnexpected, "device reports path MTU code %d", r.mtu)
	}
	q.mu.Lock()
	at := q.addrType
	q.mu.Unlock()
	a.AH = &AHAttr{GID: r.rgid, AddrType: at, DLID: uint32(r.rlid), SL: r.sl, SGIDIndex: r.sgidIndex,
		StaticRate: r.staticRate, HopLimit: r.hopLimit, TrafficClass: r.tclass}
	cfg := q.Config()
	cfg.UserIndex = r.userIndex
	return a, cfg, nil
}

// queryQP runs QUERY_QP; q is entered.
func (q *QP) queryQP(op string) (queryQPResult, error) {
	in, outLen, err := prmQueryQP(q.qpn)
	if err != nil {
		return queryQPResult{}, wrapErr(op, ErrUnexpected, err, "build QUERY_QP")
	}
	out := make([]byte, outLen)
	if err := q.obj.Query(in, out); err != nil {
		return queryQPResult{}, driverErr(op, err, "QUERY_QP 0x%x", q.qpn)
	}
	r, err := prmParseQueryQP(out)
	if err != nil {
		return queryQPResult{}, wrapErr(op, ErrUnexpected, err, "QUERY_QP output")
	}
	return r, nil
}

// qpStateFromPRM maps qpc.state to a QPState.
func qpStateFromPRM(op string, s uint8) (QPState, error) {
	switch s {
	case 0, 1, 2, 3:
		return QPState(s), nil
	case 6:
		return QPStateERR, nil
	}
	return 0, newErr(op, ErrUnexpected, "device reports QP state %d", s)
}

// queryState reads the QP state from the device; q is entered.
func (q *QP) queryState() (QPState, error) {
	const op = "QP.State"
	r, err := q.queryQP(op)
	if err != nil {
		return 0, err
	}
	return qpStateFromPRM(op, r.state)
}

// pathChange names the first field of ah, other than the source GID index
// and the traffic class, that differs from the programmed path, or "".
func pathChange(path, ah *AHAttr) string {
	switch {
	case ah.GID != path.GID:
		return "remote GID"
	case ah.AddrType != path.AddrType:
		return "address type"
	case ah.DLID != path.DLID:
		return "destination LID"
	case ah.SL != path.SL:
		return "service level"
	case ah.StaticRate != path.StaticRate:
		return "static rate"
	case ah.HopLimit != path.HopLimit:
		return "hop limit"
	}
	return ""
}
