package mlx5

import "encoding/binary"

// This file holds the 16-byte send-WQE segments that have more than one form
// (inline, masked atomic); the fixed ones (control, remote address, data,
// atomic, wait) are generated from prm/wqe.prm (wqe_gen.go). Each segment
// type has Put, which writes the 16 bytes at the start of b, and a Decode
// function that reads them back. Put and Decode need len(b) >= DSSize; both
// panic on a shorter slice, as the bit accessor does: the WQE encoder and
// parser always hand them a whole segment.
//
// Every field is big-endian.

// Masked atomic segment fields.
var (
	masked4Swap        = F(0x00, 32) // also the 4-byte FA add value
	masked4Compare     = F(0x20, 32) // also the 4-byte FA field boundary
	masked4SwapMask    = F(0x40, 32)
	masked4CompareMask = F(0x60, 32)
	masked8First       = F(0x00, 64) // swap (CS, first segment), swap_mask (CS, second), add (FA)
	masked8Second      = F(0x40, 64) // compare, compare_mask, field_boundary
)

// InlineFlag is bit 31 of a data segment's byte_count (MLX5_INLINE_SEG): set
// in an inline segment header, clear in a pointer segment.
const InlineFlag uint32 = 0x80000000

// InvalidLKey (MLX5_INVALID_LKEY) terminates a receive WQE's scatter list.
const InvalidLKey uint32 = 0x100

// InlineHeader returns the 4-byte inline segment header for n payload bytes:
// BE32(n | InlineFlag). n must be below 2^31.
func InlineHeader(n uint32) [4]byte {
	var h [4]byte
	binary.BigEndian.PutUint32(h[:], n|InlineFlag)
	return h
}

// InlineDS returns the number of 16-byte units an inline segment of n payload
// bytes occupies: ceil((4 + n) / 16).
func InlineDS(n int) int { return (4 + n + DSSize - 1) / DSSize }

// MaskedCSSeg holds the operands of a masked compare-and-swap. For the 4-byte
// form only the low 32 bits of each value are used. The NIC compares
// ((mem ^ Compare) & CompareMask) == 0 and then stores
// (mem &^ SwapMask) | (Swap & SwapMask).
type MaskedCSSeg struct {
	Swap, Compare, SwapMask, CompareMask uint64
}

// Put4 writes the 4-byte form, one segment: swap, compare, swap_mask,
// compare_mask as BE32 each.
func (s MaskedCSSeg) Put4(b []byte) {
	b = b[:DSSize]
	Set(b, masked4Swap, s.Swap&0xffffffff)
	Set(b, masked4Compare, s.Compare&0xffffffff)
	Set(b, masked4SwapMask, s.SwapMask&0xffffffff)
	Set(b, masked4CompareMask, s.CompareMask&0xffffffff)
}

// Put8 writes the 8-byte form, two segments: (swap, compare) to b0 and
// (swap_mask, compare_mask) to b1, BE64 each. b1 is the next 16 bytes of the
// WQE, which may be at the start of the ring.
func (s MaskedCSSeg) Put8(b0, b1 []byte) {
	b0, b1 = b0[:DSSize], b1[:DSSize]
	Set(b0, masked8First, s.Swap)
	Set(b0, masked8Second, s.Compare)
	Set(b1, masked8First, s.SwapMask)
	Set(b1, masked8Second, s.CompareMask)
}

// DecodeMaskedCS4 reads the 4-byte masked CS segment.
func DecodeMaskedCS4(b []byte) MaskedCSSeg {
	b = b[:DSSize]
	return MaskedCSSeg{
		Swap:        Get(b, masked4Swap),
		Compare:     Get(b, masked4Compare),
		SwapMask:    Get(b, masked4SwapMask),
		CompareMask: Get(b, masked4CompareMask),
	}
}

// DecodeMaskedCS8 reads the two segments of the 8-byte masked CS.
func DecodeMaskedCS8(b0, b1 []byte) MaskedCSSeg {
	b0, b1 = b0[:DSSize], b1[:DSSize]
	return MaskedCSSeg{
		Swap:        Get(b0, masked8First),
		Compare:     Get(b0, masked8Second),
		SwapMask:    Get(b1, masked8First),
		CompareMask: Get(b1, masked8Second),
	}
}

// MaskedFASeg holds the operands of a masked fetch-and-add. A 1 bit in
// FieldBoundary marks the most significant bit of a field whose carry out is
// discarded; 0 means a plain add. The 4-byte form uses the low 32 bits.
type MaskedFASeg struct {
	Add, FieldBoundary uint64
}

// Put4 writes the 4-byte form: add and field_boundary as BE32, then 8
// reserved bytes (zeroed).
func (s MaskedFASeg) Put4(b []byte) {
	b = b[:DSSize]
	clear(b)
	Set(b, masked4Swap, s.Add&0xffffffff)
	Set(b, masked4Compare, s.FieldBoundary&0xffffffff)
}

// Put8 writes the 8-byte form: add and field_boundary as BE64.
func (s MaskedFASeg) Put8(b []byte) {
	b = b[:DSSize]
	Set(b, masked8First, s.Add)
	Set(b, masked8Second, s.FieldBoundary)
}

// DecodeMaskedFA4 reads the 4-byte masked FA segment.
func DecodeMaskedFA4(b []byte) MaskedFASeg {
	b = b[:DSSize]
	return MaskedFASeg{Add: Get(b, masked4Swap), FieldBoundary: Get(b, masked4Compare)}
}

// DecodeMaskedFA8 reads the 8-byte masked FA segment.
func DecodeMaskedFA8(b []byte) MaskedFASeg {
	b = b[:DSSize]
	return MaskedFASeg{Add: Get(b, masked8First), FieldBoundary: Get(b, masked8Second)}
}
