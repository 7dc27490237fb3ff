// Command put_bw measures one-sided "put" bandwidth from the client's GPU to
// the server's host memory over one RC QP driven entirely by GPU threads
// (the Go port of DOCA's gpunetio_verbs_put_bw).
//
// Server: put_bw -d <device> [-g <GPU>] [-n]
// Client: put_bw -d <device> [-g <GPU>] -c <server address> [-e 0|1] [-p 0|1|2] [-i N]
//
// The kernel (kernel.cu) is compiled by `make kernels` into
// build/kernels/put_bw_kernel.fatbin; -k overrides the path. Run with -h for
// every flag. On one machine with emulated NICs:
//
//	put_bw -d emu0 -n & put_bw -d emu1 -c 127.0.0.1
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
	Name:      "put_bw",
	Kernel:    "put_bw_kernel.fatbin",
	ExecScope: true,
	IterMult:  common.BWThreads,
	Handlers:  []gpunetio.NICHandler{gpunetio.NICHandlerAuto, gpunetio.NICHandlerCPUProxy, gpunetio.NICHandlerGPUSMDB},
}

const threadsPerBlock = common.BWThreads / common.PutBWBlocks

var spec = gpurun.BWSpec{
	Prog: prog,
	Describe: func(cfg common.Config) string {
		return fmt.Sprintf("Launching put_bw client kernel with %d CUDA blocks, %d CUDA threads each, exec scope %s, %d iterations per message size",
			common.PutBWBlocks, threadsPerBlock, cfg.ExecScope, cfg.Iters)
	},
	Launch: launch,
}

// kernelName is the entry point of kernel.cu for an exec scope.
func kernelName(s gpunetio.ExecScope) string {
	if s == gpunetio.ExecScopeWarp {
		return "gpunetio_put_bw_warp"
	}
	return "gpunetio_put_bw_thread"
}

// launch starts put_bw(qp, iters, size, local, be(lkey), remote, be(rkey),
// errors) on 2 blocks of 256 threads.
func launch(l *gpurun.BWLaunch) error {
	f, err := l.Env.Function(kernelName(l.Cfg.ExecScope))
	if err != nil {
		return err
	}
	return l.Env.Ctx.LaunchKernel(f, cuda.Dim3{X: common.PutBWBlocks}, cuda.Dim3{X: threadsPerBlock}, 0, l.Stream,
		l.Env.DevQP, l.Iters, l.Size, l.Local.Addr(), l.Local.LKey(), l.Remote.Addr, l.RKey(), l.Errs)
}

func main() {
	os.Exit(gpurun.Main(prog, os.Args[1:], os.Stdout, os.Stderr, func(ctx context.Context, cfg common.Config) error {
		return gpurun.RunBW(ctx, spec, cfg, os.Stdout, os.Stderr)
	}))
}
