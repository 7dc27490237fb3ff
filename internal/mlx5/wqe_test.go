package mlx5

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dpImage parses a byte image in the worked-example form
// ("0010: 00007f00 00001000 00abcd01 00000000", only non-zero rows) into n
// bytes.
func dpImage(t testing.TB, n int, rows string) []byte {
	t.Helper()
	b := make([]byte, n)
	for _, line := range strings.Split(strings.TrimSpace(rows), "\n") {
		off, words, ok := strings.Cut(strings.TrimSpace(line), ":")
		require.True(t, ok, "row %q", line)
		o, err := strconv.ParseUint(off, 16, 32)
		require.NoError(t, err)
		raw, err := hex.DecodeString(strings.Join(strings.Fields(words), ""))
		require.NoError(t, err)
		copy(b[o:], raw)
	}
	return b
}

// The operands of the worked examples.
var (
	dpHead   = WQEHead{QPN: 0x1a2b, Flags: CtrlCQUpdate}
	dpLocal  = DataSeg{LKey: 0x00123401, Addr: 0x7f2000000000}
	dpRemote = RAddrSeg{Addr: 0x7f0000001000, RKey: 0x00abcd01}
)

func dpAt(h WQEHead, idx uint16) WQEHead { h.Index = idx; return h }

func dpWith(d DataSeg, off uint64, n uint32) DataSeg { d.Addr += off; d.ByteCount = n; return d }

func dpRAddr(off uint64) RAddrSeg { r := dpRemote; r.Addr += off; return r }

// TestWQEGolden reproduces worked WQE images (computed by hand from the PRM
// layouts) byte for byte and parses each back to the WQE it was built from.
func TestWQEGolden(t *testing.T) {
	cases := []struct {
		name   string
		wqe    WQE
		wqebbs int
		want   string
	}{
		{"RDMA_WRITE idx5 1 SGE", NewRDMAWrite(dpAt(dpHead, 5), dpRemote, dpWith(dpLocal, 0, 4096)), 1, `
0000: 00000508 001a2b03 00000008 00000000
0010: 00007f00 00001000 00abcd01 00000000
0020: 00001000 00123401 00007f20 00000000`},
		{"RDMA_WRITE inline 10B idx6", NewRDMAWriteInline(dpAt(dpHead, 6), dpRAddr(0x1000), []byte("ABCDEFGHIJ")), 1, `
0000: 00000608 001a2b03 00000008 00000000
0010: 00007f00 00002000 00abcd01 00000000
0020: 8000000a 41424344 45464748 494a0000`},
		{"ATOMIC_FA idx7 add 1", NewAtomicFA(dpAt(dpHead, 7), dpRAddr(0x2000), 1, dpWith(dpLocal, 0x100, 0)), 1, `
0000: 00000712 001a2b04 00000008 00000000
0010: 00007f00 00003000 00abcd01 00000000
0020: 00000000 00000001 00000000 00000000
0030: 00000008 00123401 00007f20 00000100`},
		{"MASKED_CS 4B idx8", NewMaskedCS(dpAt(dpHead, 8), 4, dpRAddr(0x2008),
			MaskedCSSeg{Swap: 0x11, Compare: 0x22, SwapMask: 0xffffffff, CompareMask: 0xffffffff},
			dpWith(dpLocal, 0x108, 0)), 1, `
0000: 08000814 001a2b04 00000008 00000000
0010: 00007f00 00003008 00abcd01 00000000
0020: 00000011 00000022 ffffffff ffffffff
0030: 00000004 00123401 00007f20 00000108`},
		{"WAIT idx9 on CQ 0x401 index 41", NewWait(WQEHead{Index: 9, QPN: 0x1a2c, Flags: CtrlCQUpdate}, 0x401, 41), 1, `
0000: 0000090f 001a2c02 00000008 00000000
0010: 00000000 00000000 00000029 00000401`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ring := make([]byte, 8*WQEBB)
			w := c.wqe
			n, err := w.Encode(ring)
			require.NoError(t, err)
			assert.Equal(t, c.wqebbs, n)
			slot := int(w.Ctrl.WQEIndex) % 8 * WQEBB
			assert.Equal(t, hex.EncodeToString(dpImage(t, WQEBB, c.want)), hex.EncodeToString(ring[slot:slot+WQEBB]))
			for i, b := range ring {
				if i < slot || i >= slot+WQEBB {
					require.Zero(t, b, "byte %d outside the WQE was written", i)
				}
			}

			got, err := ParseWQE(ring, w.Ctrl.WQEIndex)
			require.NoError(t, err)
			assert.Equal(t, w, got)
		})
	}
}

