package wire

import (
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawDial opens a plain TCP connection to p from the given local address
// (any port), as another local process could.
func rawDial(t *testing.T, p *Port, from netip.Addr) *net.TCPConn {
	t.Helper()
	d := net.Dialer{Timeout: time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(from, 0))}
	c, err := d.Dial("tcp4", p.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// expectClosed waits until the port closes c (a read returns an error that
// is not a timeout of ours).
func expectClosed(t *testing.T, c net.Conn, within time.Duration) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(within)))
	_, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the port kept the connection open for %v", within)
	}
}

// TestForgedResponsesRejected: a local process that connects to a port,
// even from the address of the port's real peer, cannot deliver a response
// (an ACK that would complete a WRITE, a READ response that would land in a
// buffer): responses are admitted only on the connection the port dialled.
func TestForgedResponsesRejected(t *testing.T) {
	noLeak(t)
	got := make(collector, 16)
	a := listen(t, Config{ForceTCP: true})
	b := listen(t, Config{ForceTCP: true, Handler: got.handle})
	// The forger binds a's own address as its source.
	c := rawDial(t, b, a.Addr().Addr())
	for _, op := range []Opcode{OpAck, OpReadResponseOnly, OpAtomicAck, OpReadResponseFirst} {
		f := sampleFrame(op)
		f.SrcGID, f.DstGID = a.GID(), b.GID()
		_, err := c.Write(f.AppendEncode(nil))
		require.NoError(t, err)
	}
	// A request with a source that is not the connection's is refused too.
	f := sampleFrame(OpWriteOnly)
	f.SrcGID, f.DstGID = GIDFromIPv4(netip.MustParseAddr("127.250.250.77")), b.GID()
	_, err := c.Write(f.AppendEncode(nil))
	require.NoError(t, err)
	// And one for another destination.
	f.SrcGID, f.DstGID = a.GID(), a.GID()
	_, err = c.Write(f.AppendEncode(nil))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return b.Stats().Rejected == 6 }, 2*time.Second, time.Millisecond)
	assert.Empty(t, got)
	assert.Zero(t, b.Stats().Received)

	// The genuine peer's request on the same kind of connection is taken,
	// and its response goes back on that connection only.
	f = sampleFrame(OpReadRequest)
	f.SrcGID, f.DstGID = a.GID(), b.GID()
	_, err = c.Write(f.AppendEncode(nil))
	require.NoError(t, err)
	req := got.next(t)
	r := Frame{Opcode: OpReadResponseOnly, SrcGID: b.GID(), DstGID: a.GID(), PSN: req.PSN, Payload: []byte("data"), Route: req.Route}
	require.NoError(t, b.Send(&r))
	require.NoError(t, c.SetReadDeadline(time.Now().Add(2*time.Second)))
	hdr := make([]byte, 8)
	_, err = io.ReadFull(c, hdr)
	require.NoError(t, err)
	n, err := FrameLen(hdr)
	require.NoError(t, err)
	rest := make([]byte, n-8)
	_, err = io.ReadFull(c, rest)
	require.NoError(t, err)
	back, err := Decode(append(hdr, rest...))
	require.NoError(t, err)
	r.Route = Route{}
	assert.Equal(t, r, back)
	assert.Zero(t, b.Stats().Dials, "the response did not open a connection of its own")
}

// TestResponseOnDialledConnection: a's responses to b's requests travel on
// the connection b dialled, and b admits a response only from a on it.
func TestResponseOnDialledConnection(t *testing.T) {
	noLeak(t)
	resp := make(collector, 16)
	var a *Port
	a = listen(t, Config{ForceTCP: true, Handler: func(f *Frame) {
		r := Frame{Opcode: OpAck, SrcGID: a.GID(), DstGID: f.SrcGID, PSN: f.PSN, Route: f.Route}
		if err := a.Send(&r); err != nil {
			panic(err)
		}
		// The same answer without the route has nowhere to go.
		r.Route = Route{}
		if err := a.Send(&r); err == nil {
			panic("a response without its route was sent")
		}
	}})
	b := listen(t, Config{ForceTCP: true, Handler: resp.handle})
	for i := 0; i < 10; i++ {
		require.NoError(t, b.Send(&Frame{Opcode: OpSendOnly, SrcGID: b.GID(), DstGID: a.GID(), PSN: uint32(i)}))
		assert.Equal(t, uint32(i), resp.next(t).PSN)
	}
	assert.Equal(t, uint64(1), b.Stats().Dials)
	assert.Zero(t, a.Stats().Dials)
	// a's handler tries the route-less answer after the routed one, so b
	// may hold the tenth response before a has counted the tenth error.
	require.Eventually(t, func() bool { return a.Stats().SendErrors == 10 }, 2*time.Second, time.Millisecond,
		"the route-less answers: want 10 send errors")
}

