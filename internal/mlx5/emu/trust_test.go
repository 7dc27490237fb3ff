package emu

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// Class 6: a requester takes responses only from its QP's peer (remote QPN
// at the remote GID, on the connection it opened) and only for packets in
// flight.

// forge connects to nic's port from the address src (as any local process
// can) and writes the frames.
func forge(t *testing.T, nic *NIC, src netip.Addr, fs ...wire.Frame) {
	t.Helper()
	d := net.Dialer{Timeout: time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(src, 0))}
	c, err := d.Dial("tcp4", nic.port.Addr().String())
	must(t, err)
	t.Cleanup(func() { c.Close() })
	for i := range fs {
		_, err := c.Write(fs[i].AppendEncode(nil))
		must(t, err)
	}
}

// TestForgedResponsesOverTCP: the peer never answers; another local
// process, posing as the peer (its address, QPN and the right PSNs),
// connects to the requester's port and sends an ACK for a WRITE and a READ
// response carrying bytes. Neither completes anything or lands anywhere:
// the WRITE and the READ end with TRANSPORT_RETRY_EXC and the READ buffer
// is untouched.
func TestForgedResponsesOverTCP(t *testing.T) {
	peer := netip.MustParseAddr("127.250.252.1")
	port := blackHole(t, peer) // this run's own port (see TestHeadOfLineBlackHole)
	a := newNIC(t, Config{Name: "emuFa", Wire: wire.Config{Port: port, ForceTCP: true}})
	x := newEndpoint(t, a, qpOpts{ackTO: 14, retry: 1})
	const rqpn = 0x4242
	x.connectRemote(peerInfo{gid: mlx5.GID(wire.GIDFromIPv4(peer)), qpn: rqpn}, 0x10, 0x10)
	raddr := mlx5.RAddrSeg{Addr: 0x1000, RKey: 0x1234}
	w := x.post(mlx5.NewRDMAWriteInline(signaled, raddr, []byte("never delivered")))
	r := x.post(mlx5.NewRDMARead(signaled, raddr, x.sge(0, 8)))
	resp := func(op wire.Opcode, psn uint32) wire.Frame {
		return wire.Frame{Opcode: op, SrcGID: wire.GIDFromIPv4(peer), DstGID: wire.GID(a.GID()), SrcQPN: rqpn, DstQPN: x.qpn,
			PSN: psn, AETH: wire.AETH{Syndrome: wire.AckSyndrome(31)}}
	}
	ack := resp(wire.OpAck, 0x10)
	read := resp(wire.OpReadResponseOnly, 0x11)
	read.Payload = []byte("INJECTED")
	forge(t, a, peer, ack, read)
	deadline := time.Now().Add(5 * time.Second)
	for a.Stats().Wire.Rejected < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the forged frames were not refused: %+v", a.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	for _, idx := range []uint16{w, r} {
		c := x.mustPoll()
		want := mlx5.SyndromeTransportRetryExcErr
		if idx == r {
			want = mlx5.SyndromeWRFlushErr
		}
		if c.Opcode != mlx5.CQEReqErr || c.Syndrome != want || c.WQECounter != idx {
			t.Fatalf("WQE %d: %v %v; want %v", idx, c.Opcode, c.Syndrome, want)
		}
	}
	if string(x.data[:8]) == "INJECTED" {
		t.Fatal("a forged READ response landed in the buffer")
	}
}

// TestResponsesCheckedAgainstTheQP: responses handed to the NIC (as the
// in-process wire would) that do not come from the QP's peer, or that name
// no packet in flight, are dropped and counted; only the genuine one
// completes the WRITE.
func TestResponsesCheckedAgainstTheQP(t *testing.T) {
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{ackTO: 18}, qpOpts{})
	// The responder drops everything, so only injected responses arrive.
	must(t, y.modify(mlx5.NewModifyQPIn(mlx5.Op2RST, y.qpn)))
	x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte("data")))
	r := x.post(mlx5.NewRDMARead(signaled, y.raddr(0), x.sge(0, 8)))
	// The WRITE is PSN 0x100, the READ 0x101 (pair's send PSN is 0x100).
	base := wire.Frame{Opcode: wire.OpAck, SrcGID: wire.GID(b.GID()), DstGID: wire.GID(a.GID()), SrcQPN: y.qpn, DstQPN: x.qpn,
		PSN: 0x100, AETH: wire.AETH{Syndrome: wire.AckSyndrome(31)}}
	time.Sleep(5 * time.Millisecond) // both requests are out
	bad := []func(f *wire.Frame){
		func(f *wire.Frame) { f.SrcQPN++ },                                                 // another QP of the peer
		func(f *wire.Frame) { f.SrcGID[15]++ },                                             // another NIC
		func(f *wire.Frame) { f.PSN = 0x180 },                                              // beyond every PSN sent
		func(f *wire.Frame) { f.PSN = 0xfe },                                               // before the window (0xff, the last acknowledged, is a harmless duplicate)
		func(f *wire.Frame) { f.Opcode, f.Payload = wire.OpReadResponseOnly, []byte("x") }, // READ data for the WRITE's PSN
		func(f *wire.Frame) { // READ data longer than the READ asked for
			f.Opcode, f.PSN, f.Payload = wire.OpReadResponseOnly, 0x101, make([]byte, 9)
		},
		func(f *wire.Frame) { f.Opcode, f.PSN = wire.OpAtomicAck, 0x101 }, // an atomic answer to a READ
	}
	for _, edit := range bad {
		f := base
		edit(&f)
		a.deliver(&f)
	}
	waitStat := func(want uint64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for a.Stats().ResponsesDropped != want {
			if time.Now().After(deadline) {
				t.Fatalf("responses dropped: %d, want %d", a.Stats().ResponsesDropped, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitStat(uint64(len(bad)))
	if c, err := x.poll(20 * time.Millisecond); err == nil {
		t.Fatalf("a bad response completed something: %v %v counter %d", c.Opcode, c.Syndrome, c.WQECounter)
	}
	// The genuine ACK completes the WRITE, the genuine READ response the READ.
	good := base
	a.deliver(&good)
	if c := x.mustPoll(); c.Opcode != mlx5.CQEReq || c.WQEOpcode != mlx5.WQEOpRDMAWrite {
		t.Fatalf("genuine ACK: %v %v", c.Opcode, c.Syndrome)
	}
	good.Opcode, good.PSN, good.Payload = wire.OpReadResponseOnly, 0x101, []byte("readdata")
	a.deliver(&good)
	if c := x.mustPoll(); c.Opcode != mlx5.CQEReq || c.WQECounter != r || string(x.data[:8]) != "readdata" {
		t.Fatalf("genuine READ response: %v %v, data %q", c.Opcode, c.Syndrome, x.data[:8])
	}
	waitStat(uint64(len(bad)))
}