// TestWQEDeviceAPIBytes checks the byte layouts the DOCA GPUNetIO device API
// builders produce (unset bytes are zero).
func TestWQEDeviceAPIBytes(t *testing.T) {
	h := WQEHead{Index: 0x0102, QPN: 0x00abcd, Flags: CtrlCQUpdate}
	r := RAddrSeg{Addr: 0x1122334455667788, RKey: 0x01020304}
	l0 := DataSeg{ByteCount: 100, LKey: 0x0a0b0c0d, Addr: 0x99aabbccddeeff00}
	l1 := DataSeg{ByteCount: 200, LKey: 0x0e0f1011, Addr: 0x0000100000002000}
	be32 := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	be64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	ctrl := func(op WQEOpcode, ds uint32, imm uint32) []byte {
		return cat(be32(uint32(h.Index)<<8|uint32(op)), be32(h.QPN<<8|ds), []byte{0, 0, 0, byte(h.Flags)}, be32(imm))
	}
	rseg := cat(be64(r.Addr), be32(r.RKey), be32(0))
	dseg := func(d DataSeg) []byte { return cat(be32(d.ByteCount), be32(d.LKey), be64(d.Addr)) }
	cases := []struct {
		name string
		wqe  WQE
		want []byte
	}{
		{"NOP", NewNOP(h), ctrl(WQEOpNop, 1, 0)},
		{"write 1 SGE", NewRDMAWrite(h, r, l0), cat(ctrl(WQEOpRDMAWrite, 3, 0), rseg, dseg(l0))},
		{"write 2 SGE", NewRDMAWrite(h, r, l0, l1), cat(ctrl(WQEOpRDMAWrite, 4, 0), rseg, dseg(l0), dseg(l1))},
		{"write imm", NewRDMAWriteImm(h, 0xcafef00d, r, l0), cat(ctrl(WQEOpRDMAWriteImm, 3, 0xcafef00d), rseg, dseg(l0))},
		{"read 1 SGE", NewRDMARead(h, r, l0), cat(ctrl(WQEOpRDMARead, 3, 0), rseg, dseg(l0))},
		{"read 2 SGE", NewRDMARead(h, r, l0, l1), cat(ctrl(WQEOpRDMARead, 4, 0), rseg, dseg(l0), dseg(l1))},
		{"atomic CAS", NewAtomicCS(h, r, 5, 6, l0),
			cat(ctrl(WQEOpAtomicCS, 4, 0), rseg, be64(5), be64(6), dseg(dpWith(l0, 0, 8)))},
		// gpunetio's FA repeats the addend in the compare field; the NIC ignores it.
		{"atomic FA as gpunetio builds it", func() WQE {
			w := NewAtomicFA(h, r, 7, l0)
			w.Atomic.Compare = 7
			return w
		}(), cat(ctrl(WQEOpAtomicFA, 4, 0), rseg, be64(7), be64(7), dseg(dpWith(l0, 0, 8)))},
		{"masked FA 4B", NewMaskedFA(h, 4, r, MaskedFASeg{Add: 3, FieldBoundary: 0x80008000}, l0),
			cat(be32(0x08000000|uint32(h.Index)<<8|0x15), be32(h.QPN<<8|4), []byte{0, 0, 0, 8}, be32(0),
				rseg, be32(3), be32(0x80008000), make([]byte, 8), dseg(dpWith(l0, 0, 4)))},
		{"masked FA 8B", NewMaskedFA(h, 8, r, MaskedFASeg{Add: 3, FieldBoundary: 1 << 63}, l0),
			cat(be32(0x09000000|uint32(h.Index)<<8|0x15), be32(h.QPN<<8|4), []byte{0, 0, 0, 8}, be32(0),
				rseg, be64(3), be64(1<<63), dseg(dpWith(l0, 0, 8)))},
		{"wait", NewWait(h, 0x401, 0x123456), cat(ctrl(WQEOpWait, 2, 0), make([]byte, 8), be32(0x123456), be32(0x401))},
		{"send_en", NewSendEn(h, 0x1a2b, 0xfffe), cat(ctrl(WQEOpSendEn, 2, 0), make([]byte, 8), be32(0xfffe), be32(0x1a2b))},
		{"dump", NewDump(h, dpWith(l0, 0, 1)), cat(ctrl(WQEOpDump, 2, 0), dseg(dpWith(l0, 0, 1)))},
		{"inline 12B is ds 3", NewRDMAWriteInline(h, r, []byte("0123456789ab")),
			cat(ctrl(WQEOpRDMAWrite, 3, 0), rseg, be32(0x8000000c), []byte("0123456789ab"))},
		{"inline 13B is ds 4", NewRDMAWriteInline(h, r, []byte("0123456789abc")),
			cat(ctrl(WQEOpRDMAWrite, 4, 0), rseg, be32(0x8000000d), []byte("0123456789abc"))},
		{"inline 28B is ds 4", NewRDMAWriteInline(h, r, []byte("0123456789abcdefghijklmnopqr")),
			cat(ctrl(WQEOpRDMAWrite, 4, 0), rseg, be32(0x8000001c), []byte("0123456789abcdefghijklmnopqr"))},
		{"send imm inline", NewSendImmInline(h, 0x01020304, []byte("hi")),
			cat(ctrl(WQEOpSendImm, 2, 0x01020304), be32(0x80000002), []byte("hi"))},
		{"send 1 SGE", NewSend(h, l0), cat(ctrl(WQEOpSend, 2, 0), dseg(l0))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ring := make([]byte, 4*WQEBB)
			w := c.wqe
			_, err := w.Encode(ring)
			require.NoError(t, err)
			slot := int(h.Index) % 4 * WQEBB
			assert.Equal(t, hex.EncodeToString(c.want), hex.EncodeToString(ring[slot:slot+len(c.want)]))
			got, err := ParseWQE(ring, h.Index)
			require.NoError(t, err)
			assert.Equal(t, w, got)
		})
	}
}

