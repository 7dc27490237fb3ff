package mlx5

import (
	"encoding/binary"
	"fmt"
)

// Send queue geometry.
const (
	WQEBB    = 64 // bytes in a send WQE basic block; the SQ index counts these
	DSSize   = 16 // bytes in one data segment unit, the unit of the ctrl ds field
	MaxDS    = 63 // the ds field is 6 bits: at most 1008 bytes per WQE
	dsPerBB  = WQEBB / DSSize
	maxSGEs  = MaxDS - 2 // ctrl + raddr + 61 data segments
	maxPIBit = 0xffff    // the SQ index is a 16-bit counter
)

// Opcode modifiers (ctrl bits [31:24]).
const (
	// OpModMaskedAtomic4 and OpModMaskedAtomic8 select the operand size of
	// ATOMIC_MASKED_CS/FA: 0x08 | (log2(bytes) - 2).
	OpModMaskedAtomic4 uint8 = 0x08
	OpModMaskedAtomic8 uint8 = 0x09
	opModMaskedBase    uint8 = 0x08

	// WAIT modes. Only WaitOnCQ uses WaitSeg; the other two take a different
	// segment that this package does not build or parse.
	OpModWaitCQPI uint8 = 0 // MLX5_OPC_MOD_WAIT_CQ_PI: wait for a CQE index
	OpModWaitData uint8 = 1 // wait on a memory value
	OpModWaitTime uint8 = 2 // wait for a time
)

// MaskedAtomicOpMod returns the opmod for a masked atomic on an operand of
// size bytes (4, 8, 16, ...: a power of two from 4).
func MaskedAtomicOpMod(size int) (uint8, bool) {
	if size < 4 || size > 1<<9 || size&(size-1) != 0 {
		return 0, false
	}
	log := 0
	for 1<<log < size {
		log++
	}
	return opModMaskedBase | uint8(log-2), true
}

// FenceMode is the fm field of the ctrl fm_ce_se byte (bits [7:5]).
type FenceMode uint8

const (
	FenceNone                   FenceMode = 0
	FenceInitiatorSmall         FenceMode = 1 // wait for earlier local operations (local invalidate, UMR)
	Fence                       FenceMode = 2 // wait until earlier RDMA READ and atomic WQEs of this QP completed
	FenceStrongOrdering         FenceMode = 3
	FenceAndInitiatorSmallFence FenceMode = 4 // rdma-core's IBV_SEND_FENCE encoding (0x80)
)

// CompletionMode is the ce field of the ctrl fm_ce_se byte (bits [3:2]).
type CompletionMode uint8

const (
	CompletionOnError      CompletionMode = 0 // CQE only if the WQE fails (unsignaled)
	CompletionOnFirstError CompletionMode = 1 // CQE only for the first error
	CompletionAlways       CompletionMode = 2 // always a CQE (signaled)
	CompletionAndEvent     CompletionMode = 3 // CQE and EQE
)

// CtrlFlags is the fm_ce_se byte of the control segment: fence mode in
// [7:5], completion mode in [3:2], solicited event in [1]; bits 4 and 0 are
// reserved.
type CtrlFlags uint8

// Ready-made fm_ce_se values (gpunetio's doca_gpu_dev_verbs_wqe_ctrl_flags
// and rdma-core's MLX5_WQE_CTRL_*).
const (
	CtrlCQUpdate            CtrlFlags = CtrlFlags(CompletionAlways) << 2            // 0x08
	CtrlFirstCQEError       CtrlFlags = CtrlFlags(CompletionOnFirstError) << 2      // 0x04
	CtrlSolicited           CtrlFlags = 1 << 1                                      // 0x02
	CtrlInitiatorSmallFence CtrlFlags = CtrlFlags(FenceInitiatorSmall) << 5         // 0x20
	CtrlFence               CtrlFlags = CtrlFlags(Fence) << 5                       // 0x40
	CtrlStrongOrdering      CtrlFlags = CtrlFlags(FenceStrongOrdering) << 5         // 0x60
	CtrlFenceAndSmallFence  CtrlFlags = CtrlFlags(FenceAndInitiatorSmallFence) << 5 // 0x80
	CtrlCQUpdateFence       CtrlFlags = CtrlCQUpdate | CtrlFence                    // 0x48
)

// MakeCtrlFlags assembles an fm_ce_se byte. fm is truncated to 3 bits and ce
// to 2.
func MakeCtrlFlags(fm FenceMode, ce CompletionMode, solicited bool) CtrlFlags {
	f := CtrlFlags(fm&7)<<5 | CtrlFlags(ce&3)<<2
	if solicited {
		f |= CtrlSolicited
	}
	return f
}

// Fence returns the fence mode.
func (f CtrlFlags) Fence() FenceMode { return FenceMode(f >> 5) }

// Completion returns the completion mode.
func (f CtrlFlags) Completion() CompletionMode { return CompletionMode(f>>2) & 3 }

