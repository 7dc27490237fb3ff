package emu

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

func twoNICs(t testing.TB) (*NIC, *NIC) {
	return newNIC(t, Config{Name: "emuA"}), newNIC(t, Config{Name: "emuB"})
}

func fill(b []byte, seed byte) {
	for i := range b {
		b[i] = seed + byte(i*7)
	}
}

func expectOK(t *testing.T, c mlx5.CQE, op mlx5.WQEOpcode, idx uint16) {
	t.Helper()
	if c.Opcode != mlx5.CQEReq || c.WQEOpcode != op || c.WQECounter != idx {
		t.Fatalf("CQE: opcode %v syndrome %v wqe op %v counter %d; want REQ %v counter %d", c.Opcode, c.Syndrome, c.WQEOpcode, c.WQECounter, op, idx)
	}
}

// TestDataMovement runs every data opcode between two NICs and checks the
// bytes on both sides.
func TestDataMovement(t *testing.T) {
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{rq: true, logRQ: 4}, qpOpts{rq: true, logRQ: 4})

	t.Run("write", func(t *testing.T) {
		fill(x.data[0:5000], 1)
		idx := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(100), x.sge(0, 5000)))
		expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, idx)
		if !bytes.Equal(y.data[100:5100], x.data[0:5000]) {
			t.Fatal("WRITE data differs at the responder")
		}
	})
	t.Run("write_multi_sge", func(t *testing.T) {
		fill(x.data[8000:8100], 9)
		fill(x.data[9000:9300], 19)
		idx := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(20000), x.sge(8000, 100), x.sge(9000, 300)))
		expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, idx)
		want := append(append([]byte{}, x.data[8000:8100]...), x.data[9000:9300]...)
		if !bytes.Equal(y.data[20000:20400], want) {
			t.Fatal("gathered WRITE differs")
		}
	})
	t.Run("write_inline", func(t *testing.T) {
		payload := []byte("inline payload of some bytes, more than one segment long!")
		idx := x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(30000), payload))
		expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, idx)
		if !bytes.Equal(y.data[30000:30000+len(payload)], payload) {
			t.Fatal("inline WRITE differs")
		}
	})
	t.Run("write_imm", func(t *testing.T) {
		y.postRecv(y.va(40000), 64)
		fill(x.data[100:116], 3)
		idx := x.post(mlx5.NewRDMAWriteImm(signaled, 0xdeadbeef, y.raddr(41000), x.sge(100, 16)))
		expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWriteImm, idx)
		c := y.mustPoll()
		if c.Opcode != mlx5.CQERespWrImm || c.ImmInvalPKey != 0xdeadbeef || c.ByteCnt != 16 || c.QPN != y.qpn {
			t.Fatalf("responder CQE %+v", c)
		}
		if !bytes.Equal(y.data[41000:41016], x.data[100:116]) {
			t.Fatal("WRITE_IMM data differs")
		}
	})
	t.Run("send", func(t *testing.T) {
		y.postRecv(y.va(50000), 4096)
		fill(x.data[0:3000], 5)
		idx := x.post(mlx5.NewSend(signaled, x.sge(0, 3000)))
		expectOK(t, x.mustPoll(), mlx5.WQEOpSend, idx)
		c := y.mustPoll()
		if c.Opcode != mlx5.CQERespSend || c.ByteCnt != 3000 {
			t.Fatalf("responder CQE %+v", c)
		}
		if !bytes.Equal(y.data[50000:53000], x.data[0:3000]) {
			t.Fatal("SEND data differs")
		}
	})
	t.Run("send_imm_inline", func(t *testing.T) {
		y.postRecv(y.va(54000), 64)
		idx := x.post(mlx5.NewSendImmInline(signaled, 0x01020304, []byte("hello")))
		expectOK(t, x.mustPoll(), mlx5.WQEOpSendImm, idx)
		c := y.mustPoll()
		if c.Opcode != mlx5.CQERespSendImm || c.ImmInvalPKey != 0x01020304 || c.ByteCnt != 5 {
			t.Fatalf("responder CQE %+v", c)
		}
		if string(y.data[54000:54005]) != "hello" {
			t.Fatal("SEND_IMM data differs")
		}
	})
	t.Run("read", func(t *testing.T) {
		fill(y.data[1000:4000], 77)
		idx := x.post(mlx5.NewRDMARead(signaled, y.raddr(1000), x.sge(60000, 3000)))
		c := x.mustPoll()
		expectOK(t, c, mlx5.WQEOpRDMARead, idx)
		if c.ByteCnt != 3000 || !bytes.Equal(x.data[60000:63000], y.data[1000:4000]) {
			t.Fatalf("READ: byte count %d or data differ", c.ByteCnt)
		}
	})
	t.Run("fetch_add", func(t *testing.T) {
		binary.LittleEndian.PutUint64(y.data[64:], 40)
		idx := x.post(mlx5.NewAtomicFA(signaled, y.raddr(64), 2, x.sge(128, 8)))
		expectOK(t, x.mustPoll(), mlx5.WQEOpAtomicFA, idx)
		if got := binary.LittleEndian.Uint64(y.data[64:]); got != 42 {
			t.Fatalf("target %d, want 42", got)
		}
		if got := binary.LittleEndian.Uint64(x.data[128:]); got != 40 {
			t.Fatalf("returned %d, want 40", got)
		}
	})
	t.Run("compare_swap", func(t *testing.T) {
		binary.LittleEndian.PutUint64(y.data[72:], 7)
		x.post(mlx5.NewAtomicCS(signaled, y.raddr(72), 99, 7, x.sge(136, 8)))
		x.mustPoll()
		x.post(mlx5.NewAtomicCS(signaled, y.raddr(72), 55, 7, x.sge(144, 8)))
		x.mustPoll()
		if got := binary.LittleEndian.Uint64(y.data[72:]); got != 99 {
			t.Fatalf("target %d, want 99 (second CS must fail)", got)
		}
		if a, b := binary.LittleEndian.Uint64(x.data[136:]), binary.LittleEndian.Uint64(x.data[144:]); a != 7 || b != 99 {
			t.Fatalf("returned %d, %d; want 7, 99", a, b)
		}
	})
	t.Run("masked_cs_4", func(t *testing.T) {
		binary.BigEndian.PutUint32(y.data[80:], 0x11223344)
		s := mlx5.MaskedCSSeg{Swap: 0xaa00, Compare: 0x3300, SwapMask: 0xff00, CompareMask: 0xff00}
		x.post(mlx5.NewMaskedCS(signaled, 4, y.raddr(80), s, x.sge(152, 4)))
		c := x.mustPoll()
		expectOK(t, c, mlx5.WQEOpAtomicMaskedCS, c.WQECounter)
		if got := binary.BigEndian.Uint32(y.data[80:]); got != 0x1122aa44 {
			t.Fatalf("target 0x%x, want 0x1122aa44", got)
		}
		if got := binary.BigEndian.Uint32(x.data[152:]); got != 0x11223344 {
			t.Fatalf("returned 0x%x", got)
		}
	})
	t.Run("masked_cs_8", func(t *testing.T) {
		binary.BigEndian.PutUint64(y.data[88:], 0x0102030405060708)
		s := mlx5.MaskedCSSeg{Swap: 0xffff000000000000, Compare: 0x0102000000000000, SwapMask: 0xffff000000000000, CompareMask: 0xffff000000000000}
		x.post(mlx5.NewMaskedCS(signaled, 8, y.raddr(88), s, x.sge(160, 8)))
		x.mustPoll()
		if got := binary.BigEndian.Uint64(y.data[88:]); got != 0xffff030405060708 {
			t.Fatalf("target 0x%x", got)
		}
	})
	t.Run("masked_fa_8", func(t *testing.T) {
		binary.BigEndian.PutUint64(y.data[96:], 0x00000000ffffffff)
		// Two 32-bit fields: the carry out of the low field is dropped.
		s := mlx5.MaskedFASeg{Add: 0x0000000100000001, FieldBoundary: 0x8000000080000000}
		x.post(mlx5.NewMaskedFA(signaled, 8, y.raddr(96), s, x.sge(168, 8)))
		x.mustPoll()
		if got := binary.BigEndian.Uint64(y.data[96:]); got != 0x0000000100000000 {
			t.Fatalf("target 0x%x, want 0x100000000", got)
		}
		if got := binary.BigEndian.Uint64(x.data[168:]); got != 0x00000000ffffffff {
			t.Fatalf("returned 0x%x", got)
		}
	})
	t.Run("nop_dump", func(t *testing.T) {
		i1 := x.post(mlx5.NewNOP(signaled))
		expectOK(t, x.mustPoll(), mlx5.WQEOpNop, i1)
		i2 := x.post(mlx5.NewDump(signaled, x.sge(0, 64)))
		expectOK(t, x.mustPoll(), mlx5.WQEOpDump, i2)
	})
	t.Run("unsignaled_then_signaled", func(t *testing.T) {
		for i := 0; i < 10; i++ {
			x.post(mlx5.NewRDMAWriteInline(mlx5.WQEHead{}, y.raddr(64000+i), []byte{byte(i + 1)}))
		}
		idx := x.post(mlx5.NewNOP(signaled))
		expectOK(t, x.mustPoll(), mlx5.WQEOpNop, idx)
		for i := 0; i < 10; i++ {
			if y.data[64000+i] != byte(i+1) {
				t.Fatalf("byte %d not written", i)
			}
		}
		if _, err := x.poll(0); err == nil {
			t.Fatal("unsignaled WQEs produced CQEs")
		}
	})
	t.Run("ring_wrap_multi_wqebb", func(t *testing.T) {
		// 8-byte masked CS is 2 WQEBBs; post enough to wrap the 64-WQEBB ring
		// several times with WQEs straddling the end.
		binary.BigEndian.PutUint64(y.data[200:], 0)
		for i := 0; i < 100; i++ {
			x.post(mlx5.NewMaskedFA(mlx5.WQEHead{}, 8, y.raddr(200), mlx5.MaskedFASeg{Add: 1}, x.sge(208, 8)))
			x.post(mlx5.NewMaskedCS(signaled, 8, y.raddr(216), mlx5.MaskedCSSeg{}, x.sge(224, 8)))
			c := x.mustPoll()
			if c.Opcode != mlx5.CQEReq {
				t.Fatalf("iteration %d: %v %v", i, c.Opcode, c.Syndrome)
			}
		}
		if got := binary.BigEndian.Uint64(y.data[200:]); got != 100 {
			t.Fatalf("counter %d, want 100", got)
		}
	})
}
