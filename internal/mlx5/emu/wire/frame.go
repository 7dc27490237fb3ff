package wire

//go:generate go run ../../../enumgen

import "fmt"

// Frame is one packet on the emulated wire: the InfiniBand transport headers
// of a RoCE v2 packet plus the two things the NIC learns from the IP/UDP/GRH
// layers (source and destination GID; the source QPN, which real hardware
// keeps in the QP context, travels explicitly here).
//
// Which extension headers a frame carries is fixed by its Opcode, as in IBA:
// fields of headers the opcode does not carry are ignored by AppendEncode and
// left zero by Decode.
type Frame struct {
	// BTH.
	Opcode Opcode
	SE     bool   // solicited event; only on opcodes where Opcode.AllowsSE
	AckReq bool   // the requester asks for an ACK of this packet
	DstQPN uint32 // 24 bits
	PSN    uint32 // 24 bits

	// What the IP/UDP (or GRH) layers give the receiving NIC.
	SrcGID GID
	DstGID GID    // Port.Send routes by this
	SrcQPN uint32 // 24 bits

	RETH      RETH      // WRITE first/only (+imm), READ request
	Atomic    AtomicETH // COMPARE_SWAP, FETCH_ADD and the masked atomics
	Imm       [4]byte   // ImmDt, verbatim (network order as the WQE/CQE hold it)
	InvRKey   uint32    // IETH: the R_Key a SEND with invalidate names
	AETH      AETH      // READ response first/last/only, ACK, ATOMIC ACK
	AtomicAck uint64    // AtomicAckETH: the original remote value

	// Payload of SEND, WRITE and READ response packets. A frame returned by
	// Decode aliases the decoded buffer here; a frame handed to a handler is
	// valid only during the call (copy what you keep).
	Payload []byte

	// Ref is the payload of a request carried by reference instead of in
	// Payload (which is then nil): it reaches only a port of this process
	// (see PayloadRef), is valid only during the handler's call, and is
	// not part of the encoding. Decode never sets it.
	Ref PayloadRef

	// Route is the connection a frame arrived on: set by the port on every
	// frame that came over TCP, zero for in-process frames. It is not part
	// of the encoding. A response must carry the Route of the request it
	// answers: Port.Send sends it back on that connection (see the package
	// documentation, Delivery).
	Route Route

	// More is set by the port on a frame it hands to the handler when the
	// connection it came on already holds the next frame, between the same
	// two QPs (DstQPN and SrcQPN): the handler is called again for that
	// frame right after this one returns, unless the connection breaks. A
	// responder may then hold back the ACK of this frame and let the next
	// one's cover it, as a ConnectX coalesces ACKs under a burst. Never set
	// on in-process frames; not part of the encoding.
	More bool

	// Hold is a sender's hint on a request it sends: more requests to the
	// same destination follow at once. A shared-memory link may then write
	// the frame into its ring without publishing it yet, up to shmHoldMax
	// frames in a row; the next frame sent on that link without Hold, or
	// Port.Flush, publishes every frame written before it. A sender that
	// sets it calls Flush when it stops sending. Over TCP and in process it
	// changes nothing; not part of the encoding.
	Hold bool
}

// PayloadRef is the payload of a request frame that one port hands to
// another port of the same process by reference (Frame.Ref): the receiving
// handler copies the bytes from where the sender keeps them straight to
// where they land, instead of the sender copying them into the frame
// first. Port.Send delivers such a frame in-process or not at all
// (ErrNotLocal); the reference is valid only during the handler's call and
// never leaves the process.
type PayloadRef interface {
	// Len is the payload's length in bytes (1 to MaxPayload).
	Len() int
	// ReadAt copies len(p) bytes of the payload from offset off into p, as
	// io.ReaderAt does. A handler that knows the reference's concrete type
	// may move the bytes another way (device to device, say); ReadAt is
	// what every handler can do.
	ReadAt(p []byte, off int64) (n int, err error)
}