// Solicited reports the solicited-event bit.
func (f CtrlFlags) Solicited() bool { return f&CtrlSolicited != 0 }

// Signaled reports whether a successful completion of the WQE produces a CQE
// (ce = 2 or 3).
func (f CtrlFlags) Signaled() bool { return f.Completion() >= CompletionAlways }

// WQEError is a send or receive WQE that the NIC would refuse: it carries the
// syndrome of the error CQE the hardware would write. It is returned both by
// the parser (the emulator turns it into that CQE) and by the encoder (which
// refuses to build such a WQE). It unwraps to its Syndrome, so
// errors.Is(err, SyndromeLocalQPOpErr) works.
type WQEError struct {
	Op       string // "encode WQE", "parse WQE", "parse receive WQE"
	Index    uint16 // SQ index (WQEBBs) or receive WQE index
	Opcode   WQEOpcode
	Syndrome Syndrome
	Reason   string
}

func (e *WQEError) Error() string {
	return fmt.Sprintf("%s at index %d (%s): %s: syndrome %s (0x%02x)",
		e.Op, e.Index, e.Opcode, e.Reason, e.Syndrome.String(), uint8(e.Syndrome))
}

// Unwrap returns the syndrome.
func (e *WQEError) Unwrap() error { return e.Syndrome }

func wqeErr(op string, index uint16, opc WQEOpcode, s Syndrome, format string, args ...any) *WQEError {
	return &WQEError{Op: op, Index: index, Opcode: opc, Syndrome: s, Reason: fmt.Sprintf(format, args...)}
}

// WQE is one decoded send WQE, or the description of one to build. Which
// fields matter depends on Ctrl.Opcode:
//
//	NOP                            Ctrl only
//	RDMA_WRITE, RDMA_WRITE_IMM     RAddr, then SGEs or Inline
//	SEND, SEND_IMM, SEND_INVAL     SGEs or Inline
//	RDMA_READ                      RAddr, SGEs (scatter list)
//	ATOMIC_CS, ATOMIC_FA           RAddr, Atomic, SGEs[0] (8-byte result buffer)
//	ATOMIC_MASKED_CS               RAddr, MaskedCS, SGEs[0] (result); size from Ctrl.OpMod
//	ATOMIC_MASKED_FA               RAddr, MaskedFA, SGEs[0] (result); size from Ctrl.OpMod
//	WAIT, SEND_EN                  Wait
//	DUMP                           SGEs[0] (the local buffer)
//
// Fields that do not apply to the opcode are ignored by Encode and left zero
// by Decode.
type WQE struct {
	Ctrl     CtrlSeg
	RAddr    RAddrSeg
	SGEs     []DataSeg
	IsInline bool   // the data is one inline segment holding Inline
	Inline   []byte // inline payload (copied into the ring)
	Atomic   AtomicSeg
	MaskedCS MaskedCSSeg
	MaskedFA MaskedFASeg
	Wait     WaitSeg
}

// WQEHead is what every builder needs besides the opcode's own operands.
type WQEHead struct {
	Index uint16    // the SQ producer index (WQEBBs) where the WQE starts
	QPN   uint32    // 24 bits
	Flags CtrlFlags // fm_ce_se
}

func (h WQEHead) ctrl(op WQEOpcode) CtrlSeg {
	return CtrlSeg{WQEIndex: h.Index, QPN: h.QPN, Opcode: op, Flags: h.Flags}
}

// NewNOP describes a NOP: one ds, completes at once (a CQE if signaled).
func NewNOP(h WQEHead) WQE { return WQE{Ctrl: h.ctrl(WQEOpNop)} }

// NewRDMAWrite describes an RDMA WRITE gathering from sges.
func NewRDMAWrite(h WQEHead, r RAddrSeg, sges ...DataSeg) WQE {
	return WQE{Ctrl: h.ctrl(WQEOpRDMAWrite), RAddr: r, SGEs: sges}
}

// NewRDMAWriteInline describes an RDMA WRITE whose payload is copied into the
// WQE.
func NewRDMAWriteInline(h WQEHead, r RAddrSeg, data []byte) WQE {
	return WQE{Ctrl: h.ctrl(WQEOpRDMAWrite), RAddr: r, IsInline: true, Inline: data}
}

// NewRDMAWriteImm describes an RDMA WRITE with immediate (imm as on the wire).
func NewRDMAWriteImm(h WQEHead, imm uint32, r RAddrSeg, sges ...DataSeg) WQE {
	w := NewRDMAWrite(h, r, sges...)
	w.Ctrl.Opcode, w.Ctrl.Imm = WQEOpRDMAWriteImm, imm
	return w
}

// NewRDMAWriteImmInline describes an inline RDMA WRITE with immediate.
func NewRDMAWriteImmInline(h WQEHead, imm uint32, r RAddrSeg, data []byte) WQE {
	w := NewRDMAWriteInline(h, r, data)
	w.Ctrl.Opcode, w.Ctrl.Imm = WQEOpRDMAWriteImm, imm
	return w
}