// TestWQEWrapMaskedCS8 puts the 2-WQEBB 8-byte masked CS in the last slot of
// a 4-slot ring: its fifth segment (the result data segment) must land at
// byte 0 of the ring.
func TestWQEWrapMaskedCS8(t *testing.T) {
	ring := make([]byte, 4*WQEBB)
	for i := range ring {
		ring[i] = 0xee // untouched bytes stay 0xee
	}
	h := WQEHead{Index: 0xffff, QPN: 0x1a2b, Flags: CtrlCQUpdate} // slot 3, and the 16-bit index wraps too
	w := NewMaskedCS(h, 8, dpRemote, MaskedCSSeg{Swap: 1, Compare: 2, SwapMask: 3, CompareMask: 4}, dpLocal)
	n, err := w.Encode(ring)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Equal(t, uint8(5), w.Ctrl.DS)

	want := dpImage(t, 5*DSSize, `
0000: 09ffff14 001a2b05 00000008 00000000
0010: 00007f00 00001000 00abcd01 00000000
0020: 00000000 00000001 00000000 00000002
0030: 00000000 00000003 00000000 00000004
0040: 00000008 00123401 00007f20 00000000`)
	assert.Equal(t, hex.EncodeToString(want[:64]), hex.EncodeToString(ring[3*WQEBB:]))
	assert.Equal(t, hex.EncodeToString(want[64:]), hex.EncodeToString(ring[:16]))
	for i := 16; i < 3*WQEBB; i++ {
		require.Equal(t, byte(0xee), ring[i], "byte %d", i)
	}

	got, err := ParseWQE(ring, 0xffff)
	require.NoError(t, err)
	assert.Equal(t, w, got)
	assert.Equal(t, 8, got.OperandSize())
}

// TestWQEWrapInline writes an inline payload that starts in the last slot
// and continues, split in the middle of a segment, at the ring start.
func TestWQEWrapInline(t *testing.T) {
	ring := make([]byte, 4*WQEBB)
	payload := make([]byte, 100)
	for i := range payload {
		payload[i] = byte(i + 1)
	}
	h := WQEHead{Index: 7, QPN: 0x42, Flags: CtrlCQUpdate} // slot 3
	w := NewSendInline(h, payload)
	n, err := w.Encode(ring)
	require.NoError(t, err)
	// ds = 1 + ceil((4+100)/16) = 8: two WQEBBs.
	assert.Equal(t, uint8(8), w.Ctrl.DS)
	assert.Equal(t, 2, n)
	assert.Equal(t, []byte{0x80, 0, 0, 100}, ring[3*WQEBB+16:3*WQEBB+20])
	assert.Equal(t, payload[:44], ring[3*WQEBB+20:], "first piece up to the ring end")
	assert.Equal(t, payload[44:], ring[:56], "second piece from the ring start")

	got, err := ParseWQE(ring, 7)
	require.NoError(t, err)
	assert.Equal(t, w, got)
	assert.Equal(t, uint64(100), got.Length())

	// A 1-WQEBB ring cannot hold it.
	small := make([]byte, WQEBB)
	_, err = w.Encode(small)
	assert.ErrorIs(t, err, SyndromeLocalQPOpErr)
	assert.Equal(t, make([]byte, WQEBB), small, "nothing written on error")
}

// dpValid builds a valid WQE at index idx of a fresh 4-slot ring.
func dpValid(t *testing.T, w WQE) []byte {
	t.Helper()
	ring := make([]byte, 4*WQEBB)
	_, err := w.Encode(ring)
	require.NoError(t, err)
	return ring
}

