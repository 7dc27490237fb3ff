package gpunetio

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/gdrcopy"
)

func TestMemAllocTypes(t *testing.T) {
	g, b := hostGPU(t)
	tests := []struct {
		name      string
		size, al  uintptr
		typ       MemType
		wantAlign uintptr
		host      bool
		zeroed    bool
	}{
		{"gpu default align", 100, 0, MemGPU, hostPage, false, false},
		{"gpu 64k align", 5000, 64 << 10, MemGPU, 64 << 10, false, false},
		{"gpu_cpu forced 64k", 8, 0, MemGPUCPU, 64 << 10, true, false},
		{"cpu_gpu", 8, 0, MemCPUGPU, hostPage, true, true},
		{"cpu_gpu 2M align", 3 * hostPage, 2 << 20, MemCPUGPU, 2 << 20, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := g.MemAlloc(tc.size, tc.al, tc.typ)
			require.NoError(t, err)
			assert.Equal(t, tc.typ, m.Type)
			assert.Equal(t, tc.size, m.Size)
			assert.Zero(t, uintptr(m.Dev)%tc.wantAlign, "alignment of %#x", m.Dev)
			assert.Equal(t, tc.host, m.Host != 0)
			if tc.zeroed {
				assert.Equal(t, make([]byte, tc.size), hostSlice(m.Host, tc.size))
			}
			assert.Equal(t, 1, g.Live())
			// GPU.Close refuses while memory is live, and stays usable.
			err = g.Close()
			assert.ErrorIs(t, err, ErrInvalidValue)
			require.NoError(t, g.MemFree(m.Dev))
			require.NoError(t, m.Free(), "second free is a no-op")
			assert.Equal(t, 0, g.Live())
		})
	}
	a, r := b.live()
	assert.Zero(t, a+r)
}

func TestMemAllocRejects(t *testing.T) {
	g, b := hostGPU(t)
	tests := []struct {
		name     string
		size, al uintptr
		typ      MemType
		code     Code
	}{
		{"size 0", 0, 0, MemGPU, ErrInvalidValue},
		{"alignment 3", 8, 3, MemGPU, ErrInvalidValue},
		{"unknown type", 8, 0, MemType(9), ErrInvalidValue},
	}
	for _, tc := range tests {
		_, err := g.MemAlloc(tc.size, tc.al, tc.typ)
		assert.ErrorIs(t, err, tc.code, tc.name)
		var e *Error
		require.True(t, errors.As(err, &e))
		assert.Equal(t, "doca_gpu_mem_alloc", e.Op)
	}
	assert.ErrorIs(t, g.MemFree(0x1234), ErrInvalidValue)

	b.noGDR = true
	_, err := g.MemAlloc(8, 0, MemGPUCPU)
	assert.ErrorIs(t, err, ErrNotSupported)
	assert.ErrorIs(t, err, gdrcopy.ErrUnavailable)
	assert.Contains(t, err.Error(), "libgdrapi.so.2")
	assert.False(t, g.SupportsGDRCopy())

	_, err = g.DmabufFD(0x1000, 4096)
	assert.ErrorIs(t, err, ErrNotSupported)
}

func TestNewGPUErrors(t *testing.T) {
	_, err := NewGPU("")
	assert.ErrorIs(t, err, ErrInvalidValue)
	_, err = NewGPU("zz:00.0:bad")
	assert.ErrorIs(t, err, ErrInvalidValue)
	g, err := NewGPU("0000:8a:00.0")
	if err == nil {
		// A machine with a GPU at that address.
		require.NoError(t, g.Close())
		return
	}
	var e *Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, "doca_gpu_create", e.Op)
	assert.True(t, e.Code == ErrInitialization || e.Code == ErrNotFound, "code %v", e.Code)
}

func TestGPUCloseIdempotent(t *testing.T) {
	g, _ := newHostGPU()
	require.NoError(t, g.Close())
	require.NoError(t, g.Close())
	_, err := g.MemAlloc(8, 0, MemGPU)
	assert.ErrorIs(t, err, ErrBadState)
}
