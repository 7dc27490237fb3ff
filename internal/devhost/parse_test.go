package devhost

import (
	"math/bits"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// The WQEs the device headers build, read back by the NIC-side parser of
// internal/mlx5 (the one the emulator executes): every opcode a header
// builder produces must parse to the operands it was given. The header and
// mlx5 define the WQE layout independently, so this is where a drift between
// them shows.

// sqRing is the whole SQ ring as the NIC sees it.
func (h *HostQP) sqRing() []byte {
	return unsafe.Slice((*byte)(h.sq), int(h.cfg.SQWQEs)*mlx5.WQEBB)
}

// be returns the verbatim 32-bit value a caller passes to a header builder so
// that the WQE holds v big-endian: keys, immediates, and the compare and
// boundary operands of the masked atomics are taken as already byte-swapped.
func be(v uint32) uint32 { return bits.ReverseBytes32(v) }

func be64(v uint64) uint64 { return bits.ReverseBytes64(v) }

func TestHeaderWQEsParse(t *testing.T) {
	const (
		rkey = 0x00abcd01
		lkey = 0x00123401
		lk1  = 0x00567802
	)
	q := newHostQP(t, HostConfig{SQWQEs: 16})
	qpn := q.Config().QPN
	r := Addr{Addr: 0x7f0000001000, Key: be(rkey)}
	l := Addr{Addr: 0x7f2000000000, Key: be(lkey)}
	l1 := Addr{Addr: 0x7f3000000040, Key: be(lk1)}
	raddr := mlx5.RAddrSeg{Addr: r.Addr, RKey: rkey}
	sge := func(a Addr, key, n uint32) mlx5.DataSeg { return mlx5.DataSeg{ByteCount: n, LKey: key, Addr: a.Addr} }
	inl := []byte("0123456789abcdefghijklmnopqr") // 28 bytes, the builder's maximum
	src := cBytes(t, inl)
	signaled := uint32(mlx5.CtrlCQUpdate)

	cases := []struct {
		name  string
		idx   uint16
		build func(i uint16)
		want  mlx5.WQE
	}{
		{"NOP", 0x1234, func(i uint16) { q.PrepareNOP(q.WQEPtr(uint64(i)), i, signaled) },
			mlx5.WQE{}},
		{"RDMA_WRITE", 5, func(i uint16) {
			q.PrepareWrite(q.WQEPtr(uint64(i)), i, OpRDMAWrite, signaled, 0, r, l, 0x1000)
		}, mlx5.WQE{RAddr: raddr, SGEs: []mlx5.DataSeg{sge(l, lkey, 0x1000)}}},
		{"RDMA_WRITE_IMM, two SGEs, fenced", 0xffff, func(i uint16) {
			q.PrepareWrite2(q.WQEPtr(uint64(i)), i, OpRDMAWriteImm, signaled|CtrlFence, be(0xdeadbeef), r, l, 100, l1, 0x200)
		}, mlx5.WQE{Ctrl: mlx5.CtrlSeg{Imm: 0xdeadbeef, Flags: mlx5.CtrlCQUpdateFence},
			RAddr: raddr, SGEs: []mlx5.DataSeg{sge(l, lkey, 100), sge(l1, lk1, 0x200)}}},
		{"RDMA_WRITE inline 28 bytes", 6, func(i uint16) {
			q.PrepareWriteInline(q.WQEPtr(uint64(i)), i, signaled, r, src, 28)
		}, mlx5.WQE{RAddr: raddr, IsInline: true, Inline: inl}},
		{"RDMA_WRITE inline 5 bytes (header, then data)", 7, func(i uint16) {
			w := q.WQEPtr(uint64(i))
			q.PrepareInlineHeader(w, i, signaled, r, 5)
			require.NoError(t, q.PrepareInlineData(w, inl[:5]))
		}, mlx5.WQE{RAddr: raddr, IsInline: true, Inline: inl[:5]}},
		{"RDMA_READ", 9, func(i uint16) {
			q.PrepareRead(q.WQEPtr(uint64(i)), i, signaled, r, l, 0x10)
		}, mlx5.WQE{RAddr: raddr, SGEs: []mlx5.DataSeg{sge(l, lkey, 0x10)}}},
		{"RDMA_READ, two SGEs", 10, func(i uint16) {
			q.PrepareRead2(q.WQEPtr(uint64(i)), i, signaled, r, l, 0x80000010, l1, 0x20)
		}, mlx5.WQE{RAddr: raddr, SGEs: []mlx5.DataSeg{sge(l, lkey, 0x10), sge(l1, lk1, 0x20)}}},
		{"ATOMIC_FA", 11, func(i uint16) {
			q.PrepareAtomic(q.WQEPtr(uint64(i)), i, OpAtomicFA, signaled, r, l, 8, 0x1111, 0x2222)
		}, mlx5.WQE{RAddr: raddr, Atomic: mlx5.AtomicSeg{SwapAdd: 0x1111, Compare: 0x1111},
			SGEs: []mlx5.DataSeg{sge(l, lkey, 8)}}},
		{"ATOMIC_CS", 12, func(i uint16) {
			q.PrepareAtomic(q.WQEPtr(uint64(i)), i, OpAtomicCS, signaled, r, l, 8, 0x1111, 0x2222)
		}, mlx5.WQE{RAddr: raddr, Atomic: mlx5.AtomicSeg{SwapAdd: 0x2222, Compare: 0x1111},
			SGEs: []mlx5.DataSeg{sge(l, lkey, 8)}}},
		{"ATOMIC_MASKED_FA 4 bytes", 13, func(i uint16) {
			q.PrepareAtomicExt(q.WQEPtr(uint64(i)), nil, i, OpAtomicMaskedFA, signaled, r, l,
				AtomicExt{AddData: 0xa1a2a3a4, FieldBoundary: uint64(be(0x80008000))})
		}, mlx5.WQE{Ctrl: mlx5.CtrlSeg{OpMod: mlx5.OpModMaskedAtomic4}, RAddr: raddr,
			MaskedFA: mlx5.MaskedFASeg{Add: 0xa1a2a3a4, FieldBoundary: 0x80008000}, SGEs: []mlx5.DataSeg{sge(l, lkey, 4)}}},
		{"ATOMIC_MASKED_FA 8 bytes", 14, func(i uint16) {
			q.PrepareAtomicExt(q.WQEPtr(uint64(i)), nil, i, OpAtomicMaskedFA, signaled, r, l,
				AtomicExt{Bytes8: true, AddData: 0x0102030405060708, FieldBoundary: be64(0x8000000080000000)})
		}, mlx5.WQE{Ctrl: mlx5.CtrlSeg{OpMod: mlx5.OpModMaskedAtomic8}, RAddr: raddr,
			MaskedFA: mlx5.MaskedFASeg{Add: 0x0102030405060708, FieldBoundary: 0x8000000080000000},
			SGEs:     []mlx5.DataSeg{sge(l, lkey, 8)}}},
		{"ATOMIC_MASKED_CS 4 bytes", 3, func(i uint16) {
			q.PrepareAtomicExt(q.WQEPtr(uint64(i)), nil, i, OpAtomicMaskedCS, signaled, r, l,
				AtomicExt{SwapData: 0x11, CompareData: uint64(be(0x22)), SwapMask: 0x33, CompareMask: uint64(be(0x44))})
		}, mlx5.WQE{Ctrl: mlx5.CtrlSeg{OpMod: mlx5.OpModMaskedAtomic4}, RAddr: raddr,
			MaskedCS: mlx5.MaskedCSSeg{Swap: 0x11, Compare: 0x22, SwapMask: 0x33, CompareMask: 0x44},
			SGEs:     []mlx5.DataSeg{sge(l, lkey, 4)}}},
		// Five segments: the last one wraps to slot 0 of the ring.
		{"ATOMIC_MASKED_CS 8 bytes across the ring end", 15, func(i uint16) {
			q.PrepareAtomicExt(q.WQEPtr(uint64(i)), q.WQEPtr(uint64(i)+1), i, OpAtomicMaskedCS, signaled, r, l,
				AtomicExt{Bytes8: true, SwapData: 1, CompareData: be64(2), SwapMask: 3, CompareMask: be64(4)})
		}, mlx5.WQE{Ctrl: mlx5.CtrlSeg{OpMod: mlx5.OpModMaskedAtomic8}, RAddr: raddr,
			MaskedCS: mlx5.MaskedCSSeg{Swap: 1, Compare: 2, SwapMask: 3, CompareMask: 4},
			SGEs:     []mlx5.DataSeg{sge(l, lkey, 8)}}},
		{"WAIT", 0x0102, func(i uint16) { q.PrepareWait(q.WQEPtr(uint64(i)), i, signaled, 41, 0x401) },
			mlx5.WQE{Ctrl: mlx5.CtrlSeg{OpMod: mlx5.OpModWaitCQPI}, Wait: mlx5.WaitSeg{MaxIndex: 41, QPNCQN: 0x401}}},
		{"DUMP", 4, func(i uint16) { q.PrepareDump(q.WQEPtr(uint64(i)), i, signaled, l, 1) },
			mlx5.WQE{SGEs: []mlx5.DataSeg{sge(l, lkey, 1)}}},
	}
	opcodes := map[mlx5.WQEOpcode]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q.FillSQ(0)
			tc.build(tc.idx)
			got, err := mlx5.ParseWQE(q.sqRing(), tc.idx)
			require.NoError(t, err)

			want := tc.want
			if want.Ctrl.Flags == 0 {
				want.Ctrl.Flags = mlx5.CtrlCQUpdate
			}
			want.Ctrl.WQEIndex, want.Ctrl.QPN = tc.idx, qpn
			want.Ctrl.Opcode = got.Ctrl.Opcode // checked below against the builder's opcode
			ds, err := want.DS()
			require.NoError(t, err, "the expected WQE is one mlx5 can build")
			want.Ctrl.DS = ds

			assert.Equal(t, want.Ctrl, got.Ctrl, "control segment")
			assert.Equal(t, want.RAddr, got.RAddr, "remote address")
			assert.Equal(t, want.SGEs, got.SGEs, "data segments")
			assert.Equal(t, want.IsInline, got.IsInline)
			assert.Equal(t, string(want.Inline), string(got.Inline), "inline payload")
			assert.Equal(t, want.Atomic, got.Atomic)
			assert.Equal(t, want.MaskedCS, got.MaskedCS)
			assert.Equal(t, want.MaskedFA, got.MaskedFA)
			assert.Equal(t, want.Wait, got.Wait)
			opcodes[got.Ctrl.Opcode] = true

			// And the other way: mlx5's encoder, given the parsed WQE, writes
			// byte for byte what the header's builder wrote.
			ring := make([]byte, len(q.sqRing()))
			n, err := got.Encode(ring)
			require.NoError(t, err)
			assert.Equal(t, mlx5.WQEBBs(got.Ctrl.DS), n)
			assert.Equal(t, q.sqRing(), ring, "mlx5 encodes the same bytes as the header")
		})
	}
	// The cases name every opcode the header builders produce.
	for _, op := range []mlx5.WQEOpcode{mlx5.WQEOpNop, mlx5.WQEOpRDMAWrite, mlx5.WQEOpRDMAWriteImm, mlx5.WQEOpRDMARead,
		mlx5.WQEOpAtomicFA, mlx5.WQEOpAtomicCS, mlx5.WQEOpAtomicMaskedFA, mlx5.WQEOpAtomicMaskedCS,
		mlx5.WQEOpWait, mlx5.WQEOpDump} {
		assert.Truef(t, opcodes[op], "no case parses a header-built %v", op)
	}
}

