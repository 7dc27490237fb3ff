package integration

import (
	"bytes"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/internal/devhost"
	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/verbs"
)

// tsSide is one emulated NIC with an RC QP that has a receive queue of 16-byte
// WQEs and a receive CQ of its own, exported to a host-memory GPU with both
// CQs, and a registered data buffer.
type tsSide struct {
	ctx  *verbs.Context
	qp   *verbs.QP
	exp  *gpunetio.QP
	q    *devhost.QP
	buf  []byte
	mr   *verbs.MR
	gid  verbs.GID
	mode devhost.Mode
}

const tsRQ = 64 // receive ring entries

func newTSSide(t *testing.T, g *gpunetio.GPU, name string, hc handlerCase) *tsSide {
	t.Helper()
	s := &tsSide{mode: devhost.Mode{Sharing: devhost.SharingGPU, Handler: hc.dev}}
	var err error
	s.ctx, err = verbs.OpenDevice(name)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.ctx.Close()) })
	pd, err := s.ctx.AllocPD()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, pd.Close()) })
	d, err := verbs.OpenDev(pd)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	scq, err := d.NewCQ(verbs.CQConfig{Size: 128, Overrun: true}) // device code never writes CQ records
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, scq.Close()) })
	rcq, err := d.NewCQ(verbs.CQConfig{Size: tsRQ, Overrun: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rcq.Close()) })
	s.qp, err = d.NewQP(verbs.QPConfig{SendCQ: scq, RecvCQ: rcq, SQWR: 128, RQWR: tsRQ, SendMaxSGE: 1, RecvMaxSGE: 1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.qp.Close()) })
	s.exp, err = g.ExportQP(s.qp, scq, rcq, gpunetio.ExportConfig{NICHandler: hc.qp, SendDBRModeExt: hc.ext})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.exp.Close()) })
	if s.exp.CPUAssisted() {
		svc, err := gpunetio.NewService()
		require.NoError(t, err)
		require.NoError(t, svc.Monitor(s.exp))
		t.Cleanup(func() { require.NoError(t, svc.Close()) })
	}
	p, err := s.exp.DeviceQP()
	require.NoError(t, err)
	s.q, err = devhost.FromPointer(*(*unsafe.Pointer)(unsafe.Pointer(&p))) // host memory: never moves
	require.NoError(t, err)
	s.buf, err = syscall.Mmap(-1, 0, 1<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Munmap(s.buf) })
	s.mr, err = pd.RegMR(uintptr(unsafe.Pointer(&s.buf[0])), uint64(len(s.buf)), verbs.AccessLocalWrite|verbs.AccessRemoteWrite)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.mr.Close()) })
	e, err := s.ctx.QueryGID(1, 0)
	require.NoError(t, err)
	s.gid = e.GID
	return s
}

func (s *tsSide) laddr(off int) devhost.Addr {
	return devhost.Addr{Addr: uint64(uintptr(unsafe.Pointer(&s.buf[off]))), Key: be32(s.mr.LKey())}
}

// connectTS connects s to peer with the given RNR retry count (7: forever)
// and the smallest RNR NAK timer.
func connectTS(t *testing.T, s, peer *tsSide, rnrRetry uint8) {
	t.Helper()
	local, err := s.qp.LocalEndpoint(1, 0)
	require.NoError(t, err)
	ack, retry, minRNR := uint8(14), uint8(7), uint8(1)
	require.NoError(t, s.qp.ConnectRC(local, verbs.Endpoint{QPN: peer.qp.QPN(), GID: peer.gid}, &verbs.ConnectOptions{
		PathMTU: verbs.Ptr(verbs.MTU1024), AckTimeout: &ack, RetryCnt: &retry, RNRRetry: &rnrRetry, MinRNRTimer: &minRNR}))
}

func tsPair(t *testing.T, hc handlerCase, rnrRetry uint8) (a, b *tsSide) {
	t.Helper()
	g := gpunetio.NewHostGPU()
	t.Cleanup(func() { require.NoError(t, g.Close()) }) // first registered: runs last
	a = newTSSide(t, g, "emu0", hc)
	b = newTSSide(t, g, "emu1", hc)
	connectTS(t, a, b, rnrRetry)
	connectTS(t, b, a, rnrRetry)
	return a, b
}