// TestParseWQEMalformed corrupts valid WQEs and checks the syndrome the
// parser reports, the one the NIC would put in the error CQE.
func TestParseWQEMalformed(t *testing.T) {
	h := WQEHead{Index: 2, QPN: 0x1a2b, Flags: CtrlCQUpdate}
	const base = 2 * WQEBB
	write1 := func() WQE { return NewRDMAWrite(h, dpRemote, dpWith(dpLocal, 0, 64)) }
	write2 := func() WQE { return NewRDMAWrite(h, dpRemote, dpWith(dpLocal, 0, 64), dpWith(dpLocal, 64, 64)) }
	inl := func() WQE { return NewRDMAWriteInline(h, dpRemote, []byte("ABCDEFGHIJ")) }
	fa := func() WQE { return NewAtomicFA(h, dpRemote, 1, dpLocal) }
	mcs8 := func() WQE { return NewMaskedCS(h, 8, dpRemote, MaskedCSSeg{}, dpLocal) }
	mfa4 := func() WQE { return NewMaskedFA(h, 4, dpRemote, MaskedFASeg{}, dpLocal) }
	wait := func() WQE { return NewWait(h, 0x401, 1) }
	dump := func() WQE { return NewDump(h, dpWith(dpLocal, 0, 1)) }
	setDS := func(ds byte) func([]byte) { return func(r []byte) { r[base+7] = ds } }
	put32 := func(off int, v uint32) func([]byte) {
		return func(r []byte) { binary.BigEndian.PutUint32(r[off:], v) }
	}
	cases := []struct {
		name   string
		wqe    WQE
		mutate func([]byte)
		want   Syndrome
	}{
		{"ds 0", write1(), setDS(0), SyndromeLocalQPOpErr},
		{"wqe_index differs from the slot's index", write1(), func(r []byte) { r[base+2] = 6 }, SyndromeLocalQPOpErr},
		{"unknown opcode 0x03", write1(), func(r []byte) { r[base+3] = 0x03 }, SyndromeLocalQPOpErr},
		{"TSO is Ethernet only", write1(), func(r []byte) { r[base+3] = byte(WQEOpTSO) }, SyndromeLocalQPOpErr},
		{"UMR unsupported", write1(), func(r []byte) { r[base+3] = byte(WQEOpUMR) }, SyndromeLocalQPOpErr},
		{"WRITE ds 1 below minimum", write1(), setDS(1), SyndromeLocalQPOpErr},
		{"inline bit on a second pointer segment", write2(), func(r []byte) { r[base+48] |= 0x80 }, SyndromeLocalQPOpErr},
		{"pointer segment with byte_count 0", write1(), put32(base+32, 0), SyndromeLocalLengthErr},
		{"inline length exceeds ds", inl(), put32(base+32, 0x80000020), SyndromeLocalQPOpErr},
		{"ds leaves units after inline", inl(), setDS(4), SyndromeLocalQPOpErr},
		{"READ with an inline segment", write1(), func(r []byte) {
			r[base+3] = byte(WQEOpRDMARead)
			binary.BigEndian.PutUint32(r[base+32:], 0x80000004)
		}, SyndromeLocalQPOpErr},
		{"atomic result byte_count 4", fa(), put32(base+48, 4), SyndromeLocalLengthErr},
		{"atomic ds 5", fa(), setDS(5), SyndromeLocalQPOpErr},
		{"atomic ds 3", fa(), setDS(3), SyndromeLocalQPOpErr},
		{"masked opmod 0x0a (16 bytes) unsupported", mfa4(), func(r []byte) { r[base] = 0x0a }, SyndromeLocalQPOpErr},
		{"masked opmod 0", mfa4(), func(r []byte) { r[base] = 0 }, SyndromeLocalQPOpErr},
		{"masked CS 8B with ds 4", mcs8(), setDS(4), SyndromeLocalQPOpErr},
		{"masked CS 8B result byte_count 4", mcs8(), put32(base+64, 4), SyndromeLocalLengthErr},
		{"masked FA 4B result byte_count 8", mfa4(), put32(base+48, 8), SyndromeLocalLengthErr},
		{"WAIT on data unsupported", wait(), func(r []byte) { r[base] = OpModWaitData }, SyndromeLocalQPOpErr},
		{"WAIT ds 3", wait(), setDS(3), SyndromeLocalQPOpErr},
		{"DUMP byte_count 0", dump(), put32(base+16, 0), SyndromeLocalLengthErr},
		{"DUMP inline bit", dump(), put32(base+16, 0x80000001), SyndromeLocalQPOpErr},
		{"ds 63 spans more than a 4-slot ring", write1(), setDS(63), SyndromeLocalQPOpErr},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ring := dpValid(t, c.wqe)
			_, err := ParseWQE(ring, h.Index)
			require.NoError(t, err, "the WQE before corruption must be valid")
			c.mutate(ring)
			w, err := ParseWQE(ring, h.Index)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.want)
			var we *WQEError
			require.True(t, errors.As(err, &we))
			assert.Equal(t, c.want, we.Syndrome)
			assert.Equal(t, h.Index, we.Index)
			assert.Equal(t, "parse WQE", we.Op)
			assert.Contains(t, err.Error(), c.want.String())
			assert.Empty(t, w.SGEs, "no partial scatter list on error")
		})
	}

	t.Run("ring not a power of two", func(t *testing.T) {
		_, err := ParseWQE(make([]byte, 3*WQEBB), 0)
		assert.ErrorIs(t, err, SyndromeLocalQPOpErr)
		_, err = ParseWQE(nil, 0)
		assert.ErrorIs(t, err, SyndromeLocalQPOpErr)
	})
	t.Run("NOP padding of any ds is accepted", func(t *testing.T) {
		ring := dpValid(t, NewNOP(h))
		ring[base+7] = 8
		w, err := ParseWQE(ring, h.Index)
		require.NoError(t, err)
		assert.Equal(t, 2, WQEBBs(w.Ctrl.DS))
	})
	t.Run("zero-length WRITE and SEND have no data part", func(t *testing.T) {
		for _, w := range []WQE{NewRDMAWriteImm(h, 9, dpRemote), NewSend(h)} {
			ring := make([]byte, 4*WQEBB)
			_, err := w.Encode(ring)
			require.NoError(t, err)
			got, err := ParseWQE(ring, h.Index)
			require.NoError(t, err)
			assert.Equal(t, w, got)
			assert.Zero(t, got.Length())
		}
	})
}

// TestWQEEncodeErrors checks that the encoder refuses WQEs the NIC would
// reject, and writes nothing when it does.
func TestWQEEncodeErrors(t *testing.T) {
	h := WQEHead{Index: 1, QPN: 0x1a2b, Flags: CtrlCQUpdate}
	many := make([]DataSeg, 62)
	for i := range many {
		many[i] = dpWith(dpLocal, 0, 1)
	}
	cases := []struct {
		name string
		wqe  WQE
		want Syndrome
	}{
		{"SGE with bit 31", NewRDMAWrite(h, dpRemote, dpWith(dpLocal, 0, 0x80000000)), SyndromeLocalLengthErr},
		{"zero-length SGE", NewSend(h, dpWith(dpLocal, 0, 0)), SyndromeLocalLengthErr},
		{"62 SGEs", NewRDMAWrite(h, dpRemote, many...), SyndromeLocalQPOpErr},
		{"inline over 63 ds", NewSendInline(h, make([]byte, 1000)), SyndromeLocalQPOpErr},
		{"READ inline", WQE{Ctrl: h.ctrl(WQEOpRDMARead), IsInline: true, Inline: []byte{1}}, SyndromeLocalQPOpErr},
		{"masked size 16", NewMaskedCS(h, 16, dpRemote, MaskedCSSeg{}, dpLocal), SyndromeLocalQPOpErr},
		{"masked size 3", NewMaskedFA(h, 3, dpRemote, MaskedFASeg{}, dpLocal), SyndromeLocalQPOpErr},
		{"CS with a 4-byte result", func() WQE { w := NewAtomicCS(h, dpRemote, 1, 2, dpLocal); w.SGEs[0].ByteCount = 4; return w }(), SyndromeLocalLengthErr},
		{"FA with two result segments", func() WQE { w := NewAtomicFA(h, dpRemote, 1, dpLocal); w.SGEs = append(w.SGEs, dpLocal); return w }(), SyndromeLocalQPOpErr},
		{"DUMP without a buffer", WQE{Ctrl: h.ctrl(WQEOpDump)}, SyndromeLocalQPOpErr},
		{"WAIT on time", func() WQE { w := NewWait(h, 1, 1); w.Ctrl.OpMod = OpModWaitTime; return w }(), SyndromeLocalQPOpErr},
		{"QPN over 24 bits", NewNOP(WQEHead{QPN: 1 << 24}), SyndromeLocalQPOpErr},
		{"unsupported opcode", WQE{Ctrl: h.ctrl(WQEOpLocalInval)}, SyndromeLocalQPOpErr},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ring := make([]byte, 4*WQEBB)
			w := c.wqe
			n, err := w.Encode(ring)
			assert.Zero(t, n)
			assert.ErrorIs(t, err, c.want)
			var we *WQEError
			require.True(t, errors.As(err, &we))
			assert.Equal(t, "encode WQE", we.Op)
			assert.Equal(t, make([]byte, 4*WQEBB), ring)
		})
	}
	t.Run("bad ring", func(t *testing.T) {
		w := NewNOP(h)
		for _, n := range []int{0, 32, 3 * WQEBB, 100} {
			_, err := w.Encode(make([]byte, n))
			assert.Error(t, err, "ring of %d bytes", n)
		}
	})
}

