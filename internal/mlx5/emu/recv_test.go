package emu

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// Tests of the receive side over rings that device code writes: an RQ, its
// doorbell record, the receive CQ and the buffers in (fake) GPU memory,
// which the emulator reaches only through batches of copies.

// recvPair connects a sender x in host memory to a receiver y whose rings,
// DBR, CQ and data are in g's memory (or host memory when g is nil).
func recvPair(t *testing.T, g *fakeGPU, ox, oy qpOpts) (*endpoint, *endpoint) {
	t.Helper()
	a, b := twoNICs(t)
	oy.gpu, oy.rq = g, true
	if oy.logRQ == 0 {
		oy.logRQ = 3
	}
	x, y := pair(t, a, b, ox, oy)
	time.Sleep(20 * time.Millisecond) // the DBR reads the transitions to RTS ask for
	return x, y
}

// rawCQE polls y's next CQE and returns it with its 64 bytes as written.
func rawCQE(t *testing.T, y *endpoint) (mlx5.CQE, [64]byte) {
	t.Helper()
	slot := int(y.ci&(1<<y.o.logCQ-1)) * 64
	c := y.mustPoll()
	var raw [64]byte
	y.lock()
	copy(raw[:], y.cqRing[slot:slot+64])
	y.unlock()
	return c, raw
}

// Receives posted by device code into an RQ in device memory complete in
// order across wraps of the ring (SEND, SEND with immediate, SEND inline,
// with the receive counter, length and immediate in the CQE and every byte
// in place), and cost the receiver no more batches of copies than the same
// number of lone RDMA WRITEs: each receive lands its payload and writes its
// CQE with one batch, and the WQEs one doorbell record posted are read
// with one more batch for all of them.
func TestDeviceRecvRing(t *testing.T) {
	g := useGPU(t, newFakeGPU())
	x, y := recvPair(t, g, qpOpts{}, qpOpts{logRQ: 3})
	const msg = 64
	fill(x.data[:8192], 9)
	var recv uint32 // receives posted so far
	for round, k := range []int{8, 8, 5, 8} {
		for i := 0; i < k; i++ {
			y.postRecv(y.va(int(recv%8)*1024), 1024)
			recv++
		}
		c0 := g.calls.Load()
		for i := 0; i < k; i++ {
			n := uint32(recv) - uint32(k) + uint32(i) // this receive's counter
			var w mlx5.WQE
			want := mlx5.CQERespSend
			src := x.data[int(n%16)*msg:][:msg]
			switch i % 3 {
			case 0:
				w = mlx5.NewSend(signaled, x.sge(int(n%16)*msg, msg))
			case 1:
				w = mlx5.NewSendImm(signaled, 0xa0b0c0d0+n, x.sge(int(n%16)*msg, msg))
				want = mlx5.CQERespSendImm
			case 2:
				src = []byte("inline send of a receive, in one WQE")
				w = mlx5.NewSendInline(signaled, src)
			}
			x.post(w)
			if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
				t.Fatalf("round %d send %d: requester %v %v", round, i, c.Opcode, c.Syndrome)
			}
			c := y.mustPoll()
			if c.Opcode != want || c.WQECounter != uint16(n) || c.ByteCnt != uint32(len(src)) || c.QPN != y.qpn {
				t.Fatalf("round %d receive %d: %v counter %d bytes %d qpn 0x%x; want %v counter %d bytes %d",
					round, n, c.Opcode, c.WQECounter, c.ByteCnt, c.QPN, want, uint16(n), len(src))
			}
			if want == mlx5.CQERespSendImm && c.ImmInvalPKey != 0xa0b0c0d0+n {
				t.Fatalf("receive %d: immediate %#x", n, c.ImmInvalPKey)
			}
			y.lock()
			got := bytes.Clone(y.data[int(n%8)*1024:][:len(src)])
			y.unlock()
			if !bytes.Equal(got, src) {
				t.Fatalf("receive %d: buffer %x, want %x", n, got, src)
			}
		}
		recvCalls := g.calls.Load() - c0
		c0 = g.calls.Load()
		for i := 0; i < k; i++ {
			x.post(mlx5.NewRDMAWrite(signaled, y.raddr(32768+i*msg), x.sge(i*msg, msg)))
			x.mustPoll()
		}
		writeCalls := g.calls.Load() - c0
		if recvCalls > writeCalls+1 {
			t.Fatalf("round %d: %d receives cost %d batches of copies, %d WRITEs %d", round, k, recvCalls, k, writeCalls)
		}
		t.Logf("round %d: %d receives: %d batches; %d WRITEs: %d", round, k, recvCalls, k, writeCalls)
	}
}

