package wire

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire/wiretest"
)

// schedSlack is what timing assertions allow beyond a configured bound for
// scheduling delays on a loaded machine. Without the bound, the operations
// they time would block forever.
const schedSlack = 1500 * time.Millisecond

// noLeak records the goroutine count and, at cleanup, fails the test if it
// has not come back down within two seconds.
func noLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				t.Errorf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

func listen(t *testing.T, cfg Config) *Port {
	t.Helper()
	p, err := Listen(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// collector is a handler that copies every frame into a channel.
type collector chan Frame

func (c collector) handle(f *Frame) {
	g := *f
	g.Payload = append([]byte(nil), f.Payload...)
	c <- g
}

func (c collector) next(t *testing.T) Frame {
	t.Helper()
	select {
	case f := <-c:
		return f
	case <-time.After(5 * time.Second):
		t.Fatal("no frame within 5 s")
		return Frame{}
	}
}

func TestListenDefaults(t *testing.T) {
	noLeak(t)
	p := listen(t, Config{})
	q := listen(t, Config{})
	a := p.Addr().Addr()
	assert.True(t, a.Is4() && a.IsLoopback(), a)
	assert.NotEqual(t, netip.MustParseAddr("127.0.0.1"), a)
	assert.NotEqual(t, p.GID(), q.GID(), "each port has its own address")
	assert.Equal(t, uint16(DefaultPort), p.Addr().Port())
	assert.Equal(t, GIDFromIPv4(a), p.GID())
}

func TestListenEnvironment(t *testing.T) {
	noLeak(t)
	// The addresses are fixed, the TCP ports this run's own: another run
	// beside this one binds the same addresses on other ports.
	envPort, cfgPort := wiretest.ReservePort(t), wiretest.ReservePort(t)
	t.Setenv(EnvPort, strconv.Itoa(int(envPort)))
	p := listen(t, Config{})
	assert.Equal(t, envPort, p.Addr().Port())

	t.Setenv(EnvAddr, "127.9.8.7")
	q := listen(t, Config{})
	assert.Equal(t, netip.AddrPortFrom(netip.MustParseAddr("127.9.8.7"), envPort), q.Addr())

	// Config wins over the environment.
	r := listen(t, Config{Addr: netip.MustParseAddr("127.9.8.6"), Port: cfgPort})
	assert.Equal(t, netip.AddrPortFrom(netip.MustParseAddr("127.9.8.6"), cfgPort), r.Addr())

	for _, bad := range []struct{ key, val string }{
		{EnvPort, "0"}, {EnvPort, "70000"}, {EnvPort, "x"}, {EnvAddr, "nonsense"}, {EnvAddr, "::1"}, {EnvAddr, "0.0.0.0"},
	} {
		t.Run(bad.key+"="+bad.val, func(t *testing.T) {
			t.Setenv(bad.key, bad.val)
			_, err := Listen(Config{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "wire: listen")
		})
	}
}

func TestListenAddressInUse(t *testing.T) {
	noLeak(t)
	p := listen(t, Config{})
	_, err := Listen(Config{Addr: p.Addr().Addr()})
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.EADDRINUSE)
	assert.Contains(t, err.Error(), p.Addr().String())
}

func TestListenSkipsAddressInUse(t *testing.T) {
	noLeak(t)
	// Occupy the next default address with a foreign listener: Listen must
	// take another one.
	saved := loopbackSeq.Load()
	next := nextLoopback()
	loopbackSeq.Store(saved)
	ln, err := net.Listen("tcp4", netip.AddrPortFrom(next, DefaultPort).String())
	if errors.Is(err, syscall.EADDRINUSE) {
		// Another process (a port of another test run) has it already: it
		// is occupied all the same.
		t.Logf("%s:%d is another process's already", next, DefaultPort)
	} else {
		require.NoError(t, err)
		defer ln.Close()
	}
	p := listen(t, Config{})
	assert.NotEqual(t, next, p.Addr().Addr())
}

func TestInProcessDeliveryIsSynchronous(t *testing.T) {
	noLeak(t)
	a := listen(t, Config{})
	b := listen(t, Config{})
	var got *Frame
	var calls int
	b.SetHandler(func(f *Frame) { got = f; calls++ })
	f := sampleFrame(OpWriteOnly)
	f.SrcGID, f.DstGID = a.GID(), b.GID()
	require.NoError(t, a.Send(&f))
	// The handler ran before Send returned, with the sender's frame.
	assert.Equal(t, 1, calls)
	assert.Same(t, &f, got)
	assert.Equal(t, Stats{Sent: 1}, a.Stats())
	assert.Equal(t, Stats{Received: 1}, b.Stats())
}

func TestInProcessSendDoesNotAllocate(t *testing.T) {
	a := listen(t, Config{})
	b := listen(t, Config{})
	var n int
	b.SetHandler(func(f *Frame) { n += len(f.Payload) })
	f := Frame{Opcode: OpWriteOnly, DstGID: b.GID(), Payload: make([]byte, 8)}
	allocs := testing.AllocsPerRun(1000, func() {
		if err := a.Send(&f); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
	assert.Equal(t, 8*1001, n)
}

// replier answers every request with one frame of each response opcode,
// sent back on the request's route.
func replier(p **Port) func(*Frame) {
	return func(f *Frame) {
		for _, op := range Opcodes {
			if op.IsRequest() {
				continue
			}
			r := sampleFrame(op)
			r.SrcGID, r.DstGID, r.Route = f.DstGID, f.SrcGID, f.Route
			if err := (*p).Send(&r); err != nil {
				panic(err)
			}
		}
	}
}

// exchangeAll sends a sample frame of every request opcode from a to b,
// whose handler feeds got and answers with a frame of every response opcode
// that a's handler feeds to resp. It checks that each request arrived with a
// route and is otherwise what was sent, and that the responses came back to
// a in order, without a route. It returns the number of requests and of
// responses to each.
func exchangeAll(t *testing.T, a, b *Port, got, resp collector) (nReq, nResp int) {
	t.Helper()
	for _, op := range Opcodes {
		if !op.IsRequest() {
			nResp++
		}
	}
	for _, op := range Opcodes {
		if !op.IsRequest() {
			continue
		}
		nReq++
		f := sampleFrame(op)
		f.SrcGID, f.DstGID = a.GID(), b.GID()
		require.NoError(t, a.Send(&f))
		g := got.next(t)
		assert.NotEqual(t, Route{}, g.Route, "a frame from another port carries its route")
		g.Route = Route{}
		g.More = false // depends on what else arrived: more_test.go
		assert.Equal(t, f, g, op)
		for _, rop := range Opcodes {
			if rop.IsRequest() {
				continue
			}
			r := resp.next(t)
			want := sampleFrame(rop)
			want.SrcGID, want.DstGID = b.GID(), a.GID()
			assert.Equal(t, Route{}, r.Route, "responses reach the handler without a route")
			r.More = false
			assert.Equal(t, want, r, rop)
		}
	}
	return nReq, nResp
}

func TestTCPDelivery(t *testing.T) {
	noLeak(t)
	for _, tc := range []struct {
		name       string
		forceA     bool
		forceB     bool
		wantDialsA uint64
	}{
		{"both force TCP", true, true, 1},
		{"sender forces TCP", true, false, 1},
		{"receiver forces TCP", false, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(collector, 64)
			resp := make(collector, 256)
			a := listen(t, Config{ForceTCP: tc.forceA, Handler: resp.handle})
			var b *Port
			b = listen(t, Config{ForceTCP: tc.forceB, Handler: func(f *Frame) { got.handle(f); replier(&b)(f) }})
			// The responses come back on a's connection, in order.
			nReq, nResp := exchangeAll(t, a, b, got, resp)
			assert.Equal(t, tc.wantDialsA, a.Stats().Dials, "one connection, reused")
			assert.Zero(t, b.Stats().Dials, "responses travel on the requester's connection")
			assert.Equal(t, uint64(nReq), a.Stats().Sent)
			assert.Equal(t, uint64(nReq), b.Stats().Received)
			// b counts a response as sent after handing it to its
			// connection, which may be after a received it.
			assert.Eventually(t, func() bool { return b.Stats().Sent == uint64(nReq*nResp) }, 5*time.Second, time.Millisecond,
				"b sent %d, want %d", b.Stats().Sent, nReq*nResp)
			assert.Equal(t, uint64(nReq*nResp), a.Stats().Received)
			assert.Zero(t, a.Stats().Rejected+b.Stats().Rejected)
		})
	}
}

func TestSendErrors(t *testing.T) {
	noLeak(t)
	a := listen(t, Config{})
	b := listen(t, Config{})
	c := listen(t, Config{ForceTCP: true})
	tests := []struct {
		name string
		f    Frame
		kind error
	}{
		{"malformed", Frame{Opcode: 0x15, DstGID: b.GID()}, ErrMalformed},
		{"not IPv4-mapped", Frame{Opcode: OpSendOnly, DstGID: GID(netip.MustParseAddr("fe80::1").As16())}, ErrBadGID},
		// Refused before the network: the address is never dialled.
		{"response to another process without a route", Frame{Opcode: OpAck, DstGID: GIDFromIPv4(netip.MustParseAddr("127.250.250.9"))}, ErrNoRoute},
		{"response to a TCP-only port without a route", Frame{Opcode: OpAck, DstGID: c.GID()}, ErrNoRoute},
		{"request with a route", Frame{Opcode: OpSendOnly, DstGID: b.GID(), Route: Route{&conn{p: a}}}, ErrMalformed},
		{"response on another port's route", Frame{Opcode: OpAck, DstGID: b.GID(), Route: Route{&conn{p: b, peer: b.GID()}}}, ErrMalformed},
		{"frame above MaxFrameLen", Frame{Opcode: OpSendOnly, DstGID: c.GID(), Payload: make([]byte, DefaultMaxFrameLen)}, ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := a.Send(&tc.f)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.kind)
			var se *SendError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.f.DstGID, se.Dst)
			assert.Contains(t, err.Error(), "wire: ")
		})
	}
	require.NoError(t, a.Close())
	require.NoError(t, a.Close(), "Close is idempotent")
	err := a.Send(&Frame{Opcode: OpSendOnly, DstGID: b.GID()})
	assert.ErrorIs(t, err, ErrClosed)
	assert.Equal(t, uint64(len(tests)+1), a.Stats().SendErrors)
}

