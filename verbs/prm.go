package verbs

// Package verbs builds every PRM command with the typed builders of
// internal/mlx5, straight from its configuration (createQPIn, createCQIn,
// createRMPIn, QP.modifyQPIn), so that hardware and emulator receive the
// very same bytes. prm.go holds the capability and RoCE address queries.

import (
	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Output length of every create command (status, syndrome, object id).
const prmCreateOutLen = 16

// macResolver is implemented by drivers that resolve a RoCE peer's MAC
// address (through a temporary ibv_ah on real hardware).
type macResolver interface {
	ResolveMAC(pd mlx5.PD, port uint8, sgidIndex uint8, dgid [16]byte, hopLimit uint8) ([6]byte, error)
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
	a.FreeRunningClockKHz = g.DeviceFrequencyKHz
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
