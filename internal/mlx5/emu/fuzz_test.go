package emu

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// FuzzCommand feeds arbitrary mailboxes to every command entry point
// (CreateObj, GeneralCmd, and Query/Modify of a live CQ and QP). Any input
// must give a result or an error, never a panic; objects it manages to
// create are destroyed again.
func FuzzCommand(f *testing.F) {
	fx := newCmdFixture(f, ModelCX8)
	cq, err := fx.dev.CreateObj(mb(fx.cqIn().Marshal()), make([]byte, 16))
	must(f, err)
	qp, err := fx.dev.CreateObj(mb(fx.qpIn(cq.ID()).Marshal()), make([]byte, 16))
	must(f, err)
	f.Cleanup(func() { qp.Destroy(); cq.Destroy() })

	f.Add(uint8(0), uint16(16), mb(fx.cqIn().Marshal()))
	f.Add(uint8(0), uint16(16), mb(fx.qpIn(cq.ID()).Marshal()))
	f.Add(uint8(1), uint16(mlx5.QueryHCACapOutLen), mb(mlx5.NewQueryHCACapIn(mlx5.CapGeneral, true).Marshal()))
	f.Add(uint8(1), uint16(mlx5.QueryHCACapOutLen), mb(mlx5.NewQueryHCACapIn(mlx5.CapGeneral2, true).Marshal()))
	f.Add(uint8(2), uint16(272), mb(mlx5.QueryCQIn(cq.ID()).Marshal()))
	f.Add(uint8(3), uint16(272), mb(mlx5.QueryQPIn(qp.ID()).Marshal()))
	r2i := mlx5.NewModifyQPIn(mlx5.OpRST2INIT, qp.ID())
	r2i.QPC.PrimaryAddressPath.VHCAPortNum = 1
	f.Add(uint8(7), uint16(16), mb(r2i.Marshal()))
	f.Add(uint8(7), uint16(16), mb(mlx5.NewModifyQPIn(mlx5.Op2RST, qp.ID()).Marshal()))
	rmpIn := mlx5.CreateRMPIn{RMPC: mlx5.RMPContext{State: mlx5.RMPStateRDY, WQ: mlx5.WQContext{WQType: mlx5.WQTypeCyclic,
		PD: fx.pd.PDN(), DBRAddr: offQPDBR + 128, LogWQStride: 6, LogWQSz: 4, DBRUMEMID: fx.um.ID(), WQUMEMID: fx.um.ID(), WQUMEMOffset: 2 << 20}}}
	f.Add(uint8(0), uint16(16), mb(rmpIn.Marshal()))

	f.Fuzz(func(t *testing.T, entry uint8, outLen uint16, in []byte) {
		out := make([]byte, int(outLen)%5000)
		var err error
		switch entry % 4 {
		case 0:
			var obj mlx5.Obj
			obj, err = fx.dev.CreateObj(in, out)
			if obj != nil {
				if err != nil {
					t.Fatalf("object and error: %v", err)
				}
				if derr := obj.Destroy(); derr != nil {
					t.Fatalf("destroy a fuzz-created object: %v", derr)
				}
			}
		case 1:
			err = fx.dev.GeneralCmd(in, out)
		case 2:
			if entry&4 != 0 {
				err = cq.Modify(in, out)
			} else {
				err = cq.Query(in, out)
			}
		case 3:
			if entry&4 != 0 {
				err = qp.Modify(in, out)
			} else {
				err = qp.Query(in, out)
			}
		}
		if ce, ok := mlx5.AsCmdError(err); ok && ce.Status != mlx5.StatusOK {
			if st, syn := mlx5.OutStatus(out); st != ce.Status || syn != ce.Syndrome {
				t.Fatalf("error %v but out mailbox says %v/0x%x", err, st, syn)
			}
			if _, _, known := SyndromeInfo(ce.Syndrome); !known {
				t.Fatalf("undocumented syndrome in %v", err)
			}
		} else if err != nil && !ok {
			t.Fatalf("error of an unexpected type: %v", err)
		}
	})
}

