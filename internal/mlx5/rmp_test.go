package mlx5

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWQContextRoundTrip(t *testing.T) {
	roundTrip(t, WQCLen, (*WQContext).bindings, WQContext.Encode, DecodeWQContext)
}

func TestRMPContextRoundTrip(t *testing.T) {
	roundTrip(t, RMPCLen, (*RMPContext).bindings, RMPContext.Encode, DecodeRMPContext)
}

// CREATE_RMP positions: rmpc at mailbox bit 256,
// wq at rmpc bit 384.
func TestCreateRMP(t *testing.T) {
	in := CreateRMPIn{RMPC: RMPContext{State: RMPStateRDY, BasicCyclicRcvWQE: true, WQ: WQContext{
		WQType: WQTypeCyclic, EndPaddingMode: 1, PD: 0x15, DBRAddr: 0x1000, LogWQStride: 5, LogWQSz: 10,
		DBRUMEMValid: true, WQUMEMValid: true, DBRUMEMID: 0x31, WQUMEMID: 0x31, WQUMEMOffset: 0x2000}}}
	b, err := in.Marshal()
	require.NoError(t, err)
	// rmpc at byte 32 (state in byte 33, basic_cyclic_rcv_wqe at byte 36),
	// wq at byte 80.
	want := parseDump(t, CreateRMPInLen, `
0000: 090c0000 00000000 00000000 00000000
0020: 00100000 80000000 00000000 00000000
0050: 12000000 00000000 00000015 00000000
0060: 00000000 00001000 00000000 00000000
0070: 0005000a c0000000 00000031 00000031
0080: 00000000 00002000 00000000 00000000`)
	require.Equal(t, want, b)
	back, err := UnmarshalCreateRMPIn(b)
	require.NoError(t, err)
	in.Opcode = OpCreateRMP
	require.Equal(t, in, back)

	for _, n := range []int{0, 16, 271, 273} {
		_, err := UnmarshalCreateRMPIn(make([]byte, n))
		require.ErrorIs(t, err, ErrLength, "len %d", n)
	}
	bad := append([]byte(nil), b...)
	Set(bad, CmdHeaderFields.Opcode, uint64(OpCreateQP))
	_, err = UnmarshalCreateRMPIn(bad)
	require.ErrorIs(t, err, ErrOpcode)
	in.RMPC.WQ.LogWQSz = 32
	_, err = in.Marshal()
	require.ErrorIs(t, err, ErrRange)
	require.Contains(t, err.Error(), "rmp_context.wq.log_wq_sz")
}

func TestQueryRMPOut(t *testing.T) {
	o := QueryRMPOut{RMPC: RMPContext{State: RMPStateERR, WQ: WQContext{HWCounter: 0x11223344, SWCounter: 7, LWM: 9}}}
	b, err := o.Marshal()
	require.NoError(t, err)
	require.Len(t, b, QueryRMPOutLen)
	require.Equal(t, byte(0x30), b[33])
	require.Equal(t, []byte{0x11, 0x22, 0x33, 0x44}, b[104:108]) // rmpc 32 + wq 48 + hw_counter 24
	back, err := UnmarshalQueryRMPOut(b)
	require.NoError(t, err)
	require.Equal(t, o, back)
	for _, n := range []int{0, 16, 271, 273} {
		_, err := UnmarshalQueryRMPOut(make([]byte, n))
		require.ErrorIs(t, err, ErrLength, "len %d", n)
	}
}
