package emu

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire/wiretest"
)

// TestErrorCQEs checks every requester error syndrome, the QP's move to
// ERR and the flush of the WQEs posted after the failing one.
func TestErrorCQEs(t *testing.T) {
	a, b := twoNICs(t)
	cases := []struct {
		name  string
		ox    qpOpts
		oy    qpOpts
		setup func(t *testing.T, x, y *endpoint) mlx5.WQE
		want  mlx5.Syndrome
		opc   mlx5.WQEOpcode
	}{
		{name: "local_length", want: mlx5.SyndromeLocalLengthErr, opc: mlx5.WQEOpRDMAWrite,
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				return mlx5.NewRDMAWrite(signaled, y.raddr(0), mlx5.DataSeg{ByteCount: 1<<31 - 1, LKey: x.mr.LKey(), Addr: x.va(0)})
			}},
		{name: "local_prot_bad_lkey", want: mlx5.SyndromeLocalProtErr, opc: mlx5.WQEOpRDMAWrite,
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				s := x.sge(0, 8)
				s.LKey ^= 0x55
				return mlx5.NewRDMAWrite(signaled, y.raddr(0), s)
			}},
		{name: "local_prot_wrong_pd", want: mlx5.SyndromeLocalProtErr, opc: mlx5.WQEOpRDMAWrite,
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				pd2, err := x.dev.AllocPD()
				must(t, err)
				mr2, err := x.dev.RegMR(pd2, addrOf(x.data), 4096, uint64(addrOf(x.data)), mlx5.AccessLocalWrite)
				must(t, err)
				t.Cleanup(func() { mr2.Dereg(); pd2.Dealloc() })
				return mlx5.NewRDMAWrite(signaled, y.raddr(0), mlx5.DataSeg{ByteCount: 8, LKey: mr2.LKey(), Addr: x.va(0)})
			}},
		{name: "local_prot_out_of_bounds", want: mlx5.SyndromeLocalProtErr, opc: mlx5.WQEOpRDMAWrite,
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				return mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(len(x.data)-4, 8))
			}},
		{name: "local_prot_read_into_readonly", want: mlx5.SyndromeLocalProtErr, opc: mlx5.WQEOpRDMARead,
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				mr2, err := x.dev.RegMR(x.pd, addrOf(x.data), 4096, 0x1000000, 0)
				must(t, err)
				t.Cleanup(func() { mr2.Dereg() })
				return mlx5.NewRDMARead(signaled, y.raddr(0), mlx5.DataSeg{ByteCount: 8, LKey: mr2.LKey(), Addr: 0x1000000})
			}},
		{name: "remote_access_bad_rkey", want: mlx5.SyndromeRemoteAccessErr, opc: mlx5.WQEOpRDMAWrite,
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				r := y.raddr(0)
				r.RKey++
				return mlx5.NewRDMAWrite(signaled, r, x.sge(0, 8))
			}},
		{name: "remote_access_out_of_bounds", want: mlx5.SyndromeRemoteAccessErr, opc: mlx5.WQEOpRDMAWrite,
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				return mlx5.NewRDMAWrite(signaled, y.raddr(len(y.data)-4), x.sge(0, 8))
			}},
		{name: "remote_access_missing_right", want: mlx5.SyndromeRemoteAccessErr, opc: mlx5.WQEOpRDMAWrite,
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				mr2, err := y.dev.RegMR(y.pd, addrOf(y.data), 4096, 0x2000000, mlx5.AccessLocalWrite|mlx5.AccessRemoteRead)
				must(t, err)
				t.Cleanup(func() { mr2.Dereg() })
				return mlx5.NewRDMAWrite(signaled, mlx5.RAddrSeg{Addr: 0x2000000, RKey: mr2.RKey()}, x.sge(0, 8))
			}},
		{name: "remote_access_qp_without_rwe", want: mlx5.SyndromeRemoteAccessErr, opc: mlx5.WQEOpRDMAWrite,
			oy: qpOpts{noAccess: true},
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				return mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 8))
			}},
		{name: "remote_access_atomic_without_rae", want: mlx5.SyndromeRemoteAccessErr, opc: mlx5.WQEOpAtomicFA,
			oy: qpOpts{noAccess: true},
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				return mlx5.NewAtomicFA(signaled, y.raddr(0), 1, x.sge(0, 8))
			}},
		{name: "remote_invalid_send_to_zero_rq", want: mlx5.SyndromeRemoteInvalReqErr, opc: mlx5.WQEOpSend,
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				return mlx5.NewSend(signaled, x.sge(0, 8))
			}},
		{name: "remote_invalid_misaligned_atomic", want: mlx5.SyndromeRemoteInvalReqErr, opc: mlx5.WQEOpAtomicCS,
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				return mlx5.NewAtomicCS(signaled, y.raddr(4), 1, 0, x.sge(0, 8))
			}},
		{name: "remote_invalid_send_too_long", want: mlx5.SyndromeRemoteInvalReqErr, opc: mlx5.WQEOpSend,
			oy: qpOpts{rq: true, logRQ: 2},
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				y.postRecv(y.va(0), 16)
				return mlx5.NewSend(signaled, x.sge(0, 64))
			}},
		{name: "rnr_retry_exceeded", want: mlx5.SyndromeRNRRetryExcErr, opc: mlx5.WQEOpSend,
			ox: qpOpts{rnrRetry: 2}, oy: qpOpts{rq: true, logRQ: 2, minRNR: 1},
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				return mlx5.NewSend(signaled, x.sge(0, 8))
			}},
		{name: "retry_exceeded_peer_not_ready", want: mlx5.SyndromeTransportRetryExcErr, opc: mlx5.WQEOpRDMAWrite,
			ox: qpOpts{ackTO: 8, retry: 2},
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				must(t, y.modify(mlx5.NewModifyQPIn(mlx5.Op2RST, y.qpn)))
				return mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 8))
			}},
		{name: "local_qp_op_bad_opcode", want: mlx5.SyndromeLocalQPOpErr, opc: 0x1b,
			setup: func(t *testing.T, x, y *endpoint) mlx5.WQE {
				// LOCAL_INVAL is not executed by the emulated RC SQ.
				w := mlx5.NewNOP(signaled)
				w.Ctrl.Opcode = 0x1b
				return w
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x, y := pair(t, a, b, tc.ox, tc.oy)
			w := tc.setup(t, x, y)
			var idx uint16
			if w.Ctrl.Opcode == 0x1b {
				// The builders refuse an unsupported opcode: write the ctrl by hand.
				w.Ctrl.WQEIndex, w.Ctrl.QPN, w.Ctrl.DS = x.pi, x.qpn, 1
				w.Ctrl.Put(x.sq[int(x.pi)*64%len(x.sq):])
				idx = x.pi
				x.pi++
				x.ring(w.Ctrl)
			} else {
				idx = x.post(w)
			}
			// Two more WQEs, posted after the failing one: both flushed.
			f1 := x.post(mlx5.NewNOP(mlx5.WQEHead{}))
			f2 := x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{1}))
			c := x.mustPoll()
			if c.Opcode != mlx5.CQEReqErr || c.Syndrome != tc.want || c.WQECounter != idx || c.QPN != x.qpn || c.WQEOpcode != tc.opc {
				t.Fatalf("got %v syndrome %v counter %d qpn 0x%x op %v; want REQ_ERR %v counter %d op %v",
					c.Opcode, c.Syndrome, c.WQECounter, c.QPN, c.WQEOpcode, tc.want, idx, tc.opc)
			}
			for _, want := range []uint16{f1, f2} {
				c := x.mustPoll()
				if c.Opcode != mlx5.CQEReqErr || c.Syndrome != mlx5.SyndromeWRFlushErr || c.WQECounter != want {
					t.Fatalf("flush: got %v %v counter %d, want WR_FLUSH_ERR counter %d", c.Opcode, c.Syndrome, c.WQECounter, want)
				}
			}
			if s := x.queryQP().State; s != mlx5.QPStateERR {
				t.Fatalf("QP state %v after the error, want ERR", s)
			}
			// A WQE posted in ERR is flushed too.
			f3 := x.post(mlx5.NewNOP(mlx5.WQEHead{}))
			if c := x.mustPoll(); c.Syndrome != mlx5.SyndromeWRFlushErr || c.WQECounter != f3 {
				t.Fatalf("post in ERR: %v %v counter %d", c.Opcode, c.Syndrome, c.WQECounter)
			}
		})
	}
}