// TestWQERoundTripAllBuilders encodes every builder at every slot of a small
// ring (so multi-WQEBB WQEs wrap) and parses each back.
func TestWQERoundTripAllBuilders(t *testing.T) {
	r := dpRemote
	l := dpWith(dpLocal, 0, 333)
	builders := map[string]func(h WQEHead) WQE{
		"nop":   NewNOP,
		"write": func(h WQEHead) WQE { return NewRDMAWrite(h, r, l, l, l, l, l) },
		"write inline": func(h WQEHead) WQE {
			return NewRDMAWriteInline(h, r, []byte("the quick brown fox jumps over the lazy dog"))
		},
		"write imm":      func(h WQEHead) WQE { return NewRDMAWriteImm(h, 0xdeadbeef, r, l) },
		"write imm inl":  func(h WQEHead) WQE { return NewRDMAWriteImmInline(h, 0xdeadbeef, r, []byte{1, 2, 3}) },
		"read":           func(h WQEHead) WQE { return NewRDMARead(h, r, l, l) },
		"send":           func(h WQEHead) WQE { return NewSend(h, l, l, l, l) },
		"send inline":    func(h WQEHead) WQE { return NewSendInline(h, make([]byte, 61)) },
		"send imm":       func(h WQEHead) WQE { return NewSendImm(h, 7, l) },
		"send inval":     func(h WQEHead) WQE { w := NewSend(h, l); w.Ctrl.Opcode, w.Ctrl.Imm = WQEOpSendInval, 0x1234; return w },
		"cs":             func(h WQEHead) WQE { return NewAtomicCS(h, r, 1, 2, l) },
		"fa":             func(h WQEHead) WQE { return NewAtomicFA(h, r, 3, l) },
		"masked cs 4":    func(h WQEHead) WQE { return NewMaskedCS(h, 4, r, MaskedCSSeg{1, 2, 3, 4}, l) },
		"masked cs 8":    func(h WQEHead) WQE { return NewMaskedCS(h, 8, r, MaskedCSSeg{1 << 40, 2, 3, 4 << 33}, l) },
		"masked fa 4":    func(h WQEHead) WQE { return NewMaskedFA(h, 4, r, MaskedFASeg{5, 6}, l) },
		"masked fa 8":    func(h WQEHead) WQE { return NewMaskedFA(h, 8, r, MaskedFASeg{5 << 40, 6}, l) },
		"wait":           func(h WQEHead) WQE { return NewWait(h, 0x77, 0xffffff) },
		"send_en":        func(h WQEHead) WQE { return NewSendEn(h, 0x88, 9) },
		"dump":           func(h WQEHead) WQE { return NewDump(h, l) },
		"fenced solicit": func(h WQEHead) WQE { h.Flags = MakeCtrlFlags(Fence, CompletionAlways, true); return NewSend(h, l) },
	}
	for name, b := range builders {
		t.Run(name, func(t *testing.T) {
			ring := make([]byte, 4*WQEBB)
			for idx := uint16(0xfffc); idx != 4; idx++ {
				w := b(WQEHead{Index: idx, QPN: 0xfedcba, Flags: CtrlCQUpdate | CtrlFence})
				if name == "fenced solicit" {
					w.Ctrl.Flags = MakeCtrlFlags(Fence, CompletionAlways, true)
				}
				n, err := w.Encode(ring)
				require.NoError(t, err)
				assert.Equal(t, WQEBBs(w.Ctrl.DS), n)
				var got WQE
				require.NoError(t, got.Decode(ring, idx))
				assert.Equal(t, w.Ctrl, got.Ctrl)
				assert.Equal(t, w.IsInline, got.IsInline)
				if w.IsInline {
					assert.Equal(t, w.Inline, got.Inline)
				} else {
					assert.Equal(t, len(w.SGEs), len(got.SGEs))
					if len(w.SGEs) > 0 {
						assert.Equal(t, w.SGEs, got.SGEs)
					}
				}
				assert.Equal(t, w.Length(), got.Length())
				assert.Equal(t, w.OperandSize(), got.OperandSize())
			}
		})
	}
}