// PayloadLen is the length of the frame's payload, by value or by
// reference.
func (f *Frame) PayloadLen() int {
	if f.Ref != nil {
		return f.Ref.Len()
	}
	return len(f.Payload)
}

// Route names the connection a frame arrived on (opaque; the zero Route is
// in-process delivery). Copy it from a request into its responses.
type Route struct{ c *conn }

// RETH is the RDMA extended transport header.
type RETH struct {
	VA        uint64 // remote virtual address
	RKey      uint32
	DMALength uint32 // length of the whole RDMA message in bytes
}

// AtomicETH is the atomic extended transport header. Plain COMPARE_SWAP and
// FETCH_ADD operate on 8 bytes and use VA, RKey, SwapAdd and Compare. The
// masked atomics also use Size (4 or 8) and the masks: SwapMask and
// CompareMask for MASKED_COMPARE_SWAP, FieldBoundary for MASKED_FETCH_ADD
// (the PRM defines their semantics). With Size 4 every operand
// must fit in 32 bits.
type AtomicETH struct {
	VA            uint64
	RKey          uint32
	SwapAdd       uint64 // swap value (CS) or addend (FA)
	Compare       uint64 // compare value (CS); zero for FA
	SwapMask      uint64 // masked CS
	CompareMask   uint64 // masked CS
	FieldBoundary uint64 // masked FA: a 1 bit marks the top bit of a field
	Size          uint8  // operand bytes: 8 for plain atomics; 4 or 8 for masked ones
}

// AETH is the ACK extended transport header.
type AETH struct {
	Syndrome Syndrome
	MSN      uint32 // 24 bits: message sequence number
}

// AckKind is the type of an AETH syndrome (its top three bits).
type AckKind uint8

const (
	KindACK    AckKind = 0 // positive acknowledgement
	KindRNRNak AckKind = 1 // receiver not ready; low 5 bits: RNR timer code
	KindNak    AckKind = 3 // negative acknowledgement; low 5 bits: NakCode
)

// NakCode is the reason carried by a NAK.
type NakCode uint8

const (
	NakPSNSequenceError NakCode = 0
	NakInvalidRequest   NakCode = 1
	NakRemoteAccess     NakCode = 2
	NakRemoteOperation  NakCode = 3
)

// Syndrome is the AETH syndrome byte: bits 7..5 the AckKind, bits 4..0 the
// credit count (ACK), the RNR timer code (RNR NAK, in the IBA encoding of
// min_rnr_nak) or the NakCode (NAK).
type Syndrome uint8

// AckSyndrome is a positive acknowledgement with a 5-bit credit count (31
// means "no credit information", what a responder without end-to-end flow
// control sends).
func AckSyndrome(credits uint8) Syndrome { return Syndrome(credits & 0x1f) }

// RNRNakSyndrome is a receiver-not-ready NAK with a 5-bit timer code.
func RNRNakSyndrome(timer uint8) Syndrome { return Syndrome(uint8(KindRNRNak)<<5 | timer&0x1f) }

// NakSyndrome is a NAK with the given code.
func NakSyndrome(code NakCode) Syndrome { return Syndrome(uint8(KindNak)<<5 | uint8(code)&0x1f) }

// Kind is the syndrome's type.
func (s Syndrome) Kind() AckKind { return AckKind(s >> 5) }

// Value is the low five bits: credits, RNR timer code or NAK code.
func (s Syndrome) Value() uint8 { return uint8(s) & 0x1f }

// Code is the NAK code of a NAK syndrome.
func (s Syndrome) Code() NakCode { return NakCode(s.Value()) }

func (s Syndrome) valid() bool {
	switch s.Kind() {
	case KindACK, KindRNRNak:
		return true
	case KindNak:
		return s.Code() <= NakRemoteOperation
	}
	return false
}

func (s Syndrome) String() string {
	switch s.Kind() {
	case KindACK:
		return fmt.Sprintf("ACK(credits=%d)", s.Value())
	case KindRNRNak:
		return fmt.Sprintf("RNR_NAK(timer=%d)", s.Value())
	case KindNak:
		return "NAK(" + s.Code().String() + ")"
	}
	return fmt.Sprintf("Syndrome(0x%02x)", uint8(s))
}

