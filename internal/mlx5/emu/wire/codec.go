package wire

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/gdaki/gpunetio/internal/mlx5/emu/internal/hostcopy"
)

// Encoding. All integers are big-endian.
//
//	0..3    magic "GDW" and the format version (Version)
//	4..7    frame length: every byte of the frame, these eight included
//	8       opcode
//	9       flags: bit 7 SE, bit 6 AckReq; the others must be zero
//	10..11  reserved, zero
//	12..15  destination QPN (24 bits)
//	16..19  PSN (24 bits)
//	20..23  source QPN (24 bits)
//	24..39  source GID
//	40..55  destination GID
//	56..59  payload length
//	60..    the opcode's extension headers, in this order:
//	          RETH          va 8, rkey 4, dma length 4
//	          AtomicETH     va 8, rkey 4, swap/add 8, compare 8 (plain), or
//	                        va 8, rkey 4, size 1, reserved 3, swap/add 8,
//	                        compare or field boundary 8, swap mask 8,
//	                        compare mask 8 (masked)
//	          ImmDt         4, verbatim
//	          IETH          the R_Key to invalidate 4
//	          AETH          syndrome 1, MSN 3
//	          AtomicAckETH  original value 8
//	then    the payload
//
// The frame length doubles as the length prefix on a TCP stream.

// Version is the encoding version carried after the magic. Version 2 added
// SEND with invalidate (IETH) and carries responses back on the connection
// of their request (see Port.Send); a version-1 peer is refused at the
// first frame.
const Version = 2

// Sizes.
const (
	// HeaderLen is the length of the base header (everything before the
	// extension headers).
	HeaderLen = 60

	offPayloadLen = 56 // the payload length word, the header's last

	// MaxPayload bounds the payload of one frame (16 MiB). RDMA messages
	// larger than this are segmented into FIRST/MIDDLE/LAST packets.
	MaxPayload = 1 << 24
	// MaxFrameLen bounds the length of an encoded frame.
	MaxFrameLen = HeaderLen + maskedLen + MaxPayload
)

var magic = [4]byte{'G', 'D', 'W', Version}

// aethPoison is a reserved AETH syndrome (kind 010) written in place of the
// syndrome when the MSN does not fit in 24 bits.
const aethPoison Syndrome = 0x40

const (
	flagSE     = 0x80
	flagAckReq = 0x40
)

// EncodedLen is the length AppendEncode adds for f.
func (f *Frame) EncodedLen() int {
	return HeaderLen + f.Opcode.extLen() + len(f.Payload)
}

// AppendEncode appends the encoding of f to dst and returns the extended
// slice. It does not validate (Validate does; Port.Send calls it), but a
// frame Validate rejects encodes to bytes Decode rejects. Headers the opcode
// does not carry are skipped. It does not allocate when dst has room for EncodedLen bytes.
// A payload by reference (Ref) is never encoded: the bytes claim Ref.Len()
// payload bytes (at least one) and hold none, so Decode rejects them (Port.Send delivers
// such a frame in-process or returns ErrNotLocal; it never encodes one).
func (f *Frame) AppendEncode(dst []byte) []byte {
	n := f.EncodedLen()
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	p := f.encodeHead(dst[start:], len(f.Payload))
	if f.Ref != nil {
		// Claim the referenced bytes (at least one) without holding them.
		binary.BigEndian.PutUint32(dst[start+offPayloadLen:], uint32(max(f.Ref.Len(), 1)))
	}
	hostcopy.Copy(p, f.Payload) // a large payload on several cores (into a ring or a TCP queue)
	return dst
}

