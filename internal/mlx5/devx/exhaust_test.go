//go:build cgo

package devx

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/devx/fakeverbs"
)

// An allocation refused with ENOMEM names the resource, how many this
// context holds and the device's limit from ibv_query_device.
func TestFakeExhaustionNamesTheLimit(t *testing.T) {
	withFakes(t)
	d := openFake(t, "mlx5_0")
	pd, err := d.AllocPD()
	require.NoError(t, err)

	fakeverbs.FailCall("ibv_alloc_pd", syscall.ENOMEM)
	_, err = d.AllocPD()
	require.ErrorIs(t, err, syscall.ENOMEM)
	assert.Contains(t, err.Error(), "device mlx5_0: out of PDs: 1 live on this context, the device allows max_pd 16777216")

	fakeverbs.FailCall("ibv_reg_mr_iova2", syscall.ENOMEM)
	_, err = d.RegMR(pd, 0x10000, 4096, 0x10000, mlx5.AccessLocalWrite)
	require.ErrorIs(t, err, syscall.ENOMEM)
	assert.Contains(t, err.Error(), "out of MRs: 0 live on this context, the device allows max_mr 0, or past the locked-memory limit")

	require.NoError(t, pd.Dealloc())
	require.NoError(t, d.Close())
}
