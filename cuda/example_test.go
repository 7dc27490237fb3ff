package cuda_test

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"strings"
	"time"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/gpunetio"
)

// The GPU side of a program: open the first GPU through gpunetio, take its
// context, compile a kernel from a Go string, launch it on memory the CPU
// can read, and time it. It needs a GPU and NVRTC, so it is compiled but not
// run by go test; gpunetio's TestGPUCUDAContext runs the same flow on a GPU.
func Example() {
	const src = `
extern "C" __global__ void stamp(unsigned *out, unsigned value, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = value + i;
}`
	devs, err := cuda.Devices()
	if err != nil {
		log.Fatal(err) // errors.Is(err, cuda.ErrNoDriver) without a driver
	}
	g, err := gpunetio.NewGPU(devs[0].BusID)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	ctx, err := g.CUDAContext()
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Release()

	dev := ctx.Device()
	out, err := cuda.Compile(src, "stamp.cu", &cuda.CompileOptions{Device: &dev})
	if err != nil {
		log.Fatal(err) // a compile error carries NVRTC's log
	}
	mod, err := ctx.ModuleLoadData(out.Image())
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Unload()
	stamp, err := mod.Function("stamp")
	if err != nil {
		log.Fatal(err)
	}

	// Host-visible GPU memory: the kernel writes it, the CPU reads it.
	mem, err := g.MemAlloc(4096, 0, gpunetio.MemCPUGPU)
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Free()
	view, err := mem.HostBytes()
	if err != nil {
		log.Fatal(err)
	}

	s, err := ctx.NewStream(cuda.StreamNonBlocking)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Destroy()
	start, _ := ctx.NewEvent(cuda.EventDefault)
	defer start.Destroy()
	end, _ := ctx.NewEvent(cuda.EventDefault)
	defer end.Destroy()

	_ = start.Record(s)
	if err := ctx.LaunchKernel(stamp, cuda.Dim3{X: 4}, cuda.Dim3{X: 256}, 0, s, mem.Dev, uint32(1000), uint32(1024)); err != nil {
		log.Fatal(err)
	}
	_ = end.Record(s)
	if err := end.Wait(5 * time.Second); err != nil {
		log.Fatal(err) // errors.Is(err, cuda.ErrTimeout) if the kernel hangs
	}
	took, _ := cuda.ElapsedTime(start, end)
	fmt.Printf("word 7 is %d after %v on %s\n", uint32(view[28])|uint32(view[29])<<8, took, devs[0].Name)
}

// Compile a kernel with NVRTC for a given architecture. The embedded device
// headers are always available; this kernel needs none.
func ExampleCompile() {
	const src = `
extern "C" __global__ void scale(float *x, float a, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}`
	out, err := cuda.Compile(src, "scale.cu", &cuda.CompileOptions{Arch: "sm_90", Flags: []string{"-lineinfo"}})
	var ce *cuda.NVRTCError
	switch {
	case errors.Is(err, cuda.ErrNoNVRTC):
		log.Fatal("install the CUDA NVRTC runtime: ", err)
	case errors.As(err, &ce):
		log.Fatalf("%s failed:\n%s", ce.Op, ce.Log)
	case err != nil:
		log.Fatal(err)
	}
	fmt.Printf("%d bytes of cubin, %d of PTX\n", len(out.CUBIN), len(out.PTX))
}

// Compile a kernel that uses the GPUNetIO device API. The headers come from
// the package, in any of the include styles DOCA examples use.
func ExampleCompile_deviceHeaders() {
	const src = `
#include <doca_gpunetio_dev_verbs_onesided.cuh>

// Keys are big-endian, as the device API takes them.
extern "C" __global__ void put(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey,
                               uint64_t laddr, uint32_t lkey, uint32_t size)
{
	doca_gpu_dev_verbs_put(qp, doca_gpu_dev_verbs_addr{raddr, rkey},
	                       doca_gpu_dev_verbs_addr{laddr, lkey}, size);
}`
	ctx := currentContext() // from gpunetio.GPU.CUDAContext
	dev := ctx.Device()
	out, err := cuda.Compile(src, "put.cu", &cuda.CompileOptions{Device: &dev})
	if err != nil {
		log.Fatal(err)
	}
	mod, err := ctx.ModuleLoadData(out.Image())
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Unload()
	fmt.Println("compiled for", out.Arch)
}

