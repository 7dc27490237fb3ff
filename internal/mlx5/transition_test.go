package mlx5

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const (
	goldenRST2INIT = `
0000: 05020000 00000000 00001a2b 00000000
0050: 00000000 00010000 00000000 00000000
00a0: 00000000 00000000 0003e000 00000000`
	goldenINIT2RTR = `
0000: 05030000 00000000 00001a2b 00000000
0020: be000000 00000000 00000000 00003c4d
0030: 00000000 00000000 00030040 00000000
0040: 00000000 00000000 0000ffff c0a80114
0050: 001ac123 0001b83f d2112233 00000000
00a0: 00000000 00000000 00800000 0c123456`
	goldenRTR2RTS = `
0000: 05040000 00000000 00001a2b 00000000
0030: 00000000 00000000 70000000 00000000
0080: 00000000 00000000 0087e000 00000000
0090: 00654321 00000000 00000000 00000000`
)

func goldenTransitions() []struct {
	name string
	in   ModifyQPIn
	dump string
} {
	rst2init := NewModifyQPIn(OpRST2INIT, 0x1a2b)
	rst2init.QPC.PrimaryAddressPath.VHCAPortNum = 1
	rst2init.QPC.RRE, rst2init.QPC.RWE, rst2init.QPC.RAE = true, true, true
	rst2init.QPC.AtomicMode = AtomicMode8B

	init2rtr := NewModifyQPIn(OpINIT2RTR, 0x1a2b)
	q := &init2rtr.QPC
	q.MTU, q.LogMsgMax, q.RemoteQPN, q.NextRcvPSN, q.MinRNRNak, q.LogRRAMax = MTU4096, 30, 0x3c4d, 0x123456, 12, 4
	p := &q.PrimaryAddressPath
	p.RGID = [16]byte{10: 0xff, 11: 0xff, 12: 192, 13: 168, 14: 1, 15: 20}
	p.SrcAddrIndex, p.HopLimit, p.UDPSport, p.DSCP, p.VHCAPortNum = 3, 64, 0xc123, 26, 1
	p.RMAC = [6]byte{0xb8, 0x3f, 0xd2, 0x11, 0x22, 0x33}

	rtr2rts := NewModifyQPIn(OpRTR2RTS, 0x1a2b)
	rtr2rts.QPC.NextSendPSN, rtr2rts.QPC.RetryCount, rtr2rts.QPC.RNRRetry, rtr2rts.QPC.LogSRAMax = 0x654321, 7, 7, 4
	rtr2rts.QPC.PrimaryAddressPath.AckTimeout = 14

	return []struct {
		name string
		in   ModifyQPIn
		dump string
	}{
		{"RST2INIT", rst2init, goldenRST2INIT},
		{"INIT2RTR", init2rtr, goldenINIT2RTR},
		{"RTR2RTS", rtr2rts, goldenRTR2RTS},
	}
}

func TestTransitionGolden(t *testing.T) {
	for _, g := range goldenTransitions() {
		t.Run(g.name, func(t *testing.T) {
			b, err := g.in.Marshal()
			require.NoError(t, err)
			require.Equal(t, parseDump(t, ModifyQPInLen, g.dump), b)
			back, err := UnmarshalModifyQPIn(parseDump(t, ModifyQPInLen, g.dump))
			require.NoError(t, err)
			require.Equal(t, g.in, back)
			// The golden commands use only fields their transition applies.
			fields, err := AppliedFields(g.in.Opcode, STRC, g.in.OptParamMask, 0)
			require.NoError(t, err)
			var applied QPContext
			require.NoError(t, applied.CopyFields(&back.QPC, fields))
			require.Equal(t, g.in.QPC, applied, "%s sets a field it does not apply", g.name)
		})
	}
}

