package cudasys

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The binding is exercised through package cuda; these tests cover what
// can be checked here without a driver: the loaders' failure reports and
// input checks made before any C call.

func TestLoadMissingLibraries(t *testing.T) {
	code, msg := LoadDriver("libcuda-gpunetio-absent.so.1")
	require.Equal(t, LoadNoLibrary, code)
	require.Contains(t, msg, "libcuda-gpunetio-absent.so.1")

	code, msg = LoadNVRTC("/nonexistent/libnvrtc-gpunetio-absent.so")
	require.Equal(t, LoadNoLibrary, code)
	require.Contains(t, msg, "/nonexistent/libnvrtc-gpunetio-absent.so")

	// A library without the entry points is refused by name, and leaves
	// nothing half-loaded behind.
	code, msg = LoadNVRTC("libc.so.6")
	require.Equal(t, LoadMissingSymbol, code)
	require.Equal(t, "nvrtcVersion", msg)
	_, ok := NVRTCErrorString(6)
	require.False(t, ok, "nothing loaded")
}

func TestNVRTCCompileChecksInput(t *testing.T) {
	out := NVRTCCompile(&NVRTCInput{Source: "x", Name: "x.cu", HeaderNames: []string{"a.h"}})
	require.Equal(t, "nvrtcCreateProgram", out.Op)
	require.Equal(t, int32(nvrtcInvalidInput), out.Result)
}
