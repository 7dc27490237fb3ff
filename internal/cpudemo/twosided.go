package main

// The CPU-driven counterpart of examples/twosided_bw (-twosided): CPU
// threads run the device API's thread-scope send, recv and recv_wait (the
// two-sided header compiled as host C++, internal/devhost) on both sides of
// one RC connection. In each round of 512 slots the server posts a receive
// per slot, tells the client with an RDMA write of a flag that they are
// posted, and waits for every receive; the client waits for the flag and
// sends a message per slot, as the two kernels do. The server's receive
// queue and receive CQ are the high-level QP's, in the host GPU's memory,
// exported with the receive CQ.

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/internal/devhost"
	"github.com/gdaki/gpunetio/verbs"
)

// respErr is the opcode of a responder error CQE (op_own >> 4).
const respErr = 14

// recvBuffer is one message size's memory on both sides: the server's
// receive buffers and the client's source, both host GPU memory.
type recvBuffer struct {
	size     uint64
	dst, src *gpunetio.Mem
	dMR, sMR *verbs.MR
}

func runTwoSided(cfg config, stdout io.Writer) (err error) {
	var cl closers
	defer cl.run(&err)
	p, err := openPair(cfg, gpunetio.NICHandlerAuto, slots, 0, &cl)
	if err != nil {
		return err
	}
	srv, cli := p.srv, p.cli
	var bufs []*recvBuffer
	for i, size := range sizes {
		if size > cfg.maxSize {
			break
		}
		b := &recvBuffer{size: size}
		if b.dst, b.dMR, err = p.alloc(srv.pd, slots*size, 0, verbs.AccessLocalWrite|verbs.AccessRelaxedOrder, &cl); err != nil {
			return err
		}
		if b.src, b.sMR, err = p.alloc(cli.pd, slots*size, byte(i+1), verbs.AccessLocalWrite|verbs.AccessRelaxedOrder, &cl); err != nil {
			return err
		}
		bufs = append(bufs, b)
	}
	flag, flagMR, err := p.alloc(cli.pd, 8, 0, verbs.AccessLocalWrite|verbs.AccessRemoteWrite|verbs.AccessRelaxedOrder, &cl)
	if err != nil {
		return err
	}

	// The client offers its flag word; the server offers nothing.
	if err := p.connect(cfg, nil, []verbs.Region{flagMR.Region()}, nil, &cl); err != nil {
		return err
	}
	sq, cq := p.sq, p.cq
	srvLink := p.srvLink
	fb, err := flag.HostBytes()
	if err != nil {
		return err
	}
	flagWord := (*uint64)(unsafe.Pointer(&fb[0]))

	fmt.Fprintf(stdout, "CPU-driven twosided_bw (no GPU): %d CPU threads a side run the device API's thread-scope send, recv and recv_wait\n", cfg.threads)
	fmt.Fprintf(stdout, "(cuda/include compiled as host C++) on QPs exported by gpunetio; client %s -> server %s, emulated NICs,\n", cfg.client, cfg.server)
	fmt.Fprintf(stdout, "NIC handler %s (requested %s), %d messages per size over %d slots. Figures are CPU and emulator figures.\n",
		cli.qp.NICHandler(), cfg.handler, cfg.iters, slots)
	line := strings.Repeat("-", 84)
	fmt.Fprintf(stdout, "%s\n #bytes     #iterations    BW average[Gbps]   MsgRate[Mpps]    Wall time[ms]\n%s\n", line, line)
	rounds := uint64(cfg.iters / slots)
	var msgs, bytes uint64
	var total time.Duration
	launch := 0
	for _, b := range bufs {
		var d time.Duration
		for rep := 0; rep < 2; rep++ { // warm-up, measured: as the kernels' two launches
			base := uint64(launch) * rounds
			launch++
			var serr, cerr error
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				serr = recvAll(sq, cfg, b, srvLink.remote.Regions[0], base)
			}()
			go func() {
				defer wg.Done()
				d, cerr = sendAll(cq, cfg, b, flagWord, base)
			}()
			wg.Wait()
			if err := errors.Join(serr, cerr); err != nil {
				return fmt.Errorf("message size %d: %w", b.size, err)
			}
		}
		ms := float64(d) / float64(time.Millisecond)
		fmt.Fprintf(stdout, " %-7d    \t%-7d           %-7.6f            %-7.6f            %-7.6f\n", b.size, cfg.iters,
			float64(b.size)*float64(cfg.iters)/ms*1000*8/1e9, float64(cfg.iters)/ms*1000/1e6, ms)
		msgs += uint64(cfg.iters)
		bytes += uint64(cfg.iters) * b.size
		total += d
	}
	for i, b := range bufs {
		hb, err := b.dst.HostBytes()
		if err != nil {
			return err
		}
		for pos, v := range hb[:slots*b.size] {
			if v != byte(i+1) {
				return &validationError{buffer: i, pos: pos, value: v}
			}
		}
	}
	fmt.Fprintln(stdout, "Validation successful! Data received correctly from client.")
	ms := float64(total) / float64(time.Millisecond)
	fmt.Fprintf(stdout, "CPU-driven demo: %d SENDs into posted receives, %d bytes in %.3f ms measured (%.3f Mpps, %.3f Gbps; as many again in warm-ups), 0 error completions, every byte of %d buffers checked\n",
		msgs, bytes, ms, float64(msgs)/ms/1e3, float64(bytes)*8/ms/1e6, len(bufs))
	return nil
}