// sendUntilError repeats Send until it fails, checking that no Send takes
// longer than bound and that the failure comes within within.
func sendUntilError(t *testing.T, p *Port, f *Frame, bound, within time.Duration) error {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		start := time.Now()
		err := p.Send(f)
		require.Less(t, time.Since(start), bound, "Send waited")
		if err != nil {
			return err
		}
		require.True(t, time.Now().Before(deadline), "Send kept succeeding for %v", within)
		time.Sleep(200 * time.Microsecond)
	}
}

func TestUnreachablePeer(t *testing.T) {
	noLeak(t)
	// A loopback address nobody listens on: a listens on a TCP port
	// reserved for this test, and a dials its peers on its own port, where
	// nothing else can listen (on the default port, another process's port
	// could own the address).
	a := listen(t, Config{DialTimeout: time.Second, Port: wiretest.ReservePort(t)})
	dead := GIDFromIPv4(netip.MustParseAddr("127.250.250.1"))
	f := Frame{Opcode: OpSendOnly, DstGID: dead, Payload: []byte("x")}
	err := sendUntilError(t, a, &f, schedSlack, schedSlack)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrUnreachable)
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	assert.Contains(t, err.Error(), "::ffff:127.250.250.1")
	// Within one dial timeout the failure is remembered: no second dial.
	for i := 0; i < 10; i++ {
		err = a.Send(&f)
		assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	}
	assert.Equal(t, uint64(1), a.Stats().Dials)
}

