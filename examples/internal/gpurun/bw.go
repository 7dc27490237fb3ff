package gpurun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

// BWLaunch is one bandwidth kernel launch: iters messages of size bytes from
// local to remote, counting error completions into errs.
type BWLaunch struct {
	Cfg    common.Config
	Env    *Env
	Stream *cuda.Stream
	Iters  uint32
	Size   uint64
	Local  *Buffer
	Remote verbs.Region
	Errs   cuda.DevPtr
}

// RKey is the remote key as kernels take it (gpunetio.DeviceKey).
func (l *BWLaunch) RKey() uint32 { return gpunetio.DeviceKey(l.Remote.RKey) }

// BWSpec is what differs between put_bw and write_bw.
type BWSpec struct {
	Prog     common.Program
	Describe func(cfg common.Config) string // the launch line
	Launch   func(l *BWLaunch) error
}

// RunBW runs the server or the client role of a bandwidth example.
func RunBW(ctx context.Context, spec BWSpec, cfg common.Config, stdout, stderr io.Writer) error {
	if cfg.IsClient() {
		return bwClient(ctx, spec, cfg, stdout, stderr)
	}
	return bwServer(ctx, spec, cfg, stdout, stderr)
}

func report(prog common.Program, cfg common.Config, e *Env) *common.Report {
	r := &common.Report{Program: prog.Name, Role: cfg.Role(), Device: e.Dev.Name(), GPU: e.BusID,
		NICHandler: e.QP.NICHandler().String(), Iterations: cfg.Iters}
	if prog.ExecScope {
		r.ExecScope = cfg.ExecScope.String()
	}
	return r
}

func save(r *common.Report, cfg common.Config) error {
	if cfg.Output == "" {
		return nil
	}
	return r.Save(cfg.Output, cfg.Format)
}

// CloseInto closes c and, when *err is nil, stores Close's error there:
// deferred by a function with a named error result.
func CloseInto(c io.Closer, err *error) {
	if cerr := c.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}

func bwServer(ctx context.Context, spec BWSpec, cfg common.Config, stdout, stderr io.Writer) (err error) {
	// The server's QP never sends: AUTO handler, valid DBR, as the reference.
	e, err := Open(spec.Prog, cfg, QPOptions{Handler: gpunetio.NICHandlerAuto, NoKernel: true}, stderr)
	if err != nil {
		return err
	}
	defer CloseInto(e, &err)

	bufs := make([]*Buffer, len(common.BWSizes))
	remote := make([]verbs.Region, len(common.BWSizes))
	for i, size := range common.BWSizes {
		if bufs[i], err = e.HostBuffer(common.BWThreads*size, RemoteWritable); err != nil {
			return err
		}
		remote[i] = bufs[i].MR.Region()
	}

	l, err := common.Listen(cfg.Port)
	if err != nil {
		return fmt.Errorf("failed to set up the OOB connection with the remote peer: %w", err)
	}
	defer l.Close()
	fmt.Fprintf(stderr, "%s server: waiting for a client on port %d\n", spec.Prog.Name, cfg.Port)
	acceptTimeout := time.Duration(0)
	if cfg.NonInteractive {
		acceptTimeout = cfg.Timeout
	}
	conn, err := common.Accept(ctx, l, acceptTimeout)
	if err != nil {
		return fmt.Errorf("failed to set up the OOB connection with the remote peer: %w", err)
	}
	defer conn.Close()
	if _, err := e.Link(conn, remote, 0, cfg.Timeout); err != nil {
		return err
	}

	done, err := serverWait(ctx, cfg, conn, stderr, len(common.BWSizes))
	interrupted := errors.Is(err, common.ErrInterrupted)
	if err != nil && !interrupted {
		return err
	}

	r := report(spec.Prog, cfg, e)
	r.ErrorCQEs = done.ErrorCQEs
	views := make([][]byte, len(bufs))
	for i, b := range bufs {
		views[i] = b.Host[:common.BWThreads*common.BWSizes[i]]
	}
	verr := common.Validate(views)
	if verr != nil {
		r.Validation = verr.Error()
		fmt.Fprintln(stdout, verr.Error())
	} else {
		r.Validation = common.ValidationOK
		fmt.Fprintln(stdout, common.ValidationOK)
	}
	if serr := save(r, cfg); serr != nil {
		return serr
	}
	switch {
	case verr != nil:
		return verr
	case done.ErrorCQEs > 0:
		return fmt.Errorf("the client reported %d error completions", done.ErrorCQEs)
	case interrupted && cfg.NonInteractive:
		return err
	}
	return nil
}

