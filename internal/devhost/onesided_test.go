package devhost

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const gib = uint64(1) << 30

func ctrlOf(w [64]byte) (idx uint16, opcode uint8, ds uint8, flags uint8) {
	v := binary.BigEndian.Uint32(w[0:4])
	return uint16(v >> 8), uint8(v), w[7] & 0x3f, w[11]
}

func dseg(w [64]byte, off int) (bytes uint32, key uint32, addr uint64) {
	return binary.BigEndian.Uint32(w[off:]), binary.LittleEndian.Uint32(w[off+4:]), binary.BigEndian.Uint64(w[off+8:])
}

func TestPutChunksAndNOP(t *testing.T) {
	m := Mode{Sharing: SharingGPU, Handler: HandlerGPUSMDB}
	r := Addr{Addr: 0x10_0000_0000, Key: 0xa}
	l := Addr{Addr: 0x20_0000_0000, Key: 0xb}
	for _, tc := range []struct {
		size uint64
		lens []uint32 // 0 = NOP
	}{
		{0, []uint32{0}},
		{1, []uint32{1}},
		{gib, []uint32{uint32(gib)}},
		{gib + 1, []uint32{uint32(gib), 1}},
		{2*gib + gib/2, []uint32{uint32(gib), uint32(gib), uint32(gib / 2)}},
	} {
		q := newHostQP(t, HostConfig{SQWQEs: 16})
		ticket, err := q.Put(r, l, tc.size, m)
		require.NoError(t, err)
		assert.Equalf(t, uint64(len(tc.lens)-1), ticket, "size %d ticket", tc.size)
		rsvd, ready, pi := q.Indexes()
		assert.Equal(t, [3]uint64{uint64(len(tc.lens)), uint64(len(tc.lens)), uint64(len(tc.lens))}, [3]uint64{rsvd, ready, pi})
		for i, ln := range tc.lens {
			w := q.WQE(uint64(i))
			idx, op, ds, fl := ctrlOf(w)
			assert.Equal(t, uint16(i), idx)
			assert.Equal(t, uint8(0x08), fl, "CQ_UPDATE")
			if ln == 0 {
				assert.Equal(t, [2]uint8{0x00, 1}, [2]uint8{op, ds}, "NOP for size 0")
				continue
			}
			assert.Equal(t, [2]uint8{0x08, 3}, [2]uint8{op, ds})
			assert.Equal(t, r.Addr+uint64(i)*gib, binary.BigEndian.Uint64(w[16:]))
			b, k, a := dseg(w, 32)
			assert.Equal(t, ln&0x7fffffff, b)
			assert.Equal(t, l.Key, k)
			assert.Equal(t, l.Addr+uint64(i)*gib, a)
		}
	}
}

func TestPAndSignals(t *testing.T) {
	m := Mode{Sharing: SharingExclusive, Handler: HandlerGPUSMNoDBR}
	q := newHostQP(t, HostConfig{SQWQEs: 16, Handler: HandlerGPUSMNoDBR})
	r := Addr{Addr: 0x1000, Key: 1}
	sr := Addr{Addr: 0x3000, Key: 3}
	sl := Addr{Addr: 0x4000, Key: 4}

	for i, size := range []uint32{1, 2, 4, 8} {
		tk, err := q.P(r, 0x1122334455667788, size, m)
		require.NoError(t, err)
		assert.Equal(t, uint64(i), tk)
		w := q.WQE(tk)
		_, op, ds, _ := ctrlOf(w)
		assert.Equal(t, [2]uint8{0x08, 3}, [2]uint8{op, ds})
		assert.Equal(t, 0x80000000|size, binary.BigEndian.Uint32(w[32:]))
		var val [8]byte
		binary.LittleEndian.PutUint64(val[:], 0x1122334455667788)
		assert.Equal(t, val[:size], w[36:36+size], "native bytes of the value")
	}
	_, err := q.P(r, 1, 3, m)
	require.Error(t, err)

	tk, err := q.PutSignal(r, Addr{Addr: 0x2000, Key: 2}, 64, sr, sl, 5, m)
	require.NoError(t, err)
	assert.Equal(t, uint64(5), tk, "ticket is the atomic after the write")
	_, op, _, _ := ctrlOf(q.WQE(4))
	assert.Equal(t, uint8(0x08), op)
	w := q.WQE(5)
	_, op, ds, _ := ctrlOf(w)
	assert.Equal(t, [2]uint8{0x12, 4}, [2]uint8{op, ds})
	assert.Equal(t, uint64(5), binary.BigEndian.Uint64(w[32:]), "adds sig_val")
	b, k, a := dseg(w, 48)
	assert.Equal(t, []uint64{8, uint64(sl.Key), sl.Addr}, []uint64{uint64(b), uint64(k), a})

	tk, err = q.PSignal(r, 9, sr, sl, 1, m)
	require.NoError(t, err)
	assert.Equal(t, uint64(7), tk)
	tk, err = q.Signal(sr, sl, 2, m)
	require.NoError(t, err)
	assert.Equal(t, uint64(8), tk)
	_, _, pi := q.Indexes()
	assert.Equal(t, uint64(9), pi)
}

