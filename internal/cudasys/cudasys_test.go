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

// A driver library without the entry points binds nothing: the error-name
// calls still answer "not initialized" instead of calling a stale pointer.
func TestLoadDriverMissingSymbol(t *testing.T) {
	code, msg := LoadDriver("libc.so.6")
	require.Equal(t, LoadMissingSymbol, code)
	require.Equal(t, "cuInit", msg)
	_, rc := ErrorName(0)
	require.Equal(t, int32(3), rc, "CUDA_ERROR_NOT_INITIALIZED: nothing was bound")
}

// NVRTC loads once per process: a second library is refused. Runs last: it
// leaves NVRTC loaded.
func TestLoadNVRTCOnce(t *testing.T) {
	code, msg := LoadNVRTC("libnvrtc.so")
	if code == LoadNoLibrary {
		t.Skipf("no libnvrtc.so on this host: %s", msg)
	}
	require.Equal(t, LoadOK, code, msg)
	major, _, rc := NVRTCVersion()
	require.Zero(t, rc)
	require.GreaterOrEqual(t, major, 11)
	s, ok := NVRTCErrorString(0)
	require.True(t, ok)
	require.Equal(t, "NVRTC_SUCCESS", s)

	code, msg = LoadNVRTC("libnvrtc.so")
	require.Equal(t, loadAlready, code)
	require.Equal(t, "an NVRTC library is already loaded", msg)
}