const tsWait = 10 * time.Second

// TestTwoSidedOnEmulator drives send, recv and recv_wait (thread scope,
// compiled as host C++) between two emulated NICs in every NIC handler: b's
// threads post receives into its GPU-side receive ring, a's threads send
// messages of different sizes (one of 3000 bytes spans three 1024-byte
// packets, one has no payload), and every receive completion carries its
// length and every byte lands in order.
func TestTwoSidedOnEmulator(t *testing.T) {
	for _, hc := range handlers {
		t.Run(hc.name, func(t *testing.T) {
			a, b := tsPair(t, hc, 7)
			const threads, perThread, slot = 4, 8, 4096
			n := threads * perThread
			size := func(i int) int {
				switch i {
				case 0:
					return 0
				case 1:
					return 3000
				}
				return 1 + (i*37)%200
			}
			// Receives first (from several threads: GPU sharing), one buffer per message.
			var mu sync.Mutex
			tickets := map[uint64]int{}
			var wg sync.WaitGroup
			for th := 0; th < threads; th++ {
				wg.Add(1)
				go func(th int) {
					defer wg.Done()
					for k := 0; k < perThread; k++ {
						i := th*perThread + k
						tk, err := b.q.Recv(b.laddr(i*slot), slot, b.mode)
						assert.NoError(t, err)
						mu.Lock()
						tickets[tk] = i
						mu.Unlock()
					}
				}(th)
			}
			wg.Wait()
			require.Len(t, tickets, n, "every receive has its own RQ index")
			rsvd, ready, pi := b.q.RQIndexes()
			assert.Equal(t, [3]uint64{uint64(n), uint64(n), uint64(n)}, [3]uint64{rsvd, ready, pi})

			// The sends, in ticket order: the i-th message fills the i-th receive.
			order := make([]int, n)
			for tk, i := range tickets {
				order[tk] = i
			}
			for k, i := range order {
				for j := 0; j < size(i); j++ {
					a.buf[k*slot+j] = byte(i*7 + j)
				}
			}
			var last uint64
			for k, i := range order {
				tk, err := a.q.Send(a.laddr(k*slot), uint64(size(i)), a.mode)
				require.NoError(t, err)
				last = tk
			}
			require.NoError(t, a.q.Wait(last, devhost.SharingGPU, tsWait))

			for tk := uint64(0); tk < uint64(n); tk++ {
				i := order[tk]
				c, err := b.q.RecvWait(devhost.Addr{}, tk, devhost.RecvOptions{}, b.mode, tsWait)
				require.NoError(t, err)
				require.True(t, c.Valid())
				assert.Equal(t, uint8(2), c.Opcode(), "RESP_SEND for receive %d", tk)
				assert.Equal(t, uint32(size(i)), c.ByteCount(), "length of receive %d", tk)
				assert.Equal(t, uint16(tk), c.WQECounter())
				assert.Zero(t, c.IsInline(), "no scatter-to-CQE on this QP")
				want := a.buf[int(tk)*slot : int(tk)*slot+size(i)]
				assert.True(t, bytes.Equal(want, b.buf[i*slot:i*slot+size(i)]), "bytes of message %d", tk)
			}
			assert.Equal(t, devstruct.QPErrNone, b.q.Error().Status)
		})
	}
}

