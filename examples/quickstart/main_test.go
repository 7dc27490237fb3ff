package main

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The kernel the program launches is the one kernel.cu defines, with the
// parameter list the launch passes.
func TestKernelSignature(t *testing.T) {
	re := regexp.MustCompile(`extern "C" __global__ void quickstart_put\(([^)]*)\)`)
	m := re.FindStringSubmatch(kernelSource)
	require.NotNil(t, m, "kernel.cu defines quickstart_put")
	var types []string
	for _, p := range strings.Split(m[1], ",") {
		f := strings.Fields(p)
		types = append(types, strings.Join(f[:len(f)-1], " "))
	}
	// qp, dst address, dst key, src address, src key, chunk, error counter:
	// the Go launch passes DevPtr, uint64, uint32, DevPtr, uint32, uint32, DevPtr.
	assert.Equal(t, []string{"struct doca_gpu_dev_verbs_qp", "uint64_t", "uint32_t", "uint64_t", "uint32_t", "uint32_t", "unsigned int"}, types)
	assert.Contains(t, m[1], "*qp")
	assert.Contains(t, m[1], "*errors")
	assert.Zero(t, size%threads, "every thread puts a whole chunk")
}

// kernel.cu compiles with NVRTC from the embedded headers alone, as the
// program compiles it (here for a fixed architecture: there is no GPU).
//
// It keeps a plain t.Skipf (examples import no internal package, so not
// internal/gpuskip): on the GPU machine the quickstart step of
// scripts/gpu-test.sh compiles the same kernel with NVRTC and fails
// without it.
func TestKernelCompilesWithNVRTC(t *testing.T) {
	if _, err := cuda.NVRTCLibrary(); errors.Is(err, cuda.ErrNoNVRTC) {
		t.Skipf("no NVRTC library (libnvrtc) on this machine: %v", err)
	}
	out, err := cuda.Compile(kernelSource, "kernel.cu", &cuda.CompileOptions{Arch: "sm_80"})
	require.NoError(t, err)
	assert.Contains(t, string(out.PTX), ".entry quickstart_put(")
	assert.NotEmpty(t, out.Image())
}
