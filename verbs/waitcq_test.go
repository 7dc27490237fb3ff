package verbs

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitChain is the wait-on-CQ sample's setup: on emu0, QP first (its own
// CQ) and QP second (cd_master, its own CQ), each connected to a peer QP on
// emu1 whose buffer both access.
type waitChain struct {
	a, b          *end // a: emu0 (first's context, PD, buffer); b: emu1
	first, second *QP
	cq2           *CQ
}

func newWaitChain(t *testing.T) *waitChain {
	o := defaultPairOpts()
	a := newEnd(t, "emu0", o) // a.qp is "first", on a.cq
	b := newEnd(t, "emu1", o)
	connect(t, a, b, o)
	connect(t, b, a, o)
	cq2, err := NewCQ(a.ctx, CQConfig{Size: 64})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cq2.Close()) })
	cfg := o.qp
	cfg.PD, cfg.SendCQ, cfg.RecvCQ, cfg.CoreDirectMaster = a.pd, cq2, cq2, true
	second, err := NewQP(a.ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, second.Close()) })
	peer, err := NewQP(b.ctx, QPConfig{PD: b.pd, SendCQ: b.cq, RecvCQ: b.cq, SQWR: 8, RQWR: 8, SendMaxSGE: 1, RecvMaxSGE: 1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, peer.Close()) })
	connectTo(t, second, peer.QPN(), b.gid, o)
	connectTo(t, peer, second.QPN(), a.gid, o)
	return &waitChain{a: a, b: b, first: a.qp, second: second, cq2: cq2}
}

