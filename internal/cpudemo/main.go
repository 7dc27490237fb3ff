// Command cpudemo is `make demo` on a machine without a GPU: the put_bw
// exchange with CPU threads in place of GPU threads.
//
// A client QP on emu1 puts messages of 16 sizes into a server's host buffers
// on emu0, then the server checks every byte, as examples/put_bw does. The
// puts are not posted by the verbs host data path: CPU threads run the
// device API's thread-scope doca_gpu_dev_verbs_put and poll_cq_at, the code
// of cuda/include compiled as host C++ (internal/devhost), on the QP that
// gpunetio exported (to a host-memory GPU, gpunetio.NewHostGPU, so its rings
// and device QP are host memory). The endpoints travel over a loopback TCP
// connection in the DOCA examples' byte format and the QPs connect with
// ConnectRC. Everything else is the library as a GPU program uses it.
//
// The figures measure the CPU, the host-compiled device code and the
// emulated NIC, not a GPU. Like the kernel, -i puts per size are spread over
// 512 slots (the kernel's 512 threads) and slot t always writes bytes
// [t*size, (t+1)*size) of its buffer; -threads CPU threads share the slots.
//
// With -twosided it runs examples/twosided_bw's exchange instead
// (twosided.go): the server's threads post receives into its high-level
// QP's receive queue and signal with an RDMA write, the client's threads
// send into them, both with the two-sided device API. With -twosided-lat
// it runs examples/twosided_lat's ping-pong (twosided_lat.go): one thread a
// side, -i round trips per message size (any positive count), the table of
// one-way latencies, every message checked by the server.
//
// Usage: cpudemo [-i 2048] [-threads 8] [-p 0|1|2] [-max-size 65536]
// [-server emu0] [-client emu1] [-timeout 30s] [-twosided | -twosided-lat].
// The exit status is 0 when every byte arrived with no error completion, 1
// otherwise.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/internal/devhost"
	"github.com/gdaki/gpunetio/verbs"
)

// slots is the number of GPU threads of the put_bw kernel whose memory
// layout the demo keeps.
const slots = 512

// sizes are put_bw's message sizes.
var sizes = []uint64{1, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576}

