package mlx5

import (
	"encoding/binary"
	"fmt"
)

// Field names one PRM bit field by its bit address and width.
//
// PRM layouts are flat bit strings made of big-endian 32-bit dwords: bit
// address 0 is the most significant bit of byte 0. A field of width w < 32 at
// address a lives in dword a/32 and is shifted left by 32-w-a%32 inside it; no
// such field straddles a dword. A 32-bit field is a plain BE32 at byte a/8 and
// a 64-bit field (always 64-bit aligned) a plain BE64 at byte a/8. Wider
// fields (GIDs, MAC halves copied together) are byte arrays, accessed with
// Bytes and SetBytes.
type Field struct {
	Bit   uint32 // bit address from the start of the layout
	Width uint32 // width in bits: 1..32, or 64
}

// F is shorthand for Field{Bit: bit, Width: width}.
func F(bit, width uint32) Field { return Field{Bit: bit, Width: width} }

// At returns the field moved by base bits, for a struct embedded in a larger
// layout (a QPC inside a command mailbox, an address path inside a QPC).
func (f Field) At(base uint32) Field { return Field{Bit: f.Bit + base, Width: f.Width} }

// Max returns the largest value the field can hold.
func (f Field) Max() uint64 {
	if f.Width >= 64 {
		return ^uint64(0)
	}
	return 1<<f.Width - 1
}

// Fits reports whether v can be stored in the field without truncation.
func (f Field) Fits(v uint64) bool { return v <= f.Max() }

// End returns the byte offset one past the last byte the field touches.
func (f Field) End() int {
	if f.Width == 64 {
		return int(f.Bit/8) + 8
	}
	return int(f.Bit/32)*4 + 4
}

func (f Field) String() string { return fmt.Sprintf("bit 0x%x width %d", f.Bit, f.Width) }

func (f Field) check(n int) {
	switch {
	case f.Width == 64:
		if f.Bit%64 != 0 {
			panic(fmt.Sprintf("mlx5: 64-bit field %v is not 64-bit aligned", f))
		}
	case f.Width == 0 || f.Width > 32:
		panic(fmt.Sprintf("mlx5: field %v has an unsupported width", f))
	case f.Bit%32+f.Width > 32:
		panic(fmt.Sprintf("mlx5: field %v straddles a dword", f))
	}
	if f.End() > n {
		panic(fmt.Sprintf("mlx5: field %v outside a %d-byte layout", f, n))
	}
}

// Get reads field f from the PRM layout b. It panics if the field does not
// fit in b: callers that parse outside bytes check the length first.
func Get(b []byte, f Field) uint64 {
	f.check(len(b))
	if f.Width == 64 {
		return binary.BigEndian.Uint64(b[f.Bit/8:])
	}
	dw := binary.BigEndian.Uint32(b[f.Bit/32*4:])
	shift := 32 - f.Width - f.Bit%32
	return uint64(dw>>shift) & f.Max()
}

// Get32 is Get for fields of at most 32 bits.
func Get32(b []byte, f Field) uint32 { return uint32(Get(b, f)) }

// GetBool reads a one-bit field.
func GetBool(b []byte, f Field) bool { return Get(b, f) != 0 }

// Set writes v into field f of b, leaving every other bit untouched. It
// panics if v does not fit: builders validate values before they store them,
// so an overflow here is a bug, never a user error.
func Set(b []byte, f Field, v uint64) {
	f.check(len(b))
	if !f.Fits(v) {
		fieldOverflow(f, v)
	}
	if f.Width == 64 {
		binary.BigEndian.PutUint64(b[f.Bit/8:], v)
		return
	}
	off := f.Bit / 32 * 4
	shift := 32 - f.Width - f.Bit%32
	mask := uint32(f.Max()) << shift
	dw := binary.BigEndian.Uint32(b[off:])
	dw = dw&^mask | uint32(v)<<shift
	binary.BigEndian.PutUint32(b[off:], dw)
}

// fieldOverflow panics for a value v that does not fit field f: the
// message of Set and of the generated segment writers.
func fieldOverflow(f Field, v uint64) {
	panic(fmt.Sprintf("mlx5: value 0x%x does not fit field %v", v, f))
}

// boolBit is v as a one-bit field value.
func boolBit(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// SetBool writes a one-bit field.
func SetBool(b []byte, f Field, v bool) { Set(b, f, boolBit(v)) }

// Bytes returns the n bytes at byte address bit/8 of b (a GID, a MAC). The
// bit address must be byte aligned.
func Bytes(b []byte, bit uint32, n int) []byte {
	if bit%8 != 0 {
		panic(fmt.Sprintf("mlx5: byte array at bit 0x%x is not byte aligned", bit))
	}
	return b[bit/8 : int(bit/8)+n]
}

// SetBytes copies v verbatim to byte address bit/8 of b.
func SetBytes(b []byte, bit uint32, v []byte) { copy(Bytes(b, bit, len(v)), v) }
