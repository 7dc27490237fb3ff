package verbs

// prm.go is the only place where package verbs builds and parses PRM
// command mailboxes; it translates the verbs-level parameters below into the
// typed builders of internal/mlx5, so that hardware and emulator receive the
// very same bytes.

import (
	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Output length of every create command (status, syndrome, object id).
const prmCreateOutLen = 16

// qpc.rq_type values.
const (
	rqTypeRegular = 0
	rqTypeSRQ     = 1
	rqTypeZero    = 3
)

type cqParams struct {
	logSize   uint32
	uarPage   uint32
	eqn       uint32
	umemID    uint32
	dbrUMemID uint32
	dbrOffset uint64
	overrun   bool
	collapsed bool
}

type qpParams struct {
	st          QPType
	pdn         uint32
	uarPage     uint32
	userIndex   uint32
	cqnSnd      uint32
	cqnRcv      uint32
	logSQ       uint32
	noSQ        bool
	rqType      uint32
	logRQ       uint32
	logRQStride uint32
	srqn        uint32
	sendDBRMode SendDBRMode
	dbrUMemID   uint32
	dbrOffset   uint64
	cdMaster    bool
	wqUMemID    uint32
	tsFormat    uint8
}

type rmpParams struct {
	linkedList bool
	pdn        uint32
	logSize    uint32
	logStride  uint32
	umemID     uint32
	umemOffset uint64
	dbrOffset  uint64
}

// modifyParams is one QP transition: the fields DOCA writes for it, each
// with a flag saying whether it is written.
type modifyParams struct {
	qpn      uint32
	from, to QPState
	optMask  uint32

	port             uint8
	setPort          bool
	pkeyIndex        uint16
	setPKey          bool
	pmState          bool
	rwe, rre         bool
	atomic           AtomicMode
	setAtomic        bool // DOCA 3.0: rae and atomic_mode only with the ATOMIC_MODE mask bit
	setAccess        bool
	rtr              bool
	rqPSN, destQPN   uint32
	mtu              MTU
	minRNR           uint8
	setMinRNR        bool
	logRRA           uint32
	setRRA           bool
	staticRate       uint8
	tclass, sl       uint8
	rlid             uint16
	rgid             GID
	hopLimit         uint8
	sgidIndex        uint8
	setGRH           bool
	grh              bool
	rmac             [6]byte
	udpSport         uint16
	dscp             uint8
	rts              bool
	sqPSN            uint32
	ackTimeout       uint8
	setAck           bool
	retry            uint8
	setRetry         bool
	rnrRetry         uint8
	setRNRRetry      bool
	logSRA           uint32
	setSRA           bool
	setSGID, setDSCP bool
}

// queryQPResult is what Query needs from QUERY_QP.
type queryQPResult struct {
	state, mtu                  uint8
	rqPSN, sqPSN, destQPN       uint32
	pkeyIndex                   uint16
	port                        uint8
	ackTimeout, retry, rnrRetry uint8
	minRNR                      uint8
	rwe, rre                    bool
	logSRA, logRRA              uint8
	rgid                        GID
	rlid                        uint16
	sl, sgidIndex, staticRate   uint8
	hopLimit, tclass            uint8
	userIndex                   uint32
}

// macResolver is implemented by drivers that resolve a RoCE peer's MAC
// address (through a temporary ibv_ah on real hardware).
type macResolver interface {
	ResolveMAC(pd mlx5.PD, port uint8, sgidIndex uint8, dgid [16]byte, hopLimit uint8) ([6]byte, error)
}

func prmCreateCQ(p cqParams) ([]byte, error) {
	in := mlx5.CreateCQIn{
		CmdHeader: mlx5.CmdHeader{Opcode: mlx5.OpCreateCQ},
		CQC: mlx5.CQContext{
			DBRUMEMValid: true, CQESz: 0, CC: p.collapsed, OI: p.overrun,
			LogCQSize: uint8(p.logSize), UARPage: p.uarPage, CEQN: uint8(p.eqn),
			DBRUMEMID: p.dbrUMemID, DBRAddr: p.dbrOffset,
		},
		CQUMEMID: p.umemID, CQUMEMValid: true,
	}
	return in.Marshal()
}

func prmCreateQP(p qpParams) ([]byte, error) {
	st := mlx5.ServiceType(0) // RC
	if p.st == QPTypeUC {
		st = 1
	}
	in := mlx5.CreateQPIn{
		CmdHeader: mlx5.CmdHeader{Opcode: mlx5.OpCreateQP},
		QPC: mlx5.QPContext{
			ST: st, PD: p.pdn, UARPage: p.uarPage, UserIndex: p.userIndex,
			CQNSnd: p.cqnSnd, CQNRcv: p.cqnRcv, LogSQSize: uint8(p.logSQ), NoSQ: p.noSQ,
			RQType: mlx5.RQType(p.rqType), LogRQSize: uint8(p.logRQ), LogRQStride: uint8(p.logRQStride),
			SRQNRMPNXRQN: p.srqn, SendDBRMode: mlx5.SendDBRMode(p.sendDBRMode),
			DBRUMEMValid: true, DBRUMEMID: p.dbrUMemID, DBRAddr: p.dbrOffset,
			CDMaster: p.cdMaster, TSFormat: mlx5.TSFormat(p.tsFormat),
		},
		WQUMEMID: p.wqUMemID, WQUMEMValid: true,
	}
	return in.Marshal()
}

func prmCreateRMP(p rmpParams) ([]byte, error) {
	wqType, cyclic := mlx5.WQType(1), true
	if p.linkedList {
		wqType, cyclic = 0, false
	}
	in := mlx5.CreateRMPIn{
		CmdHeader: mlx5.CmdHeader{Opcode: mlx5.OpCreateRMP},
		RMPC: mlx5.RMPContext{
			State: 1, BasicCyclicRcvWQE: cyclic,
			WQ: mlx5.WQContext{
				WQType: wqType, EndPaddingMode: 1, PD: p.pdn, DBRAddr: p.dbrOffset,
				LogWQStride: uint8(p.logStride), LogWQSz: uint8(p.logSize),
				DBRUMEMValid: true, WQUMEMValid: true, DBRUMEMID: p.umemID, WQUMEMID: p.umemID,
				WQUMEMOffset: p.umemOffset,
			},
		},
	}
	return in.Marshal()
}

var transitionOpcode = map[[2]QPState]mlx5.Opcode{
	{QPStateRST, QPStateINIT}:  mlx5.OpRST2INIT,
	{QPStateINIT, QPStateINIT}: mlx5.OpINIT2INIT,
	{QPStateINIT, QPStateRTR}:  mlx5.OpINIT2RTR,
	{QPStateRTR, QPStateRTS}:   mlx5.OpRTR2RTS,
	{QPStateRTS, QPStateRTS}:   mlx5.OpRTS2RTS,
}

// prmModifyQP builds the transition command for p and returns it with the
// output length.
func prmModifyQP(p modifyParams) ([]byte, int, error) {
	var op mlx5.Opcode
	switch p.to {
	case QPStateRST:
		op = mlx5.Op2RST
	case QPStateERR:
		op = mlx5.Op2ERR
	default:
		var ok bool
		if op, ok = transitionOpcode[[2]QPState{p.from, p.to}]; !ok {
			return nil, 0, newErr("doca_verbs_qp_modify", ErrInvalidValue, "no transition %v -> %v", p.from, p.to)
		}
	}
	in := mlx5.ModifyQPIn{CmdHeader: mlx5.CmdHeader{Opcode: op}, QPN: p.qpn}
	if op != mlx5.Op2RST && op != mlx5.Op2ERR {
		in.OptParamMask = mlx5.OptParam(p.optMask)
		c := &in.QPC
		ads := &c.PrimaryAddressPath
		if p.setPort {
			ads.VHCAPortNum = p.port
		}
		if p.setPKey {
			ads.PKeyIndex = p.pkeyIndex
		}
		if p.pmState {
			c.PMState = 3 // MIGRATED
		}
		if p.setAccess {
			c.RWE = p.rwe
			c.RRE = p.rre
		}
		if p.setAtomic && p.atomic != AtomicNone {
			c.RAE = true
			c.AtomicMode = mlx5.AtomicMode(p.atomic)
		}
		if p.setMinRNR {
			c.MinRNRNak = p.minRNR
		}
		if p.rtr {
			c.NextRcvPSN = p.rqPSN
			c.RemoteQPN = p.destQPN
			c.LogMsgMax = logMsgMax
			c.MTU = mlx5.MTU(p.mtu + 1)
			if p.setRRA {
				c.LogRRAMax = uint8(p.logRRA)
			}
			ads.StatRate = p.staticRate
			ads.TClass, ads.RLID, ads.SL = p.tclass, p.rlid, p.sl
			if p.setGRH {
				ads.RGID, ads.HopLimit, ads.SrcAddrIndex = p.rgid, p.hopLimit, p.sgidIndex
			}
			ads.GRH = p.grh
			ads.RMAC = p.rmac
			ads.UDPSport = p.udpSport
			ads.DSCP = p.dscp
			if p.port != 0 {
				ads.VHCAPortNum = p.port
			}
		}
		if p.rts {
			c.NextSendPSN = p.sqPSN
			if p.setAck {
				ads.AckTimeout = p.ackTimeout
			}
			if p.setRetry {
				c.RetryCount = p.retry
			}
			if p.setRNRRetry {
				c.RNRRetry = p.rnrRetry
			}
			if p.setSRA {
				c.LogSRAMax = uint8(p.logSRA)
			}
		}
		if p.setSGID {
			ads.SrcAddrIndex = p.sgidIndex
		}
		if p.setDSCP {
			ads.DSCP = p.dscp
		}
	}
	b, err := in.Marshal()
	return b, mlx5.CmdShortLen, err
}

func prmQueryQP(qpn uint32) ([]byte, int, error) {
	b, err := mlx5.QueryQPIn(qpn).Marshal()
	return b, 272, err
}

func prmParseQueryQP(out []byte) (queryQPResult, error) {
	o, err := mlx5.UnmarshalQueryQPOut(out)
	if err != nil {
		return queryQPResult{}, err
	}
	c := o.QPC
	a := c.PrimaryAddressPath
	return queryQPResult{
		state: uint8(c.State), mtu: uint8(c.MTU), rqPSN: c.NextRcvPSN, sqPSN: c.NextSendPSN,
		destQPN: c.RemoteQPN, pkeyIndex: a.PKeyIndex, port: a.VHCAPortNum, ackTimeout: a.AckTimeout,
		retry: c.RetryCount, rnrRetry: c.RNRRetry, minRNR: c.MinRNRNak, rwe: c.RWE, rre: c.RRE,
		logSRA: c.LogSRAMax, logRRA: c.LogRRAMax, rgid: GID(a.RGID), rlid: a.RLID, sl: a.SL,
		sgidIndex: a.SrcAddrIndex, staticRate: a.StatRate, hopLimit: a.HopLimit, tclass: a.TClass,
		userIndex: c.UserIndex,
	}, nil
}

// queryCap runs QUERY_HCA_CAP (current values) for one capability type.
func queryCap(dev mlx5.Device, t mlx5.CapType) (mlx5.QueryHCACapOut, error) {
	in, err := mlx5.NewQueryHCACapIn(t, true).Marshal()
	if err != nil {
		return mlx5.QueryHCACapOut{}, err
	}
	out := make([]byte, mlx5.QueryHCACapOutLen)
	if err := dev.GeneralCmd(in, out); err != nil {
		return mlx5.QueryHCACapOut{}, err
	}
	return mlx5.UnmarshalQueryHCACapOut(out)
}

// prmQueryCaps fills the DevX part of a DeviceAttr: general caps, RoCE caps
// and, when the device has them, general caps 2.
func prmQueryCaps(dev mlx5.Device, a *DeviceAttr) error {
	o, err := queryCap(dev, mlx5.CapGeneral)
	if err != nil {
		return err
	}
	g, err := o.General()
	if err != nil {
		return err
	}
	a.PortType = g.PortType
	a.RCSupported = g.RC
	a.RTS2RTSQPDSCP = g.RTS2RTSQPDSCP
	a.MaxSQDescSize = uint32(g.MaxWQESzSQ)
	a.MaxRQDescSize = uint32(g.MaxWQESzRQ)
	a.MaxSendWQEBB = 1 << g.LogMaxQPSz
	a.CoreDirect = g.CD
	a.CQOverrunIgnore = g.CQOI
	a.TSFormat = g.SQTSFormat
	a.LogMaxMsg = g.LogMaxMsg
	a.LogMaxRAReqQP, a.LogMaxRAResQP = g.LogMaxRAReqQP, g.LogMaxRAResQP
	if g.PortType == 0 {
		a.GIDTableSize = gidTableSizeIB(uint32(g.GIDTableSize))
	}
	o, err = queryCap(dev, mlx5.CapRoCE)
	if err != nil {
		return err
	}
	r, err := o.RoCE()
	if err != nil {
		return err
	}
	if g.PortType == 1 {
		a.GIDTableSize = uint32(r.RoCEAddressTableSize)
	}
	a.MinUDPSport, a.MaxUDPSport = r.RRoCEMinSrcUDPPort, r.RRoCEMaxSrcUDPPort
	if g.HCACap2 {
		o, err = queryCap(dev, mlx5.CapGeneral2)
		if err != nil {
			return err
		}
		g2, err := o.General2()
		if err != nil {
			return err
		}
		a.SendDBRModeNoDBRExt = g2.SendDBRModeNoDBRExt
	}
	return nil
}

// prmRoCEv2 reports whether GID index idx is a RoCE v2 entry (QUERY_ROCE_ADDRESS).
func prmRoCEv2(dev mlx5.Device, idx uint8) (bool, error) {
	in, err := mlx5.QueryRoCEAddressIn{CmdHeader: mlx5.CmdHeader{Opcode: mlx5.OpQueryRoCEAddress}, RoCEAddressIndex: uint16(idx)}.Marshal()
	if err != nil {
		return false, err
	}
	out := make([]byte, 48)
	if err := dev.GeneralCmd(in, out); err != nil {
		return false, err
	}
	o, err := mlx5.UnmarshalQueryRoCEAddressOut(out)
	if err != nil {
		return false, err
	}
	return o.Addr.RoCEVersion >= 2, nil
}