// TestOversizeLengthClosesStream: a header that claims a frame above the
// port's limit closes the stream before anything is allocated for it.
func TestOversizeLengthClosesStream(t *testing.T) {
	noLeak(t)
	b := listen(t, Config{ForceTCP: true, Handler: func(*Frame) {}})
	for _, n := range []uint32{uint32(DefaultMaxFrameLen) + 1, MaxFrameLen, 1<<32 - 1} {
		c := rawDial(t, b, netip.MustParseAddr("127.0.0.1"))
		hdr := []byte{'G', 'D', 'W', Version, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(hdr[4:], n)
		_, err := c.Write(hdr)
		require.NoError(t, err)
		expectClosed(t, c, 2*time.Second)
	}
	require.Eventually(t, func() bool { return b.Stats().DecodeErrors == 3 }, 2*time.Second, time.Millisecond)
}

// TestReadTimeouts: a frame that starts and stalls, and a connection that
// never sends, are closed after ReadTimeout.
func TestReadTimeouts(t *testing.T) {
	noLeak(t)
	const rt = 100 * time.Millisecond
	b := listen(t, Config{ForceTCP: true, ReadTimeout: rt, Handler: func(*Frame) {}})
	silent := rawDial(t, b, netip.MustParseAddr("127.0.0.1"))
	stalled := rawDial(t, b, netip.MustParseAddr("127.0.0.1"))
	f := Frame{Opcode: OpSendOnly, Payload: make([]byte, 1000)}
	_, err := stalled.Write(f.AppendEncode(nil)[:100])
	require.NoError(t, err)
	start := time.Now()
	expectClosed(t, silent, rt+schedSlack)
	expectClosed(t, stalled, rt+schedSlack)
	assert.GreaterOrEqual(t, time.Since(start), rt-10*time.Millisecond)
	require.Eventually(t, func() bool { return b.Stats().ReadTimeouts == 2 }, 2*time.Second, time.Millisecond)

	// A dialled connection between frames is not subject to it: a quiet
	// peer keeps its connection.
	a := listen(t, Config{ForceTCP: true, ReadTimeout: rt})
	require.NoError(t, a.Send(&Frame{Opcode: OpSendOnly, SrcGID: a.GID(), DstGID: b.GID()}))
	time.Sleep(3 * rt)
	require.NoError(t, a.Send(&Frame{Opcode: OpSendOnly, SrcGID: a.GID(), DstGID: b.GID()}))
	assert.Equal(t, uint64(1), a.Stats().Dials)
}

// TestManyIdleConnectionsBoundHeap: hundreds of connections that each
// announce the largest frame and go quiet cost a bounded heap (the buffers
// grow with what arrives; at most MaxConns stay open).
func TestManyIdleConnectionsBoundHeap(t *testing.T) {
	noLeak(t)
	const conns, maxConns = 300, 64
	b := listen(t, Config{ForceTCP: true, MaxConns: maxConns, ReadTimeout: time.Minute, Handler: func(*Frame) {}})
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	hdr := []byte{'G', 'D', 'W', Version, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(hdr[4:], uint32(DefaultMaxFrameLen))
	var cs []*net.TCPConn
	for i := 0; i < conns; i++ {
		c := rawDial(t, b, netip.MustParseAddr("127.0.0.1"))
		_, err := c.Write(append(hdr, make([]byte, 100)...))
		require.NoError(t, err)
		cs = append(cs, c)
	}
	require.Eventually(t, func() bool { return b.Stats().Evicted == conns-maxConns }, 5*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond) // let the readers take the headers
	runtime.GC()
	runtime.ReadMemStats(&ms)
	grown := int64(ms.HeapAlloc) - int64(before)
	t.Logf("heap grew by %.1f MiB for %d connections announcing %d-byte frames", float64(grown)/(1<<20), conns, DefaultMaxFrameLen)
	assert.Less(t, grown, int64(maxConns*(readBufSize+2*readChunk)+8<<20), "heap")
	// The evicted ones were closed, the newest are open.
	expectClosed(t, cs[0], 2*time.Second)
	require.NoError(t, cs[conns-1].SetReadDeadline(time.Now().Add(20*time.Millisecond)))
	_, err := cs[conns-1].Read(make([]byte, 1))
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout(), "the newest connection is still open")
}
