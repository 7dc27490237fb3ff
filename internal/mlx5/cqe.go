package mlx5

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// CQESize is the size of a CQE (cqe_sz = 0, struct mlx5_cqe64).
const CQESize = 64

// CQEInitOpOwn is the op_own value every CQE is initialised to: opcode
// INVALID and owner 1, which reads as "not yet written" both to a poller that
// checks the owner bit only (gpunetio's) and to one that also rejects
// opcode INVALID (rdma-core's).
const CQEInitOpOwn byte = 0xf1

// IsError reports whether a CQE with this opcode uses the error layout
// (REQ_ERR, RESP_ERR).
func (o CQEOpcode) IsError() bool { return o == CQEReqErr || o == CQERespErr }

// CQE formats (op_own bits [3:2]).
const (
	CQEFormatNormal     uint8 = 0
	CQEFormatInline32   uint8 = 1 // 32 bytes of data scattered into the CQE
	CQEFormatInline64   uint8 = 2 // 64 bytes scattered (128-byte CQEs)
	CQEFormatCompressed uint8 = 3 // mini-CQE array
)

// CQE is one 64-byte completion (struct mlx5_cqe64),
// field by field. Error CQEs (opcode REQ_ERR / RESP_ERR) reuse the layout:
// bytes 52..55, the low half of Timestamp in a normal CQE, hold HWErrSynd,
// HWSyndType, VendorSyndrome and Syndrome. Decode and Encode pick the view
// from Opcode: for an error opcode only the high 32 bits of Timestamp are
// kept (bytes 48..51) and the four syndrome fields are used; for any other
// opcode the four syndrome fields are ignored. With that rule Decode followed
// by Encode reproduces any 64 bytes except the reserved ones (0..1, 4..16 and
// 18..21), which Encode writes as zero.
type CQE struct {
	WQEID        uint16 // bytes 2..3: striding RQ / tag matching only
	MLPath       uint8  // byte 17
	SLID         uint16 // bytes 22..23
	FlagsRQPN    uint32 // bytes 24..27
	HdsIPExt     uint8  // byte 28
	L4HdrTypeEtc uint8  // byte 29
	VLANInfo     uint16 // bytes 30..31
	SRQNUIdx     uint32 // bytes 32..35: SRQ number or the QP's user_index (24 bits used)
	// ImmInvalPKey (bytes 36..39) is the immediate of *_IMM completions, as
	// on the wire (big-endian bytes), the invalidated rkey, or the P_Key.
	ImmInvalPKey uint32
	App          uint8  // byte 40
	AppOp        uint8  // byte 41
	AppInfo      uint16 // bytes 42..43
	ByteCnt      uint32 // bytes 44..47
	Timestamp    uint64 // bytes 48..55 (48..51 in an error CQE)

	// Error view, bytes 52..55 (error opcodes only).
	HWErrSynd      uint8
	HWSyndType     uint8
	VendorSyndrome uint8
	Syndrome       Syndrome

	// WQEOpcode and QPN are sop_drop_qpn (s_wqe_opcode_qpn in an error CQE),
	// bytes 56..59: [31:24] the opcode of the completed send WQE (requester
	// CQEs; other bits for responder CQEs), [23:0] the QP number.
	WQEOpcode WQEOpcode
	QPN       uint32

	WQECounter uint16 // bytes 60..61: SQ index (WQEBBs) of the WQE's first WQEBB, or the RQ counter
	Signature  uint8  // byte 62

	// op_own, byte 63.
	Opcode    CQEOpcode // [7:4]
	Format    uint8     // [3:2]
	Solicited bool      // [1]
	Owner     uint8     // [0]
}

// CQE fields, in the bit-address form of the PRM tables.
var (
	cqeWQEID        = F(0x10, 16)
	cqeMLPath       = F(0x88, 8)
	cqeSLID         = F(0xb0, 16)
	cqeFlagsRQPN    = F(0xc0, 32)
	cqeHdsIPExt     = F(0xe0, 8)
	cqeL4HdrTypeEtc = F(0xe8, 8)
	cqeVLANInfo     = F(0xf0, 16)
	cqeSRQNUIdx     = F(0x100, 32)
	cqeImmInvalPKey = F(0x120, 32)
	cqeApp          = F(0x140, 8)
	cqeAppOp        = F(0x148, 8)
	cqeAppInfo      = F(0x150, 16)
	cqeByteCnt      = F(0x160, 32)
	cqeTimestamp    = F(0x180, 64)
	cqeTimestampHi  = F(0x180, 32)
	cqeHWErrSynd    = F(0x1a0, 8)
	cqeHWSyndType   = F(0x1a8, 8)
	cqeVendorSynd   = F(0x1b0, 8)
	cqeSyndrome     = F(0x1b8, 8)
	cqeWQEOpcode    = F(0x1c0, 8)
	cqeQPN          = F(0x1c8, 24)
	cqeWQECounter   = F(0x1e0, 16)
	cqeSignature    = F(0x1f0, 8)
	cqeOpcode       = F(0x1f8, 4)
	cqeFormat       = F(0x1fc, 2)
	cqeSolicited    = F(0x1fe, 1)
	cqeOwner        = F(0x1ff, 1)
)

