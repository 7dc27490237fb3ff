// Command quickstart is a complete GDAKI program in one file: GPU threads
// put bytes over RDMA with no CPU on the data path. It opens a GPU and two
// RDMA devices (the emulated emu0 and emu1 by default), makes on each a QP
// whose rings live in GPU memory, connects the two, compiles kernel.cu with
// NVRTC (or loads an nvcc-built image with -image), launches it on the first
// QP and checks the bytes that arrived in the second device's GPU buffer.
//
// Copy this directory into your module and run it:
//
//	go run . [-g 8A:00.0] [-a mlx5_0 -b mlx5_1] [-image quickstart_kernel.fatbin]
package main

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

//go:embed kernel.cu
var kernelSource string

const (
	threads = 32       // one block; each thread puts one chunk
	size    = 64 << 10 // bytes moved
)

// check ends the program on an error. The process exit releases everything,
// the only safe way out while a kernel may still use the QP and the memory.
func check(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "quickstart: %s: %v\n", what, err)
		os.Exit(1)
	}
}

// side is one RDMA device with a PD, its device object (DOCA GPUNetIO 3.0)
// and a high-level QP: a CQ and an RC QP with their rings in GPU memory,
// exported to the GPU.
type side struct {
	pd    *verbs.PD
	dev   *verbs.Dev
	qp    *gpunetio.QPHL
	local verbs.LocalEndpoint // what the peer needs to reach this QP
}

func open(g *gpunetio.GPU, name string) (*side, func()) {
	ctx, err := verbs.OpenDevice(name)
	check(err, "open "+name)
	s := &side{}
	s.pd, err = ctx.AllocPD()
	check(err, "allocate a PD on "+name)
	s.dev, err = verbs.OpenDev(s.pd)
	check(err, "open the device object of "+name)
	s.qp, err = gpunetio.NewQPHL(gpunetio.QPHLConfig{GPU: g, NetDev: s.dev, SQWQEs: 2 * threads})
	check(err, "create a GPU QP on "+name)
	s.local, err = s.qp.LocalEndpoint(1, 0) // port 1, GID index 0
	check(err, "describe the QP on "+name)
	return s, func() { s.qp.Close(); s.dev.Close(); s.pd.Close(); ctx.Close() }
}

func main() {
	busID := flag.String("g", "", "GPU PCIe address (default: the first GPU)")
	devA := flag.String("a", "emu0", "RDMA device of the sending QP")
	devB := flag.String("b", "emu1", "RDMA device of the receiving QP")
	image := flag.String("image", "", "kernel image built by nvcc, instead of compiling kernel.cu with NVRTC")
	flag.Parse()

	if *busID == "" {
		gpus, err := cuda.Devices()
		check(err, "this program needs an NVIDIA GPU and its driver")
		*busID = gpus[0].BusID
	}
	g, err := gpunetio.NewGPU(*busID)
	check(err, "open the GPU")
	defer g.Close()
	ctx, err := g.CUDAContext()
	check(err, "CUDA context")
	defer ctx.Release()
	a, closeA := open(g, *devA)
	defer closeA()
	b, closeB := open(g, *devB)
	defer closeB()

	// A pattern in GPU memory on the sending side, zeros on the receiving one.
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i*7 + i>>8)
	}
	src, err := g.MemAlloc(size, 0, gpunetio.MemGPU)
	check(err, "allocate GPU memory")
	defer src.Free()
	dst, err := g.MemAlloc(size, 0, gpunetio.MemGPU)
	check(err, "allocate GPU memory")
	defer dst.Free()
	check(ctx.MemcpyHtoD(src.Dev, want), "fill the source")
	check(ctx.MemsetD8(dst.Dev, 0, size), "zero the destination")
	srcMR, err := src.RegMR(a.pd, verbs.AccessLocalWrite, gpunetio.MemRegDefault)
	check(err, "register the source")
	defer srcMR.Close()
	dstMR, err := dst.RegMR(b.pd, verbs.AccessLocalWrite|verbs.AccessRemoteWrite, gpunetio.MemRegDefault)
	check(err, "register the destination")
	defer dstMR.Close()

	// Connect the QPs: RST -> INIT -> RTR -> RTS with DOCA's defaults. On
	// two hosts each side sends its Endpoint to the other first, for example
	// with verbs.ExchangeEndpointDOCA over TCP.
	b.local.Regions = []verbs.Region{dstMR.Region()}
	check(a.qp.ConnectRC(a.local, b.local.Endpoint, nil), "connect "+*devA)
	check(b.qp.ConnectRC(b.local, a.local.Endpoint, nil), "connect "+*devB)
	if a.qp.GPUQP().CPUAssisted() { // a CPU thread rings the doorbell for the GPU
		svc, err := gpunetio.NewService()
		check(err, "start the CPU proxy")
		defer svc.Close()
		check(svc.Monitor(a.qp.GPUQP()), "start the CPU proxy")
	}
	qp, err := a.qp.GPUQP().DeviceQP() // what the kernel takes
	check(err, "export the QP")

	var mod *cuda.Module
	how := "nvcc-built " + *image
	if *image != "" {
		mod, err = ctx.ModuleLoadFile(*image)
	} else {
		dev := ctx.Device()
		out, cerr := cuda.Compile(kernelSource, "kernel.cu", &cuda.CompileOptions{Device: &dev})
		check(cerr, "compile kernel.cu with NVRTC") // the error carries the compiler's log
		how = "compiled by NVRTC for " + out.Arch
		mod, err = ctx.ModuleLoadData(out.Image())
	}
	check(err, "load the kernel")
	defer mod.Unload()
	put, err := mod.Function("quickstart_put")
	check(err, "find the kernel")
	errs, err := cuda.Alloc[uint32](ctx, 1)
	check(err, "allocate the error counter")
	defer errs.Free()
	check(errs.Zero(), "zero the error counter")
	stream, err := ctx.NewStream(cuda.StreamNonBlocking)
	check(err, "create a stream")
	defer stream.Destroy()

	remote, start := b.local.Regions[0], time.Now()
	check(ctx.LaunchKernel(put, cuda.Dim3{X: 1}, cuda.Dim3{X: threads}, 0, stream, qp, remote.Addr,
		gpunetio.DeviceKey(remote.RKey), src.Dev, gpunetio.DeviceKey(srcMR.LKey()), uint32(size/threads), errs.Ptr()),
		"launch the kernel")
	check(stream.Wait(10*time.Second), "wait for the kernel")
	took := time.Since(start)

	nerr, err := errs.Elements()
	check(err, "read the error counter")
	got := make([]byte, size)
	check(ctx.MemcpyDtoH(got, dst.Dev), "read the destination")
	if nerr[0] != 0 || !bytes.Equal(got, want) {
		check(fmt.Errorf("%d error completions; the destination differs from the source", nerr[0]), "put")
	}
	fmt.Printf("quickstart: %d GPU threads put %d bytes from %s to %s in %v (kernel %s, NIC handler %s): all bytes arrived\n",
		threads, size, *devA, *devB, took.Round(time.Microsecond), how, a.qp.NICHandler())
}