// NewRDMARead describes an RDMA READ scattering into sges.
func NewRDMARead(h WQEHead, r RAddrSeg, sges ...DataSeg) WQE {
	return WQE{Ctrl: h.ctrl(WQEOpRDMARead), RAddr: r, SGEs: sges}
}

// NewSend describes a SEND gathering from sges.
func NewSend(h WQEHead, sges ...DataSeg) WQE {
	return WQE{Ctrl: h.ctrl(WQEOpSend), SGEs: sges}
}

// NewSendInline describes a SEND with an inline payload.
func NewSendInline(h WQEHead, data []byte) WQE {
	return WQE{Ctrl: h.ctrl(WQEOpSend), IsInline: true, Inline: data}
}

// NewSendImm describes a SEND with immediate.
func NewSendImm(h WQEHead, imm uint32, sges ...DataSeg) WQE {
	w := NewSend(h, sges...)
	w.Ctrl.Opcode, w.Ctrl.Imm = WQEOpSendImm, imm
	return w
}

// NewSendImmInline describes an inline SEND with immediate.
func NewSendImmInline(h WQEHead, imm uint32, data []byte) WQE {
	w := NewSendInline(h, data)
	w.Ctrl.Opcode, w.Ctrl.Imm = WQEOpSendImm, imm
	return w
}

// NewAtomicCS describes an 8-byte compare-and-swap. result receives the
// original remote value; its ByteCount is set to 8.
func NewAtomicCS(h WQEHead, r RAddrSeg, swap, compare uint64, result DataSeg) WQE {
	result.ByteCount = 8
	return WQE{Ctrl: h.ctrl(WQEOpAtomicCS), RAddr: r, Atomic: AtomicSeg{SwapAdd: swap, Compare: compare},
		SGEs: []DataSeg{result}}
}

// NewAtomicFA describes an 8-byte fetch-and-add (compare field 0, as in the
// PRM layout). result receives the original value; its ByteCount is set to 8.
func NewAtomicFA(h WQEHead, r RAddrSeg, add uint64, result DataSeg) WQE {
	result.ByteCount = 8
	return WQE{Ctrl: h.ctrl(WQEOpAtomicFA), RAddr: r, Atomic: AtomicSeg{SwapAdd: add}, SGEs: []DataSeg{result}}
}

// NewMaskedCS describes a masked compare-and-swap on a size-byte operand (4
// or 8). result.ByteCount is set to size. A size other than 4 or 8 is
// reported by Encode.
func NewMaskedCS(h WQEHead, size int, r RAddrSeg, s MaskedCSSeg, result DataSeg) WQE {
	w := WQE{Ctrl: h.ctrl(WQEOpAtomicMaskedCS), RAddr: r, MaskedCS: s}
	w.setMaskedSize(size, result)
	return w
}

// NewMaskedFA describes a masked fetch-and-add on a size-byte operand (4 or
// 8). result.ByteCount is set to size.
func NewMaskedFA(h WQEHead, size int, r RAddrSeg, s MaskedFASeg, result DataSeg) WQE {
	w := WQE{Ctrl: h.ctrl(WQEOpAtomicMaskedFA), RAddr: r, MaskedFA: s}
	w.setMaskedSize(size, result)
	return w
}

func (w *WQE) setMaskedSize(size int, result DataSeg) {
	if size > 0 && size <= 1<<30 {
		result.ByteCount = uint32(size)
	}
	w.Ctrl.OpMod, _ = MaskedAtomicOpMod(size)
	w.SGEs = []DataSeg{result}
}

// NewWait describes a WAIT (opmod CQ PI): this SQ stalls until CQ cqn has
// produced the CQE with index maxIndex (24 bits). The issuing QP needs
// cd_master.
func NewWait(h WQEHead, cqn, maxIndex uint32) WQE {
	w := WQE{Ctrl: h.ctrl(WQEOpWait), Wait: WaitSeg{MaxIndex: maxIndex, QPNCQN: cqn}}
	w.Ctrl.OpMod = OpModWaitCQPI
	return w
}

// NewSendEn describes a SEND_EN: enable slave SQ sqn up to its WQE index
// maxIndex.
func NewSendEn(h WQEHead, sqn uint32, maxIndex uint16) WQE {
	return WQE{Ctrl: h.ctrl(WQEOpSendEn), Wait: WaitSeg{MaxIndex: uint32(maxIndex), QPNCQN: sqn}}
}

// NewDump describes a DUMP: the NIC reads buf locally and sends nothing (a
// PCIe ordering barrier after RDMA READs into GPU memory).
func NewDump(h WQEHead, buf DataSeg) WQE {
	return WQE{Ctrl: h.ctrl(WQEOpDump), SGEs: []DataSeg{buf}}
}

