package emu

import (
	"fmt"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Capability values the emulator reports (a ConnectX-7 class device; the
// cx8 model adds the DBR-less SQ mode in caps 2).
const (
	capLogMaxQPSz   = 15
	capLogMaxQP     = 18
	capLogMaxCQSz   = 22
	capLogMaxCQ     = 18
	capLogMaxSRQSz  = 15
	capLogMaxMkey   = 20
	capLogMaxPD     = 18
	capLogMaxMsg    = 30
	capLogMaxRA     = 4
	capMaxWQESzSQ   = 1024
	capMaxWQESzRQ   = 512
	capLogBFRegSize = 9
	capLogMaxNoDBR  = 15
	capSportMin     = 0xc000
	capSportMax     = 0xffff
)

// capSet is the device's capabilities, encoded once per NIC.
type capSet struct {
	model    Model
	general  mlx5.HCACaps
	atomic   mlx5.AtomicCaps
	roce     mlx5.RoCECaps
	general2 mlx5.HCACaps2
}

func newCaps(m Model) *capSet {
	k := &capSet{model: m}
	k.general = mlx5.HCACaps{
		HCACap2: true, QPDataInOrder: false,
		LogMaxSRQSz: capLogMaxSRQSz, LogMaxQPSz: capLogMaxQPSz, LogMaxQP: capLogMaxQP,
		LogMaxCQSz: capLogMaxCQSz, LogMaxCQ: capLogMaxCQ, LogMaxMKey: capLogMaxMkey, LogMaxEQ: 4,
		LogMaxRAReqQP: capLogMaxRA, LogMaxRAResQP: capLogMaxRA,
		GIDTableSize: 0, PKeyTableSize: 0, LocalCAAckDelay: 16,
		PortType: mlx5.PortTypeETH, NumPorts: 1, LogMaxMsg: capLogMaxMsg, CQEVersion: 1,
		RoCE: true, Atomic: true, CQOI: true, CQResize: false, CQModeration: true, CD: true,
		UC: true, RC: true, UAR4K: true, UARSz: 6, LogPgSz: 0,
		BF: true, LogBFRegSize: capLogBFRegSize, MaxWQESzSQ: capMaxWQESzSQ, MaxWQESzRQ: capMaxWQESzRQ,
		LogMaxPD: capLogMaxPD, SQTSFormat: 2, RQTSFormat: 2, LogMaxUCtx: 8, LogMaxUMEM: 20,
		MaxNumEQs: numCompVectors, LogUARPageSz: 0, DeviceFrequencyKHz: 1000000,
		NumOfUARsPerPage: 1, LogMaxAtomicSizeQP: 3,
		RTS2RTSQPUDPSport: true, RTS2RTSQPDSCP: true,
	}
	k.atomic = mlx5.AtomicCaps{
		AtomicReq8BEndiannessMode:           mlx5.AtomicEndiannessHostMode,
		SupportedAtomicReq8BEndiannessMode1: true,
		AtomicOperations:                    mlx5.AtomicOpCmpSwap | mlx5.AtomicOpFetchAdd | mlx5.AtomicOpMaskedCmpSwap | mlx5.AtomicOpMaskedFetchAdd,
		AtomicSizeQP:                        mlx5.AtomicSize4B | mlx5.AtomicSize8B,
		AtomicSizeDC:                        mlx5.AtomicSize4B | mlx5.AtomicSize8B,
	}
	k.roce = mlx5.RoCECaps{
		SWRRoCESrcUDPPort: true, QPTSFormat: 2, L3Type: 1<<1 | 1<<2, RoCEVersion: 1 << 2,
		RRoCEDestUDPPort: 4791, RRoCEMaxSrcUDPPort: capSportMax, RRoCEMinSrcUDPPort: capSportMin,
		RoCEAddressTableSize: gidTableSize,
	}
	k.general2 = mlx5.HCACaps2{
		SendDBRModeNoDBRExt:   m == ModelCX8,
		LogMaxSendDBRLessQPSQ: map[bool]uint8{true: capLogMaxNoDBR}[m == ModelCX8],
	}
	return k
}

func (k *capSet) noDBR() bool { return k.general2.SendDBRModeNoDBRExt }

func (k *capSet) fwVersion() string {
	if k.model == ModelCX8 {
		return "40.44.1036-emu"
	}
	return "28.42.1000-emu"
}

func (k *capSet) partID() uint32 {
	if k.model == ModelCX8 {
		return 4131 // ConnectX-8
	}
	return 4129 // ConnectX-7
}

// capability returns the structure of a capability type, or nil.
func (k *capSet) capability(t mlx5.CapType) mlx5.Capability {
	switch t {
	case mlx5.CapGeneral:
		return k.general
	case mlx5.CapAtomic:
		return k.atomic
	case mlx5.CapRoCE:
		return k.roce
	case mlx5.CapGeneral2:
		return k.general2
	}
	return nil
}

// encode writes capability t into the 256-byte cap area b.
func (k *capSet) encode(t mlx5.CapType, b []byte) error {
	c := k.capability(t)
	if c == nil {
		return fmt.Errorf("capability type %v", t)
	}
	return c.Encode(b)
}
