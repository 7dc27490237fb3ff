package emu

import (
	"errors"
	"syscall"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Class 8/9, emulator side: what the emulated firmware reports and accepts.

// reconnect takes a pair back through RST to RTS with fresh rings (as
// software must after 2RST: PI, DBR and receive head back to zero).
func reconnect(x, y *endpoint) {
	for _, e := range []*endpoint{x, y} {
		must(e.t, e.modify(mlx5.NewModifyQPIn(mlx5.Op2RST, e.qpn)))
		e.pi, e.rqHead = 0, 0
		clear(e.qpDBR)
	}
	x.connect(y, 0x100, 0x200)
	y.connect(x, 0x200, 0x100)
}

// TestQPStateErrBeforeErrorCQE: when an error CQE is visible, QUERY_QP of
// the requester already says ERR, and so does the responder's for a class C
// error it NAKed.
func TestQPStateErrBeforeErrorCQE(t *testing.T) {
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{}, qpOpts{})
	for i := 0; i < 50; i++ {
		r := y.raddr(0)
		r.RKey ^= 0x80
		x.post(mlx5.NewRDMAWriteInline(signaled, r, []byte{1}))
		c := x.mustPoll()
		sx, sy := x.queryQP().State, y.queryQP().State
		if c.Syndrome != mlx5.SyndromeRemoteAccessErr || sx != mlx5.QPStateERR || sy != mlx5.QPStateERR {
			t.Fatalf("round %d: CQE %v, then requester %v, responder %v; want REMOTE_ACCESS_ERR, ERR, ERR", i, c.Syndrome, sx, sy)
		}
		reconnect(x, y)
	}
}

// TestRTS2RTSPath: in RTS a QP may move to another source GID index and
// DSCP (SGID_INDEX, DSCP; with the capability bits the device reports) and
// UDP source port (opt_param_mask_95_32); the rest of the primary path
// cannot change (PRIMARY_ADDR_PATH is refused), and the values are checked
// like those of INIT2RTR.
func TestRTS2RTSPath(t *testing.T) {
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{}, qpOpts{})
	fx := &cmdFixture{nic: a, dev: x.dev}
	caps := fx.nic.caps.general
	if !caps.RTS2RTSQPDSCP || !caps.RTS2RTSQPUDPSport {
		t.Fatal("the device does not report rts2rts_qp_dscp / rts2rts_qp_udp_sport")
	}
	in := mlx5.NewModifyQPIn(mlx5.OpRTS2RTS, x.qpn)
	in.OptParamMask = mlx5.OptSGIDIndex | mlx5.OptDSCP
	in.OptParamMask95_32 = mlx5.OptExtUDPSport
	in.QPC.PrimaryAddressPath.DSCP = 26
	in.QPC.PrimaryAddressPath.UDPSport = 0xc777
	must(t, x.modify(in))
	q := x.queryQP()
	if q.State != mlx5.QPStateRTS || q.PrimaryAddressPath.DSCP != 26 || q.PrimaryAddressPath.UDPSport != 0xc777 {
		t.Fatalf("after RTS2RTS: state %v dscp %d udp_sport 0x%x", q.State, q.PrimaryAddressPath.DSCP, q.PrimaryAddressPath.UDPSport)
	}
	// Still moving data.
	x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte("moved")))
	if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
		t.Fatalf("WRITE after RTS2RTS: %v %v", c.Opcode, c.Syndrome)
	}

	rejects := []struct {
		name string
		edit func(in *mlx5.ModifyQPIn)
		syn  uint32
	}{
		{"primary path", func(in *mlx5.ModifyQPIn) { in.OptParamMask = mlx5.OptPrimaryAddrPath }, SynQPOptMask},
		{"ack timeout", func(in *mlx5.ModifyQPIn) { in.OptParamMask = mlx5.OptAckTimeout }, SynQPOptMask},
		{"sgid index 1", func(in *mlx5.ModifyQPIn) {
			in.OptParamMask, in.QPC.PrimaryAddressPath.SrcAddrIndex = mlx5.OptSGIDIndex, 1
		}, SynQPSrcGID},
		{"udp sport below the range", func(in *mlx5.ModifyQPIn) {
			in.OptParamMask95_32, in.QPC.PrimaryAddressPath.UDPSport = mlx5.OptExtUDPSport, 0x1234
		}, SynQPUDPSport},
	}
	for _, tc := range rejects {
		t.Run(tc.name, func(t *testing.T) {
			in := mlx5.NewModifyQPIn(mlx5.OpRTS2RTS, x.qpn)
			tc.edit(&in)
			b, err := in.Marshal()
			must(t, err)
			out := make([]byte, 16)
			wantFW(t, x.qp.Modify(b, out), out, tc.syn)
			if s := x.queryQP().State; s != mlx5.QPStateRTS {
				t.Fatalf("a refused RTS2RTS left the QP in %v", s)
			}
		})
	}
}

