package main

import (
	"os"
	"strings"
	"testing"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKernelNamesExist checks that every entry point the Go side launches is
// defined in kernel.cu (the image itself needs nvcc).
func TestKernelNamesExist(t *testing.T) {
	src, err := os.ReadFile("kernel.cu")
	require.NoError(t, err)
	for _, h := range []gpunetio.NICHandler{gpunetio.NICHandlerAuto, gpunetio.NICHandlerCPUProxy, gpunetio.NICHandlerGPUSMDB,
		gpunetio.NICHandlerGPUSMBF, gpunetio.NICHandlerGPUSMNoDBR} {
		name, err := kernelName(h)
		require.NoError(t, err, "%s", h)
		assert.True(t, strings.Contains(string(src), "WRITE_LAT_ENTRY("+name+","), "%s: %s not in kernel.cu", h, name)
	}
	_, err = kernelName(gpunetio.NICHandler(3))
	assert.Error(t, err)
}

func TestProgram(t *testing.T) {
	assert.True(t, prog.DBRMode)
	assert.False(t, prog.ExecScope)
	assert.Zero(t, prog.IterMult)
	assert.Equal(t, "write_lat_kernel.fatbin", prog.Kernel)
}