func TestModifyQPInRoundTrip(t *testing.T) {
	for _, op := range Transitions() {
		tr, _ := TransitionFor(op)
		t.Run(OpcodeName(op), func(t *testing.T) {
			n := tr.Len
			bind := func(in *ModifyQPIn) []binding { return in.bindings(n) }
			enc, dec := bodyCodec(op, ModifyQPIn.Marshal, UnmarshalModifyQPIn,
				func(in *ModifyQPIn) { in.CmdHeader = CmdHeader{} })
			encOp := func(in ModifyQPIn, b []byte) error { in.Opcode = op; return enc(in, b) }
			// leafCount covers the whole struct; short forms bind fewer fields,
			// so check them through a struct-independent loop instead.
			if n == ModifyQPInExtLen {
				roundTrip(t, n, bind, encOp, dec)
				return
			}
			var zero ModifyQPIn
			bs := bind(&zero)
			checkNoOverlap(t, n, bs)
			for i := range bs {
				var v ModifyQPIn
				x := bind(&v)[i]
				if x.raw != nil {
					x.raw[0] = 0x5a
				} else {
					x.set(distinct(x.f))
				}
				b := make([]byte, n)
				require.NoError(t, encOp(v, b), x.name)
				back, err := dec(b)
				require.NoError(t, err, x.name)
				require.Equal(t, v, back, x.name)
			}
		})
	}
}

func TestModifyQPInForms(t *testing.T) {
	// 2ERR / 2RST: 16 bytes, only qpn.
	for _, op := range []Opcode{Op2ERR, Op2RST} {
		in := NewModifyQPIn(op, 0x1a2b)
		b, err := in.Marshal()
		require.NoError(t, err)
		want := make([]byte, 16)
		Set(want, CmdHeaderFields.Opcode, uint64(op))
		Set(want, ObjIDField, 0x1a2b)
		require.Equal(t, want, b)
		back, err := UnmarshalModifyQPIn(b)
		require.NoError(t, err)
		require.Equal(t, in, back)
		in.OptParamMask = OptRRE
		_, err = in.Marshal()
		require.ErrorIs(t, err, ErrInvalid)
		in = NewModifyQPIn(op, 1)
		in.QPC.MTU = MTU1024
		_, err = in.Marshal()
		require.ErrorIs(t, err, ErrInvalid)
		_, err = UnmarshalModifyQPIn(make([]byte, 272))
		require.Error(t, err)
	}
	// RTS2RTS: 464 bytes with the extended mask and qpc_data_ext.
	in := NewModifyQPIn(OpRTS2RTS, 0x1a2b)
	in.OptParamMask95_32 = OptExtUDPSport
	in.QPC.PrimaryAddressPath.UDPSport = 0xc001
	in.QPCExt = true
	in.Ext.QoSQueueGroupIDResponder = 0x01020304
	b, err := in.Marshal()
	require.NoError(t, err)
	require.Len(t, b, ModifyQPInExtLen)
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 4}, b[264:272])
	require.Equal(t, []byte{1, 2, 3, 4}, b[280:284])
	require.Equal(t, byte(0x80), b[8])
	back, err := UnmarshalModifyQPIn(b)
	require.NoError(t, err)
	require.Equal(t, in, back)
	// ... and its 272-byte form is accepted on input.
	short := NewModifyQPIn(OpRTS2RTS, 5)
	short.OptParamMask = OptRNRTimeout
	short.QPC.MinRNRNak = 3
	sb, err := short.Marshal()
	require.NoError(t, err)
	back, err = UnmarshalModifyQPIn(sb[:ModifyQPInLen])
	require.NoError(t, err)
	require.Equal(t, short, back)

	// Extended fields cannot be sent in a 272-byte transition.
	bad := NewModifyQPIn(OpRTR2RTS, 5)
	bad.OptParamMask95_32 = OptExtUDPSport
	_, err = bad.Marshal()
	require.ErrorIs(t, err, ErrInvalid)
	bad = NewModifyQPIn(OpCreateQP, 5)
	_, err = bad.Marshal()
	require.ErrorIs(t, err, ErrOpcode)
	bad = NewModifyQPIn(OpINIT2RTR, 1<<24)
	_, err = bad.Marshal()
	require.ErrorIs(t, err, ErrRange)
}

