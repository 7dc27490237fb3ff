package cuda

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/gpuskip"
	"github.com/gdaki/gpunetio/internal/peerproc"
)

// needNVRTC loads NVRTC or skips, naming the missing library.
func needNVRTC(t *testing.T) {
	t.Helper()
	if err := loadNVRTC(); err != nil {
		if errors.Is(err, ErrNoNVRTC) && os.Getenv(wantNoNVRTCEnv) == "" {
			gpuskip.Skipf(t, "no NVRTC library (libnvrtc): %v", err)
		}
		require.NoError(t, err)
	}
}

// scaleSource needs no header at all.
const scaleSource = `
extern "C" __global__ void scale(float *x, float a, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}
`

func TestCompileSelfContained(t *testing.T) {
	needNVRTC(t)
	lib, err := NVRTCLibrary()
	require.NoError(t, err)
	major, minor, err := NVRTCVersion()
	require.NoError(t, err)
	require.GreaterOrEqual(t, major, 11)
	archs, err := NVRTCSupportedArchs()
	require.NoError(t, err)
	t.Logf("NVRTC %d.%d from %s, architectures %v", major, minor, lib, archs)

	ptx, err := Compile(scaleSource, "scale.cu", &CompileOptions{Arch: "compute_80"})
	require.NoError(t, err)
	require.Equal(t, "scale.cu", ptx.Name)
	require.Equal(t, "compute_80", ptx.Arch)
	require.Contains(t, string(ptx.PTX), ".target sm_80")
	require.Contains(t, string(ptx.PTX), ".visible .entry scale(")
	require.NotContains(t, string(ptx.PTX), "\x00", "no terminating NUL")
	require.Empty(t, ptx.CUBIN, "a virtual architecture gives PTX only")
	require.Equal(t, ptx.PTX, ptx.Image())
	require.Nil(t, (*Compiled)(nil).Image())

	bin, err := Compile(scaleSource, "scale.cu", &CompileOptions{Arch: "sm_80"})
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(bin.CUBIN, []byte("\x7fELF")), "a cubin is an ELF image")
	require.Equal(t, bin.CUBIN, bin.Image(), "the cubin is what gets loaded")
	require.Contains(t, string(bin.PTX), ".visible .entry scale(", "the PTX is there too")

	def, err := Compile(scaleSource, "", nil)
	require.NoError(t, err, "no options: NVRTC's default architecture")
	require.Equal(t, "program.cu", def.Name)
	require.Contains(t, string(def.PTX), ".visible .entry scale(")
}

func TestCompileErrorShowsLog(t *testing.T) {
	needNVRTC(t)
	src := "extern \"C\" __global__ void broken(int *p)\n{\n\t*p = undeclared_thing + ;\n}\n"
	_, err := Compile(src, "broken.cu", &CompileOptions{Arch: "compute_80"})
	require.Error(t, err)
	var ne *NVRTCError
	require.True(t, errors.As(err, &ne), "%T", err)
	require.Equal(t, "nvrtcCompileProgram", ne.Op)
	require.Equal(t, NVRTCErrorCompilation, ne.Result)
	require.ErrorIs(t, err, NVRTCErrorCompilation)
	require.NotErrorIs(t, err, NVRTCErrorInvalidOption)
	require.Equal(t, "broken.cu", ne.Program)
	require.Contains(t, ne.Log, "broken.cu(3)", "the log points at the line")
	require.Contains(t, ne.Log, "undeclared_thing")
	msg := err.Error()
	require.True(t, strings.HasPrefix(msg, "cuda: nvrtcCompileProgram (broken.cu): NVRTC_ERROR_COMPILATION (6):\n"), msg)
	require.Contains(t, msg, ne.Log, "the error text carries the whole log")
	t.Logf("%v", err)
}

