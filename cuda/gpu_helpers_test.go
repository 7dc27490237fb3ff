package cuda

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/gpuskip"
)

// The GPU tests need a CUDA driver and device; they skip, saying which is
// missing, everywhere else. They are meant to run from a compiled test
// binary (scripts/gpu-build.sh: go test -c -o build/tests/cuda.test ./cuda), so the kernels they
// load are embedded.

var (
	gpuOnce sync.Once
	gpuDev  Device
	gpuErr  error
)

func gpuDevice(t *testing.T) Device {
	t.Helper()
	gpuOnce.Do(func() {
		if gpuErr = Init(); gpuErr != nil {
			return
		}
		gpuDev, gpuErr = DeviceGet(0)
	})
	switch {
	case errors.Is(gpuErr, ErrNoDriver):
		gpuskip.Skipf(t, "no CUDA driver: %v", gpuErr)
	case errors.Is(gpuErr, ErrNoDevice):
		gpuskip.Skipf(t, "no CUDA device: %v", gpuErr)
	}
	require.NoError(t, gpuErr, "CUDA set-up")
	return gpuDev
}

// newCtx retains device 0's primary context for one test; at cleanup it
// checks the test freed everything and releases it.
func newCtx(t *testing.T) *Context {
	t.Helper()
	d := gpuDevice(t)
	c, err := d.PrimaryContext()
	require.NoError(t, err)
	t.Cleanup(func() {
		require.Equal(t, Live{}, c.Live(), "test leaked CUDA objects")
		require.NoError(t, c.Release())
	})
	return c
}
