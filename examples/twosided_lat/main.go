// Command twosided_lat measures two-sided SEND/receive ping-pong latency
// between two GPUs over one RC QP a side, driven entirely by GPU threads
// (the SEND/receive counterpart of write_lat): the client's kernel sends a
// message and waits for the reply, the server's kernel waits for the
// message, sends it back and checks every byte of it. Both sides print the
// table (one-way latency is half the round trip); the server also prints a
// validation line.
//
// Server: twosided_lat -d <device> [-g <GPU>] [-n] [-p 0|1|2] [-i N]
// Client: twosided_lat -d <device> [-g <GPU>] -c <server address> [-p 0|1|2] [-i N]
//
// Both sides need the same -i: the kernels run in step. Each side's QP has
// a receive queue; the receives are posted by the kernels, always before
// the peer can send into them (kernel.cu tells the order). The kernels
// (kernel.cu) are compiled by `make kernels` into
// build/kernels/twosided_lat_kernel.fatbin; -k overrides the path. Run with
// -h for every flag. On one machine with emulated NICs:
//
//	twosided_lat -d emu0 -n & twosided_lat -d emu1 -c 127.0.0.1
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/gdaki/gpunetio/examples/internal/gpurun"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

var prog = common.Program{
	Name:     "twosided_lat",
	Kernel:   "twosided_lat_kernel.fatbin",
	Handlers: []gpunetio.NICHandler{gpunetio.NICHandlerAuto, gpunetio.NICHandlerCPUProxy, gpunetio.NICHandlerGPUSMDB},
}

// threads is the one CUDA block of both kernels: one warp, whose lane 0
// drives the QP while the 32 lanes write or check the payload.
const threads = 32

// rqWQEs is each side's receive queue: at most two receives are
// outstanding on a side.
const rqWQEs = 4

// stride is the size of each half of a side's receive buffer (and of the
// client's send buffer), the largest message: every receive is posted for
// that many bytes, so that one posted in a launch takes the next launch's
// message whatever its size.
var stride = common.LatSizes[len(common.LatSizes)-1]

// Status bits the kernels report (kernel.cu).
const (
	statusTimedOut  = 1  // gave up waiting: the peer's message, its flag or a completion
	statusErrorCQE  = 2  // an error completion, or the QP had already failed
	statusBadLength = 4  // a receive completed with another byte count than the message size
	statusOutOfStep = 8  // a receive index other than expected
	statusBadLaunch = 16 // launched with another geometry than one block of 32 threads
)

// kernelName is the entry point of kernel.cu for a role.
func kernelName(server bool) string {
	if server {
		return "twosided_lat_server"
	}
	return "twosided_lat_client"
}

// seqBase is the number of messages exchanged before launch k (the warm-up
// of size i is launch 2i, its measured run 2i+1): message numbers, and with
// them the receive indexes and the payload, continue across launches.
func seqBase(k int, iters uint32) uint64 { return uint64(k) * uint64(iters) }

// patternByte is byte pos of message seq of size bytes, as the client's
// kernel writes it and the server's checks it.
func patternByte(seq, size uint64, pos int) byte {
	return byte(uint32(seq)*3+uint32(size)*2654435761>>24) + byte(pos)
}

// checkMessage compares msg with message seq of len(msg) bytes and returns
// the first wrong byte as a validation error for message size index buffer.
func checkMessage(msg []byte, seq uint64, buffer int) error {
	for pos, v := range msg {
		if v != patternByte(seq, uint64(len(msg)), pos) {
			return &common.ValidationError{Buffer: buffer, Pos: pos, Value: v}
		}
	}
	return nil
}

// statusError describes the status bits a kernel reported for size.
func statusError(st uint32, size uint64, timeout time.Duration) error {
	if st == 0 {
		return nil
	}
	var what []string
	if st&statusTimedOut != 0 {
		what = append(what, fmt.Sprintf("the kernel gave up waiting for the peer after %v", timeout))
	}
	if st&statusErrorCQE != 0 {
		what = append(what, "error completion")
	}
	if st&statusBadLength != 0 {
		what = append(what, "a receive completed with a byte count other than the message size")
	}
	if st&statusOutOfStep != 0 {
		what = append(what, "a receive index other than expected (the receive queue was used before)")
	}
	if st&statusBadLaunch != 0 {
		what = append(what, "the kernel was launched with another geometry than 1 block of 32 threads")
	}
	if rest := st &^ (statusTimedOut | statusErrorCQE | statusBadLength | statusOutOfStep | statusBadLaunch); rest != 0 {
		what = append(what, fmt.Sprintf("unknown status %#x", rest))
	}
	return fmt.Errorf("message size %d: %s", size, strings.Join(what, "; "))
}

// whereError decodes the server kernel's first wrong byte, ((pos+1)<<8) |
// value, for message size index buffer.
func whereError(where uint32, buffer int) *common.ValidationError {
	return &common.ValidationError{Buffer: buffer, Pos: int(where>>8) - 1, Value: byte(where)}
}

func describe(cfg common.Config) string {
	return fmt.Sprintf("Launching twosided_lat %s kernel %s with 1 CUDA block of %d CUDA threads (lane 0 posts, sends and waits), %d round trips per message size",
		cfg.Role(), kernelName(!cfg.IsClient()), threads, cfg.Iters)
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
		NICHandler: e.QP.NICHandler().String(), Iterations: cfg.Iters}
}

