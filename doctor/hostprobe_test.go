package doctor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/verbs"
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
	assert.Contains(t, err.Error(), "UAR page of emu0 (host memory (emulated device))")
	// The UAR and the device were released: the device opens and closes again.
	c, err := verbs.OpenDevice("emu0")
	require.NoError(t, err)
	require.NoError(t, c.Close())
}

func TestDoorbellProbeUnknownDevice(t *testing.T) {
	_, err := Doorbell{}.MapDoorbell("mlx5_does_not_exist", "0000:8a:00.0")
	assert.ErrorIs(t, err, verbs.ErrNotFound)
	assert.Contains(t, err.Error(), "mlx5_does_not_exist")
}

func TestCUDAProbeNoCrash(t *testing.T) {
	ok, err := CUDA{}.DmabufSupported("0000:8a:00.0")
	if err != nil {
		t.Logf("CUDA: %v (unavailable: %v)", err, errors.Is(err, ErrProbeUnavailable))
		assert.False(t, ok)
		assert.Contains(t, err.Error(), "dmabuf attribute: ")
	}
}

// NewHostEnv names the emulated devices, so that -d emu0 selects one.
func TestNewHostEnvEmulated(t *testing.T) {
	env := NewHostEnv("")
	assert.Contains(t, env.Emulated, "emu0")
	assert.Contains(t, env.Emulated, "emu1")
	assert.NotContains(t, env.Emulated, "mlx5_0")
	assert.NotNil(t, env.GPUs)
	assert.NotNil(t, env.Libs)
	assert.NotNil(t, env.CUDA)
	assert.NotNil(t, env.UAR)
}