// A receive the RQ's doorbell record does not count yet is not taken: the
// SEND draws RNR NAKs until device code posts it (advancing only the
// record over a slot whose bytes it wrote before), then completes; with
// rnr_retry 2 and no receive the requester completes RNR_RETRY_EXC_ERR.
func TestDeviceRecvRNR(t *testing.T) {
	g := useGPU(t, newFakeGPU())
	t.Run("later receive", func(t *testing.T) {
		x, y := recvPair(t, g, qpOpts{rnrRetry: 7}, qpOpts{minRNR: 1})
		// The WQE is in the ring, the record does not count it.
		y.lock()
		mlx5.DataSeg{ByteCount: 64, LKey: y.mr.LKey(), Addr: y.va(0)}.Put(y.rq)
		mlx5.DataSeg{LKey: mlx5.InvalidLKey}.Put(y.rq[16:])
		y.unlock()
		x.post(mlx5.NewSendInline(signaled, []byte("late")))
		if _, err := x.poll(20 * time.Millisecond); err == nil {
			t.Fatal("a SEND completed with no receive posted")
		}
		y.lock()
		y.rqHead = 1
		binary.BigEndian.PutUint32(y.qpDBR[0:4], 1)
		y.unlock()
		if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
			t.Fatalf("requester %v %v", c.Opcode, c.Syndrome)
		}
		if c := y.mustPoll(); c.Opcode != mlx5.CQERespSend || c.ByteCnt != 4 || c.WQECounter != 0 {
			t.Fatalf("receiver %v bytes %d counter %d", c.Opcode, c.ByteCnt, c.WQECounter)
		}
		y.lock()
		defer y.unlock()
		if string(y.data[:4]) != "late" {
			t.Fatalf("buffer %q", y.data[:4])
		}
	})
	t.Run("retry exceeded", func(t *testing.T) {
		x, y := recvPair(t, g, qpOpts{rnrRetry: 2}, qpOpts{minRNR: 1})
		idx := x.post(mlx5.NewSend(signaled, x.sge(0, 8)))
		c := x.mustPoll()
		if c.Opcode != mlx5.CQEReqErr || c.Syndrome != mlx5.SyndromeRNRRetryExcErr || c.WQECounter != idx {
			t.Fatalf("requester %v %v counter %d; want REQ_ERR RNR_RETRY_EXC_ERR counter %d", c.Opcode, c.Syndrome, c.WQECounter, idx)
		}
		if _, ok := y.tryPoll(); ok {
			t.Fatal("the receiver completed a receive it never had")
		}
		if s := y.queryQP().State; s != mlx5.QPStateRTS {
			t.Fatalf("receiver QP %v after RNR NAKs, want RTS", s)
		}
	})
}

// A receive buffer too small for the SEND: the receiver completes the
// receive RESP_ERR LOCAL_LENGTH_ERR (its QP to ERR), the sender REQ_ERR
// REMOTE_INVAL_REQ_ERR, over rings in device memory and in host memory.
func TestRecvTooSmall(t *testing.T) {
	for _, dev := range []bool{false, true} {
		name := "host"
		var g *fakeGPU
		if dev {
			name, g = "device", useGPU(t, newFakeGPU())
		}
		t.Run(name, func(t *testing.T) {
			x, y := recvPair(t, g, qpOpts{}, qpOpts{})
			y.postRecv(y.va(0), 16)
			idx := x.post(mlx5.NewSend(signaled, x.sge(0, 64)))
			if c := x.mustPoll(); c.Opcode != mlx5.CQEReqErr || c.Syndrome != mlx5.SyndromeRemoteInvalReqErr || c.WQECounter != idx {
				t.Fatalf("requester %v %v counter %d", c.Opcode, c.Syndrome, c.WQECounter)
			}
			if c := y.mustPoll(); c.Opcode != mlx5.CQERespErr || c.Syndrome != mlx5.SyndromeLocalLengthErr || c.WQECounter != 0 || c.QPN != y.qpn {
				t.Fatalf("receiver %v %v counter %d qpn 0x%x", c.Opcode, c.Syndrome, c.WQECounter, c.QPN)
			}
			if s := y.queryQP().State; s != mlx5.QPStateERR {
				t.Fatalf("receiver QP %v, want ERR", s)
			}
		})
	}
}