// OperandSize returns the atomic operand size in bytes: 8 for ATOMIC_CS/FA,
// the size the opmod selects for masked atomics, 0 for other opcodes or an
// opmod that is not a masked-atomic size.
func (w *WQE) OperandSize() int {
	switch w.Ctrl.Opcode {
	case WQEOpAtomicCS, WQEOpAtomicFA:
		return 8
	case WQEOpAtomicMaskedCS, WQEOpAtomicMaskedFA:
		if w.Ctrl.OpMod&^7 != opModMaskedBase {
			return 0
		}
		return 4 << (w.Ctrl.OpMod & 7)
	}
	return 0
}

// Length returns the message length: the inline length, or the sum of the
// data segments' byte counts (for atomics, DUMP: the local buffer's length).
func (w *WQE) Length() uint64 {
	if w.IsInline {
		return uint64(len(w.Inline))
	}
	var n uint64
	for _, s := range w.SGEs {
		n += uint64(s.ByteCount)
	}
	return n
}

// CtrlHeadLen is the length of the part of a control segment that
// DecodeCtrlHead reads: the bytes a send doorbell carries.
const CtrlHeadLen = 8

// DecodeCtrlHead reads the fields of a control segment that lie in its
// first CtrlHeadLen bytes (opmod, wqe_index, opcode, qpn, ds): what a NIC
// needs to find a WQE, size it and check its owner before it parses the
// rest. It is DecodeCtrlSeg for those fields only, for the per-WQE path;
// a test checks it against DecodeCtrlSeg. The fields come back as values,
// not as a CtrlSeg: a struct built and copied per WQE costs a
// store-forwarding stall (about 10 ns) on amd64. b must hold at least
// CtrlHeadLen bytes.
func DecodeCtrlHead(b []byte) (opMod uint8, wqeIndex uint16, opcode WQEOpcode, qpn uint32, ds uint8) {
	_ = b[CtrlHeadLen-1]
	dw0 := binary.BigEndian.Uint32(b[0:4])
	dw1 := binary.BigEndian.Uint32(b[4:8])
	return uint8(dw0 >> 24), uint16(dw0 >> 8), WQEOpcode(dw0), dw1 >> 8, uint8(dw1) & MaxDS
}

// WQEBBs returns how many basic blocks a WQE of ds units occupies.
func WQEBBs(ds uint8) int { return (int(ds) + dsPerBB - 1) / dsPerBB }

// CheckRing reports whether ring is a valid SQ ring: a power-of-two number of
// WQEBBs, at least one.
func CheckRing(ring []byte) error {
	if !validRing(len(ring)) {
		return fmt.Errorf("mlx5: ring of %d bytes is not a power-of-two number of %d-byte WQEBBs", len(ring), WQEBB)
	}
	return nil
}

// validRing is CheckRing's test on a ring of n bytes, small enough to
// inline into the per-WQE parser: a power-of-two number of WQEBBs is a
// power-of-two number of bytes, WQEBB or more (WQEBB is a power of two).
func validRing(n int) bool { return n >= WQEBB && n&(n-1) == 0 }

// seg returns the 16 bytes of segment k of the WQE that starts at byte start
// of ring, wrapping to the ring start (ring length is a power of two).
func seg(ring []byte, start, k int) []byte {
	off := (start + k*DSSize) & (len(ring) - 1)
	return ring[off : off+DSSize]
}

// fixedDS returns the segments an opcode has besides its data/inline part,
// ctrl included, and whether it takes a variable data part.
func fixedDS(op WQEOpcode) (fixed int, variable bool) {
	switch op {
	case WQEOpRDMAWrite, WQEOpRDMAWriteImm, WQEOpRDMARead:
		return 2, true
	case WQEOpSend, WQEOpSendImm, WQEOpSendInval:
		return 1, true
	}
	return 0, false
}