// OpOwn returns the op_own byte of the CQE. Out-of-range Opcode, Format and
// Owner values are truncated to their fields.
func (c *CQE) OpOwn() byte {
	b := byte(c.Opcode&0xf)<<4 | (c.Format&3)<<2 | c.Owner&1
	if c.Solicited {
		b |= 1 << 1
	}
	return b
}

// Encode writes the CQE to b[0:64] (every byte, reserved ones as 0). Values
// wider than their fields (QPN over 24 bits, ...) are truncated. b must be at
// least CQESize bytes. Encode does not order its stores: use WriteCQE for a
// slot that a poller may be reading.
func (c *CQE) Encode(b []byte) error {
	if len(b) < CQESize {
		return fmt.Errorf("mlx5: encode CQE: buffer of %d bytes, need %d", len(b), CQESize)
	}
	c.encode62(b[:CQESize])
	b[63] = c.OpOwn()
	return nil
}

// encode62 writes bytes 0..62. The engine encodes a CQE per completion,
// so the stores are written out at the byte offsets of the fields above
// (every field is whole bytes; TestCQEEncodeFields checks the offsets
// against the table).
func (c *CQE) encode62(b []byte) {
	b = b[:CQESize]
	clear(b[:63])
	be := binary.BigEndian
	be.PutUint16(b[2:], c.WQEID)
	b[17] = c.MLPath
	be.PutUint16(b[22:], c.SLID)
	be.PutUint32(b[24:], c.FlagsRQPN)
	b[28] = c.HdsIPExt
	b[29] = c.L4HdrTypeEtc
	be.PutUint16(b[30:], c.VLANInfo)
	be.PutUint32(b[32:], c.SRQNUIdx)
	be.PutUint32(b[36:], c.ImmInvalPKey)
	b[40] = c.App
	b[41] = c.AppOp
	be.PutUint16(b[42:], c.AppInfo)
	be.PutUint32(b[44:], c.ByteCnt)
	if (c.Opcode & 0xf).IsError() {
		be.PutUint32(b[48:], uint32(c.Timestamp>>32))
		b[52] = c.HWErrSynd
		b[53] = c.HWSyndType
		b[54] = c.VendorSyndrome
		b[55] = uint8(c.Syndrome)
	} else {
		be.PutUint64(b[48:], c.Timestamp)
	}
	be.PutUint32(b[56:], uint32(c.WQEOpcode)<<24|c.QPN&0xffffff)
	be.PutUint16(b[60:], c.WQECounter)
	b[62] = c.Signature
}

// DecodeCQE reads a CQE from b[0:64]. Any 64 bytes decode (reserved bytes
// are ignored); a shorter b is an error. It never panics.
func DecodeCQE(b []byte) (c CQE, err error) {
	if len(b) < CQESize {
		return CQE{}, fmt.Errorf("mlx5: decode CQE: %d bytes, need %d", len(b), CQESize)
	}
	c.read(b[:CQESize])
	return c, nil
}