// Scatter-to-CQE (cs_res = 1): a receive of at most 32 bytes lands in
// bytes 0..31 of its CQE, with the Inline32 format bit (0x4 in op_own) that
// the device helpers test, and the receive buffer is not written; a longer
// one lands in the buffer with a normal CQE. A QP without cs_res never
// inlines.
func TestRecvInlineCQE(t *testing.T) {
	for _, dev := range []bool{false, true} {
		name := "host"
		var g *fakeGPU
		if dev {
			name, g = "device", useGPU(t, newFakeGPU())
		}
		t.Run(name, func(t *testing.T) {
			x, y := recvPair(t, g, qpOpts{}, qpOpts{cs32: true})
			fill(x.data[:64], 1)
			y.lock()
			for i := range y.data[:4096] {
				y.data[i] = 0xee
			}
			y.unlock()
			for i, n := range []uint32{1, 20, 32, 33, 64} {
				y.postRecv(y.va(i*512), 512)
				imm := i%2 == 1
				if imm {
					x.post(mlx5.NewSendImm(signaled, 0x11223344, x.sge(0, n)))
				} else {
					x.post(mlx5.NewSend(signaled, x.sge(0, n)))
				}
				x.mustPoll()
				c, raw := rawCQE(t, y)
				if c.ByteCnt != n || c.WQECounter != uint16(i) || (imm && c.ImmInvalPKey != 0x11223344) {
					t.Fatalf("%d bytes: CQE bytes %d counter %d imm %#x", n, c.ByteCnt, c.WQECounter, c.ImmInvalPKey)
				}
				y.lock()
				buf := bytes.Clone(y.data[i*512:][:n])
				y.unlock()
				if n <= 32 {
					if raw[63]&0x4 == 0 || c.Format != mlx5.CQEFormatInline32 {
						t.Fatalf("%d bytes: op_own %#x, want the inline bit", n, raw[63])
					}
					if !bytes.Equal(raw[:n], x.data[:n]) {
						t.Fatalf("%d bytes: CQE data %x, want %x", n, raw[:n], x.data[:n])
					}
					if !bytes.Equal(buf, bytes.Repeat([]byte{0xee}, int(n))) {
						t.Fatalf("%d bytes inlined: the buffer was written: %x", n, buf)
					}
				} else {
					if raw[63]&0xc != 0 {
						t.Fatalf("%d bytes: op_own %#x, want the normal format", n, raw[63])
					}
					if !bytes.Equal(buf, x.data[:n]) {
						t.Fatalf("%d bytes: buffer %x", n, buf)
					}
				}
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		x, y := recvPair(t, nil, qpOpts{}, qpOpts{})
		y.postRecv(y.va(0), 64)
		x.post(mlx5.NewSendInline(signaled, []byte("short")))
		x.mustPoll()
		if c, raw := rawCQE(t, y); raw[63]&0xc != 0 || string(y.data[:5]) != "short" || c.ByteCnt != 5 {
			t.Fatalf("op_own %#x, buffer %q", raw[63], y.data[:5])
		}
	})
}

// sendRig hands SEND and WRITE packets straight to a receiver y whose RQ,
// CQ and buffers are in fake GPU memory (as its wire would, More as given).
type sendRig struct {
	*landRig
}

func newSendRig(t *testing.T) *sendRig {
	g := useGPU(t, newFakeGPU())
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{}, qpOpts{gpu: g, rq: true, logRQ: 5, dataLen: 4096})
	time.Sleep(20 * time.Millisecond) // the DBR reads the transitions to RTS ask for
	return &sendRig{&landRig{t: t, g: g, a: a, b: b, x: x, y: y, q: y.qpObj()}}
}

// send hands y a SEND ONLY of data.
func (r *sendRig) send(data []byte, more bool) {
	r.b.respond(&wire.Frame{Opcode: wire.OpSendOnly, AckReq: true, DstQPN: r.y.qpn, SrcQPN: r.x.qpn, PSN: r.epsn(),
		SrcGID: wire.GID(r.a.GID()), DstGID: wire.GID(r.b.GID()), Payload: data, More: more})
}

// The SENDs of a burst into device memory land with their CQEs in one
// batch of copies when the burst ends (none is visible before), in order,
// each in its own receive; a later WRITE of the burst to a staged
// receive's buffer lands after it.
func TestDeviceRecvBurstOneBatch(t *testing.T) {
	r := newSendRig(t)
	y := r.y
	for i := 0; i < 12; i++ {
		y.postRecv(y.va(i*64), 64)
	}
	c0 := r.g.calls.Load()
	for i := 0; i < 10; i++ {
		r.send(bytes.Repeat([]byte{byte('a' + i)}, 40), i < 9)
		if i < 9 {
			if _, ok := y.tryPoll(); ok {
				t.Fatalf("a CQE of the burst is visible after SEND %d", i)
			}
		}
	}
	// One batch reads the RQ (DBR and WQEs), one lands the ten SENDs.
	if n := r.g.calls.Load() - c0; n != 2 {
		t.Fatalf("a burst of 10 SENDs cost %d batches of copies, want 2", n)
	}
	for i := 0; i < 10; i++ {
		c, ok := y.tryPoll()
		if !ok || c.Opcode != mlx5.CQERespSend || c.WQECounter != uint16(i) || c.ByteCnt != 40 {
			t.Fatalf("receive %d: %v %v counter %d bytes %d", i, ok, c.Opcode, c.WQECounter, c.ByteCnt)
		}
		if got := r.data(i*64, 40); !bytes.Equal(got, bytes.Repeat([]byte{byte('a' + i)}, 40)) {
			t.Fatalf("receive %d: %q", i, got)
		}
	}
	// SEND (staged) into receive 10 at 640, then a WRITE over it, then
	// the end of the burst: the WRITE's bytes stay.
	r.send([]byte("staged send"), true)
	r.write(640, []byte("WRITE after"), true)
	r.send([]byte("last"), false)
	if got := string(r.data(640, 11)); got != "WRITE after" {
		t.Fatalf("a WRITE after a staged SEND to the same bytes: %q", got)
	}
	for i := 10; i < 12; i++ {
		if c, ok := y.tryPoll(); !ok || c.WQECounter != uint16(i) {
			t.Fatalf("receive %d: %v counter %d", i, ok, c.WQECounter)
		}
	}
}

// A receive buffer deregistered while its SEND waits for the burst: the
// receive completes RESP_ERR LOCAL_PROT_ERR when the burst lands, the QP
// goes to ERR, and nothing lands in the retired range.
func TestDeviceRecvBurstDeregistered(t *testing.T) {
	r := newSendRig(t)
	y := r.y
	at := y.addr(y.data[2048:])
	mr2, err := y.dev.RegMR(y.pd, at, 1024, uint64(at), mlx5.AccessLocalWrite)
	must(t, err)
	y.lock()
	slot := y.rq[0:64]
	mlx5.DataSeg{ByteCount: 64, LKey: mr2.LKey(), Addr: uint64(at)}.Put(slot)
	mlx5.DataSeg{LKey: mlx5.InvalidLKey}.Put(slot[16:])
	y.rqHead = 1
	binary.BigEndian.PutUint32(y.qpDBR[0:4], 1)
	y.unlock()
	r.send([]byte("into a region that goes"), true)
	must(t, mr2.Dereg())
	r.send([]byte("ends the burst"), false)
	c, ok := y.tryPoll()
	if !ok || c.Opcode != mlx5.CQERespErr || c.Syndrome != mlx5.SyndromeLocalProtErr || c.WQECounter != 0 {
		t.Fatalf("first CQE: %v %v %v counter %d; want RESP_ERR LOCAL_PROT_ERR counter 0", ok, c.Opcode, c.Syndrome, c.WQECounter)
	}
	// The vendor syndrome names the cause, as when a landing fails at once.
	if c.VendorSyndrome != mlx5.VendorSynEmuKey {
		t.Fatalf("vendor syndrome %#x, want %#x (the region is gone)", c.VendorSyndrome, mlx5.VendorSynEmuKey)
	}
	if s := y.queryQP().State; s != mlx5.QPStateERR {
		t.Fatalf("receiver QP %v, want ERR", s)
	}
	if got := r.data(2048, 23); bytes.Equal(got, []byte("into a region that goes")) {
		t.Fatal("the payload landed in a deregistered region")
	}
}

// A QP in ERR completes its posted receives with WR_FLUSH_ERR, in order,
// one RESP_ERR CQE each, and so every receive posted while it stays in ERR
// (what rdma-core's drain waits for): with the RQ in host memory and in
// device memory. A SEND that landed before the error completes first.
func TestRecvFlushInError(t *testing.T) {
	for _, dev := range []bool{false, true} {
		name := "host"
		if dev {
			name = "device"
		}
		t.Run(name, func(t *testing.T) {
			var g *fakeGPU
			if dev {
				g = useGPU(t, newFakeGPU())
			}
			x, y := recvPair(t, g, qpOpts{}, qpOpts{})
			for i := 0; i < 4; i++ {
				y.postRecv(y.va(i*64), 64)
			}
			x.post(mlx5.NewSendInline(signaled, []byte("before")))
			if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
				t.Fatalf("SEND: %v %v", c.Opcode, c.Syndrome)
			}
			must(t, y.modify(mlx5.NewModifyQPIn(mlx5.Op2ERR, y.qpn)))
			want := func(counter uint16, op mlx5.CQEOpcode, syn mlx5.Syndrome) {
				t.Helper()
				c := y.mustPoll()
				if c.Opcode != op || c.WQECounter != counter || (op == mlx5.CQERespErr && c.Syndrome != syn) {
					t.Fatalf("CQE %v %v counter %d; want %v %v counter %d", c.Opcode, c.Syndrome, c.WQECounter, op, syn, counter)
				}
			}
			want(0, mlx5.CQERespSend, 0)
			for i := uint16(1); i < 4; i++ {
				want(i, mlx5.CQERespErr, mlx5.SyndromeWRFlushErr)
			}
			// Posted in ERR: flushed too.
			y.postRecv(y.va(0), 64)
			y.postRecv(y.va(64), 64)
			want(4, mlx5.CQERespErr, mlx5.SyndromeWRFlushErr)
			want(5, mlx5.CQERespErr, mlx5.SyndromeWRFlushErr)
			if c, err := y.poll(20 * time.Millisecond); err == nil {
				t.Fatalf("a CQE with nothing posted: %v %v counter %d", c.Opcode, c.Syndrome, c.WQECounter)
			}
			if got := y.queryQP().HWRQCounter; got != 6 {
				t.Fatalf("hw_rq_counter %d, want 6", got)
			}
		})
	}
}