// DS computes the ds value the WQE needs, or an error naming why it cannot be
// built (the syndrome is what the NIC would report for such a WQE).
func (w *WQE) DS() (uint8, error) {
	const op = "encode WQE"
	c := &w.Ctrl
	fail := func(s Syndrome, format string, args ...any) (uint8, error) {
		return 0, wqeErr(op, c.WQEIndex, c.Opcode, s, format, args...)
	}
	var ds int
	switch c.Opcode {
	case WQEOpNop:
		ds = 1
	case WQEOpWait, WQEOpSendEn:
		if c.Opcode == WQEOpWait && c.OpMod != OpModWaitCQPI {
			return fail(SyndromeLocalQPOpErr, "WAIT opmod %d is not supported (only CQ PI)", c.OpMod)
		}
		ds = 2
	case WQEOpDump:
		if len(w.SGEs) != 1 {
			return fail(SyndromeLocalQPOpErr, "DUMP takes exactly one data segment, got %d", len(w.SGEs))
		}
		ds = 2
	case WQEOpAtomicCS, WQEOpAtomicFA, WQEOpAtomicMaskedCS, WQEOpAtomicMaskedFA:
		size := w.OperandSize()
		if size != 4 && size != 8 || (size == 4 && c.Opcode != WQEOpAtomicMaskedCS && c.Opcode != WQEOpAtomicMaskedFA) {
			return fail(SyndromeLocalQPOpErr, "opmod 0x%02x is not a supported operand size (4 or 8 bytes)", c.OpMod)
		}
		if len(w.SGEs) != 1 {
			return fail(SyndromeLocalQPOpErr, "atomic takes exactly one result data segment, got %d", len(w.SGEs))
		}
		if w.SGEs[0].ByteCount != uint32(size) {
			return fail(SyndromeLocalLengthErr, "result segment byte_count %d differs from the %d-byte operand",
				w.SGEs[0].ByteCount, size)
		}
		ds = 4
		if c.Opcode == WQEOpAtomicMaskedCS && size == 8 {
			ds = 5
		}
	default:
		fixed, variable := fixedDS(c.Opcode)
		if !variable {
			return fail(SyndromeLocalQPOpErr, "opcode is not supported on an RC send queue")
		}
		if w.IsInline {
			if c.Opcode == WQEOpRDMARead {
				return fail(SyndromeLocalQPOpErr, "RDMA_READ cannot carry inline data")
			}
			if len(w.Inline) > MaxDS*DSSize {
				return fail(SyndromeLocalQPOpErr, "inline payload of %d bytes exceeds the WQE size", len(w.Inline))
			}
			ds = fixed + InlineDS(len(w.Inline))
		} else {
			if len(w.SGEs) > maxSGEs {
				return fail(SyndromeLocalQPOpErr, "%d data segments exceed the WQE size", len(w.SGEs))
			}
			ds = fixed + len(w.SGEs)
		}
	}
	usesSGEs := c.Opcode == WQEOpDump || w.OperandSize() != 0
	if _, variable := fixedDS(c.Opcode); variable && !w.IsInline {
		usesSGEs = true
	}
	if usesSGEs {
		for i, s := range w.SGEs {
			if s.ByteCount&InlineFlag != 0 {
				return fail(SyndromeLocalLengthErr, "data segment %d: byte_count 0x%x has bit 31 set", i, s.ByteCount)
			}
			if s.ByteCount == 0 {
				return fail(SyndromeLocalLengthErr, "data segment %d has byte_count 0 (read by the NIC as 2 GiB)", i)
			}
		}
	}
	if ds > MaxDS {
		return fail(SyndromeLocalQPOpErr, "WQE needs %d data segment units, more than %d", ds, MaxDS)
	}
	if uint64(c.QPN) > ctrlQPN.Max() {
		return fail(SyndromeLocalQPOpErr, "QPN 0x%x exceeds 24 bits", c.QPN)
	}
	return uint8(ds), nil
}

// Encode writes the WQE into ring at the slot of w.Ctrl.WQEIndex and returns
// the number of WQEBBs it occupies (the amount to advance the producer index
// by). It computes and stores w.Ctrl.DS. ring is the whole SQ ring (2^n
// WQEBBs); segments past the ring end continue at slot 0, and an inline
// payload may be split across the end. Bytes past the last segment in the
// last WQEBB are left as they were. Nothing is written if an error is
// returned.
//
// Encode does not order its stores for a concurrent reader: publish the WQE
// with a barrier and a doorbell record update afterwards.
func (w *WQE) Encode(ring []byte) (int, error) {
	if err := CheckRing(ring); err != nil {
		return 0, err
	}
	ds, err := w.DS()
	if err != nil {
		return 0, err
	}
	n := WQEBBs(ds)
	if n*WQEBB > len(ring) {
		return 0, wqeErr("encode WQE", w.Ctrl.WQEIndex, w.Ctrl.Opcode, SyndromeLocalQPOpErr,
			"WQE of %d WQEBBs does not fit a ring of %d", n, len(ring)/WQEBB)
	}
	w.Ctrl.DS = ds
	start := int(w.Ctrl.WQEIndex) * WQEBB & (len(ring) - 1)
	w.Ctrl.Put(seg(ring, start, 0))
	k := 1
	putData := func() {
		if w.IsInline {
			putInline(ring, start, k, w.Inline)
			return
		}
		for _, s := range w.SGEs {
			s.Put(seg(ring, start, k))
			k++
		}
	}
	switch w.Ctrl.Opcode {
	case WQEOpRDMAWrite, WQEOpRDMAWriteImm, WQEOpRDMARead:
		w.RAddr.Put(seg(ring, start, k))
		k++
		putData()
	case WQEOpSend, WQEOpSendImm, WQEOpSendInval:
		putData()
	case WQEOpAtomicCS, WQEOpAtomicFA:
		w.RAddr.Put(seg(ring, start, 1))
		w.Atomic.Put(seg(ring, start, 2))
		w.SGEs[0].Put(seg(ring, start, 3))
	case WQEOpAtomicMaskedCS, WQEOpAtomicMaskedFA:
		w.RAddr.Put(seg(ring, start, 1))
		k = 3
		switch {
		case w.Ctrl.Opcode == WQEOpAtomicMaskedFA && w.OperandSize() == 4:
			w.MaskedFA.Put4(seg(ring, start, 2))
		case w.Ctrl.Opcode == WQEOpAtomicMaskedFA:
			w.MaskedFA.Put8(seg(ring, start, 2))
		case w.OperandSize() == 4:
			w.MaskedCS.Put4(seg(ring, start, 2))
		default:
			w.MaskedCS.Put8(seg(ring, start, 2), seg(ring, start, 3))
			k = 4
		}
		w.SGEs[0].Put(seg(ring, start, k))
	case WQEOpWait, WQEOpSendEn:
		w.Wait.Put(seg(ring, start, 1))
	case WQEOpDump:
		w.SGEs[0].Put(seg(ring, start, 1))
	}
	return n, nil
}

