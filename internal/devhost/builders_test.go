package devhost

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fill = 0xEE // bytes past the last segment stay untouched

// ctrl returns the expected first 16 bytes of a WQE (the bytes a builder does not set are zero).
func ctrl(w *wqeBytes, idx uint16, opcode uint32, qpnDS uint32, flags uint8, immRaw uint32) *wqeBytes {
	w.be32(0, uint32(idx)<<8|opcode).be32(4, qpnDS).zero(8, 11)
	w[11] = flags
	return w.raw32(12, immRaw)
}

func raddrSeg(w *wqeBytes, off int, raddr uint64, rkey uint32) *wqeBytes {
	return w.be64(off, raddr).raw32(off+8, rkey).zero(off+12, off+16)
}

func dataSeg(w *wqeBytes, off int, bytes uint32, lkey uint32, laddr uint64) *wqeBytes {
	return w.be32(off, bytes).raw32(off+4, lkey).be64(off+8, laddr)
}

func TestBuildersGolden(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16})
	const (
		qpn   = testQPN
		flags = uint8(0x08)
	)
	r := Addr{Addr: 0x7f0000001000, Key: 0x11223344}
	l := Addr{Addr: 0x7f2000000000, Key: 0x55667788}
	l1 := Addr{Addr: 0x7f3000000040, Key: 0x99aabbcc}
	inl := []byte("0123456789abcdefghijklmnopqr") // 28 bytes
	src := cBytes(t, inl)

	cases := []struct {
		name  string
		idx   uint16
		build func(w unsafe.Pointer, idx uint16)
		want  *wqeBytes
	}{
		{"nop", 0x1234, func(w unsafe.Pointer, i uint16) { q.PrepareNOP(w, i, CtrlCQUpdate) },
			ctrl(filled(fill), 0x1234, 0x00, qpn<<8|1, flags, 0).zero(0, 0)},
		{"write 1 sge", 5, func(w unsafe.Pointer, i uint16) {
			q.PrepareWrite(w, i, OpRDMAWrite, CtrlCQUpdate, 0xdeadbeef, r, l, 0x80001000)
		}, dataSeg(raddrSeg(ctrl(filled(fill), 5, 0x08, qpn<<8|3, flags, 0xdeadbeef), 16, r.Addr, r.Key), 32, 0x1000, l.Key, l.Addr)},
		{"write imm 2 sge", 0xffff, func(w unsafe.Pointer, i uint16) {
			q.PrepareWrite2(w, i, OpRDMAWriteImm, CtrlCQUpdate|CtrlFence, 7, r, l, 100, l1, 0x80000200)
		}, dataSeg(dataSeg(raddrSeg(ctrl(filled(fill), 0xffff, 0x09, qpn<<8|4, 0x48, 7), 16, r.Addr, r.Key), 32, 100, l.Key, l.Addr), 48, 0x200, l1.Key, l1.Addr)},
		{"read 1 sge (unmasked count)", 9, func(w unsafe.Pointer, i uint16) {
			q.PrepareRead(w, i, CtrlCQUpdate, r, l, 0x80000010)
		}, dataSeg(raddrSeg(ctrl(filled(fill), 9, 0x10, qpn<<8|3, flags, 0), 16, r.Addr, r.Key), 32, 0x80000010, l.Key, l.Addr)},
		{"read 2 sge (masked counts)", 10, func(w unsafe.Pointer, i uint16) {
			q.PrepareRead2(w, i, CtrlCQUpdate, r, l, 0x80000010, l1, 0x20)
		}, dataSeg(dataSeg(raddrSeg(ctrl(filled(fill), 10, 0x10, qpn<<8|4, flags, 0), 16, r.Addr, r.Key), 32, 0x10, l.Key, l.Addr), 48, 0x20, l1.Key, l1.Addr)},
		{"atomic FA adds compare_add", 11, func(w unsafe.Pointer, i uint16) {
			q.PrepareAtomic(w, i, OpAtomicFA, CtrlCQUpdate, r, l, 8, 0x1111, 0x2222)
		}, dataSeg(raddrSeg(ctrl(filled(fill), 11, 0x12, qpn<<8|4, flags, 0), 16, r.Addr, r.Key).be64(32, 0x1111).be64(40, 0x1111), 48, 8, l.Key, l.Addr)},
		{"atomic CS", 12, func(w unsafe.Pointer, i uint16) {
			q.PrepareAtomic(w, i, OpAtomicCS, CtrlCQUpdate, r, l, 8, 0x1111, 0x2222)
		}, dataSeg(raddrSeg(ctrl(filled(fill), 12, 0x11, qpn<<8|4, flags, 0), 16, r.Addr, r.Key).be64(32, 0x2222).be64(40, 0x1111), 48, 8, l.Key, l.Addr)},
		{"masked FA 4B (boundary raw, reserved 0)", 13, func(w unsafe.Pointer, i uint16) {
			q.PrepareAtomicExt(w, nil, i, OpAtomicMaskedFA, CtrlCQUpdate, r, l, AtomicExt{AddData: 0xa1a2a3a4, FieldBoundary: 0xb1b2b3b4})
		}, dataSeg(raddrSeg(ctrl(filled(fill), 13, 0x15, qpn<<8|4, flags, 0).be32(0, 0x08000000|13<<8|0x15), 16, r.Addr, r.Key).be32(32, 0xa1a2a3a4).raw32(36, 0xb1b2b3b4).zero(40, 48), 48, 4, l.Key, l.Addr)},
		{"masked FA 8B", 14, func(w unsafe.Pointer, i uint16) {
			q.PrepareAtomicExt(w, nil, i, OpAtomicMaskedFA, CtrlCQUpdate, r, l, AtomicExt{Bytes8: true, AddData: 0x0102030405060708, FieldBoundary: 0x1112131415161718})
		}, dataSeg(raddrSeg(ctrl(filled(fill), 14, 0x15, qpn<<8|4, flags, 0).be32(0, 0x09000000|14<<8|0x15), 16, r.Addr, r.Key).be64(32, 0x0102030405060708).raw64(40, 0x1112131415161718), 48, 8, l.Key, l.Addr)},
		{"masked CS 4B", 15, func(w unsafe.Pointer, i uint16) {
			q.PrepareAtomicExt(w, nil, i, OpAtomicMaskedCS, CtrlCQUpdate, r, l, AtomicExt{SwapData: 0x11, CompareData: 0x22, SwapMask: 0x33, CompareMask: 0x44})
		}, dataSeg(raddrSeg(ctrl(filled(fill), 15, 0x14, qpn<<8|4, flags, 0).be32(0, 0x08000000|15<<8|0x14), 16, r.Addr, r.Key).be32(32, 0x11).raw32(36, 0x22).be32(40, 0x33).raw32(44, 0x44), 48, 4, l.Key, l.Addr)},
		{"wait", 0x0102, func(w unsafe.Pointer, i uint16) { q.PrepareWait(w, i, CtrlCQUpdate, 41, 0x401) },
			ctrl(filled(fill), 0x0102, 0x0f, qpn<<8|2, flags, 0).zero(16, 24).be32(24, 41).be32(28, 0x401)},
		{"dump", 3, func(w unsafe.Pointer, i uint16) { q.PrepareDump(w, i, CtrlCQUpdate, l, 1) },
			dataSeg(ctrl(filled(fill), 3, 0x23, qpn<<8|2, flags, 0), 16, 1, l.Key, l.Addr)},
		{"inline header 12 bytes is DS 3", 4, func(w unsafe.Pointer, i uint16) { q.PrepareInlineHeader(w, i, CtrlCQUpdate, r, 12) },
			raddrSeg(ctrl(filled(fill), 4, 0x08, qpn<<8|3, flags, 0), 16, r.Addr, r.Key)},
		{"inline header 13 bytes is DS 4", 4, func(w unsafe.Pointer, i uint16) { q.PrepareInlineHeader(w, i, CtrlCQUpdate, r, 13) },
			raddrSeg(ctrl(filled(fill), 4, 0x08, qpn<<8|4, flags, 0), 16, r.Addr, r.Key)},
		{"write inline 28 bytes", 6, func(w unsafe.Pointer, i uint16) { q.PrepareWriteInline(w, i, CtrlCQUpdate, r, src, 28) },
			raddrSeg(ctrl(filled(fill), 6, 0x08, qpn<<8|4, flags, 0), 16, r.Addr, r.Key).be32(32, 0x8000001c).bytes(36, inl)},
		{"write inline 5 bytes", 7, func(w unsafe.Pointer, i uint16) { q.PrepareWriteInline(w, i, CtrlCQUpdate, r, src, 5) },
			raddrSeg(ctrl(filled(fill), 7, 0x08, qpn<<8|3, flags, 0), 16, r.Addr, r.Key).be32(32, 0x80000005).bytes(36, inl[:5])},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q.FillSQ(fill)
			tc.build(q.WQEPtr(uint64(tc.idx)), tc.idx)
			got := q.WQE(uint64(tc.idx))
			assert.Equal(t, [64]byte(*tc.want), got)
		})
	}
}

