package verbs

import (
	"errors"
	"fmt"
)

// LocalEndpoint is this side of an RC connection: the Endpoint to send to
// the peer, plus what ConnectRC needs that no wire format carries.
type LocalEndpoint struct {
	Endpoint
	// Port is the physical port the QP uses (1-based; 0 reads as 1).
	Port uint8
	// GIDIndex is the local GID table index, the AH's source GID.
	GIDIndex uint8
	// LinkLayer selects the address type ConnectRC uses by default:
	// InfiniBand routes by LID without a GRH; anything else is RoCE, with a
	// GRH carrying the remote GID.
	LinkLayer LinkLayer
}

// LocalEndpoint describes this QP for its peer: the GID at gidIndex of port
// (ibv_query_gid), the port's LID, active MTU and link layer
// (ibv_query_port), the QPN, and PSN 0 as in the DOCA examples. Add the
// Regions the peer may access (MR.Region) and set PSN before sending it.
//
// MTU is the port's active MTU. A DOCA peer assumes 4096: on a port whose
// active MTU is smaller, MarshalDOCA refuses the endpoint until MTU is set to
// 4096 (or 0) explicitly, which is what DOCA would program.
func (q *QP) LocalEndpoint(port uint8, gidIndex uint32) (LocalEndpoint, error) {
	const op = "QP.LocalEndpoint"
	if err := q.check(op); err != nil {
		return LocalEndpoint{}, err
	}
	if port == 0 {
		return LocalEndpoint{}, newErr(op, ErrInvalidValue, "port numbers start at 1")
	}
	if gidIndex > 0xff {
		return LocalEndpoint{}, newErr(op, ErrInvalidValue, "GID index %d: an AH takes 0..255", gidIndex)
	}
	g, err := q.ctx.QueryGID(port, gidIndex)
	if err != nil {
		return LocalEndpoint{}, wrapErr(op, codeOf(err), err, "GID %d of %s port %d", gidIndex, q.ctx.name, port)
	}
	p, err := q.ctx.QueryPort(port)
	if err != nil {
		return LocalEndpoint{}, wrapErr(op, codeOf(err), err, "%s port %d", q.ctx.name, port)
	}
	return LocalEndpoint{
		Endpoint: Endpoint{GID: g.GID, LID: uint32(p.LID), QPN: q.qpn, MTU: p.ActiveMTU.Bytes()},
		Port:     port, GIDIndex: uint8(gidIndex), LinkLayer: p.LinkLayer,
	}, nil
}

// ConnectOptions overrides ConnectRC's defaults, the values of the DOCA
// examples. A nil pointer (or nil *ConnectOptions) keeps the default; Ptr
// makes a pointer to a value, e.g. &ConnectOptions{AckTimeout: Ptr[uint8](18)}.
type ConnectOptions struct {
	// PathMTU; default the smaller MTU of the two endpoints (0 reads as 4096).
	PathMTU *MTU
	// SQPSN is the first PSN this side sends; default local.PSN.
	SQPSN *uint32
	// RQPSN is the first PSN this side expects; default remote.PSN.
	RQPSN *uint32
	// AckTimeout is 4.096 us * 2^n, 0 = wait forever; default 14 (67 ms).
	AckTimeout *uint8
	// RetryCnt is the transport retry count 0..7; default 7.
	RetryCnt *uint8
	// RNRRetry is the receiver-not-ready retry count 0..7 (7 = forever);
	// default 7. A SEND that reaches the peer before the peer posted its
	// receive draws an RNR NAK and is retried after the peer's min RNR
	// timer; with a count below 7 the sender gives up after that many
	// retries with WCRNRRetryExcErr, which a peer that posts its receives
	// a few milliseconds late (or after its own ConnectRC returns) causes
	// at once. 7 retries forever, as perftest does; set a smaller count
	// only where a peer that never posts must be detected.
	RNRRetry *uint8
	// MinRNRTimer is the IB-encoded RNR NAK timer 0..31; default 1.
	MinRNRTimer *uint8
	// AllowRemoteWrite and AllowRemoteRead let the peer RDMA WRITE and READ
	// this QP's memory regions; default true.
	AllowRemoteWrite *bool
	AllowRemoteRead  *bool
	// RemoteAtomic is what atomics the peer may execute here; default
	// AtomicIBSpec. ConnectRC always applies it (QPAttrAtomicMode in the
	// RST -> INIT mask, as DOCA GPUNetIO 3.0's examples do), so AtomicNone
	// refuses remote atomics.
	RemoteAtomic *AtomicMode
	// AddrType of the AH; default AddrTypeIBNoGRH when the local link layer
	// is InfiniBand, else AddrTypeIPv4 (DOCA's choice for every RoCE GID;
	// the device treats IPv4 and IPv6 alike).
	AddrType *AddrType
	// HopLimit of the GRH; default 255.
	HopLimit *uint8
	// PKeyIndex, SL (InfiniBand service level), TrafficClass and StaticRate
	// default to 0.
	PKeyIndex    uint16
	SL           uint8
	TrafficClass uint8
	StaticRate   uint8
	// MaxRDAtomic and MaxDestRDAtomic are the outstanding RDMA READ and
	// atomic requests as requester and responder (powers of two within the
	// device limits). They are always programmed (MAX_QP_RD_ATOMIC in
	// RTR -> RTS, MAX_DEST_RD_ATOMIC in INIT -> RTR, as DOCA GPUNetIO 3.0's
	// examples do); 0, the default, programs one outstanding request each,
	// as those examples, which leave the values unset, do.
	MaxRDAtomic     uint8
	MaxDestRDAtomic uint8
	// RecvWRs are posted to the QP's receive queue (QP.PostRecv) right
	// after RST -> INIT, before INIT -> RTR: from RTR on the peer may send,
	// and a SEND that finds no receive posted draws an RNR NAK (or, with
	// RNRRetry 0, fails). A QP whose receives come from an SRQ posts to
	// the SRQ before ConnectRC instead; RecvWRs on it are refused.
	RecvWRs []RecvWR
	// AfterInit, when not nil, is called with the QP right after RST ->
	// INIT (after RecvWRs are posted), before INIT -> RTR, the last moment
	// before the peer may send: post receives, to the QP or its SRQ, there.
	// An error it returns stops ConnectRC, which moves the QP back to RST
	// and returns that error wrapped.
	AfterInit func(*QP) error
}

