package main

import (
	"os"
	"testing"

	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKernelNameExists(t *testing.T) {
	src, err := os.ReadFile("kernel.cu")
	require.NoError(t, err)
	assert.Contains(t, string(src), `extern "C" __global__ void gpunetio_write_bw(`)
}

func TestProgram(t *testing.T) {
	assert.Equal(t, uint32(common.SQWQEs), prog.MaxIters)
	assert.Equal(t, uint32(common.BWThreads), prog.IterMult)
	assert.Contains(t, spec.Describe(common.Config{Iters: 2048}), "1 CUDA Block, 512 CUDA threads")
}