func TestUnroutablePeerTimesOut(t *testing.T) {
	noLeak(t)
	if testing.Short() {
		t.Skip("dials a non-routable address")
	}
	// 10.255.255.1 from a port bound to loopback: the dial fails (no
	// route from 127/8 to there, or the timeout) in the background; no Send
	// waits for it.
	a := listen(t, Config{DialTimeout: 50 * time.Millisecond})
	f := Frame{Opcode: OpSendOnly, DstGID: GIDFromIPv4(netip.MustParseAddr("10.255.255.1"))}
	err := sendUntilError(t, a, &f, 20*time.Millisecond+schedSlack, 50*time.Millisecond+schedSlack)
	assert.ErrorIs(t, err, ErrUnreachable)
}

func TestStalledPeerWriteDeadline(t *testing.T) {
	noLeak(t)
	// A peer that accepts and never reads: the socket buffers fill, then the
	// queue; Sends drop frames (ErrCongested) without waiting, and the
	// connection fails after the write timeout. The peer's TCP port, which
	// a dials as its own, is this run's (another run has its own peer).
	port := wiretest.ReservePort(t)
	addr := netip.MustParseAddr("127.250.250.2")
	ln, err := net.Listen("tcp4", netip.AddrPortFrom(addr, port).String())
	require.NoError(t, err)
	defer ln.Close()
	held := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			held <- c
		}
	}()
	defer func() {
		select {
		case c := <-held:
			c.Close()
		default:
		}
	}()
	// A Send that waited for the write would take wt: the bound on each
	// Send below, wt/2, leaves a loaded machine as much as the package's
	// schedSlack.
	const wt = 3 * time.Second
	// The dial is given as long as a write: on a loaded machine a loopback
	// dial can take longer than the default 100 ms, and its failure would
	// end the test before the queue fills.
	a := listen(t, Config{Port: port, WriteTimeout: wt, DialTimeout: wt})
	f := Frame{Opcode: OpSendOnly, DstGID: GIDFromIPv4(addr), Payload: make([]byte, 64<<10)}
	var congested, unreachable error
	deadline := time.Now().Add(wt + schedSlack)
	for unreachable == nil && time.Now().Before(deadline) {
		start := time.Now()
		err := a.Send(&f)
		require.Less(t, time.Since(start), wt/2, "Send waited for the write")
		switch {
		case err == nil:
		case errors.Is(err, ErrCongested):
			congested = err
		default:
			unreachable = err
		}
	}
	require.Error(t, congested, "the queue never filled")
	require.Error(t, unreachable, "the stalled connection never failed")
	assert.ErrorIs(t, unreachable, ErrUnreachable)
	assert.ErrorIs(t, unreachable, os.ErrDeadlineExceeded)
	assert.NotZero(t, a.Stats().Congested)
}

