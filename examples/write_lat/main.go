// Command write_lat measures RDMA-write ping-pong latency between two GPUs:
// one GPU thread on each side writes a message into the peer's GPU memory
// and waits for the answer (the Go port of DOCA's gpunetio_verbs_write_lat).
// Both sides print the table; there is no data validation.
//
// Server: write_lat -d <device> [-g <GPU>] [-p 0|1|2|6] [-r 0|1|2]
// Client: write_lat -d <device> [-g <GPU>] -c <server address> [-p ...] [-r ...] [-i N]
//
// -p selects the NIC handler (6: BlueFlame); -r the send doorbell-record mode
// (1: ConnectX-8 hardware no-DBR, 2: SW-emulated, needs GDRCopy); AUTO with
// -r 1 or 2 resolves to GPU_SM_NO_DBR. The kernel (kernel.cu) is compiled by
// `make kernels` into build/kernels/write_lat_kernel.fatbin; -k overrides the
// path.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/gdaki/gpunetio/examples/internal/gpurun"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

var prog = common.Program{
	Name:    "write_lat",
	Kernel:  "write_lat_kernel.fatbin",
	DBRMode: true,
	Handlers: []gpunetio.NICHandler{gpunetio.NICHandlerAuto, gpunetio.NICHandlerCPUProxy,
		gpunetio.NICHandlerGPUSMDB, gpunetio.NICHandlerGPUSMBF},
}

// Status bits the kernel reports.
const (
	statusTimedOut = 1 // gave up waiting for the peer's message
	statusErrorCQE = 2 // an error completion
)

// kernelName is the entry point of kernel.cu for the resolved NIC handler.
func kernelName(h gpunetio.NICHandler) (string, error) {
	switch h {
	case gpunetio.NICHandlerAuto:
		return "gpunetio_write_lat_auto", nil
	case gpunetio.NICHandlerCPUProxy:
		return "gpunetio_write_lat_cpu_proxy", nil
	case gpunetio.NICHandlerGPUSMDB:
		return "gpunetio_write_lat_gpu_sm_db", nil
	case gpunetio.NICHandlerGPUSMBF:
		return "gpunetio_write_lat_gpu_sm_bf", nil
	case gpunetio.NICHandlerGPUSMNoDBR:
		return "gpunetio_write_lat_gpu_sm_no_dbr", nil
	}
	return "", fmt.Errorf("no write_lat kernel for NIC handler %s", h)
}

func main() {
	os.Exit(gpurun.Main(prog, os.Args[1:], os.Stdout, os.Stderr, func(ctx context.Context, cfg common.Config) error {
		return run(ctx, cfg, os.Stdout, os.Stderr)
	}))
}

func run(ctx context.Context, cfg common.Config, stdout, stderr io.Writer) (err error) {
	e, err := gpurun.Open(prog, cfg, gpurun.QPOptions{Handler: cfg.Handler, DBRMode: cfg.DBRMode, CQCollapsed: true}, stderr)
	if err != nil {
		return err
	}
	defer gpurun.CloseInto(e, &err)
	name, err := kernelName(e.QP.NICHandler())
	if err != nil {
		return err
	}
	f, err := e.Function(name)
	if err != nil {
		return err
	}

	n := len(common.LatSizes)
	pollBufs := make([]*gpurun.Buffer, n)
	postBufs := make([]*gpurun.Buffer, n)
	local := make([]verbs.Region, n)
	for i, size := range common.LatSizes {
		if pollBufs[i], err = e.GPUBuffer(size, 0, gpurun.RemoteWritable); err != nil {
			return err
		}
		if postBufs[i], err = e.GPUBuffer(size, 0, gpurun.LocalOnly); err != nil {
			return err
		}
		local[i] = pollBufs[i].MR.Region()
	}
	status, err := e.Counter()
	if err != nil {
		return err
	}

	conn, err := connect(ctx, cfg, stderr)
	if err != nil {
		return fmt.Errorf("failed to set up the OOB connection with the remote peer: %w", err)
	}
	defer conn.Close()
	peer, err := e.Link(conn, local, n, cfg.Timeout)
	if err != nil {
		return err
	}
	t, err := e.StartTimer(stderr)
	if err != nil {
		return err
	}
	defer gpurun.CloseInto(t, &err)
	fmt.Fprintf(stderr, "Launching write_lat %s kernel %s with 1 CUDA block, 1 CUDA thread, %d round trips per message size\n",
		cfg.Role(), name, cfg.Iters)

	isServer := int32(0)
	if !cfg.IsClient() {
		isServer = 1
	}
	r := &common.Report{Program: prog.Name, Role: cfg.Role(), Device: e.Dev.Name(), GPU: e.BusID,
		NICHandler: e.QP.NICHandler().String(), Iterations: cfg.Iters}
	common.WriteLatHeader(stdout)
	for i, size := range common.LatSizes {
		d, err := t.Measure(ctx, cfg.Timeout, func(s *cuda.Stream, warmup bool) error {
			// Sequence numbers continue across the two runs on the same buffers.
			base := cfg.Iters
			if warmup {
				base = 0
			}
			return e.Ctx.LaunchKernel(f, cuda.Dim3{X: 1}, cuda.Dim3{X: 1}, 0, s,
				e.DevQP, isServer, cfg.Iters, base, uint32(size),
				pollBufs[i].Addr(), postBufs[i].Addr(), postBufs[i].LKey(),
				peer.Regions[i].Addr, gpunetio.DeviceKey(peer.Regions[i].RKey), uint64(cfg.Timeout/time.Nanosecond), status.Ptr())
		})
		if err != nil {
			return fmt.Errorf("message size %d: %w", size, err)
		}
		st, err := gpurun.ReadCounter(status)
		if err != nil {
			return err
		}
		if st&statusTimedOut != 0 {
			return fmt.Errorf("message size %d: the kernel gave up waiting for the peer after %v", size, cfg.Timeout)
		}
		if st&statusErrorCQE != 0 {
			return fmt.Errorf("message size %d: error completion", size)
		}
		row := common.NewLatRow(size, cfg.Iters, d)
		common.WriteLatRow(stdout, row)
		r.Lat = append(r.Lat, row)
	}
	if cfg.Output != "" {
		return r.Save(cfg.Output, cfg.Format)
	}
	return nil
}

// connect opens the out-of-band connection of the role.
func connect(ctx context.Context, cfg common.Config, stderr io.Writer) (net.Conn, error) {
	if cfg.IsClient() {
		return common.Dial(ctx, cfg.Server, cfg.Port, cfg.Timeout)
	}
	l, err := common.Listen(cfg.Port)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	fmt.Fprintf(stderr, "write_lat server: waiting for a client on port %d\n", cfg.Port)
	var timeout time.Duration
	if cfg.NonInteractive {
		timeout = cfg.Timeout
	}
	return common.Accept(ctx, l, timeout)
}
