package mlx5

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const goldenCreateCQ = `
0000: 04000000 00000000 00000000 00000000
0010: 02020000 00000022 00000000 0a000012
0020: 00000000 00000007 00000000 00000000
0040: 00000000 00000000 00000000 00010000
0050: 00000000 00000000 00000021 80000000`

func goldenCreateCQIn() CreateCQIn {
	return CreateCQIn{
		CmdHeader: CmdHeader{Opcode: OpCreateCQ},
		CQC: CQContext{DBRUMEMValid: true, OI: true, LogCQSize: 10, UARPage: 0x12, CEQN: 7,
			DBRUMEMID: 0x22, DBRAddr: 0x10000},
		CQUMEMID:    0x21,
		CQUMEMValid: true,
	}
}

func TestCreateCQGolden(t *testing.T) {
	in := goldenCreateCQIn()
	b, err := in.Marshal()
	require.NoError(t, err)
	require.Equal(t, parseDump(t, CreateCQInLen, goldenCreateCQ), b)
	back, err := UnmarshalCreateCQIn(parseDump(t, CreateCQInLen, goldenCreateCQ))
	require.NoError(t, err)
	require.Equal(t, in, back)
}

func TestCQContextRoundTrip(t *testing.T) {
	roundTrip(t, CQCLen, (*CQContext).bindings, CQContext.Encode, DecodeCQContext)
}

func TestCreateCQInRoundTrip(t *testing.T) {
	enc, dec := bodyCodec(OpCreateCQ, CreateCQIn.Marshal, UnmarshalCreateCQIn,
		func(in *CreateCQIn) { in.CmdHeader = CmdHeader{} })
	roundTrip(t, CreateCQInLen, (*CreateCQIn).bindings, enc, dec)
}

func TestQueryCQOut(t *testing.T) {
	o := QueryCQOut{CQC: CQContext{ProducerCounter: 0xabcdef, ConsumerCounter: 0x123456, LogCQSize: 10, Status: 9}}
	b, err := o.Marshal()
	require.NoError(t, err)
	require.Len(t, b, QueryCQOutLen)
	require.Equal(t, []byte{0x00, 0xab, 0xcd, 0xef}, b[60:64]) // producer_counter DW15
	require.Equal(t, []byte{0x00, 0x12, 0x34, 0x56}, b[56:60]) // consumer_counter DW14
	require.Equal(t, byte(0x90), b[16])
	back, err := UnmarshalQueryCQOut(b)
	require.NoError(t, err)
	require.Equal(t, o, back)
	_, err = QueryCQOut{CQC: CQContext{LogCQSize: 32}}.Marshal()
	require.ErrorIs(t, err, ErrRange)
}

func TestCQBadLengths(t *testing.T) {
	good := parseDump(t, CreateCQInLen, goldenCreateCQ)
	for _, n := range []int{0, 7, 16, 271, 273, 464} {
		b := make([]byte, n)
		copy(b, good)
		_, err := UnmarshalCreateCQIn(b)
		require.ErrorIs(t, err, ErrLength, "len %d", n)
	}
	for _, n := range []int{0, 16, 271, 273} {
		_, err := UnmarshalQueryCQOut(make([]byte, n))
		require.ErrorIs(t, err, ErrLength, "len %d", n)
	}
	bad := append([]byte(nil), good...)
	Set(bad, CmdHeaderFields.Opcode, uint64(OpCreateQP))
	_, err := UnmarshalCreateCQIn(bad)
	require.ErrorIs(t, err, ErrOpcode)
	in := goldenCreateCQIn()
	in.Opcode = OpCreateQP
	_, err = in.Marshal()
	require.ErrorIs(t, err, ErrOpcode)
}
