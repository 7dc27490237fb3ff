package emu

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// landRig hands WRITE packets to a responder whose data is in fake GPU
// memory, as its wire would (direct respond calls, More as given), and
// counts what reaches the data: copy operations into it and frames the
// responder sent.
type landRig struct {
	t       *testing.T
	g       *fakeGPU
	a, b    *NIC
	x, y    *endpoint
	q       *qp
	dataOps atomic.Int64 // copies into y's data
	mu      sync.Mutex
	seq     []bool // the accesses to y's data in order (true: a write)
}

func newLandRig(t *testing.T) *landRig {
	g := useGPU(t, newFakeGPU())
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{}, qpOpts{gpu: g, dataLen: 4096})
	r := &landRig{t: t, g: g, a: a, b: b, x: x, y: y, q: y.qpObj()}
	lo := y.addr(y.data)
	hook := func(write bool, addr uintptr, n int) {
		if addr < lo || addr >= lo+uintptr(len(y.data)) {
			return
		}
		if write {
			r.dataOps.Add(1)
		}
		r.mu.Lock()
		r.seq = append(r.seq, write)
		r.mu.Unlock()
	}
	g.hook.Store(&hook)
	t.Cleanup(func() { g.hook.Store(nil) })
	return r
}

func (r *landRig) epsn() uint32 {
	r.q.rmu.Lock()
	defer r.q.rmu.Unlock()
	return r.q.resp.epsn
}

// write hands y a WRITE ONLY of data at offset off.
func (r *landRig) write(off int, data []byte, more bool) {
	ra := r.y.raddr(off)
	r.b.respond(&wire.Frame{Opcode: wire.OpWriteOnly, AckReq: true, DstQPN: r.y.qpn, SrcQPN: r.x.qpn, PSN: r.epsn(),
		SrcGID: wire.GID(r.a.GID()), DstGID: wire.GID(r.b.GID()),
		RETH: wire.RETH{VA: ra.Addr, RKey: ra.RKey, DMALength: uint32(len(data))}, Payload: data, More: more})
}

func (r *landRig) sent() uint64 { return r.b.Stats().Wire.Sent }

// data returns a copy of n bytes of y's data at off.
func (r *landRig) data(off, n int) []byte {
	r.y.lock()
	defer r.y.unlock()
	return bytes.Clone(r.y.data[off : off+n])
}

// failWrites makes every copy of g into device memory that covers one of
// the addresses fail with err, until the returned function runs.
func failWrites(g *fakeGPU, err error, addrs ...uintptr) (restore func()) {
	fail := func(o *DeviceCopy) error {
		if o.Kind != CopyToDevice {
			return nil
		}
		at := o.Dst.Base() + uintptr(o.DstOff)
		for _, a := range addrs {
			if at <= a && a < at+uintptr(len(o.Host)) {
				return err
			}
		}
		return nil
	}
	g.fail.Store(&fail)
	return func() { g.fail.Store(nil) }
}

