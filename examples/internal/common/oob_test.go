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

// listenAny listens on a free port and returns it.
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
