// Command verbs_wait_cq_wr chains two queue pairs with a wait-on-CQ work
// request, in one process on one device, without a GPU (the Go port of the
// DOCA Verbs "wait CQ WR" sample): QP A and QP B are connected to each
// other on the same device; B (a core-direct master QP) posts a WAIT on A's
// send CQ and then a SEND, and the NIC holds B's SEND until A's SEND has
// completed, with no host step in between. Each iteration checks that
// order: nothing of B completes before A is posted, B's WAIT completes
// (opcode DRIVER1) before its SEND, and A's message reaches B before B's
// reaches A.
//
// Usage: verbs_wait_cq_wr -d <device> [-gid index] [-s size] [-n iterations]
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/gdaki/gpunetio/verbs"
)

type config struct {
	device  string
	gid     uint
	size    uint
	iters   uint
	timeout time.Duration
}

func parse(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("verbs_wait_cq_wr", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.device, "d", "", "RDMA device name (prefix match; emu0 for an emulated NIC; default the first device)")
	fs.UintVar(&c.gid, "gid", 0, "GID index")
	fs.UintVar(&c.size, "s", 64, "message size in bytes (at least 8)")
	fs.UintVar(&c.iters, "n", 10, "number of iterations")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "how long to wait for a completion")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	case c.size < 8 || c.size > 1<<20:
		return nil, fmt.Errorf("-s %d: want 8 to 1 MiB", c.size)
	case c.iters == 0:
		return nil, errors.New("-n 0: want at least one iteration")
	case c.gid > 255:
		return nil, fmt.Errorf("-gid %d: want 0 to 255", c.gid)
	}
	return c, nil
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "verbs_wait_cq_wr:", err)
		}
		os.Exit(1)
	}
}

// side is one QP with its send and receive CQs.
type side struct {
	name     string
	scq, rcq *verbs.CQ
	qp       *verbs.QP
}

// sample is everything the program opens, closed by close in reverse.
type sample struct {
	ctx    *verbs.Context
	pd     *verbs.PD
	buf    []byte
	mr     *verbs.MR
	a, b   side
	closer []func() error
}

func (s *sample) close() error {
	var errs []error
	for i := len(s.closer) - 1; i >= 0; i-- {
		errs = append(errs, s.closer[i]())
	}
	return errors.Join(errs...)
}

func open(c *config) (_ *sample, err error) {
	s := &sample{}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.close())
		}
	}()
	if s.ctx, err = common.OpenDevice(c.device); err != nil {
		return nil, fmt.Errorf("open RDMA device %q: %w", c.device, err)
	}
	s.closer = append(s.closer, s.ctx.Close)
	if s.pd, err = s.ctx.AllocPD(); err != nil {
		return nil, err
	}
	s.closer = append(s.closer, s.pd.Close)
	dev, err := verbs.OpenDev(s.pd) // the device object CQs and QPs are made on
	if err != nil {
		return nil, err
	}
	s.closer = append(s.closer, dev.Close)
	// Four slots: A's message, B's message, and where each lands.
	n := 4 * int(c.size)
	if s.buf, err = syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE); err != nil {
		return nil, err
	}
	s.closer = append(s.closer, func() error { return syscall.Munmap(s.buf) })
	if s.mr, err = s.pd.RegMR(uintptr(unsafe.Pointer(&s.buf[0])), uint64(n), verbs.AccessLocalWrite); err != nil {
		return nil, err
	}
	s.closer = append(s.closer, s.mr.Close)
	for _, x := range []struct {
		sd     *side
		name   string
		master bool
	}{{&s.a, "A", false}, {&s.b, "B", true}} {
		x.sd.name = x.name
		if x.sd.scq, err = dev.NewCQ(verbs.CQConfig{Size: 16}); err != nil {
			return nil, err
		}
		s.closer = append(s.closer, x.sd.scq.Close)
		if x.sd.rcq, err = dev.NewCQ(verbs.CQConfig{Size: 16}); err != nil {
			return nil, err
		}
		s.closer = append(s.closer, x.sd.rcq.Close)
		// B posts WAIT WQEs: it must be a core-direct master.
		if x.sd.qp, err = dev.NewQP(verbs.QPConfig{PD: s.pd, SendCQ: x.sd.scq, RecvCQ: x.sd.rcq,
			SQWR: 8, RQWR: 8, SendMaxSGE: 1, RecvMaxSGE: 1, CoreDirectMaster: x.master}); err != nil {
			return nil, err
		}
		s.closer = append(s.closer, x.sd.qp.Close)
	}
	la, err := s.a.qp.LocalEndpoint(1, uint32(c.gid))
	if err != nil {
		return nil, err
	}
	lb, err := s.b.qp.LocalEndpoint(1, uint32(c.gid))
	if err != nil {
		return nil, err
	}
	if err := s.a.qp.ConnectRC(la, lb.Endpoint, nil); err != nil {
		return nil, err
	}
	if err := s.b.qp.ConnectRC(lb, la.Endpoint, nil); err != nil {
		return nil, err
	}
	return s, nil
}

// The buffer's slots.
const (
	slotSendA = iota // A's outgoing message
	slotSendB        // B's outgoing message
	slotRecvB        // where A's message lands (B's receive)
	slotRecvA        // where B's message lands (A's receive)
)

func (s *sample) slot(c *config, k int) []byte {
	return s.buf[k*int(c.size) : (k+1)*int(c.size)]
}

func (s *sample) sge(c *config, k int) verbs.SGE {
	b := s.slot(c, k)
	return verbs.SGE{Addr: uint64(uintptr(unsafe.Pointer(&b[0]))), Length: uint32(c.size), LKey: s.mr.LKey()}
}