const mask24 = 1<<24 - 1

// Validate checks what Decode checks, without encoding: a known opcode, 24-bit
// QPNs, PSN and MSN, SE only where allowed, no payload where the opcode has
// none, a payload no larger than MaxPayload, a valid AETH syndrome, and the
// atomic operand size. A payload by reference (Ref) must be the payload of
// a request whose opcode carries one, 1 to MaxPayload bytes long, with
// Payload nil. Port.Send calls it.
func (f *Frame) Validate() error {
	op := f.Opcode
	if !op.Valid() {
		return &FrameError{Op: "validate", Field: "opcode", Reason: fmt.Sprintf("unknown opcode 0x%02x", uint8(op))}
	}
	if f.Ref != nil {
		if err := f.validateRef(); err != nil {
			return err
		}
	}
	if f.DstQPN > mask24 || f.SrcQPN > mask24 || f.PSN > mask24 {
		return &FrameError{Op: "validate", Field: "bth", Reason: fmt.Sprintf("QPN or PSN wider than 24 bits (dst qpn 0x%x, src qpn 0x%x, psn 0x%x)", f.DstQPN, f.SrcQPN, f.PSN)}
	}
	if f.SE && !op.AllowsSE() {
		return &FrameError{Op: "validate", Field: "se", Reason: "solicited event on " + op.String()}
	}
	if len(f.Payload) > 0 && !op.HasPayload() {
		return &FrameError{Op: "validate", Field: "payload", Reason: fmt.Sprintf("%d payload bytes on %s, which carries none", len(f.Payload), op)}
	}
	if len(f.Payload) > MaxPayload {
		return &FrameError{Op: "validate", Field: "payload", Reason: fmt.Sprintf("%d payload bytes exceed MaxPayload %d", len(f.Payload), MaxPayload)}
	}
	if op.HasAETH() {
		if !f.AETH.Syndrome.valid() {
			return &FrameError{Op: "validate", Field: "aeth", Reason: fmt.Sprintf("reserved syndrome 0x%02x", uint8(f.AETH.Syndrome))}
		}
		if f.AETH.MSN > mask24 {
			return &FrameError{Op: "validate", Field: "aeth", Reason: fmt.Sprintf("MSN 0x%x wider than 24 bits", f.AETH.MSN)}
		}
	}
	if op.IsMaskedAtomic() {
		if err := f.Atomic.validateMasked(op); err != nil {
			return err
		}
	}
	return nil
}

func (a *AtomicETH) validateMasked(op Opcode) error {
	switch a.Size {
	case 8:
		return nil
	case 4:
		const hi = uint64(0xffffffff00000000)
		vals := a.SwapAdd | a.Compare | a.SwapMask | a.CompareMask
		if op == OpMaskedFetchAdd {
			vals = a.SwapAdd | a.FieldBoundary
		}
		if vals&hi != 0 {
			return &FrameError{Op: "validate", Field: "atomic", Reason: "4-byte masked atomic with an operand wider than 32 bits"}
		}
		return nil
	}
	return &FrameError{Op: "validate", Field: "atomic", Reason: fmt.Sprintf("masked atomic operand size %d (want 4 or 8)", a.Size)}
}

// validateRef checks a payload by reference.
func (f *Frame) validateRef() error {
	op := f.Opcode
	reason := ""
	switch n := f.Ref.Len(); {
	case f.Payload != nil:
		reason = fmt.Sprintf("%d payload bytes by value beside a payload by reference", len(f.Payload))
	case !op.IsRequest() || !op.HasPayload():
		reason = "a payload by reference on " + op.String() + " (only requests that carry a payload)"
	case n <= 0 || n > MaxPayload:
		reason = fmt.Sprintf("a payload by reference of %d bytes (1 to MaxPayload %d)", n, MaxPayload)
	default:
		return nil
	}
	return &FrameError{Op: "validate", Field: "payload", Reason: reason}
}