// putInline writes an inline segment (header and payload) starting at
// segment k; the payload continues at the ring start when it reaches the end.
func putInline(ring []byte, start, k int, data []byte) {
	h := InlineHeader(uint32(len(data)))
	off := (start + k*DSSize) & (len(ring) - 1)
	copy(ring[off:], h[:])
	off += len(h)
	for len(data) > 0 {
		off &= len(ring) - 1
		c := copy(ring[off:], data)
		data = data[c:]
		off += c
	}
}

// readInline copies n inline payload bytes that start at byte off of ring,
// wrapping at the ring end, appending to dst.
func readInline(dst, ring []byte, off, n int) []byte {
	for n > 0 {
		off &= len(ring) - 1
		c := min(n, len(ring)-off)
		dst = append(dst, ring[off:off+c]...)
		n -= c
		off += c
	}
	return dst
}

// ParseWQE decodes the send WQE at SQ index index of ring, validating it as
// the NIC would (the checks decidable from the WQE bytes alone). A *WQEError carries the syndrome of the error CQE to report.
// It never panics and its work is bounded by the 63-unit WQE size, whatever
// the bytes are.
func ParseWQE(ring []byte, index uint16) (WQE, error) {
	var w WQE
	err := w.Decode(ring, index)
	return w, err
}

