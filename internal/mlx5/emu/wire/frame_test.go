package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	gidA = GIDFromIPv4(netip.MustParseAddr("10.1.2.3"))
	gidB = GIDFromIPv4(netip.MustParseAddr("192.168.7.9"))
)

// sampleFrame returns a frame of opcode op with every header the opcode
// carries filled with distinct non-zero values.
func sampleFrame(op Opcode) Frame {
	f := Frame{
		Opcode: op, AckReq: true, DstQPN: 0xabcdef, PSN: 0xfffffe, SrcQPN: 0x123456,
		SrcGID: gidA, DstGID: gidB,
	}
	if op.AllowsSE() {
		f.SE = true
	}
	if op.HasRETH() {
		f.RETH = RETH{VA: 0x0102030405060708, RKey: 0xdeadbeef, DMALength: 0x10000}
	}
	switch {
	case op.IsMaskedAtomic():
		f.Atomic = AtomicETH{VA: 0x1000, RKey: 0x77, SwapAdd: 0x1111222233334444, Size: 8}
		if op == OpMaskedFetchAdd {
			f.Atomic.FieldBoundary = 0x8000000080000000
		} else {
			f.Atomic.Compare, f.Atomic.SwapMask, f.Atomic.CompareMask = 0x5555, 0xff00ff00ff00ff00, 0x00ff00ff00ff00ff
		}
	case op.HasAtomicETH():
		f.Atomic = AtomicETH{VA: 0x2000, RKey: 0x88, SwapAdd: 7, Compare: 9, Size: 8}
	}
	if op.HasImm() {
		f.Imm = [4]byte{0xca, 0xfe, 0xba, 0xbe}
	}
	if op.HasIETH() {
		f.InvRKey = 0x13572468
	}
	if op.HasAETH() {
		f.AETH = AETH{Syndrome: NakSyndrome(NakRemoteAccess), MSN: 0x00beef}
	}
	if op.HasAtomicAckETH() {
		f.AtomicAck = 0x0123456789abcdef
	}
	if op.HasPayload() {
		f.Payload = []byte("payload of " + op.String())
	}
	return f
}

func TestRoundTripEveryOpcode(t *testing.T) {
	for _, op := range Opcodes {
		t.Run(op.String(), func(t *testing.T) {
			f := sampleFrame(op)
			require.NoError(t, f.Validate())
			b := f.AppendEncode(nil)
			require.Len(t, b, f.EncodedLen())
			g, err := Decode(b)
			require.NoError(t, err)
			assert.Equal(t, f, g)
			// The payload aliases the input.
			if len(g.Payload) > 0 {
				assert.Same(t, &b[len(b)-len(g.Payload)], &g.Payload[0])
			}
		})
	}
}

func TestRoundTripEmptyPayloadAndZeroFrame(t *testing.T) {
	for _, op := range Opcodes {
		f := Frame{Opcode: op}
		if op.IsMaskedAtomic() {
			f.Atomic.Size = 4
		}
		if op.HasAtomicETH() && !op.IsMaskedAtomic() {
			f.Atomic.Size = 8 // Decode reports the fixed operand size of plain atomics
		}
		g, err := Decode(f.AppendEncode(nil))
		require.NoError(t, err, op)
		assert.Equal(t, f, g, op)
		assert.Nil(t, g.Payload, op)
	}
}

func TestAppendEncodeAppends(t *testing.T) {
	f := sampleFrame(OpSendOnlyImm)
	prefix := []byte("prefix")
	b := f.AppendEncode(append([]byte(nil), prefix...))
	require.True(t, bytes.HasPrefix(b, prefix))
	g, err := Decode(b[len(prefix):])
	require.NoError(t, err)
	assert.Equal(t, f, g)
}

// TestEncodingBytes pins the byte layout of one frame, written out by hand
// from the format in codec.go.
func TestEncodingBytes(t *testing.T) {
	f := Frame{
		Opcode: OpWriteOnlyImm, SE: true, AckReq: true, DstQPN: 0x000102, PSN: 0x030405, SrcQPN: 0x060708,
		SrcGID: gidA, DstGID: gidB,
		RETH:    RETH{VA: 0x1122334455667788, RKey: 0x99aabbcc, DMALength: 2},
		Imm:     [4]byte{1, 2, 3, 4},
		Payload: []byte{0xee, 0xff},
	}
	want := []byte{
		'G', 'D', 'W', 2, 0, 0, 0, 82, // magic, version, length 60+16+4+2
		0x0b, 0xc0, 0, 0, // opcode, SE|AckReq, reserved
		0, 0x00, 0x01, 0x02, 0, 0x03, 0x04, 0x05, 0, 0x06, 0x07, 0x08,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3, // src GID
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 7, 9, // dst GID
		0, 0, 0, 2, // payload length
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0, 0, 0, 2, // RETH
		1, 2, 3, 4, // ImmDt
		0xee, 0xff,
	}
	assert.Equal(t, want, f.AppendEncode(nil))
}

