package gpunetio

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mmio"
	"github.com/gdaki/gpunetio/verbs"
)

// postRecvHL posts, as device code does, receive WQE number i (one data
// segment of n bytes at the a side's buffer offset off) into the
// high-level QP's RQ ring and advances the receive doorbell record (word
// 0 of the QP's record, big-endian).
func (p *hlPair) postRecvHL(t testing.TB, i uint32, off int, n uint32) {
	t.Helper()
	rq := hostSlice(uintptr(p.hl.RQRing()), uintptr(p.hl.RQWQEs())*16)
	slot := rq[(i&(p.hl.RQWQEs()-1))*16:][:16]
	mlx5.DataSeg{ByteCount: n, LKey: p.a.mr.LKey(), Addr: p.a.addr(off)}.Put(slot)
	mmio.WriteBarrier()
	mmio.Store32(hostPtr(p.hl.QP().DBRAddr()), mlx5.BE32Native((i+1)&0xffff))
}

// recvCQE waits for receive CQE i in the high-level QP's receive CQ ring.
func (p *hlPair) recvCQE(t testing.TB, i uint32) (mlx5.CQE, []byte) {
	t.Helper()
	n := p.hl.RQWQEs()
	log := uint(0)
	for 1<<log < n {
		log++
	}
	ring := hostSlice(uintptr(p.hl.RecvCQRing().Dev), uintptr(n)*64)
	b := ring[(i&(n-1))*64:][:64]
	deadline := time.Now().Add(10 * time.Second)
	for !mlx5.CQEOwned(b[63], i, log) {
		if time.Now().After(deadline) {
			t.Fatalf("no receive CQE %d (op_own %#x)", i, b[63])
		}
		time.Sleep(20 * time.Microsecond)
	}
	mmio.ReadBarrier()
	c, err := mlx5.DecodeCQE(b)
	require.NoError(t, err)
	return c, b
}

// A high-level QP made with RQWQEs has a receive queue of 16-byte WQEs at
// the start of its work queue and a receive CQ of as many entries in GPU
// memory: receives device code posts there (WQE, then doorbell record
// word 0) take the peer's SENDs, completing in the receive CQ with their
// counter, length and immediate, in every NIC handler; with RecvInline a
// SEND of at most 32 bytes comes in the CQE.
func TestQPHLReceiveQueue(t *testing.T) {
	for _, tc := range []struct {
		name   string
		h      NICHandler
		inline bool
	}{
		{"cpu proxy", NICHandlerCPUProxy, false},
		{"auto", NICHandlerAuto, false},
		{"cpu proxy inline", NICHandlerCPUProxy, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := hostPair(t, QPHLConfig{SQWQEs: 8, RQWQEs: 3, NICHandler: tc.h, RecvInline: tc.inline})
			hl := p.hl
			require.Equal(t, uint32(4), hl.RQWQEs(), "rounded up to a power of two")
			wq := hl.QP().WQ()
			assert.Equal(t, uintptr(hl.RQRing()), wq.RQAddr, "the RQ ring starts the work queue")
			assert.Equal(t, wq.RQAddr+4*16, wq.SQAddr, "the SQ follows the RQ")
			assert.Equal(t, hl.RecvCQ(), hl.QP().RecvCQ())
			_, entries, _ := hl.RecvCQ().Ring()
			assert.Equal(t, uint32(4), entries, "a receive CQ as deep as the RQ")
			// The device QP kernels get: its receive half.
			dev, err := hl.GPUQP().DeviceQP()
			require.NoError(t, err)
			dq, err := devstruct.DecodeQP(hostSlice(uintptr(dev), uintptr(devstruct.QPSize)))
			require.NoError(t, err)
			assert.Equal(t, uint32(4), dq.RQWQENum)
			assert.Equal(t, uint64(hl.RQRing()), dq.RQWQEDAddr)
			assert.Equal(t, uint64(hl.RecvCQRing().Dev), dq.CQRQ.CQEDAddr)
			assert.Equal(t, uint32(4), dq.CQRQ.CQENum)
			assert.Equal(t, hl.RecvCQ().CQN(), dq.CQRQ.CQNum)
			assert.NotZero(t, dq.RQDBRec, "a receive doorbell record device code writes")
			for i := uint32(0); i < 10; i++ {
				p.postRecvHL(t, i, int(i%4)*256, 256)
				msg := []byte("a SEND into the receive queue of a high-level QP, #")
				msg = append(msg, byte('0'+i))
				if tc.inline && i%2 == 1 {
					msg = msg[:20]
				}
				copy(p.b.buf[4096:], msg)
				wr := verbs.SendWR{Opcode: verbs.WRSend, Signaled: true,
					SGL: []verbs.SGE{{Addr: p.b.addr(4096), Length: uint32(len(msg)), LKey: p.b.mr.LKey()}}}
				if i%3 == 2 {
					wr.Opcode, wr.Imm = verbs.WRSendImm, 0x1000+i
				}
				require.NoError(t, p.peerQP.PostSend(wr))
				c, raw := p.recvCQE(t, i)
				require.False(t, c.Opcode.IsError(), "receive %d: %v %v", i, c.Opcode, c.Syndrome)
				assert.Equal(t, uint16(i), c.WQECounter)
				assert.Equal(t, uint32(len(msg)), c.ByteCnt)
				if i%3 == 2 {
					assert.Equal(t, mlx5.CQERespSendImm, c.Opcode)
					assert.Equal(t, 0x1000+i, c.ImmInvalPKey)
				}
				if len(msg) <= 32 && tc.inline {
					assert.NotZero(t, raw[63]&0x4, "receive %d inlined", i)
					assert.Equal(t, msg, raw[:len(msg)])
				} else {
					assert.Equal(t, msg, p.a.buf[int(i%4)*256:][:len(msg)], "receive %d", i)
				}
				var wcs [1]verbs.WC
				n, err := p.peerCQ.PollWait(wcs[:], 1, 10*time.Second)
				require.NoError(t, err)
				require.Equal(t, 1, n)
				require.Equal(t, verbs.WCSuccess, wcs[0].Status)
			}
		})
	}
}