func TestCompileOptions(t *testing.T) {
	needNVRTC(t)
	// Defines reach the source.
	src := "#if VALUE != 7 || !defined(FLAG)\n#error defines missing\n#endif\n" + scaleSource
	_, err := Compile(src, "defs.cu", &CompileOptions{Arch: "compute_80", Defines: []string{"VALUE=7", "FLAG"}})
	require.NoError(t, err)
	_, err = Compile(src, "defs.cu", &CompileOptions{Arch: "compute_80", Defines: []string{"VALUE=8", "FLAG"}})
	require.ErrorIs(t, err, NVRTCErrorCompilation)
	require.ErrorContains(t, err, "defines missing")

	// Extra headers by include name; they win over an embedded one.
	hdr := map[string][]byte{
		"my/config.h":            []byte("#define FACTOR 3\n"),
		"doca_gpunetio_device.h": []byte("#define OVERRIDDEN 1\n"),
	}
	src = "#include <my/config.h>\n#include \"doca_gpunetio_device.h\"\n" +
		"extern \"C\" __global__ void k(int *p) { *p = FACTOR * OVERRIDDEN; }\n"
	_, err = Compile(src, "hdr.cu", &CompileOptions{Arch: "compute_80", Headers: hdr})
	require.NoError(t, err)

	// Name expressions give the mangled names of C++ kernels.
	src = "template <int N> __global__ void fill(int *p) { p[threadIdx.x] = N; }\n" +
		"namespace ns { __global__ void put(int *p) { *p = 1; } }\n"
	out, err := Compile(src, "names.cu", &CompileOptions{Arch: "compute_80", NameExpressions: []string{"fill<4>", "&ns::put"}})
	require.NoError(t, err)
	require.Len(t, out.LoweredNames, 2)
	require.Equal(t, "_Z4fillILi4EEvPi", out.LoweredNames["fill<4>"])
	require.Equal(t, "_ZN2ns3putEPi", out.LoweredNames["&ns::put"])
	require.Contains(t, string(out.PTX), ".entry _Z4fillILi4EEvPi(")

	// Extra flags pass through; NVRTC names a bad one.
	_, err = Compile(scaleSource, "flags.cu", &CompileOptions{Arch: "compute_80", Flags: []string{"-lineinfo"}})
	require.NoError(t, err)
	_, err = Compile(scaleSource, "flags.cu", &CompileOptions{Flags: []string{"--no-such-option"}})
	require.ErrorIs(t, err, NVRTCErrorInvalidOption)
	var ne *NVRTCError
	require.True(t, errors.As(err, &ne))
	require.Equal(t, "nvrtcCompileProgram", ne.Op)

	// Refused before NVRTC sees them.
	_, err = Compile(scaleSource, "x.cu", &CompileOptions{Arch: "sm 90"})
	require.ErrorIs(t, err, NVRTCErrorInvalidOption)
	_, err = Compile(scaleSource, "x.cu", &CompileOptions{Defines: []string{""}})
	require.ErrorIs(t, err, NVRTCErrorInvalidOption)
	_, err = Compile(scaleSource, "x.cu", &CompileOptions{NameExpressions: []string{""}})
	require.ErrorIs(t, err, NVRTCErrorNameExpressionNotValid)
	_, err = Compile(scaleSource, "x.cu", &CompileOptions{NameExpressions: []string{"no_such_kernel"}})
	require.Error(t, err, "NVRTC refuses an unknown name expression")
}

// TestCompileIncludeStyles proves the in-memory header mechanism with a
// synthetic include tree laid out like cuda/include: an umbrella header at
// the top, headers in sub-directories that include a neighbour by its base
// name and a sibling directory's header by "../", all reached in the three
// include styles with no include path.
func TestCompileIncludeStyles(t *testing.T) {
	needNVRTC(t)
	tree := fstest.MapFS{
		"umbrella.h":   {Data: []byte("#pragma once\n#include \"common/def.h\"\n#include \"device/api.cuh\"\n")},
		"common/def.h": {Data: []byte("#ifndef DEF_H\n#define DEF_H\n#define BASE 40\n#endif\n")},
		"device/api.cuh": {Data: []byte("#ifndef API_CUH\n#define API_CUH\n#include \"../common/def.h\"\n#include \"util.cuh\"\n" +
			"__device__ inline int answer() { return BASE + two(); }\n#endif\n")},
		"device/util.cuh": {Data: []byte("#ifndef UTIL_CUH\n#define UTIL_CUH\n__device__ inline int two() { return 2; }\n#endif\n")},
	}
	tab, err := newHeaderTable(tree)
	require.NoError(t, err)
	for _, inc := range []string{"<umbrella.h>", "<device/api.cuh>", "<api.cuh>", "\"api.cuh\"", "\"device/api.cuh\""} {
		src := "#include " + inc + "\nextern \"C\" __global__ void k(int *p) { *p = answer(); }\n"
		out, err := compile(src, "styles.cu", &CompileOptions{Arch: "compute_80"}, tab)
		require.NoError(t, err, "#include %s", inc)
		require.Contains(t, string(out.PTX), ".entry k(", "#include %s", inc)
	}
}

func TestHeaderTable(t *testing.T) {
	names := HeaderNames()
	require.NotEmpty(t, names)
	require.Contains(t, names, "doca_gpunetio_device.h")
	require.Contains(t, names, "device/doca_gpunetio_dev_verbs_qp.cuh")
	require.Contains(t, names, "device/doca_gpunetio_dev_verbs_twosided.cuh")
	require.Contains(t, names, "common/doca_gpunetio_verbs_def.h")
	require.Contains(t, names, "host/doca_error.h")
	bases := map[string]string{}
	for _, n := range names {
		b := path.Base(n)
		prev, dup := bases[b]
		require.False(t, dup, "%s and %s share a base name: bare includes would be ambiguous", prev, n)
		bases[b] = n
		data, err := fs.ReadFile(Headers(), n)
		require.NoError(t, err)
		disk, err := os.ReadFile("include/" + n)
		require.NoError(t, err)
		require.Equal(t, disk, data, "%s: embedded bytes are the file's", n)
	}
	tab := headerTable()
	index := map[string]string{}
	for i, n := range tab.names {
		index[n] = tab.contents[i]
	}
	qp, _ := fs.ReadFile(Headers(), "device/doca_gpunetio_dev_verbs_qp.cuh")
	for _, n := range []string{"device/doca_gpunetio_dev_verbs_qp.cuh", "doca_gpunetio_dev_verbs_qp.cuh", "../device/doca_gpunetio_dev_verbs_qp.cuh"} {
		require.Equal(t, string(qp), index[n], "include name %s", n)
	}
	require.Len(t, tab.names, 3*len(names)-countTop(names), "every header under each of its names")

	ambiguous, err := newHeaderTable(fstest.MapFS{"a/x.h": {Data: []byte("1")}, "b/x.h": {Data: []byte("2")}})
	require.NoError(t, err)
	require.Equal(t, []string{"a/x.h", "../a/x.h", "b/x.h", "../b/x.h"}, ambiguous.names, "a shared base name is left out")
}