// Decode is ParseWQE into w, reusing the capacity of w.SGEs and w.Inline so
// that a poller that keeps one WQE allocates nothing in steady state.
//
// Checks, in order, each failing with LOCAL_QP_OP_ERR unless noted:
//   - ctrl wqe_index equals index (a mismatch is a software bug; the
//     emulator reports it rather than guessing);
//   - the opcode is one Supported on an RC SQ;
//   - ds is not 0 and the WQE fits in the ring;
//   - ds matches the opcode's fixed layout exactly (NOP: any ds >= 1,
//     the rest is padding; WAIT/SEND_EN/DUMP: 2; atomics: 4, 8-byte masked
//     CS: 5), or for WRITE/SEND/READ covers the raddr segment and a data part
//     with nothing left over;
//   - masked atomics: opmod selects 4 or 8 bytes; WAIT: opmod CQ PI;
//   - a data part is either pointer segments (bit 31 clear) or, except
//     for READ, one inline segment whose payload fits in ds;
//   - a pointer segment with byte_count 0 is LOCAL_LENGTH_ERR (hardware
//     would read it as 2 GiB; rdma-core never emits it), and so is an atomic
//     result segment whose byte_count differs from the operand size.
//
// Checks that need the QP (its QPN, state, max_wqe_sz_sq, log_msg_max, MRs)
// are the caller's.
func (w *WQE) Decode(ring []byte, index uint16) error {
	sges, inl := w.SGEs[:0], w.Inline[:0]
	*w = WQE{SGEs: sges, Inline: inl}
	if !validRing(len(ring)) {
		return wqeErr(opParseWQE, index, 0, SyndromeLocalQPOpErr, "%v", CheckRing(ring))
	}
	// No closures below: a closure that captures the ctrl segment copies
	// it on every call of Decode, and none of them would inline. The error
	// paths go through w.fail, which puts back the slices Decode started
	// with.
	start := int(index) * WQEBB & (len(ring) - 1)
	c := &w.Ctrl
	c.read(seg(ring, start, 0))
	if c.WQEIndex != index {
		return w.fail(sges, inl, index, SyndromeLocalQPOpErr, "ctrl wqe_index %d does not match the SQ index", c.WQEIndex)
	}
	if !c.Opcode.Supported() {
		return w.fail(sges, inl, index, SyndromeLocalQPOpErr, "opcode is not supported on an RC send queue")
	}
	ds := int(c.DS)
	if ds == 0 {
		return w.fail(sges, inl, index, SyndromeLocalQPOpErr, "ds is 0")
	}
	if WQEBBs(c.DS)*WQEBB > len(ring) {
		return w.fail(sges, inl, index, SyndromeLocalQPOpErr, "ds %d spans more than the ring's %d WQEBBs",
			ds, len(ring)/WQEBB)
	}
	switch c.Opcode {
	case WQEOpRDMAWrite, WQEOpRDMAWriteImm, WQEOpRDMARead, WQEOpSend, WQEOpSendImm, WQEOpSendInval:
		return w.decodeData(ring, start, ds, index, sges, inl)
	case WQEOpNop:
		return nil
	case WQEOpWait, WQEOpSendEn:
		if c.Opcode == WQEOpWait && c.OpMod != OpModWaitCQPI {
			return w.fail(sges, inl, index, SyndromeLocalQPOpErr, "WAIT opmod %d is not supported (only CQ PI)", c.OpMod)
		}
		if ds != 2 {
			return w.dsMismatch(sges, inl, index, ds, 2)
		}
		w.Wait.read(seg(ring, start, 1))
		return nil
	case WQEOpDump:
		if ds != 2 {
			return w.dsMismatch(sges, inl, index, ds, 2)
		}
		d := DecodeDataSeg(seg(ring, start, 1))
		if d.ByteCount&InlineFlag != 0 {
			return w.fail(sges, inl, index, SyndromeLocalQPOpErr, "DUMP data segment has the inline bit set")
		}
		if d.ByteCount == 0 {
			return w.fail(sges, inl, index, SyndromeLocalLengthErr, "DUMP data segment has byte_count 0")
		}
		w.SGEs = append(w.SGEs, d)
		return nil
	case WQEOpAtomicCS, WQEOpAtomicFA:
		if ds != 4 {
			return w.dsMismatch(sges, inl, index, ds, 4)
		}
		w.RAddr.read(seg(ring, start, 1))
		w.Atomic.read(seg(ring, start, 2))
		return w.result(ring, start, 3, 8, index, sges, inl)
	case WQEOpAtomicMaskedCS, WQEOpAtomicMaskedFA:
		size := w.OperandSize()
		if size != 4 && size != 8 {
			return w.fail(sges, inl, index, SyndromeLocalQPOpErr, "opmod 0x%02x is not a supported masked atomic size", c.OpMod)
		}
		want := 4
		if c.Opcode == WQEOpAtomicMaskedCS && size == 8 {
			want = 5
		}
		if ds != want {
			return w.dsMismatch(sges, inl, index, ds, want)
		}
		w.RAddr.read(seg(ring, start, 1))
		switch {
		case c.Opcode == WQEOpAtomicMaskedFA && size == 4:
			w.MaskedFA = DecodeMaskedFA4(seg(ring, start, 2))
		case c.Opcode == WQEOpAtomicMaskedFA:
			w.MaskedFA = DecodeMaskedFA8(seg(ring, start, 2))
		case size == 4:
			w.MaskedCS = DecodeMaskedCS4(seg(ring, start, 2))
		default:
			w.MaskedCS = DecodeMaskedCS8(seg(ring, start, 2), seg(ring, start, 3))
		}
		return w.result(ring, start, want-1, size, index, sges, inl)
	}
	return nil // every Supported opcode has a case above
}

// opParseWQE is the Op of the errors of (*WQE).Decode.
const opParseWQE = "parse WQE"

// fail is an error of (*WQE).Decode: it restores the SGE and inline slices
// Decode started with (their lengths 0) and returns the *WQEError.
func (w *WQE) fail(sges []DataSeg, inl []byte, index uint16, s Syndrome, format string, args ...any) error {
	w.SGEs, w.Inline = sges, inl
	return wqeErr(opParseWQE, index, w.Ctrl.Opcode, s, format, args...)
}

// dsMismatch is the error of a ds that differs from the opcode's fixed
// layout.
func (w *WQE) dsMismatch(sges []DataSeg, inl []byte, index uint16, ds, want int) error {
	return w.fail(sges, inl, index, SyndromeLocalQPOpErr, "ds is %d, the opcode takes %d", ds, want)
}

// result appends the result segment of an atomic, unit k, which must
// hold exactly size bytes.
func (w *WQE) result(ring []byte, start, k, size int, index uint16, sges []DataSeg, inl []byte) error {
	d := DecodeDataSeg(seg(ring, start, k))
	if d.ByteCount != uint32(size) {
		return w.fail(sges, inl, index, SyndromeLocalLengthErr,
			"result segment byte_count 0x%x differs from the %d-byte operand", d.ByteCount, size)
	}
	w.SGEs = append(w.SGEs, d)
	return nil
}