// The opcode constants devhost passes to the builders are the mlx5 ones.
func TestBuilderOpcodesAreMLX5Opcodes(t *testing.T) {
	for _, c := range []struct {
		header uint32
		mlx5   mlx5.WQEOpcode
	}{
		{OpNOP, mlx5.WQEOpNop}, {OpRDMAWrite, mlx5.WQEOpRDMAWrite}, {OpRDMAWriteImm, mlx5.WQEOpRDMAWriteImm},
		{OpRDMARead, mlx5.WQEOpRDMARead}, {OpAtomicCS, mlx5.WQEOpAtomicCS}, {OpAtomicFA, mlx5.WQEOpAtomicFA},
		{OpAtomicMaskedCS, mlx5.WQEOpAtomicMaskedCS}, {OpAtomicMaskedFA, mlx5.WQEOpAtomicMaskedFA},
		{OpWait, mlx5.WQEOpWait}, {OpDump, mlx5.WQEOpDump},
	} {
		assert.Equal(t, uint32(c.mlx5), c.header, "%v", c.mlx5)
	}
	assert.Equal(t, uint32(mlx5.CtrlCQUpdate), CtrlCQUpdate)
	assert.Equal(t, uint32(mlx5.CtrlFence), CtrlFence)
	for _, c := range [][2]uint8{{CQEOpReq, uint8(mlx5.CQEReq)}, {CQEOpReqErr, uint8(mlx5.CQEReqErr)},
		{CQEOpRespErr, uint8(mlx5.CQERespErr)}, {CQEOpInvalid, uint8(mlx5.CQEInvalid)}} {
		assert.Equal(t, c[1], c[0])
	}
}

