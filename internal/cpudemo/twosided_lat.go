package main

// The CPU-driven counterpart of examples/twosided_lat (-twosided-lat): one
// CPU thread a side runs the ping-pong of the example's kernels with the
// device API's thread-scope send, recv, the receive CQ's poll_cq and
// wait_recv (the two-sided header compiled as host C++, internal/devhost)
// over one RC connection between two high-level QPs with receive queues,
// exported with their receive CQs. The client sends a message and waits for
// the reply; the server waits for the message, sends it back, and checks
// every byte against the example's pattern.
//
// The order of the receives is the kernels' (examples/twosided_lat/kernel.cu):
// before the first message each side posts the receives of messages 1 and
// 2, and the client waits for the server's flag (an RDMA write) before its
// first SEND; the client then sends seq, posts the receive of reply seq + 2
// and waits for reply seq; the server waits for seq, replies, and posts the
// receive of seq + 2. The QPs connect with RNR retry 0, so a SEND that
// reached a side before its receive would fail the run with an error
// completion instead of being retried.

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/internal/devhost"
	"github.com/gdaki/gpunetio/verbs"
)

// latSizes are twosided_lat's (and write_lat's) message sizes.
var latSizes = []uint64{1, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}

const (
	// latStride is each half of a side's receive buffer (and of the
	// client's send buffer), the largest message: every receive is posted
	// for that many bytes, so one posted in a launch takes the next
	// launch's message whatever its size.
	latStride = 16384
	// latRQ is each side's receive queue: at most two receives are
	// outstanding a side.
	latRQ = 4
)

// latPattern is byte pos of message seq of size bytes, the example's
// pattern (examples/twosided_lat, patternByte).
func latPattern(seq, size uint64, pos int) byte {
	return byte(uint32(seq)*3+uint32(size)*2654435761>>24) + byte(pos)
}

// latMode is the example kernels' mode: one thread on each QP (EXCLUSIVE),
// the handler resolved from the QP (AUTO).
var latMode = devhost.Mode{Sharing: devhost.SharingExclusive, Handler: devhost.HandlerAuto}

// latRun is one ping-pong: the device QPs, the buffers and what the server
// found.
type latRun struct {
	cfg              config
	srv, cli         *devhost.QP
	srvRx, cliRx     *gpunetio.Mem
	cliTx            *gpunetio.Mem
	srvRxKey         uint32 // device keys (gpunetio.DeviceKey)
	cliRxKey         uint32
	cliTxKey         uint32
	flag             *uint64 // the client's flag word, which the server writes
	flagRegion       verbs.Region
	srvBytes, txHost []byte

	checked uint64 // messages the server checked
	replies uint64 // replies the client received
	bad     uint64 // messages with a wrong byte
	first   error  // the first wrong byte (*validationError)
}

// latResult is what a -twosided-lat run did.
type latResult struct {
	sizes    []uint64
	launches int    // launches a side (a warm-up and a measured one per size)
	checked  uint64 // messages the server checked, warm-ups included
	replies  uint64 // replies the client received, warm-ups included
}

func runTwoSidedLat(cfg config, stdout io.Writer) error {
	_, err := twoSidedLat(cfg, stdout)
	return err
}