// TestWaitCQChainHoldsOrder: second's send queue holds a WAIT on first's
// CQ and then a READ of the peer's word that first's WRITE sets; the READ
// runs only after first's WRITE completed, so it always reads the new
// value, round after round, and nothing of second completes before first
// is posted.
func TestWaitCQChainHoldsOrder(t *testing.T) {
	c := newWaitChain(t)
	a, b := c.a, c.b
	const rounds = 50
	for i := 1; i <= rounds; i++ {
		pi, err := a.cq.ProducerIndex()
		require.NoError(t, err)
		require.Equal(t, a.cq.ConsumerIndex(), pi, "every completion of first was polled")
		var wait SendWR
		require.NoError(t, SetWaitCQPIWR(a.cq, pi, &wait))
		wait.WRID, wait.Signaled = 100, true
		read := SendWR{WRID: 101, Opcode: WRRDMARead, Signaled: true,
			SGL: []SGE{{Addr: a.addr(64), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(0), RKey: b.mr.RKey()}
		require.NoError(t, c.second.PostSend(wait, read))
		if i == 1 {
			// Nothing can release the WAIT: give the engine time to run
			// (an ordering, not a duration, is asserted: whatever the
			// delay, no completion may come).
			time.Sleep(20 * time.Millisecond)
			var wcs [2]WC
			n, err := c.cq2.Poll(wcs[:])
			require.NoError(t, err)
			require.Zero(t, n, "second completed before first was posted: %+v", wcs[:n])
		}
		binary.LittleEndian.PutUint64(a.buf[0:8], uint64(i))
		require.NoError(t, c.first.PostSend(SendWR{WRID: uint64(i), Opcode: WRRDMAWrite, Signaled: true,
			SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(0), RKey: b.mr.RKey()}))
		got := waitWC(t, c.cq2, 2)
		require.NoError(t, got[0].Err())
		require.NoError(t, got[1].Err())
		assert.Equal(t, WCWait, got[0].Opcode)
		assert.Equal(t, uint64(100), got[0].WRID)
		assert.Equal(t, WCRDMARead, got[1].Opcode)
		require.Equal(t, uint64(i), binary.LittleEndian.Uint64(a.buf[64:72]), "round %d: the READ ran before first's WRITE", i)
		w := waitWC(t, a.cq, 1)
		require.NoError(t, w[0].Err())
	}
	assert.Equal(t, uint32(rounds), a.cq.ConsumerIndex())
}

func TestWaitCQMisuse(t *testing.T) {
	o := defaultPairOpts()
	a := newEnd(t, "emu0", o)
	b := newEnd(t, "emu1", o)
	connect(t, a, b, o)
	connect(t, b, a, o)

	var wr SendWR
	require.ErrorIs(t, SetWaitCQPIWR(nil, 0, &wr), ErrInvalidValue)
	require.ErrorIs(t, SetWaitCQPIWR(a.cq, 0, nil), ErrInvalidValue)
	err := SetWaitCQPIWR(a.cq, 1<<24, &wr)
	require.ErrorIs(t, err, ErrInvalidValue)
	assert.Contains(t, err.Error(), "24 bits")

	// a.qp is not cd_master.
	require.NoError(t, SetWaitCQPIWR(a.cq, 0, &wr))
	err = a.qp.PostSend(wr)
	require.ErrorIs(t, err, ErrNotSupported)
	assert.Contains(t, err.Error(), "CoreDirectMaster")

	// A CQ of another device.
	cq2, err := NewCQ(a.ctx, CQConfig{Size: 16})
	require.NoError(t, err)
	defer func() { require.NoError(t, cq2.Close()) }()
	cfg := o.qp
	cfg.PD, cfg.SendCQ, cfg.RecvCQ, cfg.CoreDirectMaster = a.pd, cq2, cq2, true
	m, err := NewQP(a.ctx, cfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	connectTo(t, m, b.qp.QPN(), b.gid, o)
	require.NoError(t, SetWaitCQPIWR(b.cq, 0, &wr))
	err = m.PostSend(wr)
	require.ErrorIs(t, err, ErrInvalidValue)
	assert.Contains(t, err.Error(), "not of the QP's device")

	wr = SendWR{}
	require.NoError(t, SetWaitCQPIWR(a.cq, 0, &wr))
	wr.InlineData = []byte{1}
	require.Error(t, m.PostSend(wr))

	var nilCQ *CQ
	assert.Zero(t, nilCQ.ConsumerIndex())
	_, err = nilCQ.ProducerIndex()
	assert.ErrorIs(t, err, ErrInvalidValue)
}

// TestConnectRCPostsReceivesInInit: receives given to ConnectRC are posted
// before the QP reaches RTR, so a SEND sent right after the peer connects
// lands even with RNR retry 0 (no RNR NAK may happen); AfterInit runs in
// INIT; its error puts the QP back in RST.
func TestConnectRCPostsReceivesInInit(t *testing.T) {
	o := defaultPairOpts()
	a := newEnd(t, "emu0", o)
	b := newEnd(t, "emu1", o)
	la, err := a.qp.LocalEndpoint(1, 0)
	require.NoError(t, err)
	lb, err := b.qp.LocalEndpoint(1, 0)
	require.NoError(t, err)

	var stateInHook QPState
	optsB := &ConnectOptions{RNRRetry: Ptr[uint8](0),
		RecvWRs: []RecvWR{{WRID: 7, SGL: []SGE{{Addr: b.addr(0), Length: 64, LKey: b.mr.LKey()}}}},
		AfterInit: func(q *QP) error {
			stateInHook = q.State()
			return nil
		}}
	require.NoError(t, b.qp.ConnectRC(lb, la.Endpoint, optsB))
	assert.Equal(t, QPStateINIT, stateInHook)
	require.NoError(t, a.qp.ConnectRC(la, lb.Endpoint, &ConnectOptions{RNRRetry: Ptr[uint8](0)}))
	copy(a.buf, "hello")
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 1, Opcode: WRSend, Signaled: true, SGL: []SGE{{Addr: a.addr(0), Length: 5, LKey: a.mr.LKey()}}}))
	wc := waitWC(t, a.cq, 1)
	require.NoError(t, wc[0].Err())
	wc = waitWC(t, b.cq, 1)
	require.NoError(t, wc[0].Err())
	assert.Equal(t, uint64(7), wc[0].WRID)
	assert.Equal(t, "hello", string(b.buf[:5]))

	// A failing hook: the QP goes back to RST, the error is the hook's.
	c := newEnd(t, "emu0", o)
	lc, err := c.qp.LocalEndpoint(1, 0)
	require.NoError(t, err)
	boom := errors.New("boom")
	err = c.qp.ConnectRC(lc, lb.Endpoint, &ConnectOptions{AfterInit: func(*QP) error { return boom }})
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "AfterInit failed (QP moved back to RST)")
	assert.Equal(t, QPStateRST, c.qp.State())
	// Receives refused in INIT (an SGE of length 0) likewise.
	err = c.qp.ConnectRC(lc, lb.Endpoint, &ConnectOptions{RecvWRs: []RecvWR{{SGL: []SGE{{Addr: c.addr(0), Length: 0, LKey: c.mr.LKey()}}}}})
	require.ErrorIs(t, err, ErrInvalidValue)
	assert.Contains(t, err.Error(), "posting 1 receives in INIT failed")
	assert.Equal(t, QPStateRST, c.qp.State())
}

