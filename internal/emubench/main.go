// Command emubench measures the emulated NICs on a GPU, in one process:
// cuMemcpy references first, then the examples' kernels (put_bw, write_bw,
// write_lat, from build/kernels) on emu0 <-> emu1 of this process, and a
// breakdown of write_lat's one-way latency by stage of the emulator. The
// GPU suite runs it from scripts/emu-bench.sh, which adds the examples'
// figures between two processes.
//
//	emubench [-k build/kernels] [-g <PCI bus id>] [-i 512] [-lat-iters 1000] [-timeout 60s] [-cpuprofile file]
//
// Every figure is printed as "key value unit" on a line of its own (keys
// "ref.*", "inproc.*", "breakdown.*", "copies.*"), then a table for people.
// The copies.<run>.* lines say how the adapter moved the bytes of each
// run (warm-up launch included), per message: batches on the copier and
// on the copy engines, their mean time, the part of the copy engines'
// bytes the CPU staged, and the copier's phases (see emugpu.Stats).
//
// Method. References: 20 timed repetitions after 3 untimed ones, on one
// non-blocking stream, host memory pinned (cuMemHostAlloc); bandwidth is
// bytes over the wall time of the batch of copies and the final
// synchronize; the 64-byte latency is the mean of 200 copies each followed
// by its stream synchronize (what the emulator's adapter does per batch);
// the host memcpy is one goroutine copying 1 MiB between two warm mmap'd
// buffers (what the emulator does with a payload that lands in host
// memory).
// Kernels: as the examples' clients time them: one untimed launch, then
// one launch between two events on a non-blocking stream; put_bw and
// write_bw write from GPU memory to host memory (the examples' servers use
// host buffers), write_lat from GPU memory to GPU memory; one-way latency
// is half the kernel time per round trip.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"syscall"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/internal/emugpu"
	"github.com/gdaki/gpunetio/internal/mlx5/emu"
	"github.com/gdaki/gpunetio/verbs"
)

var (
	kernels  = flag.String("k", "build/kernels", "directory of the examples' kernel images (make kernels)")
	busID    = flag.String("g", "", "PCI bus id of the GPU (default: CUDA device 0)")
	bwIters  = flag.Int("i", 512, "messages per put_bw / write_bw launch (a multiple of 512, at most 2048)")
	latIters = flag.Int("lat-iters", 1000, "round trips per write_lat launch")
	timeout  = flag.Duration("timeout", 60*time.Second, "bound on each kernel")
	cpuProf  = flag.String("cpuprofile", "", "write a CPU profile of the kernel runs to this file")
	reps     = flag.Int("reps", 0, "run only put_bw at 64 B, this many timed launches (median and range; with -cpuprofile, a profile of them)")
	tlPrefix = flag.String("timeline", "", "write the emulator's timeline of each timed launch to PREFIX.<run> (emu.StartTimeline)")
)

const (
	remoteWritable = verbs.AccessLocalWrite | verbs.AccessRemoteWrite | verbs.AccessRelaxedOrder
	localOnly      = verbs.AccessLocalWrite | verbs.AccessRelaxedOrder
	bwThreads      = 512
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "emubench:", err)
		os.Exit(1)
	}
}

// results keeps every figure in order, for the table at the end.
type results struct{ lines []string }

func (r *results) add(key string, v float64, unit string) {
	line := fmt.Sprintf("%s %.3f %s", key, v, unit)
	fmt.Println(line)
	r.lines = append(r.lines, line)
}

// errRepsDone ends a -reps run after its put_bw launches.
var errRepsDone = errors.New("-reps: done")

// env is one process with both NICs and one GPU.
type env struct {
	gpu     *gpunetio.GPU
	ctx     *cuda.Context
	dev     [2]*verbs.Context // emu0 (server), emu1 (client)
	pd      [2]*verbs.PD
	mod     map[string]*cuda.Module
	closers []func() error
}

func (e *env) close() error {
	var errs []error
	for i := len(e.closers) - 1; i >= 0; i-- {
		errs = append(errs, e.closers[i]())
	}
	return errors.Join(errs...)
}

