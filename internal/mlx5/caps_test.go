package mlx5

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCapsRoundTrip(t *testing.T) {
	t.Run("cmd_hca_cap", func(t *testing.T) {
		roundTrip(t, CapLen, (*HCACaps).bindings, HCACaps.Encode, DecodeHCACaps)
	})
	t.Run("atomic_caps", func(t *testing.T) {
		roundTrip(t, CapLen, (*AtomicCaps).bindings, AtomicCaps.Encode, DecodeAtomicCaps)
	})
	t.Run("roce_cap", func(t *testing.T) {
		roundTrip(t, CapLen, (*RoCECaps).bindings, RoCECaps.Encode, DecodeRoCECaps)
	})
	t.Run("cmd_hca_cap_2", func(t *testing.T) {
		roundTrip(t, CapLen, (*HCACaps2).bindings, HCACaps2.Encode, DecodeHCACaps2)
	})
}

// Absolute output-mailbox positions from the PRM capability tables, checked
// through a marshalled QUERY_HCA_CAP output.
func TestCapsMailboxPositions(t *testing.T) {
	gen := HCACaps{LogMaxQPSz: 15, PortType: PortTypeETH, RC: true, LogMaxUCtx: 5, WaitOnData: true,
		MaxWQESzSQ: 1024, DeviceFrequencyKHz: 0x11223344}
	o, err := NewQueryHCACapOut(gen)
	require.NoError(t, err)
	b, err := o.Marshal()
	require.NoError(t, err)
	require.Len(t, b, QueryHCACapOutLen)
	require.Equal(t, byte(15), b[33])                            // log_max_qp_sz DW8[23:16]
	require.Equal(t, byte(0x01), b[70]&0x03)                     // port_type DW17[9:8]
	require.Equal(t, byte(0x01), b[87]&0x01)                     // rc DW21[0]
	require.Equal(t, byte(0x05), b[156]&0x1f)                    // log_max_uctx DW35[28:24] -> out byte 156
	require.Equal(t, byte(0x10), b[225]&0x10)                    // wait_on_data DW52[20]: out byte 224, bits 23:16 = byte 225
	require.Equal(t, []byte{0x04, 0x00}, b[98:100])              // max_wqe_sz_sq
	require.Equal(t, []byte{0x11, 0x22, 0x33, 0x44}, b[172:176]) // device_frequency_khz
	back, err := UnmarshalQueryHCACapOut(b)
	require.NoError(t, err)
	g, err := back.General()
	require.NoError(t, err)
	require.Equal(t, gen, g)

	roce := RoCECaps{RoCEVersion: RoCEVersion2Bit, RRoCEDestUDPPort: RoCEv2DestUDPPort,
		RRoCEMinSrcUDPPort: 0xc000, RRoCEMaxSrcUDPPort: 0xffff, RoCEAddressTableSize: 256, QPTSFormat: 2}
	o, err = NewQueryHCACapOut(roce)
	require.NoError(t, err)
	b, _ = o.Marshal()
	require.Equal(t, byte(4), b[35])
	require.Equal(t, []byte{0x12, 0xb7}, b[38:40])
	require.Equal(t, []byte{0xff, 0xff, 0xc0, 0x00}, b[40:44])
	require.Equal(t, []byte{0x01, 0x00}, b[46:48])
	require.Equal(t, byte(2), b[19]&3)
	back, _ = UnmarshalQueryHCACapOut(b)
	r, err := back.RoCE()
	require.NoError(t, err)
	require.Equal(t, roce, r)

	at := AtomicCaps{AtomicOperations: AtomicOpCmpSwap | AtomicOpFetchAdd | AtomicOpMaskedCmpSwap | AtomicOpMaskedFetchAdd,
		AtomicSizeQP: AtomicSize4B | AtomicSize8B, AtomicReq8BEndiannessMode: AtomicEndiannessHostMode,
		SupportedAtomicReq8BEndiannessMode1: true}
	o, _ = NewQueryHCACapOut(at)
	b, _ = o.Marshal()
	require.Equal(t, byte(0x42), b[24]) // mode 1 in [31:30], supported bit 25
	require.Equal(t, []byte{0x00, 0x0f}, b[34:36])
	require.Equal(t, []byte{0x00, 0x0c}, b[38:40])
	back, _ = UnmarshalQueryHCACapOut(b)
	a, err := back.Atomic()
	require.NoError(t, err)
	require.Equal(t, at, a)

	c2 := HCACaps2{SendDBRModeNoDBRExt: true, LogMaxSendDBRLessQPSQ: 0x1f}
	o, _ = NewQueryHCACapOut(c2)
	b, _ = o.Marshal()
	require.Equal(t, byte(0x5f), b[108])
	back, _ = UnmarshalQueryHCACapOut(b)
	g2, err := back.General2()
	require.NoError(t, err)
	require.Equal(t, c2, g2)

	for _, c := range []Capability{gen, roce, at, c2} {
		o, _ := NewQueryHCACapOut(c)
		d, err := DecodeCapability(c.CapType(), o.Cap[:])
		require.NoError(t, err)
		require.Equal(t, c, d)
	}
	_, err = DecodeCapability(CapType(1), o.Cap[:])
	require.ErrorIs(t, err, ErrInvalid)
	_, err = NewQueryHCACapOut(HCACaps{PortType: 4})
	require.ErrorIs(t, err, ErrRange)
}