// openSideRQ is openSide with a receive queue of rq WQEs (0: none).
func openSideRQ(g *gpunetio.GPU, name string, h gpunetio.NICHandler, rq uint16, cl *closers) (*side, error) {
	s := &side{}
	var err error
	if s.dev, err = verbs.OpenDevice(name); err != nil {
		return nil, err
	}
	cl.add(s.dev.Close)
	if s.pd, err = s.dev.AllocPD(); err != nil {
		return nil, err
	}
	cl.add(s.pd.Close)
	if s.qp, err = gpunetio.NewQPHL(gpunetio.QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 2048, NICHandler: h, RQWQEs: rq}); err != nil {
		return nil, err
	}
	cl.add(s.qp.Close)
	return s, nil
}

// pair is the two sides of a two-sided run on one host GPU: the server on
// cfg.server, the client on cfg.client, each a high-level QP exported with
// its receive queue and receive CQ; sq and cq are their device QPs once
// connected.
type pair struct {
	g                *gpunetio.GPU
	srv, cli         *side
	srvLink, cliLink link
	sq, cq           *devhost.QP
}

// openPair opens both sides: the server's QP with NIC handler srvH and a
// receive queue of srvRQ WQEs, the client's with cfg.handler and cliRQ (0:
// none).
func openPair(cfg config, srvH gpunetio.NICHandler, srvRQ, cliRQ uint16, cl *closers) (*pair, error) {
	p := &pair{g: gpunetio.NewHostGPU()}
	cl.add(p.g.Close)
	var err error
	if p.srv, err = openSideRQ(p.g, cfg.server, srvH, srvRQ, cl); err != nil {
		return nil, fmt.Errorf("server on %s: %w", cfg.server, err)
	}
	if p.cli, err = openSideRQ(p.g, cfg.client, cfg.handler, cliRQ, cl); err != nil {
		return nil, fmt.Errorf("client on %s: %w", cfg.client, err)
	}
	return p, nil
}

// alloc allocates n bytes of the host GPU's memory filled with fill and
// registers them on pd.
func (p *pair) alloc(pd *verbs.PD, n uint64, fill byte, acc verbs.AccessFlags, cl *closers) (*gpunetio.Mem, *verbs.MR, error) {
	m, err := p.g.MemAlloc(uintptr(n), 0, gpunetio.MemCPUGPU)
	if err != nil {
		return nil, nil, err
	}
	cl.add(m.Free)
	hb, err := m.HostBytes()
	if err != nil {
		return nil, nil, err
	}
	for j := range hb {
		hb[j] = fill
	}
	mr, err := m.RegMR(pd, acc, gpunetio.MemRegDefault)
	if err != nil {
		return nil, nil, err
	}
	cl.add(mr.Close)
	return m, mr, nil
}

// connect exchanges the endpoints (each side offering its regions),
// connects both QPs with opts (nil: ConnectRC's defaults) and makes their
// device QPs.
func (p *pair) connect(cfg config, srvRegions, cliRegions []verbs.Region, opts *verbs.ConnectOptions, cl *closers) error {
	var err error
	if p.srvLink, p.cliLink, err = exchangeRegions(p.srv, p.cli, srvRegions, cliRegions, cfg.timeout); err != nil {
		return err
	}
	if err := p.srv.qp.ConnectRC(p.srvLink.local, p.srvLink.remote, opts); err != nil {
		return fmt.Errorf("connect the server QP: %w", err)
	}
	if err := p.cli.qp.ConnectRC(p.cliLink.local, p.cliLink.remote, opts); err != nil {
		return fmt.Errorf("connect the client QP: %w", err)
	}
	if p.sq, err = deviceQP(p.srv, cl); err != nil {
		return err
	}
	p.cq, err = deviceQP(p.cli, cl)
	return err
}