// Ptr returns a pointer to v, for the optional fields of ConnectOptions.
func Ptr[T any](v T) *T { return &v }

// The defaults of ConnectRC, those of the DOCA examples.
const (
	DefaultAckTimeout  = 14
	DefaultRetryCnt    = 7
	DefaultRNRRetry    = 7 // forever, as perftest (DOCA's examples use 1)
	DefaultMinRNRTimer = 1
	DefaultHopLimit    = 255
)

// RCStep is one QP transition of an RC connection: Modify(&Attr, Mask).
type RCStep struct {
	Attr QPAttr
	Mask QPAttrMask
}

// RCTransitions returns the RST -> INIT, INIT -> RTR and RTR -> RTS steps
// ConnectRC applies, after checking the endpoints and options. The steps
// share one AHAttr. The masks are those of DOCA GPUNetIO 3.0's examples:
//
//	RST -> INIT   NEXT_STATE | ALLOW_REMOTE_WRITE | ALLOW_REMOTE_READ | PKEY_INDEX | PORT_NUM | ATOMIC_MODE
//	INIT -> RTR   NEXT_STATE | RQ_PSN | DEST_QP_NUM | PATH_MTU | AH_ATTR | MIN_RNR_TIMER | MAX_DEST_RD_ATOMIC
//	RTR -> RTS    NEXT_STATE | SQ_PSN | ACK_TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC
func RCTransitions(local LocalEndpoint, remote Endpoint, opts *ConnectOptions) ([]RCStep, error) {
	return rcTransitions("RCTransitions", local, remote, opts)
}

func rcTransitions(op string, local LocalEndpoint, remote Endpoint, opts *ConnectOptions) ([]RCStep, error) {
	if opts == nil {
		opts = &ConnectOptions{}
	}
	if err := remote.check(op, "remote endpoint: "); err != nil {
		return nil, err
	}
	if err := local.check(op, "local endpoint: "); err != nil {
		return nil, err
	}
	base, err := connectAttr(op, local, remote, opts)
	if err != nil {
		return nil, err
	}
	steps := []RCStep{
		{base, QPAttrNextState | QPAttrAllowRemoteWrite | QPAttrAllowRemoteRead | QPAttrPKeyIndex | QPAttrPortNum | QPAttrAtomicMode},
		{base, QPAttrNextState | QPAttrRQPSN | QPAttrDestQPNum | QPAttrPathMTU | QPAttrAHAttr | QPAttrMinRNRTimer | QPAttrMaxDestRDAtomic},
		{base, QPAttrNextState | QPAttrSQPSN | QPAttrAckTimeout | QPAttrRetryCnt | QPAttrRNRRetry | QPAttrMaxQPRDAtomic},
	}
	steps[0].Attr.NextState = QPStateINIT
	steps[1].Attr.NextState = QPStateRTR
	steps[2].Attr.NextState = QPStateRTS
	// The atomic mode is applied at RST -> INIT; the later steps leave it
	// as it is (and INIT -> RTR would warn about a mode without its bit).
	steps[1].Attr.RemoteAtomic = AtomicNone
	steps[2].Attr.RemoteAtomic = AtomicNone
	return steps, nil
}