func TestMaskedCS8SpansTwoSlots(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16})
	r := Addr{Addr: 0x1000, Key: 0xaabbccdd}
	l := Addr{Addr: 0x2000, Key: 0x01020304}
	q.FillSQ(fill)
	q.PrepareAtomicExt(q.WQEPtr(15), q.WQEPtr(16), 15, OpAtomicMaskedCS, CtrlCQUpdate, r, l,
		AtomicExt{Bytes8: true, SwapData: 1, CompareData: 2, SwapMask: 3, CompareMask: 4})
	want0 := raddrSeg(ctrl(filled(fill), 15, 0x14, testQPN<<8|5, 0x08, 0).be32(0, 0x09000000|15<<8|0x14), 16, r.Addr, r.Key).
		be64(32, 1).raw64(40, 2).be64(48, 3).raw64(56, 4)
	assert.Equal(t, [64]byte(*want0), q.WQE(15))
	want1 := dataSeg(filled(fill), 0, 8, l.Key, l.Addr)
	assert.Equal(t, [64]byte(*want1), q.WQE(16), "data segment at the start of the next slot (wraps to slot 0)")
}

func TestAtomicExtOtherOpcodeLeavesZeroCtrl(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16})
	q.FillSQ(fill)
	q.PrepareAtomicExt(q.WQEPtr(2), nil, 2, OpAtomicFA, CtrlCQUpdate, Addr{Addr: 1, Key: 2}, Addr{Addr: 3, Key: 4}, AtomicExt{})
	got := q.WQE(2)
	assert.Equal(t, make([]byte, 16), got[:16], "another opcode leaves the ctrl all zero, as in DOCA")
}

