//go:build !cgo

package devx

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

func TestNoCgoProviderUnavailable(t *testing.T) {
	devs, err := Provider{}.Devices()
	assert.Empty(t, devs)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "CGO_ENABLED=0")

	_, err = Provider{}.Open("mlx5_0")
	assert.ErrorIs(t, err, ErrUnavailable)
	_, err = Provider{}.Open("")
	assert.ErrorIs(t, err, syscall.EINVAL)

	_, err = mlx5.Open("mlx5_0")
	assert.ErrorIs(t, err, mlx5.ErrNoDevice)
	assert.Contains(t, err.Error(), "rdma-core unavailable")
}