// TestTwoSidedRecvWaitForms: the three-argument recv_wait waits for the newest
// receive; the non-blocking form returns at once with the slot of a receive
// that has not completed (and does not consume it); MCST posts a DUMP on the
// send queue after the receive; wait_recv (SDK 3.1) waits for its ticket;
// poll_cq and poll_one_cq_device_at on the receive CQ see the same CQE; the
// three-argument form on a QP that never reserved a receive leaves its
// output alone.
func TestTwoSidedRecvWaitForms(t *testing.T) {
	a, b := tsPair(t, handlers[0], 7)
	c, err := a.q.RecvWaitLast(devhost.Addr{}, devhost.RecvOptions{}, a.mode, tsWait)
	require.NoError(t, err)
	assert.False(t, c.Valid(), "no receive ever reserved: the CQE output is untouched")

	t0, err := b.q.Recv(b.laddr(0), 64, b.mode)
	require.NoError(t, err)
	t1, err := b.q.Recv(b.laddr(64), 64, b.mode)
	require.NoError(t, err)
	c, err = b.q.RecvWait(devhost.Addr{}, t0, devhost.RecvOptions{NonBlocking: true}, b.mode, tsWait)
	require.NoError(t, err)
	require.True(t, c.Valid(), "the slot of the ticket, though nothing arrived")
	_, err = b.q.PollRecvCQ(t0, devhost.SharingGPU, false, tsWait)
	assert.ErrorIs(t, err, syscall.EBUSY, "nothing arrived: EBUSY, not a completion")
	_, err = b.q.PollOneRecvCQDeviceAt(t0, devhost.SharingGPU)
	assert.ErrorIs(t, err, syscall.EBUSY)

	copy(a.buf, "first message")
	copy(a.buf[64:], "second message")
	_, err = a.q.Send(a.laddr(0), 13, a.mode)
	require.NoError(t, err)
	tk, err := a.q.Send(a.laddr(64), 14, a.mode)
	require.NoError(t, err)
	require.NoError(t, a.q.Wait(tk, devhost.SharingGPU, tsWait))

	// The newest receive (t1), with the MCST DUMP into a 1-byte scratch buffer.
	rsvd, _, _ := b.q.Indexes()
	c, err = b.q.RecvWaitLast(b.laddr(4000), devhost.RecvOptions{MCST: true}, b.mode, tsWait)
	require.NoError(t, err)
	assert.Equal(t, uint32(14), c.ByteCount())
	assert.Equal(t, "second message", string(b.buf[64:78]))
	after, _, _ := b.q.Indexes()
	assert.Equal(t, rsvd+1, after, "MCST posted one DUMP on the send queue")
	require.NoError(t, b.q.Wait(after-1, devhost.SharingGPU, tsWait), "and it completed")

	require.NoError(t, b.q.WaitRecv(t0, devhost.Addr{}, b.mode, tsWait))
	pc, err := b.q.PollRecvCQ(t0, devhost.SharingGPU, true, tsWait)
	require.NoError(t, err)
	dc, err := b.q.PollOneRecvCQDeviceAt(t0, devhost.SharingGPU)
	require.NoError(t, err)
	assert.Equal(t, pc.Pointer(), dc.Pointer())
	assert.Equal(t, uint32(13), pc.ByteCount())
	assert.Equal(t, "first message", string(b.buf[:13]))
	_ = t1
}

// TestTwoSidedRNR: a SEND that finds no receive posted draws RNR NAKs. With
// rnr_retry 7 it completes once a receive is posted (and not before); with
// rnr_retry 0 the sender's send fails with RNR_RETRY_EXC_ERR (0x16), which
// ends the device wait with EIO and lands in the QP's error record; the
// sender's own posted receive is flushed (WR_FLUSH_ERR, 0x05); a
// recv_wait on it returns at once, on the QP's error record.
func TestTwoSidedRNR(t *testing.T) {
	t.Run("later receive", func(t *testing.T) {
		a, b := tsPair(t, handlers[0], 7)
		copy(a.buf, "arrives after an RNR")
		tk, err := a.q.Send(a.laddr(0), 20, a.mode)
		require.NoError(t, err)
		for i := 0; i < 200; i++ { // a SEND cannot complete while no receive is posted
			err := a.q.PollOneCQAt(tk, devhost.SharingGPU)
			require.ErrorIs(t, err, syscall.EBUSY, "the send completed with no receive posted")
			time.Sleep(time.Millisecond)
		}
		rt, err := b.q.Recv(b.laddr(0), 64, b.mode)
		require.NoError(t, err)
		require.NoError(t, a.q.Wait(tk, devhost.SharingGPU, tsWait))
		c, err := b.q.RecvWait(devhost.Addr{}, rt, devhost.RecvOptions{}, b.mode, tsWait)
		require.NoError(t, err)
		assert.Equal(t, uint8(2), c.Opcode())
		assert.Equal(t, "arrives after an RNR", string(b.buf[:20]))
	})
	t.Run("no receive", func(t *testing.T) {
		a, _ := tsPair(t, handlers[0], 0)
		// The sender's own receive, posted before: flushed when its QP fails.
		rt, err := a.q.Recv(a.laddr(64), 64, a.mode)
		require.NoError(t, err)
		tk, err := a.q.Send(a.laddr(0), 20, a.mode)
		require.NoError(t, err)
		err = a.q.Wait(tk, devhost.SharingGPU, tsWait)
		require.ErrorIs(t, err, syscall.EIO)
		rec := a.q.Error()
		assert.Equal(t, uint8(0x16), rec.Syndrome, "RNR_RETRY_EXC_ERR")
		assert.Equal(t, uint8(13), rec.CQEOpcode, "REQ_ERR")
		var c devhost.CQE
		returnsWithin(t, tsWait, "recv_wait on the failed sender", func() {
			c, err = a.q.RecvWaitDirect(devhost.Addr{}, rt, a.mode)
		})
		require.NoError(t, err)
		awaitFlush(t, c, "the sender's flushed receive")
	})
}

