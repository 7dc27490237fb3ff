package emu

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/peerproc"
)

// The cross-process tests re-execute the test binary as the peer (env
// envPeer=1, running only TestPeerProcess). The two processes exchange
// GID, QPN, buffer address and rkey as "EMU ..." lines: the parent writes to
// the child's stdin and reads the child's stdout.
const envPeer = "GDAKI_EMU_TEST_PEER"

type peerInfo struct {
	gid  mlx5.GID
	qpn  uint32
	va   uint64
	rkey uint32
}

func (p peerInfo) String() string {
	return fmt.Sprintf("%s %d %d %d", hex.EncodeToString(p.gid[:]), p.qpn, p.va, p.rkey)
}

func parsePeer(fields []string) (peerInfo, error) {
	var p peerInfo
	if len(fields) != 4 {
		return p, fmt.Errorf("peer line has %d fields", len(fields))
	}
	g, err := hex.DecodeString(fields[0])
	if err != nil || len(g) != 16 {
		return p, fmt.Errorf("bad GID %q", fields[0])
	}
	copy(p.gid[:], g)
	_, err = fmt.Sscan(strings.Join(fields[1:], " "), &p.qpn, &p.va, &p.rkey)
	return p, err
}

func (e *endpoint) info() peerInfo {
	return peerInfo{gid: e.nic.GID(), qpn: e.qpn, va: e.va(0), rkey: e.mr.RKey()}
}

// connectRemote connects e to a QP known only by its info.
func (e *endpoint) connectRemote(p peerInfo, sendPSN, rcvPSN uint32) {
	ghost := &endpoint{qpn: p.qpn, nic: &NIC{gid: p.gid}}
	e.connect(ghost, sendPSN, rcvPSN)
}

// TestPeerProcess is the child's side; it is skipped in a normal run.
func TestPeerProcess(t *testing.T) {
	if os.Getenv(envPeer) != "1" {
		t.Skip("runs only as the peer process of the cross-process tests")
	}
	nic := newNIC(t, Config{Name: "emu-peer"})
	e := newEndpoint(t, nic, qpOpts{mtu: mlx5.MTU4096, dataLen: 1 << 20, ackTO: 16})
	fill(e.data[1<<19:], 0x5a) // the parent READs this half
	fmt.Printf("EMU HELLO %s\n", e.info())
	in := bufio.NewScanner(os.Stdin)
	var parent peerInfo
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) < 2 || f[0] != "EMU" {
			continue
		}
		switch f[1] {
		case "PEER":
			p, err := parsePeer(f[2:])
			must(t, err)
			parent = p
			e.connectRemote(p, 0x300, 0x100)
			fmt.Println("EMU READY")
		case "WRITEBACK":
			// Write 4 KiB of pattern 0x3c into the parent's buffer.
			fill(e.data[0:4096], 0x3c)
			e.post(mlx5.NewRDMAWrite(signaled, mlx5.RAddrSeg{Addr: parent.va, RKey: parent.rkey}, e.sge(0, 4096)))
			c := e.mustPoll()
			fmt.Printf("EMU WROTE %d\n", c.Syndrome)
		case "CHECK":
			// The parent wrote pattern seed over [off, off+n).
			var off, n, seed int
			fmt.Sscan(strings.Join(f[2:], " "), &off, &n, &seed)
			want := make([]byte, n)
			fill(want, byte(seed))
			if string(e.data[off:off+n]) == string(want) {
				fmt.Println("EMU OK")
			} else {
				fmt.Println("EMU BAD")
			}
		case "QUIT":
			return
		}
	}
}

// child is a running peer process (internal/peerproc, tag EMU).
type child struct {
	*peerproc.Proc
	info peerInfo
}

func startPeer(tb testing.TB, env ...string) *child {
	tb.Helper()
	c := &child{Proc: peerproc.Start(tb, "EMU", "TestPeerProcess", append([]string{envPeer + "=1"}, env...)...)}
	var err error
	c.info, err = parsePeer(c.Expect(tb, "HELLO"))
	must(tb, err)
	return c
}

func connectChild(tb testing.TB) (*endpoint, *child) {
	return connectChildWith(tb, qpOpts{mtu: mlx5.MTU4096, dataLen: 1 << 20, logSQ: 9, logCQ: 9, ackTO: 16})
}

// connectChildWith is connectChild with the local endpoint's options and
// the child's extra environment ("K=V").
func connectChildWith(tb testing.TB, o qpOpts, env ...string) (*endpoint, *child) {
	return connectChildOn(tb, Config{Name: "emu-parent"}, o, env...)
}

// connectChildOn is connectChildWith with this side's NIC made from cfg.
func connectChildOn(tb testing.TB, cfg Config, o qpOpts, env ...string) (*endpoint, *child) {
	c := startPeer(tb, env...)
	nic := newNIC(tb, cfg)
	e := newEndpoint(tb, nic, o)
	c.Send("PEER %s", e.info())
	c.Expect(tb, "READY")
	e.connectRemote(c.info, 0x100, 0x300)
	return e, c
}

