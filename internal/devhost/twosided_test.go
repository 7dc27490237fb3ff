package devhost

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The four wqe_prepare_send overloads: DS 1..4 from the precomputed qpn_ds
// words, SEND or SEND_IMM with the immediate verbatim, data segments with
// their byte counts cut to 31 bits, nothing written past the last segment.
func TestPrepareSendGolden(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16})
	const qpn = testQPN
	s0 := Seg{Addr: 0x7f0000001000, Key: 0x11223344, Bytes: 0x80000040}
	s1 := Seg{Addr: 0x7f0000002000, Key: 0x55667788, Bytes: 8}
	s2 := Seg{Addr: 0x7f0000003000, Key: 0x99aabbcc, Bytes: 1 << 30}
	cases := []struct {
		name   string
		idx    uint16
		opcode uint32
		imm    uint32
		segs   []Seg
		want   *wqeBytes
	}{
		{"0 segments", 3, 0x0a, 0, nil, ctrl(filled(fill), 3, 0x0a, qpn<<8|1, 0x08, 0)},
		{"1 segment, SEND_IMM", 0xfffe, 0x0b, 0xcafef00d, []Seg{s0},
			dataSeg(ctrl(filled(fill), 0xfffe, 0x0b, qpn<<8|2, 0x08, 0xcafef00d), 16, 0x40, s0.Key, s0.Addr)},
		{"2 segments", 7, 0x0a, 0, []Seg{s0, s1},
			dataSeg(dataSeg(ctrl(filled(fill), 7, 0x0a, qpn<<8|3, 0x08, 0), 16, 0x40, s0.Key, s0.Addr), 32, 8, s1.Key, s1.Addr)},
		{"3 segments", 8, 0x0a, 0, []Seg{s0, s1, s2},
			dataSeg(dataSeg(dataSeg(ctrl(filled(fill), 8, 0x0a, qpn<<8|4, 0x08, 0), 16, 0x40, s0.Key, s0.Addr), 32, 8, s1.Key, s1.Addr), 48, 1<<30, s2.Key, s2.Addr)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q.FillSQ(fill)
			require.NoError(t, q.PrepareSend(q.WQEPtr(uint64(tc.idx)), tc.idx, tc.opcode, CtrlCQUpdate, tc.imm, tc.segs...))
			assert.Equal(t, [64]byte(*tc.want), q.WQE(uint64(tc.idx)))
		})
	}
	require.Error(t, q.PrepareSend(q.WQEPtr(0), 0, 0x0a, CtrlCQUpdate, 0, s0, s0, s0, s0), "at most 3 segments")
}

// wqe_prepare_recv writes exactly one 16-byte scatter entry: BE32 byte count,
// the key verbatim, BE64 address.
func TestPrepareRecvGolden(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16})
	buf := NewCBuffer(make([]byte, 32))
	defer buf.Free()
	b := unsafe.Slice((*byte)(buf.Pointer()), 32)
	for i := range b {
		b[i] = fill
	}
	q.PrepareRecv(buf.Pointer(), Addr{Addr: 0x0102030405060708, Key: 0xa1b2c3d4}, 4096)
	want := make([]byte, 32)
	binary.BigEndian.PutUint32(want[0:], 4096)
	binary.LittleEndian.PutUint32(want[4:], 0xa1b2c3d4)
	binary.BigEndian.PutUint64(want[8:], 0x0102030405060708)
	for i := 16; i < 32; i++ {
		want[i] = fill
	}
	assert.Equal(t, want, b)
}

// cqeIn writes a 64-byte receive CQE into C memory.
func cqeIn(t *testing.T, inline bool, data []byte, byteCnt, imm uint32, opcode uint8) CQE {
	t.Helper()
	c := make([]byte, 64)
	copy(c, data)
	binary.BigEndian.PutUint32(c[36:], imm)
	binary.BigEndian.PutUint32(c[44:], byteCnt)
	c[63] = opcode<<4 | 1
	if inline {
		c[63] |= 0x4
	}
	buf := NewCBuffer(c)
	t.Cleanup(buf.Free)
	return CQE{buf.Pointer()}
}

// cqe_is_inline returns the masked flag (4, not 1), cqe_get_inl_data the
// CQE's first 32 bytes, cqe_get_bytes the byte count in host order.
func TestInlineCQEHelpers(t *testing.T) {
	payload := []byte("payload in the CQE, 29 bytes!")
	c := cqeIn(t, true, payload, uint32(len(payload)), 0x01020304, 2)
	assert.Equal(t, uint32(4), c.IsInline())
	assert.Equal(t, uint32(len(payload)), c.ByteCount())
	assert.Equal(t, payload, c.InlineData()[:len(payload)])
	assert.Equal(t, uint32(0x01020304), c.Immediate())
	assert.Equal(t, uint8(2), c.Opcode())

	c = cqeIn(t, false, nil, 1<<20, 0, 3)
	assert.Zero(t, c.IsInline())
	assert.Equal(t, uint32(1<<20), c.ByteCount())
}