func TestModifyQPInBadLengths(t *testing.T) {
	cases := []struct {
		op  Opcode
		bad []int
	}{
		{OpRST2INIT, []int{8, 16, 271, 273, 464}},
		{OpINIT2RTR, []int{8, 16, 271, 464}},
		{OpRTR2RTS, []int{8, 16, 463}},
		{OpRTS2RTS, []int{8, 16, 271, 273, 463, 465}},
		{OpINIT2INIT, []int{16, 300}},
		{Op2ERR, []int{8, 15, 17, 272}},
		{Op2RST, []int{8, 15, 17, 272}},
	}
	for _, c := range cases {
		for _, n := range c.bad {
			b := make([]byte, n)
			_ = CmdHeader{Opcode: c.op}.Encode(b)
			_, err := UnmarshalModifyQPIn(b)
			require.ErrorIs(t, err, ErrLength, "%s len %d", OpcodeName(c.op), n)
		}
	}
	_, err := UnmarshalModifyQPIn(make([]byte, 4))
	require.ErrorIs(t, err, ErrLength)
	b := make([]byte, 272)
	_ = CmdHeader{Opcode: OpCreateQP}.Encode(b)
	_, err = UnmarshalModifyQPIn(b)
	require.ErrorIs(t, err, ErrOpcode)
}

func TestAllowedOptParams(t *testing.T) {
	cases := []struct {
		op     Opcode
		rc, uc OptParam
	}{
		{OpRST2INIT, 0, 0},
		{OpINIT2INIT, OptRRE | OptRAE | OptRWE | OptPKeyIndex | OptPriPort | OptLAGTxAff,
			OptRWE | OptPKeyIndex | OptPriPort | OptLAGTxAff},
		{OpINIT2RTR, OptAltAddrPath | OptRRE | OptRAE | OptRWE | OptPKeyIndex | OptLAGTxAff,
			OptAltAddrPath | OptRWE | OptPKeyIndex | OptLAGTxAff},
		{OpRTR2RTS, OptAltAddrPath | OptRRE | OptRAE | OptRWE | OptPMState | OptRNRTimeout,
			OptAltAddrPath | OptRWE | OptPMState},
		{OpRTS2RTS, OptRRE | OptRAE | OptRWE | OptRNRTimeout | OptPMState | OptAltAddrPath | OptSGIDIndex | OptDSCP,
			OptRWE | OptPMState | OptAltAddrPath | OptSGIDIndex | OptDSCP},
		{Op2ERR, 0, 0}, {Op2RST, 0, 0}, {OpCreateQP, 0, 0},
	}
	for _, c := range cases {
		require.Equal(t, c.rc, AllowedOptParams(c.op), OpcodeName(c.op))
		tr, ok := TransitionFor(c.op)
		if c.op == OpCreateQP {
			require.False(t, ok)
			continue
		}
		require.Equal(t, c.rc, tr.Allowed(STRC))
		require.Equal(t, c.uc, tr.Allowed(STUC))
		require.Zero(t, tr.Allowed(STUD))
	}
	require.Equal(t, "RRE|RWE|RNR_TIMEOUT", (OptRRE | OptRWE | OptRNRTimeout).String())
	require.Equal(t, "DSCP|SGID_INDEX|0x80000000", (OptSGIDIndex | OptDSCP | 1<<31).String())
	require.Equal(t, "0", OptParam(0).String())
	require.Equal(t, "UDP_SPORT|0x8", (OptExtUDPSport | 8).String())
}

