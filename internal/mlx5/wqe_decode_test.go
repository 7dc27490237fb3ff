package mlx5

import (
	"encoding/binary"
	"flag"
	"fmt"
	"strings"
	"testing"
)

var recordDecodeText = flag.Bool("record-decode-text", false,
	"print the results of TestWQEDecodeErrorText instead of checking them")

// TestWQEDecodeErrorText pins what (*WQE).Decode returns for one WQE per
// error it can report, and for one valid WQE of each layout: the whole
// error text and the whole decoded WQE, as %+v. The texts were recorded
// from the parser before its hot path was rewritten; the rewrite had to
// reproduce every one.
func TestWQEDecodeErrorText(t *testing.T) {
	h := WQEHead{Index: 2, QPN: 0x1a2b, Flags: CtrlCQUpdate}
	const base = 2 * WQEBB
	enc := func(w WQE, mutate ...func([]byte)) []byte {
		ring := make([]byte, 4*WQEBB)
		if _, err := w.Encode(ring); err != nil {
			t.Fatal(err)
		}
		for _, m := range mutate {
			m(ring)
		}
		return ring
	}
	setDS := func(ds byte) func([]byte) { return func(r []byte) { r[base+7] = ds } }
	setOp := func(op WQEOpcode) func([]byte) { return func(r []byte) { r[base+3] = byte(op) } }
	put32 := func(off int, v uint32) func([]byte) {
		return func(r []byte) { binary.BigEndian.PutUint32(r[off:], v) }
	}
	write2 := NewRDMAWrite(h, dpRemote, dpWith(dpLocal, 0, 64), dpWith(dpLocal, 64, 64))
	write3 := NewRDMAWrite(h, dpRemote, dpWith(dpLocal, 0, 64), dpWith(dpLocal, 64, 64), dpWith(dpLocal, 128, 1))
	inl := NewRDMAWriteInline(h, dpRemote, []byte("ABCDEFGHIJ"))
	fa := NewAtomicFA(h, dpRemote, 5, dpLocal)
	mcs8 := NewMaskedCS(h, 8, dpRemote, MaskedCSSeg{1, 2, 3, 4}, dpLocal)
	mfa4 := NewMaskedFA(h, 4, dpRemote, MaskedFASeg{7, 8}, dpLocal)
	wait := NewWait(h, 0x401, 1)
	dump := NewDump(h, dpWith(dpLocal, 0, 1))
	cases := []struct {
		name string
		ring []byte
	}{
		{"ring of 3 WQEBBs", make([]byte, 3*WQEBB)},
		{"wqe_index differs", enc(write2, func(r []byte) { r[base+2] = 6 })},
		{"opcode TSO", enc(write2, setOp(WQEOpTSO))},
		{"ds 0", enc(write2, setDS(0))},
		{"ds 9 reads zero segments", enc(write2, setDS(9))},
		{"ds 17 spans more than the ring", enc(write2, setDS(17))},
		{"WAIT on data", enc(wait, func(r []byte) { r[base] = OpModWaitData })},
		{"WAIT ds 3", enc(wait, setDS(3))},
		{"SEND_EN ds 1", enc(wait, setOp(WQEOpSendEn), setDS(1))},
		{"DUMP ds 3", enc(dump, setDS(3))},
		{"DUMP inline bit", enc(dump, put32(base+16, 0x80000001))},
		{"DUMP byte_count 0", enc(dump, put32(base+16, 0))},
		{"FA ds 5", enc(fa, setDS(5))},
		{"FA result byte_count 4", enc(fa, put32(base+48, 4))},
		{"CS result byte_count 16", enc(fa, setOp(WQEOpAtomicCS), put32(base+48, 16))},
		{"masked opmod 0x0a", enc(mfa4, func(r []byte) { r[base] = 0x0a })},
		{"masked opmod 0x10", enc(mfa4, func(r []byte) { r[base] = 0x10 })},
		{"masked CS 8 ds 4", enc(mcs8, setDS(4))},
		{"masked FA 4 ds 5", enc(mfa4, setDS(5))},
		{"masked CS 8 result byte_count 4", enc(mcs8, put32(base+64, 4))},
		{"masked FA 4 result byte_count 8", enc(mfa4, put32(base+48, 8))},
		{"WRITE ds 1", enc(write2, setDS(1))},
		{"SEND_IMM ds 1 no data", enc(write2, setOp(WQEOpSendImm), setDS(1))},
		{"READ inline bit", enc(write2, setOp(WQEOpRDMARead), put32(base+32, 0x80000004))},
		{"inline after a pointer", enc(write2, put32(base+48, 0x80000004))},
		{"inline length past ds", enc(inl, put32(base+32, 0x80000020))},
		{"ds leaves units after inline", enc(inl, setDS(4))},
		{"second pointer byte_count 0", enc(write2, put32(base+48, 0))},
		{"third pointer byte_count 0", enc(write3, put32(base+64, 0))},
		{"valid NOP of ds 5", enc(NewNOP(h), setDS(5))},
		{"valid WRITE of two SGEs", enc(write2)},
		{"valid SEND_INVAL", enc(NewSend(h, dpWith(dpLocal, 0, 9)), setOp(WQEOpSendInval), put32(base+12, 0xabc))},
		{"valid READ", enc(NewRDMARead(h, dpRemote, dpWith(dpLocal, 0, 4096)))},
		{"valid inline WRITE_IMM", enc(NewRDMAWriteImmInline(h, 0x01020304, dpRemote, []byte("xyz")))},
		{"valid inline SEND across the ring end", enc(NewSendInline(h, []byte(strings.Repeat("0123456789", 15))))},
		{"valid FA", enc(fa)},
		{"valid CS", enc(NewAtomicCS(h, dpRemote, 1, 2, dpLocal))},
		{"valid masked CS 8", enc(mcs8)},
		{"valid masked CS 4", enc(NewMaskedCS(h, 4, dpRemote, MaskedCSSeg{1, 2, 3, 4}, dpLocal))},
		{"valid masked FA 4", enc(mfa4)},
		{"valid masked FA 8", enc(NewMaskedFA(h, 8, dpRemote, MaskedFASeg{9, 10}, dpLocal))},
		{"valid WAIT", enc(wait)},
		{"valid SEND_EN", enc(NewSendEn(h, 0x55, 9))},
		{"valid DUMP", enc(dump)},
	}
	for _, c := range cases {
		// Capacity for one SGE: a third one makes Decode grow the slice,
		// and an error must still hand back the caller's.
		sges, inline := make([]DataSeg, 0, 1), make([]byte, 0, 64)
		w := WQE{SGEs: sges, Inline: inline}
		err := w.Decode(c.ring, h.Index)
		got := fmt.Sprintf("%v | %+v | cap %d %d", err, w, cap(w.SGEs), cap(w.Inline))
		if err != nil && (&w.SGEs[:1][0] != &sges[:1][0] || &w.Inline[:1][0] != &inline[:1][0]) {
			t.Errorf("%s: the error came with other slices than the caller's", c.name)
		}
		if *recordDecodeText {
			fmt.Printf("\t%q: `%s`,\n", c.name, got)
			continue
		}
		if want, ok := decodeText[c.name]; !ok || got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
		}
	}
}

