// Command verbs_server_client moves data between a server and a client with
// DOCA Verbs from the host, without a GPU (the Go port of the DOCA Verbs
// "server client" sample): each side opens an RDMA device, a PD, a CQ, a
// queue pair and a registered buffer, the two exchange their endpoints over
// a TCP connection (out of band), connect their QPs, and the client runs n
// operations of one type against the server's buffer: SEND (the server
// receives), RDMA WRITE (into the server's buffer) or RDMA READ (from it),
// posting them in bursts of b work requests per doorbell. Both sides check
// the data and print what they did.
//
// Server: verbs_server_client -d <device> [-ro send|write|read] [-s size] [-n iterations] [-b burst] [-qt rc|uc]
// Client: verbs_server_client -d <device> -c <server address> [the same flags]
//
// -e waits for completions on a completion channel (the CQ armed, the
// process asleep until the CQ's event) instead of polling; each side
// chooses for itself. Both sides must be given the same -ro, -s, -n, -b
// and -qt. -gid selects
// the GID index (default 0), -port the out-of-band TCP port (default 18515;
// 0 lets the server pick one, which it prints). On the emulated NICs the two
// processes use -d emu0 and -d emu1.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/gdaki/gpunetio/verbs"
)

// config is the parsed command line.
type config struct {
	server  string // -c: server address; empty in the server role
	device  string // -d
	gid     uint
	op      string // -ro: send, write or read
	size    uint   // -s: bytes per operation
	qpType  verbs.QPType
	iters   uint // -n
	burst   uint // -b
	port    uint
	events  bool // -e: wait on a completion channel instead of polling
	timeout time.Duration
}

func (c *config) role() string {
	if c.server != "" {
		return "client"
	}
	return "server"
}

