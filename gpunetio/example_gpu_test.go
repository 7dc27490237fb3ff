package gpunetio_test

import (
	"errors"
	"fmt"
	"log"
	"strings"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/internal/gpuskip"
	"github.com/gdaki/gpunetio/verbs"
)

// putKernel posts one put per thread on a QP shared by the block and waits
// for its completion; keys arrive big-endian (DeviceKey).
const putKernel = `
#include <doca_gpunetio_dev_verbs_onesided.cuh>
#include <doca_gpunetio_dev_verbs_cq.cuh>

extern "C" __global__ void put(struct doca_gpu_dev_verbs_qp *qp, uint64_t dst, uint32_t dst_key,
                               uint64_t src, uint32_t src_key, uint32_t chunk, unsigned int *errors)
{
	const uint64_t off = (uint64_t)threadIdx.x * chunk;
	doca_gpu_dev_verbs_ticket_t t;
	doca_gpu_dev_verbs_put<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>(
		qp, doca_gpu_dev_verbs_addr{dst + off, dst_key}, doca_gpu_dev_verbs_addr{src + off, src_key}, chunk, &t);
	if (doca_gpu_dev_verbs_poll_cq_at<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(
		    doca_gpu_dev_verbs_qp_get_cq_sq(qp), t) != 0)
		atomicAdd(errors, 1u);
}`

// The GPU side of a GDAKI program: GPU threads post RDMA writes through a QP
// whose rings live in GPU memory and ring the NIC's doorbell themselves.
// This example needs a GPU and NVRTC, so it is compiled but not run by go
// test; examples/quickstart is the same flow as a program, and the GPU
// suite runs it. The host side (QPs, connection, registration) is what
// ExampleNewQPHL and ExampleMem_RegMR run without a GPU.
func Example_kernel() {
	check := func(err error) {
		if err != nil {
			log.Fatal(err) // on a wait timeout: exit without releasing what the kernel uses
		}
	}
	gpus, err := cuda.Devices() // errors.Is(err, cuda.ErrNoDriver) without a driver
	check(err)
	g, err := gpunetio.NewGPU(gpus[0].BusID)
	check(err)
	defer g.Close()
	ctx, err := g.CUDAContext() // the context the GPU's memory and exports live in
	check(err)
	defer ctx.Release()

	// The sending QP on emu0 and its peer on emu1 (openPeer: verbs.OpenDevice
	// and AllocPD).
	a, b := openPeer("emu0"), openPeer("emu1")
	defer b.close()
	defer a.close()
	qa, err := gpunetio.NewQPHL(gpunetio.QPHLConfig{GPU: g, PD: a.pd, SQWQEs: 64})
	check(err)
	defer qa.Close()
	qb, err := gpunetio.NewQPHL(gpunetio.QPHLConfig{GPU: g, PD: b.pd, SQWQEs: 64})
	check(err)
	defer qb.Close()

	// Source and destination in GPU memory, registered on each side.
	const threads, chunk = 32, 1024
	src, err := g.MemAlloc(threads*chunk, 0, gpunetio.MemGPU)
	check(err)
	defer src.Free()
	dst, err := g.MemAlloc(threads*chunk, 0, gpunetio.MemGPU)
	check(err)
	defer dst.Free()
	srcMR, err := src.RegMR(a.pd, verbs.AccessLocalWrite, gpunetio.MemRegDefault)
	check(err)
	defer srcMR.Close()
	dstMR, err := dst.RegMR(b.pd, verbs.AccessLocalWrite|verbs.AccessRemoteWrite, gpunetio.MemRegDefault)
	check(err)
	defer dstMR.Close()

	// Connect (between hosts the endpoints go over TCP first).
	la, err := qa.LocalEndpoint(1, 0)
	check(err)
	lb, err := qb.LocalEndpoint(1, 0)
	check(err)
	lb.Regions = []verbs.Region{dstMR.Region()} // what emu0 may write
	check(qa.ConnectRC(la, lb.Endpoint, nil))
	check(qb.ConnectRC(lb, la.Endpoint, nil))
	if qa.GPUQP().CPUAssisted() {
		svc, err := gpunetio.NewService()
		check(err)
		defer svc.Close()
		check(svc.Monitor(qa.GPUQP()))
	}
	devQP, err := qa.GPUQP().DeviceQP()
	check(err)

	// Compile with NVRTC (the device headers are embedded in package cuda)
	// and launch with the QP, the remote region and the local buffer.
	dev := ctx.Device()
	out, err := cuda.Compile(putKernel, "put.cu", &cuda.CompileOptions{Device: &dev})
	check(err) // a *cuda.NVRTCError carries the compiler's log
	mod, err := ctx.ModuleLoadData(out.Image())
	check(err)
	defer mod.Unload()
	put, err := mod.Function("put")
	check(err)
	errs, err := cuda.Alloc[uint32](ctx, 1)
	check(err)
	defer errs.Free()
	check(errs.Zero())
	s, err := ctx.NewStream(cuda.StreamNonBlocking)
	check(err)
	defer s.Destroy()
	r := lb.Regions[0]
	check(ctx.LaunchKernel(put, cuda.Dim3{X: 1}, cuda.Dim3{X: threads}, 0, s, devQP,
		r.Addr, gpunetio.DeviceKey(r.RKey), src.Dev, gpunetio.DeviceKey(srcMR.LKey()), uint32(chunk), errs.Ptr()))
	check(s.Wait(10 * time.Second))
	n, err := errs.Elements()
	check(err)
	fmt.Println("error completions:", n[0])
}

// The kernel of Example_kernel compiles with NVRTC from the embedded device
// headers (for a fixed architecture: the test needs no GPU).
func TestExampleKernelCompiles(t *testing.T) {
	if _, err := cuda.NVRTCLibrary(); errors.Is(err, cuda.ErrNoNVRTC) {
		gpuskip.Skipf(t, "no NVRTC library (libnvrtc) on this machine: %v", err)
	}
	out, err := cuda.Compile(putKernel, "put.cu", &cuda.CompileOptions{Arch: "sm_80"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out.PTX), ".entry put(") {
		t.Fatalf("no entry point put in the PTX:\n%.2000s", out.PTX)
	}
}