func run() error {
	if err := cuda.Init(); err != nil {
		return fmt.Errorf("CUDA: %w", err)
	}
	id := *busID
	if id == "" {
		d, err := cuda.DeviceGet(0)
		if err != nil {
			return err
		}
		if id, err = d.PCIBusID(); err != nil {
			return err
		}
	}
	e := &env{mod: map[string]*cuda.Module{}}
	defer func() {
		if err := e.close(); err != nil {
			fmt.Fprintln(os.Stderr, "emubench: cleanup:", err)
		}
	}()
	var err error
	if e.gpu, err = gpunetio.NewGPU(id); err != nil {
		return err
	}
	e.closers = append(e.closers, e.gpu.Close)
	if e.ctx, err = e.gpu.CUDAContext(); err != nil {
		return err
	}
	e.closers = append(e.closers, e.ctx.Release)
	for i, name := range []string{"emu0", "emu1"} {
		if e.dev[i], err = verbs.OpenDevice(name); err != nil {
			return fmt.Errorf("open %s: %w", name, err)
		}
		e.closers = append(e.closers, e.dev[i].Close)
		if e.pd[i], err = e.dev[i].AllocPD(); err != nil {
			return err
		}
		e.closers = append(e.closers, e.pd[i].Close)
	}
	for _, k := range []string{"put_bw", "write_bw", "write_lat"} {
		path := filepath.Join(*kernels, k+"_kernel.fatbin")
		m, err := e.ctx.ModuleLoadFile(path)
		if err != nil {
			return fmt.Errorf("load %s (build it with make kernels): %w", path, err)
		}
		e.mod[k] = m
		e.closers = append(e.closers, m.Unload)
	}
	fmt.Printf("emubench: GPU %s, emu0 <-> emu1 in one process\n", e.gpu)
	r := &results{}
	dtoh, err := references(e, r)
	if err != nil {
		return fmt.Errorf("references: %w", err)
	}
	if err := memcpyRef(r); err != nil {
		return fmt.Errorf("references: %w", err)
	}
	clockRef(r)
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if err := bandwidth(e, r, dtoh); errors.Is(err, errRepsDone) {
		return nil
	} else if err != nil {
		return err
	}
	if err := latency(e, r); err != nil {
		return err
	}
	copyStats(r, "all", statsNow(), 0)
	fmt.Println()
	fmt.Println("summary (one process):")
	for _, l := range r.lines {
		fmt.Println("  " + l)
	}
	return nil
}

