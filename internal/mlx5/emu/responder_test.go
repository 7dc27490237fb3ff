package emu

import (
	"reflect"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// TestResponderKeyAfterDereg: the responder keeps its last R_Key lookup
// (mrCache), and a request through a key deregistered since (WRITE, READ,
// atomic) still fails with a remote access error, while a key registered
// since works; the lookup before each is warm (a request through the same
// key succeeded just before).
func TestResponderKeyAfterDereg(t *testing.T) {
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{}, qpOpts{})
	mem := hostMem(t, 4096)
	acc := mlx5.AccessLocalWrite | mlx5.AccessRemoteWrite | mlx5.AccessRemoteRead | mlx5.AccessRemoteAtomic
	reg := func(iova uint64) (mlx5.MR, mlx5.RAddrSeg) {
		m, err := y.dev.RegMR(y.pd, addrOf(mem), 4096, iova, acc)
		must(t, err)
		return m, mlx5.RAddrSeg{Addr: iova, RKey: m.RKey()}
	}
	ops := []struct {
		name string
		wqe  func(r mlx5.RAddrSeg) mlx5.WQE
	}{
		{"WRITE", func(r mlx5.RAddrSeg) mlx5.WQE { return mlx5.NewRDMAWrite(signaled, r, x.sge(0, 8)) }},
		{"READ", func(r mlx5.RAddrSeg) mlx5.WQE { return mlx5.NewRDMARead(signaled, r, x.sge(0, 8)) }},
		{"FETCH_ADD", func(r mlx5.RAddrSeg) mlx5.WQE { return mlx5.NewAtomicFA(signaled, r, 1, x.sge(0, 8)) }},
	}
	for i, op := range ops {
		iova := uint64(0x9000000 + i*0x100000)
		m, r := reg(iova)
		for k := 0; k < 2; k++ {
			x.post(op.wqe(r))
			if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
				t.Fatalf("%s through a live key: %v %v", op.name, c.Opcode, c.Syndrome)
			}
		}
		must(t, m.Dereg())
		x.post(op.wqe(r))
		if c := x.mustPoll(); c.Opcode != mlx5.CQEReqErr || c.Syndrome != mlx5.SyndromeRemoteAccessErr {
			t.Fatalf("%s through a deregistered key: %v %v; want REMOTE_ACCESS_ERR", op.name, c.Opcode, c.Syndrome)
		}
		if s := y.queryQP().State; s != mlx5.QPStateERR {
			t.Fatalf("responder in %v after %s through a deregistered key, want ERR", s, op.name)
		}
		reconnect(x, y)
		m2, r2 := reg(iova)
		x.post(op.wqe(r2))
		if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
			t.Fatalf("%s through the key registered after: %v %v", op.name, c.Opcode, c.Syndrome)
		}
		must(t, m2.Dereg())
		reconnect(x, y)
	}
}

// TestHeldAckInPlace: while a burst goes on, the held ACK (updated in
// place once one is held) is always the frame replyIn builds for the
// request just executed: its PSN and the responder's MSN, everything else
// the QP's and the requester's.
func TestHeldAckInPlace(t *testing.T) {
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{}, qpOpts{})
	q := y.qpObj()
	for i := 0; i < 2*maxHeldAcks; i++ {
		q.rmu.Lock()
		psn := q.resp.epsn
		q.rmu.Unlock()
		ra := y.raddr(i)
		f := &wire.Frame{Opcode: wire.OpWriteOnly, AckReq: true, DstQPN: y.qpn, SrcQPN: x.qpn, PSN: psn,
			SrcGID: wire.GID(a.GID()), DstGID: wire.GID(b.GID()),
			RETH: wire.RETH{VA: ra.Addr, RKey: ra.RKey, DMALength: 1}, Payload: []byte{byte(i)}, More: true}
		b.respond(f)
		q.rmu.Lock()
		var want wire.Frame
		q.replyIn(&want, f, wire.OpAck, psn, wire.AckSyndrome(31))
		got, holds := q.resp.held, q.resp.holds
		q.rmu.Unlock()
		if holds == 0 {
			continue // this request's ACK left (every maxHeldAcks+1)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("request %d (%d held): held ACK\n%+v\nwant\n%+v", i, holds, got, want)
		}
	}
	q.rmu.Lock()
	q.flushHeld()
	q.rmu.Unlock()
}
