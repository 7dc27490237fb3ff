package wire

import "fmt"

// Opcode is the BTH opcode of a frame. The values of the standard operations
// are the InfiniBand Reliable Connection opcodes (transport bits 000); the two
// masked atomics, which IBA does not define, use values from the
// manufacturer-specific range (transport bits 111).
type Opcode uint8

// RC opcodes.
const (
	OpSendFirst          Opcode = 0x00
	OpSendMiddle         Opcode = 0x01
	OpSendLast           Opcode = 0x02
	OpSendLastImm        Opcode = 0x03
	OpSendOnly           Opcode = 0x04
	OpSendOnlyImm        Opcode = 0x05
	OpWriteFirst         Opcode = 0x06
	OpWriteMiddle        Opcode = 0x07
	OpWriteLast          Opcode = 0x08
	OpWriteLastImm       Opcode = 0x09
	OpWriteOnly          Opcode = 0x0a
	OpWriteOnlyImm       Opcode = 0x0b
	OpReadRequest        Opcode = 0x0c
	OpReadResponseFirst  Opcode = 0x0d
	OpReadResponseMiddle Opcode = 0x0e
	OpReadResponseLast   Opcode = 0x0f
	OpReadResponseOnly   Opcode = 0x10
	OpAck                Opcode = 0x11
	OpAtomicAck          Opcode = 0x12
	OpCompareSwap        Opcode = 0x13
	OpFetchAdd           Opcode = 0x14
	OpSendLastInv        Opcode = 0x16 // SEND_LAST_WITH_INVALIDATE
	OpSendOnlyInv        Opcode = 0x17 // SEND_ONLY_WITH_INVALIDATE
	OpMaskedCompareSwap  Opcode = 0xe0
	OpMaskedFetchAdd     Opcode = 0xe1
)

// hdr is a set of extension headers that follow the base header.
type hdr uint16

const (
	hRETH      hdr = 1 << iota // RDMA extended transport header
	hAtomic                    // AtomicETH, 28 bytes
	hMasked                    // masked AtomicETH, 48 bytes
	hImm                       // ImmDt
	hAETH                      // ACK extended transport header
	hAtomicAck                 // AtomicAckETH
	hIETH                      // invalidate extended transport header
	hPayload                   // the opcode may carry payload
	hSE                        // the solicited-event bit is meaningful
)

// Extension header sizes in bytes, in the order they appear on the wire:
// RETH, AtomicETH (plain or masked), ImmDt or IETH, AETH, AtomicAckETH.
const (
	rethLen      = 16 // va 8, rkey 4, dma length 4
	atomicLen    = 28 // va 8, rkey 4, swap/add 8, compare 8
	maskedLen    = 48 // va 8, rkey 4, size 1, reserved 3, swap/add 8, compare 8, mask 8, mask 8
	immLen       = 4
	iethLen      = 4 // the R_Key to invalidate
	aethLen      = 4 // syndrome 1, MSN 3
	atomicAckLen = 8
)

type opInfo struct {
	name string
	h    hdr
}

var opTable = [256]opInfo{
	OpSendFirst:          {"SEND_FIRST", hPayload},
	OpSendMiddle:         {"SEND_MIDDLE", hPayload},
	OpSendLast:           {"SEND_LAST", hPayload | hSE},
	OpSendLastImm:        {"SEND_LAST_IMM", hPayload | hSE | hImm},
	OpSendOnly:           {"SEND_ONLY", hPayload | hSE},
	OpSendOnlyImm:        {"SEND_ONLY_IMM", hPayload | hSE | hImm},
	OpWriteFirst:         {"RDMA_WRITE_FIRST", hPayload | hRETH},
	OpWriteMiddle:        {"RDMA_WRITE_MIDDLE", hPayload},
	OpWriteLast:          {"RDMA_WRITE_LAST", hPayload},
	OpWriteLastImm:       {"RDMA_WRITE_LAST_IMM", hPayload | hSE | hImm},
	OpWriteOnly:          {"RDMA_WRITE_ONLY", hPayload | hRETH},
	OpWriteOnlyImm:       {"RDMA_WRITE_ONLY_IMM", hPayload | hSE | hRETH | hImm},
	OpReadRequest:        {"RDMA_READ_REQUEST", hRETH},
	OpReadResponseFirst:  {"RDMA_READ_RESPONSE_FIRST", hPayload | hAETH},
	OpReadResponseMiddle: {"RDMA_READ_RESPONSE_MIDDLE", hPayload},
	OpReadResponseLast:   {"RDMA_READ_RESPONSE_LAST", hPayload | hAETH},
	OpReadResponseOnly:   {"RDMA_READ_RESPONSE_ONLY", hPayload | hAETH},
	OpAck:                {"ACKNOWLEDGE", hAETH},
	OpAtomicAck:          {"ATOMIC_ACKNOWLEDGE", hAETH | hAtomicAck},
	OpCompareSwap:        {"COMPARE_SWAP", hAtomic},
	OpFetchAdd:           {"FETCH_ADD", hAtomic},
	OpSendLastInv:        {"SEND_LAST_WITH_INVALIDATE", hPayload | hSE | hIETH},
	OpSendOnlyInv:        {"SEND_ONLY_WITH_INVALIDATE", hPayload | hSE | hIETH},
	OpMaskedCompareSwap:  {"MASKED_COMPARE_SWAP", hMasked},
	OpMaskedFetchAdd:     {"MASKED_FETCH_ADD", hMasked},
}

