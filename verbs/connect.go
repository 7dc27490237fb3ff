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
	// default 1.
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
}

// Ptr returns a pointer to v, for the optional fields of ConnectOptions.
func Ptr[T any](v T) *T { return &v }

// The defaults of ConnectRC, those of the DOCA examples.
const (
	DefaultAckTimeout  = 14
	DefaultRetryCnt    = 7
	DefaultRNRRetry    = 1
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
	mtu, err := MTUFromBytes(min(local.effectiveMTU(), remote.effectiveMTU()))
	if err != nil {
		return nil, wrapErr(op, ErrInvalidValue, err, "path MTU")
	}
	if opts.PathMTU != nil {
		mtu = *opts.PathMTU
		if mtu > MTU4096 {
			return nil, newErr(op, ErrInvalidValue, "path MTU %v: want 256..4096", mtu)
		}
	}
	u8 := func(p *uint8, def uint8, max uint8, name string) (uint8, error) {
		v := def
		if p != nil {
			v = *p
		}
		if v > max {
			return 0, newErr(op, ErrInvalidValue, "%s %d exceeds %d", name, v, max)
		}
		return v, nil
	}
	flag := func(p *bool) bool { return p == nil || *p }
	ackTimeout, err := u8(opts.AckTimeout, DefaultAckTimeout, 31, "ack timeout")
	if err != nil {
		return nil, err
	}
	retry, err := u8(opts.RetryCnt, DefaultRetryCnt, 7, "retry count")
	if err != nil {
		return nil, err
	}
	rnrRetry, err := u8(opts.RNRRetry, DefaultRNRRetry, 7, "RNR retry")
	if err != nil {
		return nil, err
	}
	minRNR, err := u8(opts.MinRNRTimer, DefaultMinRNRTimer, 31, "min RNR timer")
	if err != nil {
		return nil, err
	}
	hopLimit, _ := u8(opts.HopLimit, DefaultHopLimit, 255, "hop limit")
	atomic := AtomicIBSpec
	if opts.RemoteAtomic != nil {
		atomic = *opts.RemoteAtomic
	}
	if !atomic.valid() {
		return nil, newErr(op, ErrInvalidValue, "remote atomic mode %v", atomic)
	}
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
	sqPSN, rqPSN := local.PSN, remote.PSN
	if opts.SQPSN != nil {
		sqPSN = *opts.SQPSN
	}
	if opts.RQPSN != nil {
		rqPSN = *opts.RQPSN
	}
	if sqPSN > psnMask || rqPSN > psnMask {
		return nil, newErr(op, ErrInvalidValue, "PSNs 0x%x (send) and 0x%x (receive) must fit 24 bits", sqPSN, rqPSN)
	}
	port := local.Port
	if port == 0 {
		port = 1
	}
	ah := &AHAttr{GID: remote.GID, AddrType: addrType, SGIDIndex: local.GIDIndex, HopLimit: hopLimit,
		SL: opts.SL, TrafficClass: opts.TrafficClass, StaticRate: opts.StaticRate}
	if addrType == AddrTypeIBGRH || addrType == AddrTypeIBNoGRH {
		ah.DLID = remote.LID
	}
	base := QPAttr{
		PathMTU: mtu, RQPSN: rqPSN, SQPSN: sqPSN, DestQPNum: remote.QPN,
		AllowRemoteWrite: flag(opts.AllowRemoteWrite), AllowRemoteRead: flag(opts.AllowRemoteRead),
		RemoteAtomic: atomic, AH: ah, PKeyIndex: opts.PKeyIndex, PortNum: uint16(port),
		AckTimeout: ackTimeout, RetryCnt: retry, RNRRetry: rnrRetry, MinRNRTimer: minRNR,
		MaxRDAtomic: opts.MaxRDAtomic, MaxDestRDAtomic: opts.MaxDestRDAtomic,
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
//	RNR retry      1        min RNR timer 1
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
	}
	return nil
}

// codeOf is the DOCA code of err (ErrDriver for an error without one).
func codeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ErrDriver
}