// countTop counts the headers at the top of the tree, whose path is their
// base name.
func countTop(names []string) int {
	n := 0
	for _, p := range names {
		if !strings.Contains(p, "/") {
			n++
		}
	}
	return n
}

func TestPickArch(t *testing.T) {
	archs := []int{50, 52, 60, 70, 75, 80, 86, 89, 90}
	for _, tc := range []struct {
		cc   int
		want string
	}{
		{90, "sm_90"},
		{80, "sm_80"},
		{87, "compute_86"},
		{100, "compute_90"},
		{120, "compute_90"},
	} {
		got, err := pickArch(tc.cc, archs)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "cc %d", tc.cc)
	}
	got, err := pickArch(90, nil)
	require.NoError(t, err)
	require.Equal(t, "sm_90", got, "an NVRTC that cannot list its architectures")
	_, err = pickArch(35, archs)
	require.ErrorIs(t, err, NVRTCErrorInvalidOption)
	require.ErrorContains(t, err, "none at or below the device's 3.5")
}

func TestNVRTCResultNames(t *testing.T) {
	require.Equal(t, "NVRTC_SUCCESS", NVRTCSuccess.Name())
	require.Equal(t, "NVRTC_ERROR_COMPILATION", NVRTCErrorCompilation.Name())
	require.Equal(t, "NVRTC_ERROR_INTERNAL_ERROR (11)", NVRTCErrorInternalError.Error())
	require.Equal(t, "NVRTC_ERROR_4242", NVRTCResult(4242).Name())
	e := &NVRTCError{Op: "nvrtcCreateProgram", Result: NVRTCErrorOutOfMemory}
	require.Equal(t, "cuda: nvrtcCreateProgram: NVRTC_ERROR_OUT_OF_MEMORY (1)", e.Error())
	var r NVRTCResult
	require.True(t, errors.As(error(e), &r))
	require.Equal(t, NVRTCErrorOutOfMemory, r)
	require.NotErrorIs(t, e, ErrorOutOfMemory, "an NVRTC code never matches a CUDA one")
}

// wantNoNVRTCEnv tells TestCompileWithoutNVRTC that the NVRTC library was
// replaced by a missing one.
const wantNoNVRTCEnv = "GPUNETIO_CUDA_TEST_WANT_NONVRTC"

// TestNoNVRTC re-runs TestCompileWithoutNVRTC in a child process whose NVRTC
// library does not exist.
func TestNoNVRTC(t *testing.T) {
	if os.Getenv(wantNoNVRTCEnv) != "" {
		t.Skip("already the child process")
	}
	peerproc.RunTests(t, []string{NVRTCEnv + "=/nonexistent/libnvrtc-gpunetio-test.so", wantNoNVRTCEnv + "=1"},
		"TestCompileWithoutNVRTC")
}

// TestCompileWithoutNVRTC checks every NVRTC entry point reports ErrNoNVRTC,
// naming the library it tried and the variable that overrides it. Outside
// TestNoNVRTC's child it runs only where no NVRTC is installed.
func TestCompileWithoutNVRTC(t *testing.T) {
	if os.Getenv(wantNoNVRTCEnv) == "" {
		if err := loadNVRTC(); err == nil {
			t.Skip("an NVRTC library is installed; TestNoNVRTC covers this path")
		}
	}
	_, err := Compile(scaleSource, "scale.cu", nil)
	require.ErrorIs(t, err, ErrNoNVRTC)
	if os.Getenv(wantNoNVRTCEnv) != "" {
		require.Contains(t, err.Error(), "/nonexistent/libnvrtc-gpunetio-test.so")
	}
	require.Contains(t, err.Error(), NVRTCEnv)
	_, err = NVRTCLibrary()
	require.ErrorIs(t, err, ErrNoNVRTC)
	_, _, err = NVRTCVersion()
	require.ErrorIs(t, err, ErrNoNVRTC)
	_, err = NVRTCSupportedArchs()
	require.ErrorIs(t, err, ErrNoNVRTC)
	t.Logf("%v", err)
}