// Placeholder words FuzzWQE replaces with live keys before it writes the
// ring, so seeds (and mutations of them) can name the real MRs.
const (
	fuzzLKey = 0x4c4b4559 // "LKEY": the requester's data MR
	fuzzRKey = 0x524b4559 // "RKEY": the responder's data MR
	fuzzIOVA = 0x10000000 // both data MRs are registered at this iova
)

// FuzzWQE executes arbitrary ring bytes on an RTS QP: the first byte is the
// number of WQEBBs posted (of a 16-WQEBB ring), the rest the ring. Each
// posted WQE gets its ctrl qpn and wqe_index fixed up (walking by its own
// ds) so the fuzzer reaches the segment decoders. The SQ must drain, with
// CQEs or error CQEs, within the deadline: never a panic or a hang.
//
// Speed: the two NICs and the connected QP pair are made once; each input
// resets the pair in place (as 2RST and the transitions back to RTS would)
// and drives the NICs' engines synchronously (manual NICs, no engine
// goroutine), so an input costs its own execution and nothing else.
func FuzzWQE(f *testing.F) {
	na := newManualNIC(f, Config{Name: "emuF"})
	nb := newManualNIC(f, Config{Name: "emuG"})
	o := qpOpts{logSQ: 4, logCQ: 6, oi: true, iova: fuzzIOVA, retry: 1, ackTO: 1, rnrRetry: 1, minRNR: 1, dataLen: 1 << 16}
	x, y := pair(f, na, nb, o, qpOpts{iova: fuzzIOVA, rq: true, logRQ: 2, oi: true, minRNR: 1, dataLen: 1 << 16})
	for _, w := range fuzzSeeds() {
		f.Add(w)
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzWQE(t, na, nb, x, y, data) })
}

// FuzzWQEDevice is FuzzWQE with the requester's rings, DBRs, CQ and data in
// (fake) device memory: the WQEs reach the engine through the ring mirror
// and its batched reads, payloads through the read-ahead window, CQEs
// through batched flushes.
func FuzzWQEDevice(f *testing.F) {
	g := useGPU(f, newFakeGPU())
	na := newManualNIC(f, Config{Name: "emuFd"})
	nb := newManualNIC(f, Config{Name: "emuGd"})
	o := qpOpts{gpu: g, logSQ: 4, logCQ: 6, oi: true, iova: fuzzIOVA, retry: 1, ackTO: 1, rnrRetry: 1, minRNR: 1, dataLen: 1 << 16}
	x, y := pair(f, na, nb, o, qpOpts{iova: fuzzIOVA, rq: true, logRQ: 2, oi: true, minRNR: 1, dataLen: 1 << 16})
	for _, w := range fuzzSeeds() {
		f.Add(w)
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzWQE(t, na, nb, x, y, data) })
}

func fuzzWQE(t *testing.T, na, nb *NIC, x, y *endpoint, data []byte) {
	if len(data) == 0 {
		return
	}
	defer fuzzStart(t, x, y)()
	y.postRecv(y.va(0), 4096)
	n := int(data[0]) % 17
	ring := x.sq
	clear(ring)
	copy(ring, data[1:])
	for i := 0; i+4 <= len(ring); i += 4 {
		switch binary.BigEndian.Uint32(ring[i:]) {
		case fuzzLKey:
			binary.BigEndian.PutUint32(ring[i:], x.mr.LKey())
		case fuzzRKey:
			binary.BigEndian.PutUint32(ring[i:], y.mr.RKey())
		}
	}
	for i := 0; i < n; {
		c := ring[i*64:]
		binary.BigEndian.PutUint32(c[0:], uint32(c[0])<<24|uint32(i)<<8|uint32(c[3]))
		binary.BigEndian.PutUint32(c[4:], x.qpn<<8|uint32(c[7]&0x3f))
		bbs := (int(c[7]&0x3f) + 3) / 4
		if bbs == 0 {
			bbs = 1
		}
		i += bbs
	}
	x.pi = uint16(n)
	x.ring(mlx5.CtrlSeg{})
	newFuzzClock().drain(t, na, nb, x.qpObj(), uint16(n))
	for {
		c, ok := x.tryPoll()
		if !ok {
			break
		}
		if c.Opcode != mlx5.CQEReq && c.Opcode != mlx5.CQEReqErr {
			t.Fatalf("requester CQE with opcode %v", c.Opcode)
		}
	}
}

