package emu

import (
	"errors"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// Class 1: once MR dereg, UMEM dereg or DESTROY has returned, the NIC never
// touches the memory again (the tests unmap it right after: an access
// would kill the test binary with SIGSEGV), and what was in flight fails
// with the error a ConnectX reports.

const bigLen = 128 << 20

// waitNonZero spins until b[i] != 0: the first bytes of a transfer that x
// requested landed. A completion of x before that fails the test with it.
func waitNonZero(t *testing.T, x *endpoint, b []byte, i int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for b[i] == 0 {
		if c, ok := x.tryPoll(); ok {
			t.Fatalf("the transfer ended before its first bytes landed: %v %v counter %d", c.Opcode, c.Syndrome, c.WQECounter)
		}
		if time.Now().After(deadline) {
			t.Fatal("the transfer never started")
		}
		runtime.Gosched()
	}
}

// unmap releases b now (the harness's own munmap at cleanup then fails
// harmlessly).
func unmap(t *testing.T, b []byte) {
	t.Helper()
	if err := syscall.Munmap(b); err != nil {
		t.Fatalf("munmap: %v", err)
	}
}

// nicPair returns two NICs, in-process or over TCP.
func nicPair(t *testing.T, tcp bool) (*NIC, *NIC) {
	return nicPairOn(t, tcp, nil)
}

// nicPairOn is nicPair with the NICs' timers on clk (nil: the wall clock).
func nicPairOn(t *testing.T, tcp bool, clk clock) (*NIC, *NIC) {
	if !tcp {
		return newNIC(t, Config{Name: "emuA", clock: clk}), newNIC(t, Config{Name: "emuB", clock: clk})
	}
	return newNIC(t, Config{Name: "emuTa", Wire: wire.Config{ForceTCP: true}, clock: clk}),
		newNIC(t, Config{Name: "emuTb", Wire: wire.Config{ForceTCP: true}, clock: clk})
}

func forBothPaths(t *testing.T, f func(t *testing.T, tcp bool)) {
	for _, tcp := range []bool{false, true} {
		name := "in-process"
		if tcp {
			name = "tcp"
		}
		t.Run(name, func(t *testing.T) { f(t, tcp) })
	}
}

// TestDeregMRDuringTransfer: an MR is deregistered and unmapped while a
// large transfer is using it, on either path:
//   - the responder's MR while a WRITE lands in it: the requester gets
//     REMOTE_ACCESS_ERR (never SUCCESS) and the responder QP goes to ERR;
//   - the requester's source MR while its WRITE is being sent:
//     LOCAL_PROT_ERR, and no read of the unmapped pages;
//   - the MR a READ scatters into while the response data arrives:
//     LOCAL_PROT_ERR, and no write to the unmapped pages.
func TestDeregMRDuringTransfer(t *testing.T) {
	for _, c := range []struct {
		name      string
		read      bool // READ (the responder's data lands at the requester) or WRITE
		responder bool // the responder's MR goes, or the requester's
		syn       mlx5.Syndrome
	}{
		{"responder_write", false, true, mlx5.SyndromeRemoteAccessErr},
		{"requester_write", false, false, mlx5.SyndromeLocalProtErr},
		{"requester_read", true, false, mlx5.SyndromeLocalProtErr},
	} {
		t.Run(c.name, func(t *testing.T) {
			forBothPaths(t, func(t *testing.T, tcp bool) {
				// A small WRITE each way first, on the wall clock, so that
				// both directions of the link are up (a frame sent while
				// a TCP connection is dialled may be dropped, and sent
				// again after an ACK timeout). Then the NICs' clock stands
				// still: no ACK timeout ends the 128 MiB transfer, however
				// slowly a loaded machine runs it; the deregistration does.
				clk := newRunningClock()
				a, b := nicPairOn(t, tcp, clk)
				o := qpOpts{mtu: mlx5.MTU4096, dataLen: bigLen}
				x, y := pair(t, a, b, o, o)
				for _, e := range [][2]*endpoint{{x, y}, {y, x}} {
					e[0].post(mlx5.NewRDMAWrite(signaled, e[1].raddr(bigLen-8), e[0].sge(0, 8)))
					if c, err := e[0].poll(time.Minute); err != nil || c.Opcode != mlx5.CQEReq {
						t.Fatalf("the WRITE before the transfer: %v %v %v", err, c.Opcode, c.Syndrome)
					}
				}
				clk.freeze()
				src, dst, wr := x, y, mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, bigLen))
				if c.read {
					src, dst, wr = y, x, mlx5.NewRDMARead(signaled, y.raddr(0), x.sge(0, bigLen))
				}
				fill(src.data, 1)
				src.data[0] = 0xff
				idx := x.post(wr)
				waitNonZero(t, x, dst.data, 0)
				gone := x
				if c.responder {
					gone = y
				}
				must(t, gone.mr.Dereg())
				unmap(t, gone.data)
				e := x.mustPoll()
				if e.Opcode != mlx5.CQEReqErr || e.Syndrome != c.syn || e.WQECounter != idx {
					t.Fatalf("%v %v counter %d; want REQ_ERR %v counter %d", e.Opcode, e.Syndrome, e.WQECounter, c.syn, idx)
				}
				if s := y.queryQP().State; c.responder && s != mlx5.QPStateERR {
					t.Fatalf("responder QP state %v after the access error, want ERR", s)
				}
			})
		})
	}
}