// What the parser rejects of a header builder's output, it rejects with the
// syndrome hardware reports: RDMA_READ's one-SGE builder stores the byte
// count as given, so a count with bit 31 set is an inline marker on a READ.
func TestHeaderWQEParserRejects(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16})
	q.FillSQ(0)
	q.PrepareRead(q.WQEPtr(2), 2, uint32(mlx5.CtrlCQUpdate), Addr{Addr: 0x1000, Key: 1}, Addr{Addr: 0x2000, Key: 2},
		0x80000010)
	_, err := mlx5.ParseWQE(q.sqRing(), 2)
	require.ErrorIs(t, err, mlx5.SyndromeLocalQPOpErr)
}

// Every WQE the one-sided operations post (put, p, put_signal, signal, get,
// the fetching atomics) parses, with the opcode the operation stands for, and
// the doorbell the header rings decodes to the QPN and producer index.
func TestOneSidedWQEsParse(t *testing.T) {
	m := Mode{Sharing: SharingGPU, Handler: HandlerGPUSMDB}
	r := Addr{Addr: 0x10_0000_0000, Key: be(0xa)}
	l := Addr{Addr: 0x20_0000_0000, Key: be(0xb)}
	sr := Addr{Addr: 0x30_0000_0000, Key: be(0xc)}
	sl := Addr{Addr: 0x40_0000_0000, Key: be(0xd)}
	q := newHostQP(t, HostConfig{SQWQEs: 64})
	type post struct {
		name string
		do   func() error
		ops  []mlx5.WQEOpcode
	}
	ign := func(_ uint64, err error) error { return err }
	posts := []post{
		{"put", func() error { return ign(q.Put(r, l, 4096, m)) }, []mlx5.WQEOpcode{mlx5.WQEOpRDMAWrite}},
		{"put 0 bytes", func() error { return ign(q.Put(r, l, 0, m)) }, []mlx5.WQEOpcode{mlx5.WQEOpNop}},
		{"p", func() error { return ign(q.P(r, 0x1122334455667788, 8, m)) }, []mlx5.WQEOpcode{mlx5.WQEOpRDMAWrite}},
		{"put_signal", func() error { return ign(q.PutSignal(r, l, 64, sr, sl, 1, m)) },
			[]mlx5.WQEOpcode{mlx5.WQEOpRDMAWrite, mlx5.WQEOpAtomicFA}},
		{"signal", func() error { return ign(q.Signal(sr, sl, 1, m)) }, []mlx5.WQEOpcode{mlx5.WQEOpAtomicFA}},
		{"get", func() error { return ign(q.Get(r, l, 256, Addr{}, false, m)) }, []mlx5.WQEOpcode{mlx5.WQEOpRDMARead}},
		{"fetch_add", func() error { return ign(q.FetchAdd(r, l, 3, m)) }, []mlx5.WQEOpcode{mlx5.WQEOpAtomicFA}},
		{"compare_swap", func() error { return ign(q.CompareSwap(r, l, 1, 2, m)) }, []mlx5.WQEOpcode{mlx5.WQEOpAtomicCS}},
	}
	qpn := q.Config().QPN
	for _, p := range posts {
		_, _, from := q.Indexes()
		require.NoError(t, p.do(), p.name)
		_, _, to := q.Indexes()
		var got []mlx5.WQEOpcode
		for idx := from; idx < to; {
			w, err := mlx5.ParseWQE(q.sqRing(), uint16(idx))
			require.NoErrorf(t, err, "%s: WQE %d", p.name, idx)
			assert.Equal(t, qpn, w.Ctrl.QPN, p.name)
			got = append(got, w.Ctrl.Opcode)
			idx += uint64(mlx5.WQEBBs(w.Ctrl.DS))
		}
		assert.Equal(t, p.ops, got, p.name)
		dbQPN, dbPI := mlx5.DecodeSQDoorbell(mlx5.DoorbellFromUint64(q.Doorbell()))
		assert.Equal(t, [2]uint32{qpn, uint32(uint16(to))}, [2]uint32{dbQPN, uint32(dbPI)}, "%s: doorbell", p.name)
	}
}
