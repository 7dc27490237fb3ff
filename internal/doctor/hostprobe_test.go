package doctor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
	_ "github.com/gdaki/gpunetio/internal/mlx5/emu"
)

// TestDoorbellProbeEmulated runs the real probe on an emulated device. With
// a GPU it must succeed (the page is host memory); without one it must fail
// in the CUDA half with an error that says so, after the device half worked.
func TestDoorbellProbeEmulated(t *testing.T) {
	desc, err := Doorbell{}.MapDoorbell("emu0", "0000:8a:00.0")
	if err == nil {
		assert.Contains(t, desc, "host memory (emulated device)")
		return
	}
	t.Logf("no GPU here: %v", err)
	assert.Contains(t, err.Error(), "GPU 0000:8a:00.0", "the failure is in the CUDA half")
	// The device was released: it can be opened and closed again.
	d, err := mlx5.Open("emu0")
	require.NoError(t, err)
	require.NoError(t, d.Close())
}

func TestDoorbellProbeUnknownDevice(t *testing.T) {
	_, err := Doorbell{}.MapDoorbell("mlx5_does_not_exist", "0000:8a:00.0")
	assert.ErrorIs(t, err, mlx5.ErrNoDevice)
}

func TestCUDAProbeNoCrash(t *testing.T) {
	ok, err := CUDA{}.DmabufSupported("0000:8a:00.0")
	if err != nil {
		t.Logf("CUDA: %v (unavailable: %v)", err, errors.Is(err, ErrProbeUnavailable))
		assert.False(t, ok)
	}
}