func TestSRQQuery(t *testing.T) {
	c, pd := openPD(t, "emu0")
	for _, typ := range []SRQType{SRQLinkedList, SRQContiguous} {
		s := newSRQ(t, c, SRQConfig{PD: pd, Type: typ, WR: 10, MaxRecvSGE: 1})
		a, err := s.Query()
		require.NoError(t, err)
		_, entries, _ := s.Ring()
		assert.Equal(t, SRQStateRDY, a.State)
		assert.Equal(t, entries, a.WR, "the ring's entries, rounded up from 10")
		assert.GreaterOrEqual(t, a.WR, uint32(10))
		assert.GreaterOrEqual(t, a.MaxRecvSGE, uint32(1))
		assert.Same(t, pd, a.PD)
		assert.Equal(t, typ, a.Type)
		require.NoError(t, s.Close())
		_, err = s.Query()
		assert.ErrorIs(t, err, ErrBadState)
	}
	var s *SRQ
	_, err := s.Query()
	assert.ErrorIs(t, err, ErrInvalidValue)
}

func TestCompletionErrorListsCausesOnHardware(t *testing.T) {
	e := (&WC{Status: WCRemAccessErr, Opcode: WCRDMAWrite}).Err()
	assert.Contains(t, e.Error(), "likely causes: wrong rkey")
	assert.Contains(t, e.Error(), "outside the peer's region")
	assert.Contains(t, e.Error(), "lacks the access right")
	e = (&WC{Status: WCLocProtErr, Opcode: WCRDMARead}).Err()
	assert.Contains(t, e.Error(), "likely causes: wrong lkey")
	e = (&WC{Status: WCRetryExcErr}).Err()
	assert.NotContains(t, e.Error(), "likely causes")
}

func TestUserContexts(t *testing.T) {
	c, pd := openPD(t, "emu0")
	cq, err := NewCQ(c, CQConfig{Size: 16, UserContext: 0xc0ffee})
	require.NoError(t, err)
	defer func() { require.NoError(t, cq.Close()) }()
	qp, err := NewQP(c, QPConfig{PD: pd, SendCQ: cq, RecvCQ: cq, SQWR: 4, SendMaxSGE: 1, UserContext: 0xbeef})
	require.NoError(t, err)
	defer func() { require.NoError(t, qp.Close()) }()
	assert.Equal(t, uintptr(0xc0ffee), cq.UserContext())
	assert.Equal(t, uintptr(0xbeef), qp.UserContext())
	var nq *QP
	assert.Zero(t, nq.UserContext())
}

func TestDeviceAttrSDKFields(t *testing.T) {
	c, _ := openPD(t, "emu0")
	a, err := QueryDevice(c)
	require.NoError(t, err)
	assert.Equal(t, AtomicCapHCA, a.AtomicCap, "the emulator's atomics are atomic among its QPs")
	assert.Equal(t, uint32(1000000), a.FreeRunningClockKHz, "the emulator's clock counts nanoseconds")
}

// TestResponderLocProtCause: a SEND into a receive whose lkey names no
// region fails at the responder with LOC_PROT_ERR, and the emulated device
// names the cause there; the requester sees REM_OP_ERR.
func TestResponderLocProtCause(t *testing.T) {
	a, b := newPair(t, defaultPairOpts())
	require.NoError(t, b.qp.PostRecv(RecvWR{WRID: 5, SGL: []SGE{{Addr: b.addr(0), Length: 64, LKey: b.mr.LKey() ^ 0x100}}}))
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 1, Opcode: WRSend, Signaled: true, InlineData: []byte("x")}))
	rwc := waitWC(t, b.cq, 1)[0]
	assert.Equal(t, WCLocProtErr, rwc.Status)
	assert.Equal(t, CauseKey, rwc.Cause)
	assert.Contains(t, rwc.Err().Error(), "the emulated device saw a key that names no valid memory region")
	assert.Equal(t, WCRemOpErr, waitWC(t, a.cq, 1)[0].Status)
}