func TestTransitionRules(t *testing.T) {
	// min_rnr_nak is required in INIT2RTR and optional (mask) in RTR2RTS.
	req, opt := TransitionFields(OpINIT2RTR)
	require.Contains(t, req, "min_rnr_nak")
	require.Contains(t, req, "primary_address_path.rgid_rip")
	require.NotContains(t, req, "primary_address_path.pkey_index")
	require.NotContains(t, req, "primary_address_path.ack_timeout")
	require.Contains(t, opt, "primary_address_path.pkey_index")
	require.Contains(t, opt, "secondary_address_path.rmac")
	req, opt = TransitionFields(OpRTR2RTS)
	require.NotContains(t, req, "min_rnr_nak")
	require.Contains(t, opt, "min_rnr_nak")
	require.Contains(t, req, "primary_address_path.ack_timeout")
	req, opt = TransitionFields(OpRST2INIT)
	require.Empty(t, opt)
	require.Subset(t, req, []string{"rre", "rwe", "rae", "atomic_mode", "pm_state", "primary_address_path.vhca_port_num"})

	// Every name in the tables is a real qpc field.
	all := QPCFieldNames()
	for _, op := range Transitions() {
		tr, _ := TransitionFor(op)
		require.Subset(t, all, tr.Required, OpcodeName(op))
		require.Subset(t, all, tr.AllowedRC.Fields())
	}
	for bit := OptParam(1); bit != 0; bit <<= 1 {
		if _, ok := optParamInfo[bit]; ok {
			require.NotEmpty(t, bit.Fields(), bit.String())
			require.Subset(t, all, bit.Fields())
		}
	}

	// RAE enables atomic_mode with it.
	require.Equal(t, []string{"rae", "atomic_mode"}, OptRAE.Fields())
	require.Equal(t, []string{"primary_address_path.udp_sport"}, OptExtUDPSport.Fields())

	// AppliedFields: required + mask; disallowed bits rejected.
	f, err := AppliedFields(OpRTR2RTS, STRC, OptRNRTimeout, 0)
	require.NoError(t, err)
	require.Contains(t, f, "min_rnr_nak")
	require.Contains(t, f, "next_send_psn")
	_, err = AppliedFields(OpRST2INIT, STRC, OptRRE, 0)
	require.ErrorIs(t, err, ErrInvalid)
	require.Contains(t, err.Error(), "RRE")
	_, err = AppliedFields(OpINIT2RTR, STUC, OptRRE, 0)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = AppliedFields(OpRTR2RTS, STRC, 0, OptExtUDPSport)
	require.ErrorIs(t, err, ErrInvalid)
	f, err = AppliedFields(OpRTS2RTS, STRC, 0, OptExtUDPSport)
	require.NoError(t, err)
	require.Equal(t, []string{"primary_address_path.udp_sport"}, f)
	_, err = AppliedFields(OpCreateQP, STRC, 0, 0)
	require.ErrorIs(t, err, ErrOpcode)

	// State legality.
	legal := map[Opcode][]QPState{
		OpRST2INIT: {QPStateRST}, OpINIT2INIT: {QPStateINIT}, OpINIT2RTR: {QPStateINIT},
		OpRTR2RTS: {QPStateRTR}, OpRTS2RTS: {QPStateRTS}, OpSQERR2RTS: {QPStateSQER},
		Op2ERR: {QPStateRST, QPStateINIT, QPStateRTR, QPStateRTS, QPStateSQER, QPStateSQD, QPStateERR},
		Op2RST: {QPStateRST, QPStateINIT, QPStateRTR, QPStateRTS, QPStateSQER, QPStateSQD, QPStateERR},
	}
	for op, states := range legal {
		tr, ok := TransitionFor(op)
		require.True(t, ok)
		for s := QPState(0); s < 10; s++ {
			want := false
			for _, l := range states {
				want = want || l == s
			}
			require.Equal(t, want, tr.LegalFrom(s), "%s from %v", OpcodeName(op), s)
		}
	}
	require.Len(t, Transitions(), len(legal))
	// TransitionFor returns copies.
	tr, _ := TransitionFor(OpRST2INIT)
	tr.Required[0] = "changed"
	tr2, _ := TransitionFor(OpRST2INIT)
	require.NotEqual(t, "changed", tr2.Required[0])
}

