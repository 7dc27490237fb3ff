package doctor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDLProbe(t *testing.T) {
	lib, err := DLProbe{}.Probe("libc.so.6", "malloc", "gpunetio_no_such_symbol")
	require.NoError(t, err)
	assert.True(t, lib.Symbols["malloc"])
	assert.False(t, lib.Symbols["gpunetio_no_such_symbol"])
	assert.Contains(t, lib.Path, "libc")

	_, err = DLProbe{}.Probe("libgpunetio-does-not-exist.so.9")
	assert.ErrorIs(t, err, ErrLibraryNotFound)
	assert.Contains(t, err.Error(), "libgpunetio-does-not-exist.so.9")
}

// TestDLProbeRDMACore runs where rdma-core is installed and checks that the
// release read from the file name is plausible.
func TestDLProbeRDMACore(t *testing.T) {
	lib, err := DLProbe{}.Probe("libibverbs.so.1", "ibv_get_device_list")
	if errors.Is(err, ErrLibraryNotFound) {
		t.Skip("libibverbs.so.1 not installed:", err)
	}
	require.NoError(t, err)
	assert.True(t, lib.Symbols["ibv_get_device_list"])
	rel, err := rdmaCoreRelease(lib.Path)
	require.NoError(t, err, lib.Path)
	assert.GreaterOrEqual(t, rel, 17)
}

// TestNVMLNoCrash runs NVML where it is: with a GPU it must list GPUs with
// bus ids in sysfs form; without a driver the error must say so.
func TestNVMLNoCrash(t *testing.T) {
	gpus, err := NVML{}.GPUs()
	if err != nil {
		var ne *NVMLError
		require.ErrorAs(t, err, &ne)
		assert.NotEmpty(t, ne.Op)
		t.Logf("no GPU here: %v (ErrNoGPUDriver: %v)", err, errors.Is(err, ErrNoGPUDriver))
		return
	}
	for _, g := range gpus {
		assert.True(t, isBDF(g.BusID), g.BusID)
		assert.NotEmpty(t, g.Name)
	}
}

func TestNVMLErrorIs(t *testing.T) {
	e := &NVMLError{Op: "nvmlInit", Ret: 12} // ERROR_LIBRARY_NOT_FOUND
	assert.ErrorIs(t, e, ErrNoGPUDriver)
	assert.Contains(t, e.Error(), "nvmlInit")
	assert.Contains(t, e.Error(), "libnvidia-ml.so.1 not found")
	assert.NotErrorIs(t, &NVMLError{Op: "x", Ret: 2}, ErrNoGPUDriver) // INVALID_ARGUMENT

	e.Loader = "libnvidia-ml.so.1: cannot open shared object file: No such file or directory"
	assert.Equal(t, "nvmlInit: libnvidia-ml.so.1 not found (NVML 12): "+e.Loader, e.Error())
}

// A library that does not load gets the dynamic loader's reason; one that
// loads gets none.
func TestNVMLLoaderReason(t *testing.T) {
	assert.Equal(t, "libgdaki-absent-nvml.so.1: cannot open shared object file: No such file or directory",
		loaderReason("libgdaki-absent-nvml.so.1"))
	assert.Empty(t, loaderReason("libc.so.6"))
}