// fuzzClock is the time the fuzz targets drive their manual NICs with: it
// starts now and advances a fixed step per engine round, so that timers
// (ACK timeout, RNR waits) expire after the same number of rounds every
// time an input runs, which keeps coverage, and so the fuzzer, stable.
type fuzzClock struct {
	t0 time.Time
	n  int
}

const (
	fuzzStep  = 10 * time.Microsecond
	fuzzLimit = 2 * time.Second // of fuzz time: far beyond every timer the inputs can start
)

func newFuzzClock() *fuzzClock { return &fuzzClock{t0: time.Now()} }

func (c *fuzzClock) tick() time.Time {
	c.n++
	return c.t0.Add(time.Duration(c.n) * fuzzStep)
}

func (c *fuzzClock) expired() bool { return time.Duration(c.n)*fuzzStep > fuzzLimit }

// drain runs engine rounds on both NICs until q's requester has consumed
// its send queue up to pi; past the clock's limit it fails the input.
func (c *fuzzClock) drain(t testing.TB, na, nb *NIC, q *qp, pi uint16) {
	t.Helper()
	for {
		now := c.tick()
		na.round(now)
		nb.round(now)
		q.mu.Lock()
		ci := q.req.ci
		q.mu.Unlock()
		if ci == pi {
			return
		}
		if c.expired() {
			t.Fatalf("requester SQ did not drain: consumer %d of %d, state %d", ci, pi, q.state.Load())
		}
	}
}

// bindTest makes the endpoint report to t (one fuzz input) until the
// returned function restores its owner.
func (e *endpoint) bindTest(t testing.TB) func() {
	owner := e.t
	e.t = t
	return func() { e.t = owner }
}

// fuzzStart begins one fuzz input on a connected pair: both endpoints report
// to t, are reset and have empty CQs. The returned function hands them back
// to their owner.
func fuzzStart(t testing.TB, x, y *endpoint) (done func()) {
	ux, uy := x.bindTest(t), y.bindTest(t)
	x.resetFast()
	y.resetFast()
	for x.drainCQ() || y.drainCQ() {
	}
	return func() { uy(); ux() }
}

// drainCQ consumes every CQE there is; it reports whether there was one.
func (e *endpoint) drainCQ() bool {
	got := false
	for {
		if _, ok := e.tryPoll(); !ok {
			return got
		}
		got = true
	}
}