type config struct {
	iters, threads int
	handler        gpunetio.NICHandler
	maxSize        uint64
	server, client string
	timeout        time.Duration
	// rkeyXor corrupts the rkey the client uses (tests: error completions).
	rkeyXor uint32
	// twosided runs twosided_bw's exchange (SEND into posted receives)
	// instead of put_bw's.
	twosided bool
	// twosidedLat runs twosided_lat's ping-pong instead of put_bw's.
	twosidedLat bool
	// latCorrupt makes the client flip a byte of message latCorrupt
	// (tests: the server's check); latNoPrepost makes the server give the
	// client its go without posting its first receives (tests: a SEND
	// without its receive fails the run).
	latCorrupt   uint64
	latNoPrepost bool
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		os.Exit(1)
	}
	r := run
	switch {
	case cfg.twosided:
		r = runTwoSided
	case cfg.twosidedLat:
		r = runTwoSidedLat
	}
	if err := r(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cpudemo:", err)
		fmt.Println("CPU-driven demo FAILED")
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{}
	fs := flag.NewFlagSet("cpudemo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var handler string
	fs.IntVar(&cfg.iters, "i", 2048, "puts per message size, a multiple of 512 (-twosided-lat: round trips, any positive count)")
	fs.IntVar(&cfg.threads, "threads", 8, "CPU threads that post (1..512)")
	fs.StringVar(&handler, "p", "0", "NIC handler of the client QP: 0 AUTO, 1 CPU_PROXY, 2 GPU_SM_DB")
	fs.Uint64Var(&cfg.maxSize, "max-size", 65536, "largest message size (put_bw goes to 1048576)")
	fs.StringVar(&cfg.server, "server", "emu0", "RDMA device of the server")
	fs.StringVar(&cfg.client, "client", "emu1", "RDMA device of the client")
	fs.DurationVar(&cfg.timeout, "timeout", 30*time.Second, "bound on every wait")
	fs.BoolVar(&cfg.twosided, "twosided", false, "run twosided_bw's exchange: the server posts receives, the client sends")
	fs.BoolVar(&cfg.twosidedLat, "twosided-lat", false, "run twosided_lat's ping-pong: SEND and reply, one-way latency per size")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	var err error
	switch {
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case cfg.twosided && cfg.twosidedLat:
		err = fmt.Errorf("-twosided and -twosided-lat: choose one")
	case cfg.twosidedLat && cfg.iters <= 0:
		err = fmt.Errorf("-i %d: must be positive", cfg.iters)
	case !cfg.twosidedLat && (cfg.iters <= 0 || cfg.iters%slots != 0):
		err = fmt.Errorf("-i %d: must be a positive multiple of %d", cfg.iters, slots)
	case cfg.threads < 1 || cfg.threads > slots:
		err = fmt.Errorf("-threads %d: must be in 1..%d", cfg.threads, slots)
	case cfg.maxSize < 1 || cfg.maxSize > sizes[len(sizes)-1]:
		err = fmt.Errorf("-max-size %d: must be in 1..%d", cfg.maxSize, sizes[len(sizes)-1])
	case cfg.timeout <= 0:
		err = fmt.Errorf("-timeout %v: must be positive", cfg.timeout)
	}
	if err == nil {
		cfg.handler, err = gpunetio.ParseNICHandler(handler)
		if err == nil && cfg.handler != gpunetio.NICHandlerAuto && cfg.handler != gpunetio.NICHandlerCPUProxy && cfg.handler != gpunetio.NICHandlerGPUSMDB {
			err = fmt.Errorf("-p %s: put_bw supports AUTO, CPU_PROXY and GPU_SM_DB", cfg.handler)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "cpudemo:", err)
		fs.Usage()
	}
	return cfg, err
}

// side is one emulated NIC with a PD and a high-level QP.
type side struct {
	dev *verbs.Context
	pd  *verbs.PD
	qp  *gpunetio.QPHL
}

func openSide(g *gpunetio.GPU, name string, h gpunetio.NICHandler, cl *closers) (*side, error) {
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
	if s.qp, err = gpunetio.NewQPHL(gpunetio.QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 2048, NICHandler: h}); err != nil {
		return nil, err
	}
	cl.add(s.qp.Close)
	return s, nil
}

// closers releases what was made, last first, keeping the first error.
type closers []func() error

func (c *closers) add(f func() error) { *c = append(*c, f) }

func (c *closers) run(err *error) {
	for i := len(*c) - 1; i >= 0; i-- {
		if cerr := (*c)[i](); cerr != nil && *err == nil {
			*err = cerr
		}
	}
}

// buffer is one message size's memory: the server's target (mmap'd host
// memory, as the reference's calloc) and the client's source (the host GPU's
// memory, where a GPU program has its buffers).
type buffer struct {
	size   uint64
	target []byte
	tMR    *verbs.MR
	src    *gpunetio.Mem
	sMR    *verbs.MR
}

