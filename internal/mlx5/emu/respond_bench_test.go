package emu

import (
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// BenchmarkRespondWrite64Device is BenchmarkRespondWrite64 into device
// memory (a fake GPU): put_bw's shape on a GPU host, where the responder
// defers the packets of a burst and lands them in batches (land.go), one
// batch before each ACK.
func BenchmarkRespondWrite64Device(b *testing.B) {
	g := useGPU(b, newFakeGPU())
	na, nb := twoNICs(b)
	x, y := pair(b, na, nb, qpOpts{}, qpOpts{gpu: g, dataLen: 512 * 64})
	q := y.qpObj()
	q.rmu.Lock()
	psn := q.resp.epsn
	q.rmu.Unlock()
	f := wire.Frame{Opcode: wire.OpWriteOnly, AckReq: true, DstQPN: y.qpn, SrcQPN: x.qpn,
		SrcGID: wire.GID(na.GID()), DstGID: wire.GID(nb.GID()), Payload: make([]byte, 64)}
	f.Payload[0] = 0x5a
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ra := y.raddr((i % 512) * 64)
		f.RETH = wire.RETH{VA: ra.Addr, RKey: ra.RKey, DMALength: 64}
		f.PSN, psn = psn, (psn+1)&mask24
		f.More = i%64 != 63
		nb.respond(&f)
	}
	b.StopTimer()
	q.rmu.Lock()
	q.flushHeld() // the last packets, when the last had More
	q.rmu.Unlock()
	if q.state.Load() != stRTS {
		b.Fatalf("the QP left RTS (state %d)", q.state.Load())
	}
	y.lock()
	defer y.unlock()
	if y.data[64*((b.N-1)%512)] != 0x5a {
		b.Fatal("the requests did not all land")
	}
}