// fuzzSeeds encodes one WQE of every kind with the placeholder keys.
func fuzzSeeds() [][]byte {
	ring := make([]byte, 16*64)
	h := mlx5.WQEHead{Flags: mlx5.MakeCtrlFlags(mlx5.FenceNone, mlx5.CompletionAlways, false)}
	l := func(off uint64, n uint32) mlx5.DataSeg {
		return mlx5.DataSeg{ByteCount: n, LKey: fuzzLKey, Addr: fuzzIOVA + off}
	}
	r := func(off uint64) mlx5.RAddrSeg { return mlx5.RAddrSeg{Addr: fuzzIOVA + off, RKey: fuzzRKey} }
	ws := []mlx5.WQE{
		mlx5.NewNOP(h),
		mlx5.NewRDMAWrite(h, r(0), l(0, 8)),
		mlx5.NewRDMAWriteInline(h, r(64), []byte("0123456789abcdefghijklmnopqrstuvwxyz")),
		mlx5.NewRDMAWriteImm(h, 7, r(0), l(0, 100)),
		mlx5.NewRDMARead(h, r(128), l(256, 64)),
		mlx5.NewSend(h, l(0, 16)),
		mlx5.NewAtomicFA(h, r(8), 1, l(16, 8)),
		mlx5.NewAtomicCS(h, r(8), 1, 0, l(16, 8)),
		mlx5.NewMaskedCS(h, 8, r(16), mlx5.MaskedCSSeg{Swap: 1, SwapMask: 1}, l(24, 8)),
		mlx5.NewMaskedFA(h, 4, r(32), mlx5.MaskedFASeg{Add: 1}, l(40, 4)),
		mlx5.NewWait(h, 0x400, 3),
		mlx5.NewDump(h, l(0, 64)),
	}
	var seeds [][]byte
	for _, w := range ws {
		clear(ring)
		n, err := w.Encode(ring)
		if err != nil {
			panic(err)
		}
		seeds = append(seeds, append([]byte{byte(n)}, ring[:n*64]...))
	}
	// Several WQEs in a row, wrapping.
	clear(ring)
	pi := uint16(14)
	for _, w := range ws[1:4] {
		w.Ctrl.WQEIndex = pi
		n, _ := w.Encode(ring)
		pi += uint16(n)
	}
	seeds = append(seeds, append([]byte{16}, ring...))
	return seeds
}

// guarded is a one-page MR in the middle of three pages whose outer pages
// hold a pattern: a write outside the MR shows in them.
type guarded struct {
	mem []byte
	mr  mlx5.MR
	va  uint64
}

const guardByte = 0xa5

func newGuarded(t testing.TB, e *endpoint, va uint64) *guarded {
	g := &guarded{mem: hostMem(t, 3*4096), va: va}
	for i := range g.mem {
		g.mem[i] = guardByte
	}
	acc := mlx5.AccessLocalWrite | mlx5.AccessRemoteWrite | mlx5.AccessRemoteRead | mlx5.AccessRemoteAtomic
	var err error
	g.mr, err = e.dev.RegMR(e.pd, addrOf(g.mem[4096:]), 4096, va, acc)
	must(t, err)
	t.Cleanup(func() { g.mr.Dereg() })
	return g
}

// intact reports whether the pages around the MR still hold the pattern.
func (g *guarded) intact() bool {
	for _, b := range append(g.mem[:4096:4096], g.mem[2*4096:]...) {
		if b != guardByte {
			return false
		}
	}
	return true
}