// TestLandDeferredInBurst: the WRITE packets of a burst into device memory
// land together, in one batch, when the burst ends, every maxHeldAcks+1
// packets (before each ACK) and before a request of another kind; packets
// adjacent in memory make one copy; a packet that comes alone, or one into
// host memory, lands at once.
func TestLandDeferredInBurst(t *testing.T) {
	r := newLandRig(t)
	burst := func(n, stride int, fill byte, last bool) {
		t.Helper()
		for i := 0; i < n; i++ {
			r.write(i*stride, []byte{fill + byte(i)}, i < n-1 || !last)
		}
	}
	landed := func(n, stride int, fill byte) bool {
		for i := 0; i < n; i++ {
			if r.data(i*stride, 1)[0] != fill+byte(i) {
				return false
			}
		}
		return true
	}
	type counts struct{ batches, retries, ops, sent uint64 }
	now := func() counts {
		return counts{landBatches.Load(), landRetries.Load(), uint64(r.dataOps.Load()), r.sent()}
	}
	since := func(c counts) counts {
		n := now()
		return counts{n.batches - c.batches, n.retries - c.retries, n.ops - c.ops, n.sent - c.sent}
	}

	// Alone: at once, no batch of its own.
	c := now()
	r.write(0, []byte{7}, false)
	if d := since(c); d != (counts{0, 0, 1, 1}) || r.data(0, 1)[0] != 7 {
		t.Fatalf("a packet alone: %+v, byte %d; want no batch, one copy, one ACK", d, r.data(0, 1)[0])
	}

	// Ten adjacent packets: nothing lands while the burst goes on, then one
	// batch of one copy and one ACK.
	c = now()
	burst(10, 1, 10, false)
	if d := since(c); d.ops != 0 || d.sent != 0 || landed(1, 1, 10) {
		t.Fatalf("during the burst: %+v, want nothing landed or sent", d)
	}
	r.write(10, []byte{20}, false)
	if d := since(c); d != (counts{1, 0, 1, 1}) || !landed(11, 1, 10) {
		t.Fatalf("a burst of 11 adjacent: %+v, landed %v; want one batch of one copy, one ACK", d, landed(11, 1, 10))
	}

	// Scattered packets: one batch, a copy each.
	c = now()
	burst(8, 64, 40, true)
	if d := since(c); d != (counts{1, 0, 8, 1}) || !landed(8, 64, 40) {
		t.Fatalf("a burst of 8 scattered: %+v; want one batch of 8 copies, one ACK", d)
	}

	// A long burst lands before each of its ACKs.
	n := 3*maxHeldAcks + 2
	c = now()
	burst(n, 2, 60, true)
	if d := since(c); d.batches != 3 || d.sent != 3 || !landed(n, 2, 60) {
		t.Fatalf("a burst of %d: %+v; want 3 batches and 3 ACKs", n, d)
	}

	// A READ in the burst: the packets before it land first, the held ACK
	// leaves before its response, and it reads what they wrote.
	c = now()
	burst(4, 1, 100, false)
	r.mu.Lock()
	r.seq = r.seq[:0]
	r.mu.Unlock()
	ra := r.y.raddr(0)
	r.b.respond(&wire.Frame{Opcode: wire.OpReadRequest, AckReq: true, DstQPN: r.y.qpn, SrcQPN: r.x.qpn, PSN: r.epsn(),
		SrcGID: wire.GID(r.a.GID()), DstGID: wire.GID(r.b.GID()), RETH: wire.RETH{VA: ra.Addr, RKey: ra.RKey, DMALength: 4}})
	if d := since(c); d.batches != 1 || d.sent != 2 || !landed(4, 1, 100) {
		t.Fatalf("4 packets then a READ: %+v, landed %v; want one batch, the held ACK and the READ response", d, landed(4, 1, 100))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if fmt.Sprint(r.seq) != "[true false]" {
		t.Fatalf("accesses to the data for 4 packets and a READ (true: a write): %v, want the packets' copy, then the READ's", r.seq)
	}
}

// TestLandDeferredHostMemory: packets into host memory land at once, burst
// or not.
func TestLandDeferredHostMemory(t *testing.T) {
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{}, qpOpts{})
	q := y.qpObj()
	b0 := landBatches.Load()
	for i := 0; i < 4; i++ {
		q.rmu.Lock()
		psn := q.resp.epsn
		q.rmu.Unlock()
		ra := y.raddr(i)
		b.respond(&wire.Frame{Opcode: wire.OpWriteOnly, AckReq: true, DstQPN: y.qpn, SrcQPN: x.qpn, PSN: psn,
			SrcGID: wire.GID(a.GID()), DstGID: wire.GID(b.GID()),
			RETH: wire.RETH{VA: ra.Addr, RKey: ra.RKey, DMALength: 1}, Payload: []byte{byte(i + 1)}, More: true})
		if y.data[i] != byte(i+1) {
			t.Fatalf("packet %d into host memory did not land at once", i)
		}
	}
	if n := landBatches.Load() - b0; n != 0 {
		t.Fatalf("%d batches for host memory", n)
	}
}