func twoSidedLat(cfg config, stdout io.Writer) (res latResult, err error) {
	var cl closers
	defer cl.run(&err)
	// Both sides send and receive: both get the requested handler and a
	// receive queue, as the example's two processes.
	p, err := openPair(cfg, cfg.handler, latRQ, latRQ, &cl)
	if err != nil {
		return res, err
	}
	const local = verbs.AccessLocalWrite | verbs.AccessRelaxedOrder
	l := &latRun{cfg: cfg}
	var srvRxMR, cliRxMR, cliTxMR, flagMR *verbs.MR
	var flag *gpunetio.Mem
	if l.srvRx, srvRxMR, err = p.alloc(p.srv.pd, 2*latStride, 0, local, &cl); err != nil {
		return res, err
	}
	if l.cliRx, cliRxMR, err = p.alloc(p.cli.pd, 2*latStride, 0, local, &cl); err != nil {
		return res, err
	}
	if l.cliTx, cliTxMR, err = p.alloc(p.cli.pd, 2*latStride, 0, local, &cl); err != nil {
		return res, err
	}
	if flag, flagMR, err = p.alloc(p.cli.pd, 8, 0, local|verbs.AccessRemoteWrite, &cl); err != nil {
		return res, err
	}
	// The client offers its flag word; the server offers nothing.
	if err := p.connect(cfg, nil, []verbs.Region{flagMR.Region()}, &verbs.ConnectOptions{RNRRetry: verbs.Ptr[uint8](0)}, &cl); err != nil {
		return res, err
	}
	l.srv, l.cli = p.sq, p.cq
	l.srvRxKey = gpunetio.DeviceKey(srvRxMR.LKey())
	l.cliRxKey = gpunetio.DeviceKey(cliRxMR.LKey())
	l.cliTxKey = gpunetio.DeviceKey(cliTxMR.LKey())
	l.flagRegion = p.srvLink.remote.Regions[0]
	fb, err := flag.HostBytes()
	if err != nil {
		return res, err
	}
	l.flag = (*uint64)(unsafe.Pointer(&fb[0]))
	if l.srvBytes, err = l.srvRx.HostBytes(); err != nil {
		return res, err
	}
	if l.txHost, err = l.cliTx.HostBytes(); err != nil {
		return res, err
	}

	fmt.Fprintf(stdout, "CPU-driven twosided_lat (no GPU): one CPU thread a side runs the device API's thread-scope send, recv, poll_cq\n")
	fmt.Fprintf(stdout, "and wait_recv (cuda/include compiled as host C++) on QPs exported by gpunetio with their receive queues;\n")
	fmt.Fprintf(stdout, "client %s <-> server %s, emulated NICs, NIC handler %s (requested %s), %d round trips per size, RNR retry 0.\n",
		cfg.client, cfg.server, p.cli.qp.NICHandler(), cfg.handler, cfg.iters)
	fmt.Fprintf(stdout, "Figures are CPU and emulator figures.\n")
	line := strings.Repeat("-", 94)
	fmt.Fprintf(stdout, "%s\n #bytes \t#iterations    Unidirectional[usec]    Bidirectional[usec]    Wall time[usec]\n%s\n", line, line)
	var measured time.Duration
	for _, size := range latSizes {
		if size > cfg.maxSize {
			break
		}
		res.sizes = append(res.sizes, size)
		var d time.Duration
		for rep := 0; rep < 2; rep++ { // warm-up, measured: as the kernels' two launches
			base := uint64(res.launches) * uint64(cfg.iters)
			res.launches++
			var serr, cerr error
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				serr = l.server(base, size, len(res.sizes)-1)
			}()
			go func() {
				defer wg.Done()
				d, cerr = l.client(base, size)
			}()
			wg.Wait()
			if err := errors.Join(cerr, serr); err != nil {
				return res, fmt.Errorf("message size %d: %w", size, err)
			}
		}
		us := float64(d) / float64(time.Microsecond)
		fmt.Fprintf(stdout, " %-7d \t\t%-7d          %-7.2f       \t\t%-7.2f    \t \t%-7.2f\n", size, cfg.iters,
			us/float64(2*cfg.iters), us/float64(cfg.iters), us)
		measured += d
	}
	res.checked, res.replies = l.checked, l.replies
	if l.first != nil {
		fmt.Fprintln(stdout, l.first.Error())
		return res, fmt.Errorf("%d messages with a wrong byte: %w", l.bad, l.first)
	}
	fmt.Fprintln(stdout, "Validation successful! Data received correctly from client.")
	n := uint64(len(res.sizes)) * uint64(cfg.iters)
	fmt.Fprintf(stdout, "CPU-driven demo: %d round trips in %.3f ms measured (as many again in warm-ups), %d messages checked byte by byte by the server, %d replies received, 0 error completions, no RNR\n",
		n, float64(measured)/float64(time.Millisecond), l.checked, l.replies)
	return res, nil
}

