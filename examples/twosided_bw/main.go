// Command twosided_bw measures two-sided SEND/receive bandwidth from the
// client's GPU to the server's GPU over one RC QP driven entirely by GPU
// threads on both sides: the server's kernel posts the receives and tells
// the client they are posted with an RDMA write of a flag, the client's
// kernel waits for the flag and sends, and the server's kernel waits for
// every receive completion; the server then checks every byte.
//
// Server: twosided_bw -d <device> [-g <GPU>] [-n] [-e 0|1] [-p 0|1|2]
// Client: twosided_bw -d <device> [-g <GPU>] -c <server address> [-e 0|1] [-p 0|1|2] [-i N]
//
// The kernels (kernel.cu) are compiled by `make kernels` into
// build/kernels/twosided_bw_kernel.fatbin; -k overrides the path. Run with
// -h for every flag. On one machine with emulated NICs:
//
//	twosided_bw -d emu0 -n & twosided_bw -d emu1 -c 127.0.0.1
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/gdaki/gpunetio/examples/internal/gpurun"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

var prog = common.Program{
	Name:      "twosided_bw",
	Kernel:    "twosided_bw_kernel.fatbin",
	ExecScope: true,
	IterMult:  common.BWThreads,
	Handlers:  []gpunetio.NICHandler{gpunetio.NICHandlerAuto, gpunetio.NICHandlerCPUProxy, gpunetio.NICHandlerGPUSMDB},
}

// threads is the one CUDA block of both kernels: __syncthreads orders the
// whole grid.
const threads = common.BWThreads

// rqWQEs is the server's receive queue: one round of receives.
const rqWQEs = threads

// kernelName is the entry point of kernel.cu for a role and an exec scope.
func kernelName(server bool, s gpunetio.ExecScope) string {
	role := "client"
	if server {
		role = "server"
	}
	if s == gpunetio.ExecScopeWarp {
		return "twosided_bw_" + role + "_warp"
	}
	return "twosided_bw_" + role + "_thread"
}

// rounds is the number of rounds of a launch of iters messages.
func rounds(iters uint32) uint64 { return uint64(iters / threads) }

// flagBase is the flag value before launch k (the warm-up of size i is
// launch 2i, its measured run 2i+1): the flag only grows, so a late write
// of one launch never releases a round of another.
func flagBase(k int, iters uint32) uint64 { return uint64(k) * rounds(iters) }

func describe(cfg common.Config) string {
	return fmt.Sprintf("Launching twosided_bw %s kernel with 1 CUDA block of %d CUDA threads, exec scope %s, %d iterations per message size",
		cfg.Role(), threads, cfg.ExecScope, cfg.Iters)
}

func main() {
	os.Exit(gpurun.Main(prog, os.Args[1:], os.Stdout, os.Stderr, func(ctx context.Context, cfg common.Config) error {
		if cfg.IsClient() {
			return client(ctx, cfg, os.Stdout, os.Stderr)
		}
		return server(ctx, cfg, os.Stdout, os.Stderr)
	}))
}

func report(cfg common.Config, e *gpurun.Env) *common.Report {
	return &common.Report{Program: prog.Name, Role: cfg.Role(), Device: e.Dev.Name(), GPU: e.BusID,
		NICHandler: e.QP.NICHandler().String(), Iterations: cfg.Iters, ExecScope: cfg.ExecScope.String()}
}