func run(cfg config, stdout io.Writer) (err error) {
	var cl closers
	defer cl.run(&err)
	g := gpunetio.NewHostGPU()
	cl.add(g.Close)
	srv, err := openSide(g, cfg.server, gpunetio.NICHandlerAuto, &cl)
	if err != nil {
		return fmt.Errorf("server on %s: %w", cfg.server, err)
	}
	cli, err := openSide(g, cfg.client, cfg.handler, &cl)
	if err != nil {
		return fmt.Errorf("client on %s: %w", cfg.client, err)
	}

	var bufs []*buffer
	for i, size := range sizes {
		if size > cfg.maxSize {
			break
		}
		b := &buffer{size: size}
		n := int(slots * size)
		if b.target, err = syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE); err != nil {
			return fmt.Errorf("map %d bytes: %w", n, err)
		}
		target := b.target
		cl.add(func() error { return syscall.Munmap(target) })
		if b.tMR, err = srv.pd.RegMR(uintptr(unsafe.Pointer(&b.target[0])), uint64(n), verbs.AccessLocalWrite|verbs.AccessRemoteWrite|verbs.AccessRelaxedOrder); err != nil {
			return err
		}
		cl.add(b.tMR.Close)
		if b.src, err = g.MemAlloc(uintptr(n), 0, gpunetio.MemCPUGPU); err != nil {
			return err
		}
		cl.add(b.src.Free)
		hb, err := b.src.HostBytes()
		if err != nil {
			return err
		}
		for j := range hb {
			hb[j] = byte(i + 1)
		}
		if b.sMR, err = b.src.RegMR(cli.pd, verbs.AccessLocalWrite|verbs.AccessRelaxedOrder, gpunetio.MemRegDefault); err != nil {
			return err
		}
		cl.add(b.sMR.Close)
		bufs = append(bufs, b)
	}

	srvLink, cliLink, err := exchange(srv, cli, bufs, cfg.timeout)
	if err != nil {
		return err
	}
	if err := srv.qp.ConnectRC(srvLink.local, srvLink.remote, nil); err != nil {
		return fmt.Errorf("connect the server QP: %w", err)
	}
	if err := cli.qp.ConnectRC(cliLink.local, cliLink.remote, nil); err != nil {
		return fmt.Errorf("connect the client QP: %w", err)
	}
	gq := cli.qp.GPUQP()
	if gq.CPUAssisted() {
		svc, err := gpunetio.NewService()
		if err != nil {
			return err
		}
		cl.add(svc.Close)
		if err := svc.Monitor(gq); err != nil {
			return err
		}
	}
	p, err := gq.DeviceQP()
	if err != nil {
		return err
	}
	dq, err := devhost.FromPointer(*(*unsafe.Pointer)(unsafe.Pointer(&p))) // host memory: never moves
	if err != nil {
		return err
	}

	fmt.Fprintf(stdout, "CPU-driven put_bw (no GPU): %d CPU threads run the device API's thread-scope put and CQ poll\n", cfg.threads)
	fmt.Fprintf(stdout, "(cuda/include compiled as host C++) on a QP exported by gpunetio; client %s -> server %s, emulated NICs,\n", cfg.client, cfg.server)
	fmt.Fprintf(stdout, "NIC handler %s (requested %s), %d puts per size over %d slots. Figures are CPU and emulator figures.\n",
		cli.qp.NICHandler(), cfg.handler, cfg.iters, slots)
	line := strings.Repeat("-", 84)
	fmt.Fprintf(stdout, "%s\n #bytes     #iterations    BW average[Gbps]   MsgRate[Mpps]    Wall time[ms]\n%s\n", line, line)
	var msgs, bytes uint64 // measured runs only
	var total time.Duration
	for i, b := range bufs {
		remote := cliLink.remote.Regions[i] // as the server sent it
		remote.RKey ^= cfg.rkeyXor
		if _, err := putAll(dq, cfg, b, remote); err != nil { // warm-up, as the kernel's
			return fmt.Errorf("message size %d, warm-up: %w", b.size, err)
		}
		d, err := putAll(dq, cfg, b, remote)
		if err != nil {
			return fmt.Errorf("message size %d: %w", b.size, err)
		}
		ms := float64(d) / float64(time.Millisecond)
		fmt.Fprintf(stdout, " %-7d    \t%-7d           %-7.6f            %-7.6f            %-7.6f\n", b.size, cfg.iters,
			float64(b.size)*float64(cfg.iters)/ms*1000*8/1e9, float64(cfg.iters)/ms*1000/1e6, ms)
		msgs += uint64(cfg.iters)
		bytes += uint64(cfg.iters) * b.size
		total += d
	}
	if err := validate(bufs); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "Validation successful! Data received correctly from client.")
	ms := float64(total) / float64(time.Millisecond)
	fmt.Fprintf(stdout, "CPU-driven demo: %d puts, %d bytes in %.3f ms measured (%.3f Mpps, %.3f Gbps; as many again in warm-ups), 0 error completions, every byte of %d buffers checked\n",
		msgs, bytes, ms, float64(msgs)/ms/1e3, float64(bytes)*8/ms/1e6, len(bufs))
	return nil
}

// link is what the exchange gives each side: its own endpoint, and the
// peer's as it arrived over the wire.
type link struct {
	local  verbs.LocalEndpoint
	remote verbs.Endpoint
}

// exchange runs the out-of-band exchange over a loopback TCP connection in
// the DOCA examples' byte format, as two processes would: the server offers
// its buffers, the client none.
func exchange(srv, cli *side, bufs []*buffer, timeout time.Duration) (s, c link, err error) {
	var regions []verbs.Region
	for _, b := range bufs {
		regions = append(regions, b.tMR.Region())
	}
	return exchangeRegions(srv, cli, regions, nil, timeout)
}

