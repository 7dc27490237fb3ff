package verbs

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRCDataMovement(t *testing.T) {
	o := defaultPairOpts()
	a, b := newPair(t, o)
	for i := 0; i < 4096; i++ {
		a.buf[i] = byte(i * 7)
	}

	// RDMA WRITE, two SGEs, signaled.
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 1, Opcode: WRRDMAWrite, Signaled: true,
		SGL:        []SGE{{Addr: a.addr(0), Length: 1000, LKey: a.mr.LKey()}, {Addr: a.addr(1000), Length: 3096, LKey: a.mr.LKey()}},
		RemoteAddr: b.addr(8192), RKey: b.mr.RKey()}))
	wc := waitWC(t, a.cq, 1)[0]
	assert.Equal(t, WCSuccess, wc.Status, "%v", wc.Status)
	assert.Equal(t, uint64(1), wc.WRID)
	assert.Equal(t, WCRDMAWrite, wc.Opcode)
	assert.Equal(t, a.buf[:4096], b.buf[8192:8192+4096])

	// Inline WRITE.
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 2, Opcode: WRRDMAWrite, Signaled: true, InlineData: []byte("inline!"),
		RemoteAddr: b.addr(100), RKey: b.mr.RKey()}))
	assert.Equal(t, WCSuccess, waitWC(t, a.cq, 1)[0].Status)
	assert.Equal(t, "inline!", string(b.buf[100:107]))

	// RDMA READ back into a.
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 3, Opcode: WRRDMARead, Signaled: true,
		SGL: []SGE{{Addr: a.addr(20000), Length: 4096, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(8192), RKey: b.mr.RKey()}))
	wc = waitWC(t, a.cq, 1)[0]
	assert.Equal(t, WCSuccess, wc.Status)
	assert.Equal(t, WCRDMARead, wc.Opcode)
	assert.Equal(t, a.buf[:4096], a.buf[20000:20000+4096])

	// Fetch-and-add and compare-and-swap on b's word at 40000 (host order).
	binary.LittleEndian.PutUint64(b.buf[40000:], 41)
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 4, Opcode: WRAtomicFetchAdd, Signaled: true, Compare: 1,
		SGL: []SGE{{Addr: a.addr(30000), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(40000), RKey: b.mr.RKey()}))
	wc = waitWC(t, a.cq, 1)[0]
	assert.Equal(t, WCSuccess, wc.Status)
	assert.Equal(t, WCFetchAdd, wc.Opcode)
	assert.Equal(t, uint64(42), binary.LittleEndian.Uint64(b.buf[40000:]))
	assert.Equal(t, uint64(41), binary.LittleEndian.Uint64(a.buf[30000:]), "original value returned")
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 5, Opcode: WRAtomicCmpSwp, Signaled: true, Compare: 42, Swap: 7,
		SGL: []SGE{{Addr: a.addr(30008), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(40000), RKey: b.mr.RKey()}))
	assert.Equal(t, WCSuccess, waitWC(t, a.cq, 1)[0].Status)
	assert.Equal(t, uint64(7), binary.LittleEndian.Uint64(b.buf[40000:]))

	// SEND with immediate into a posted receive, unsignaled sends then one signaled.
	require.NoError(t, b.qp.PostRecv(RecvWR{WRID: 77, SGL: []SGE{{Addr: b.addr(50000), Length: 512, LKey: b.mr.LKey()}}}))
	copy(a.buf[60000:], "hello over send")
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 6, Opcode: WRSendImm, Imm: 0xdeadbeef, Signaled: true,
		SGL: []SGE{{Addr: a.addr(60000), Length: 15, LKey: a.mr.LKey()}}}))
	assert.Equal(t, WCSuccess, waitWC(t, a.cq, 1)[0].Status)
	rwc := waitWC(t, b.cq, 1)[0]
	assert.Equal(t, WCSuccess, rwc.Status)
	assert.Equal(t, uint64(77), rwc.WRID)
	assert.Equal(t, WCRecv, rwc.Opcode)
	assert.True(t, rwc.ImmValid)
	assert.Equal(t, uint32(0xdeadbeef), rwc.Imm)
	assert.Equal(t, uint32(15), rwc.ByteLen)
	assert.Equal(t, "hello over send", string(b.buf[50000:50015]))

	// WRITE with immediate consumes a receive.
	require.NoError(t, b.qp.PostRecv(RecvWR{WRID: 78}))
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 7, Opcode: WRRDMAWriteImm, Imm: 5, Signaled: true, InlineData: []byte("x"),
		RemoteAddr: b.addr(0), RKey: b.mr.RKey()}))
	assert.Equal(t, WCSuccess, waitWC(t, a.cq, 1)[0].Status)
	rwc = waitWC(t, b.cq, 1)[0]
	assert.Equal(t, WCRecvRDMAWithImm, rwc.Opcode)
	assert.Equal(t, uint64(78), rwc.WRID)
	assert.Equal(t, uint32(5), rwc.Imm)
	assert.Equal(t, byte('x'), b.buf[0])
}