// TestDeregWaitsForInFlightAccess: the responder's MR (in GPU memory,
// reached through the seam) is deregistered while the NIC is in the middle
// of a copy out of it for a READ response. Dereg returns only after that
// copy has finished, no copy of the region starts afterwards, and the READ
// completes with an error.
func TestDeregWaitsForInFlightAccess(t *testing.T) {
	forBothPaths(t, func(t *testing.T, tcp bool) {
		g := useGPU(t, newFakeGPU())
		a, b := nicPair(t, tcp)
		o := qpOpts{mtu: mlx5.MTU4096, dataLen: 8 << 20, ackTO: 12, retry: 2}
		oy := o
		oy.gpu = g
		x, y := pair(t, a, b, o, oy)
		lo := uintptr(y.va(0))
		hi := lo + uintptr(len(y.data))
		started := make(chan struct{})
		var first atomic.Bool
		var deregging, freed atomic.Bool
		var copyDone atomic.Int64
		h := func(write bool, addr uintptr, n int) {
			if addr < lo || addr >= hi {
				return
			}
			if freed.Load() {
				t.Errorf("the NIC accessed 0x%x+%d after Dereg returned", addr, n)
			}
			if !write && first.CompareAndSwap(false, true) {
				close(started)
				for !deregging.Load() {
					runtime.Gosched()
				}
				time.Sleep(20 * time.Millisecond) // Dereg is waiting now, or has wrongly returned
				copyDone.Store(time.Now().UnixNano())
			}
		}
		g.hook.Store(&h)
		defer g.hook.Store(nil)
		idx := x.post(mlx5.NewRDMARead(signaled, y.raddr(0), x.sge(0, uint32(len(y.data)))))
		<-started
		deregging.Store(true)
		must(t, y.mr.Dereg())
		returned := time.Now().UnixNano()
		freed.Store(true)
		if d := copyDone.Load(); d == 0 || returned < d {
			t.Fatalf("Dereg returned while the NIC was still copying out of the region")
		}
		c := x.mustPoll()
		if c.Opcode != mlx5.CQEReqErr || c.WQECounter != idx {
			t.Fatalf("READ from a deregistered MR: %v %v counter %d; want an error CQE", c.Opcode, c.Syndrome, c.WQECounter)
		}
		t.Logf("requester: %v", c.Syndrome)
	})
}

// TestDestroyThenDeregUMEMUnderTraffic: a peer keeps writing to a QP while
// it is destroyed and its rings' UMEM deregistered and unmapped: nothing
// touches the rings afterwards, and the peer ends with an error.
func TestDestroyThenDeregUMEMUnderTraffic(t *testing.T) {
	forBothPaths(t, func(t *testing.T, tcp bool) {
		a, b := nicPair(t, tcp)
		x, y := pair(t, a, b, qpOpts{logSQ: 8, logCQ: 10, ackTO: 10, retry: 1}, qpOpts{rq: true, logRQ: 4})
		for i := 0; i < 16; i++ {
			y.postRecv(y.va(0), 64)
		}
		stop := make(chan struct{})
		done := make(chan mlx5.CQE)
		go func() {
			for {
				x.post(mlx5.NewSend(signaled, x.sge(0, 8)))
				c, err := x.poll(5 * time.Second)
				if err != nil || c.Opcode != mlx5.CQEReq {
					done <- c
					return
				}
				select {
				case <-stop:
					done <- c
					return
				default:
				}
			}
		}()
		time.Sleep(5 * time.Millisecond)
		must(t, y.qp.Destroy())
		must(t, y.cq.Destroy())
		must(t, y.mr.Dereg())
		must(t, y.um.Dereg())
		unmap(t, y.mem)
		unmap(t, y.data)
		time.Sleep(20 * time.Millisecond)
		close(stop)
		c := <-done
		t.Logf("requester's last CQE: %v %v", c.Opcode, c.Syndrome)
	})
}

