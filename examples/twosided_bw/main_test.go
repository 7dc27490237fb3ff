package main

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gdaki/gpunetio/cuda"

	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKernelNamesExist(t *testing.T) {
	src, err := os.ReadFile("kernel.cu")
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, server := range []bool{false, true} {
		for _, s := range []gpunetio.ExecScope{gpunetio.ExecScopeThread, gpunetio.ExecScopeWarp} {
			n := kernelName(server, s)
			assert.Contains(t, string(src), `extern "C" __global__ void `+n+"(", "server %v, %s", server, s)
			assert.False(t, seen[n], "%s named twice", n)
			seen[n] = true
		}
	}
}

// The kernels include the two-sided header and use its calls.
func TestKernelUsesTwoSidedAPI(t *testing.T) {
	src, err := os.ReadFile("kernel.cu")
	require.NoError(t, err)
	for _, s := range []string{"<doca_gpunetio_dev_verbs_twosided.cuh>", "doca_gpu_dev_verbs_recv<", "doca_gpu_dev_verbs_recv_wait<", "doca_gpu_dev_verbs_send<"} {
		assert.Contains(t, string(src), s)
	}
}

func TestGeometry(t *testing.T) {
	assert.Equal(t, common.BWThreads, threads)
	assert.GreaterOrEqual(t, rqWQEs, threads, "one round of receives fits the RQ")
	assert.True(t, strings.Contains(describe(common.Config{Server: "x", Iters: 1024, ExecScope: gpunetio.ExecScopeWarp}), "client kernel with 1 CUDA block of 512 CUDA threads, exec scope warp, 1024 iterations"))
}

// The flag values of successive launches never overlap: launch k waits for
// base(k)+1 .. base(k)+rounds, all above what launch k-1 wrote.
func TestFlagBase(t *testing.T) {
	const iters = 2048
	for k := 1; k < 2*len(common.BWSizes); k++ {
		assert.Equal(t, flagBase(k-1, iters)+rounds(iters), flagBase(k, iters))
	}
	assert.Equal(t, uint64(4), rounds(iters))
}

// kernel.cu compiles with NVRTC from the embedded headers alone (here for
// a fixed architecture: no GPU is needed), with its four entry points. It
// keeps a plain t.Skipf (examples import no internal package): the GPU
// suite builds the same kernel with nvcc.
func TestKernelCompilesWithNVRTC(t *testing.T) {
	if _, err := cuda.NVRTCLibrary(); errors.Is(err, cuda.ErrNoNVRTC) {
		t.Skipf("no NVRTC library (libnvrtc) on this machine: %v", err)
	}
	src, err := os.ReadFile("kernel.cu")
	require.NoError(t, err)
	out, err := cuda.Compile(string(src), "kernel.cu", &cuda.CompileOptions{Arch: "sm_80"})
	require.NoError(t, err)
	for _, server := range []bool{false, true} {
		for _, s := range []gpunetio.ExecScope{gpunetio.ExecScopeThread, gpunetio.ExecScopeWarp} {
			assert.Contains(t, string(out.PTX), ".entry "+kernelName(server, s)+"(")
		}
	}
	assert.NotEmpty(t, out.Image())
}
