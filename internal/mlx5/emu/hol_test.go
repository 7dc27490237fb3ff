package emu

import (
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire/wiretest"
)

// Class 2: a peer that stops reading, never answers or is gone costs its
// requester exactly the configured transport retry budget, and nothing else
// on the NIC waits for it.

// holTO and holRetry give a budget of (3+1) x 4.096 us x 2^16 = 1.07 s of
// the NIC's clock.
const (
	holTO    = 16
	holRetry = 3
)

// retryBudget is (retry_cnt+1) x 4.096 us x 2^timeout.
func retryBudget(retry, timeout uint8) time.Duration {
	return time.Duration(retry+1) * time.Duration(4096<<timeout) * time.Nanosecond
}

// stepClock is a NIC clock (Config.clock) that moves only when the test
// advances it: the NIC's timers then expire after so much of the test's
// time, however late a loaded machine runs the engine's rounds.
type stepClock struct {
	mu      sync.Mutex
	t       time.Time
	running bool   // the wall clock's time until freeze
	ended   uint64 // engine rounds ended
}

func newStepClock() *stepClock { return &stepClock{t: time.Now()} }

// newRunningClock is a stepClock that runs with the wall clock until
// freeze stops it.
func newRunningClock() *stepClock { return &stepClock{running: true} }

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		return time.Now()
	}
	return c.t
}

// freeze stops a running clock at the wall clock's time.
func (c *stepClock) freeze() {
	c.mu.Lock()
	if c.running {
		c.t, c.running = time.Now(), false
	}
	c.mu.Unlock()
}

func (c *stepClock) Ran(time.Time) {
	c.mu.Lock()
	c.ended++
	c.mu.Unlock()
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *stepClock) rounds() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

