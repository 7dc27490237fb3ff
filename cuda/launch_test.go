package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
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

// Named types marshal as their underlying kind.
type (
	flags32 uint32
	devAddr uintptr
	temp    float32
	level   int8
	on      bool
)

// wqeArgs is a kernel parameter struct with padding the C compiler inserts
// too: 1 byte, 1 pad, 2, 4, then 8 at offset 8, an array, a nested struct.
type wqeArgs struct {
	Opcode uint8
	_      uint8
	Lane   uint16
	Key    uint32
	Addr   DevPtr
	Sizes  [3]uint16
	Inner  struct {
		A int8
		B float64
	}
	Last bool
}

func TestMarshalNamedAndStructs(t *testing.T) {
	le := binary.LittleEndian
	buf, offs, err := marshalArgs([]any{flags32(0xf00d), devAddr(0x1234_5678_9abc), temp(2.5), level(-3), on(true)})
	require.NoError(t, err)
	require.Equal(t, []int{0, 8, 16, 20, 21}, offs)
	require.Equal(t, uint32(0xf00d), le.Uint32(buf[0:]))
	require.Equal(t, uint64(0x1234_5678_9abc), le.Uint64(buf[8:]))
	require.Equal(t, float32(2.5), math.Float32frombits(le.Uint32(buf[16:])))
	require.Equal(t, byte(0xfd), buf[20])
	require.Equal(t, byte(1), buf[21])

	w := wqeArgs{Opcode: 8, Lane: 0x1234, Key: 0xabcdef01, Addr: 0x7f00_0000_1000, Sizes: [3]uint16{1, 2, 3}, Last: true}
	w.Inner.A, w.Inner.B = -1, 1.25
	buf, offs, err = marshalArgs([]any{uint8(9), w})
	require.NoError(t, err)
	// The C layout of the same declaration: opcode@0 pad@1 lane@2 key@4
	// addr@8 sizes@16..22 pad inner@24 {a@24 pad b@32} last@40, size 48,
	// aligned to 8; the struct follows the uint8 at offset 8.
	require.Equal(t, []int{0, 8}, offs)
	require.Len(t, buf, 8+48)
	s := buf[8:]
	want := make([]byte, 48)
	want[0] = 8
	le.PutUint16(want[2:], 0x1234)
	le.PutUint32(want[4:], 0xabcdef01)
	le.PutUint64(want[8:], 0x7f00_0000_1000)
	le.PutUint16(want[16:], 1)
	le.PutUint16(want[18:], 2)
	le.PutUint16(want[20:], 3)
	want[24] = 0xff
	le.PutUint64(want[32:], math.Float64bits(1.25))
	want[40] = 1
	require.Equal(t, want, s, "Go layout equals the C layout, padding zeroed")
	require.Equal(t, uintptr(48), unsafe.Sizeof(w))
}

func TestMarshalArgsRejects(t *testing.T) {
	type withInt struct{ A int }
	type withPtr struct{ P *uint32 }
	type withString struct{ S string }
	type withSlice struct{ S []byte }
	type withUnsafe struct{ P unsafe.Pointer }
	type withEmpty struct {
		A uint32
		E struct{}
	}
	type withZeroArray struct {
		A uint32
		Z [0]uint64
	}
	type withComplex struct{ C complex64 }
	type namedInt int
	tests := []struct {
		arg  any
		want string
	}{
		{int(1), "no fixed C width"},
		{uint(1), "no fixed C width"},
		{namedInt(1), "no fixed C width"},
		{"s", "cannot be marshalled"},
		{[]byte{}, "empty struct bytes"},
		{struct{}{}, "empty struct"},
		{[]uint32{1}, "cannot be marshalled"},
		{(*int)(nil), "a Go pointer"},
		{[4]uint32{}, "C passes no array by value"},
		{nil, "nil has no C type"},
		{complex64(1), "cannot be marshalled"},
		{map[int]int{}, "cannot be marshalled"},
		{withInt{}, "field A"},
		{withPtr{}, "field P"},
		{withString{}, "field S"},
		{withSlice{}, "field S"},
		{withUnsafe{}, "field P"},
		{withEmpty{}, "field E"},
		{withZeroArray{}, "field Z"},
		{withComplex{}, "field C"},
	}
	for _, tc := range tests {
		_, _, err := marshalArgs([]any{uint32(0), tc.arg})
		require.ErrorIs(t, err, ErrBadArgument, "%T", tc.arg)
		require.Contains(t, err.Error(), "argument 1", "%T", tc.arg)
		require.Contains(t, err.Error(), tc.want, "%T", tc.arg)
	}
}

func TestDim3Norm(t *testing.T) {
	require.Equal(t, Dim3{4, 1, 1}, Dim3{X: 4}.norm())
	require.Equal(t, Dim3{4, 2, 3}, Dim3{4, 2, 3}.norm())
	require.Equal(t, Dim3{0, 1, 1}, Dim3{}.norm())
}

// wqeArgsC is wqeArgs as a C struct; TestStructLayoutMatchesC and
// TestGPUStructArgument compile it.
const wqeArgsC = `
struct wqe_args {
	unsigned char opcode;
	unsigned char pad;
	unsigned short lane;
	unsigned int key;
	unsigned long long addr;
	unsigned short sizes[3];
	struct {
		signed char a;
		double b;
	} inner;
	bool last;
};
`

