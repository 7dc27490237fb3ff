package mlx5

// The QP context (qpc) and the address path (ads): the layouts, structs,
// codecs and value enums are generated from prm/qpc.prm (qpc_gen.go); this
// file adds the MTU conversions and the by-name field access the transition
// rules use.

// Bytes returns the MTU in bytes, 0 for RAW_ETH and unknown codes.
func (m MTU) Bytes() int {
	if m >= MTU256 && m <= MTU8192 {
		return 128 << m
	}
	return 0
}

// MTUFromBytes returns the code of a power-of-two MTU of 256..8192 bytes.
func MTUFromBytes(n int) (MTU, bool) {
	for m := MTU256; m <= MTU8192; m++ {
		if m.Bytes() == n {
			return m, true
		}
	}
	return 0, false
}

// QPCFieldNames lists every qpc field name the library knows, in layout
// order; address-path members are "primary_address_path.<name>" and
// "secondary_address_path.<name>". These are the names TransitionFields and
// CopyFields use.
func QPCFieldNames() []string {
	var x QPContext
	bs := x.bindings()
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = b.name
	}
	return names
}

// CopyFields copies the named qpc fields (QPCFieldNames spelling) from src
// into x; a field name that does not exist is an ErrInvalid error and
// nothing is copied. The emulator applies a transition with it: the
// required fields plus the optional fields whose mask bit is set.
func (x *QPContext) CopyFields(src *QPContext, names []string) error {
	dst, from := x.bindings(), src.bindings()
	type pair struct{ d, s binding }
	pairs := make([]pair, 0, len(names))
	for _, n := range names {
		d, ok := findBinding(dst, n)
		if !ok {
			return &LayoutError{Op: "copy qpc fields", Field: n, Err: ErrInvalid, Detail: "no such qpc field"}
		}
		s, _ := findBinding(from, n)
		pairs = append(pairs, pair{d, s})
	}
	for _, p := range pairs {
		if p.d.raw != nil {
			copy(p.d.raw, p.s.raw)
			continue
		}
		p.d.set(p.s.get())
	}
	return nil
}

// Responder scatter-to-CQE (qpc.cs_res): with ResScatData32CQE a receive
// of at most 32 bytes is written into bytes 0..31 of its 64-byte CQE
// (format CQEFormatInline32, op_own bit 0x4) instead of the receive
// buffer; ResScatData64CQE does the same with 64 bytes in a 128-byte CQE.
// The values are the mlx5 kernel driver's MLX5_RES_SCAT_DATA32_CQE and
// MLX5_RES_SCAT_DATA64_CQE.
const (
	ResScatNone      uint8 = 0
	ResScatData32CQE uint8 = 1
	ResScatData64CQE uint8 = 2
)

// CQEInlineMax is the payload a 64-byte CQE carries with scatter-to-CQE.
const CQEInlineMax = 32
