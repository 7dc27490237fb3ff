package mlx5

import "testing"

// The decode benchmarks time the parser on the WQE shapes the emulator sees
// most (every ring slot holds a valid WQE of the shape; each iteration
// parses the next slot, so the index check and the ring wrap run as they
// do in the engine).

// benchRing encodes n copies of w, one per slot, into a ring of n WQEBB
// groups and returns it with the WQEBBs each copy spans.
func benchRing(b *testing.B, w WQE, n int) ([]byte, int) {
	b.Helper()
	probe := w
	ds, err := probe.DS()
	if err != nil {
		b.Fatal(err)
	}
	bbs := WQEBBs(ds)
	ring := make([]byte, n*bbs*WQEBB)
	for i := 0; i < n; i++ {
		w.Ctrl.WQEIndex = uint16(i * bbs)
		if _, err := w.Encode(ring); err != nil {
			b.Fatal(err)
		}
	}
	return ring, bbs
}

func BenchmarkWQEDecode(b *testing.B) {
	const slots = 64 // a power of two: slot indexes wrap with the ring
	h := WQEHead{QPN: 0x1a2b, Flags: CtrlCQUpdate}
	cases := []struct {
		name string
		w    WQE
	}{
		{"write_sge", NewRDMAWrite(h, dpRemote, dpWith(dpLocal, 0, 64))},
		{"write_inline12", NewRDMAWriteInline(h, dpRemote, []byte("twelve bytes"))},
		{"send_4sge", NewSend(h, dpWith(dpLocal, 0, 64), dpWith(dpLocal, 64, 64), dpWith(dpLocal, 128, 64),
			dpWith(dpLocal, 192, 64))},
		{"atomic_fa", NewAtomicFA(h, dpRemote, 1, dpLocal)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ring, bbs := benchRing(b, c.w, slots)
			var w WQE
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := w.Decode(ring, uint16(i%slots*bbs)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var benchCtrlSink CtrlSeg

func BenchmarkDecodeCtrlSeg(b *testing.B) {
	seg := make([]byte, DSSize)
	CtrlSeg{OpMod: 1, WQEIndex: 5, Opcode: WQEOpRDMAWrite, QPN: 0x123, DS: 3, Flags: CtrlCQUpdate, Imm: 7}.Put(seg)
	for i := 0; i < b.N; i++ {
		benchCtrlSink = DecodeCtrlSeg(seg)
	}
}

var benchCQESink CQE

// BenchmarkDecodeCQE is a host poller's cost of reading one completion.
func BenchmarkDecodeCQE(b *testing.B) {
	var buf [CQESize]byte
	c := CQE{Opcode: CQEReq, ByteCnt: 64, Timestamp: 12345, WQEOpcode: WQEOpRDMAWrite, QPN: 0x100, WQECounter: 9}
	if err := c.Encode(buf[:]); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		got, err := DecodeCQE(buf[:])
		if err != nil {
			b.Fatal(err)
		}
		benchCQESink = got
	}
}

var benchRecvSink []DataSeg

// BenchmarkParseRecvWQE is the responder's cost of one receive WQE with one
// scatter entry and a terminator.
func BenchmarkParseRecvWQE(b *testing.B) {
	wqe := make([]byte, 2*DSSize)
	dpWith(dpLocal, 0, 4096).Put(wqe)
	RecvTerminator.Put(wqe[DSSize:])
	dst := make([]DataSeg, 0, 4)
	for i := 0; i < b.N; i++ {
		got, err := ParseRecvWQE(dst[:0], wqe, 0)
		if err != nil {
			b.Fatal(err)
		}
		benchRecvSink = got
	}
}