func TestPeerClosedThenBack(t *testing.T) {
	noLeak(t)
	// The dial bound is generous: on a loaded CI machine a loopback dial can
	// take tens of milliseconds; the test is about the bound holding.
	const dial = 300 * time.Millisecond
	a := listen(t, Config{ForceTCP: true, DialTimeout: dial})
	got := make(collector, 16)
	b, err := Listen(Config{ForceTCP: true, Handler: got.handle})
	require.NoError(t, err)
	bAddr := b.Addr().Addr()
	f := Frame{Opcode: OpSendOnly, SrcGID: a.GID(), DstGID: b.GID()}
	require.NoError(t, a.Send(&f))
	got.next(t)
	require.NoError(t, b.Close())

	// The dead peer becomes visible: Send fails within a bounded time.
	deadline := time.Now().Add(2 * time.Second)
	for {
		start := time.Now()
		err = a.Send(&f)
		require.Less(t, time.Since(start), dial+schedSlack)
		if err != nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "Send to a closed peer kept succeeding")
		time.Sleep(time.Millisecond)
	}
	assert.ErrorIs(t, err, ErrUnreachable)

	// The peer comes back on the same address: Sends work again.
	b2 := listen(t, Config{ForceTCP: true, Addr: bAddr, Handler: got.handle})
	require.Eventually(t, func() bool { return a.Send(&f) == nil }, 2*time.Second, 5*time.Millisecond)
	assert.Equal(t, b2.GID(), got.next(t).DstGID)
	assert.Empty(t, got, "frames whose Send failed are never delivered")
}

func TestNoHandlerDrops(t *testing.T) {
	noLeak(t)
	for _, force := range []bool{false, true} {
		a := listen(t, Config{ForceTCP: force})
		b := listen(t, Config{ForceTCP: force})
		require.NoError(t, a.Send(&Frame{Opcode: OpSendOnly, SrcGID: a.GID(), DstGID: b.GID()}))
		require.Eventually(t, func() bool { return b.Stats().Dropped == 1 }, 2*time.Second, time.Millisecond)
		assert.Zero(t, b.Stats().Received)
	}
}