func parse(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("verbs_server_client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.server, "c", "", "client mode: the server's address")
	fs.StringVar(&c.device, "d", "", "RDMA device name (prefix match; emu0, emu1 for the emulated NICs; default the first device)")
	fs.UintVar(&c.gid, "gid", 0, "GID index")
	fs.StringVar(&c.op, "ro", "send", "RDMA operation: send, write or read")
	fs.UintVar(&c.size, "s", 4096, "message size in bytes")
	qt := fs.String("qt", "rc", "QP type: rc or uc (uc: send and write only)")
	fs.UintVar(&c.iters, "n", 100, "number of operations")
	fs.UintVar(&c.burst, "b", 1, "operations posted per doorbell (burst)")
	fs.BoolVar(&c.events, "e", false, "wait for completions on a completion channel (events) instead of polling")
	fs.UintVar(&c.port, "port", 18515, "out-of-band TCP port (0: the server picks one)")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "how long to wait for the peer and for completions")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch strings.ToLower(*qt) {
	case "rc":
		c.qpType = verbs.QPTypeRC
	case "uc":
		c.qpType = verbs.QPTypeUC
	default:
		return nil, fmt.Errorf("-qt %q: want rc or uc", *qt)
	}
	c.op = strings.ToLower(c.op)
	switch c.op {
	case "send", "write":
	case "read":
		if c.qpType == verbs.QPTypeUC {
			return nil, errors.New("-ro read needs -qt rc: UC has no RDMA READ")
		}
	default:
		return nil, fmt.Errorf("-ro %q: want send, write or read", c.op)
	}
	switch {
	case c.size == 0 || c.size > 1<<30:
		return nil, fmt.Errorf("-s %d: want 1 to 1 GiB", c.size)
	case c.iters == 0:
		return nil, errors.New("-n 0: want at least one operation")
	case c.burst == 0 || c.burst > 1024:
		return nil, fmt.Errorf("-b %d: want 1 to 1024", c.burst)
	case c.port > 65535:
		return nil, fmt.Errorf("-port %d: want 0 to 65535", c.port)
	case c.gid > 255:
		return nil, fmt.Errorf("-gid %d: want 0 to 255", c.gid)
	case c.server != "" && c.port == 0:
		return nil, errors.New("-port 0 is for the server only")
	}
	return c, nil
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "verbs_server_client:", err)
		}
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) (err error) {
	c, err := parse(args, stderr)
	if err != nil {
		return err
	}
	ctx, stop := common.Interrupts(context.Background(), stderr)
	defer stop()
	r, err := open(c)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := r.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	fmt.Fprintf(stdout, "%s: device %s, %v QP 0x%x, GID %v (index %d)\n", c.role(), r.ctx.Name(), c.qpType, r.qp.QPN(), r.local.GID, c.gid)

	conn, err := r.oob(ctx, c, stdout)
	if err != nil {
		return err
	}
	defer conn.Close()
	remote, err := exchange(conn, r.local.Endpoint, c.timeout)
	if err != nil {
		return err
	}
	if err := r.connect(c, remote); err != nil {
		return err
	}
	if c.qpType == verbs.QPTypeUC {
		// A UC QP drops what arrives before it is in RTR, and nothing
		// retransmits it: the client starts when the server is connected.
		// (An RC requester retransmits, and an RC server posts its first
		// receives in INIT, so RC needs no such step.)
		if c.server == "" {
			err = sendByte(conn, msgCredit, c.timeout)
		} else {
			err = readByte(ctx, conn, msgCredit, c.timeout)
		}
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%s: connected to QP 0x%x, GID %v\n", c.role(), remote.QPN, remote.GID)
	fmt.Fprintf(stdout, "%s: %s of %d bytes, %d iterations, burst %d\n", c.role(), strings.ToUpper(c.op), c.size, c.iters, c.burst)
	start := time.Now()
	if c.server == "" {
		err = r.serve(ctx, c, conn)
		if err == nil {
			// The client stays until the server has checked everything:
			// on a UC QP, a completion at the client means its packets
			// left, not that they arrived.
			err = sendByte(conn, msgDone, c.timeout)
		}
	} else {
		err = r.drive(ctx, c, conn, remote.Regions[0])
		if err == nil {
			err = readByte(ctx, conn, msgDone, c.timeout)
		}
	}
	if err != nil {
		return err
	}
	el := time.Since(start)
	bytes := float64(c.size) * float64(c.iters)
	// The side that receives the data checks it: the server for SEND and
	// WRITE, the client for READ.
	checked := "data verified"
	if (c.server != "") != (c.op == "read") {
		checked = "completions checked"
	}
	fmt.Fprintf(stdout, "%s: %d %s operations completed, %d bytes, %s, %.3f ms (%.1f MB/s)\n",
		c.role(), c.iters, strings.ToUpper(c.op), uint64(bytes), checked, float64(el.Microseconds())/1000, bytes/el.Seconds()/1e6)
	if c.events {
		fmt.Fprintf(stdout, "%s: waited for completions on a completion channel: %d events\n", c.role(), r.events)
	}
	fmt.Fprintf(stdout, "%s: sample finished successfully\n", c.role())
	return nil
}

// resources are one side's verbs objects.
type resources struct {
	ctx   *verbs.Context
	pd    *verbs.PD
	dev   *verbs.Dev // the device object CQs and QPs are made on
	cq    *verbs.CQ
	qp    *verbs.QP
	buf   []byte
	mr    *verbs.MR
	ch    *verbs.CompChannel // -e
	local verbs.LocalEndpoint
	depth uint32 // work requests in flight at most: the burst
	// events counts the completion events received (-e).
	events int
}

func open(c *config) (_ *resources, err error) {
	r := &resources{depth: uint32(c.burst)}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.close())
		}
	}()
	if r.ctx, err = common.OpenDevice(c.device); err != nil {
		return nil, fmt.Errorf("open RDMA device %q: %w", c.device, err)
	}
	if r.pd, err = r.ctx.AllocPD(); err != nil {
		return nil, err
	}
	if r.dev, err = verbs.OpenDev(r.pd); err != nil {
		return nil, err
	}
	wr := pow2(r.depth)
	if c.events {
		if r.ch, err = r.ctx.NewCompChannel(); err != nil {
			return nil, err
		}
	}
	if r.cq, err = r.dev.NewCQ(verbs.CQConfig{Size: 2 * wr, CompChannel: r.ch}); err != nil {
		return nil, err
	}
	if r.qp, err = r.dev.NewQP(verbs.QPConfig{PD: r.pd, Type: c.qpType, SendCQ: r.cq, RecvCQ: r.cq,
		SQWR: wr, RQWR: wr, SendMaxSGE: 1, RecvMaxSGE: 1}); err != nil {
		return nil, err
	}
	n := int(c.size) * int(c.burst)
	if r.buf, err = syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE); err != nil {
		return nil, fmt.Errorf("buffer of %d bytes: %w", n, err)
	}
	access := verbs.AccessLocalWrite | verbs.AccessRemoteWrite
	if c.qpType == verbs.QPTypeRC {
		access |= verbs.AccessRemoteRead
	}
	if r.mr, err = r.pd.RegMR(uintptr(unsafe.Pointer(&r.buf[0])), uint64(n), access); err != nil {
		return nil, err
	}
	if r.local, err = r.qp.LocalEndpoint(1, uint32(c.gid)); err != nil {
		return nil, err
	}
	r.local.Regions = []verbs.Region{r.mr.Region()}
	return r, nil
}