// TestTwoSidedErrors: a receive buffer too small for the message completes
// with a RESP_ERR CQE (LOC_LEN_ERR, 0x01) that ends recv_wait at once (the
// caller reads the opcode from the CQE, the device record has it); the
// sender sees REM_INV_REQ_ERR (0x12). A later blocking recv_wait on the
// failed QP returns too, with its receive flushed (WR_FLUSH_ERR).
func TestTwoSidedErrors(t *testing.T) {
	a, b := tsPair(t, handlers[0], 7)
	rt, err := b.q.Recv(b.laddr(0), 16, b.mode)
	require.NoError(t, err)
	rt2, err := b.q.Recv(b.laddr(64), 64, b.mode)
	require.NoError(t, err)
	tk, err := a.q.Send(a.laddr(0), 100, a.mode)
	require.NoError(t, err)

	done := make(chan devhost.CQE, 1)
	go func() {
		c, err := b.q.RecvWaitDirect(devhost.Addr{}, rt, b.mode)
		assert.NoError(t, err)
		done <- c
	}()
	var c devhost.CQE
	select {
	case c = <-done:
	case <-time.After(tsWait):
		hung(t, "recv_wait on an error CQE", tsWait)
	}
	assert.Equal(t, uint8(14), c.Opcode(), "RESP_ERR")
	assert.Equal(t, uint8(0x01), c.Syndrome(), "LOC_LEN_ERR")
	rec := b.q.Error()
	assert.Equal(t, uint8(14), rec.CQEOpcode)
	assert.Equal(t, uint8(0x01), rec.Syndrome)
	assert.Equal(t, rt, rec.WQEIndex)

	err = a.q.Wait(tk, devhost.SharingGPU, tsWait)
	require.ErrorIs(t, err, syscall.EIO)
	assert.Equal(t, uint8(0x12), a.q.Error().Syndrome, "REM_INV_REQ_ERR at the sender")

	returnsWithin(t, tsWait, "recv_wait after the QP failed", func() {
		c, err = b.q.RecvWaitDirect(devhost.Addr{}, rt2, b.mode)
	})
	require.NoError(t, err)
	awaitFlush(t, c, "the receiver's second receive")
}

// awaitFlush checks that c, the CQE a recv_wait on a failed QP pointed at,
// becomes its receive's flush: RESP_ERR with WR_FLUSH_ERR. The wait returns
// as soon as the QP's error record shows the failure, which can be before
// the NIC has written the flush CQE (a ConnectX flushes the RQ after it
// moves the QP to ERR), so the slot may still hold the CQ's initial invalid
// entry for a moment; the flush must land within tsWait.
func awaitFlush(t *testing.T, c devhost.CQE, what string) {
	t.Helper()
	require.True(t, c.Valid(), "%s: recv_wait set no CQE pointer", what)
	deadline := time.Now().Add(tsWait)
	for c.Opcode() == 0xf { // MLX5_CQE_INVALID, as the CQ was created
		if time.Now().After(deadline) {
			t.Fatalf("%s: no CQE within %v", what, tsWait)
		}
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, uint8(14), c.Opcode(), "%s: RESP_ERR", what)
	assert.Equal(t, uint8(0x05), c.Syndrome(), "%s: WR_FLUSH_ERR", what)
}