// serverWait waits for the end of the client's run: in non-interactive mode
// for its completion record (or EOF), otherwise for Ctrl+C (reporting the
// completion record when it comes). Interruption returns an error matching
// common.ErrInterrupted.
func serverWait(ctx context.Context, cfg common.Config, conn net.Conn, stderr io.Writer, sizes int) (common.Done, error) {
	// Every size takes two launches, each bounded by the client's timeout.
	bound := cfg.Timeout * time.Duration(2*sizes+2)
	if cfg.NonInteractive {
		return common.WaitDone(ctx, conn, bound)
	}
	fmt.Fprintf(stderr, "Press Ctrl+C after the client finished to validate the data and exit\n")
	type res struct {
		d   common.Done
		err error
	}
	ch := make(chan res, 1)
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		d, err := common.WaitDone(waitCtx, conn, 0)
		ch <- res{d, err}
	}()
	var d common.Done
	select {
	case r := <-ch:
		if r.err == nil {
			d = r.d
			fmt.Fprintf(stderr, "The client finished (%d error completions); press Ctrl+C to validate and exit\n", d.ErrorCQEs)
		}
		<-ctx.Done()
	case <-ctx.Done():
		cancel()
		<-ch
	}
	return d, fmt.Errorf("server: %w", context.Cause(ctx))
}

func bwClient(ctx context.Context, spec BWSpec, cfg common.Config, stdout, stderr io.Writer) (err error) {
	e, err := Open(spec.Prog, cfg, QPOptions{Handler: cfg.Handler}, stderr)
	if err != nil {
		return err
	}
	defer CloseInto(e, &err)

	bufs := make([]*Buffer, len(common.BWSizes))
	for i, size := range common.BWSizes {
		if bufs[i], err = e.GPUBuffer(common.BWThreads*size, byte(i+1), LocalOnly); err != nil {
			return err
		}
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
	peer, err := e.Link(conn, nil, len(common.BWSizes), cfg.Timeout)
	if err != nil {
		return err
	}
	t, err := e.StartTimer(stderr)
	if err != nil {
		return err
	}
	defer CloseInto(t, &err)
	fmt.Fprintln(stderr, spec.Describe(cfg))

	r := report(spec.Prog, cfg, e)
	common.WriteBWHeader(stdout)
	for i, size := range common.BWSizes {
		l := &BWLaunch{Cfg: cfg, Env: e, Iters: cfg.Iters, Size: size, Local: bufs[i], Remote: peer.Regions[i], Errs: errs.Ptr()}
		d, err := t.Measure(ctx, cfg.Timeout, func(s *cuda.Stream, _ bool) error {
			l.Stream = s
			return spec.Launch(l)
		})
		if err != nil {
			return fmt.Errorf("message size %d: %w", size, err)
		}
		row := common.NewBWRow(size, cfg.Iters, d)
		common.WriteBWRow(stdout, row)
		r.BW = append(r.BW, row)
	}
	n, err := ReadCounter(errs)
	if err != nil {
		return err
	}
	r.ErrorCQEs = n
	if err := common.SendDone(conn, common.Done{Reported: true, ErrorCQEs: n}, cfg.Timeout); err != nil {
		return err
	}
	if err := save(r, cfg); err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("the kernels saw %d error completions", n)
	}
	return nil
}