func (r *resources) close() error {
	var errs []error
	for _, c := range []interface{ Close() error }{r.qp, r.mr, r.cq, r.ch, r.dev, r.pd, r.ctx} {
		if c != nil && !isNil(c) {
			errs = append(errs, c.Close())
		}
	}
	if r.buf != nil {
		errs = append(errs, syscall.Munmap(r.buf))
		r.buf = nil
	}
	return errors.Join(errs...)
}

func isNil(c interface{ Close() error }) bool {
	switch v := c.(type) {
	case *verbs.QP:
		return v == nil
	case *verbs.MR:
		return v == nil
	case *verbs.CQ:
		return v == nil
	case *verbs.CompChannel:
		return v == nil
	case *verbs.PD:
		return v == nil
	case *verbs.Dev:
		return v == nil
	case *verbs.Context:
		return v == nil
	}
	return false
}

func pow2(v uint32) uint32 {
	p := uint32(1)
	for p < v {
		p <<= 1
	}
	return p
}

// oob opens the out-of-band connection: the server listens and accepts one
// client, the client connects.
func (r *resources) oob(ctx context.Context, c *config, stdout io.Writer) (net.Conn, error) {
	if c.server != "" {
		return common.Dial(ctx, c.server, uint16(c.port), c.timeout)
	}
	l, err := common.Listen(uint16(c.port))
	if err != nil {
		return nil, err
	}
	defer l.Close()
	fmt.Fprintf(stdout, "server: waiting for a client on port %d\n", l.Addr().(*net.TCPAddr).Port)
	return common.Accept(ctx, l, c.timeout)
}

// exchange sends this side's endpoint and reads the peer's (the
// self-describing encoding: QPN, GID, PSN, MTU and the buffer's region).
func exchange(conn net.Conn, local verbs.Endpoint, timeout time.Duration) (verbs.Endpoint, error) {
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return verbs.Endpoint{}, err
	}
	defer conn.SetDeadline(time.Time{}) //nolint:errcheck // best effort
	remote, err := verbs.ExchangeEndpoint(conn, local)
	if err != nil {
		return verbs.Endpoint{}, fmt.Errorf("exchange endpoints with %s: %w", conn.RemoteAddr(), err)
	}
	if len(remote.Regions) != 1 {
		return verbs.Endpoint{}, fmt.Errorf("the peer offers %d buffers, want 1", len(remote.Regions))
	}
	return remote, nil
}

// connect moves the QP to RTS. The server of a SEND run posts its first
// burst of receives in INIT, before the client can send.
func (r *resources) connect(c *config, remote verbs.Endpoint) error {
	opts := &verbs.ConnectOptions{}
	if c.qpType == verbs.QPTypeUC {
		opts.AllowRemoteRead, opts.RemoteAtomic = verbs.Ptr(false), verbs.Ptr(verbs.AtomicNone)
	}
	switch {
	case c.server == "" && c.op == "send":
		opts.RecvWRs = r.recvs(c, 0, min(c.burst, c.iters))
	case c.server == "" && c.op == "write":
		// The client's last WRITE carries an immediate: its receive tells
		// the server that every WRITE before it has landed.
		opts.RecvWRs = []verbs.RecvWR{{WRID: uint64(c.iters - 1)}}
	}
	return r.qp.ConnectRC(r.local, remote, opts)
}