// TestRetryExceededDeadPeer proves a requester whose peer is unreachable
// completes with TRANSPORT_RETRY_EXC after its timeout and retry count, on
// the NIC's clock.
func TestRetryExceededDeadPeer(t *testing.T) {
	// a listens on a TCP port reserved for this test, where nothing else
	// listens: the GID below is then nobody's on it, whatever else runs on
	// the machine (on the default port, another process's NIC could own
	// it).
	clk := newStepClock()
	a := newNIC(t, Config{Name: "emuA", Wire: wire.Config{Port: wiretest.ReservePort(t)}, clock: clk})
	b := newNIC(t, Config{Name: "emuB"})
	x := newEndpoint(t, a, qpOpts{ackTO: 12, retry: 3}) // 16.8 ms x 4 tries
	y := newEndpoint(t, b, qpOpts{})
	x.connect(y, 1, 1)
	// Point the QP at a GID nobody owns: every Send fails (unreachable).
	q := x.qpObj()
	q.lockBoth()
	q.rgid = mlx5.GID{10: 0xff, 11: 0xff, 12: 127, 13: 0, 14: 0, 15: 3}
	q.unlockBoth()
	checkBudget(t, "unreachable peer", x, timeToError(t, clk, x, y.raddr(0), 8, nil))
}

