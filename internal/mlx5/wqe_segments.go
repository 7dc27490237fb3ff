package mlx5

import "encoding/binary"

// This file holds the 16-byte send-WQE segments (control, remote address,
// data, inline, atomic, masked atomic, wait). Each segment type has Put, which writes the 16 bytes at the start of
// b, and a Decode function that reads them back. Put and Decode need
// len(b) >= DSSize; both panic on a shorter slice, as the bit accessor does:
// the WQE encoder and parser always hand them a whole segment.
//
// Every field is big-endian. The immediate (CtrlSeg.Imm) is a 32-bit value
// whose big-endian bytes are exactly the four bytes that go on the wire, so
// it round-trips unchanged to the responder's CQE.

// Control segment fields.
var (
	ctrlOpMod     = F(0x00, 8)
	ctrlWQEIndex  = F(0x08, 16)
	ctrlOpcode    = F(0x18, 8)
	ctrlQPN       = F(0x20, 24)
	ctrlDS        = F(0x3a, 6)
	ctrlSignature = F(0x40, 8)
	ctrlDCIStream = F(0x48, 16)
	ctrlFmCeSe    = F(0x58, 8)
	ctrlImm       = F(0x60, 32)
)

// Remote address segment fields.
var (
	raddrAddr = F(0x00, 64)
	raddrRKey = F(0x40, 32)
)

// Data (pointer) segment fields.
var (
	dataByteCount = F(0x00, 32)
	dataLKey      = F(0x20, 32)
	dataAddr      = F(0x40, 64)
)

// Standard atomic segment fields.
var (
	atomicSwapAdd = F(0x00, 64)
	atomicCompare = F(0x40, 64)
)

// Masked atomic segment fields.
var (
	masked4Swap        = F(0x00, 32) // also the 4-byte FA add value
	masked4Compare     = F(0x20, 32) // also the 4-byte FA field boundary
	masked4SwapMask    = F(0x40, 32)
	masked4CompareMask = F(0x60, 32)
	masked8First       = F(0x00, 64) // swap (CS, first segment), swap_mask (CS, second), add (FA)
	masked8Second      = F(0x40, 64) // compare, compare_mask, field_boundary
)

// Wait / SEND_EN segment fields.
var (
	waitMaxIndex = F(0x40, 32)
	waitQPNCQN   = F(0x60, 32)
)

// CtrlSeg is the control segment, the first 16 bytes of every send WQE.
type CtrlSeg struct {
	OpMod     uint8     // opcode modifier: masked-atomic size, WAIT mode; 0 otherwise
	WQEIndex  uint16    // 16-bit WQEBB index of this WQE's first WQEBB
	Opcode    WQEOpcode //
	QPN       uint32    // 24 bits
	DS        uint8     // 16-byte units in the WQE, ctrl included; 6 bits
	Signature uint8     // 0 unless qpc.wq_signature = 1
	DCIStream uint16    // DC only; 0 for RC
	Flags     CtrlFlags // the fm_ce_se byte
	// Imm is the immediate of SEND_IMM and RDMA_WRITE_IMM (its big-endian
	// bytes are the wire bytes, stored verbatim) or the rkey to invalidate of
	// SEND_INVAL; 0 otherwise.
	Imm uint32
}

// Put writes the segment to b[0:16]. QPN and DS must fit their fields (24
// and 6 bits).
func (s CtrlSeg) Put(b []byte) {
	b = b[:DSSize]
	clear(b)
	Set(b, ctrlOpMod, uint64(s.OpMod))
	Set(b, ctrlWQEIndex, uint64(s.WQEIndex))
	Set(b, ctrlOpcode, uint64(s.Opcode))
	Set(b, ctrlQPN, uint64(s.QPN))
	Set(b, ctrlDS, uint64(s.DS))
	Set(b, ctrlSignature, uint64(s.Signature))
	Set(b, ctrlDCIStream, uint64(s.DCIStream))
	Set(b, ctrlFmCeSe, uint64(s.Flags))
	Set(b, ctrlImm, uint64(s.Imm))
}

// DecodeCtrlSeg reads a control segment from b[0:16]. The two reserved bits
// of the qpn_ds dword are ignored.
func DecodeCtrlSeg(b []byte) CtrlSeg {
	b = b[:DSSize]
	return CtrlSeg{
		OpMod:     uint8(Get32(b, ctrlOpMod)),
		WQEIndex:  uint16(Get32(b, ctrlWQEIndex)),
		Opcode:    WQEOpcode(Get32(b, ctrlOpcode)),
		QPN:       Get32(b, ctrlQPN),
		DS:        uint8(Get32(b, ctrlDS)),
		Signature: uint8(Get32(b, ctrlSignature)),
		DCIStream: uint16(Get32(b, ctrlDCIStream)),
		Flags:     CtrlFlags(Get32(b, ctrlFmCeSe)),
		Imm:       Get32(b, ctrlImm),
	}
}

