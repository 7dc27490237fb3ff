package emu

import (
	"bytes"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// TestRetransmitSucceeds: requests dropped by a responder that is not yet
// ready are retransmitted after the ACK timeout and complete once it is.
func TestRetransmitSucceeds(t *testing.T) {
	a, b := twoNICs(t)
	x := newEndpoint(t, a, qpOpts{ackTO: 12, retry: 7}) // 16.8 ms
	y := newEndpoint(t, b, qpOpts{})
	x.connect(y, 0x50, 0x60)
	fill(x.data[:10000], 8)
	idx := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 10000)))
	time.Sleep(30 * time.Millisecond) // at least one timeout with y in RST
	if _, err := x.poll(0); err == nil {
		t.Fatal("completed before the responder existed")
	}
	y.connect(x, 0x60, 0x50)
	expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, idx)
	if !bytes.Equal(y.data[:10000], x.data[:10000]) {
		t.Fatal("retransmitted data differs")
	}
	if r := x.queryQP(); r.NextSendPSN != (0x50+10)&mask24 {
		t.Fatalf("next_send_psn 0x%x after 10 packets from 0x50", r.NextSendPSN)
	}
}

// TestPSNMismatch: a requester whose send PSN differs from the responder's
// expected PSN gets NAKs and ends with retry exceeded.
func TestPSNMismatch(t *testing.T) {
	a, b := twoNICs(t)
	x := newEndpoint(t, a, qpOpts{ackTO: 8, retry: 2})
	y := newEndpoint(t, b, qpOpts{})
	x.connect(y, 0x100, 0x100)
	y.connect(x, 0x100, 0x90) // expects 0x90, x sends 0x100
	x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{1}))
	if c := x.mustPoll(); c.Syndrome != mlx5.SyndromeTransportRetryExcErr {
		t.Fatalf("got %v %v", c.Opcode, c.Syndrome)
	}
}

// TestForcedTCP runs the RC traffic of one process over the TCP transport.
func TestForcedTCP(t *testing.T) {
	a := newNIC(t, Config{Name: "emuTa", Wire: wire.Config{ForceTCP: true}})
	b := newNIC(t, Config{Name: "emuTb", Wire: wire.Config{ForceTCP: true}})
	x, y := pair(t, a, b, qpOpts{mtu: mlx5.MTU4096, dataLen: 1 << 20}, qpOpts{mtu: mlx5.MTU4096, dataLen: 1 << 20})
	fill(x.data[:300000], 2)
	x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 300000)))
	x.mustPoll()
	x.post(mlx5.NewRDMARead(signaled, y.raddr(0), x.sge(500000, 300000)))
	x.mustPoll()
	if !bytes.Equal(x.data[500000:800000], x.data[:300000]) || !bytes.Equal(y.data[:300000], x.data[:300000]) {
		t.Fatal("data over TCP differs")
	}
}