// encodeHead encodes f's headers into b, the len(b) bytes of a frame with a
// payload of n bytes (f.Payload is not looked at), and returns the part of
// b where the payload goes.
func (f *Frame) encodeHead(b []byte, n int) []byte {
	copy(b[0:4], magic[:])
	be := binary.BigEndian
	be.PutUint32(b[4:8], uint32(len(b)))
	b[8] = byte(f.Opcode)
	var flags byte
	if f.SE {
		flags |= flagSE
	}
	if f.AckReq {
		flags |= flagAckReq
	}
	b[9] = flags
	b[10], b[11] = 0, 0
	be.PutUint32(b[12:16], f.DstQPN)
	be.PutUint32(b[16:20], f.PSN)
	be.PutUint32(b[20:24], f.SrcQPN)
	copy(b[24:40], f.SrcGID[:])
	copy(b[40:56], f.DstGID[:])
	be.PutUint32(b[offPayloadLen:HeaderLen], uint32(n))
	p := b[HeaderLen:]
	op := f.Opcode
	if op.has(hRETH) {
		be.PutUint64(p[0:8], f.RETH.VA)
		be.PutUint32(p[8:12], f.RETH.RKey)
		be.PutUint32(p[12:16], f.RETH.DMALength)
		p = p[rethLen:]
	}
	if op.has(hAtomic) {
		a := &f.Atomic
		be.PutUint64(p[0:8], a.VA)
		be.PutUint32(p[8:12], a.RKey)
		be.PutUint64(p[12:20], a.SwapAdd)
		be.PutUint64(p[20:28], a.Compare)
		p = p[atomicLen:]
	}
	if op.has(hMasked) {
		a := &f.Atomic
		be.PutUint64(p[0:8], a.VA)
		be.PutUint32(p[8:12], a.RKey)
		p[12], p[13], p[14], p[15] = a.Size, 0, 0, 0
		be.PutUint64(p[16:24], a.SwapAdd)
		if op == OpMaskedFetchAdd {
			be.PutUint64(p[24:32], a.FieldBoundary)
			be.PutUint64(p[32:40], 0)
			be.PutUint64(p[40:48], 0)
		} else {
			be.PutUint64(p[24:32], a.Compare)
			be.PutUint64(p[32:40], a.SwapMask)
			be.PutUint64(p[40:48], a.CompareMask)
		}
		p = p[maskedLen:]
	}
	if op.has(hImm) {
		copy(p[0:4], f.Imm[:])
		p = p[immLen:]
	}
	if op.has(hIETH) {
		be.PutUint32(p[0:4], f.InvRKey)
		p = p[iethLen:]
	}
	if op.has(hAETH) {
		syn := f.AETH.Syndrome
		if f.AETH.MSN > mask24 {
			syn = aethPoison // keep an unencodable MSN from decoding as another
		}
		be.PutUint32(p[0:4], uint32(syn)<<24|f.AETH.MSN&mask24)
		p = p[aethLen:]
	}
	if op.has(hAtomicAck) {
		be.PutUint64(p[0:8], f.AtomicAck)
		p = p[atomicAckLen:]
	}
	return p[:n]
}

func decodeErr(field, format string, args ...any) error {
	return &FrameError{Op: "decode", Field: field, Reason: fmt.Sprintf(format, args...)}
}

// FrameLen reads the frame length from the first eight bytes of an encoded
// frame, checking the magic, the version and the bounds. A stream reader
// calls it to learn how many bytes to read.
func FrameLen(b []byte) (int, error) {
	if len(b) < 8 {
		return 0, decodeErr("length", "%d bytes, need 8 for magic and length", len(b))
	}
	if b[0] != magic[0] || b[1] != magic[1] || b[2] != magic[2] {
		return 0, decodeErr("magic", "bad magic % x", b[0:3])
	}
	if b[3] != Version {
		return 0, decodeErr("magic", "version %d, want %d", b[3], Version)
	}
	n := binary.BigEndian.Uint32(b[4:8])
	if n < HeaderLen || n > MaxFrameLen {
		return 0, decodeErr("length", "frame length %d outside [%d, %d]", n, HeaderLen, MaxFrameLen)
	}
	return int(n), nil
}

// frameLen is FrameLen, its common case (a good frame) inlined in the
// decoders: the bytes are read by FrameLen again only when they are not
// what a good frame holds, for its error.
func frameLen(b []byte) (int, error) {
	if len(b) >= 8 && binary.LittleEndian.Uint32(b) == magicWord {
		if n := binary.BigEndian.Uint32(b[4:8]); n >= HeaderLen && n <= MaxFrameLen {
			return int(n), nil
		}
	}
	return FrameLen(b)
}

// magicWord is the magic and the version as a little-endian word.
var magicWord = binary.LittleEndian.Uint32(magic[:])