// exchangeRegions is exchange with the regions each side offers.
func exchangeRegions(srv, cli *side, srvRegions, cliRegions []verbs.Region, timeout time.Duration) (s, c link, err error) {
	if s.local, err = srv.qp.LocalEndpoint(1, 0); err != nil {
		return s, c, err
	}
	if c.local, err = cli.qp.LocalEndpoint(1, 0); err != nil {
		return s, c, err
	}
	s.local.Regions = srvRegions
	c.local.Regions = cliRegions
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return s, c, err
	}
	defer l.Close()
	type res struct {
		ep  verbs.Endpoint
		err error
	}
	ch := make(chan res, 1)
	go func() {
		conn, err := l.Accept()
		if err != nil {
			ch <- res{err: err}
			return
		}
		defer conn.Close()
		if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
			ch <- res{err: err}
			return
		}
		ep, err := verbs.ExchangeEndpointDOCA(conn, s.local.Endpoint, len(cliRegions))
		ch <- res{ep, err}
	}()
	conn, err := net.DialTimeout("tcp4", l.Addr().String(), timeout)
	if err == nil {
		defer conn.Close()
		if err = conn.SetDeadline(time.Now().Add(timeout)); err == nil {
			c.remote, err = verbs.ExchangeEndpointDOCA(conn, c.local.Endpoint, len(srvRegions))
		}
	}
	if err != nil {
		l.Close() // ends the server's Accept if the client never came
	}
	r := <-ch
	if err = errors.Join(err, r.err); err != nil {
		return s, c, fmt.Errorf("out-of-band exchange: %w", err)
	}
	s.remote = r.ep
	return s, c, nil
}

// putAll runs one "launch": cfg.iters puts of b.size bytes, slot t putting
// [t*size, (t+1)*size) of the source to the same range of remote, the slots
// shared by cfg.threads CPU threads. Each thread posts one put per slot it
// owns, then waits for their completions in order, and goes round again.
// It returns the time from the first post to the last completion.
func putAll(q *devhost.QP, cfg config, b *buffer, remote verbs.Region) (time.Duration, error) {
	mode := devhost.Mode{Sharing: devhost.SharingGPU, Handler: devhost.HandlerAuto}
	rkey := gpunetio.DeviceKey(remote.RKey)
	lkey := gpunetio.DeviceKey(b.sMR.LKey())
	rounds := cfg.iters / slots
	var wg sync.WaitGroup
	errs := make([]error, cfg.threads)
	start := time.Now()
	for th := 0; th < cfg.threads; th++ {
		wg.Add(1)
		go func(th int) {
			defer wg.Done()
			tickets := make([]uint64, 0, slots/cfg.threads+1)
			for r := 0; r < rounds; r++ {
				tickets = tickets[:0]
				for t := th; t < slots; t += cfg.threads {
					off := uint64(t) * b.size
					tk, err := q.Put(devhost.Addr{Addr: remote.Addr + off, Key: rkey},
						devhost.Addr{Addr: uint64(b.src.Dev) + off, Key: lkey}, b.size, mode)
					if err != nil {
						errs[th] = err
						return
					}
					tickets = append(tickets, tk)
				}
				for _, tk := range tickets {
					if err := q.Wait(tk, devhost.SharingGPU, cfg.timeout); err != nil {
						errs[th] = fmt.Errorf("put %d: %w", tk, err)
						return
					}
				}
			}
		}(th)
	}
	wg.Wait()
	d := time.Since(start)
	return d, errors.Join(errs...)
}

// validationError is the first wrong byte validate finds; it reads as the
// reference's message.
type validationError struct {
	buffer, pos int
	value       byte
}

func (e *validationError) Error() string {
	return fmt.Sprintf("Validation error: buffer %d pos %d has invalid data %d", e.buffer, e.pos, e.value)
}

// validate checks that every byte of the server's buffer i is i+1, the
// client's pattern, and names the first one that is not.
func validate(bufs []*buffer) error {
	for i, b := range bufs {
		for pos, v := range b.target {
			if v != byte(i+1) {
				return &validationError{buffer: i, pos: pos, value: v}
			}
		}
	}
	return nil
}