// decodeText holds the results TestWQEDecodeErrorText expects, recorded
// with -record-decode-text from the parser before its rewrite.
var decodeText = map[string]string{
	"ring of 3 WQEBBs":                      `parse WQE at index 2 (NOP): mlx5: ring of 192 bytes is not a power-of-two number of 64-byte WQEBBs: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:0 Opcode:NOP QPN:0 DS:0 Signature:0 DCIStream:0 Flags:0 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"wqe_index differs":                     `parse WQE at index 2 (RDMA_WRITE): ctrl wqe_index 6 does not match the SQ index: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:6 Opcode:RDMA_WRITE QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"opcode TSO":                            `parse WQE at index 2 (TSO): opcode is not supported on an RC send queue: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:TSO QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"ds 0":                                  `parse WQE at index 2 (RDMA_WRITE): ds is 0: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:RDMA_WRITE QPN:6699 DS:0 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"ds 9 reads zero segments":              `parse WQE at index 2 (RDMA_WRITE): data segment at unit 4 has byte_count 0: syndrome LOCAL_LENGTH_ERR (0x01) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:RDMA_WRITE QPN:6699 DS:9 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"ds 17 spans more than the ring":        `parse WQE at index 2 (RDMA_WRITE): ds 17 spans more than the ring's 4 WQEBBs: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:RDMA_WRITE QPN:6699 DS:17 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"WAIT on data":                          `parse WQE at index 2 (WAIT): WAIT opmod 1 is not supported (only CQ PI): syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:1 WQEIndex:2 Opcode:WAIT QPN:6699 DS:2 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"WAIT ds 3":                             `parse WQE at index 2 (WAIT): ds is 3, the opcode takes 2: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:WAIT QPN:6699 DS:3 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"SEND_EN ds 1":                          `parse WQE at index 2 (SEND_EN): ds is 1, the opcode takes 2: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:SEND_EN QPN:6699 DS:1 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"DUMP ds 3":                             `parse WQE at index 2 (DUMP): ds is 3, the opcode takes 2: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:DUMP QPN:6699 DS:3 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"DUMP inline bit":                       `parse WQE at index 2 (DUMP): DUMP data segment has the inline bit set: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:DUMP QPN:6699 DS:2 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"DUMP byte_count 0":                     `parse WQE at index 2 (DUMP): DUMP data segment has byte_count 0: syndrome LOCAL_LENGTH_ERR (0x01) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:DUMP QPN:6699 DS:2 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"FA ds 5":                               `parse WQE at index 2 (ATOMIC_FA): ds is 5, the opcode takes 4: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:ATOMIC_FA QPN:6699 DS:5 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"FA result byte_count 4":                `parse WQE at index 2 (ATOMIC_FA): result segment byte_count 0x4 differs from the 8-byte operand: syndrome LOCAL_LENGTH_ERR (0x01) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:ATOMIC_FA QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:5 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"CS result byte_count 16":               `parse WQE at index 2 (ATOMIC_CS): result segment byte_count 0x10 differs from the 8-byte operand: syndrome LOCAL_LENGTH_ERR (0x01) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:ATOMIC_CS QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:5 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"masked opmod 0x0a":                     `parse WQE at index 2 (ATOMIC_MASKED_FA): opmod 0x0a is not a supported masked atomic size: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:10 WQEIndex:2 Opcode:ATOMIC_MASKED_FA QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"masked opmod 0x10":                     `parse WQE at index 2 (ATOMIC_MASKED_FA): opmod 0x10 is not a supported masked atomic size: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:16 WQEIndex:2 Opcode:ATOMIC_MASKED_FA QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"masked CS 8 ds 4":                      `parse WQE at index 2 (ATOMIC_MASKED_CS): ds is 4, the opcode takes 5: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:9 WQEIndex:2 Opcode:ATOMIC_MASKED_CS QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"masked FA 4 ds 5":                      `parse WQE at index 2 (ATOMIC_MASKED_FA): ds is 5, the opcode takes 4: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:8 WQEIndex:2 Opcode:ATOMIC_MASKED_FA QPN:6699 DS:5 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"masked CS 8 result byte_count 4":       `parse WQE at index 2 (ATOMIC_MASKED_CS): result segment byte_count 0x4 differs from the 8-byte operand: syndrome LOCAL_LENGTH_ERR (0x01) | {Ctrl:{OpMod:9 WQEIndex:2 Opcode:ATOMIC_MASKED_CS QPN:6699 DS:5 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:1 Compare:2 SwapMask:3 CompareMask:4} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"masked FA 4 result byte_count 8":       `parse WQE at index 2 (ATOMIC_MASKED_FA): result segment byte_count 0x8 differs from the 4-byte operand: syndrome LOCAL_LENGTH_ERR (0x01) | {Ctrl:{OpMod:8 WQEIndex:2 Opcode:ATOMIC_MASKED_FA QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:7 FieldBoundary:8} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"WRITE ds 1":                            `parse WQE at index 2 (RDMA_WRITE): ds 1 is below the opcode's minimum 2: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:RDMA_WRITE QPN:6699 DS:1 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"SEND_IMM ds 1 no data":                 `<nil> | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:SEND_IMM QPN:6699 DS:1 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"READ inline bit":                       `parse WQE at index 2 (RDMA_READ): RDMA_READ data segment 2 has the inline bit set: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:RDMA_READ QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"inline after a pointer":                `parse WQE at index 2 (RDMA_WRITE): inline segment at unit 3 follows pointer segments: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:RDMA_WRITE QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"inline length past ds":                 `parse WQE at index 2 (RDMA_WRITE): inline length 32 does not fit in the 1 units left of ds 3: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:RDMA_WRITE QPN:6699 DS:3 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"ds leaves units after inline":          `parse WQE at index 2 (RDMA_WRITE): ds 4 leaves units after the 10-byte inline segment: syndrome LOCAL_QP_OP_ERR (0x02) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:RDMA_WRITE QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"second pointer byte_count 0":           `parse WQE at index 2 (RDMA_WRITE): data segment at unit 3 has byte_count 0: syndrome LOCAL_LENGTH_ERR (0x01) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:RDMA_WRITE QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"third pointer byte_count 0":            `parse WQE at index 2 (RDMA_WRITE): data segment at unit 4 has byte_count 0: syndrome LOCAL_LENGTH_ERR (0x01) | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:RDMA_WRITE QPN:6699 DS:5 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"valid NOP of ds 5":                     `<nil> | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:NOP QPN:6699 DS:5 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"valid WRITE of two SGEs":               `<nil> | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:RDMA_WRITE QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[{ByteCount:64 LKey:1192961 Addr:139775415681024} {ByteCount:64 LKey:1192961 Addr:139775415681088}] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 2 64`,
	"valid SEND_INVAL":                      `<nil> | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:SEND_INVAL QPN:6699 DS:2 Signature:0 DCIStream:0 Flags:8 Imm:2748} RAddr:{Addr:0 RKey:0} SGEs:[{ByteCount:9 LKey:1192961 Addr:139775415681024}] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"valid READ":                            `<nil> | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:RDMA_READ QPN:6699 DS:3 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[{ByteCount:4096 LKey:1192961 Addr:139775415681024}] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"valid inline WRITE_IMM":                `<nil> | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:RDMA_WRITE_IMM QPN:6699 DS:3 Signature:0 DCIStream:0 Flags:8 Imm:16909060} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[] IsInline:true Inline:[120 121 122] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"valid inline SEND across the ring end": `<nil> | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:SEND QPN:6699 DS:11 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:true Inline:[48 49 50 51 52 53 54 55 56 57 48 49 50 51 52 53 54 55 56 57 48 49 50 51 52 53 54 55 56 57 48 49 50 51 52 53 54 55 56 57 48 49 50 51 52 53 54 55 56 57 48 49 50 51 52 53 54 55 56 57 48 49 50 51 52 53 54 55 56 57 48 49 50 51 52 53 54 55 56 57 48 49 50 51 52 53 54 55 56 57 48 49 50 51 52 53 54 55 56 57 48 49 50 51 52 53 54 55 56 57 48 49 50 51 52 53 54 55 56 57 48 49 50 51 52 53 54 55 56 57 48 49 50 51 52 53 54 55 56 57 48 49 50 51 52 53 54 55 56 57] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 256`,
	"valid FA":                              `<nil> | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:ATOMIC_FA QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[{ByteCount:8 LKey:1192961 Addr:139775415681024}] IsInline:false Inline:[] Atomic:{SwapAdd:5 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"valid CS":                              `<nil> | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:ATOMIC_CS QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[{ByteCount:8 LKey:1192961 Addr:139775415681024}] IsInline:false Inline:[] Atomic:{SwapAdd:1 Compare:2} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"valid masked CS 8":                     `<nil> | {Ctrl:{OpMod:9 WQEIndex:2 Opcode:ATOMIC_MASKED_CS QPN:6699 DS:5 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[{ByteCount:8 LKey:1192961 Addr:139775415681024}] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:1 Compare:2 SwapMask:3 CompareMask:4} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"valid masked CS 4":                     `<nil> | {Ctrl:{OpMod:8 WQEIndex:2 Opcode:ATOMIC_MASKED_CS QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[{ByteCount:4 LKey:1192961 Addr:139775415681024}] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:1 Compare:2 SwapMask:3 CompareMask:4} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"valid masked FA 4":                     `<nil> | {Ctrl:{OpMod:8 WQEIndex:2 Opcode:ATOMIC_MASKED_FA QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[{ByteCount:4 LKey:1192961 Addr:139775415681024}] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:7 FieldBoundary:8} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"valid masked FA 8":                     `<nil> | {Ctrl:{OpMod:9 WQEIndex:2 Opcode:ATOMIC_MASKED_FA QPN:6699 DS:4 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:139637976731648 RKey:11259137} SGEs:[{ByteCount:8 LKey:1192961 Addr:139775415681024}] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:9 FieldBoundary:10} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
	"valid WAIT":                            `<nil> | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:WAIT QPN:6699 DS:2 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:1 QPNCQN:1025}} | cap 1 64`,
	"valid SEND_EN":                         `<nil> | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:SEND_EN QPN:6699 DS:2 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:9 QPNCQN:85}} | cap 1 64`,
	"valid DUMP":                            `<nil> | {Ctrl:{OpMod:0 WQEIndex:2 Opcode:DUMP QPN:6699 DS:2 Signature:0 DCIStream:0 Flags:8 Imm:0} RAddr:{Addr:0 RKey:0} SGEs:[{ByteCount:1 LKey:1192961 Addr:139775415681024}] IsInline:false Inline:[] Atomic:{SwapAdd:0 Compare:0} MaskedCS:{Swap:0 Compare:0 SwapMask:0 CompareMask:0} MaskedFA:{Add:0 FieldBoundary:0} Wait:{MaxIndex:0 QPNCQN:0}} | cap 1 64`,
}