// half is the address of the half of a two-half buffer that message seq
// uses.
func half(m *gpunetio.Mem, seq uint64) uint64 { return uint64(m.Dev) + (seq&1)*latStride }

// postRecv posts the receive of message seq (RQ index seq - 1) into half
// (seq & 1) of rx.
func postRecv(q *devhost.QP, rx *gpunetio.Mem, key uint32, seq uint64) error {
	tk, err := q.Recv(devhost.Addr{Addr: half(rx, seq), Key: key}, latStride, latMode)
	if err != nil {
		return err
	}
	if tk != seq-1 {
		return fmt.Errorf("receive of message %d: RQ index %d, want %d (the receive queue was used before)", seq, tk, seq-1)
	}
	return nil
}

// latWait spins on probe (one look at a completion: nil, EBUSY while it is
// not there, or the failure) until it is not EBUSY, for at most timeout: the
// kernels' bounded wait.
func latWait(what string, probe func() error, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for spins := 0; ; spins++ {
		err := probe()
		if !errors.Is(err, syscall.EBUSY) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no completion after %v: %w", what, timeout, devhost.ErrTimeout)
		}
		if spins > 64 {
			runtime.Gosched()
		}
	}
}

// waitSend waits for the completion of SQ index ticket (non-blocking
// poll_one_cq_at, as the kernels).
func waitSend(q *devhost.QP, ticket uint64, what string, timeout time.Duration) error {
	return latWait(what, func() error { return q.PollOneCQAt(ticket, devhost.SharingExclusive) }, timeout)
}

// waitRecv waits for the receive of message seq (non-blocking poll_cq on the
// receive CQ, which consumes the CQE once it is there, as the kernels) and
// checks its CQE.
func waitRecv(q *devhost.QP, seq, size uint64, timeout time.Duration) error {
	var c devhost.CQE
	err := latWait(fmt.Sprintf("receive of message %d", seq), func() error {
		var err error
		c, err = q.PollRecvCQ(seq-1, devhost.SharingExclusive, false, 0)
		return err
	}, timeout)
	switch {
	case err != nil:
		return fmt.Errorf("receive of message %d: %w", seq, err)
	case c.Opcode() == respErr:
		return fmt.Errorf("receive of message %d: error CQE, syndrome %#x", seq, c.Syndrome())
	case uint64(c.ByteCount()) != size:
		return fmt.Errorf("receive of message %d: %d bytes, want %d", seq, c.ByteCount(), size)
	}
	return nil
}

// server is the server kernel's launch of cfg.iters messages from base + 1
// on, of size bytes (message size index sizeIndex).
func (l *latRun) server(base, size uint64, sizeIndex int) error {
	q, to := l.srv, l.cfg.timeout
	if base == 0 && !l.cfg.latNoPrepost {
		// The receives of messages 1 and 2, then the client's go.
		if err := errors.Join(postRecv(q, l.srvRx, l.srvRxKey, 1), postRecv(q, l.srvRx, l.srvRxKey, 2)); err != nil {
			return err
		}
		tk, err := q.P(devhost.Addr{Addr: l.flagRegion.Addr, Key: gpunetio.DeviceKey(l.flagRegion.RKey)}, 1, 8, latMode)
		if err != nil {
			return fmt.Errorf("flag write: %w", err)
		}
		if err := waitSend(q, tk, "flag write", to); err != nil {
			return err
		}
	} else if base == 0 {
		// The test's broken order: the go without the receives.
		if _, err := q.P(devhost.Addr{Addr: l.flagRegion.Addr, Key: gpunetio.DeviceKey(l.flagRegion.RKey)}, 1, 8, latMode); err != nil {
			return fmt.Errorf("flag write: %w", err)
		}
	}
	var prev uint64
	for j := uint64(0); j < uint64(l.cfg.iters); j++ {
		seq := base + 1 + j
		if err := waitRecv(q, seq, size, to); err != nil {
			return err
		}
		// The reply first (the message itself, from where it landed), then
		// the receive of seq + 2 into the same half: seq + 2 comes only
		// after the next reply, which follows the check below.
		tk, err := q.Send(devhost.Addr{Addr: half(l.srvRx, seq), Key: l.srvRxKey}, size, latMode)
		if err != nil {
			return err
		}
		if err := postRecv(q, l.srvRx, l.srvRxKey, seq+2); err != nil {
			return err
		}
		if j > 0 {
			if err := waitSend(q, prev, fmt.Sprintf("reply %d", seq-1), to); err != nil {
				return err
			}
		}
		prev = tk
		// A DUMP when the QP's need_mcst says the receiver needs one, as the
		// kernel does before it reads the message.
		if err := q.WaitRecv(seq-1, devhost.Addr{Addr: half(l.srvRx, seq), Key: l.srvRxKey}, latMode, to); err != nil {
			return fmt.Errorf("wait_recv %d: %w", seq, err)
		}
		off := (seq & 1) * latStride
		for pos, v := range l.srvBytes[off : off+size] {
			if v != latPattern(seq, size, pos) {
				l.bad++
				if l.first == nil {
					l.first = &validationError{buffer: sizeIndex, pos: pos, value: v}
				}
				break
			}
		}
		l.checked++
	}
	if l.cfg.iters > 0 {
		if err := waitSend(q, prev, fmt.Sprintf("reply %d", base+uint64(l.cfg.iters)), to); err != nil {
			return err
		}
	}
	return nil
}