func server(ctx context.Context, cfg common.Config, stdout, stderr io.Writer) (err error) {
	e, err := gpurun.Open(prog, cfg, gpurun.QPOptions{Handler: cfg.Handler, RQWQEs: rqWQEs}, stderr)
	if err != nil {
		return err
	}
	defer gpurun.CloseInto(e, &err)
	f, err := e.Function(kernelName(true))
	if err != nil {
		return err
	}
	rx, err := e.GPUBuffer(2*stride, 0, gpurun.LocalOnly)
	if err != nil {
		return err
	}
	status, err := e.Counter()
	if err != nil {
		return err
	}
	bad, err := e.Counter()
	if err != nil {
		return err
	}
	where, err := e.Counter()
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

	r := report(cfg, e)
	common.WriteLatHeader(stdout)
	var verr error
	k := 0
	for i, size := range common.LatSizes {
		d, err := t.Measure(ctx, cfg.Timeout, func(s *cuda.Stream, _ bool) error {
			base := seqBase(k, cfg.Iters)
			k++
			return e.Ctx.LaunchKernel(f, cuda.Dim3{X: 1}, cuda.Dim3{X: threads}, 0, s,
				e.DevQP, cfg.Iters, size, base, rx.Addr(), rx.LKey(), stride,
				flag.Addr, gpunetio.DeviceKey(flag.RKey), uint64(cfg.Timeout/time.Nanosecond),
				status.Ptr(), bad.Ptr(), where.Ptr())
		})
		if err != nil {
			return fmt.Errorf("message size %d: %w", size, err)
		}
		st, err := gpurun.ReadCounter(status)
		if err != nil {
			return err
		}
		if err := statusError(st, size, cfg.Timeout); err != nil {
			return err
		}
		// A wrong byte does not stop the exchange: it is reported at the end.
		if verr == nil {
			n, err := gpurun.ReadCounter(bad)
			if err != nil {
				return err
			}
			if n > 0 {
				w, err := gpurun.ReadCounter(where)
				if err != nil {
					return err
				}
				verr = whereError(w, i)
			}
		}
		row := common.NewLatRow(size, cfg.Iters, d)
		common.WriteLatRow(stdout, row)
		r.Lat = append(r.Lat, row)
	}
	if verr == nil {
		// The kernels checked every message; the last two (both of the
		// largest size) are still in the two halves: check them here too,
		// against the pattern as this program spells it.
		last := seqBase(k, cfg.Iters)
		buf := make([]byte, 2*stride)
		if err := e.Ctx.MemcpyDtoH(buf, rx.Addr()); err != nil {
			return fmt.Errorf("read the receive buffer: %w", err)
		}
		size := common.LatSizes[len(common.LatSizes)-1]
		for _, seq := range []uint64{last - 1, last} {
			half := (seq & 1) * stride
			if verr = checkMessage(buf[half:half+size], seq, len(common.LatSizes)-1); verr != nil {
				break
			}
		}
	}
	if verr != nil {
		r.Validation = verr.Error()
	} else {
		r.Validation = common.ValidationOK
	}
	fmt.Fprintln(stdout, r.Validation)
	if cfg.Output != "" {
		if err := r.Save(cfg.Output, cfg.Format); err != nil {
			return err
		}
	}
	return verr
}

func client(ctx context.Context, cfg common.Config, stdout, stderr io.Writer) (err error) {
	e, err := gpurun.Open(prog, cfg, gpurun.QPOptions{Handler: cfg.Handler, RQWQEs: rqWQEs}, stderr)
	if err != nil {
		return err
	}
	defer gpurun.CloseInto(e, &err)
	f, err := e.Function(kernelName(false))
	if err != nil {
		return err
	}
	rx, err := e.GPUBuffer(2*stride, 0, gpurun.LocalOnly)
	if err != nil {
		return err
	}
	tx, err := e.GPUBuffer(2*stride, 0, gpurun.LocalOnly)
	if err != nil {
		return err
	}
	// The flag word the server writes once its first receives are posted
	// (GPU memory, zeroed).
	flag, err := e.GPUBuffer(8, 0, gpurun.RemoteWritable)
	if err != nil {
		return err
	}
	status, err := e.Counter()
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
	common.WriteLatHeader(stdout)
	k := 0
	for _, size := range common.LatSizes {
		d, err := t.Measure(ctx, cfg.Timeout, func(s *cuda.Stream, _ bool) error {
			base := seqBase(k, cfg.Iters)
			k++
			return e.Ctx.LaunchKernel(f, cuda.Dim3{X: 1}, cuda.Dim3{X: threads}, 0, s,
				e.DevQP, cfg.Iters, size, base, rx.Addr(), rx.LKey(), tx.Addr(), tx.LKey(), stride,
				flag.Addr(), uint64(cfg.Timeout/time.Nanosecond), status.Ptr())
		})
		if err != nil {
			return fmt.Errorf("message size %d: %w", size, err)
		}
		st, err := gpurun.ReadCounter(status)
		if err != nil {
			return err
		}
		if err := statusError(st, size, cfg.Timeout); err != nil {
			return err
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
