package gpunetio

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/apicheck"
)

// TestDOCAFunctionMapIsThe30API checks DOCAFunctions against the list of
// DOCA GPUNetIO 3.0's doca_gpunetio.h and doca_gpunetio_high_level.h
// functions: every one mapped once, nothing else (not the 2.0 name
// doca_gpu_dmabuf_fd), each to a Go name that exists.
func TestDOCAFunctionMapIsThe30API(t *testing.T) {
	want, err := apicheck.ReadNames("testdata/doca_gpunetio_3.0_functions.txt")
	require.NoError(t, err)
	require.Len(t, want, 28)
	names, err := apicheck.GoNames(".")
	require.NoError(t, err)
	assert.Empty(t, apicheck.FuncMapProblems(DOCAFunctions, want, names))
	for _, e := range DOCAFunctions {
		assert.NotEqual(t, "doca_gpu_dmabuf_fd", e.C, "renamed in 3.0")
	}
}

// The library reports 3.0.0 and accepts device code 2.0.0..3.0.0 and host
// code 0.2.0..3.0.0; the device headers report the same version.
func TestVersion30(t *testing.T) {
	assert.Equal(t, uint32(0x030000), LibraryVersion())
	assert.Equal(t, MakeVersion(3, 0, 0), uint32(Version))
	for v, ok := range map[uint32]bool{0x01ffff: false, 0x020000: true, 0x020001: true, 0x030000: true, 0x030001: false, 0x040000: false} {
		assert.Equal(t, ok, CheckDeviceCodeCompatibility(v) == nil, "device code 0x%06x", v)
	}
	for v, ok := range map[uint32]bool{0x0001ff: false, 0x000200: true, 0x020000: true, 0x030000: true, 0x030001: false} {
		assert.Equal(t, ok, CheckHostCodeCompatibility(v) == nil, "host code 0x%06x", v)
	}

	// The macros kernels compile with (cuda/include) are the same numbers.
	b, err := os.ReadFile("../cuda/include/common/doca_gpunetio_verbs_def.h")
	require.NoError(t, err)
	macro := func(name string) uint32 {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` (\d+)$`).FindSubmatch(b)
		require.NotNil(t, m, name)
		n, err := strconv.Atoi(string(m[1]))
		require.NoError(t, err)
		return uint32(n)
	}
	assert.Equal(t, uint32(Version), MakeVersion(uint8(macro("DOCA_GPUNETIO_VERSION_MAJOR")),
		uint8(macro("DOCA_GPUNETIO_VERSION_MINOR")), uint8(macro("DOCA_GPUNETIO_VERSION_PATCH"))))
	assert.Equal(t, uint32(MinCompatDeviceCodeVersion), MakeVersion(uint8(macro("DOCA_GPUNETIO_MIN_COMPAT_DEVICE_CODE_VERSION_MAJOR")),
		uint8(macro("DOCA_GPUNETIO_MIN_COMPAT_DEVICE_CODE_VERSION_MINOR")), uint8(macro("DOCA_GPUNETIO_MIN_COMPAT_DEVICE_CODE_VERSION_PATCH"))))
	assert.Equal(t, uint32(MinCompatHostCodeVersion), MakeVersion(uint8(macro("DOCA_GPUNETIO_MIN_COMPAT_HOST_CODE_VERSION_MAJOR")),
		uint8(macro("DOCA_GPUNETIO_MIN_COMPAT_HOST_CODE_VERSION_MINOR")), uint8(macro("DOCA_GPUNETIO_MIN_COMPAT_HOST_CODE_VERSION_PATCH"))))
}