// TestTwoSidedLowLevel builds the WQEs by hand as SDK users do: receives
// written with get_rwqe_ptr + wqe_prepare_recv and published with
// submit<..., QP_RQ> (no reservation), a SEND_IMM and a two-segment SEND
// built with wqe_prepare_send. The receiver sees RESP_SEND_IMM with the
// immediate, then RESP_SEND with both segments' bytes in order; a third
// SEND fills a receive re-armed by advancing the record over an entry
// written once, a lap earlier in a ring of tsRQ entries.
func TestTwoSidedLowLevel(t *testing.T) {
	a, b := tsPair(t, handlers[0], 7)
	excl := devhost.Mode{Sharing: devhost.SharingExclusive, Handler: devhost.HandlerGPUSMDB}
	b.q.PrepareRecv(b.q.RWQEPtr(0), b.laddr(0), 64)
	b.q.PrepareRecv(b.q.RWQEPtr(1), b.laddr(64), 64)
	require.NoError(t, b.q.RQSubmit(2, excl))
	_, _, pi := b.q.RQIndexes()
	assert.Equal(t, uint64(2), pi, "rq_wqe_pi follows the submit")

	copy(a.buf, "immediate payload")
	copy(a.buf[100:], "two ")
	copy(a.buf[200:], "segments")
	base, err := a.q.Reserve(2, excl)
	require.NoError(t, err)
	la, lb := a.laddr(0), a.laddr(100)
	require.NoError(t, a.q.PrepareSend(a.q.WQEPtr(base), uint16(base), 0x0b, devhost.CtrlCQUpdate, be32(0xfeedbeef),
		devhost.Seg{Addr: la.Addr, Key: la.Key, Bytes: 17}))
	lc := a.laddr(200)
	require.NoError(t, a.q.PrepareSend(a.q.WQEPtr(base+1), uint16(base+1), 0x0a, devhost.CtrlCQUpdate, 0,
		devhost.Seg{Addr: lb.Addr, Key: lb.Key, Bytes: 4}, devhost.Seg{Addr: lc.Addr, Key: lc.Key, Bytes: 8}))
	require.NoError(t, a.q.MarkReady(base, base+1, devhost.SharingExclusive, devhost.ReadyDefault))
	require.NoError(t, a.q.Submit(base+2, excl))
	require.NoError(t, a.q.Wait(base+1, devhost.SharingExclusive, tsWait))

	c, err := b.q.PollRecvCQ(0, devhost.SharingExclusive, true, tsWait)
	require.NoError(t, err)
	assert.Equal(t, uint8(3), c.Opcode(), "RESP_SEND_IMM")
	assert.Equal(t, uint32(0xfeedbeef), c.Immediate())
	assert.Equal(t, uint32(17), c.ByteCount())
	assert.Equal(t, "immediate payload", string(b.buf[:17]))
	c, err = b.q.PollRecvCQ(1, devhost.SharingExclusive, true, tsWait)
	require.NoError(t, err)
	assert.Equal(t, uint8(2), c.Opcode())
	assert.Equal(t, uint32(12), c.ByteCount())
	assert.Equal(t, "two segments", string(b.buf[64:76]))

	// Re-arm: RQ index tsRQ uses ring entry 0 again, written above and never rewritten.
	for k := 2; k < tsRQ; k++ { // the receives in between (entries 2..tsRQ-1)
		b.q.PrepareRecv(b.q.RWQEPtr(uint64(k)), b.laddr(128), 64)
	}
	require.NoError(t, b.q.RQSubmit(tsRQ+1, excl))
	copy(a.buf[300:], "wrapped")
	var last uint64
	for k := 2; k <= tsRQ; k++ {
		tk, err := a.q.Send(a.laddr(300), 7, excl)
		require.NoError(t, err)
		last = tk
	}
	require.NoError(t, a.q.Wait(last, devhost.SharingExclusive, tsWait))
	c, err = b.q.PollRecvCQ(tsRQ, devhost.SharingExclusive, true, tsWait)
	require.NoError(t, err)
	assert.Equal(t, uint32(7), c.ByteCount())
	assert.Equal(t, "wrapped", string(b.buf[:7]), "the re-armed entry 0 points at offset 0 again")
}