// TestWQEDecodeReuses checks that Decode into a kept WQE does not allocate in
// steady state (the emulator's hot path).
func TestWQEDecodeReuses(t *testing.T) {
	ring := make([]byte, 4*WQEBB)
	w := NewRDMAWrite(dpAt(dpHead, 0), dpRemote, dpWith(dpLocal, 0, 8))
	_, err := w.Encode(ring)
	require.NoError(t, err)
	var got WQE
	require.NoError(t, got.Decode(ring, 0))
	allocs := testing.AllocsPerRun(100, func() {
		if err := got.Decode(ring, 0); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

func TestWQEOpcodeNames(t *testing.T) {
	want := map[WQEOpcode]string{
		0x00: "NOP", 0x01: "SEND_INVAL", 0x08: "RDMA_WRITE", 0x09: "RDMA_WRITE_IMM", 0x0a: "SEND",
		0x0b: "SEND_IMM", 0x0e: "TSO", 0x0f: "WAIT", 0x10: "RDMA_READ", 0x11: "ATOMIC_CS",
		0x12: "ATOMIC_FA", 0x14: "ATOMIC_MASKED_CS", 0x15: "ATOMIC_MASKED_FA", 0x17: "SEND_EN",
		0x18: "BIND_MW", 0x19: "FMR", 0x1b: "LOCAL_INVAL", 0x1f: "CONFIG_CMD", 0x20: "SET_PSV",
		0x23: "DUMP", 0x25: "UMR", 0x28: "TAG_MATCHING", 0x29: "ENHANCED_MPSW",
		0x2c: "FLOW_TBL_ACCESS", 0x2d: "ACCESS_ASO", 0x2f: "MMO",
	}
	for op := 0; op < 256; op++ {
		name, ok := want[WQEOpcode(op)]
		if !ok {
			name = "WQE_OPCODE_0x" + hex.EncodeToString([]byte{byte(op)})
		}
		assert.Equal(t, name, WQEOpcode(op).String())
	}
	supported := 0
	for op := 0; op < 256; op++ {
		if WQEOpcode(op).Supported() {
			supported++
			assert.Contains(t, want, WQEOpcode(op))
		}
	}
	assert.Equal(t, 14, supported)
}

// ctrlHeadOf is what DecodeCtrlHead must return for a segment, as a
// CtrlSeg: the members of DecodeCtrlSeg that the field table places in the
// first CtrlHeadLen bytes, the others zero.
func ctrlHeadOf(t testing.TB, b []byte) CtrlSeg {
	t.Helper()
	c := DecodeCtrlSeg(b)
	for _, f := range []Field{ctrlSignature, ctrlDCIStream, ctrlFmCeSe, ctrlImm} {
		if f.Bit/8 < CtrlHeadLen {
			t.Fatalf("ctrl field %v lies in the head: DecodeCtrlHead must read it", f)
		}
	}
	c.Signature, c.DCIStream, c.Flags, c.Imm = 0, 0, 0, 0
	return c
}

// ctrlHead returns DecodeCtrlHead's results as a CtrlSeg.
func ctrlHead(b []byte) CtrlSeg {
	var c CtrlSeg
	c.OpMod, c.WQEIndex, c.Opcode, c.QPN, c.DS = DecodeCtrlHead(b)
	return c
}

// DecodeCtrlHead reads the head fields at the bits the generated table
// gives them, and nothing beyond the head.
func TestDecodeCtrlHead(t *testing.T) {
	for _, f := range []Field{ctrlOpMod, ctrlWQEIndex, ctrlOpcode, ctrlQPN, ctrlDS} {
		assert.LessOrEqual(t, f.End(), CtrlHeadLen, "ctrl field %v", f)
	}
	seg := make([]byte, DSSize)
	c := CtrlSeg{OpMod: 0xa5, WQEIndex: 0xbeef, Opcode: WQEOpAtomicMaskedFA, QPN: 0xabcdef, DS: MaxDS,
		Signature: 0x11, DCIStream: 0x2233, Flags: 0x6e, Imm: 0x44556677}
	c.Put(seg)
	want := c
	want.Signature, want.DCIStream, want.Flags, want.Imm = 0, 0, 0, 0
	assert.Equal(t, want, ctrlHead(seg))
	assert.Equal(t, want, ctrlHead(seg[:CtrlHeadLen]))
	// Every bit of the head on its own, and the reserved bits [57:56] of
	// dword 1, which no member names.
	for bit := 0; bit < CtrlHeadLen*8; bit++ {
		b := make([]byte, DSSize)
		b[bit/8] = 0x80 >> (bit % 8)
		assert.Equal(t, ctrlHeadOf(t, b), ctrlHead(b), "bit %d", bit)
	}
	for i := 0; i < 1000; i++ {
		b := make([]byte, DSSize)
		for j := range b {
			b[j] = byte(i*131 + j*29 + i*j*7)
		}
		assert.Equal(t, ctrlHeadOf(t, b), ctrlHead(b))
	}
	assert.Panics(t, func() { DecodeCtrlHead(make([]byte, CtrlHeadLen-1, DSSize)) })
}

func TestCtrlFlags(t *testing.T) {
	cases := []struct {
		fm   FenceMode
		ce   CompletionMode
		se   bool
		want CtrlFlags
		val  byte
	}{
		{FenceNone, CompletionAlways, false, CtrlCQUpdate, 0x08},
		{FenceNone, CompletionOnFirstError, false, CtrlFirstCQEError, 0x04},
		{FenceNone, CompletionOnError, true, CtrlSolicited, 0x02},
		{FenceInitiatorSmall, CompletionOnError, false, CtrlInitiatorSmallFence, 0x20},
		{Fence, CompletionOnError, false, CtrlFence, 0x40},
		{FenceStrongOrdering, CompletionOnError, false, CtrlStrongOrdering, 0x60},
		{FenceAndInitiatorSmallFence, CompletionOnError, false, CtrlFenceAndSmallFence, 0x80},
		{Fence, CompletionAlways, false, CtrlCQUpdateFence, 0x48},
		{FenceStrongOrdering, CompletionAndEvent, true, 0x6e, 0x6e},
	}
	for _, c := range cases {
		f := MakeCtrlFlags(c.fm, c.ce, c.se)
		assert.Equal(t, c.want, f)
		assert.Equal(t, c.val, byte(f))
		assert.Equal(t, c.fm, f.Fence())
		assert.Equal(t, c.ce, f.Completion())
		assert.Equal(t, c.se, f.Solicited())
		assert.Equal(t, c.ce >= CompletionAlways, f.Signaled())
	}
}

func TestMaskedAtomicOpMod(t *testing.T) {
	cases := []struct {
		size int
		want uint8
		ok   bool
	}{{4, 0x08, true}, {8, 0x09, true}, {16, 0x0a, true}, {32, 0x0b, true}, {0, 0, false}, {2, 0, false},
		{3, 0, false}, {12, 0, false}, {-8, 0, false}, {1 << 20, 0, false}}
	for _, c := range cases {
		got, ok := MaskedAtomicOpMod(c.size)
		assert.Equal(t, c.ok, ok, "size %d", c.size)
		assert.Equal(t, c.want, got, "size %d", c.size)
	}
	assert.Equal(t, OpModMaskedAtomic4, uint8(0x08))
	assert.Equal(t, OpModMaskedAtomic8, uint8(0x09))
}

func TestParseRecvWQE(t *testing.T) {
	seg := func(d DataSeg) []byte { b := make([]byte, DSSize); d.Put(b); return b }
	a := DataSeg{ByteCount: 4096, LKey: 0x1234, Addr: 0x7f0000000000}
	b := DataSeg{ByteCount: 1, LKey: 0x5678, Addr: 0x10}
	join := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		name string
		wqe  []byte
		want []DataSeg
		err  Syndrome
	}{
		{"terminated", join(seg(a), seg(b), seg(RecvTerminator), seg(a)), []DataSeg{a, b}, 0},
		{"full stride", join(seg(a), seg(b)), []DataSeg{a, b}, 0},
		{"terminator first", join(seg(RecvTerminator), seg(a)), nil, 0},
		{"inline bit", join(seg(a), seg(DataSeg{ByteCount: 0x80000004, LKey: 1})), nil, SyndromeLocalQPOpErr},
		{"zero length", join(seg(DataSeg{LKey: 1})), nil, SyndromeLocalLengthErr},
		{"stride not a multiple of 16", make([]byte, 24), nil, SyndromeLocalQPOpErr},
		{"empty", nil, nil, SyndromeLocalQPOpErr},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseRecvWQE(nil, c.wqe, 3)
			if c.err != 0 {
				assert.ErrorIs(t, err, c.err)
				var we *WQEError
				require.True(t, errors.As(err, &we))
				assert.Equal(t, uint16(3), we.Index)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
	t.Run("appends to dst", func(t *testing.T) {
		got, err := ParseRecvWQE([]DataSeg{b}, seg(a), 0)
		require.NoError(t, err)
		assert.Equal(t, []DataSeg{b, a}, got)
	})
	t.Run("SRQ next index", func(t *testing.T) {
		w := join([]byte{0, 0, 0x12, 0x34}, make([]byte, 12), seg(a))
		assert.Equal(t, uint16(0x1234), SRQNextIndex(w))
		assert.Zero(t, SRQNextIndex(w[:8]))
		// The writer changes the index and nothing else.
		before := append([]byte(nil), w...)
		PutSRQNextIndex(w, 0xbeef)
		assert.Equal(t, uint16(0xbeef), SRQNextIndex(w))
		assert.Equal(t, join(before[:2], []byte{0xbe, 0xef}, before[4:]), w)
		assert.Panics(t, func() { PutSRQNextIndex(w[:SRQNextSegSize-1], 1) }) // len short, cap not
		got, err := ParseRecvWQE(nil, w[SRQNextSegSize:], 0)
		require.NoError(t, err)
		assert.Equal(t, []DataSeg{a}, got)
	})
}

func BenchmarkWQEWrite8B(b *testing.B) {
	ring := make([]byte, 256*WQEBB)
	src := dpWith(dpLocal, 0, 8)
	payload := []byte("8 bytes!")
	for _, inline := range []bool{false, true} {
		name := "sge"
		if inline {
			name = "inline"
		}
		b.Run(name, func(b *testing.B) {
			w := WQE{Ctrl: CtrlSeg{Opcode: WQEOpRDMAWrite, QPN: 0x1a2b, Flags: CtrlCQUpdate}, RAddr: dpRemote,
				SGEs: []DataSeg{src}, IsInline: inline, Inline: payload}
			var got WQE
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w.Ctrl.WQEIndex = uint16(i)
				if _, err := w.Encode(ring); err != nil {
					b.Fatal(err)
				}
				if err := got.Decode(ring, uint16(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// dpFuzzRing turns fuzz bytes into a valid ring: the largest power-of-two
// number of WQEBBs the bytes fill (at least one, zero padded), at most 8 (a
// WQE of ds 33..63 then fails the ring check). The cap keeps inputs small: the fuzzer's
// minimizer is quadratic in the input length.
func dpFuzzRing(b []byte) []byte {
	slots := 1
	for slots*2*WQEBB <= len(b) && slots < 8 {
		slots *= 2
	}
	ring := make([]byte, slots*WQEBB)
	copy(ring, b)
	return ring
}

func FuzzParseWQE(f *testing.F) {
	for _, w := range []WQE{
		NewRDMAWrite(dpAt(dpHead, 5), dpRemote, dpWith(dpLocal, 0, 4096)),
		NewRDMAWriteInline(dpAt(dpHead, 6), dpRAddr(0x1000), []byte("ABCDEFGHIJ")),
		NewAtomicFA(dpAt(dpHead, 7), dpRAddr(0x2000), 1, dpWith(dpLocal, 0x100, 0)),
		NewMaskedCS(dpAt(dpHead, 8), 4, dpRAddr(0x2008), MaskedCSSeg{0x11, 0x22, 0xffffffff, 0xffffffff}, dpLocal),
		NewMaskedCS(dpAt(dpHead, 3), 8, dpRemote, MaskedCSSeg{1, 2, 3, 4}, dpLocal),
		NewWait(WQEHead{Index: 9, QPN: 0x1a2c, Flags: CtrlCQUpdate}, 0x401, 41),
		NewSendInline(dpAt(dpHead, 3), make([]byte, 100)),
	} {
		ring := make([]byte, 4*WQEBB)
		if _, err := w.Encode(ring); err != nil {
			f.Fatal(err)
		}
		f.Add(ring, w.Ctrl.WQEIndex)
	}
	f.Fuzz(func(t *testing.T, b []byte, index uint16) {
		ring := dpFuzzRing(b)
		start := int(index) * WQEBB & (len(ring) - 1)
		if got, want := ctrlHead(ring[start:]), ctrlHeadOf(t, ring[start:]); got != want {
			t.Fatalf("DecodeCtrlHead %+v, DecodeCtrlSeg %+v", got, want)
		}
		w, err := ParseWQE(ring, index)
		if err != nil {
			var we *WQEError
			if !errors.As(err, &we) || !we.Syndrome.Known() || we.Index != index {
				t.Fatalf("error without a known syndrome: %v", err)
			}
			return
		}
		if WQEBBs(w.Ctrl.DS)*WQEBB > len(ring) {
			t.Fatalf("accepted ds %d in a %d-byte ring", w.Ctrl.DS, len(ring))
		}
		// A WQE the parser accepts can be built again, and parses the same.
		again := w
		out := make([]byte, len(ring))
		if _, err := again.Encode(out); err != nil {
			t.Fatalf("re-encoding an accepted WQE: %v", err)
		}
		w2, err := ParseWQE(out, index)
		if err != nil {
			t.Fatalf("re-parsing: %v", err)
		}
		if w.Ctrl.Opcode == WQEOpNop {
			w.Ctrl.DS = w2.Ctrl.DS // NOP padding is not rebuilt
		}
		if w.Ctrl != w2.Ctrl || w.RAddr != w2.RAddr || w.IsInline != w2.IsInline ||
			string(w.Inline) != string(w2.Inline) || len(w.SGEs) != len(w2.SGEs) ||
			w.Atomic != w2.Atomic || w.MaskedCS != w2.MaskedCS || w.MaskedFA != w2.MaskedFA || w.Wait != w2.Wait {
			t.Fatalf("round trip differs:\n%+v\n%+v", w, w2)
		}
		for i := range w.SGEs {
			if w.SGEs[i] != w2.SGEs[i] {
				t.Fatalf("SGE %d differs", i)
			}
		}
	})
}

func FuzzParseRecvWQE(f *testing.F) {
	seg := func(d DataSeg) []byte { b := make([]byte, DSSize); d.Put(b); return b }
	f.Add(append(seg(DataSeg{ByteCount: 4096, LKey: 0x1234, Addr: 0x7f0000000000}), seg(RecvTerminator)...))
	f.Add(seg(DataSeg{ByteCount: 0x80000001, LKey: 1}))
	f.Add(make([]byte, 17))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseRecvWQE(nil, b, 1)
		if err != nil {
			var we *WQEError
			if !errors.As(err, &we) || !we.Syndrome.Known() {
				t.Fatalf("error without a known syndrome: %v", err)
			}
			return
		}
		if len(got) > len(b)/DSSize {
			t.Fatalf("%d entries from %d bytes", len(got), len(b))
		}
		for i, d := range got {
			if d.ByteCount == 0 || d.ByteCount&InlineFlag != 0 || d.LKey == InvalidLKey {
				t.Fatalf("entry %d accepted: %+v", i, d)
			}
			if d != DecodeDataSeg(b[i*DSSize:]) {
				t.Fatalf("entry %d does not match its bytes", i)
			}
		}
	})
}

// BenchmarkDecodeCtrl measures DecodeCtrlHead beside DecodeCtrlSeg, the
// reference it replaces on the emulator's per-WQE path.
func BenchmarkDecodeCtrl(b *testing.B) {
	seg := make([]byte, DSSize)
	CtrlSeg{OpMod: 1, WQEIndex: 5, Opcode: WQEOpRDMAWrite, QPN: 0x123, DS: 3}.Put(seg)
	var sink int
	b.Run("head", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_, idx, opc, _, ds := DecodeCtrlHead(seg)
			sink += int(idx) + int(opc) + WQEBBs(ds)
		}
	})
	b.Run("seg", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c := DecodeCtrlSeg(seg)
			sink += int(c.WQEIndex) + int(c.Opcode) + WQEBBs(c.DS)
		}
	})
	if sink == 0 {
		b.Fatal("nothing decoded")
	}
}