// connectAttr is the QPAttr of every ConnectRC step: the options over the
// defaults, checked, with the endpoints' MTU, PSNs, QPN and addresses.
func connectAttr(op string, local LocalEndpoint, remote Endpoint, opts *ConnectOptions) (QPAttr, error) {
	mtu, err := MTUFromBytes(min(local.effectiveMTU(), remote.effectiveMTU()))
	if err != nil {
		return QPAttr{}, wrapErr(op, ErrInvalidValue, err, "path MTU")
	}
	if opts.PathMTU != nil {
		mtu = *opts.PathMTU
		if mtu > MTU4096 {
			return QPAttr{}, newErr(op, ErrInvalidValue, "path MTU %v: want 256..4096", mtu)
		}
	}
	flag := func(p *bool) bool { return p == nil || *p }
	a := QPAttr{PathMTU: mtu, DestQPNum: remote.QPN, PKeyIndex: opts.PKeyIndex,
		AllowRemoteWrite: flag(opts.AllowRemoteWrite), AllowRemoteRead: flag(opts.AllowRemoteRead),
		RemoteAtomic: AtomicIBSpec, MaxRDAtomic: opts.MaxRDAtomic, MaxDestRDAtomic: opts.MaxDestRDAtomic}
	if err := connectTimers(op, opts, &a); err != nil {
		return QPAttr{}, err
	}
	if opts.RemoteAtomic != nil {
		a.RemoteAtomic = *opts.RemoteAtomic
	}
	if !a.RemoteAtomic.valid() {
		return QPAttr{}, newErr(op, ErrInvalidValue, "remote atomic mode %v", a.RemoteAtomic)
	}
	if a.AH, err = connectAH(op, local, remote, opts); err != nil {
		return QPAttr{}, err
	}
	a.SQPSN, a.RQPSN = local.PSN, remote.PSN
	if opts.SQPSN != nil {
		a.SQPSN = *opts.SQPSN
	}
	if opts.RQPSN != nil {
		a.RQPSN = *opts.RQPSN
	}
	if a.SQPSN > psnMask || a.RQPSN > psnMask {
		return QPAttr{}, newErr(op, ErrInvalidValue, "PSNs 0x%x (send) and 0x%x (receive) must fit 24 bits", a.SQPSN, a.RQPSN)
	}
	a.PortNum = uint16(local.Port)
	if a.PortNum == 0 {
		a.PortNum = 1
	}
	return a, nil
}

// connectTimers sets the timers and retry counts of a from opts or the
// defaults, checking their ranges.
func connectTimers(op string, opts *ConnectOptions, a *QPAttr) error {
	for _, x := range []struct {
		p        *uint8
		def, max uint8
		name     string
		dst      *uint8
	}{
		{opts.AckTimeout, DefaultAckTimeout, 31, "ack timeout", &a.AckTimeout},
		{opts.RetryCnt, DefaultRetryCnt, 7, "retry count", &a.RetryCnt},
		{opts.RNRRetry, DefaultRNRRetry, 7, "RNR retry", &a.RNRRetry},
		{opts.MinRNRTimer, DefaultMinRNRTimer, 31, "min RNR timer", &a.MinRNRTimer},
	} {
		v := x.def
		if x.p != nil {
			v = *x.p
		}
		if v > x.max {
			return newErr(op, ErrInvalidValue, "%s %d exceeds %d", x.name, v, x.max)
		}
		*x.dst = v
	}
	return nil
}

// connectAH is the address handle towards remote: a GRH to its GID on
// RoCE, its LID on InfiniBand, unless opts says otherwise.
func connectAH(op string, local LocalEndpoint, remote Endpoint, opts *ConnectOptions) (*AHAttr, error) {
	addrType := AddrTypeIPv4
	if local.LinkLayer == LinkLayerInfiniBand {
		addrType = AddrTypeIBNoGRH
	}
	if opts.AddrType != nil {
		addrType = *opts.AddrType
		if addrType > AddrTypeIBNoGRH {
			return nil, newErr(op, ErrInvalidValue, "address type %v", addrType)
		}
	}
	hopLimit := uint8(DefaultHopLimit)
	if opts.HopLimit != nil {
		hopLimit = *opts.HopLimit
	}
	ah := &AHAttr{GID: remote.GID, AddrType: addrType, SGIDIndex: local.GIDIndex, HopLimit: hopLimit,
		SL: opts.SL, TrafficClass: opts.TrafficClass, StaticRate: opts.StaticRate}
	if addrType == AddrTypeIBGRH || addrType == AddrTypeIBNoGRH {
		ah.DLID = remote.LID
	}
	return ah, nil
}