func TestTimers(t *testing.T) {
	d, err := AckTimeout(0)
	require.NoError(t, err)
	require.Equal(t, AckTimeoutInfinite, d)
	d, _ = AckTimeout(1)
	require.Equal(t, 8192*time.Nanosecond, d)
	d, _ = AckTimeout(14)
	require.Equal(t, 67108864*time.Nanosecond, d) // ≈ 67 ms
	d, _ = AckTimeout(31)
	require.Equal(t, time.Duration(4096)<<31, d)
	_, err = AckTimeout(32)
	require.ErrorIs(t, err, ErrRange)

	for _, c := range []struct {
		d    time.Duration
		code uint8
	}{{0, 0}, {time.Nanosecond, 1}, {8192 * time.Nanosecond, 1}, {8193 * time.Nanosecond, 2}, {67 * time.Millisecond, 14}} {
		got, err := AckTimeoutCode(c.d)
		require.NoError(t, err)
		require.Equal(t, c.code, got, "%v", c.d)
	}
	_, err = AckTimeoutCode(time.Duration(4096) << 32)
	require.ErrorIs(t, err, ErrRange)

	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	table := []float64{655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12, 0.16, 0.24, 0.32, 0.48, 0.64, 0.96,
		1.28, 1.92, 2.56, 3.84, 5.12, 7.68, 10.24, 15.36, 20.48, 30.72, 40.96, 61.44, 81.92, 122.88, 163.84,
		245.76, 327.68, 491.52}
	for code, want := range table {
		d, err := MinRNRNak(uint8(code))
		require.NoError(t, err)
		require.InDelta(t, float64(ms(want)), float64(d), 1, "code %d", code)
	}
	_, err = MinRNRNak(32)
	require.ErrorIs(t, err, ErrRange)
	for _, c := range []struct {
		d    time.Duration
		code uint8
	}{{0, 1}, {ms(0.01), 1}, {ms(0.05), 5}, {ms(1.28), 14}, {ms(491.52), 31}, {ms(500), 0}, {ms(655.36), 0}} {
		got, err := MinRNRNakCode(c.d)
		require.NoError(t, err)
		require.Equal(t, c.code, got, "%v", c.d)
	}
	_, err = MinRNRNakCode(time.Second)
	require.ErrorIs(t, err, ErrRange)
}

// FuzzModifyQPIn feeds arbitrary bytes to the transition parser and the
// rule helpers the emulator runs on its result.
func FuzzModifyQPIn(f *testing.F) {
	f.Add(parseDump(f, ModifyQPInLen, goldenRST2INIT))
	f.Add(parseDump(f, ModifyQPInLen, goldenINIT2RTR))
	f.Add(parseDump(f, ModifyQPInLen, goldenRTR2RTS))
	for _, op := range []Opcode{Op2ERR, Op2RST, OpRTS2RTS, OpINIT2INIT, OpSQERR2RTS} {
		b, _ := NewModifyQPIn(op, 0x1a2b).Marshal()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := UnmarshalModifyQPIn(b)
		if err != nil {
			return
		}
		if len(b) != 272 || in.Opcode == OpRST2INIT || in.Opcode == OpINIT2RTR || in.Opcode == OpRTR2RTS || in.Opcode == OpSQERR2RTS {
			// The canonical size: Marshal reproduces it.
			remarshal(t, in, ModifyQPIn.Marshal, UnmarshalModifyQPIn)
		}
		if fields, err := AppliedFields(in.Opcode, STRC, in.OptParamMask, in.OptParamMask95_32); err == nil {
			var q QPContext
			if err := q.CopyFields(&in.QPC, fields); err != nil {
				t.Fatalf("applied fields must exist: %v", err)
			}
		}
	})
}

// TransitionBetween finds the command for a state pair, as verbs looks a
// transition up (by the state the QP is in and the one asked for).
func TestTransitionBetween(t *testing.T) {
	want := map[[2]QPState]Opcode{
		{QPStateRST, QPStateINIT}: OpRST2INIT, {QPStateINIT, QPStateINIT}: OpINIT2INIT,
		{QPStateINIT, QPStateRTR}: OpINIT2RTR, {QPStateRTR, QPStateRTS}: OpRTR2RTS,
		{QPStateRTS, QPStateRTS}: OpRTS2RTS, {QPStateSQER, QPStateRTS}: OpSQERR2RTS,
	}
	for _, s := range []QPState{QPStateRST, QPStateINIT, QPStateRTR, QPStateRTS, QPStateSQER, QPStateSQD, QPStateERR} {
		want[[2]QPState{s, QPStateERR}] = Op2ERR
		want[[2]QPState{s, QPStateRST}] = Op2RST
	}
	for from := QPState(0); from < 10; from++ {
		for to := QPState(0); to < 10; to++ {
			tr, ok := TransitionBetween(from, to)
			op, exists := want[[2]QPState{from, to}]
			require.Equal(t, exists, ok, "%v -> %v", from, to)
			if ok {
				require.Equal(t, op, tr.Op, "%v -> %v", from, to)
				require.Equal(t, to, tr.To)
				require.True(t, tr.LegalFrom(from))
			}
		}
	}
}