func TestInlineData(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16})
	for _, n := range []int{1, 2, 4, 8, 3, 12, 13, 28} {
		q.FillSQ(fill)
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(0x40 + i)
		}
		require.NoError(t, q.PrepareInlineData(q.WQEPtr(1), data))
		got := q.WQE(1)
		want := filled(fill).be32(32, 0x80000000|uint32(n)).bytes(36, data)
		assert.Equalf(t, [64]byte(*want), got, "size %d", n)
	}
	require.Error(t, q.PrepareInlineData(q.WQEPtr(1), nil))
	require.Error(t, q.PrepareInlineData(q.WQEPtr(1), make([]byte, 29)))
}

// The PRM's example WQE dumps (QPN 0x1a2b, keys given big-endian there).
func TestPRMAppendixVectors(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16})
	wq := newHostQP(t, HostConfig{QPN: 0x1a2c, SQWQEs: 16})
	r := Addr{Addr: 0x7f0000001000, Key: key(0x00abcd01)}
	l := Addr{Addr: 0x7f2000000000, Key: key(0x00123401)}
	src := cBytes(t, []byte("ABCDEFGHIJ"))

	q.FillSQ(0)
	q.PrepareWrite(q.WQEPtr(5), 5, OpRDMAWrite, CtrlCQUpdate, 0, r, l, 4096)
	assert.Equal(t, parseRows(t, `
0000: 00000508 001a2b03 00000008 00000000
0010: 00007f00 00001000 00abcd01 00000000
0020: 00001000 00123401 00007f20 00000000`), q.WQE(5))

	q.PrepareWriteInline(q.WQEPtr(6), 6, CtrlCQUpdate, Addr{Addr: 0x7f0000002000, Key: r.Key}, src, 10)
	assert.Equal(t, parseRows(t, `
0000: 00000608 001a2b03 00000008 00000000
0010: 00007f00 00002000 00abcd01 00000000
0020: 8000000a 41424344 45464748 494a0000`), q.WQE(6))

	// ATOMIC_FA: the PRM dump shows compare 0; DOCA's builder stores BE64(compare_add) there too,
	// so only the other 56 bytes are compared with the appendix.
	q.PrepareAtomic(q.WQEPtr(7), 7, OpAtomicFA, CtrlCQUpdate, Addr{Addr: 0x7f0000003000, Key: r.Key},
		Addr{Addr: 0x7f2000000100, Key: l.Key}, 8, 1, 0)
	want := parseRows(t, `
0000: 00000712 001a2b04 00000008 00000000
0010: 00007f00 00003000 00abcd01 00000000
0020: 00000000 00000001 00000000 00000000
0030: 00000008 00123401 00007f20 00000100`)
	got := q.WQE(7)
	assert.Equal(t, want[:40], got[:40])
	assert.Equal(t, want[48:], got[48:])

	q.PrepareAtomicExt(q.WQEPtr(8), nil, 8, OpAtomicMaskedCS, CtrlCQUpdate, Addr{Addr: 0x7f0000003008, Key: r.Key},
		Addr{Addr: 0x7f2000000108, Key: l.Key},
		AtomicExt{SwapData: 0x11, CompareData: uint64(key(0x22)), SwapMask: 0xffffffff, CompareMask: 0xffffffff})
	assert.Equal(t, parseRows(t, `
0000: 08000814 001a2b04 00000008 00000000
0010: 00007f00 00003008 00abcd01 00000000
0020: 00000011 00000022 ffffffff ffffffff
0030: 00000004 00123401 00007f20 00000108`), q.WQE(8))

	wq.FillSQ(0)
	wq.PrepareWait(wq.WQEPtr(9), 9, CtrlCQUpdate, 41, 0x401)
	assert.Equal(t, parseRows(t, `
0000: 0000090f 001a2c02 00000008 00000000
0010: 00000000 00000000 00000029 00000401`), wq.WQE(9))

	hi, lo := DecodeDoorbell(q.PrepareDB(6))
	assert.Equal(t, [2]uint32{0x00000600, 0x001a2b00}, [2]uint32{hi, lo})
	dbr := PrepareDBR(6)
	assert.Equal(t, []byte{0, 0, 0, 6}, (*[4]byte)(unsafe.Pointer(&dbr))[:])
}

func TestDoorbellAndDBRIndexWidths(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16})
	for _, tc := range []struct {
		pi     uint64
		wantHi uint32
		dbr    uint32
	}{
		{0, 0, 0},
		{0xffff, 0xffff00, 0xffff},
		{0x10000, 0x1000000, 0},        // bit 16 spills into the opmod byte, as in DOCA
		{0x123456, 0x12345600, 0x3456}, // bits 16..23 kept in the doorbell, DBR masked to 16 bits
		{0x1_0000_0005, 0x500, 5},
	} {
		hi, lo := DecodeDoorbell(q.PrepareDB(tc.pi))
		assert.Equalf(t, tc.wantHi, hi, "doorbell PI field for %#x", tc.pi)
		assert.Equalf(t, uint32(testQPN<<8), lo, "doorbell qpn_ds for %#x", tc.pi)
		d := PrepareDBR(uint32(tc.pi))
		b := (*[4]byte)(unsafe.Pointer(&d))
		assert.Equalf(t, tc.dbr, uint32(b[0])<<24|uint32(b[1])<<16|uint32(b[2])<<8|uint32(b[3]), "DBR for %#x", tc.pi)
	}
}