// A requester error moves the QP to ERR: its receives are flushed as well,
// so a receiver waiting on the receive CQ learns of it at once.
func TestRecvFlushAfterRequesterError(t *testing.T) {
	x, y := recvPair(t, nil, qpOpts{}, qpOpts{})
	y.postRecv(y.va(0), 64)
	y.postRecv(y.va(64), 64)
	// A WRITE with a bad rkey: REMOTE_ACCESS_ERR, y in ERR.
	ra := x.raddr(0)
	ra.RKey ^= 0xff00
	idx := y.post(mlx5.NewRDMAWrite(signaled, ra, y.sge(0, 8)))
	var recvs []uint16
	req := false
	for !req || len(recvs) < 2 {
		switch c := y.mustPoll(); {
		case c.Opcode == mlx5.CQEReqErr && c.WQECounter == idx && !req:
			req = true
		case c.Opcode == mlx5.CQERespErr && c.Syndrome == mlx5.SyndromeWRFlushErr:
			recvs = append(recvs, c.WQECounter)
		default:
			t.Fatalf("unexpected CQE %v %v counter %d", c.Opcode, c.Syndrome, c.WQECounter)
		}
	}
	if recvs[0] != 0 || recvs[1] != 1 {
		t.Fatalf("receives flushed as %v, want [0 1]", recvs)
	}
}
