package mlx5

import "fmt"

// QUERY_HCA_CAP (0x100) and the capability structures it returns: general
// caps (type 0), atomic caps (type 3) and general caps 2 (type 0x20); RoCE
// caps (type 4) in roce.go. The structures, QUERY_HCA_CAP in and the sizes
// and QUERY_HCA_CAP out are generated from prm/caps.prm (caps_gen.go).

// HCACapOpMod returns op_mod = cap_type<<1 | current.
func HCACapOpMod(t CapType, current bool) uint16 {
	m := uint16(t) << 1
	if current {
		m |= 1
	}
	return m
}

// Port types of HCACaps.PortType.
const (
	PortTypeIB  = 0
	PortTypeETH = 1
)

// AtomicCaps.AtomicOperations bits.
const (
	AtomicOpCmpSwap          = 1 << 0
	AtomicOpFetchAdd         = 1 << 1
	AtomicOpMaskedCmpSwap    = 1 << 2
	AtomicOpMaskedFetchAdd   = 1 << 3
	AtomicSize4B             = 1 << 2 // AtomicSizeQP/DC bit for 4-byte operands
	AtomicSize8B             = 1 << 3 // ... and for 8-byte operands
	AtomicEndiannessBig      = 0      // atomic_req_8B_endianness_mode: IB-spec
	AtomicEndiannessHostMode = 1      // host byte order
)

// CapType reports the capability type of the structure.
func (HCACaps) CapType() CapType { return CapGeneral }

// CapType reports the capability type of the structure.
func (AtomicCaps) CapType() CapType { return CapAtomic }

// CapType reports the capability type of the structure.
func (HCACaps2) CapType() CapType { return CapGeneral2 }

// Capability is one of the typed capability structures (HCACaps,
// AtomicCaps, RoCECaps, HCACaps2).
type Capability interface {
	CapType() CapType
	Encode(b []byte) error
}

// NewQueryHCACapIn asks for capability type t, current (true) or maximum
// (false) values, of the own function.
func NewQueryHCACapIn(t CapType, current bool) QueryHCACapIn {
	return QueryHCACapIn{CmdHeader: CmdHeader{Opcode: OpQueryHCACap, OpMod: HCACapOpMod(t, current)}}
}

// CapType returns the capability type in op_mod.
func (in QueryHCACapIn) CapType() CapType { return CapType(in.OpMod >> 1) }

// Current reports whether the current (not maximum) values are asked for.
func (in QueryHCACapIn) Current() bool { return in.OpMod&1 != 0 }

// NewQueryHCACapOut builds a successful output carrying c.
func NewQueryHCACapOut(c Capability) (QueryHCACapOut, error) {
	var o QueryHCACapOut
	err := c.Encode(o.Cap[:])
	return o, err
}

// General decodes Cap as general caps (type 0).
func (o QueryHCACapOut) General() (HCACaps, error) { return DecodeHCACaps(o.Cap[:]) }

// Atomic decodes Cap as atomic caps (type 3).
func (o QueryHCACapOut) Atomic() (AtomicCaps, error) { return DecodeAtomicCaps(o.Cap[:]) }

// RoCE decodes Cap as RoCE caps (type 4).
func (o QueryHCACapOut) RoCE() (RoCECaps, error) { return DecodeRoCECaps(o.Cap[:]) }

// General2 decodes Cap as general caps 2 (type 0x20).
func (o QueryHCACapOut) General2() (HCACaps2, error) { return DecodeHCACaps2(o.Cap[:]) }

// DecodeCapability decodes a capability structure of type t from b.
func DecodeCapability(t CapType, b []byte) (Capability, error) {
	var (
		c   Capability
		err error
	)
	switch t {
	case CapGeneral:
		c, err = DecodeHCACaps(b)
	case CapAtomic:
		c, err = DecodeAtomicCaps(b)
	case CapRoCE:
		c, err = DecodeRoCECaps(b)
	case CapGeneral2:
		c, err = DecodeHCACaps2(b)
	default:
		return nil, &LayoutError{Op: "decode capability", Field: "op_mod", Err: ErrInvalid,
			Detail: fmt.Sprintf("capability type %v is not supported", t)}
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}