// TestLandDeferredFailure: a batch whose copy fails is run again packet by
// packet: the packets before the failing one land, it is NAKed in place of
// the held ACK (one frame leaves), the QP goes to ERR with the MSN of that
// packet's time, and the packets after it do not land.
func TestLandDeferredFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{{"retired", errRetired}, {"copy", fmt.Errorf("a failing copy")}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLandRig(t)
			defer failWrites(r.g, tc.err, r.y.addr(r.y.data)+5)()
			r.q.rmu.Lock()
			msn0 := r.q.resp.msn
			r.q.rmu.Unlock()
			b0, r0, s0 := landBatches.Load(), landRetries.Load(), r.sent()
			for i := 0; i < 10; i++ {
				r.write(i, []byte{byte(i + 1)}, i < 9)
			}
			if b, rt := landBatches.Load()-b0, landRetries.Load()-r0; b != 1 || rt != 1 {
				t.Fatalf("%d batches, %d run again; want 1 and 1", b, rt)
			}
			if got := r.data(0, 10); !bytes.Equal(got, []byte{1, 2, 3, 4, 5, 0, 0, 0, 0, 0}) {
				t.Fatalf("data % x: want the 5 packets before the failing one", got)
			}
			if n := r.sent() - s0; n != 1 {
				t.Fatalf("%d frames sent, want the NAK alone", n)
			}
			r.q.rmu.Lock()
			msn, holds, pend := r.q.resp.msn, r.q.resp.holds, r.q.resp.land.pending()
			r.q.rmu.Unlock()
			if st := r.q.state.Load(); st != stERR || msn != msn0+5 || holds != 0 || pend {
				t.Fatalf("after the failure: state %d msn %d (want ERR, %d), holds %d, pending %v", st, msn, msn0+5, holds, pend)
			}
		})
	}
}

// TestLandDeferredOverShm: a burst of puts between two NICs linked by a
// shared-memory ring (as two processes are) into device memory: every
// byte lands and every WQE completes; a copy that fails under the burst
// completes its WQE with the access error and flushes the ones after it,
// whatever batch the packet was in.
func TestLandDeferredOverShm(t *testing.T) {
	g := useGPU(t, newFakeGPU())
	const n, size = 48, 64
	run := func(failAt int) {
		na := newNIC(t, Config{Name: "emuLa", Wire: wire.Config{ForceShm: true}})
		nb := newNIC(t, Config{Name: "emuLb", Wire: wire.Config{ForceShm: true}})
		x, y := pair(t, na, nb, qpOpts{logSQ: 7, logCQ: 7, dataLen: n * size}, qpOpts{gpu: g, dataLen: n * size})
		if failAt >= 0 {
			defer failWrites(g, errRetired, y.addr(y.data)+uintptr(failAt*size))()
		}
		fill(x.data, 9)
		for j := 0; j < n; j++ {
			x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(j*size), x.sge(j*size, size)))
		}
		x.ring(mlx5.CtrlSeg{})
		for j := 0; j < n; j++ {
			c := x.mustPoll()
			switch {
			case failAt < 0 || j < failAt:
				expectOK(t, c, mlx5.WQEOpRDMAWrite, uint16(j))
			case j == failAt:
				expectErr(t, c, mlx5.SyndromeRemoteAccessErr)
			default:
				expectErr(t, c, mlx5.SyndromeWRFlushErr)
			}
		}
		landedTo := n
		if failAt >= 0 {
			landedTo = failAt
		}
		got := func(j int) []byte {
			y.lock()
			defer y.unlock()
			return bytes.Clone(y.data[j*size : (j+1)*size])
		}
		for j := 0; j < n; j++ {
			if eq := bytes.Equal(got(j), x.data[j*size:(j+1)*size]); eq != (j < landedTo) {
				t.Fatalf("put %d of %d (failing at %d): landed %v", j, n, failAt, eq)
			}
		}
	}
	b0 := landBatches.Load()
	run(-1)
	t.Logf("%d batches of deferred packets for %d puts", landBatches.Load()-b0, n)
	run(20)
}