func TestRCErrorCompletions(t *testing.T) {
	cases := []struct {
		name   string
		mod    func(*pairOpts)
		wr     func(a, b *end) SendWR
		status WCStatus
		cause  AccessCause
	}{
		{"bad rkey", nil, func(a, b *end) SendWR {
			return SendWR{Opcode: WRRDMAWrite, SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(0), RKey: b.mr.RKey() ^ 0x100}
		}, WCRemAccessErr, CauseKey},
		{"missing remote write right", func(o *pairOpts) { o.access = AccessLocalWrite | AccessRemoteRead }, func(a, b *end) SendWR {
			return SendWR{Opcode: WRRDMAWrite, SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(0), RKey: b.mr.RKey()}
		}, WCRemAccessErr, CauseRight},
		{"QP without remote read", func(o *pairOpts) { o.rr = false }, func(a, b *end) SendWR {
			return SendWR{Opcode: WRRDMARead, SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(0), RKey: b.mr.RKey()}
		}, WCRemAccessErr, CauseQPAccess},
		{"out of bounds", nil, func(a, b *end) SendWR {
			return SendWR{Opcode: WRRDMAWrite, SGL: []SGE{{Addr: a.addr(0), Length: 64, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(len(b.buf) - 32), RKey: b.mr.RKey()}
		}, WCRemAccessErr, CauseBounds},
		{"bad lkey", nil, func(a, b *end) SendWR {
			return SendWR{Opcode: WRRDMAWrite, SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey() + 0x100}}, RemoteAddr: b.addr(0), RKey: b.mr.RKey()}
		}, WCLocProtErr, CauseKey},
		{"local range outside the region", nil, func(a, b *end) SendWR {
			return SendWR{Opcode: WRRDMAWrite, SGL: []SGE{{Addr: a.addr(len(a.buf) - 4), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(0), RKey: b.mr.RKey()}
		}, WCLocProtErr, CauseBounds},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := defaultPairOpts()
			if c.mod != nil {
				c.mod(&o)
			}
			a, b := newPair(t, o)
			wr := c.wr(a, b)
			wr.WRID = 9
			require.NoError(t, a.qp.PostSend(wr, SendWR{WRID: 10, Opcode: WRNop, Signaled: true}))
			wcs := waitWC(t, a.cq, 2)
			assert.Equal(t, c.status, wcs[0].Status, "%v", wcs[0].Status)
			assert.Equal(t, c.cause, wcs[0].Cause, "%v", wcs[0].Cause)
			assert.Contains(t, wcs[0].Err().Error(), "the emulated device saw "+c.cause.String())
			assert.Equal(t, uint64(9), wcs[0].WRID)
			assert.Equal(t, WCWRFlushErr, wcs[1].Status, "the WQE after the error is flushed")
			attr, _, err := a.qp.Query()
			require.NoError(t, err)
			assert.Equal(t, QPStateERR, attr.CurrentState)
		})
	}
}

// A QP made with CQEInline ScatterToCQE32B gets receives of at most 32
// bytes in its receive CQE (inline format bit, data in bytes 0..31), the
// receive buffer untouched; longer ones land in the buffer.
func TestCQEInlineReceive(t *testing.T) {
	o := defaultPairOpts()
	o.qp.CQEInline = ScatterToCQE32B
	a, b := newPair(t, o)
	ring, entries, _ := b.cq.Ring()
	cqes := mem(ring, int(entries)*64)
	for i, msg := range []string{"scattered into the CQE", "thirty-three bytes, one too many!"} {
		for j := range b.buf[:64] {
			b.buf[j] = 0xee
		}
		require.NoError(t, b.qp.PostRecv(RecvWR{WRID: uint64(i), SGL: []SGE{{Addr: b.addr(0), Length: 64, LKey: b.mr.LKey()}}}))
		require.NoError(t, a.qp.PostSend(SendWR{Opcode: WRSend, Signaled: true, InlineData: []byte(msg)}))
		assert.Equal(t, WCSuccess, waitWC(t, a.cq, 1)[0].Status)
		rwc := waitWC(t, b.cq, 1)[0]
		require.Equal(t, WCSuccess, rwc.Status)
		require.Equal(t, uint32(len(msg)), rwc.ByteLen)
		cqe := cqes[(i%int(entries))*64:][:64]
		if len(msg) <= 32 {
			assert.NotZero(t, cqe[63]&0x4, "inline format bit")
			assert.Equal(t, msg, string(cqe[:len(msg)]))
			assert.Equal(t, byte(0xee), b.buf[0], "the buffer of an inlined receive is not written")
		} else {
			assert.Zero(t, cqe[63]&0xc, "normal format")
			assert.Equal(t, msg, string(b.buf[:len(msg)]))
		}
	}
}