// TestCrossProcess moves data both ways between two processes of one host
// over the TCP wire and has each side verify what it received.
func TestCrossProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second process")
	}
	e, c := connectChild(t)
	remote := func(off int) mlx5.RAddrSeg { return mlx5.RAddrSeg{Addr: c.info.va + uint64(off), RKey: c.info.rkey} }

	fill(e.data[0:200000], 7)
	e.post(mlx5.NewRDMAWrite(signaled, remote(1000), e.sge(0, 200000)))
	if cq := e.mustPoll(); cq.Opcode != mlx5.CQEReq {
		t.Fatalf("WRITE: %v %v", cq.Opcode, cq.Syndrome)
	}
	c.Send("CHECK 1000 200000 7")
	if r := c.Expect(t, "OK"); r == nil {
		t.Fatal("peer did not confirm")
	}

	e.post(mlx5.NewRDMARead(signaled, remote(1<<19), e.sge(300000, 100000)))
	if cq := e.mustPoll(); cq.Opcode != mlx5.CQEReq || cq.ByteCnt != 100000 {
		t.Fatalf("READ: %v %v", cq.Opcode, cq.Syndrome)
	}
	want := make([]byte, 1<<19)
	fill(want, 0x5a)
	if string(e.data[300000:400000]) != string(want[:100000]) {
		t.Fatal("READ data from the peer differs")
	}

	binary.LittleEndian.PutUint64(e.data[500000:], 0)
	for i := 0; i < 10; i++ {
		e.post(mlx5.NewAtomicFA(signaled, remote(8), 3, e.sge(500008, 8)))
		e.mustPoll()
	}
	e.post(mlx5.NewRDMARead(signaled, remote(8), e.sge(500000, 8)))
	e.mustPoll()
	if got := binary.LittleEndian.Uint64(e.data[500000:]); got != 30 {
		t.Fatalf("remote counter %d, want 30", got)
	}

	c.Send("WRITEBACK")
	if f := c.Expect(t, "WROTE"); f[0] != "0" {
		t.Fatalf("peer's WRITE completed with syndrome %s", f[0])
	}
	w := make([]byte, 4096)
	fill(w, 0x3c)
	if string(e.data[0:4096]) != string(w) {
		t.Fatal("the peer's WRITE did not land")
	}
}

// BenchmarkWrite8BCrossProcess: 8-byte RDMA WRITE message rate to a peer
// NIC in another process (TCP over loopback).
func BenchmarkWrite8BCrossProcess(b *testing.B) {
	e, c := connectChild(b)
	raddr := mlx5.RAddrSeg{Addr: c.info.va, RKey: c.info.rkey}
	writeRate(b, e, raddr, 1024, 64)
	b.ResetTimer()
	start := time.Now()
	writeRate(b, e, raddr, b.N, 64)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
}

// BenchmarkBurst64BCrossProcess is BenchmarkBurst64B between two processes,
// as put_bw runs: the requester here, its ring and data in (fake) device
// memory, the responder a peer process writing into a host-memory region,
// over the shared-memory link that two processes of a host use. The burst's
// WQEs are written with one lock of the fake GPU and its CQEs drained the
// same way, so that the poster (a GPU kernel, in put_bw) costs little beside
// the emulator. $GDAKI_EMU_PEER_CPUPROFILE, a file prefix, profiles the peer
// (as GDAKI_EMU_CPUPROFILE profiles a process); -test.cpuprofile profiles
// this side (with -test.benchtime Nx, one peer runs the timed bursts).
func BenchmarkBurst64BCrossProcess(b *testing.B) {
	const burst = 512
	g := useGPU(b, newFakeGPU())
	var env []string
	if p := os.Getenv("GDAKI_EMU_PEER_CPUPROFILE"); p != "" {
		env = append(env, EnvCPUProfile+"="+p)
	}
	x, c := connectChildWith(b, qpOpts{gpu: g, logSQ: 10, logCQ: 10, dataLen: burst * 64}, env...)
	fill(x.data[:burst*64], 3)
	run := func(n int) {
		for done := 0; done < n; done += burst {
			x.lock()
			for j := 0; j < burst; j++ {
				w := mlx5.NewRDMAWrite(signaled, mlx5.RAddrSeg{Addr: c.info.va + uint64(j*64), RKey: c.info.rkey}, x.sge(j*64, 64))
				w.Ctrl.WQEIndex, w.Ctrl.QPN = x.pi, x.qpn
				k, err := w.Encode(x.sq)
				if err != nil {
					x.unlock()
					b.Fatal(err)
				}
				x.pi += uint16(k)
			}
			x.unlock()
			x.ring(mlx5.CtrlSeg{})
			if err := x.drain(burst, 10*time.Second); err != nil {
				b.Fatal(err)
			}
		}
	}
	run(8 * burst) // warm up (the shared-memory link comes up)
	b.ResetTimer()
	start := time.Now()
	run(b.N)
	b.ReportMetric(float64((b.N+burst-1)/burst*burst)/time.Since(start).Seconds(), "msgs/s")
	b.StopTimer()
	c.Send("CHECK 0 %d 3", burst*64)
	if r := c.Expect(b, "OK"); r == nil {
		b.Fatal("the peer's buffer does not hold the burst's bytes")
	}
}

// drain consumes n successful requester CQEs, taking every CQE there is
// with one lock of the fake GPU (a kernel's threads polling their own).
func (e *endpoint) drain(n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	log := uint(e.o.logCQ)
	for spins := 0; n > 0; spins++ {
		e.lock()
		for n > 0 {
			slot := e.cqRing[int(e.ci&(1<<log-1))*64:][:64]
			if !mlx5.CQEOwned(slot[63], e.ci, log) {
				break
			}
			c, err := mlx5.DecodeCQE(slot)
			if err != nil || c.Opcode != mlx5.CQEReq {
				e.unlock()
				return fmt.Errorf("CQE %d: %v %v %v", e.ci, err, c.Opcode, c.Syndrome)
			}
			e.ci++
			n--
		}
		binary.BigEndian.PutUint32(e.cqDBR[0:4], e.ci&0xffffff)
		e.unlock()
		if n > 0 {
			runtime.Gosched()
			if spins%1024 == 1023 && time.Now().After(deadline) {
				return errTimeout
			}
		}
	}
	return nil
}