// fill writes message seq of size bytes into its half of the client's
// send buffer (the test's corruption included).
func (l *latRun) fill(seq, size uint64) {
	off := (seq & 1) * latStride
	msg := l.txHost[off : off+size]
	for pos := range msg {
		msg[pos] = latPattern(seq, size, pos)
	}
	if l.cfg.latCorrupt == seq {
		msg[size/2] ^= 0x5a
	}
}

// client is the client kernel's launch: it returns the time of the
// launch's cfg.iters round trips.
func (l *latRun) client(base, size uint64) (time.Duration, error) {
	q, to := l.cli, l.cfg.timeout
	if base == 0 {
		// The receives of replies 1 and 2, then the server's go.
		if err := errors.Join(postRecv(q, l.cliRx, l.cliRxKey, 1), postRecv(q, l.cliRx, l.cliRxKey, 2)); err != nil {
			return 0, err
		}
		deadline := time.Now().Add(to)
		for atomic.LoadUint64(l.flag) < 1 {
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("the server's flag never came")
			}
			runtime.Gosched()
		}
	}
	start := time.Now()
	l.fill(base+1, size)
	var prev uint64
	for j := uint64(0); j < uint64(l.cfg.iters); j++ {
		seq := base + 1 + j
		tk, err := q.Send(devhost.Addr{Addr: half(l.cliTx, seq), Key: l.cliTxKey}, size, latMode)
		if err != nil {
			return 0, err
		}
		if err := postRecv(q, l.cliRx, l.cliRxKey, seq+2); err != nil {
			return 0, err
		}
		// The SEND of seq - 1 read the half the next message goes into.
		if j > 0 {
			if err := waitSend(q, prev, fmt.Sprintf("message %d", seq-1), to); err != nil {
				return 0, err
			}
		}
		prev = tk
		if j+1 < uint64(l.cfg.iters) {
			l.fill(seq+1, size)
		}
		if err := waitRecv(q, seq, size, to); err != nil {
			// No reply: one look at the SEND, which failed if the server had
			// no receive posted (RNR) or the link is gone.
			if serr := q.PollOneCQAt(prev, devhost.SharingExclusive); errors.Is(serr, syscall.EIO) {
				return 0, fmt.Errorf("reply: %w (the SEND of message %d: %w)", err, seq, serr)
			}
			return 0, fmt.Errorf("reply: %w", err)
		}
		l.replies++
	}
	if l.cfg.iters > 0 {
		if err := waitSend(q, prev, fmt.Sprintf("message %d", base+uint64(l.cfg.iters)), to); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}