// Decode parses one encoded frame that fills b exactly. It rejects a bad
// magic or version, a length that disagrees with len(b) or with the opcode's
// headers plus the payload length, an unknown opcode, unknown flags, non-zero
// reserved bits, and everything Validate rejects. The returned frame's
// Payload aliases b (nil when empty); Decode does not allocate.
func Decode(b []byte) (Frame, error) {
	var f Frame
	err := DecodeInto(&f, b)
	return f, err
}

// DecodeInto is Decode writing into *f, for callers that reuse one Frame.
// On error *f is left in an unspecified state.
func DecodeInto(f *Frame, b []byte) error {
	n, err := frameLen(b)
	if err != nil {
		return err
	}
	if n != len(b) {
		return decodeErr("length", "frame length field %d, buffer %d bytes", n, len(b))
	}
	return decodeFrom(f, b, b)
}

// maxHead is the longest base header plus extension headers of any opcode.
const maxHead = HeaderLen + maskedLen + immLen + aethLen + atomicAckLen

// sameQPs reports whether b starts with the encoding of a frame between
// the QPs dst and src (its magic, DstQPN and SrcQPN): Frame.More. b may be
// a prefix of the frame, and hostile: only those fields are looked at.
func sameQPs(b []byte, dst, src uint32) bool {
	if len(b) < sameQPsLen || binary.LittleEndian.Uint32(b) != magicWord {
		return false
	}
	be := binary.BigEndian
	return be.Uint32(b[12:16]) == dst && be.Uint32(b[20:24]) == src
}

// sameQPsLen is how much of a frame sameQPs needs.
const sameQPsLen = 24

// decodeShared decodes the frame that fills b, which another process may
// be writing while it is read (a shared-memory ring): every header field is
// read from a private copy, taken once, so the checks and the values agree;
// only the payload aliases b. The copy holds the base header and the
// extension headers its opcode (as copied) names, as much of them as the
// frame has.
func decodeShared(f *Frame, b []byte, scratch *[maxHead]byte) error {
	n := len(b)
	le := binary.LittleEndian
	if n < HeaderLen || n > MaxFrameLen || le.Uint32(b) != magicWord || binary.BigEndian.Uint32(b[4:8]) != uint32(n) {
		return decodeSharedSlow(f, b, scratch) // for its error, or a frame whose length changed
	}
	// The copy, a word at a time (the lengths of the base header and of
	// every extension header are multiples of four): a call to memmove
	// costs more than the few words of a small frame's headers.
	b = b[:n:n]
	for i := 0; i+8 <= HeaderLen; i += 8 {
		le.PutUint64(scratch[i:i+8], le.Uint64(b[i:i+8]))
	}
	le.PutUint32(scratch[HeaderLen-4:HeaderLen], le.Uint32(b[HeaderLen-4:HeaderLen]))
	k := HeaderLen + Opcode(scratch[8]).extLen()
	if k <= n {
		for i := HeaderLen; i+4 <= k; i += 4 {
			le.PutUint32(scratch[i:i+4], le.Uint32(b[i:i+4]))
		}
	} else {
		k = copy(scratch[HeaderLen:], b[HeaderLen:]) + HeaderLen
	}
	h := scratch[:k]
	if le.Uint32(h) != magicWord || binary.BigEndian.Uint32(h[4:8]) != uint32(n) {
		return decodeErr("length", "frame length changed while it was read")
	}
	return decodeFrom(f, h, b)
}

// decodeSharedSlow is decodeShared for bytes that do not start as a frame
// of len(b) bytes does (or did not when they were first read): it finds
// the error, or decodes a frame that a producer rewrote meanwhile.
func decodeSharedSlow(f *Frame, b []byte, scratch *[maxHead]byte) error {
	n, err := FrameLen(b)
	if err != nil {
		return err
	}
	if n != len(b) {
		return decodeErr("length", "frame length field %d, buffer %d bytes", n, len(b))
	}
	k := copy(scratch[:], b)
	h := scratch[:min(k, HeaderLen+Opcode(scratch[8]).extLen())]
	if m, _ := FrameLen(h); m != n {
		return decodeErr("length", "frame length changed while it was read")
	}
	return decodeFrom(f, h, b)
}