// FuzzLanding runs one sequence of requests through two responders whose
// data is in fake device memory: one is handed each request with the More
// the input gives it (deferred landing), the other with More always clear
// (every packet lands at once). WRITE packets of every kind, READs, PSNs
// around the expected one, keys and addresses around the valid ones, and a
// copy that fails at an offset the input picks. The deferring responder
// must hold nothing once a request comes without More, and once its last
// packets land (as the next request would make them) both must hold the
// same bytes, the same expected PSN and MSN, and the same QP state.
func FuzzLanding(f *testing.F) {
	g := useGPU(f, newFakeGPU())
	type rig struct {
		a, b *NIC
		x, y *endpoint
		q    *qp
	}
	mk := func(n string) *rig {
		a := newManualNIC(f, Config{Name: "emuL" + n + "a"})
		b := newManualNIC(f, Config{Name: "emuL" + n + "b"})
		x, y := pair(f, a, b, qpOpts{mtu: mlx5.MTU256}, qpOpts{gpu: g, mtu: mlx5.MTU256, dataLen: 4096})
		return &rig{a: a, b: b, x: x, y: y, q: y.qpObj()}
	}
	rigs := [2]*rig{mk("d"), mk("n")}
	// Seeds (2 bytes: the failing offset and whether copies fail there;
	// then 6 a request: opcode and More, length, offset, PSN, byte and
	// key): a burst of WRITE ONLYs, a message in three packets, a READ in
	// a burst, a failing copy in a burst.
	f.Add([]byte{0x00, 0x01, 0x08, 30, 0, 0, 0, 2, 0x08, 30, 0, 0x80, 0, 4, 0x00, 30, 1, 0, 0, 6})
	f.Add([]byte{0x00, 0x01, 0x09, 0, 0, 0, 0, 0x82, 0x0a, 0, 0, 0, 0, 0x82, 0x03, 128, 0, 0, 0, 0x82})
	f.Add([]byte{0x00, 0x01, 0x08, 30, 0, 0, 0, 2, 0x05, 0, 0, 0, 0, 0})
	f.Add([]byte{0x00, 0x80, 0x08, 2, 0, 0, 0, 2, 0x08, 2, 0, 0x40, 0, 4, 0x08, 2, 0, 0x80, 0, 6, 0x00, 2, 0, 0xc0, 0, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		failAt, failOn := int(data[0])<<4|int(data[1]>>4), data[1]&0x0f == 0
		data = data[2:]
		for _, r := range rigs {
			defer fuzzStart(t, r.x, r.y)()
			r.y.lock()
			clear(r.y.data)
			r.y.unlock()
		}
		if failOn {
			defer failWrites(g, errRetired, rigs[0].y.addr(rigs[0].y.data)+uintptr(failAt), rigs[1].y.addr(rigs[1].y.data)+uintptr(failAt))()
		}
		ops := []wire.Opcode{wire.OpWriteOnly, wire.OpWriteFirst, wire.OpWriteMiddle, wire.OpWriteLast,
			wire.OpWriteOnlyImm, wire.OpReadRequest, wire.OpWriteOnly, wire.OpWriteOnly}
		for k := 0; len(data) >= 6 && k < 32; k++ {
			b := data[:6]
			data = data[6:]
			op := ops[b[0]&7]
			more := b[0]&8 != 0
			n := (2*int(b[1]) + int(b[4]&1)) % 300
			if op == wire.OpWriteFirst || op == wire.OpWriteMiddle {
				n = 256 * (1 + int(b[1]&1))
			}
			off := (int(b[2])<<4 | int(b[3]>>4)) % 4200
			for i, r := range rigs {
				r.q.rmu.Lock()
				psn := r.q.resp.epsn
				r.q.rmu.Unlock()
				ra := r.y.raddr(off)
				if b[5]&1 != 0 {
					ra.RKey ^= 0x100
				}
				fr := wire.Frame{Opcode: op, AckReq: true, DstQPN: r.y.qpn, SrcQPN: r.x.qpn,
					PSN:    (psn + uint32(int32(int8(b[4]))>>5)) & mask24,
					SrcGID: wire.GID(r.a.GID()), DstGID: wire.GID(r.b.GID()), More: more && i == 0}
				if op.HasRETH() {
					fr.RETH = wire.RETH{VA: ra.Addr, RKey: ra.RKey, DMALength: uint32(n + 256*int(b[5]>>6))}
				}
				if op.HasPayload() {
					fr.Payload = bytes.Repeat([]byte{b[5] | 1}, n)
				}
				r.b.respond(&fr)
			}
			if q := rigs[0].q; !more {
				q.rmu.Lock()
				pend := q.resp.land.pending()
				q.rmu.Unlock()
				if pend {
					t.Fatalf("request %d came without More and packets still wait", k)
				}
			}
		}
		q := rigs[0].q
		q.rmu.Lock()
		q.landPending() // what the next request would do
		q.rmu.Unlock()
		var got [2][]byte
		var st [2][3]uint32
		for i, r := range rigs {
			r.y.lock()
			got[i] = bytes.Clone(r.y.data[:4096])
			r.y.unlock()
			r.q.rmu.Lock()
			st[i] = [3]uint32{r.q.resp.epsn, r.q.resp.msn, r.q.state.Load()}
			r.q.rmu.Unlock()
		}
		if !bytes.Equal(got[0], got[1]) {
			i := 0
			for got[0][i] == got[1][i] {
				i++
			}
			t.Fatalf("the data differ from byte %d: %#x deferred, %#x at once", i, got[0][i], got[1][i])
		}
		if st[0] != st[1] {
			t.Fatalf("responder state (epsn, msn, state): %v deferred, %v at once", st[0], st[1])
		}
	})
}