func server(ctx context.Context, cfg common.Config, stdout, stderr io.Writer) (err error) {
	e, err := gpurun.Open(prog, cfg, gpurun.QPOptions{Handler: cfg.Handler, RQWQEs: rqWQEs}, stderr)
	if err != nil {
		return err
	}
	defer gpurun.CloseInto(e, &err)
	f, err := e.Function(kernelName(true, cfg.ExecScope))
	if err != nil {
		return err
	}
	bufs := make([]*gpurun.Buffer, len(common.BWSizes))
	for i, size := range common.BWSizes {
		if bufs[i], err = e.GPUBuffer(threads*size, 0, gpurun.LocalOnly); err != nil {
			return err
		}
	}
	errs, err := e.Counter()
	if err != nil {
		return err
	}

	l, err := common.Listen(cfg.Port)
	if err != nil {
		return fmt.Errorf("failed to set up the OOB connection with the remote peer: %w", err)
	}
	defer l.Close()
	fmt.Fprintf(stderr, "%s server: waiting for a client on port %d\n", prog.Name, cfg.Port)
	acceptTimeout := time.Duration(0)
	if cfg.NonInteractive {
		acceptTimeout = cfg.Timeout
	}
	conn, err := common.Accept(ctx, l, acceptTimeout)
	if err != nil {
		return fmt.Errorf("failed to set up the OOB connection with the remote peer: %w", err)
	}
	defer conn.Close()
	// The client's record carries its flag word.
	peer, err := e.Link(conn, nil, 1, cfg.Timeout)
	if err != nil {
		return err
	}
	flag := peer.Regions[0]
	t, err := e.StartTimer(stderr)
	if err != nil {
		return err
	}
	defer gpurun.CloseInto(t, &err)
	fmt.Fprintln(stderr, describe(cfg))

	// Two launches per size, as the client's (warm-up, measured).
	k := 0
	for i, size := range common.BWSizes {
		_, err := t.Measure(ctx, cfg.Timeout, func(s *cuda.Stream, _ bool) error {
			base := flagBase(k, cfg.Iters)
			k++
			return e.Ctx.LaunchKernel(f, cuda.Dim3{X: 1}, cuda.Dim3{X: threads}, 0, s,
				e.DevQP, cfg.Iters, size, bufs[i].Addr(), bufs[i].LKey(), flag.Addr, gpunetio.DeviceKey(flag.RKey), base, errs.Ptr())
		})
		if err != nil {
			return fmt.Errorf("message size %d: %w", size, err)
		}
	}
	n, err := gpurun.ReadCounter(errs)
	if err != nil {
		return err
	}
	done, err := common.WaitDone(ctx, conn, cfg.Timeout)
	if err != nil && !errors.Is(err, common.ErrInterrupted) {
		return err
	}

	r := report(cfg, e)
	r.ErrorCQEs = n + done.ErrorCQEs
	views := make([][]byte, len(bufs))
	for i, b := range bufs {
		views[i] = make([]byte, threads*common.BWSizes[i])
		if err := e.Ctx.MemcpyDtoH(views[i], b.Addr()); err != nil {
			return fmt.Errorf("read the receive buffer of size %d: %w", common.BWSizes[i], err)
		}
	}
	verr := common.Validate(views)
	if verr != nil {
		r.Validation = verr.Error()
		fmt.Fprintln(stdout, verr.Error())
	} else {
		r.Validation = common.ValidationOK
		fmt.Fprintln(stdout, common.ValidationOK)
	}
	if cfg.Output != "" {
		if err := r.Save(cfg.Output, cfg.Format); err != nil {
			return err
		}
	}
	switch {
	case verr != nil:
		return verr
	case n > 0:
		return fmt.Errorf("the server's kernels saw %d error completions", n)
	case done.ErrorCQEs > 0:
		return fmt.Errorf("the client reported %d error completions", done.ErrorCQEs)
	}
	return nil
}

func client(ctx context.Context, cfg common.Config, stdout, stderr io.Writer) (err error) {
	e, err := gpurun.Open(prog, cfg, gpurun.QPOptions{Handler: cfg.Handler}, stderr)
	if err != nil {
		return err
	}
	defer gpurun.CloseInto(e, &err)
	f, err := e.Function(kernelName(false, cfg.ExecScope))
	if err != nil {
		return err
	}
	bufs := make([]*gpurun.Buffer, len(common.BWSizes))
	for i, size := range common.BWSizes {
		if bufs[i], err = e.GPUBuffer(threads*size, byte(i+1), gpurun.LocalOnly); err != nil {
			return err
		}
	}
	// The flag word the server writes (GPU memory, zeroed).
	flag, err := e.GPUBuffer(8, 0, gpurun.RemoteWritable)
	if err != nil {
		return err
	}
	errs, err := e.Counter()
	if err != nil {
		return err
	}

	conn, err := common.Dial(ctx, cfg.Server, cfg.Port, cfg.Timeout)
	if err != nil {
		return fmt.Errorf("failed to set up the OOB connection with the remote peer: %w", err)
	}
	defer conn.Close()
	if _, err := e.Link(conn, []verbs.Region{flag.MR.Region()}, 0, cfg.Timeout); err != nil {
		return err
	}
	t, err := e.StartTimer(stderr)
	if err != nil {
		return err
	}
	defer gpurun.CloseInto(t, &err)
	fmt.Fprintln(stderr, describe(cfg))

	r := report(cfg, e)
	common.WriteBWHeader(stdout)
	k := 0
	for i, size := range common.BWSizes {
		d, err := t.Measure(ctx, cfg.Timeout, func(s *cuda.Stream, _ bool) error {
			base := flagBase(k, cfg.Iters)
			k++
			return e.Ctx.LaunchKernel(f, cuda.Dim3{X: 1}, cuda.Dim3{X: threads}, 0, s,
				e.DevQP, cfg.Iters, size, bufs[i].Addr(), bufs[i].LKey(), flag.Addr(), base, errs.Ptr())
		})
		if err != nil {
			return fmt.Errorf("message size %d: %w", size, err)
		}
		row := common.NewBWRow(size, cfg.Iters, d)
		common.WriteBWRow(stdout, row)
		r.BW = append(r.BW, row)
	}
	n, err := gpurun.ReadCounter(errs)
	if err != nil {
		return err
	}
	r.ErrorCQEs = n
	if err := common.SendDone(conn, common.Done{Reported: true, ErrorCQEs: n}, cfg.Timeout); err != nil {
		return err
	}
	if cfg.Output != "" {
		if err := r.Save(cfg.Output, cfg.Format); err != nil {
			return err
		}
	}
	if n > 0 {
		return fmt.Errorf("the kernels saw %d error completions", n)
	}
	return nil
}
