package common

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/gpunetio"
)

// -m chooses where the QP's rings and the data buffers live.
func TestParseMem(t *testing.T) {
	for arg, want := range map[string]gpunetio.MemType{
		"0": gpunetio.MemGPU, "gpu": gpunetio.MemGPU, "2": gpunetio.MemCPUGPU, "CPU_GPU": gpunetio.MemCPUGPU, " cpu_gpu ": gpunetio.MemCPUGPU,
	} {
		for _, p := range []Program{testPutBW, testWriteBW, testWriteLat} {
			var stderr bytes.Buffer
			cfg, err := Parse(p, []string{"-m", arg}, &stderr)
			require.NoError(t, err, "%s -m %q: %s", p.Name, arg, stderr.String())
			assert.Equal(t, want, cfg.Mem, "%s -m %q", p.Name, arg)
		}
	}
	for _, arg := range []string{"1", "GPU_CPU", "3", "host"} {
		var stderr bytes.Buffer
		_, err := Parse(testWriteLat, []string{"-m", arg}, &stderr)
		require.ErrorIs(t, err, ErrUsage, "-m %q", arg)
		assert.Contains(t, err.Error(), "memory type must be 0 (GPU) or 2 (CPU_GPU)")
	}
	var usage bytes.Buffer
	testPutBW.Usage(&usage)
	assert.Contains(t, usage.String(), "-m <memory of the QP rings and data buffers. 0: GPU 2: CPU_GPU (default: 0)>")
}