func TestAETHAndAtomicAckBytes(t *testing.T) {
	f := Frame{Opcode: OpAtomicAck, AETH: AETH{Syndrome: RNRNakSyndrome(14), MSN: 0x0a0b0c}, AtomicAck: 0x0102030405060708}
	b := f.AppendEncode(nil)
	require.Len(t, b, HeaderLen+4+8)
	assert.Equal(t, []byte{0x2e, 0x0a, 0x0b, 0x0c, 1, 2, 3, 4, 5, 6, 7, 8}, b[HeaderLen:])
}

func TestIETHBytes(t *testing.T) {
	f := Frame{Opcode: OpSendOnlyInv, InvRKey: 0x0a0b0c0d, Payload: []byte{7}}
	b := f.AppendEncode(nil)
	require.Len(t, b, HeaderLen+4+1)
	assert.Equal(t, []byte{0x0a, 0x0b, 0x0c, 0x0d, 7}, b[HeaderLen:])
	g, err := Decode(b)
	require.NoError(t, err)
	assert.Equal(t, f, g)
}

func TestSyndrome(t *testing.T) {
	tests := []struct {
		s     Syndrome
		byte_ uint8
		kind  AckKind
		value uint8
		str   string
	}{
		{AckSyndrome(31), 0x1f, KindACK, 31, "ACK(credits=31)"},
		{RNRNakSyndrome(0x12), 0x32, KindRNRNak, 0x12, "RNR_NAK(timer=18)"},
		{NakSyndrome(NakPSNSequenceError), 0x60, KindNak, 0, "NAK(PSN_SEQUENCE_ERROR)"},
		{NakSyndrome(NakInvalidRequest), 0x61, KindNak, 1, "NAK(INVALID_REQUEST)"},
		{NakSyndrome(NakRemoteAccess), 0x62, KindNak, 2, "NAK(REMOTE_ACCESS_ERROR)"},
		{NakSyndrome(NakRemoteOperation), 0x63, KindNak, 3, "NAK(REMOTE_OPERATIONAL_ERROR)"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.byte_, uint8(tc.s), tc.str)
		assert.Equal(t, tc.kind, tc.s.Kind(), tc.str)
		assert.Equal(t, tc.value, tc.s.Value(), tc.str)
		assert.Equal(t, tc.str, tc.s.String())
		assert.True(t, tc.s.valid(), tc.str)
	}
	for _, bad := range []Syndrome{0x40, 0x5f, 0x64, 0x7f, 0x80, 0xff} {
		assert.False(t, bad.valid(), "syndrome 0x%02x", uint8(bad))
	}
}

func TestOpcodeHeaders(t *testing.T) {
	// IBA's header table for RC, spelled out per opcode.
	tests := []struct {
		op                                             Opcode
		reth, atomic, imm, ieth, aeth, atomicAck, data bool
	}{
		{OpSendFirst, false, false, false, false, false, false, true},
		{OpSendMiddle, false, false, false, false, false, false, true},
		{OpSendLast, false, false, false, false, false, false, true},
		{OpSendLastImm, false, false, true, false, false, false, true},
		{OpSendOnly, false, false, false, false, false, false, true},
		{OpSendOnlyImm, false, false, true, false, false, false, true},
		{OpWriteFirst, true, false, false, false, false, false, true},
		{OpWriteMiddle, false, false, false, false, false, false, true},
		{OpWriteLast, false, false, false, false, false, false, true},
		{OpWriteLastImm, false, false, true, false, false, false, true},
		{OpWriteOnly, true, false, false, false, false, false, true},
		{OpWriteOnlyImm, true, false, true, false, false, false, true},
		{OpReadRequest, true, false, false, false, false, false, false},
		{OpReadResponseFirst, false, false, false, false, true, false, true},
		{OpReadResponseMiddle, false, false, false, false, false, false, true},
		{OpReadResponseLast, false, false, false, false, true, false, true},
		{OpReadResponseOnly, false, false, false, false, true, false, true},
		{OpAck, false, false, false, false, true, false, false},
		{OpAtomicAck, false, false, false, false, true, true, false},
		{OpCompareSwap, false, true, false, false, false, false, false},
		{OpFetchAdd, false, true, false, false, false, false, false},
		{OpSendLastInv, false, false, false, true, false, false, true},
		{OpSendOnlyInv, false, false, false, true, false, false, true},
		{OpMaskedCompareSwap, false, true, false, false, false, false, false},
		{OpMaskedFetchAdd, false, true, false, false, false, false, false},
	}
	require.Len(t, tests, len(Opcodes))
	for _, tc := range tests {
		assert.Equal(t, tc.reth, tc.op.HasRETH(), "%s RETH", tc.op)
		assert.Equal(t, tc.atomic, tc.op.HasAtomicETH(), "%s AtomicETH", tc.op)
		assert.Equal(t, tc.imm, tc.op.HasImm(), "%s ImmDt", tc.op)
		assert.Equal(t, tc.ieth, tc.op.HasIETH(), "%s IETH", tc.op)
		assert.Equal(t, tc.aeth, tc.op.HasAETH(), "%s AETH", tc.op)
		assert.Equal(t, tc.atomicAck, tc.op.HasAtomicAckETH(), "%s AtomicAckETH", tc.op)
		assert.Equal(t, tc.data, tc.op.HasPayload(), "%s payload", tc.op)
	}
	n := 0
	for i := 0; i < 256; i++ {
		if Opcode(i).Valid() {
			n++
		}
	}
	assert.Equal(t, len(Opcodes), n, "Opcodes lists every valid opcode")
	assert.Equal(t, "Opcode(0x15)", Opcode(0x15).String())
}