// deviceQP starts the CPU proxy where the side's handler needs one and
// returns its device QP (host memory with the host GPU).
func deviceQP(s *side, cl *closers) (*devhost.QP, error) {
	gq := s.qp.GPUQP()
	if gq.CPUAssisted() {
		svc, err := gpunetio.NewService()
		if err != nil {
			return nil, err
		}
		cl.add(svc.Close)
		if err := svc.Monitor(gq); err != nil {
			return nil, err
		}
	}
	p, err := gq.DeviceQP()
	if err != nil {
		return nil, err
	}
	return devhost.FromPointer(*(*unsafe.Pointer)(unsafe.Pointer(&p))) // host memory: never moves
}

// recvAll is the server's launch: per round, every slot's receive is
// posted (by cfg.threads threads), the flag base+r+1 written to the
// client's flag word, and every receive waited for and checked.
func recvAll(q *devhost.QP, cfg config, b *recvBuffer, flag verbs.Region, base uint64) error {
	mode := devhost.Mode{Sharing: devhost.SharingGPU, Handler: devhost.HandlerAuto}
	lkey := gpunetio.DeviceKey(b.dMR.LKey())
	fkey := gpunetio.DeviceKey(flag.RKey)
	rounds := cfg.iters / slots
	tickets := make([]uint64, slots)
	parallel := func(f func(t int) error) error {
		var wg sync.WaitGroup
		errs := make([]error, cfg.threads)
		for th := 0; th < cfg.threads; th++ {
			wg.Add(1)
			go func(th int) {
				defer wg.Done()
				for t := th; t < slots; t += cfg.threads {
					if err := f(t); err != nil {
						errs[th] = err
						return
					}
				}
			}(th)
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	for r := 0; r < rounds; r++ {
		if err := parallel(func(t int) error {
			tk, err := q.Recv(devhost.Addr{Addr: uint64(b.dst.Dev) + uint64(t)*b.size, Key: lkey}, b.size, mode)
			tickets[t] = tk
			return err
		}); err != nil {
			return fmt.Errorf("post receives: %w", err)
		}
		tk, err := q.P(devhost.Addr{Addr: flag.Addr, Key: fkey}, base+uint64(r)+1, 8, mode)
		if err != nil {
			return fmt.Errorf("flag write: %w", err)
		}
		if err := q.Wait(tk, devhost.SharingGPU, cfg.timeout); err != nil {
			return fmt.Errorf("flag write: %w", err)
		}
		if err := parallel(func(t int) error {
			c, err := q.RecvWait(devhost.Addr{}, tickets[t], devhost.RecvOptions{}, mode, cfg.timeout)
			switch {
			case err != nil:
				return fmt.Errorf("receive %d: %w", tickets[t], err)
			case c.Opcode() == respErr:
				return fmt.Errorf("receive %d: error CQE, syndrome %#x", tickets[t], c.Syndrome())
			case uint64(c.ByteCount()) != b.size:
				return fmt.Errorf("receive %d: %d bytes, want %d", tickets[t], c.ByteCount(), b.size)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// sendAll is the client's launch: per round, wait for the server's flag,
// then send every slot's message (cfg.threads threads) and wait for the
// sends. It returns the time from the first flag to the last completion.
func sendAll(q *devhost.QP, cfg config, b *recvBuffer, flag *uint64, base uint64) (time.Duration, error) {
	mode := devhost.Mode{Sharing: devhost.SharingGPU, Handler: devhost.HandlerAuto}
	lkey := gpunetio.DeviceKey(b.sMR.LKey())
	rounds := cfg.iters / slots
	var start time.Time
	for r := 0; r < rounds; r++ {
		deadline := time.Now().Add(cfg.timeout)
		for atomic.LoadUint64(flag) < base+uint64(r)+1 {
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("round %d: the server's flag never came (%d, want %d)", r, atomic.LoadUint64(flag), base+uint64(r)+1)
			}
			runtime.Gosched()
		}
		if r == 0 {
			start = time.Now()
		}
		var wg sync.WaitGroup
		errs := make([]error, cfg.threads)
		for th := 0; th < cfg.threads; th++ {
			wg.Add(1)
			go func(th int) {
				defer wg.Done()
				var tickets []uint64
				for t := th; t < slots; t += cfg.threads {
					tk, err := q.Send(devhost.Addr{Addr: uint64(b.src.Dev) + uint64(t)*b.size, Key: lkey}, b.size, mode)
					if err != nil {
						errs[th] = err
						return
					}
					tickets = append(tickets, tk)
				}
				for _, tk := range tickets {
					if err := q.Wait(tk, devhost.SharingGPU, cfg.timeout); err != nil {
						errs[th] = fmt.Errorf("send %d: %w", tk, err)
						return
					}
				}
			}(th)
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}
