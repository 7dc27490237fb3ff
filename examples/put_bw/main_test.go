package main

import (
	"os"
	"strings"
	"testing"

	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKernelNamesExist(t *testing.T) {
	src, err := os.ReadFile("kernel.cu")
	require.NoError(t, err)
	for _, s := range []gpunetio.ExecScope{gpunetio.ExecScopeThread, gpunetio.ExecScopeWarp} {
		assert.Contains(t, string(src), `extern "C" __global__ void `+kernelName(s)+"(", "%s", s)
	}
	assert.NotEqual(t, kernelName(gpunetio.ExecScopeThread), kernelName(gpunetio.ExecScopeWarp))
}

func TestGeometry(t *testing.T) {
	assert.Equal(t, 256, threadsPerBlock)
	assert.Equal(t, common.BWThreads, common.PutBWBlocks*threadsPerBlock)
	assert.True(t, strings.Contains(spec.Describe(common.Config{Iters: 1024, ExecScope: gpunetio.ExecScopeWarp}), "2 CUDA blocks, 256 CUDA threads each, exec scope warp, 1024 iterations"))
}