func TestValidateRejects(t *testing.T) {
	tests := []struct {
		name  string
		field string
		edit  func(*Frame)
	}{
		{"unknown opcode", "opcode", func(f *Frame) { f.Opcode = 0x15 }},
		{"dst qpn 25 bits", "bth", func(f *Frame) { f.DstQPN = 1 << 24 }},
		{"src qpn 25 bits", "bth", func(f *Frame) { f.SrcQPN = 1 << 24 }},
		{"psn 25 bits", "bth", func(f *Frame) { f.PSN = 1 << 24 }},
		{"se on write only", "se", func(f *Frame) { f.Opcode = OpWriteOnly; f.SE = true }},
		{"payload on read request", "payload", func(f *Frame) { f.Opcode = OpReadRequest }},
		{"payload over max", "payload", func(f *Frame) { f.Payload = make([]byte, MaxPayload+1) }},
		{"reserved ack kind", "aeth", func(f *Frame) { f.Opcode, f.Payload, f.AETH.Syndrome = OpAck, nil, 0x40 }},
		{"reserved nak code", "aeth", func(f *Frame) { f.Opcode, f.Payload, f.AETH.Syndrome = OpAck, nil, 0x64 }},
		{"msn 25 bits", "aeth", func(f *Frame) { f.Opcode, f.Payload, f.AETH.MSN = OpAck, nil, 1<<24 }},
		{"masked size 2", "atomic", func(f *Frame) { f.Opcode, f.Payload, f.Atomic.Size = OpMaskedCompareSwap, nil, 2 }},
		{"masked size 0", "atomic", func(f *Frame) { f.Opcode, f.Payload, f.Atomic.Size = OpMaskedFetchAdd, nil, 0 }},
		{"4-byte masked CS mask too wide", "atomic", func(f *Frame) {
			f.Opcode, f.Payload, f.Atomic = OpMaskedCompareSwap, nil, AtomicETH{Size: 4, CompareMask: 1 << 32}
		}},
		{"4-byte masked FA boundary too wide", "atomic", func(f *Frame) {
			f.Opcode, f.Payload, f.Atomic = OpMaskedFetchAdd, nil, AtomicETH{Size: 4, FieldBoundary: 1 << 40}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Frame{Opcode: OpSendOnly, Payload: []byte{1}}
			tc.edit(&f)
			err := f.Validate()
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrMalformed)
			var fe *FrameError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
			assert.Equal(t, "validate", fe.Op)
			// What Validate rejects, Decode rejects after encoding.
			if len(f.Payload) <= MaxPayload {
				_, derr := Decode(f.AppendEncode(nil))
				assert.ErrorIs(t, derr, ErrMalformed)
			}
		})
	}
	ok := Frame{Opcode: OpMaskedFetchAdd, Atomic: AtomicETH{Size: 4, SwapAdd: 0xffffffff, FieldBoundary: 0x80008000}}
	assert.NoError(t, ok.Validate())
}

