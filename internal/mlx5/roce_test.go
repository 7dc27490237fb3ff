package mlx5

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRoCEAddrRoundTrip(t *testing.T) {
	roundTrip(t, RoCEAddrLen, (*RoCEAddr).bindings, RoCEAddr.Encode, DecodeRoCEAddr)
}

func TestQueryRoCEAddress(t *testing.T) {
	in := QueryRoCEAddressIn{RoCEAddressIndex: 3, VHCAPortNum: 1}
	b, err := in.Marshal()
	require.NoError(t, err)
	require.Equal(t, parseDump(t, 16, "0000: 07600000 00000000 00030001 00000000"), b)
	back, err := UnmarshalQueryRoCEAddressIn(b)
	require.NoError(t, err)
	in.Opcode = OpQueryRoCEAddress
	require.Equal(t, in, back)
	_, err = QueryRoCEAddressIn{VHCAPortNum: 16}.Marshal()
	require.ErrorIs(t, err, ErrRange)
	for _, n := range []int{0, 15, 17} {
		_, err := UnmarshalQueryRoCEAddressIn(make([]byte, n))
		require.ErrorIs(t, err, ErrLength)
	}

	// Output positions of QUERY_ROCE_ADDRESS.
	o := QueryRoCEAddressOut{Addr: RoCEAddr{
		SourceL3Address: [16]byte{10: 0xff, 11: 0xff, 12: 192, 13: 168, 14: 1, 15: 10},
		VLANValid:       true, VLANID: 0x123, SourceMAC: [6]byte{0xb8, 0x3f, 0xd2, 1, 2, 3},
		RoCEL3Type: RoCEL3IPv4, RoCEVersion: RoCEv2}}
	ob, err := o.Marshal()
	require.NoError(t, err)
	require.Equal(t, parseDump(t, QueryRoCEAddressOutLen, `
0010: 00000000 00000000 0000ffff c0a8010a
0020: 1123b83f d2010203 00000002 00000000`), ob)
	oback, err := UnmarshalQueryRoCEAddressOut(ob)
	require.NoError(t, err)
	require.Equal(t, o, oback)
	require.Contains(t, oback.Addr.String(), "RoCEv2 IPv4")
	for _, n := range []int{0, 16, 47, 49} {
		_, err := UnmarshalQueryRoCEAddressOut(make([]byte, n))
		require.ErrorIs(t, err, ErrLength)
	}
}