func TestGetMCSTAndZeroSize(t *testing.T) {
	m := Mode{Sharing: SharingCTA, Handler: HandlerAuto}
	q := newHostQP(t, HostConfig{SQWQEs: 16, Handler: HandlerCPUProxy})
	r := Addr{Addr: 0x1000, Key: 1}
	l := Addr{Addr: 0x2000, Key: 2}
	d := Addr{Addr: 0x3000, Key: 3}
	tk, err := q.Get(r, l, gib+8, d, true, m)
	require.NoError(t, err)
	assert.Equal(t, uint64(2), tk, "two reads and the DUMP")
	_, op0, _, _ := ctrlOf(q.WQE(0))
	_, op1, _, _ := ctrlOf(q.WQE(1))
	_, op2, ds2, _ := ctrlOf(q.WQE(2))
	assert.Equal(t, []uint8{0x10, 0x10, 0x23, 2}, []uint8{op0, op1, op2, ds2})
	assert.Equal(t, uint64(3), q.Mailbox())

	tk, err = q.Get(r, l, 0, d, false, m)
	require.NoError(t, err)
	assert.Equal(t, uint64(3), tk, "size 0 posts one NOP")
	_, op, _, _ := ctrlOf(q.WQE(3))
	assert.Equal(t, uint8(0), op)

	q.Complete(3, CQEOpReq, 0)
	require.NoError(t, q.GetWait(d, 3, m, shortWait))
	require.NoError(t, q.WaitAll(SharingCTA, shortWait))
	q.Fence()
}

func TestCounters(t *testing.T) {
	m := Mode{Sharing: SharingGPU, Handler: HandlerAuto}
	r := Addr{Addr: 0x1000, Key: 1}
	l := Addr{Addr: 0x2000, Key: 2}
	cr := Addr{Addr: 0x5000, Key: 5}
	cl := Addr{Addr: 0x6000, Key: 6}
	for _, tc := range []struct {
		kind    CounterKind
		mainOps []uint8
	}{
		{CounterPut, []uint8{0x08}},
		{CounterP, []uint8{0x08}},
		{CounterPutSignal, []uint8{0x08, 0x12}},
		{CounterSignal, []uint8{0x12}},
		{CounterGet, []uint8{0x10}},
	} {
		q := newHostQP(t, HostConfig{SQWQEs: 16, CQN: 0x321})
		comp := newHostQP(t, HostConfig{QPN: 0x55, SQWQEs: 16})
		// Move the main QP forward so max_index is not trivially 0.
		_, err := q.Put(r, l, 8, m)
		require.NoError(t, err)
		stores := captureStores(t, func() {
			require.NoError(t, q.Counter(Counter{Kind: tc.kind, Remote: r, Local: l, Size: 8, SigRemote: r, SigLocal: l,
				SigVal: 1, Companion: comp.QP, CounterRemote: cr, CounterLocal: cl, CounterVal: 7}, m))
		})
		n := uint64(len(tc.mainOps))
		for i, op := range tc.mainOps {
			_, got, _, _ := ctrlOf(q.WQE(1 + uint64(i)))
			assert.Equalf(t, op, got, "kind %d main WQE %d", tc.kind, i)
		}
		wait := comp.WQE(0)
		_, op, ds, _ := ctrlOf(wait)
		assert.Equal(t, [2]uint8{0x0f, 2}, [2]uint8{op, ds})
		assert.Equal(t, uint32(n), binary.BigEndian.Uint32(wait[24:]), "max_index = last main WQE index")
		assert.Equal(t, uint32(0x321), binary.BigEndian.Uint32(wait[28:]), "main CQ number")
		fa := comp.WQE(1)
		_, op, _, _ = ctrlOf(fa)
		assert.Equal(t, uint8(0x12), op)
		assert.Equal(t, uint64(7), binary.BigEndian.Uint64(fa[32:]))
		// Our doorbell order across both QPs: every DBR, then every doorbell.
		assert.Equal(t, []Store{dbr(q, n+1), dbr(comp, 2), db(q, n+1), db(comp, 2)}, stores)
	}
}
