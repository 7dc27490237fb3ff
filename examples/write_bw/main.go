// Command write_bw measures RDMA-write bandwidth from the client's GPU to the
// server's host memory with WQEs built by the kernel itself in the send ring
// (the Go port of DOCA's gpunetio_verbs_write_bw).
//
// Server: write_bw -d <device> [-g <GPU>] [-n]
// Client: write_bw -d <device> [-g <GPU>] -c <server address> [-p 0|1|2] [-i N]
//
// -i must be a multiple of 512 and at most 2048 (the send-queue depth: the
// kernel has no flow control). -l is accepted (the reference prints it in its
// usage but rejects it). The kernel (kernel.cu) is compiled by `make kernels`
// into build/kernels/write_bw_kernel.fatbin; -k overrides the path.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/gdaki/gpunetio/examples/internal/gpurun"
	"github.com/gdaki/gpunetio/gpunetio"
)

var prog = common.Program{
	Name:     "write_bw",
	Kernel:   "write_bw_kernel.fatbin",
	IterMult: common.BWThreads,
	MaxIters: common.SQWQEs,
	Handlers: []gpunetio.NICHandler{gpunetio.NICHandlerAuto, gpunetio.NICHandlerCPUProxy, gpunetio.NICHandlerGPUSMDB},
}

var spec = gpurun.BWSpec{
	Prog: prog,
	Describe: func(cfg common.Config) string {
		return fmt.Sprintf("Launching gpunetio_verbs_write_bw client kernel with 1 CUDA Block, %d CUDA threads, %d iterations per message size",
			common.BWThreads, cfg.Iters)
	},
	Launch: launch,
}

// launch starts write_bw(qp, iters, size, local, be(lkey), remote, be(rkey),
// errors) on 1 block of 512 threads.
func launch(l *gpurun.BWLaunch) error {
	f, err := l.Env.Function("gpunetio_write_bw")
	if err != nil {
		return err
	}
	return l.Env.Ctx.LaunchKernel(f, cuda.Dim3{X: 1}, cuda.Dim3{X: common.BWThreads}, 0, l.Stream,
		l.Env.DevQP, l.Iters, uint32(l.Size), l.Local.Addr(), l.Local.LKey(), l.Remote.Addr, l.RKey(), l.Errs)
}

func main() {
	os.Exit(gpurun.Main(prog, os.Args[1:], os.Stdout, os.Stderr, func(ctx context.Context, cfg common.Config) error {
		return gpurun.RunBW(ctx, spec, cfg, os.Stdout, os.Stderr)
	}))
}