// The receive queue's bad configurations fail with ErrInvalidValue naming
// the cause.
func TestQPHLReceiveQueueBadConfig(t *testing.T) {
	g, _ := hostGPU(t)
	s := newSide(t, "emu0")
	for _, tc := range []struct {
		cfg  QPHLConfig
		want string
	}{
		{QPHLConfig{SQWQEs: 8, RQWQEs: 1<<15 + 1}, "RQWQEs 32769"},
		{QPHLConfig{SQWQEs: 8, RecvInline: true}, "RecvInline (scatter-to-CQE) needs a receive queue"},
	} {
		tc.cfg.GPU, tc.cfg.PD = g, s.pd
		_, err := NewQPHL(tc.cfg)
		require.ErrorIs(t, err, ErrInvalidValue)
		assert.ErrorContains(t, err, tc.want)
	}
}

// ResetTrackingAndMemory rewinds the receive side of a QP exported with its
// receive CQ as it does the send side: RQ indexes and lock to 0, cq_rq's
// consumer index to 0 and its cqe_rsvd to the old rq_rsvd_index, the
// receive record and RQ ring cleared, the receive CQ ring refilled.
func TestResetTrackingReceiveSide(t *testing.T) {
	p, q := hostPair(t, QPHLConfig{SQWQEs: 8, RQWQEs: 4, NICHandler: NICHandlerCPUProxy})
	dev, err := q.DeviceQP()
	require.NoError(t, err)
	p.postRecvHL(t, 0, 0, 64)
	copy(p.b.buf[4096:], "one receive")
	require.NoError(t, p.peerQP.PostSend(verbs.SendWR{Opcode: verbs.WRSend, Signaled: true,
		SGL: []verbs.SGE{{Addr: p.b.addr(4096), Length: 11, LKey: p.b.mr.LKey()}}}))
	p.recvCQE(t, 0)
	// What device code would have advanced.
	img := hostSlice(uintptr(dev), uintptr(devstruct.QPSize))
	cur, err := devstruct.DecodeQP(img)
	require.NoError(t, err)
	cur.RQRsvdIndex, cur.RQReadyIndex, cur.RQWQEPI, cur.RQLock, cur.CQRQ.CQECI = 1, 1, 1, 1, 1
	cur.Put(img)

	require.NoError(t, q.ResetTrackingAndMemory())
	got, err := devstruct.DecodeQP(img)
	require.NoError(t, err)
	assert.Zero(t, got.RQRsvdIndex)
	assert.Zero(t, got.RQReadyIndex)
	assert.Zero(t, got.RQWQEPI)
	assert.Zero(t, got.RQLock)
	assert.Zero(t, got.CQRQ.CQECI)
	assert.Equal(t, uint64(1), got.CQRQ.CQERsvd, "cqe_rsvd bridges the old numbering")
	assert.Equal(t, uint32(0), le32(hostSlice(p.hl.QP().DBRAddr(), 4)), "receive record")
	assert.Equal(t, make([]byte, 64), hostSlice(uintptr(p.hl.RQRing()), 64), "RQ ring")
	ring := hostSlice(uintptr(p.hl.RecvCQRing().Dev), 4*64)
	for i, v := range ring {
		require.Equal(t, byte(0xff), v, "receive CQ ring byte %d", i)
	}
}

// A group's main QP gets the receive queue the config asks for; its
// companion, which only posts WAITs, gets none.
func TestQPGroupHLReceiveQueue(t *testing.T) {
	g, _ := hostGPU(t)
	s := newSide(t, "emu0")
	grp, err := NewQPGroupHL(QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 8, RQWQEs: 8, NICHandler: NICHandlerCPUProxy})
	require.NoError(t, err)
	defer func() { require.NoError(t, grp.Close()) }()
	assert.Equal(t, uint32(8), grp.Main.RQWQEs())
	assert.NotNil(t, grp.Main.RecvCQ())
	assert.Zero(t, grp.Companion.RQWQEs())
	assert.Nil(t, grp.Companion.RecvCQ())
	assert.Zero(t, grp.Companion.RQRing())
}