// RAddrSeg is the remote address segment of RDMA WRITE/READ and atomics.
type RAddrSeg struct {
	Addr uint64 // remote virtual address (the iova the peer registered)
	RKey uint32
}

// Put writes the segment to b[0:16]; the reserved dword is zeroed.
func (s RAddrSeg) Put(b []byte) {
	b = b[:DSSize]
	clear(b)
	Set(b, raddrAddr, s.Addr)
	Set(b, raddrRKey, uint64(s.RKey))
}

// DecodeRAddrSeg reads a remote address segment from b[0:16].
func DecodeRAddrSeg(b []byte) RAddrSeg {
	b = b[:DSSize]
	return RAddrSeg{Addr: Get(b, raddrAddr), RKey: Get32(b, raddrRKey)}
}

// InlineFlag is bit 31 of a data segment's byte_count (MLX5_INLINE_SEG): set
// in an inline segment header, clear in a pointer segment.
const InlineFlag uint32 = 0x80000000

// InvalidLKey (MLX5_INVALID_LKEY) terminates a receive WQE's scatter list.
const InvalidLKey uint32 = 0x100

// DataSeg is a pointer (scatter/gather) segment. ByteCount must be below 2^31:
// bit 31 would turn the segment into an inline header.
type DataSeg struct {
	ByteCount uint32
	LKey      uint32
	Addr      uint64 // local virtual address (iova of the local MR)
}

// Put writes the segment to b[0:16]. ByteCount is stored as given; the WQE
// encoder rejects a count with bit 31 set before it gets here.
func (s DataSeg) Put(b []byte) {
	b = b[:DSSize]
	Set(b, dataByteCount, uint64(s.ByteCount))
	Set(b, dataLKey, uint64(s.LKey))
	Set(b, dataAddr, s.Addr)
}

// DecodeDataSeg reads a data segment from b[0:16], bit 31 included.
func DecodeDataSeg(b []byte) DataSeg {
	b = b[:DSSize]
	return DataSeg{ByteCount: Get32(b, dataByteCount), LKey: Get32(b, dataLKey), Addr: Get(b, dataAddr)}
}

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

// AtomicSeg is the standard atomic segment of ATOMIC_CS and ATOMIC_FA.
type AtomicSeg struct {
	SwapAdd uint64 // swap value (CS) or addend (FA)
	// Compare is the compare value of CS. For FA the NIC ignores it: the
	// PRM layout has 0 there, gpunetio's builder repeats the addend.
	Compare uint64
}

// Put writes the segment to b[0:16].
func (s AtomicSeg) Put(b []byte) {
	b = b[:DSSize]
	Set(b, atomicSwapAdd, s.SwapAdd)
	Set(b, atomicCompare, s.Compare)
}

// DecodeAtomicSeg reads a standard atomic segment from b[0:16].
func DecodeAtomicSeg(b []byte) AtomicSeg {
	b = b[:DSSize]
	return AtomicSeg{SwapAdd: Get(b, atomicSwapAdd), Compare: Get(b, atomicCompare)}
}

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

// WaitSeg is the segment of WAIT (opmod WaitOnCQ) and SEND_EN.
type WaitSeg struct {
	// MaxIndex is, for WAIT, the CQE index (24 bits) that CQ QPNCQN must
	// produce; for SEND_EN, the 16-bit WQE index of the slave SQ up to which
	// execution is enabled.
	MaxIndex uint32
	// QPNCQN is the CQ number (WAIT) or the slave QP number (SEND_EN).
	QPNCQN uint32
}

// Put writes the segment to b[0:16]; the 8 reserved bytes are zeroed.
func (s WaitSeg) Put(b []byte) {
	b = b[:DSSize]
	clear(b)
	Set(b, waitMaxIndex, uint64(s.MaxIndex))
	Set(b, waitQPNCQN, uint64(s.QPNCQN))
}

// DecodeWaitSeg reads a wait segment from b[0:16].
func DecodeWaitSeg(b []byte) WaitSeg {
	b = b[:DSSize]
	return WaitSeg{MaxIndex: Get32(b, waitMaxIndex), QPNCQN: Get32(b, waitQPNCQN)}
}