// references measures cuMemcpy on this GPU; it returns DtoH bytes/s.
func references(e *env, r *results) (float64, error) {
	const big = 1 << 20
	c := e.ctx
	s, err := c.NewStream(cuda.StreamNonBlocking)
	if err != nil {
		return 0, err
	}
	defer s.Destroy()
	host, err := c.MemAllocHost(big, 0)
	if err != nil {
		return 0, err
	}
	defer c.MemFreeHost(host)
	d1, err := c.MemAlloc(big)
	if err != nil {
		return 0, err
	}
	defer c.MemFree(d1)
	d2, err := c.MemAlloc(big)
	if err != nil {
		return 0, err
	}
	defer c.MemFree(d2)
	bw := func(copy1 func() error) (float64, error) {
		for i := 0; i < 3; i++ {
			if err := copy1(); err != nil {
				return 0, err
			}
		}
		if err := s.Synchronize(); err != nil {
			return 0, err
		}
		const reps = 20
		start := time.Now()
		for i := 0; i < reps; i++ {
			if err := copy1(); err != nil {
				return 0, err
			}
		}
		if err := s.Synchronize(); err != nil {
			return 0, err
		}
		return float64(reps*big) / time.Since(start).Seconds(), nil
	}
	dtoh, err := bw(func() error { return c.MemcpyDtoHAsync(host, d1, big, s) })
	if err != nil {
		return 0, err
	}
	htod, err := bw(func() error { return c.MemcpyHtoDAsync(d1, host, big, s) })
	if err != nil {
		return 0, err
	}
	dtod, err := bw(func() error { return c.MemcpyDtoDAsync(d2, d1, big, s) })
	if err != nil {
		return 0, err
	}
	r.add("ref.dtoh_1MiB", dtoh*8/1e9, "Gbps")
	r.add("ref.htod_1MiB", htod*8/1e9, "Gbps")
	r.add("ref.dtod_1MiB", dtod*8/1e9, "Gbps")
	lat := func(copy1 func() error) (time.Duration, error) {
		for i := 0; i < 20; i++ {
			if err := copy1(); err != nil {
				return 0, err
			}
		}
		const reps = 200
		start := time.Now()
		for i := 0; i < reps; i++ {
			if err := copy1(); err != nil {
				return 0, err
			}
		}
		return time.Since(start) / reps, nil
	}
	l, err := lat(func() error {
		if err := c.MemcpyDtoHAsync(host, d1, 64, s); err != nil {
			return err
		}
		return s.Synchronize()
	})
	if err != nil {
		return 0, err
	}
	r.add("ref.dtoh_64B_async_sync", us(l), "us")
	l, err = lat(func() error {
		if err := c.MemcpyHtoDAsync(d1, host, 64, s); err != nil {
			return err
		}
		return s.Synchronize()
	})
	if err != nil {
		return 0, err
	}
	r.add("ref.htod_64B_async_sync", us(l), "us")
	buf := make([]byte, 64)
	l, err = lat(func() error { return c.MemcpyDtoH(buf, d1) })
	if err != nil {
		return 0, err
	}
	r.add("ref.dtoh_64B_sync", us(l), "us")
	return dtoh, nil
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// qpPair makes a high-level QP on each NIC (0: server on emu0, 1: client
// on emu1) and connects them with the regions each exposes.
type qpPair struct {
	qp  [2]*gpunetio.QPHL
	loc [2]verbs.LocalEndpoint
	dqp [2]cuda.DevPtr
}

func (e *env) pair(collapsed bool) (*qpPair, error) {
	p := &qpPair{}
	for i := 0; i < 2; i++ {
		q, err := gpunetio.NewQPHL(gpunetio.QPHLConfig{GPU: e.gpu, PD: e.pd[i], SQWQEs: 2048,
			NICHandler: gpunetio.NICHandlerAuto, MemRegType: gpunetio.MemRegDefault, CQCollapsed: collapsed})
		if err != nil {
			return nil, fmt.Errorf("QP on %s: %w", e.dev[i].Name(), err)
		}
		e.closers = append(e.closers, q.Close)
		p.qp[i] = q
		if p.loc[i], err = q.LocalEndpoint(1, 0); err != nil {
			return nil, err
		}
		p.loc[i].MTU = verbs.EndpointDOCAMTU
		if p.dqp[i], err = q.GPUQP().DeviceQP(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *qpPair) connect(regions [2][]verbs.Region) error {
	for i := 0; i < 2; i++ {
		remote := p.loc[1-i].Endpoint
		remote.Regions = regions[1-i]
		if err := p.qp[i].ConnectRC(p.loc[i], remote, nil); err != nil {
			return err
		}
	}
	return nil
}

// gpuBuf allocates and registers GPU memory on side i.
func (e *env) gpuBuf(i int, size uint64, access verbs.AccessFlags) (*gpunetio.Mem, *verbs.MR, error) {
	m, err := e.gpu.MemAlloc(uintptr(size), 4096, gpunetio.MemGPU)
	if err != nil {
		return nil, nil, err
	}
	e.closers = append(e.closers, m.Free)
	if err := e.ctx.MemsetD8(m.Dev, 1, uintptr(size)); err != nil {
		return nil, nil, err
	}
	mr, err := m.RegMR(e.pd[i], access, gpunetio.MemRegDefault)
	if err != nil {
		return nil, nil, err
	}
	e.closers = append(e.closers, mr.Close)
	return m, mr, nil
}

// hostBuf maps and registers host memory on side i.
func (e *env) hostBuf(i int, size uint64, access verbs.AccessFlags) (*verbs.MR, error) {
	b, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	e.closers = append(e.closers, func() error { return syscall.Munmap(b) })
	mr, err := e.pd[i].RegMR(uintptr(unsafe.Pointer(&b[0])), size, access)
	if err != nil {
		return nil, err
	}
	e.closers = append(e.closers, mr.Close)
	return mr, nil
}

// timed runs launch once untimed and once between two events on s, and
// returns the kernel time of the second. With -timeline, the emulator's
// timeline of the second goes to PREFIX.run.
func (e *env) timed(run string, s *cuda.Stream, launch func(warm bool) error) (time.Duration, error) {
	if err := launch(true); err != nil {
		return 0, err
	}
	if err := s.Wait(*timeout); err != nil {
		return 0, fmt.Errorf("warm-up kernel: %w", err)
	}
	if *tlPrefix != "" {
		emu.StartTimeline(1 << 20)
		defer writeTimeline(*tlPrefix + "." + run)
	}
	t0, err := e.ctx.NewEvent(cuda.EventDefault)
	if err != nil {
		return 0, err
	}
	defer t0.Destroy()
	t1, err := e.ctx.NewEvent(cuda.EventDefault)
	if err != nil {
		return 0, err
	}
	defer t1.Destroy()
	if err := t0.Record(s); err != nil {
		return 0, err
	}
	if err := launch(false); err != nil {
		return 0, err
	}
	if err := t1.Record(s); err != nil {
		return 0, err
	}
	if err := t1.Wait(*timeout); err != nil {
		return 0, fmt.Errorf("kernel: %w", err)
	}
	return cuda.ElapsedTime(t0, t1)
}

// bandwidth runs put_bw at 64 B and 1 MiB and write_bw at 1 MiB, client
// GPU memory to server host memory.
func bandwidth(e *env, r *results, dtoh float64) error {
	iters := uint32(*bwIters)
	p, err := e.pair(false)
	if err != nil {
		return err
	}
	sizes := []uint64{64, 1 << 20}
	var src [2]*gpunetio.Mem
	var srcMR [2]*verbs.MR
	var dst [2]*verbs.MR
	for k, size := range sizes {
		if src[k], srcMR[k], err = e.gpuBuf(1, bwThreads*size, localOnly); err != nil {
			return err
		}
		if dst[k], err = e.hostBuf(0, bwThreads*size, remoteWritable); err != nil {
			return err
		}
	}
	if err := p.connect([2][]verbs.Region{{dst[0].Region(), dst[1].Region()}, nil}); err != nil {
		return err
	}
	errs, err := cuda.Alloc[uint32](e.ctx, 1)
	if err != nil {
		return err
	}
	defer errs.Free()
	if err := errs.Zero(); err != nil {
		return err
	}
	s, err := e.ctx.NewStream(cuda.StreamNonBlocking)
	if err != nil {
		return err
	}
	defer s.Destroy()
	putF, err := e.mod["put_bw"].Function("gpunetio_put_bw_thread")
	if err != nil {
		return err
	}
	writeF, err := e.mod["write_bw"].Function("gpunetio_write_bw")
	if err != nil {
		return err
	}
	// repeat runs put_bw at 64 B n times and reports the median and range
	// of the launches' rates (one launch's rate spreads by 2x and more).
	repeat := func(key string, n int) error {
		var rates []float64
		for i := 0; i < n; i++ {
			d, err := e.timed(fmt.Sprintf("%s_%d", key, i), s, func(bool) error {
				return e.ctx.LaunchKernel(putF, cuda.Dim3{X: 2}, cuda.Dim3{X: bwThreads / 2}, 0, s,
					p.dqp[1], iters, sizes[0], src[0].Dev, gpunetio.DeviceKey(srcMR[0].LKey()),
					dst[0].Region().Addr, gpunetio.DeviceKey(dst[0].RKey()), errs.Ptr())
			})
			if err != nil {
				return fmt.Errorf("put_bw 64 B: %w", err)
			}
			rates = append(rates, float64(iters)/d.Seconds()/1e6)
		}
		slices.Sort(rates)
		r.add(key+"_median", rates[len(rates)/2], "Mmsgs/s")
		r.add(key+"_min", rates[0], "Mmsgs/s")
		r.add(key+"_max", rates[len(rates)-1], "Mmsgs/s")
		return nil
	}
	if *reps > 0 {
		if err := repeat("reps.put_bw_64B", *reps); err != nil {
			return err
		}
		return errRepsDone
	}
	for k, size := range sizes {
		st0 := statsNow()
		d, err := e.timed("put_bw_"+sizeName(size), s, func(bool) error {
			return e.ctx.LaunchKernel(putF, cuda.Dim3{X: 2}, cuda.Dim3{X: bwThreads / 2}, 0, s,
				p.dqp[1], iters, size, src[k].Dev, gpunetio.DeviceKey(srcMR[k].LKey()),
				dst[k].Region().Addr, gpunetio.DeviceKey(dst[k].RKey()), errs.Ptr())
		})
		if err != nil {
			return fmt.Errorf("put_bw %d B: %w", size, err)
		}
		report(r, "inproc.put_bw", size, iters, d, dtoh)
		copyStats(r, fmt.Sprintf("put_bw_%s", sizeName(size)), statsNow().sub(st0), 2*int(iters))
		if size == sizes[0] {
			if err := repeat("inproc.put_bw_64B_of15", 15); err != nil {
				return err
			}
		}
	}
	// write_bw builds its WQEs in the ring itself: a QP pair of its own.
	wp, err := e.pair(false)
	if err != nil {
		return err
	}
	if err := wp.connect([2][]verbs.Region{{dst[1].Region()}, nil}); err != nil {
		return err
	}
	st0 := statsNow()
	d, err := e.timed("write_bw_1MiB", s, func(bool) error {
		return e.ctx.LaunchKernel(writeF, cuda.Dim3{X: 1}, cuda.Dim3{X: bwThreads}, 0, s,
			wp.dqp[1], iters, uint32(sizes[1]), src[1].Dev, gpunetio.DeviceKey(srcMR[1].LKey()),
			dst[1].Region().Addr, gpunetio.DeviceKey(dst[1].RKey()), errs.Ptr())
	})
	if err != nil {
		return fmt.Errorf("write_bw 1 MiB: %w", err)
	}
	report(r, "inproc.write_bw", sizes[1], iters, d, dtoh)
	copyStats(r, "write_bw_1MiB", statsNow().sub(st0), 2*int(iters))
	var n [1]uint32
	if err := errs.Read(0, n[:]); err != nil {
		return err
	}
	if n[0] != 0 {
		return fmt.Errorf("the bandwidth kernels saw %d error completions", n[0])
	}
	return nil
}

func report(r *results, key string, size uint64, iters uint32, d time.Duration, dtoh float64) {
	rate := float64(iters) / d.Seconds()
	bps := rate * float64(size) * 8
	if size < 4096 {
		r.add(fmt.Sprintf("%s_%dB", key, size), rate/1e6, "Mmsgs/s")
		return
	}
	r.add(fmt.Sprintf("%s_%dMiB", key, size>>20), bps/1e9, "Gbps")
	r.add(fmt.Sprintf("%s_%dMiB_of_dtoh", key, size>>20), bps/(dtoh*8), "fraction")
}

// latency runs write_lat (both sides) at 8 and 64 B, then once more at 8 B
// with the emulator's stage breakdown on.
func latency(e *env, r *results) error {
	iters := uint32(*latIters)
	p, err := e.pair(true)
	if err != nil {
		return err
	}
	sizes := []uint64{8, 64}
	var poll, post [2][2]*gpunetio.Mem // [size][side]
	var pollMR, postMR [2][2]*verbs.MR
	var regions [2][]verbs.Region
	for k := range sizes {
		for i := 0; i < 2; i++ {
			if poll[k][i], pollMR[k][i], err = e.gpuBuf(i, 4096, remoteWritable); err != nil {
				return err
			}
			if err := e.ctx.MemsetD8(poll[k][i].Dev, 0, 4096); err != nil {
				return err
			}
			if post[k][i], postMR[k][i], err = e.gpuBuf(i, 4096, localOnly); err != nil {
				return err
			}
			regions[i] = append(regions[i], pollMR[k][i].Region())
		}
	}
	if err := p.connect(regions); err != nil {
		return err
	}
	f, err := e.mod["write_lat"].Function("gpunetio_write_lat_auto")
	if err != nil {
		return err
	}
	status, err := cuda.Alloc[uint32](e.ctx, 1)
	if err != nil {
		return err
	}
	defer status.Free()
	if err := status.Zero(); err != nil {
		return err
	}
	var s [2]*cuda.Stream
	for i := range s {
		if s[i], err = e.ctx.NewStream(cuda.StreamNonBlocking); err != nil {
			return err
		}
		defer s[i].Destroy()
	}
	runSize := func(k int, base *uint32, run string) (time.Duration, error) {
		launch := func(i int, b uint32) error {
			isServer := int32(1 - i)
			return e.ctx.LaunchKernel(f, cuda.Dim3{X: 1}, cuda.Dim3{X: 1}, 0, s[i],
				p.dqp[i], isServer, iters, b, uint32(sizes[k]), poll[k][i].Dev, post[k][i].Dev,
				gpunetio.DeviceKey(postMR[k][i].LKey()), pollMR[k][1-i].Region().Addr,
				gpunetio.DeviceKey(pollMR[k][1-i].RKey()), uint64(*timeout/time.Nanosecond), status.Ptr())
		}
		d, err := e.timed(run, s[1], func(warm bool) error {
			b := *base
			*base += iters
			if err := launch(0, b); err != nil {
				return err
			}
			return launch(1, b)
		})
		if err != nil {
			return 0, err
		}
		if err := s[0].Wait(*timeout); err != nil {
			return 0, fmt.Errorf("server kernel: %w", err)
		}
		var st [1]uint32
		if err := status.Read(0, st[:]); err != nil {
			return 0, err
		}
		if st[0] != 0 {
			return 0, fmt.Errorf("write_lat status %d (1: timed out, 2: error completion)", st[0])
		}
		return d, nil
	}
	var bases [2]uint32 // messages already exchanged on the buffers of each size
	for k, size := range sizes {
		st0 := statsNow()
		d, err := runSize(k, &bases[k], fmt.Sprintf("write_lat_%dB", size))
		if err != nil {
			return fmt.Errorf("write_lat %d B: %w", size, err)
		}
		r.add(fmt.Sprintf("inproc.write_lat_%dB_one_way", size), us(d)/float64(iters)/2, "us")
		copyStats(r, fmt.Sprintf("write_lat_%dB", size), statsNow().sub(st0), 4*int(iters))
	}
	emu.StartBreakdown()
	d, err := runSize(0, &bases[0], "write_lat_breakdown")
	bd := emu.StopBreakdown()
	if err != nil {
		return fmt.Errorf("write_lat breakdown: %w", err)
	}
	oneWay := us(d) / float64(iters) / 2
	r.add("breakdown.write_lat_8B_one_way", oneWay, "us")
	r.add("breakdown.messages", float64(bd.Messages), "")
	r.add("breakdown.doorbell_seen_to_wqe_read", us(bd.DoorbellToWQE), "us")
	r.add("breakdown.wqe_read_to_payload_read", us(bd.WQEToPayload), "us")
	r.add("breakdown.payload_read_to_remote_written", us(bd.PayloadToLand), "us")
	r.add("breakdown.remote_written_to_cqe_written", us(bd.LandToCQE), "us")
	r.add("breakdown.doorbell_seen_to_remote_written", us(bd.DoorbellToLand), "us")
	r.add("breakdown.rest_gpu_side", oneWay-us(bd.DoorbellToLand), "us")
	return nil
}

// writeTimeline stops the emulator's timeline and writes it to path.
func writeTimeline(path string) {
	if err := emu.StopTimeline().Save(path); err != nil {
		fmt.Fprintln(os.Stderr, "emubench: timeline:", err)
	}
}

func sizeName(size uint64) string {
	if size >= 1<<20 {
		return fmt.Sprintf("%dMiB", size>>20)
	}
	return fmt.Sprintf("%dB", size)
}

// runStats is what the adapter's copies and the send-queue watches did
// since the process started: how the bytes moved (emugpu) and how many
// doorbells of watched queues a push served or a batch read (emu).
type runStats struct {
	copies                 emugpu.Stats
	watchHits, watchMisses uint64
	byRef                  emu.ByRefStats
}

func statsNow() runStats {
	h, m := emu.WatchCounts()
	return runStats{copies: emugpu.CopyStats(), watchHits: h, watchMisses: m, byRef: emu.ByRefCounts()}
}

// sub returns the counts of the interval from o to s.
func (s runStats) sub(o runStats) runStats {
	return runStats{copies: s.copies.Sub(o.copies), watchHits: s.watchHits - o.watchHits, watchMisses: s.watchMisses - o.watchMisses,
		byRef: s.byRef.Sub(o.byRef)}
}

// copyStats reports how the adapter moved the bytes of one run of msgs
// messages (msgs 0: totals only).
func copyStats(r *results, run string, all runStats, msgs int) {
	st := all.copies
	k := "copies." + run + "."
	if msgs > 0 {
		r.add(k+"copier_batches_per_msg", float64(st.CopierBatches)/float64(msgs), "")
		r.add(k+"engine_batches_per_msg", float64(st.EngineBatches)/float64(msgs), "")
	} else {
		r.add(k+"copier_batches", float64(st.CopierBatches), "")
		r.add(k+"engine_batches", float64(st.EngineBatches), "")
	}
	mean := func(d time.Duration, n uint64) float64 { return us(d) / float64(n) }
	if st.CopierBatches > 0 {
		r.add(k+"copier_batch_mean", mean(st.CopierTime, st.CopierBatches), "us")
		r.add(k+"side_copier_fraction", float64(st.SideBatches)/float64(st.CopierBatches), "")
	}
	if n := st.CopierStamped; n > 0 {
		r.add(k+"copier_host_prep", mean(st.CopierPrep, n), "us")
		r.add(k+"copier_host_wait", mean(st.CopierWait, n), "us")
		r.add(k+"copier_gpu_desc", mean(st.CopierDesc, n), "us")
		r.add(k+"copier_gpu_copy", mean(st.CopierCopy, n), "us")
	}
	if n := all.watchHits + all.watchMisses; n > 0 {
		r.add(k+"watch_hit_fraction", float64(all.watchHits)/float64(n), "")
	}
	if b := all.byRef; b.Frames > 0 || b.MRsPinned > 0 || b.PinFailures > 0 {
		r.add(k+"byref_frames", float64(b.Frames), "") // large payloads landed with one copy (emu inproc.go)
		r.add(k+"byref_mrs_pinned", float64(b.MRsPinned), "")
		r.add(k+"byref_pin_failures", float64(b.PinFailures), "")
	}
	if st.EngineBatches > 0 {
		r.add(k+"engine_batch_mean", mean(st.EngineTime, st.EngineBatches), "us")
		r.add(k+"engine_bytes_per_batch", float64(st.EngineBytes)/float64(st.EngineBatches), "B")
		r.add(k+"engine_staged_fraction", float64(st.EngineStaged)/float64(max(st.EngineBytes, 1)), "")
	}
}

// clockRef times a reading of the clock (time.Now): the emulator reads it
// on its data path, and a host whose clock source has no fast user-space
// reading pays a system call for each.
func clockRef(r *results) {
	const n = 1 << 20
	var last time.Time
	start := time.Now()
	for i := 0; i < n; i++ {
		last = time.Now()
	}
	r.add("ref.time_now", float64(last.Sub(start).Nanoseconds())/n, "ns")
}

// memcpyRef times one goroutine copying 1 MiB between warm host buffers.
func memcpyRef(r *results) error {
	const big = 1 << 20
	var b [2][]byte
	for i := range b {
		m, err := syscall.Mmap(-1, 0, big, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			return err
		}
		defer syscall.Munmap(m)
		clear(m)
		b[i] = m
	}
	for i := 0; i < 3; i++ {
		copy(b[1], b[0])
	}
	const reps = 50
	start := time.Now()
	for i := 0; i < reps; i++ {
		copy(b[i&1], b[1-i&1])
	}
	r.add("ref.host_memcpy_1MiB", float64(reps*big)*8/time.Since(start).Seconds()/1e9, "Gbps")
	return nil
}
