package common

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sampleEndpoint(nbufs int, qpn uint32) Endpoint {
	e := Endpoint{QPN: qpn, LID: 0x1234}
	for i := range e.GID {
		e.GID[i] = byte(0xa0 + i)
	}
	for i := 0; i < nbufs; i++ {
		e.Bufs = append(e.Bufs, RemoteBuf{Addr: 0x7f0000000000 + uint64(i)<<20, RKey: 0x100 + uint32(i)})
	}
	return e
}

func TestEndpointWireLayout(t *testing.T) {
	e := sampleEndpoint(2, 0xabcdef)
	b, err := e.MarshalBinary()
	require.NoError(t, err)
	require.Len(t, b, EndpointSize(2))
	assert.Equal(t, 2*12+22, len(b))
	// Little-endian address then rkey, then QPN, GID verbatim, LID.
	assert.Equal(t, []byte{0, 0, 0, 0, 0, 0x7f, 0, 0}, b[0:8])
	assert.Equal(t, []byte{0x00, 0x01, 0, 0}, b[8:12])
	assert.Equal(t, []byte{0, 0, 0x10, 0, 0, 0x7f, 0, 0}, b[12:20])
	assert.Equal(t, []byte{0xef, 0xcd, 0xab, 0x00}, b[24:28])
	assert.Equal(t, e.GID[:], b[28:44])
	assert.Equal(t, []byte{0x34, 0x12}, b[44:46])
	got, err := DecodeEndpoint(b, 2)
	require.NoError(t, err)
	assert.Equal(t, e, got)
}

func TestEndpointErrors(t *testing.T) {
	_, err := sampleEndpoint(0, 0).MarshalBinary()
	assert.ErrorIs(t, err, ErrBadRecord)
	_, err = sampleEndpoint(0, 1<<24).MarshalBinary()
	assert.ErrorIs(t, err, ErrBadRecord)
	_, err = Endpoint{QPN: 1, Bufs: make([]RemoteBuf, MaxBufs+1)}.MarshalBinary()
	assert.ErrorIs(t, err, ErrBadRecord)

	b, err := sampleEndpoint(1, 5).MarshalBinary()
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		b     []byte
		nbufs int
	}{
		{"short", b[:len(b)-1], 1},
		{"long", append(append([]byte(nil), b...), 0), 1},
		{"wrong count", b, 0},
		{"negative count", b, -1},
		{"huge count", b, MaxBufs + 1},
		{"qpn zero", make([]byte, EndpointSize(0)), 0},
	} {
		_, err := DecodeEndpoint(tc.b, tc.nbufs)
		assert.ErrorIs(t, err, ErrBadRecord, tc.name)
	}
}

func TestDoneRecord(t *testing.T) {
	b, err := Done{Reported: true, ErrorCQEs: 7}.MarshalBinary()
	require.NoError(t, err)
	assert.Equal(t, []byte{'G', 'D', 'K', 'D', 7, 0, 0, 0}, b)
	d, err := DecodeDone(b)
	require.NoError(t, err)
	assert.Equal(t, Done{Reported: true, ErrorCQEs: 7}, d)
	_, err = DecodeDone(b[:7])
	assert.ErrorIs(t, err, ErrBadRecord)
	b[0] = 'X'
	_, err = DecodeDone(b)
	assert.ErrorIs(t, err, ErrBadRecord)
}

// freePort returns a TCP port that was free a moment ago.
func listenAny(t *testing.T) (net.Listener, uint16) {
	t.Helper()
	l, err := Listen(0)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	_, p, err := net.SplitHostPort(l.Addr().String())
	require.NoError(t, err)
	n, err := strconv.Atoi(p)
	require.NoError(t, err)
	return l, uint16(n)
}

func TestExchangeLoopback(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		serverBufs, clientBufs int
	}{{"bw", len(BWSizes), 0}, {"lat", len(LatSizes), len(LatSizes)}} {
		t.Run(tc.name, func(t *testing.T) {
			l, port := listenAny(t)
			srvEP, cliEP := sampleEndpoint(tc.serverBufs, 0x11), sampleEndpoint(tc.clientBufs, 0x22)
			cliEP.LID = 9
			type res struct {
				ep   Endpoint
				done Done
				err  error
			}
			srvCh := make(chan res, 1)
			go func() {
				c, err := Accept(context.Background(), l, 5*time.Second)
				if err != nil {
					srvCh <- res{err: err}
					return
				}
				defer c.Close()
				ep, err := Exchange(c, true, srvEP, tc.clientBufs, 5*time.Second)
				if err != nil {
					srvCh <- res{err: err}
					return
				}
				d, err := WaitDone(context.Background(), c, 5*time.Second)
				srvCh <- res{ep, d, err}
			}()
			c, err := Dial(context.Background(), "127.0.0.1", port, 5*time.Second)
			require.NoError(t, err)
			got, err := Exchange(c, false, cliEP, tc.serverBufs, 5*time.Second)
			require.NoError(t, err)
			assert.Equal(t, srvEP, got)
			require.NoError(t, SendDone(c, Done{ErrorCQEs: 3}, time.Second))
			require.NoError(t, c.Close())
			r := <-srvCh
			require.NoError(t, r.err)
			assert.Equal(t, cliEP, r.ep)
			assert.Equal(t, Done{Reported: true, ErrorCQEs: 3}, r.done)
		})
	}
}

