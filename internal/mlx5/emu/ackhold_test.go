package emu

import (
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// A responder holds back the ACK of a request when the connection already
// holds the next request of the same QP (wire.Frame.More): a burst is
// acknowledged by the ACK of its last request, or every maxHeldAcks
// requests; a held ACK goes out before any other response of the QP (a
// NAK here), and nothing is held for a request that comes alone. The
// requests are handed to the responding NIC as its wire would; the ACKs are
// counted as frames its port sent.
func TestAckHeldInBurst(t *testing.T) {
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{}, qpOpts{})
	q := y.qpObj()
	psn := func() uint32 {
		q.rmu.Lock()
		defer q.rmu.Unlock()
		return q.resp.epsn
	}
	write := func(off int, data byte, more bool) *wire.Frame {
		ra := y.raddr(off)
		return &wire.Frame{Opcode: wire.OpWriteOnly, AckReq: true, DstQPN: y.qpn, SrcQPN: x.qpn, PSN: psn(),
			SrcGID: wire.GID(a.GID()), DstGID: wire.GID(b.GID()),
			RETH: wire.RETH{VA: ra.Addr, RKey: ra.RKey, DMALength: 1}, Payload: []byte{data}, More: more}
	}
	sent := func() uint64 { return b.Stats().Wire.Sent }
	burst := func(n int, last bool) uint64 {
		t.Helper()
		s0 := sent()
		for i := 0; i < n; i++ {
			b.respond(write(i, byte(i+1), i < n-1 || !last))
		}
		for i := 0; i < n; i++ {
			if y.data[i] != byte(i+1) {
				t.Fatalf("byte %d of the burst: %d", i, y.data[i])
			}
		}
		return sent() - s0
	}

	if n := burst(1, true); n != 1 {
		t.Fatalf("a request alone: %d ACKs, want 1", n)
	}
	if n := burst(10, true); n != 1 {
		t.Fatalf("a burst of 10: %d ACKs, want 1", n)
	}
	if n := burst(3*maxHeldAcks+2, true); n != 3 {
		t.Fatalf("a burst of %d: %d ACKs, want 3 (every %d requests and the last)", 3*maxHeldAcks+2, n, maxHeldAcks+1)
	}
	// A burst that stops with More still set holds its ACK; the QP's next
	// response, a NAK (a request with a bad R_Key), sends it first.
	if n := burst(4, false); n != 0 {
		t.Fatalf("an unfinished burst: %d ACKs, want 0 yet", n)
	}
	s0 := sent()
	bad := write(0, 9, false)
	bad.RETH.RKey ^= 0xff
	b.respond(bad)
	if n := sent() - s0; n != 2 {
		t.Fatalf("the held ACK and the NAK: %d frames, want 2", n)
	}
}