// settle returns once the engine has run a whole round that began after
// the call, so at the clock's current time and after everything the test
// did before (a post, an advance): the second round that ends from here.
func (c *stepClock) settle(t testing.TB) {
	t.Helper()
	want := c.rounds() + 2
	deadline := time.Now().Add(time.Minute)
	for c.rounds() < want {
		if time.Now().After(deadline) {
			t.Fatalf("the engine ran no round in a minute")
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// blackHole listens on addr, on a TCP port reserved for the test
// (wiretest.ReservePort), accepts connections and never reads. It returns
// the port: NICs that reach the black hole must listen on it too, as the
// wire dials a peer on the dialling port's own number.
func blackHole(t *testing.T, addr netip.Addr) uint16 {
	t.Helper()
	port := wiretest.ReservePort(t)
	ln, err := net.Listen("tcp4", netip.AddrPortFrom(addr, port).String())
	must(t, err)
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	return port
}

// healthy runs n 8-byte WRITEs on x, one at a time, each to complete
// successfully.
func healthy(t *testing.T, what string, x *endpoint, raddr mlx5.RAddrSeg, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		x.post(mlx5.NewRDMAWrite(signaled, raddr, x.sge(0, 8)))
		c, err := x.poll(30 * time.Second)
		if err != nil || c.Opcode != mlx5.CQEReq {
			t.Fatalf("%s: healthy QP's WRITE %d: %v %v %v", what, i, err, c.Opcode, c.Syndrome)
		}
	}
}

// holSteps is the test clock's step: an ACK timeout is holSteps steps.
const holSteps = 32

// timeToError posts a signaled WRITE of n bytes (and two small WRITEs after
// it) on x, whose NIC runs on clk, and advances clk one step at a time,
// each step taken by an engine round, until the first WRITE completes with
// an error CQE, which must be TRANSPORT_RETRY_EXC; the two after it must
// be flushed. It returns the clock's time from the post to that CQE.
// during, if not nil, runs with the clock stopped at the post and again
// halfway through the budget.
func timeToError(t *testing.T, clk *stepClock, x *endpoint, raddr mlx5.RAddrSeg, n int, during func()) time.Duration {
	t.Helper()
	step := time.Duration(4096<<x.o.ackTO) * time.Nanosecond / holSteps
	idx := x.post(mlx5.NewRDMAWrite(signaled, raddr, x.sge(0, uint32(n))))
	x.post(mlx5.NewRDMAWrite(signaled, raddr, x.sge(0, 8)))
	x.post(mlx5.NewRDMAWrite(signaled, raddr, x.sge(0, 8)))
	clk.settle(t) // the WQE has started: its ACK timer runs from here
	tries := int(x.o.retry) + 1
	for k := 0; k <= 2*tries*holSteps; k++ {
		if k > 0 {
			clk.advance(step)
			clk.settle(t)
		}
		if c, ok := x.tryPoll(); ok {
			if c.Opcode != mlx5.CQEReqErr || c.Syndrome != mlx5.SyndromeTransportRetryExcErr || c.WQECounter != idx {
				t.Fatalf("got %v %v counter %d; want TRANSPORT_RETRY_EXC_ERR counter %d", c.Opcode, c.Syndrome, c.WQECounter, idx)
			}
			for i := 0; i < 2; i++ {
				if c := x.mustPoll(); c.Syndrome != mlx5.SyndromeWRFlushErr {
					t.Fatalf("after the error: %v %v", c.Opcode, c.Syndrome)
				}
			}
			return time.Duration(k) * step
		}
		if during != nil && (k == 0 || k == tries*holSteps/2) {
			during()
		}
	}
	t.Fatalf("no error CQE after twice the retry budget of the NIC's clock")
	return 0
}

// checkBudget fails unless el, on the NIC's clock, is within x's retry
// budget and one step of the clock per ACK timeout more: a timeout may
// restart one step late, in the round after the one that saw it expire.
func checkBudget(t *testing.T, what string, x *endpoint, el time.Duration) {
	t.Helper()
	b := retryBudget(x.o.retry, x.o.ackTO)
	slack := b / holSteps
	t.Logf("%s: TRANSPORT_RETRY_EXC after %v of the NIC's clock; budget (%d+1) x 4.096 us x 2^%d = %v",
		what, el, x.o.retry, x.o.ackTO, b)
	if el < b {
		t.Errorf("%s: error after %v, before the budget %v: retries not honoured", what, el, b)
	}
	if el > b+slack {
		t.Errorf("%s: error after %v, beyond the budget %v + %v", what, el, b, slack)
	}
}

// TestHeadOfLineBlackHole: a QP whose peer accepts TCP connections and never
// reads gets TRANSPORT_RETRY_EXC within its budget, with a small message and
// with 64 MiB queued, while a QP to a healthy peer on the same NIC keeps
// completing WRITEs: with the NIC's clock stopped before the stuck QP's
// budget, the healthy QP's WRITEs complete all the same, so none of them
// waits for the stuck QP.
func TestHeadOfLineBlackHole(t *testing.T) {
	// The black hole's address is fixed; its TCP port, and with it the
	// NICs', is this run's own, so another run beside this one has its own
	// black hole.
	hole := netip.MustParseAddr("127.250.251.1")
	port := blackHole(t, hole)
	clk := newStepClock()
	a := newNIC(t, Config{Name: "emuHa", Wire: wire.Config{Port: port, ForceTCP: true}, clock: clk})
	b := newNIC(t, Config{Name: "emuHb", Wire: wire.Config{Port: port, ForceTCP: true}})
	hx, hy := pair(t, a, b, qpOpts{}, qpOpts{})
	x := newEndpoint(t, a, qpOpts{ackTO: holTO, retry: holRetry, mtu: mlx5.MTU4096, dataLen: 64 << 20})
	x.connectRemote(peerInfo{gid: mlx5.GID(wire.GIDFromIPv4(hole)), qpn: 0x1234}, 1, 1)
	raddr := mlx5.RAddrSeg{Addr: 0x10000, RKey: 0x5500}

	during := func(what string) func() {
		return func() { healthy(t, what, hx, hy.raddr(0), 50) }
	}
	checkBudget(t, "black hole, 8 bytes", x, timeToError(t, clk, x, raddr, 8, during("8 bytes")))
	must(t, x.modify(mlx5.NewModifyQPIn(mlx5.Op2RST, x.qpn)))
	x.pi = 0 // 2RST resets the SQ counters (software resets its PI and DBR); the CQ goes on
	clear(x.qpDBR)
	x.connectRemote(peerInfo{gid: mlx5.GID(wire.GIDFromIPv4(hole)), qpn: 0x1234}, 1, 1)
	checkBudget(t, "black hole, 64 MiB queued", x, timeToError(t, clk, x, raddr, 64<<20, during("64 MiB queued")))
	if st := a.port.Stats(); st.Congested == 0 {
		t.Errorf("no frame was ever dropped for congestion: %+v", st)
	}
}

// TestHeadOfLineDeadPeer: nothing listens at the peer's address.
func TestHeadOfLineDeadPeer(t *testing.T) {
	// Nothing listens on the reserved port but this test's NIC, so the
	// peer's address on it is dead whatever else runs on the machine.
	dead := netip.MustParseAddr("127.250.251.2")
	clk := newStepClock()
	a := newNIC(t, Config{Name: "emuHc", Wire: wire.Config{Port: wiretest.ReservePort(t)}, clock: clk})
	x := newEndpoint(t, a, qpOpts{ackTO: holTO, retry: holRetry, mtu: mlx5.MTU4096, dataLen: 64 << 20})
	x.connectRemote(peerInfo{gid: mlx5.GID(wire.GIDFromIPv4(dead)), qpn: 0x1234}, 1, 1)
	raddr := mlx5.RAddrSeg{Addr: 0x10000, RKey: 0x5500}
	checkBudget(t, "dead peer, 64 MiB queued", x, timeToError(t, clk, x, raddr, 64<<20, nil))
}

// TestHeadOfLineStoppedPeer: the peer is a process stopped with SIGSTOP
// (its kernel still accepts connections; nobody reads them).
func TestHeadOfLineStoppedPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second process")
	}
	clk := newStepClock()
	e, c := connectChildOn(t, Config{Name: "emu-parent", clock: clk}, qpOpts{mtu: mlx5.MTU4096, dataLen: 64 << 20, logSQ: 9, logCQ: 9, ackTO: holTO, retry: holRetry})
	raddr := mlx5.RAddrSeg{Addr: c.info.va, RKey: c.info.rkey}
	// A healthy exchange first: the connection exists and works.
	e.post(mlx5.NewRDMAWrite(signaled, raddr, e.sge(0, 4096)))
	if cq := e.mustPoll(); cq.Opcode != mlx5.CQEReq {
		t.Fatalf("WRITE before the stop: %v %v", cq.Opcode, cq.Syndrome)
	}
	// Stop, not a bare SIGSTOP: a child thread still running when kill
	// returns could take the first packet of the WRITE and answer it (with
	// REMOTE_ACCESS_ERR, as 64 MiB exceeds the child's buffer). The
	// child's cleanup resumes it before telling it to quit.
	c.Stop(t)
	checkBudget(t, "stopped peer, 64 MiB queued", e, timeToError(t, clk, e, raddr, 64<<20, nil))
}