// read decodes the 64 bytes of b into c. A poller decodes a CQE per
// completion, so it reads each 64-bit word that holds a field once and
// takes the fields out at the byte offsets of the table above, as encode62
// writes them (TestDecodeCQEFields checks it against Get over the table).
// c is filled in place: a CQE literal built and then copied out would be
// stored in narrow pieces and reloaded in wide ones.
func (c *CQE) read(b []byte) {
	b = b[:CQESize]
	be := binary.BigEndian
	w0 := be.Uint64(b[0:])  // bytes 0..7: wqe_id at 2..3
	w2 := be.Uint64(b[16:]) // 16..23: ml_path at 17, slid at 22..23
	w3 := be.Uint64(b[24:]) // 24..31: flags_rqpn, hds_ip_ext, l4_hdr_type_etc, vlan_info
	w4 := be.Uint64(b[32:]) // 32..39: srqn_uidx, imm_inval_pkey
	w5 := be.Uint64(b[40:]) // 40..47: app, app_op, app_info, byte_cnt
	w6 := be.Uint64(b[48:]) // 48..55: timestamp, or its high half and the syndromes
	w7 := be.Uint64(b[56:]) // 56..63: sop_drop_qpn, wqe_counter, signature, op_own
	c.WQEID = uint16(w0 >> 32)
	c.MLPath = uint8(w2 >> 48)
	c.SLID = uint16(w2)
	c.FlagsRQPN = uint32(w3 >> 32)
	c.HdsIPExt = uint8(w3 >> 24)
	c.L4HdrTypeEtc = uint8(w3 >> 16)
	c.VLANInfo = uint16(w3)
	c.SRQNUIdx = uint32(w4 >> 32)
	c.ImmInvalPKey = uint32(w4)
	c.App = uint8(w5 >> 56)
	c.AppOp = uint8(w5 >> 48)
	c.AppInfo = uint16(w5 >> 32)
	c.ByteCnt = uint32(w5)
	c.WQEOpcode = WQEOpcode(w7 >> 56)
	c.QPN = uint32(w7>>32) & 0xffffff
	c.WQECounter = uint16(w7 >> 16)
	c.Signature = uint8(w7 >> 8)
	opOwn := uint8(w7)
	c.Opcode = CQEOpcode(opOwn >> 4)
	c.Format = opOwn >> 2 & 3
	c.Solicited = opOwn&2 != 0
	c.Owner = opOwn & 1
	if c.Opcode.IsError() {
		c.Timestamp = w6 &^ 0xffffffff
		c.HWErrSynd = uint8(w6 >> 24)
		c.HWSyndType = uint8(w6 >> 16)
		c.VendorSyndrome = uint8(w6 >> 8)
		c.Syndrome = Syndrome(w6)
	} else {
		c.Timestamp = w6
	}
}

// Err returns a *CQEError for an error CQE (REQ_ERR, RESP_ERR) and nil for
// any other opcode.
func (c *CQE) Err() error {
	if !c.Opcode.IsError() {
		return nil
	}
	return &CQEError{Opcode: c.Opcode, Syndrome: c.Syndrome, VendorSyndrome: c.VendorSyndrome,
		WQEOpcode: c.WQEOpcode, QPN: c.QPN, WQECounter: c.WQECounter}
}

// CQEOwnerBit returns the owner bit the NIC writes for producer counter
// producer on a CQ of 2^logSize entries: the parity of the pass,
// (producer >> logSize) & 1.
func CQEOwnerBit(producer uint32, logSize uint) uint8 { return uint8(producer>>logSize) & 1 }

// CQEOwned reports whether the CQE with op_own byte opOwn, at consumer index
// ci of a CQ of 2^logSize entries, has been written for this pass and belongs
// to software: its owner bit equals (ci >> logSize) & 1 and its opcode is not
// INVALID. The opcode test makes the rule safe whether the ring was
// initialised to 0xF1 (CQEInitOpOwn) or to rdma-core's 0xF0. Read the rest of
// the CQE only after an acquire barrier.
func CQEOwned(opOwn byte, ci uint32, logSize uint) bool {
	return opOwn>>4 != byte(CQEInvalid) && opOwn&1 == CQEOwnerBit(ci, logSize)
}

// InitCQEs sets the op_own byte of every 64-byte entry of ring to
// CQEInitOpOwn (the rest is left as is). Trailing bytes that do not form a
// whole entry are not touched.
func InitCQEs(ring []byte) {
	for off := 0; off+CQESize <= len(ring); off += CQESize {
		ring[off+CQESize-1] = CQEInitOpOwn
	}
}

// WriteCQE encodes c into slot as the NIC does for producer counter producer
// on a CQ of 2^logSize entries: c.Owner is replaced by the pass parity, and
// the owner byte becomes visible last. Bytes 0..62 are written first, then
// byte 63. When slot is 8-byte aligned (CQ rings always are) bytes 56..63 go
// out as one atomic 64-bit store after bytes 0..55, so a poller that sees the
// new owner bit with an acquire load also sees every other byte; otherwise the
// stores are plain, in the same order. slot must be at least CQESize bytes.
func WriteCQE(slot []byte, c CQE, producer uint32, logSize uint) error {
	if len(slot) < CQESize {
		return fmt.Errorf("mlx5: write CQE: slot of %d bytes, need %d", len(slot), CQESize)
	}
	c.Owner = CQEOwnerBit(producer, logSize)
	var img [CQESize]byte
	c.encode62(img[:])
	img[63] = c.OpOwn()
	tail := unsafe.Pointer(&slot[56])
	if uintptr(tail)%8 != 0 {
		copy(slot[:63], img[:63])
		slot[63] = img[63]
		return nil
	}
	copy(slot[:56], img[:56])
	atomic.StoreUint64((*uint64)(tail), binary.NativeEndian.Uint64(img[56:]))
	return nil
}