// TestSendWithInvalidate: the responder invalidates the rkey a SEND with
// invalidate names when the key allows it (its CQE is RESP_SEND_INV with
// the key, and the key is dead afterwards); a key it cannot invalidate (an
// ordinary registration: every one the driver boundary makes, a key of
// another PD, no key) fails the receive with RESP_ERR and the request with
// REMOTE_INVAL_REQ_ERR, and the key stays valid.
func TestSendWithInvalidate(t *testing.T) {
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{}, qpOpts{rq: true, logRQ: 4})
	mem := hostMem(t, 4096)
	acc := mlx5.AccessLocalWrite | mlx5.AccessRemoteWrite | mlx5.AccessRemoteRead
	target, err := y.dev.RegMR(y.pd, addrOf(mem), 4096, 0x9000000, acc)
	must(t, err)
	defer target.Dereg()
	raddr := mlx5.RAddrSeg{Addr: 0x9000000, RKey: target.RKey()}
	sendInv := func(key uint32) mlx5.WQE {
		w := mlx5.NewSendInline(signaled, []byte("inv"))
		w.Ctrl.Opcode, w.Ctrl.Imm = mlx5.WQEOpSendInval, key
		return w
	}
	writeOK := func() bool {
		x.post(mlx5.NewRDMAWriteInline(signaled, raddr, []byte("w")))
		return x.mustPoll().Opcode == mlx5.CQEReq
	}

	// An ordinary registration cannot be invalidated remotely.
	y.postRecv(y.va(0), 64)
	x.post(sendInv(target.RKey()))
	c := x.mustPoll()
	if c.Opcode != mlx5.CQEReqErr || c.Syndrome != mlx5.SyndromeRemoteInvalReqErr {
		t.Fatalf("SEND_INV of an ordinary key: requester %v %v; want REMOTE_INVAL_REQ_ERR", c.Opcode, c.Syndrome)
	}
	if r := y.mustPoll(); r.Opcode != mlx5.CQERespErr || r.Syndrome != mlx5.SyndromeRemoteInvalReqErr {
		t.Fatalf("SEND_INV of an ordinary key: responder %v %v; want RESP_ERR REMOTE_INVAL_REQ_ERR", r.Opcode, r.Syndrome)
	}
	if s := y.queryQP().State; s != mlx5.QPStateERR {
		t.Fatalf("responder in %v after the invalid request, want ERR", s)
	}
	reconnect(x, y)
	if !writeOK() {
		t.Fatal("the key was invalidated although the SEND failed")
	}

	// A key that allows remote invalidation (as a fast-registration key on
	// a ConnectX would): invalidated, reported in the CQE, dead after.
	target.(*mr).rinval.Store(true)
	y.postRecv(y.va(0), 64)
	x.post(sendInv(target.RKey()))
	if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
		t.Fatalf("SEND_INV: requester %v %v", c.Opcode, c.Syndrome)
	}
	r := y.mustPoll()
	if r.Opcode != mlx5.CQERespSendInv || r.ImmInvalPKey != target.RKey() || r.ByteCnt != 3 {
		t.Fatalf("SEND_INV: responder %v imm_inval 0x%x bytes %d; want RESP_SEND_INV of key 0x%x", r.Opcode, r.ImmInvalPKey, r.ByteCnt, target.RKey())
	}
	x.post(mlx5.NewRDMAWriteInline(signaled, raddr, []byte("w")))
	if c := x.mustPoll(); c.Syndrome != mlx5.SyndromeRemoteAccessErr {
		t.Fatalf("WRITE through an invalidated key: %v %v; want REMOTE_ACCESS_ERR", c.Opcode, c.Syndrome)
	}
	reconnect(x, y)

	// A key of another PD, and no key at all.
	pd2, err := y.dev.AllocPD()
	must(t, err)
	defer pd2.Dealloc()
	other, err := y.dev.RegMR(pd2, addrOf(mem), 4096, 0xa000000, acc)
	must(t, err)
	defer other.Dereg()
	other.(*mr).rinval.Store(true)
	for _, key := range []uint32{other.RKey(), 0x7777700} {
		y.postRecv(y.va(0), 64)
		x.post(sendInv(key))
		if c := x.mustPoll(); c.Syndrome != mlx5.SyndromeRemoteInvalReqErr {
			t.Fatalf("SEND_INV of key 0x%x: %v %v", key, c.Opcode, c.Syndrome)
		}
		y.mustPoll()
		reconnect(x, y)
	}
}

// TestPortQueries: a port other than 1 is EINVAL for QueryPort and
// QueryGID (as the kernel answers), an empty GID entry ENODATA, and the
// firmware's port-numbered commands answer BAD_PARAM for a port above 1.
func TestPortQueries(t *testing.T) {
	fx := newCmdFixture(t, ModelCX7)
	for _, p := range []uint8{0, 2, 255} {
		if _, err := fx.dev.QueryPort(p); !errors.Is(err, syscall.EINVAL) {
			t.Fatalf("QueryPort(%d): %v, want EINVAL", p, err)
		}
		if _, err := fx.dev.QueryGID(p, 0); !errors.Is(err, syscall.EINVAL) {
			t.Fatalf("QueryGID(%d, 0): %v, want EINVAL", p, err)
		}
	}
	if _, err := fx.dev.QueryGID(1, gidTableSize); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("QueryGID(1, %d): %v, want EINVAL", gidTableSize, err)
	}
	if _, err := fx.dev.QueryGID(1, 1); !errors.Is(err, syscall.ENODATA) {
		t.Fatalf("QueryGID(1, 1): %v, want ENODATA", err)
	}
	if _, err := fx.dev.QueryPort(1); err != nil {
		t.Fatal(err)
	}
	for _, p := range []uint8{2, 15} {
		in := mlx5.QueryHCAVportContextIn{PortNum: p}
		out := make([]byte, 528)
		wantFW(t, fx.dev.GeneralCmd(mb(in.Marshal()), out), out, SynBadPort)
		rin := mlx5.QueryRoCEAddressIn{VHCAPortNum: p}
		out = make([]byte, 48)
		wantFW(t, fx.dev.GeneralCmd(mb(rin.Marshal()), out), out, SynBadPort)
	}
}