// FuzzIncoming hands arbitrary frames to the NICs as the wire would: the
// responses a requester can receive (ACK and NAK of every syndrome, READ
// responses, ATOMIC ACKs) to a QP with a WRITE, a READ and an atomic in
// flight, and the requests a responder can receive to its peer QP, with
// PSNs, QPNs, GIDs, keys, addresses, lengths and payloads around the valid
// ones. Genuine traffic between the two QPs runs in between. Nothing may
// panic or hang, no byte may land outside a registered MR (guard pages),
// every CQE must be well formed, and the requester's SQ must drain.
func FuzzIncoming(f *testing.F) {
	na := newManualNIC(f, Config{Name: "emuIa"})
	nb := newManualNIC(f, Config{Name: "emuIb"})
	o := qpOpts{logSQ: 4, logCQ: 6, oi: true, retry: 1, ackTO: 1, rnrRetry: 1, minRNR: 1, mtu: mlx5.MTU256, dataLen: 1 << 16}
	x, y := pair(f, na, nb, o, qpOpts{rq: true, logRQ: 2, oi: true, minRNR: 1, mtu: mlx5.MTU256, dataLen: 1 << 16})
	gx := newGuarded(f, x, 0x50000000)
	gy := newGuarded(f, y, 0x60000000)

	// Seeds: a genuine answer to each outstanding request, each request kind.
	f.Add([]byte{0x00 | byte(opIndex(wire.OpAck))<<1, 0x01, 0, 0, 0, 0, 0, 0, 8, 0x1f, 1, 0})
	f.Add([]byte{byte(opIndex(wire.OpReadResponseOnly)) << 1, 0x00, 1, 4, 0x42, 0, 0, 0, 64, 0x1f, 2, 0})
	f.Add([]byte{byte(opIndex(wire.OpAtomicAck)) << 1, 0x00, 2, 0, 0, 0, 0, 0, 8, 0x1f, 3, 7})
	f.Add([]byte{1 | byte(opIndex(wire.OpWriteOnly))<<1, 0x01, 0, 3, 0x11, 0, 16, 0, 51, 0, 0, 0})
	f.Add([]byte{1 | byte(opIndex(wire.OpWriteFirst))<<1, 0x01, 0, 15, 0x11, 0, 0, 1, 0, 0, 0, 0,
		1 | byte(opIndex(wire.OpWriteLast))<<1, 0x01, 1, 15, 0x12, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{1 | byte(opIndex(wire.OpSendOnly))<<1, 0x03, 0, 2, 0x33, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{1 | byte(opIndex(wire.OpSendOnlyInv))<<1, 0x01, 0, 2, 0x33, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{1 | byte(opIndex(wire.OpReadRequest))<<1, 0x01, 0, 0, 0, 0, 8, 1, 0, 0, 0, 0})
	f.Add([]byte{1 | byte(opIndex(wire.OpFetchAdd))<<1, 0x01, 0, 0, 0, 0, 8, 0, 0, 0, 0, 9})
	f.Add([]byte{1 | byte(opIndex(wire.OpMaskedCompareSwap))<<1, 0x01, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0x84})
	f.Add([]byte{byte(opIndex(wire.OpAck)) << 1, 0x00, 0, 0, 0, 0, 0, 0, 0, 0x62, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) { fuzzIncoming(t, na, nb, x, y, gx, gy, data) })
}

func opIndex(op wire.Opcode) int {
	for i, o := range wire.Opcodes {
		if o == op {
			return i
		}
	}
	panic("unknown opcode")
}

const (
	fuzzFrameLen = 12 // input bytes per frame
	fuzzFrames   = 24 // frames per input at most (the rest is ignored)
)

func fuzzIncoming(t *testing.T, na, nb *NIC, x, y *endpoint, gx, gy *guarded, data []byte) {
	defer fuzzStart(t, x, y)()
	y.postRecv(y.va(0), 512)
	y.postRecv(gy.va, 4096)
	// Three requests in flight: a WRITE, a READ into a guarded MR, an atomic.
	x.post(mlx5.NewRDMAWriteInline(signaled, mlx5.RAddrSeg{Addr: gy.va, RKey: gy.mr.RKey()}, []byte("genuine")))
	x.post(mlx5.NewRDMARead(signaled, mlx5.RAddrSeg{Addr: gy.va + 64, RKey: gy.mr.RKey()}, mlx5.DataSeg{ByteCount: 64, LKey: gx.mr.LKey(), Addr: gx.va}))
	x.post(mlx5.NewAtomicFA(signaled, mlx5.RAddrSeg{Addr: gy.va + 128, RKey: gy.mr.RKey()}, 1, mlx5.DataSeg{ByteCount: 8, LKey: gx.mr.LKey(), Addr: gx.va + 512}))
	pi := x.pi
	qx, qy := x.qpObj(), y.qpObj()
	clk := newFuzzClock()
	rkeys := []uint32{gy.mr.RKey(), y.mr.RKey(), x.mr.RKey(), gy.mr.RKey() ^ 1, 0, 0xffffffff, gx.mr.RKey(), gy.mr.RKey() + 0x100}
	if len(data) > fuzzFrames*fuzzFrameLen {
		data = data[:fuzzFrames*fuzzFrameLen]
	}
	for len(data) >= fuzzFrameLen {
		b := data[:fuzzFrameLen]
		data = data[fuzzFrameLen:]
		toY := b[0]&1 != 0
		op := wire.Opcodes[int(b[0]>>1)%len(wire.Opcodes)]
		f := wire.Frame{Opcode: op, AckReq: b[1]&1 != 0, SE: b[1]&2 != 0 && op.AllowsSE()}
		var psn uint32
		if toY {
			f.SrcGID, f.DstGID, f.SrcQPN, f.DstQPN = wire.GID(na.GID()), wire.GID(nb.GID()), x.qpn, y.qpn
			qy.rmu.Lock()
			psn = qy.resp.epsn
			qy.rmu.Unlock()
		} else {
			f.SrcGID, f.DstGID, f.SrcQPN, f.DstQPN = wire.GID(nb.GID()), wire.GID(na.GID()), y.qpn, x.qpn
			qx.mu.Lock()
			psn = qx.req.lastAcked + 1
			qx.mu.Unlock()
		}
		f.PSN = (psn + uint32(int32(int8(b[2])))) & mask24
		if b[1]&4 != 0 {
			f.SrcQPN ^= 1
		}
		if b[1]&8 != 0 {
			f.SrcGID[15] ^= 1
		}
		if b[1]&16 != 0 {
			f.DstQPN ^= 1
		}
		if op.HasPayload() {
			n := int(b[3]) * 17 % 4400
			f.Payload = make([]byte, n)
			for i := range f.Payload {
				f.Payload[i] = b[4]
			}
		}
		va := gy.va + uint64(binary.BigEndian.Uint16(b[5:7])) - 0x1000
		rkey := rkeys[b[1]>>5]
		if op.HasRETH() {
			f.RETH = wire.RETH{VA: va, RKey: rkey, DMALength: uint32(binary.BigEndian.Uint16(b[7:9]))}
		}
		if op.HasAtomicETH() {
			f.Atomic = wire.AtomicETH{VA: va, RKey: rkey, SwapAdd: uint64(b[11]), Compare: uint64(b[10]), SwapMask: 0xff, CompareMask: 0xf0, FieldBoundary: 0x80, Size: 8}
			if op.IsMaskedAtomic() && b[11]&0x80 != 0 {
				f.Atomic.Size = 4
			}
		}
		if op.HasImm() {
			f.Imm = [4]byte{b[9], b[10], b[11], b[4]}
		}
		if op.HasIETH() {
			f.InvRKey = rkey
		}
		if op.HasAETH() {
			f.AETH = wire.AETH{Syndrome: wire.Syndrome(b[9]), MSN: uint32(b[10])}
			if f.AETH.Syndrome.Kind() == wire.KindRNRNak {
				// Short RNR timers only (10..40 us): the long ones (up to
				// 655 ms) would only make the fuzzer wait.
				f.AETH.Syndrome = wire.RNRNakSyndrome(1 + b[9]&3)
			}
		}
		if op.HasAtomicAckETH() {
			f.AtomicAck = uint64(b[11]) << 8
		}
		if f.Validate() != nil {
			continue // the wire never delivers it
		}
		if toY {
			nb.deliver(&f)
		} else {
			na.deliver(&f)
		}
		now := clk.tick()
		na.round(now)
		nb.round(now)
	}
	clk.drain(t, na, nb, qx, pi)
	if !gx.intact() || !gy.intact() {
		t.Fatal("bytes landed outside a registered MR")
	}
	for {
		c, ok := x.tryPoll()
		if !ok {
			break
		}
		if c.Opcode != mlx5.CQEReq && c.Opcode != mlx5.CQEReqErr || c.QPN != x.qpn {
			t.Fatalf("requester CQE %v qpn 0x%x", c.Opcode, c.QPN)
		}
	}
	for {
		c, ok := y.tryPoll()
		if !ok {
			break
		}
		switch c.Opcode {
		case mlx5.CQEReq, mlx5.CQEReqErr, mlx5.CQERespSend, mlx5.CQERespSendImm, mlx5.CQERespSendInv, mlx5.CQERespWrImm, mlx5.CQERespErr:
		default:
			t.Fatalf("responder CQE %v", c.Opcode)
		}
		if c.QPN != y.qpn {
			t.Fatalf("responder CQE for qpn 0x%x", c.QPN)
		}
	}
}