// Opcodes lists every opcode this package encodes and decodes.
var Opcodes = []Opcode{
	OpSendFirst, OpSendMiddle, OpSendLast, OpSendLastImm, OpSendOnly, OpSendOnlyImm,
	OpWriteFirst, OpWriteMiddle, OpWriteLast, OpWriteLastImm, OpWriteOnly, OpWriteOnlyImm,
	OpReadRequest, OpReadResponseFirst, OpReadResponseMiddle, OpReadResponseLast, OpReadResponseOnly,
	OpAck, OpAtomicAck, OpCompareSwap, OpFetchAdd, OpSendLastInv, OpSendOnlyInv, OpMaskedCompareSwap, OpMaskedFetchAdd,
}

// Valid reports whether o is an opcode this package knows.
func (o Opcode) Valid() bool { return opTable[o].name != "" }

func (o Opcode) String() string {
	if n := opTable[o].name; n != "" {
		return n
	}
	return fmt.Sprintf("Opcode(0x%02x)", uint8(o))
}

func (o Opcode) has(h hdr) bool { return opTable[o].h&h != 0 }

// HasRETH reports whether frames of this opcode carry a RETH.
func (o Opcode) HasRETH() bool { return o.has(hRETH) }

// HasAtomicETH reports whether frames of this opcode carry an AtomicETH
// (plain or masked).
func (o Opcode) HasAtomicETH() bool { return o.has(hAtomic | hMasked) }

// IsMaskedAtomic reports whether o is a masked (extended) atomic.
func (o Opcode) IsMaskedAtomic() bool { return o.has(hMasked) }

// HasImm reports whether frames of this opcode carry ImmDt.
func (o Opcode) HasImm() bool { return o.has(hImm) }

// HasIETH reports whether frames of this opcode carry an IETH (the R_Key
// that a SEND with invalidate names).
func (o Opcode) HasIETH() bool { return o.has(hIETH) }

// HasAETH reports whether frames of this opcode carry an AETH.
func (o Opcode) HasAETH() bool { return o.has(hAETH) }

// HasAtomicAckETH reports whether frames of this opcode carry an AtomicAckETH.
func (o Opcode) HasAtomicAckETH() bool { return o.has(hAtomicAck) }

// HasPayload reports whether frames of this opcode may carry payload; frames
// of other opcodes must have an empty payload.
func (o Opcode) HasPayload() bool { return o.has(hPayload) }

// AllowsSE reports whether the solicited-event bit may be set on this opcode
// (the last or only packet of a SEND, or of a WRITE with immediate).
func (o Opcode) AllowsSE() bool { return o.has(hSE) }

// IsRequest reports whether o is sent by a requester (as opposed to a
// response: READ response, ACK, ATOMIC ACK).
func (o Opcode) IsRequest() bool {
	switch o {
	case OpReadResponseFirst, OpReadResponseMiddle, OpReadResponseLast, OpReadResponseOnly, OpAck, OpAtomicAck:
		return false
	}
	return o.Valid()
}

// extLen is the total length of the extension headers of opcode o (zero
// for an unknown one).
func (o Opcode) extLen() int { return int(extLens[o]) }

// extLens holds extLen of every opcode value: a decoder asks for it once
// per frame.
var extLens = func() (t [256]uint8) {
	for o := range t {
		t[o] = uint8(Opcode(o).sumExtLen())
	}
	return t
}()

// sumExtLen adds up the lengths of the extension headers of o.
func (o Opcode) sumExtLen() int {
	h := opTable[o].h
	n := 0
	if h&hRETH != 0 {
		n += rethLen
	}
	if h&hAtomic != 0 {
		n += atomicLen
	}
	if h&hMasked != 0 {
		n += maskedLen
	}
	if h&hImm != 0 {
		n += immLen
	}
	if h&hIETH != 0 {
		n += iethLen
	}
	if h&hAETH != 0 {
		n += aethLen
	}
	if h&hAtomicAck != 0 {
		n += atomicAckLen
	}
	return n
}