// slot is the buffer slot of operation i.
func (r *resources) slot(c *config, i uint) []byte {
	s := int(i%c.burst) * int(c.size)
	return r.buf[s : s+int(c.size)]
}

func (r *resources) sge(c *config, i uint) verbs.SGE {
	b := r.slot(c, i)
	return verbs.SGE{Addr: uint64(uintptr(unsafe.Pointer(&b[0]))), Length: uint32(c.size), LKey: r.mr.LKey()}
}

// recvs are the receives of operations [from, from+n).
func (r *resources) recvs(c *config, from, n uint) []verbs.RecvWR {
	wrs := make([]verbs.RecvWR, n)
	for k := range wrs {
		i := from + uint(k)
		wrs[k] = verbs.RecvWR{WRID: uint64(i), SGL: []verbs.SGE{r.sge(c, i)}}
	}
	return wrs
}

// fill writes the pattern of operation i into b; check verifies it.
func fill(b []byte, i uint) {
	for j := range b {
		b[j] = byte(uint(j)*7 + i*13 + 1)
	}
	if len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, uint64(i))
	}
}

func check(b []byte, i uint) error {
	want := make([]byte, len(b))
	fill(want, i)
	for j := range b {
		if b[j] != want[j] {
			return fmt.Errorf("operation %d: byte %d is 0x%02x, want 0x%02x", i, j, b[j], want[j])
		}
	}
	return nil
}

// poll waits for n completions of the CQ and checks them.
func (r *resources) poll(ctx context.Context, c *config, n int) ([]verbs.WC, error) {
	wcs := make([]verbs.WC, n)
	got := 0
	deadline := time.Now().Add(c.timeout)
	for got < n && r.ch != nil {
		// Event mode: take what is there; arm the CQ; take what came in
		// meanwhile (an arm behind the completions fires at once, so
		// nothing is lost); then sleep until the CQ's event.
		k, err := r.cq.Poll(wcs[got:])
		got += k
		if err != nil {
			return nil, err
		}
		if got == n {
			break
		}
		if err := r.cq.ReqNotify(false); err != nil {
			return nil, err
		}
		if k, err = r.cq.Poll(wcs[got:]); err != nil {
			return nil, err
		}
		if got += k; got == n {
			break
		}
		wctx, cancel := context.WithDeadline(ctx, deadline)
		q, err := r.ch.GetEvent(wctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%d of %d completions: %w", got, n, err)
		}
		if err := q.AckEvents(1); err != nil {
			return nil, err
		}
		r.events++
	}
	for got < n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		k, err := r.cq.PollWait(wcs[got:], n-got, 100*time.Millisecond)
		got += k
		if err != nil && !errors.Is(err, verbs.ErrTimeOut) {
			return nil, err
		}
		if got < n && time.Now().After(deadline) {
			return nil, fmt.Errorf("%d of %d completions after %v", got, n, c.timeout)
		}
	}
	for _, wc := range wcs {
		if err := wc.Err(); err != nil {
			return nil, err
		}
	}
	return wcs, nil
}

// The one-byte messages of the out-of-band connection after the exchange.
const (
	msgCredit = 'C' // UC SEND: the server posted the next burst's receives
	msgDone   = 'D' // the client finished its operations; the server checked them
)

func sendByte(conn net.Conn, b byte, timeout time.Duration) error {
	if err := conn.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	_, err := conn.Write([]byte{b})
	return err
}

func readByte(ctx context.Context, conn net.Conn, want byte, timeout time.Duration) error {
	if err := conn.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		var b [1]byte
		_, err := io.ReadFull(conn, b[:])
		if err == nil && b[0] != want {
			err = fmt.Errorf("out-of-band message %q, want %q", b[0], want)
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = conn.SetReadDeadline(time.Unix(1, 0))
		<-done
		return ctx.Err()
	}
}

