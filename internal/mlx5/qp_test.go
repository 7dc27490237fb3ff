package mlx5

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const goldenCreateQP = `
0000: 05000000 00000000 00000000 00000000
0010: 00000000 00000000 00001800 00000015
0020: 00004040 00000012 00000000 00000000
0090: 00000000 00000400 00000000 00000000
00b0: 00000000 00000400 00000000 00004000
00c0: 00000000 03000000 00000000 00000000
00e0: 00000000 00000000 10000000 00000000
00f0: 00000000 00000000 00000000 00000024
0100: 00000000 00000000 00000023 80000000`

func goldenCreateQPIn() CreateQPIn {
	return CreateQPIn{
		CmdHeader: CmdHeader{Opcode: OpCreateQP},
		QPC: QPContext{ST: STRC, PMState: PMStateMigrated, PD: 0x15, LogSQSize: 8, TSFormat: TSDefault,
			UARPage: 0x12, CQNSnd: 0x400, CQNRcv: 0x400, DBRAddr: 0x4000, RQType: RQTypeZeroSize,
			DBRUMEMValid: true, DBRUMEMID: 0x24},
		WQUMEMID:    0x23,
		WQUMEMValid: true,
	}
}

func TestCreateQPGolden(t *testing.T) {
	in := goldenCreateQPIn()
	b, err := in.Marshal()
	require.NoError(t, err)
	require.Equal(t, parseDump(t, CreateQPInLen, goldenCreateQP), b)
	back, err := UnmarshalCreateQPIn(parseDump(t, CreateQPInLen, goldenCreateQP))
	require.NoError(t, err)
	require.Equal(t, in, back)

	// The 464-byte kernel/DPDK form parses to the same values.
	long := parseDump(t, CreateQPInExtLen, goldenCreateQP)
	back, err = UnmarshalCreateQPIn(long)
	require.NoError(t, err)
	require.Equal(t, in, back)
}

func TestCreateQPInRoundTrip(t *testing.T) {
	enc, dec := bodyCodec(OpCreateQP,
		func(in CreateQPIn) ([]byte, error) {
			// qpc_ext cannot be marshalled; exercise its bit through Set.
			ext := in.QPCExt
			in.QPCExt = false
			b, err := in.Marshal()
			if err == nil && ext {
				SetBool(b, CreateQPInFields.QPCExt, true)
			}
			return b, err
		},
		UnmarshalCreateQPIn, func(in *CreateQPIn) { in.CmdHeader = CmdHeader{} })
	roundTrip(t, CreateQPInLen, (*CreateQPIn).bindings, enc, dec)

	_, err := CreateQPIn{QPCExt: true}.Marshal()
	require.ErrorIs(t, err, ErrInvalid)
}

func TestQueryQPOut(t *testing.T) {
	o := QueryQPOut{OutHeader: OutHeader{}, OptParamMask: 0x80,
		QPC: QPContext{State: QPStateRTS, HWSQWQEBBCounter: 0x10, SWSQWQEBBCounter: 0x12, NextSendPSN: 0x654321}}
	b, err := o.Marshal()
	require.NoError(t, err)
	require.Len(t, b, QueryQPOutLen)
	require.Equal(t, byte(0x30), b[24])
	require.Equal(t, []byte{0, 0x10, 0, 0x12}, b[204:208])
	require.Equal(t, []byte{0, 0, 0, 0x80}, b[16:20])
	back, err := UnmarshalQueryQPOut(b)
	require.NoError(t, err)
	require.Equal(t, o, back)
	_, err = QueryQPOut{QPC: QPContext{State: 16}}.Marshal()
	require.ErrorIs(t, err, ErrRange)
	for _, n := range []int{0, 16, 271, 273, 464} {
		_, err := UnmarshalQueryQPOut(make([]byte, n))
		require.ErrorIs(t, err, ErrLength, "len %d", n)
	}
}

func TestCreateQPBadInput(t *testing.T) {
	good := parseDump(t, CreateQPInLen, goldenCreateQP)
	for _, n := range []int{0, 7, 16, 256, 271, 273, 463, 465} {
		b := make([]byte, n)
		copy(b, good)
		_, err := UnmarshalCreateQPIn(b)
		require.ErrorIs(t, err, ErrLength, "len %d", n)
	}
	bad := append([]byte(nil), good...)
	Set(bad, CmdHeaderFields.Opcode, uint64(OpRST2INIT))
	_, err := UnmarshalCreateQPIn(bad)
	require.ErrorIs(t, err, ErrOpcode)

	in := goldenCreateQPIn()
	in.QPC.LogSQSize = 16 // 4 bits
	_, err = in.Marshal()
	require.ErrorIs(t, err, ErrRange)
	require.Contains(t, err.Error(), "qpc.log_sq_size")
	in = goldenCreateQPIn()
	in.QPC.PD = 1 << 24
	_, err = in.Marshal()
	require.ErrorIs(t, err, ErrRange)
}
