package doctorprobe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLibrary(t *testing.T) {
	path, found, err := Library("libc.so.6", []string{"malloc", "gpunetio_no_such_symbol", "free"})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, true}, found)
	assert.Contains(t, path, "libc")

	path, found, err = Library("libc.so.6", nil)
	require.NoError(t, err)
	assert.Empty(t, found)
	assert.NotEmpty(t, path)

	_, _, err = Library("libgpunetio-does-not-exist.so.9", []string{"x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "libgpunetio-does-not-exist.so.9")
}

// A GPU that does not exist (or no CUDA driver at all) fails before anything
// is registered, naming the GPU; without a driver NoCUDADriver says so.
func TestRegisterUARPageNoSuchGPU(t *testing.T) {
	const bus = "0000:ff:1f.7"
	_, err := RegisterUARPage(bus, 0, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GPU "+bus)
	t.Logf("%v (no CUDA driver: %v)", err, NoCUDADriver(err))

	_, err = DmabufSupported(bus)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GPU "+bus)
}

func TestRegisterUARPageBadBusID(t *testing.T) {
	_, err := RegisterUARPage("not-a-bus-id", 0, true)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not-a-bus-id")
	assert.False(t, NoCUDADriver(err), "a malformed id is not a missing driver")
}
