package mlx5

import (
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCQEGolden reproduces two worked CQE images (computed by hand from the
// PRM layout).
func TestCQEGolden(t *testing.T) {
	cases := []struct {
		name     string
		cqe      CQE
		producer uint32
		want     string
	}{
		{"REQ for idx5 owner 0", CQE{ByteCnt: 4096, WQEOpcode: WQEOpRDMAWrite, QPN: 0x1a2b, WQECounter: 5, Opcode: CQEReq},
			5, `
0020: 00000000 00000000 00000000 00001000
0030: 00000000 00000000 08001a2b 00050000`},
		{"ERR REMOTE_ACCESS idx5 owner 1", CQE{VendorSyndrome: 0x88, Syndrome: SyndromeRemoteAccessErr,
			WQEOpcode: WQEOpRDMAWrite, QPN: 0x1a2b, WQECounter: 5, Opcode: CQEReqErr},
			1024 + 5, `
0030: 00000000 00008813 08001a2b 000500d1`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := dpImage(t, CQESize, c.want)
			slot := make([]byte, CQESize)
			for i := range slot {
				slot[i] = 0x5a // WriteCQE must write every byte
			}
			require.NoError(t, WriteCQE(slot, c.cqe, c.producer, 10))
			assert.Equal(t, hex.EncodeToString(want), hex.EncodeToString(slot))

			got, err := DecodeCQE(slot)
			require.NoError(t, err)
			c.cqe.Owner = CQEOwnerBit(c.producer, 10)
			assert.Equal(t, c.cqe, got)
			assert.True(t, CQEOwned(slot[63], c.producer, 10))
			assert.False(t, CQEOwned(slot[63], c.producer+1024, 10), "next pass must not see it")

			enc := make([]byte, CQESize)
			require.NoError(t, got.Encode(enc))
			assert.Equal(t, want, enc)
		})
	}
}

func TestCQEErr(t *testing.T) {
	b := dpImage(t, CQESize, `0030: 00000000 00008813 08001a2b 000500d1`)
	c, err := DecodeCQE(b)
	require.NoError(t, err)
	e := c.Err()
	require.Error(t, e)
	assert.ErrorIs(t, e, SyndromeRemoteAccessErr)
	assert.NotErrorIs(t, e, SyndromeWRFlushErr)
	var ce *CQEError
	require.True(t, errors.As(e, &ce))
	assert.Equal(t, CQEError{Opcode: CQEReqErr, Syndrome: 0x13, VendorSyndrome: 0x88, WQEOpcode: WQEOpRDMAWrite,
		QPN: 0x1a2b, WQECounter: 5}, *ce)
	for _, s := range []string{"REQ_ERR", "REMOTE_ACCESS_ERR", "IBV_WC_REM_ACCESS_ERR", "0x1a2b", "RDMA_WRITE"} {
		assert.Contains(t, e.Error(), s)
	}

	ok := CQE{Opcode: CQEReq}
	assert.NoError(t, ok.Err())
}

// TestCQEFullLayout sets every field to a distinct value and checks where
// each lands, for both the normal and the error view.
func TestCQEFullLayout(t *testing.T) {
	c := CQE{WQEID: 0x0102, MLPath: 0x03, SLID: 0x0405, FlagsRQPN: 0x06070809, HdsIPExt: 0x0a, L4HdrTypeEtc: 0x0b,
		VLANInfo: 0x0c0d, SRQNUIdx: 0x0e0f1011, ImmInvalPKey: 0x12131415, App: 0x16, AppOp: 0x17, AppInfo: 0x1819,
		ByteCnt: 0x1a1b1c1d, Timestamp: 0x1e1f202122232425, WQEOpcode: 0x26, QPN: 0x272829, WQECounter: 0x2a2b,
		Signature: 0x2c, Opcode: CQERespSendImm, Format: CQEFormatInline32, Solicited: true, Owner: 1}
	b := make([]byte, CQESize)
	require.NoError(t, c.Encode(b))
	assert.Equal(t, hex.EncodeToString(dpImage(t, CQESize, `
0000: 00000102 00000000 00000000 00000000
0010: 00030000 00000405 06070809 0a0b0c0d
0020: 0e0f1011 12131415 16171819 1a1b1c1d
0030: 1e1f2021 22232425 26272829 2a2b2c37`)), hex.EncodeToString(b))
	got, err := DecodeCQE(b)
	require.NoError(t, err)
	assert.Equal(t, c, got)

	// The same bytes with an error opcode read bytes 52..55 as syndromes.
	b[63] = byte(CQERespErr)<<4 | 1
	e, err := DecodeCQE(b)
	require.NoError(t, err)
	assert.Equal(t, uint64(0x1e1f202100000000), e.Timestamp)
	assert.Equal(t, []uint8{0x22, 0x23, 0x24}, []uint8{e.HWErrSynd, e.HWSyndType, e.VendorSyndrome})
	assert.Equal(t, Syndrome(0x25), e.Syndrome)
	enc := make([]byte, CQESize)
	require.NoError(t, e.Encode(enc))
	assert.Equal(t, b, enc)

	_, err = DecodeCQE(b[:63])
	assert.Error(t, err)
	assert.Error(t, c.Encode(make([]byte, 10)))
	assert.Error(t, WriteCQE(make([]byte, 63), c, 0, 0))
}

// TestCQEOwnerParity runs a producer over several passes of a 4-entry CQ and
// a consumer behind it, checking that each entry is owned exactly when the
// consumer index reaches the producer's write.
func TestCQEOwnerParity(t *testing.T) {
	const logSize = 2
	const n = 1 << logSize
	for _, init := range []byte{CQEInitOpOwn, 0xf0} {
		ring := make([]byte, n*CQESize)
		for i := 0; i < n; i++ {
			ring[i*CQESize+63] = init
		}
		if init == CQEInitOpOwn {
			fresh := make([]byte, n*CQESize)
			InitCQEs(fresh)
			assert.Equal(t, ring, fresh)
		}
		for ci := uint32(0); ci < n; ci++ {
			assert.False(t, CQEOwned(ring[int(ci)*CQESize+63], ci, logSize), "init 0x%02x: fresh entry %d", init, ci)
		}
		for p := uint32(0); p < 5*n; p++ {
			slot := ring[int(p%n)*CQESize : int(p%n+1)*CQESize]
			assert.False(t, CQEOwned(slot[63], p, logSize), "entry for %d not yet written", p)
			require.NoError(t, WriteCQE(slot, CQE{Opcode: CQEReq, WQECounter: uint16(p), QPN: 7}, p, logSize))
			assert.Equal(t, uint8(p/n)&1, slot[63]&1, "owner bit is the pass parity")
			assert.True(t, CQEOwned(slot[63], p, logSize), "written entry %d is owned", p)
			if p >= n {
				assert.False(t, CQEOwned(slot[63], p-n, logSize), "previous pass's consumer sees a different parity")
			}
			got, err := DecodeCQE(slot)
			require.NoError(t, err)
			assert.Equal(t, uint16(p), got.WQECounter)
		}
	}
	// Owner of a counter that wraps 32 bits.
	assert.Equal(t, uint8(1), CQEOwnerBit(0xffffffff, 0))
	assert.Equal(t, uint8(1), CQEOwnerBit(0x80000000, 31))
	assert.Equal(t, uint8(0), CQEOwnerBit(0x7fffffff, 31))
}

func TestWriteCQEUnaligned(t *testing.T) {
	buf := make([]byte, CQESize+8)
	for off := 0; off < 8; off++ {
		slot := buf[off : off+CQESize]
		c := CQE{Opcode: CQEReq, QPN: 0x1a2b, WQECounter: 9, ByteCnt: 1}
		require.NoError(t, WriteCQE(slot, c, 3, 1))
		got, err := DecodeCQE(slot)
		require.NoError(t, err)
		c.Owner = 1
		assert.Equal(t, c, got, "offset %d", off)
	}
}

func TestCQEOpcodeNames(t *testing.T) {
	want := map[CQEOpcode]string{0: "REQ", 1: "RESP_WR_IMM", 2: "RESP_SEND", 3: "RESP_SEND_IMM",
		4: "RESP_SEND_INV", 5: "RESIZE_CQ", 6: "NO_PACKET", 12: "SIG_ERR", 13: "REQ_ERR", 14: "RESP_ERR",
		15: "INVALID"}
	for op := CQEOpcode(0); op < 16; op++ {
		if name, ok := want[op]; ok {
			assert.Equal(t, name, op.String())
		} else {
			assert.Equal(t, fmt.Sprintf("CQE_OPCODE_%d", op), op.String())
		}
		assert.Equal(t, op == 13 || op == 14, op.IsError())
	}
}

func FuzzDecodeCQE(f *testing.F) {
	f.Add(dpImage(f, CQESize, `
0020: 00000000 00000000 00000000 00001000
0030: 00000000 00000000 08001a2b 00050000`))
	f.Add(dpImage(f, CQESize, `0030: 00000000 00008813 08001a2b 000500d1`))
	f.Add(make([]byte, 10))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCQE(b)
		if len(b) < CQESize {
			if err == nil {
				t.Fatal("short CQE decoded")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		// Decoding is lossless: encoding gives back every byte but the
		// reserved ones, which come back as zero.
		enc := make([]byte, CQESize)
		if err := c.Encode(enc); err != nil {
			t.Fatal(err)
		}
		want := append([]byte(nil), b[:CQESize]...)
		clear(want[0:2])
		clear(want[4:17])
		clear(want[18:22])
		if string(enc) != string(want) {
			t.Fatalf("round trip differs:\n in %x\nout %x", b[:CQESize], enc)
		}
		if c.OpOwn() != b[63] {
			t.Fatalf("op_own 0x%02x, want 0x%02x", c.OpOwn(), b[63])
		}
		if (c.Err() != nil) != c.Opcode.IsError() {
			t.Fatal("Err disagrees with the opcode")
		}
		_ = c.Opcode.String() + c.Syndrome.String() + c.WQEOpcode.String()
	})
}