// TestStructLayoutMatchesC has NVRTC (the CUDA C++ front end) lay out the C
// declaration of wqeArgs and compares its field offsets, size and alignment
// with the Go struct that marshalArgs copies. The compiler folds the
// offsets into a constant array, which the PTX shows as its initial bytes.
func TestStructLayoutMatchesC(t *testing.T) {
	needNVRTC(t)
	typ := reflect.TypeFor[wqeArgs]()
	inner := typ.Field(6).Type
	want := []uint64{
		uint64(typ.Field(0).Offset), uint64(typ.Field(1).Offset), uint64(typ.Field(2).Offset),
		uint64(typ.Field(3).Offset), uint64(typ.Field(4).Offset), uint64(typ.Field(5).Offset),
		uint64(typ.Field(6).Offset), uint64(typ.Field(6).Offset + inner.Field(1).Offset),
		uint64(typ.Field(7).Offset), uint64(typ.Size()), uint64(typ.Align()),
	}
	got, ptx := layoutFromConstant(t, len(want))
	if got == nil {
		// This NVRTC folds no offsetof form into a constant (NVRTC 13 has
		// neither __builtin_offsetof nor a constant null-pointer form): let
		// the GPU compute the layout instead.
		got, ptx = layoutFromKernel(t, len(want))
	}
	require.Equal(t, want, got, "offsets of opcode pad lane key addr sizes inner inner.b last, size, alignment")
	// The kernel parameter is the marshalled argument: same size and alignment.
	require.Contains(t, ptx, fmt.Sprintf(".param .align %d .b8 take_param_0[%d]", typ.Align(), typ.Size()))
}

// layoutFields lists, in order, what both layout probes measure.
const layoutFields = `OFF(opcode), OFF(pad), OFF(lane), OFF(key), OFF(addr), OFF(sizes), OFF(inner), OFF(inner.b),
	OFF(last), sizeof(wqe_args), alignof(wqe_args)`

// layoutFromConstant has NVRTC fold the offsets into a constant array and
// reads it back from the PTX's initialiser. Older NVRTCs fold only the
// null-pointer form, newer compilers __builtin_offsetof; it returns nil when
// this NVRTC folds neither.
func layoutFromConstant(t *testing.T, n int) ([]uint64, string) {
	t.Helper()
	for _, off := range []string{
		"__builtin_offsetof(wqe_args, m)",
		"((unsigned long long)&((wqe_args *)0)->m)",
	} {
		src := wqeArgsC + `
#define OFF(m) ` + off + `
__device__ unsigned long long layout[] = {` + layoutFields + `};
extern "C" __global__ void take(wqe_args a, unsigned long long *out) { *out = a.addr + layout[0]; }
`
		out, err := Compile(src, "layout.cu", &CompileOptions{Arch: "compute_80"})
		if err != nil {
			t.Logf("offsetof as %s does not fold here: %v", off, err)
			continue
		}
		ptx := string(out.PTX)
		m := regexp.MustCompile(`\.b8 layout\[(\d+)\] = \{([0-9, ]+)\};`).FindStringSubmatch(ptx)
		require.NotNil(t, m, "the layout array in the PTX:\n%s", ptx)
		var raw []byte
		for _, f := range strings.Split(m[2], ",") {
			v, err := strconv.Atoi(strings.TrimSpace(f))
			require.NoError(t, err)
			raw = append(raw, byte(v))
		}
		require.Len(t, raw, 8*n)
		got := make([]uint64, n)
		for i := range got {
			got[i] = binary.LittleEndian.Uint64(raw[8*i:])
		}
		return got, ptx
	}
	return nil, ""
}

// layoutFromKernel runs a kernel that measures the layout of a real object
// (member addresses minus the object's), for NVRTCs without a constant
// offsetof. It needs a GPU and skips, saying so, without one.
func layoutFromKernel(t *testing.T, n int) ([]uint64, string) {
	t.Helper()
	c := newCtx(t)
	src := wqeArgsC + `
#define OFF(m) (unsigned long long)((const char *)&probe.m - (const char *)&probe)
extern "C" __global__ void layout(unsigned long long *out) {
	wqe_args probe;
	unsigned long long v[] = {` + layoutFields + `};
	for (int i = 0; i < (int)(sizeof(v) / sizeof(v[0])); i++)
		out[i] = v[i];
}
extern "C" __global__ void take(wqe_args a, unsigned long long *out) { *out = a.addr; }
`
	dev := c.Device()
	out, err := Compile(src, "layout.cu", &CompileOptions{Device: &dev})
	require.NoError(t, err)
	m, err := c.ModuleLoadData(out.Image())
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Unload()) }()
	f, err := m.Function("layout")
	require.NoError(t, err)
	buf, err := Alloc[uint64](c, n)
	require.NoError(t, err)
	defer func() { require.NoError(t, buf.Free()) }()
	require.NoError(t, c.LaunchKernel(f, Dim3{X: 1}, Dim3{X: 1}, 0, nil, buf.Ptr()))
	require.NoError(t, c.Synchronize())
	got, err := buf.Elements()
	require.NoError(t, err)
	return got, string(out.PTX)
}
