package gpunetio

import (
	"errors"
	"testing"
	"unsafe"

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

// TestMemHostBytes checks the []byte view of the CPU side: exactly Size
// bytes at Host, shared with the allocation, refused for MemGPU, nil and
// freed memory.
func TestMemHostBytes(t *testing.T) {
	g, _ := hostGPU(t)
	for _, typ := range []MemType{MemCPUGPU, MemGPUCPU} {
		t.Run(typ.String(), func(t *testing.T) {
			m, err := g.MemAlloc(100, 0, typ)
			require.NoError(t, err)
			b, err := m.HostBytes()
			require.NoError(t, err)
			require.Len(t, b, 100, "bounded to the allocation's size")
			assert.Equal(t, m.Host, uintptr(unsafe.Pointer(&b[0])), "the slice starts at Host")
			copy(b, "written through the slice")
			got := make([]byte, 25)
			require.NoError(t, g.b.memcpyDtoH(got, uintptr(m.Dev)))
			assert.Equal(t, "written through the slice", string(got), "the GPU side sees the bytes")
			require.NoError(t, m.Free())
			_, err = m.HostBytes()
			assert.ErrorIs(t, err, ErrBadState)
			assert.ErrorContains(t, err, "Mem.HostBytes")
		})
	}
	m, err := g.MemAlloc(100, 0, MemGPU)
	require.NoError(t, err)
	_, err = m.HostBytes()
	assert.ErrorIs(t, err, ErrNotSupported)
	assert.ErrorContains(t, err, "no CPU mapping")
	require.NoError(t, m.Free())
	var nilMem *Mem
	_, err = nilMem.HostBytes()
	assert.ErrorIs(t, err, ErrInvalidValue)
}

// TestHostGPUHasNoCUDAContext checks that the host-memory GPU says clearly
// that it has no CUDA context, and that a closed GPU refuses.
func TestHostGPUHasNoCUDAContext(t *testing.T) {
	g, _ := hostGPU(t)
	c, err := g.CUDAContext()
	assert.Nil(t, c)
	assert.ErrorIs(t, err, ErrNotSupported)
	assert.ErrorContains(t, err, "GPU.CUDAContext")
	assert.ErrorContains(t, err, "no CUDA context")
	require.NoError(t, g.Close())
	_, err = g.CUDAContext()
	assert.ErrorIs(t, err, ErrBadState)
	var nilGPU *GPU
	_, err = nilGPU.CUDAContext()
	assert.ErrorIs(t, err, ErrInvalidValue)
}