func TestDecodeRejects(t *testing.T) {
	good := sampleFrame(OpWriteOnlyImm)
	enc := good.AppendEncode(nil)
	mut := func(edit func(b []byte) []byte) []byte {
		return edit(append([]byte(nil), enc...))
	}
	be := binary.BigEndian
	tests := []struct {
		name  string
		field string
		b     []byte
	}{
		{"empty", "length", nil},
		{"short", "length", enc[:7]},
		{"bad magic", "magic", mut(func(b []byte) []byte { b[0] = 'X'; return b })},
		{"bad version", "magic", mut(func(b []byte) []byte { b[3] = 1; return b })},
		{"length below header", "length", mut(func(b []byte) []byte { be.PutUint32(b[4:], HeaderLen-1); return b })},
		{"length above max", "length", mut(func(b []byte) []byte { be.PutUint32(b[4:], MaxFrameLen+1); return b })},
		{"length field disagrees with buffer", "length", mut(func(b []byte) []byte { return b[:len(b)-1] })},
		{"trailing byte", "length", mut(func(b []byte) []byte { return append(b, 0) })},
		{"payload length disagrees", "length", mut(func(b []byte) []byte { be.PutUint32(b[56:], 3); return b })},
		{"unknown opcode", "opcode", mut(func(b []byte) []byte { b[8] = 0x15; return b })},
		{"manufacturer opcode not ours", "opcode", mut(func(b []byte) []byte { b[8] = 0xe2; return b })},
		{"unknown flag", "flags", mut(func(b []byte) []byte { b[9] |= 0x01; return b })},
		{"reserved", "reserved", mut(func(b []byte) []byte { b[11] = 1; return b })},
		{"qpn top byte", "bth", mut(func(b []byte) []byte { b[12] = 1; return b })},
		{"psn top byte", "bth", mut(func(b []byte) []byte { b[16] = 1; return b })},
		{"src qpn top byte", "bth", mut(func(b []byte) []byte { b[20] = 1; return b })},
		// WRITE_ONLY_IMM relabelled SEND_ONLY: the RETH and ImmDt bytes it does
		// not expect make the lengths disagree.
		{"header missing for opcode", "length", mut(func(b []byte) []byte { b[8] = byte(OpSendOnly); return b })},
		{"se on opcode without it", "se", mut(func(b []byte) []byte {
			// WRITE_ONLY has the same headers but no SE: only the ImmDt must go.
			b[8] = byte(OpWriteOnly)
			b = append(b[:HeaderLen+16], b[HeaderLen+20:]...)
			be.PutUint32(b[4:], uint32(len(b)))
			return b
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.b)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrMalformed)
			var fe *FrameError
			require.True(t, errors.As(err, &fe))
			assert.Equal(t, tc.field, fe.Field, err.Error())
			assert.Equal(t, "decode", fe.Op)
			assert.Contains(t, err.Error(), "wire: decode: ")
		})
	}
}

func TestDecodeRejectsHeaderFields(t *testing.T) {
	be := binary.BigEndian
	ack := Frame{Opcode: OpAck, AETH: AETH{Syndrome: AckSyndrome(31)}}
	b := ack.AppendEncode(nil)
	b[HeaderLen] = 0x45 // reserved kind 010
	_, err := Decode(b)
	assert.ErrorIs(t, err, ErrMalformed)

	mfa := Frame{Opcode: OpMaskedFetchAdd, Atomic: AtomicETH{Size: 8}}
	b = mfa.AppendEncode(nil)
	be.PutUint64(b[HeaderLen+40:], 1) // mask words must be zero for FA
	_, err = Decode(b)
	assert.ErrorIs(t, err, ErrMalformed)

	b = mfa.AppendEncode(nil)
	b[HeaderLen+13] = 1 // reserved bytes after the size
	_, err = Decode(b)
	assert.ErrorIs(t, err, ErrMalformed)

	b = mfa.AppendEncode(nil)
	b[HeaderLen+12] = 16 // operand size this package does not carry
	_, err = Decode(b)
	assert.ErrorIs(t, err, ErrMalformed)
}

func TestFrameLen(t *testing.T) {
	f := sampleFrame(OpSendOnly)
	b := f.AppendEncode(nil)
	n, err := FrameLen(b[:8])
	require.NoError(t, err)
	assert.Equal(t, len(b), n)
}

func TestEncodeDecodeDoNotAllocate(t *testing.T) {
	f := sampleFrame(OpWriteOnly)
	buf := make([]byte, 0, 256)
	var g Frame
	allocs := testing.AllocsPerRun(100, func() {
		buf = f.AppendEncode(buf[:0])
		if err := DecodeInto(&g, buf); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}

func TestGID(t *testing.T) {
	a := netip.MustParseAddr("10.20.30.40")
	g := GIDFromIPv4(a)
	assert.Equal(t, GID{10: 0xff, 11: 0xff, 12: 10, 13: 20, 14: 30, 15: 40}, g)
	back, ok := g.IPv4()
	require.True(t, ok)
	assert.Equal(t, a, back)
	assert.Equal(t, "::ffff:10.20.30.40", g.String())
	v6 := GID(netip.MustParseAddr("fe80::1").As16())
	_, ok = v6.IPv4()
	assert.False(t, ok)
	assert.Equal(t, "fe80::1", v6.String())
	assert.Panics(t, func() { GIDFromIPv4(netip.MustParseAddr("::1")) })
}