// tcpPair returns the two ends of a loopback TCP connection. The EOF
// cases need TCP rather than net.Pipe: a pipe refuses SetReadDeadline once
// its peer has closed, while a socket accepts it and then reads EOF, and the
// socket is what the examples run on.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	l, port := listenAny(t)
	acc := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			acc <- nil
			return
		}
		acc <- c
	}()
	client, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
	require.NoError(t, err)
	server = <-acc
	require.NotNil(t, server, "accept on the loopback listener failed")
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func TestWaitDoneEOFAndGarbage(t *testing.T) {
	// The client closes before the server starts waiting: the order the
	// examples see when the client finishes first.
	a, b := tcpPair(t)
	require.NoError(t, a.Close())
	d, err := WaitDone(context.Background(), b, time.Second)
	require.NoError(t, err)
	assert.False(t, d.Reported)

	a, b = tcpPair(t)
	_, err = a.Write([]byte("GDK"))
	require.NoError(t, err)
	require.NoError(t, a.Close())
	_, err = WaitDone(context.Background(), b, time.Second)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)

	a, b = tcpPair(t)
	_, err = a.Write([]byte("BADMAGIC"))
	require.NoError(t, err)
	require.NoError(t, a.Close())
	_, err = WaitDone(context.Background(), b, time.Second)
	assert.ErrorIs(t, err, ErrBadRecord)
}

func TestWaitDoneTimeoutAndCancel(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	start := time.Now()
	_, err := WaitDone(context.Background(), b, 50*time.Millisecond)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)

	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(20*time.Millisecond, func() { cancel(ErrInterrupted) })
	_, err = WaitDone(ctx, b, 0)
	assert.ErrorIs(t, err, ErrInterrupted)
}

func TestExchangeShortPeer(t *testing.T) {
	a, b := net.Pipe()
	go func() {
		buf := make([]byte, EndpointSize(0))
		io.ReadFull(a, buf)      // the server's record
		a.Write([]byte{1, 2, 3}) // then a truncated client record
		a.Close()
	}()
	_, err := Exchange(b, true, sampleEndpoint(0, 1), 0, time.Second)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Contains(t, err.Error(), "receive remote endpoint")

	a, b = net.Pipe()
	defer a.Close()
	_, err = Exchange(b, false, sampleEndpoint(0, 1), 0, 50*time.Millisecond)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	_, err = Exchange(b, false, sampleEndpoint(0, 0), 0, time.Second)
	assert.ErrorIs(t, err, ErrBadRecord)
}

func TestAcceptTimeoutAndCancel(t *testing.T) {
	l, _ := listenAny(t)
	_, err := Accept(context.Background(), l, 30*time.Millisecond)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	l2, _ := listenAny(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(20*time.Millisecond, func() { cancel(ErrInterrupted) })
	_, err = Accept(ctx, l2, 0)
	assert.ErrorIs(t, err, ErrInterrupted)
}

func TestDialRetriesUntilServerListens(t *testing.T) {
	l, port := listenAny(t)
	require.NoError(t, l.Close()) // nothing listens on port now
	_, err := Dial(context.Background(), "127.0.0.1", port, 80*time.Millisecond)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED), "%v", err)

	accepted := make(chan error, 1)
	time.AfterFunc(100*time.Millisecond, func() {
		l, err := Listen(port)
		if err != nil {
			accepted <- err
			return
		}
		defer l.Close()
		c, err := Accept(context.Background(), l, 5*time.Second)
		if err == nil {
			c.Close()
		}
		accepted <- err
	})
	c, err := Dial(context.Background(), "127.0.0.1", port, 5*time.Second)
	require.NoError(t, err)
	c.Close()
	require.NoError(t, <-accepted)
}

func TestListenBusyPort(t *testing.T) {
	_, port := listenAny(t)
	_, err := Listen(port)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "listen on port "+strconv.Itoa(int(port)))
}