// currentContext stands for the context a program took from its GPU.
func currentContext() *cuda.Context {
	dev, err := cuda.DeviceGet(0)
	if err != nil {
		log.Fatal(err)
	}
	ctx, err := dev.PrimaryContext()
	if err != nil {
		log.Fatal(err)
	}
	return ctx
}

// Launch a kernel with a plain Go struct passed by value: its Go layout is
// the C layout of the same declaration, which LaunchKernel checks.
func ExampleContext_LaunchKernel() {
	// struct params { uint32_t n; float scale; uint64_t dst; };
	// extern "C" __global__ void run(struct params p);
	type params struct {
		N     uint32
		Scale float32
		Dst   cuda.DevPtr
	}
	ctx := currentContext()
	buf, err := cuda.Alloc[float32](ctx, 1024)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Free()
	mod, err := ctx.ModuleLoadFile("run.fatbin")
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Unload()
	run, err := mod.Function("run")
	if err != nil {
		log.Fatal(err)
	}
	p := params{N: uint32(buf.Len()), Scale: 0.5, Dst: buf.Ptr()}
	if err := ctx.LaunchKernel(run, cuda.Dim3{X: 4}, cuda.Dim3{X: 256}, 0, nil, p); err != nil {
		log.Fatal(err) // errors.Is(err, cuda.ErrBadArgument) for a type C cannot take
	}
	if err := ctx.Synchronize(); err != nil {
		log.Fatal(err)
	}
	vals, err := buf.Elements()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(vals[:4])
}

// Typed, bounds-checked device memory.
func ExampleAlloc() {
	ctx := currentContext()
	buf, err := cuda.Alloc[uint64](ctx, 16)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Free()
	if err := buf.Write(0, []uint64{1, 2, 3}); err != nil {
		log.Fatal(err)
	}
	got := make([]uint64, 3)
	if err := buf.Read(0, got); err != nil {
		log.Fatal(err)
	}
	fmt.Println(got, buf.Write(15, []uint64{1, 2}) != nil) // the second write does not fit
}

// List the GPUs with what a GDAKI program needs to pair them with NICs.
func ExampleDevices() {
	devs, err := cuda.Devices()
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range devs {
		fmt.Printf("%d %s %s %s NUMA %d\n", d.Ordinal, d.BusID, d.Name, d.Arch(), d.NUMANode)
	}
}

// The embedded device headers, for tools that need them on disk (nvcc) or
// want to inspect them.
func ExampleHeaders() {
	umbrella, err := fs.ReadFile(cuda.Headers(), "doca_gpunetio_device.h")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Contains(string(umbrella), "device/doca_gpunetio_dev_verbs_onesided.cuh"))
	// Output: true
}

func ExampleParsePCIBusID() {
	a, err := cuda.ParsePCIBusID("00000000:8A:00.0") // as nvidia-smi prints it
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a, a.Bus)
	_, err = cuda.ParsePCIBusID("8a:00")
	fmt.Println(errors.Is(err, cuda.ErrBadBusID))
	// Output:
	// 0000:8a:00.0 138
	// true
}

// Fail a test run that leaves CUDA objects behind, naming each and where
// it was created.
func ExampleLeakReport() {
	cuda.RecordStacks(true) // first thing in TestMain
	// ... m.Run() ...
	if r := cuda.LeakReport(); r != "" {
		fmt.Println(r)
		return
	}
	fmt.Println("no CUDA objects left")
	// Output: no CUDA objects left
}