// decodeData parses WRITE, WRITE_IMM, READ, SEND, SEND_IMM and SEND_INVAL
// past the ctrl segment: the raddr segment where the opcode has one, then
// pointer segments or one inline segment up to ds.
func (w *WQE) decodeData(ring []byte, start, ds int, index uint16, sges []DataSeg, inl []byte) error {
	op := w.Ctrl.Opcode
	k, _ := fixedDS(op)
	if ds < k {
		return w.fail(sges, inl, index, SyndromeLocalQPOpErr, "ds %d is below the opcode's minimum %d", ds, k)
	}
	if k == 2 {
		w.RAddr.read(seg(ring, start, 1))
	}
	for ; k < ds; k++ {
		d := DecodeDataSeg(seg(ring, start, k))
		if d.ByteCount&InlineFlag != 0 {
			n := int(d.ByteCount &^ InlineFlag)
			switch {
			case op == WQEOpRDMARead:
				return w.fail(sges, inl, index, SyndromeLocalQPOpErr, "RDMA_READ data segment %d has the inline bit set", k)
			case len(w.SGEs) > 0:
				return w.fail(sges, inl, index, SyndromeLocalQPOpErr, "inline segment at unit %d follows pointer segments", k)
			case n > (ds-k)*DSSize-4:
				return w.fail(sges, inl, index, SyndromeLocalQPOpErr,
					"inline length %d does not fit in the %d units left of ds %d", n, ds-k, ds)
			case k+InlineDS(n) != ds:
				return w.fail(sges, inl, index, SyndromeLocalQPOpErr,
					"ds %d leaves units after the %d-byte inline segment", ds, n)
			}
			w.IsInline = true
			w.Inline = readInline(w.Inline, ring, start+k*DSSize+4, n)
			return nil
		}
		if d.ByteCount == 0 {
			return w.fail(sges, inl, index, SyndromeLocalLengthErr, "data segment at unit %d has byte_count 0", k)
		}
		w.SGEs = append(w.SGEs, d)
	}
	return nil
}

// ParseRecvWQE decodes the scatter list of one receive WQE (an RQ entry, or
// an SRQ entry after its 16-byte next segment): data segments until one with
// lkey InvalidLKey (0x100) or the end of wqe. It appends them to dst and
// returns the result. wqe is one stride (16 * 2^log_rq_stride bytes).
//
// A segment with bit 31 set is LOCAL_QP_OP_ERR (receive WQEs have no inline
// data) and one with byte_count 0 is LOCAL_LENGTH_ERR, as on the send side
// (rdma-core skips zero-length SGEs). It never panics.
func ParseRecvWQE(dst []DataSeg, wqe []byte, index uint16) ([]DataSeg, error) {
	const op = "parse receive WQE"
	if len(wqe) == 0 || len(wqe)%DSSize != 0 {
		return dst, wqeErr(op, index, 0, SyndromeLocalQPOpErr, "receive WQE stride %d is not a positive multiple of %d",
			len(wqe), DSSize)
	}
	for off := 0; off < len(wqe); off += DSSize {
		d := DecodeDataSeg(wqe[off : off+DSSize])
		if d.LKey == InvalidLKey {
			break
		}
		if d.ByteCount&InlineFlag != 0 {
			return dst, wqeErr(op, index, 0, SyndromeLocalQPOpErr, "scatter entry %d has bit 31 set", off/DSSize)
		}
		if d.ByteCount == 0 {
			return dst, wqeErr(op, index, 0, SyndromeLocalLengthErr, "scatter entry %d has byte_count 0", off/DSSize)
		}
		dst = append(dst, d)
	}
	return dst, nil
}

// RecvTerminator is the segment that ends a receive WQE's scatter list early:
// byte_count 0, lkey InvalidLKey.
var RecvTerminator = DataSeg{LKey: InvalidLKey}

// SRQNextSegSize is the size of the "next" segment that starts each WQE of a
// linked-list SRQ, before its scatter list. Its bytes 2..3 hold the BE16 index
// of the next WQE in the free list (rdma-core's mlx5_wqe_srq_next_seg; not in
// our sources, so treat the offset as unverified).
const SRQNextSegSize = 16

// srqNextIndexOffset is the byte offset of next_wqe_index in the next
// segment.
const srqNextIndexOffset = 2

// SRQNextIndex reads next_wqe_index from a linked-list SRQ WQE; 0 if wqe is
// shorter than the next segment.
func SRQNextIndex(wqe []byte) uint16 {
	if len(wqe) < SRQNextSegSize {
		return 0
	}
	return binary.BigEndian.Uint16(wqe[srqNextIndexOffset:])
}

// PutSRQNextIndex writes next_wqe_index into the next segment that starts a
// linked-list SRQ WQE (wqe holds at least SRQNextSegSize bytes), leaving
// the segment's other bytes as they are.
func PutSRQNextIndex(wqe []byte, next uint16) {
	_ = wqe[SRQNextSegSize-1] // the whole segment, as the reader requires
	binary.BigEndian.PutUint16(wqe[srqNextIndexOffset:], next)
}