func TestDecodeErrorClosesStream(t *testing.T) {
	noLeak(t)
	b := listen(t, Config{ForceTCP: true, Handler: func(*Frame) {}})
	c, err := net.Dial("tcp4", b.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("GDW\x02\x00\x00\x00\x3c" + string(make([]byte, 52))))
	require.NoError(t, err)
	// A SEND_FIRST without payload is a valid frame (refused for its
	// source, not for its bytes); now send garbage.
	_, err = c.Write([]byte("NOT A FRAME!"))
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(2*time.Second)))
	_, err = c.Read(make([]byte, 1))
	assert.Error(t, err, "the port closes the stream")
	assert.Equal(t, uint64(1), b.Stats().DecodeErrors)
}

// order checks that frames from each sender arrive with PSNs 0, 1, 2, ...
type order struct {
	mu   sync.Mutex
	next map[uint32]uint32 // SrcQPN -> expected PSN
	bad  atomic.Int64
	n    atomic.Int64
}

func (o *order) handle(f *Frame) {
	o.mu.Lock()
	if o.next[f.SrcQPN] != f.PSN {
		o.bad.Add(1)
	}
	o.next[f.SrcQPN] = f.PSN + 1
	o.mu.Unlock()
	o.n.Add(1)
}

func TestOrderingAndConcurrentSenders(t *testing.T) {
	noLeak(t)
	for _, tc := range []struct {
		name             string
		force            bool
		senders, perSend int
	}{
		{"in-process 1x10000", false, 1, 10000},
		{"tcp 1x10000", true, 1, 10000},
		{"in-process 8x2000", false, 8, 2000},
		{"tcp 8x2000", true, 8, 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &order{next: map[uint32]uint32{}}
			b := listen(t, Config{ForceTCP: tc.force, Handler: o.handle})
			a := listen(t, Config{ForceTCP: tc.force})
			var wg sync.WaitGroup
			errs := make(chan error, tc.senders)
			for s := 0; s < tc.senders; s++ {
				wg.Add(1)
				go func(s int) {
					defer wg.Done()
					f := Frame{Opcode: OpWriteOnly, DstGID: b.GID(), SrcGID: a.GID(), SrcQPN: uint32(s), Payload: make([]byte, 8)}
					for i := 0; i < tc.perSend; i++ {
						f.PSN = uint32(i)
						if err := a.Send(&f); err != nil {
							errs <- err
							return
						}
					}
				}(s)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			total := int64(tc.senders * tc.perSend)
			require.Eventually(t, func() bool { return o.n.Load() == total }, 10*time.Second, time.Millisecond)
			assert.Zero(t, o.bad.Load(), "frames out of order")
			assert.Len(t, o.next, tc.senders)
		})
	}
}

func TestCloseWaitsForInProcessDelivery(t *testing.T) {
	noLeak(t)
	a := listen(t, Config{})
	b, err := Listen(Config{})
	require.NoError(t, err)
	entered := make(chan struct{})
	release := make(chan struct{})
	var done atomic.Bool
	b.SetHandler(func(*Frame) { close(entered); <-release; done.Store(true) })
	go a.Send(&Frame{Opcode: OpSendOnly, DstGID: b.GID()})
	<-entered
	closed := make(chan struct{})
	go func() { b.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while the handler was running")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-closed
	assert.True(t, done.Load())
	// After Close the GID is no longer served in-process: the request goes
	// to TCP, where nobody listens any more.
	err = sendUntilError(t, a, &Frame{Opcode: OpSendOnly, DstGID: b.GID()}, schedSlack, schedSlack)
	assert.True(t, errors.Is(err, ErrUnreachable), "%v", err)
}

// A port's destination hint answers as the registry does, also after a
// port of the process opened or closed, and a repeated lookup of one
// destination keeps the hint it has.
func TestLookupDstHint(t *testing.T) {
	a, err := Listen(Config{})
	require.NoError(t, err)
	defer a.Close()
	b, err := Listen(Config{})
	require.NoError(t, err)
	require.Same(t, b, a.lookupDst(b.GID()))
	h := a.lastDst.Load()
	require.Same(t, b, a.lookupDst(b.GID()))
	require.Same(t, h, a.lastDst.Load(), "a repeated lookup replaced the hint")
	gb := b.GID()
	require.NoError(t, b.Close())
	require.Nil(t, a.lookupDst(gb), "a closed port is still found through the hint")
	c, err := Listen(Config{})
	require.NoError(t, err)
	defer c.Close()
	require.Same(t, c, a.lookupDst(c.GID()))
	require.Nil(t, a.lookupDst(gb))
	require.Same(t, c, a.lookupDst(c.GID()))
}