// TestHugeRegistrationRefused: a registration of 2^62 bytes (or anything
// above max_mr_size, 2^46) is refused with EINVAL, without panicking and
// without leaving a reference on the PD.
func TestHugeRegistrationRefused(t *testing.T) {
	n := newNIC(t, Config{Name: "emuR"})
	dev, err := n.Open()
	must(t, err)
	p, err := dev.AllocPD()
	must(t, err)
	mem := hostMem(t, 4096)
	for _, size := range []uint64{1 << 62, 1<<46 + 1, 1<<64 - 4096} {
		if _, err := dev.RegMR(p, addrOf(mem), size, 0, mlx5.AccessLocalWrite); !errors.Is(err, syscall.EINVAL) {
			t.Fatalf("RegMR of %d bytes: %v, want EINVAL", size, err)
		}
		if _, err := dev.RegUMEM(addrOf(mem), size, mlx5.AccessLocalWrite); !errors.Is(err, syscall.EINVAL) {
			t.Fatalf("RegUMEM of %d bytes: %v, want EINVAL", size, err)
		}
	}
	// A large range that is not mapped is EFAULT, found without a vector
	// of one byte per page.
	if _, err := dev.RegMR(p, addrOf(mem), 1<<40, 0, mlx5.AccessLocalWrite); !errors.Is(err, syscall.EFAULT) {
		t.Fatalf("RegMR of an unmapped TiB: %v, want EFAULT", err)
	}
	must(t, p.Dealloc())
	must(t, dev.Close())
}

// TestFatalNakAfterGoBack: the ACK timer fired and go-back-N rewound the
// send index while the responder still had the first transmission's frames
// to process; its NAK for a later packet of the message (here the last
// one, after a deregistration) must end the WQE with REMOTE_ACCESS_ERR,
// not be ignored until the retries run out (the CI flake of
// TestDeregMRDuringTransfer/responder_write over TCP). Manual NICs make the order
// exact: transmit, timeout and rewind, then the NAK.
func TestFatalNakAfterGoBack(t *testing.T) {
	for _, c := range []struct {
		name     string
		code     wire.NakCode
		syndrome mlx5.Syndrome
	}{
		{"remote access", wire.NakRemoteAccess, mlx5.SyndromeRemoteAccessErr},
		{"invalid request", wire.NakInvalidRequest, mlx5.SyndromeRemoteInvalReqErr},
		{"remote operation", wire.NakRemoteOperation, mlx5.SyndromeRemoteOpErr},
	} {
		t.Run(c.name, func(t *testing.T) {
			na := newManualNIC(t, Config{Name: "emuNa"})
			nb := newManualNIC(t, Config{Name: "emuNb"})
			o := qpOpts{mtu: mlx5.MTU256, ackTO: 1, retry: 7}
			x, y := pair(t, na, nb, o, o)
			// The responder drops what it gets: the NAK below stands for
			// its answer to the first transmission.
			must(t, y.modify(mlx5.NewModifyQPIn(mlx5.Op2ERR, y.qpn)))
			const n = 4 * 256
			before := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 256)))
			idx := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, n)))
			now := time.Now()
			na.round(now) // PSN 0x100 (the first WRITE), 0x101..0x104 (the second)
			qx := x.qpObj()
			qx.mu.Lock()
			hp, ackTO := qx.req.hpsn, qx.ackTimeout
			qx.mu.Unlock()
			if hp != 0x105 {
				t.Fatalf("after the first transmission hpsn %#x, want 0x105", hp)
			}
			now = now.Add(2 * ackTO)
			na.round(now) // the ACK timer: go-back-N to the first WRITE
			qx.mu.Lock()
			rewound := qx.req.send == qx.req.ci
			qx.mu.Unlock()
			if !rewound {
				t.Fatal("the ACK timeout did not rewind the send index")
			}
			na.deliver(&wire.Frame{Opcode: wire.OpAck, SrcGID: wire.GID(nb.GID()), DstGID: wire.GID(na.GID()),
				SrcQPN: y.qpn, DstQPN: x.qpn, PSN: 0x104, AETH: wire.AETH{Syndrome: wire.NakSyndrome(c.code)}})
			na.round(now)
			first, ok := x.tryPoll()
			if !ok || first.Opcode != mlx5.CQEReq || first.WQECounter != before {
				t.Fatalf("first WRITE (implicitly acknowledged by the NAK): %+v %v; want a success CQE for %d", first, ok, before)
			}
			cqe, ok := x.tryPoll()
			if !ok {
				t.Fatal("the NAK was ignored: no completion for the NAKed WRITE")
			}
			if cqe.Opcode != mlx5.CQEReqErr || cqe.Syndrome != c.syndrome || cqe.WQECounter != idx {
				t.Fatalf("NAKed WRITE: %v %v counter %d; want REQ_ERR %v counter %d", cqe.Opcode, cqe.Syndrome, cqe.WQECounter, c.syndrome, idx)
			}
			if s := x.queryQP().State; s != mlx5.QPStateERR {
				t.Fatalf("requester state %v after a fatal NAK, want ERR", s)
			}
		})
	}
}