// ConnectRC moves the QP from RST to RTS towards remote in one call: RST ->
// INIT (port, P_Key index, remote access rights), INIT -> RTR (remote QPN,
// receive PSN, path MTU, AH, min RNR timer), RTR -> RTS (send PSN, ack
// timeout, retry counts), with the defaults of the DOCA examples and every
// value overridable through opts (nil for the defaults):
//
//	path MTU       min(local.MTU, remote.MTU), 0 reading as 4096
//	PSNs           send local.PSN, expect remote.PSN (DOCA: 0 both)
//	port           local.Port (1)
//	ack timeout    14       retry count  7
//	RNR retry      7 (forever; DOCA's examples use 1, see ConnectOptions.RNRRetry)
//	min RNR timer  1
//	remote access  write and read allowed, IB-spec atomics
//	P_Key index    0
//	AH             RoCE: GRH to remote.GID from local.GIDIndex, hop limit 255;
//	               InfiniBand link layer: no GRH, DLID remote.LID
//
// local must describe this QP (QP.LocalEndpoint builds it). The endpoints
// and options are checked first: a bad remote QPN, LID, PSN or MTU, an
// out-of-range option or a QP that is not in RST fails (ErrInvalidValue,
// ErrBadState) without touching the QP. When a transition fails, the QP is
// moved back to RST, so it can be connected again, and the error names the
// transition and wraps the cause (a *FirmwareError when the device refused
// the command). ConnectRC must not run concurrently with other Modify calls
// on the QP.
//
// The peer may send as soon as this QP is in RTR, which may be before
// ConnectRC returns: receives for the peer's first SENDs are posted in INIT,
// through opts.RecvWRs or opts.AfterInit, or tolerated late with the
// default RNR retry count of 7.
func (q *QP) ConnectRC(local LocalEndpoint, remote Endpoint, opts *ConnectOptions) error {
	const op = "QP.ConnectRC"
	if err := q.check(op); err != nil {
		return err
	}
	if local.QPN != q.qpn {
		return newErr(op, ErrInvalidValue, "local endpoint describes QP 0x%x, not this QP 0x%x", local.QPN, q.qpn)
	}
	steps, err := rcTransitions(op, local, remote, opts)
	if err != nil {
		return err
	}
	if opts != nil && len(opts.RecvWRs) > 0 && q.cfg.SRQ != nil {
		return newErr(op, ErrInvalidValue, "QP 0x%x receives through SRQ 0x%x: post ConnectOptions.RecvWRs to the SRQ instead", q.qpn, q.cfg.SRQ.srqn)
	}
	if st := q.State(); st != QPStateRST {
		return newErr(op, ErrBadState, "QP 0x%x is in %v: ConnectRC starts from RST (move it to RST first to reconnect)", q.qpn, st)
	}
	from := QPStateRST
	for i := range steps {
		s := &steps[i]
		if err := q.Modify(&s.Attr, s.Mask); err != nil {
			msg := fmt.Sprintf("QP 0x%x to remote QP 0x%x: %v -> %v failed", q.qpn, remote.QPN, from, s.Attr.NextState)
			if from != QPStateRST {
				if rerr := q.Modify(&QPAttr{NextState: QPStateRST}, QPAttrNextState); rerr != nil {
					return &Error{Op: op, Code: codeOf(err), Msg: msg + "; moving it back to RST failed too",
						Err: errors.Join(err, rerr)}
				}
				msg += " (QP moved back to RST)"
			}
			return &Error{Op: op, Code: codeOf(err), Msg: msg, Err: err}
		}
		from = s.Attr.NextState
		if from == QPStateINIT && opts != nil {
			if err := q.afterInit(op, remote.QPN, opts); err != nil {
				return err
			}
		}
	}
	return nil
}

// afterInit posts opts.RecvWRs and calls opts.AfterInit on a QP that
// ConnectRC just moved to INIT; on failure it moves the QP back to RST.
func (q *QP) afterInit(op string, remoteQPN uint32, opts *ConnectOptions) error {
	var err error
	what := ""
	if len(opts.RecvWRs) > 0 {
		what = fmt.Sprintf("posting %d receives in INIT", len(opts.RecvWRs))
		err = q.PostRecv(opts.RecvWRs...)
	}
	if err == nil && opts.AfterInit != nil {
		what = "ConnectOptions.AfterInit"
		err = opts.AfterInit(q)
	}
	if err == nil {
		return nil
	}
	msg := fmt.Sprintf("QP 0x%x to remote QP 0x%x: %s failed", q.qpn, remoteQPN, what)
	if rerr := q.Modify(&QPAttr{NextState: QPStateRST}, QPAttrNextState); rerr != nil {
		return &Error{Op: op, Code: codeOf(err), Msg: msg + "; moving it back to RST failed too", Err: errors.Join(err, rerr)}
	}
	return &Error{Op: op, Code: codeOf(err), Msg: msg + " (QP moved back to RST)", Err: err}
}

// codeOf is the DOCA code of err (ErrDriver for an error without one).
func codeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ErrDriver
}
