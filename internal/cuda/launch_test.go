package cuda

import (
	"encoding/binary"
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestMarshalArgs(t *testing.T) {
	le := func(n int, v uint64) []byte {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint64(b, v)
		return b[:n]
	}
	hostPtr := unsafe.Pointer(new(uint64))
	tests := []struct {
		name  string
		args  []any
		offs  []int
		bytes [][]byte // expected bytes of each argument at its offset
	}{
		{"none", nil, []int{}, nil},
		{"u32", []any{uint32(0xdeadbeef)}, []int{0}, [][]byte{le(4, 0xdeadbeef)}},
		{"i32 negative", []any{int32(-2)}, []int{0}, [][]byte{le(4, 0xfffffffe)}},
		{"u8 then u64 aligns to 8", []any{uint8(7), uint64(1 << 40)}, []int{0, 8}, [][]byte{{7}, le(8, 1<<40)}},
		{"u16 then u32 aligns to 4", []any{uint16(0x1234), uint32(5)}, []int{0, 4}, [][]byte{le(2, 0x1234), le(4, 5)}},
		{"bool int8 int16", []any{true, int8(-1), int16(-3)}, []int{0, 1, 2}, [][]byte{{1}, {0xff}, le(2, 0xfffd)}},
		{"f32 f64", []any{float32(1.5), float64(-2.25)}, []int{0, 8}, [][]byte{le(4, uint64(math.Float32bits(1.5))), le(8, math.Float64bits(-2.25))}},
		{"pointers", []any{DevPtr(0x7000_0000_0000), uintptr(0x1234), hostPtr}, []int{0, 8, 16},
			[][]byte{le(8, 0x7000_0000_0000), le(8, 0x1234), le(8, uint64(uintptr(hostPtr)))}},
		{"i64", []any{int64(-1)}, []int{0}, [][]byte{le(8, math.MaxUint64)}},
		{"struct aligns to 8", []any{uint32(1), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}, []int{0, 8},
			[][]byte{le(4, 1), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buf, offs, err := marshalArgs(tc.args)
			require.NoError(t, err)
			require.Equal(t, tc.offs, offs)
			for i, want := range tc.bytes {
				require.Equal(t, want, buf[offs[i]:offs[i]+len(want)], "argument %d", i)
			}
			if n := len(tc.bytes); n > 0 {
				last := tc.bytes[n-1]
				require.Len(t, buf, offs[n-1]+len(last), "no trailing bytes")
			}
		})
	}
}

func TestMarshalArgsRejects(t *testing.T) {
	for _, a := range []any{int(1), uint(1), "s", []byte{}, struct{}{}, []uint32{1}, (*int)(nil)} {
		_, _, err := marshalArgs([]any{uint32(0), a})
		require.ErrorIs(t, err, ErrBadArgument, "%T", a)
		require.Contains(t, err.Error(), "argument 1", "%T", a)
	}
}

func TestDim3Norm(t *testing.T) {
	require.Equal(t, Dim3{4, 1, 1}, Dim3{X: 4}.norm())
	require.Equal(t, Dim3{4, 2, 3}, Dim3{4, 2, 3}.norm())
	require.Equal(t, Dim3{0, 1, 1}, Dim3{}.norm())
}