// serve is the server's part: receive and check the SENDs; for WRITE,
// check the buffer once the client is done; for READ, offer the pattern.
func (r *resources) serve(ctx context.Context, c *config, conn net.Conn) error {
	switch c.op {
	case "send":
		for i := uint(0); i < c.iters; i += c.burst {
			n := min(c.burst, c.iters-i)
			wcs, err := r.poll(ctx, c, int(n))
			if err != nil {
				return err
			}
			for _, wc := range wcs {
				if wc.Opcode != verbs.WCRecv || wc.ByteLen != uint32(c.size) {
					return fmt.Errorf("receive %d: %v of %d bytes, want RECV of %d", wc.WRID, wc.Opcode, wc.ByteLen, c.size)
				}
				if err := check(r.slot(c, uint(wc.WRID)), uint(wc.WRID)); err != nil {
					return err
				}
			}
			if next := i + c.burst; next < c.iters {
				if err := r.qp.PostRecv(r.recvs(c, next, min(c.burst, c.iters-next))...); err != nil {
					return err
				}
				if c.qpType == verbs.QPTypeUC {
					if err := sendByte(conn, msgCredit, c.timeout); err != nil {
						return err
					}
				}
			}
		}
		return readByte(ctx, conn, msgDone, c.timeout)
	case "write":
		wcs, err := r.poll(ctx, c, 1)
		if err != nil {
			return err
		}
		if wcs[0].Opcode != verbs.WCRecvRDMAWithImm || !wcs[0].ImmValid || wcs[0].Imm != uint32(c.iters-1) {
			return fmt.Errorf("the last WRITE's completion: %v, immediate %d (valid %v), want RECV_RDMA_WITH_IMM %d",
				wcs[0].Opcode, wcs[0].Imm, wcs[0].ImmValid, c.iters-1)
		}
		if err := readByte(ctx, conn, msgDone, c.timeout); err != nil {
			return err
		}
		// Each slot holds the last operation written to it.
		for s := uint(0); s < min(c.burst, c.iters); s++ {
			last := s + (c.iters-1-s)/c.burst*c.burst
			if err := check(r.slot(c, s), last); err != nil {
				return err
			}
		}
		return nil
	default: // read
		for s := uint(0); s < c.burst; s++ {
			fill(r.slot(c, s), s)
		}
		if err := sendByte(conn, msgCredit, c.timeout); err != nil {
			return err
		}
		return readByte(ctx, conn, msgDone, c.timeout)
	}
}

// drive is the client's part: the operations, in bursts.
func (r *resources) drive(ctx context.Context, c *config, conn net.Conn, peer verbs.Region) error {
	if c.op == "read" {
		if err := readByte(ctx, conn, msgCredit, c.timeout); err != nil { // the server filled its buffer
			return err
		}
	}
	for i := uint(0); i < c.iters; i += c.burst {
		n := min(c.burst, c.iters-i)
		if c.op == "send" && c.qpType == verbs.QPTypeUC && i > 0 {
			if err := readByte(ctx, conn, msgCredit, c.timeout); err != nil {
				return err
			}
		}
		wrs := make([]verbs.SendWR, n)
		for k := range wrs {
			op := i + uint(k)
			wr := verbs.SendWR{WRID: uint64(op), Signaled: true, SGL: []verbs.SGE{r.sge(c, op)}}
			remote := peer.Addr + uint64(op%c.burst)*uint64(c.size)
			switch c.op {
			case "send":
				wr.Opcode = verbs.WRSend
				fill(r.slot(c, op), op)
			case "write":
				wr.Opcode, wr.RemoteAddr, wr.RKey = verbs.WRRDMAWrite, remote, peer.RKey
				if op == c.iters-1 {
					wr.Opcode, wr.Imm = verbs.WRRDMAWriteImm, uint32(op)
				}
				fill(r.slot(c, op), op)
			default:
				wr.Opcode, wr.RemoteAddr, wr.RKey = verbs.WRRDMARead, remote, peer.RKey
				clear(r.slot(c, op))
			}
			wrs[k] = wr
		}
		if err := r.qp.PostSend(wrs...); err != nil {
			return err
		}
		wcs, err := r.poll(ctx, c, int(n))
		if err != nil {
			return err
		}
		if c.op == "read" {
			for _, wc := range wcs {
				if err := check(r.slot(c, uint(wc.WRID)), uint(wc.WRID)%c.burst); err != nil {
					return err
				}
			}
		}
	}
	return sendByte(conn, msgDone, c.timeout)
}