// qpObj returns the emulator's QP behind the endpoint.
func (e *endpoint) qpObj() *qp { return e.nic.qpByNum(e.qpn) }

// TestCQOverflow: with oi = 0 a CQ that software does not consume goes to
// error and its QP to ERR; with oi = 1 it wraps silently.
func TestCQOverflow(t *testing.T) {
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{logCQ: 2}, qpOpts{})
	for i := 0; i < 6; i++ {
		x.post(mlx5.NewNOP(signaled))
	}
	deadline := time.Now().Add(5 * time.Second)
	for x.queryQP().State != mlx5.QPStateERR {
		if time.Now().After(deadline) {
			t.Fatal("QP did not go to ERR on CQ overflow")
		}
		time.Sleep(time.Millisecond)
	}
	in, _ := mlx5.QueryCQIn(x.cqn).Marshal()
	out := make([]byte, mlx5.QueryCQOutLen)
	must(t, x.cq.Query(in, out))
	o, err := mlx5.UnmarshalQueryCQOut(out)
	must(t, err)
	if o.CQC.Status != cqStatusOverflow || o.CQC.ProducerCounter != 4 {
		t.Fatalf("CQ status 0x%x producer %d; want overflow 0x9 after 4 CQEs", o.CQC.Status, o.CQC.ProducerCounter)
	}

	x2, _ := pair(t, a, b, qpOpts{logCQ: 2, oi: true}, qpOpts{})
	for i := 0; i < 6; i++ {
		x2.post(mlx5.NewNOP(signaled))
	}
	x2.ci = 4 // skip the overwritten pass: entries 0 and 1 hold CQEs 4 and 5
	for i := 4; i < 6; i++ {
		c := x2.mustPoll()
		if c.Opcode != mlx5.CQEReq || int(c.WQECounter) != i {
			t.Fatalf("oi wrap: CQE %d: %v counter %d", i, c.Opcode, c.WQECounter)
		}
	}
	_ = y
}

// TestCollapsedCQ: every CQE lands in entry 0.
func TestCollapsedCQ(t *testing.T) {
	a, b := twoNICs(t)
	x, _ := pair(t, a, b, qpOpts{logCQ: 0, cc: true, oi: true}, qpOpts{})
	var last uint16
	for i := 0; i < 5; i++ {
		last = x.post(mlx5.NewNOP(signaled))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := mlx5.DecodeCQE(x.cqRing[:64])
		must(t, err)
		if c.Opcode == mlx5.CQEReq && c.WQECounter == last {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("collapsed CQE never reached counter %d (at %d)", last, c.WQECounter)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// TestWaitCrossChannel: a WAIT on another QP's CQ holds back the WQEs after
// it until that CQ has produced the awaited CQE; it needs cd_master.
func TestWaitCrossChannel(t *testing.T) {
	a, b := twoNICs(t)
	data, _ := pair(t, a, b, qpOpts{}, qpOpts{})
	comp, y := pair(t, a, b, qpOpts{cdMaster: true}, qpOpts{})
	binary.LittleEndian.PutUint64(y.data[512:], 0)
	// WAIT for CQE index 1 of the data QP's CQ (its second CQE), then count.
	comp.post(mlx5.NewWait(mlx5.WQEHead{}, data.cqn, 1))
	comp.post(mlx5.NewAtomicFA(signaled, y.raddr(512), 1, comp.sge(0, 8)))
	time.Sleep(20 * time.Millisecond)
	if v := binary.LittleEndian.Uint64(y.data[512:]); v != 0 {
		t.Fatalf("counter %d before the awaited completion", v)
	}
	data.post(mlx5.NewNOP(signaled))
	data.mustPoll()
	time.Sleep(10 * time.Millisecond)
	if v := binary.LittleEndian.Uint64(y.data[512:]); v != 0 {
		t.Fatalf("counter %d after only the first completion", v)
	}
	data.post(mlx5.NewNOP(signaled))
	data.mustPoll()
	c := comp.mustPoll()
	if c.Opcode != mlx5.CQEReq || binary.LittleEndian.Uint64(y.data[512:]) != 1 {
		t.Fatalf("after the wait: %v, counter %d", c.Opcode, binary.LittleEndian.Uint64(y.data[512:]))
	}

	// Without cd_master, WAIT is a local QP operation error.
	x, _ := pair(t, a, b, qpOpts{}, qpOpts{})
	x.post(mlx5.NewWait(signaled, data.cqn, 0))
	if c := x.mustPoll(); c.Syndrome != mlx5.SyndromeLocalQPOpErr {
		t.Fatalf("WAIT without cd_master: %v %v", c.Opcode, c.Syndrome)
	}
}