// wait polls cq for one completion and checks it.
func wait(ctx context.Context, cq *verbs.CQ, want verbs.WCOpcode, what string, timeout time.Duration) (verbs.WC, error) {
	var wc [1]verbs.WC
	deadline := time.Now().Add(timeout)
	for {
		if err := ctx.Err(); err != nil {
			return verbs.WC{}, err
		}
		n, err := cq.PollWait(wc[:], 1, 50*time.Millisecond)
		if err != nil && !errors.Is(err, verbs.ErrTimeOut) {
			return verbs.WC{}, fmt.Errorf("%s: %w", what, err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			return verbs.WC{}, fmt.Errorf("%s: no completion after %v", what, timeout)
		}
	}
	if err := wc[0].Err(); err != nil {
		return verbs.WC{}, fmt.Errorf("%s: %w", what, err)
	}
	if wc[0].Opcode != want {
		return verbs.WC{}, fmt.Errorf("%s: completion %v, want %v", what, wc[0].Opcode, want)
	}
	return wc[0], nil
}

func run(args []string, stdout, stderr io.Writer) (err error) {
	c, err := parse(args, stderr)
	if err != nil {
		return err
	}
	ctx, stop := common.Interrupts(context.Background(), stderr)
	defer stop()
	s, err := open(c)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := s.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	fmt.Fprintf(stdout, "device %s: QP A 0x%x and QP B 0x%x (core-direct master) connected to each other\n",
		s.ctx.Name(), s.a.qp.QPN(), s.b.qp.QPN())
	for i := uint(0); i < c.iters; i++ {
		if err := s.iteration(ctx, c, i, stdout); err != nil {
			return fmt.Errorf("iteration %d: %w", i, err)
		}
	}
	fmt.Fprintf(stdout, "%d iterations: QP B's SEND waited for QP A's completion every time\n", c.iters)
	fmt.Fprintln(stdout, "sample finished successfully")
	return nil
}

// iteration runs one chain: B waits for A's send CQ, then sends.
func (s *sample) iteration(ctx context.Context, c *config, i uint, stdout io.Writer) error {
	for _, k := range []int{slotSendA, slotSendB, slotRecvA, slotRecvB} {
		clear(s.slot(c, k))
	}
	binary.LittleEndian.PutUint64(s.slot(c, slotSendA), uint64(2*i))
	binary.LittleEndian.PutUint64(s.slot(c, slotSendB), uint64(2*i+1))
	if err := s.a.qp.PostRecv(verbs.RecvWR{WRID: uint64(i), SGL: []verbs.SGE{s.sge(c, slotRecvA)}}); err != nil {
		return err
	}
	if err := s.b.qp.PostRecv(verbs.RecvWR{WRID: uint64(i), SGL: []verbs.SGE{s.sge(c, slotRecvB)}}); err != nil {
		return err
	}

	// B: WAIT for the next completion of A's send CQ, then SEND.
	pi, err := s.a.scq.ProducerIndex()
	if err != nil {
		return err
	}
	var waitWR verbs.SendWR
	if err := verbs.SetWaitCQPIWR(s.a.scq, pi, &waitWR); err != nil {
		return err
	}
	waitWR.WRID, waitWR.Signaled = uint64(i), true
	sendB := verbs.SendWR{WRID: uint64(i), Opcode: verbs.WRSend, Signaled: true, SGL: []verbs.SGE{s.sge(c, slotSendB)}}
	if err := s.b.qp.PostSend(waitWR, sendB); err != nil {
		return err
	}
	// Nothing releases B yet: no completion of B, no message at A.
	var none [1]verbs.WC
	if n, err := s.b.scq.Poll(none[:]); err != nil || n != 0 {
		return fmt.Errorf("queue pair B completed %d work requests before A was posted (%v)", n, err)
	}
	if n, err := s.a.rcq.Poll(none[:]); err != nil || n != 0 {
		return fmt.Errorf("queue pair A received %d messages before it sent (%v)", n, err)
	}

	// A: SEND. Its completion releases B's WAIT.
	sendA := verbs.SendWR{WRID: uint64(i), Opcode: verbs.WRSend, Signaled: true, SGL: []verbs.SGE{s.sge(c, slotSendA)}}
	if err := s.a.qp.PostSend(sendA); err != nil {
		return err
	}
	if _, err := wait(ctx, s.b.rcq, verbs.WCRecv, "B receives A's message", c.timeout); err != nil {
		return err
	}
	if _, err := wait(ctx, s.a.scq, verbs.WCSend, "A's SEND", c.timeout); err != nil {
		return err
	}
	if _, err := wait(ctx, s.b.scq, verbs.WCWait, "B's WAIT", c.timeout); err != nil {
		return err
	}
	if _, err := wait(ctx, s.b.scq, verbs.WCSend, "B's SEND", c.timeout); err != nil {
		return err
	}
	if _, err := wait(ctx, s.a.rcq, verbs.WCRecv, "A receives B's message", c.timeout); err != nil {
		return err
	}
	if got := binary.LittleEndian.Uint64(s.slot(c, slotRecvB)); got != uint64(2*i) {
		return fmt.Errorf("queue pair B received %d, want %d", got, 2*i)
	}
	if got := binary.LittleEndian.Uint64(s.slot(c, slotRecvA)); got != uint64(2*i+1) {
		return fmt.Errorf("queue pair A received %d, want %d", got, 2*i+1)
	}
	fmt.Fprintf(stdout, "iteration %d: QP B's WAIT on CQ 0x%x index %d released after QP A's SEND completed; B's SEND followed\n",
		i, s.a.scq.CQN(), pi)
	return nil
}
