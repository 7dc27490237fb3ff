package emugpu

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/gpuskip"
)

func TestFits(t *testing.T) {
	tests := []struct {
		start, size, addr, n uint64
		want                 bool
	}{
		{0x1000, 0x100, 0x1000, 0x100, true},
		{0x1000, 0x100, 0x1080, 0x80, true},
		{0x1000, 0x100, 0x1080, 0x81, false},
		{0x1000, 0x100, 0xfff, 1, false},
		{0x1000, 0x100, 0x1100, 0, true},
		{0x1000, 0x100, 0x1101, 0, false},
		{0x1000, 0x100, 0x1000, ^uint64(0), false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, fits(tc.start, tc.size, tc.addr, tc.n), "%+v", tc)
	}
}

// A context that is not usable (nil) claims nothing, and install/uninstall
// keep the count right without a driver.
func TestInstallWithoutDriver(t *testing.T) {
	before := Installed()
	un1 := Install(nil)
	un2 := Install(nil)
	assert.Equal(t, before+2, Installed())
	a := installed
	require.NotNil(t, a)
	assert.False(t, a.Contains(0x1000, 8))
	err := a.Read(make([]byte, 8), 0x1000)
	assert.ErrorContains(t, err, "not in a registered GPU allocation")
	assert.ErrorContains(t, a.Write(0x1000, []byte{1}), "not in a registered GPU allocation")
	un1()
	un1()
	assert.Equal(t, before+1, Installed())
	un2()
	assert.Equal(t, before, Installed())
}

func TestGPUAdapter(t *testing.T) {
	if err := cuda.Init(); err != nil {
		if errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, cuda.ErrNoDevice) {
			gpuskip.Skipf(t, "no CUDA driver: %v", err)
		}
		require.NoError(t, err)
	}
	d, err := cuda.DeviceGet(0)
	require.NoError(t, err)
	c, err := d.PrimaryContext()
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Release()) }()
	p, err := c.MemAlloc(4096)
	require.NoError(t, err)
	defer c.MemFree(p)
	un := Install(c)
	defer un()
	a := installed
	assert.True(t, a.Contains(uintptr(p), 4096))
	assert.True(t, a.Contains(uintptr(p)+100, 8))
	assert.False(t, a.Contains(uintptr(p)+4000, 200))
	require.NoError(t, a.Write(uintptr(p)+16, []byte("gpu bytes")))
	got := make([]byte, 9)
	require.NoError(t, a.Read(got, uintptr(p)+16))
	assert.Equal(t, "gpu bytes", string(got))
}