// decodeFrom decodes the frame of length len(b) (checked by the caller)
// whose headers are the first bytes of h (b itself, or a private copy of
// at least its headers); the payload is taken from b.
func decodeFrom(f *Frame, h, b []byte) error {
	n := len(b)
	be := binary.BigEndian
	if len(h) < HeaderLen {
		return decodeErr("length", "%d bytes, need %d for the base header", len(h), HeaderLen)
	}
	op := Opcode(h[8])
	if !op.Valid() {
		return decodeErr("opcode", "unknown opcode 0x%02x", h[8])
	}
	flags := h[9]
	if flags&^(flagSE|flagAckReq) != 0 {
		return decodeErr("flags", "unknown flag bits 0x%02x", flags&^(flagSE|flagAckReq))
	}
	if h[10] != 0 || h[11] != 0 {
		return decodeErr("reserved", "non-zero reserved bytes %02x %02x", h[10], h[11])
	}
	if h[12] != 0 || h[16] != 0 || h[20] != 0 {
		return decodeErr("bth", "QPN or PSN wider than 24 bits")
	}
	payloadLen := be.Uint32(h[offPayloadLen:HeaderLen])
	ext := op.extLen()
	if uint64(HeaderLen)+uint64(ext)+uint64(payloadLen) != uint64(n) {
		return decodeErr("length", "%s needs %d header bytes plus payload length %d, frame length is %d", op, HeaderLen+ext, payloadLen, n)
	}
	if len(h) < HeaderLen+ext {
		return decodeErr("length", "%d header bytes, %s needs %d", len(h), op, HeaderLen+ext)
	}
	// Zeroed, then field by field: a composite literal is built on the
	// stack and copied, its narrow stores read back by wide loads, which
	// stalls the processor (a fifth of a shared-memory reader's time per
	// 64-byte frame went there).
	*f = Frame{}
	f.Opcode = op
	f.SE = flags&flagSE != 0
	f.AckReq = flags&flagAckReq != 0
	f.DstQPN = be.Uint32(h[12:16])
	f.PSN = be.Uint32(h[16:20])
	f.SrcQPN = be.Uint32(h[20:24])
	b, h = b[:n], h[:HeaderLen+ext]
	copy(f.SrcGID[:], h[24:40])
	copy(f.DstGID[:], h[40:56])
	p := h[HeaderLen:]
	if op.has(hRETH) {
		f.RETH = RETH{VA: be.Uint64(p[0:8]), RKey: be.Uint32(p[8:12]), DMALength: be.Uint32(p[12:16])}
		p = p[rethLen:]
	}
	if op.has(hAtomic) {
		f.Atomic = AtomicETH{VA: be.Uint64(p[0:8]), RKey: be.Uint32(p[8:12]), SwapAdd: be.Uint64(p[12:20]), Compare: be.Uint64(p[20:28]), Size: 8}
		p = p[atomicLen:]
	}
	if op.has(hMasked) {
		if p[13] != 0 || p[14] != 0 || p[15] != 0 {
			return decodeErr("atomic", "non-zero reserved bytes")
		}
		a := AtomicETH{VA: be.Uint64(p[0:8]), RKey: be.Uint32(p[8:12]), Size: p[12], SwapAdd: be.Uint64(p[16:24])}
		if op == OpMaskedFetchAdd {
			a.FieldBoundary = be.Uint64(p[24:32])
			if be.Uint64(p[32:40]) != 0 || be.Uint64(p[40:48]) != 0 {
				return decodeErr("atomic", "masked FETCH_ADD with non-zero mask words")
			}
		} else {
			a.Compare = be.Uint64(p[24:32])
			a.SwapMask = be.Uint64(p[32:40])
			a.CompareMask = be.Uint64(p[40:48])
		}
		f.Atomic = a
		p = p[maskedLen:]
	}
	if op.has(hImm) {
		copy(f.Imm[:], p[0:4])
		p = p[immLen:]
	}
	if op.has(hIETH) {
		f.InvRKey = be.Uint32(p[0:4])
		p = p[iethLen:]
	}
	if op.has(hAETH) {
		w := be.Uint32(p[0:4])
		f.AETH = AETH{Syndrome: Syndrome(w >> 24), MSN: w & mask24}
		p = p[aethLen:]
	}
	if op.has(hAtomicAck) {
		f.AtomicAck = be.Uint64(p[0:8])
	}
	if HeaderLen+ext < n {
		f.Payload = b[HeaderLen+ext : n]
	}
	if err := f.Validate(); err != nil {
		fe := err.(*FrameError)
		fe.Op = "decode"
		return fe
	}
	return nil
}