func TestQueryHCACapGolden(t *testing.T) {
	cases := []struct {
		name    string
		t       CapType
		current bool
		opMod   uint16
		dump    string
	}{
		{"general/cur", CapGeneral, true, 0x01, "0000: 01000000 00000001 00000000 00000000"},
		{"roce/cur", CapRoCE, true, 0x09, "0000: 01000000 00000009 00000000 00000000"},
		{"atomic/cur", CapAtomic, true, 0x07, "0000: 01000000 00000007 00000000 00000000"},
		{"general2/cur", CapGeneral2, true, 0x41, "0000: 01000000 00000041 00000000 00000000"},
		{"general/max", CapGeneral, false, 0x00, "0000: 01000000 00000000 00000000 00000000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.opMod, HCACapOpMod(c.t, c.current))
			in := NewQueryHCACapIn(c.t, c.current)
			b, err := in.Marshal()
			require.NoError(t, err)
			require.Equal(t, parseDump(t, QueryHCACapInLen, c.dump), b)
			back, err := UnmarshalQueryHCACapIn(b)
			require.NoError(t, err)
			require.Equal(t, in, back)
			require.Equal(t, c.t, back.CapType())
			require.Equal(t, c.current, back.Current())
		})
	}
	in := NewQueryHCACapIn(CapGeneral, true)
	in.FunctionID = 0xabcd
	in.OtherFunction = true
	b, err := in.Marshal()
	require.NoError(t, err)
	require.Equal(t, []byte{0x80, 0, 0xab, 0xcd}, b[8:12])
	back, err := UnmarshalQueryHCACapIn(b)
	require.NoError(t, err)
	require.Equal(t, in, back)
}

func TestQueryHCACapBadLengths(t *testing.T) {
	for _, n := range []int{0, 8, 15, 17, 272} {
		_, err := UnmarshalQueryHCACapIn(make([]byte, n))
		require.ErrorIs(t, err, ErrLength, "in len %d", n)
	}
	for _, n := range []int{0, 16, 272, 4111, 4113} {
		_, err := UnmarshalQueryHCACapOut(make([]byte, n))
		require.ErrorIs(t, err, ErrLength, "out len %d", n)
	}
	b := make([]byte, 16)
	Set(b, CmdHeaderFields.Opcode, uint64(OpQueryQP))
	_, err := UnmarshalQueryHCACapIn(b)
	require.ErrorIs(t, err, ErrOpcode)
}

func TestCapTypeString(t *testing.T) {
	require.Equal(t, "ROCE", CapRoCE.String())
	require.Equal(t, "GENERAL_2", CapGeneral2.String())
	require.Equal(t, "CAP_TYPE_0x7", CapType(7).String())
}

// FuzzQueryHCACap feeds arbitrary bytes to the QUERY_HCA_CAP parsers and to
// every capability decoder.
func FuzzQueryHCACap(f *testing.F) {
	f.Add(uint8(0), parseDump(f, 16, "0000: 01000000 00000001 00000000 00000000"))
	f.Add(uint8(4), parseDump(f, 16, "0000: 01000000 00000009 00000000 00000000"))
	for _, c := range []Capability{HCACaps{LogMaxQPSz: 15, RC: true}, RoCECaps{RoCEVersion: 4},
		AtomicCaps{AtomicOperations: 0xf}, HCACaps2{SendDBRModeNoDBRExt: true}} {
		o, _ := NewQueryHCACapOut(c)
		b, _ := o.Marshal()
		f.Add(uint8(c.CapType()), b)
	}
	f.Fuzz(func(t *testing.T, typ uint8, b []byte) {
		if in, err := UnmarshalQueryHCACapIn(b); err == nil {
			remarshal(t, in, QueryHCACapIn.Marshal, UnmarshalQueryHCACapIn)
		}
		if o, err := UnmarshalQueryHCACapOut(b); err == nil {
			remarshal(t, o, QueryHCACapOut.Marshal, UnmarshalQueryHCACapOut)
			b = o.Cap[:]
		}
		c, err := DecodeCapability(CapType(typ), b)
		if err != nil {
			return
		}
		o, err := NewQueryHCACapOut(c)
		if err != nil {
			t.Fatalf("re-encode of a decoded capability: %v", err)
		}
		back, err := DecodeCapability(CapType(typ), o.Cap[:])
		if err != nil || !reflect.DeepEqual(c, back) {
			t.Fatalf("capability round trip: %v %+v %+v", err, c, back)
		}
	})
}
