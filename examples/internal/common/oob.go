package common

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/gdaki/gpunetio/verbs"
)

// Listen opens the server's out-of-band socket on all IPv4 addresses at
// port (SO_REUSEADDR, so a restarted server does not wait for TIME_WAIT).
func Listen(port uint16) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	l, err := lc.Listen(context.Background(), "tcp4", net.JoinHostPort("0.0.0.0", strconv.Itoa(int(port))))
	if err != nil {
		return nil, fmt.Errorf("oob: listen on port %d: %w", port, err)
	}
	return l, nil
}

// Accept waits for one client on l. It gives up when ctx is done (Ctrl+C)
// or, if timeout > 0, after timeout. l is not closed.
func Accept(ctx context.Context, l net.Listener, timeout time.Duration) (net.Conn, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := l.Accept()
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("oob: accept on %s: %w", l.Addr(), r.err)
		}
		return r.c, nil
	case <-ctx.Done():
		// Unblock the Accept through a deadline on the listener when it has
		// one; otherwise the caller's Close of l ends it.
		if d, ok := l.(interface{ SetDeadline(time.Time) error }); ok {
			_ = d.SetDeadline(time.Unix(1, 0))
		}
		if r := <-ch; r.c != nil {
			r.c.Close()
		}
		return nil, fmt.Errorf("oob: waiting for a client on %s: %w", l.Addr(), context.Cause(ctx))
	}
}

// Dial connects to the server at host:port, retrying refused connections
// (the server may not be listening yet) until ctx is done or timeout passed.
func Dial(ctx context.Context, host string, port uint16, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr := net.JoinHostPort(host, strconv.Itoa(int(port)))
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp4", addr)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil || !errors.Is(err, syscall.ECONNREFUSED) {
			if ctx.Err() != nil {
				err = fmt.Errorf("%w (last attempt: %v)", context.Cause(ctx), err)
			}
			return nil, fmt.Errorf("oob: connect to %s: %w", addr, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Exchange sends local and receives the peer's endpoint, which must carry
// remoteRegions regions, in the byte format of the DOCA GPUNetIO examples
// (verbs.ExchangeEndpointDOCA): so either side may be NVIDIA's C++ example.
// Both roles write their record before reading the peer's, which works
// against the reference in either role (it sends each field before it
// receives the peer's, or receives first, and TCP buffers the few bytes).
// The whole exchange must finish within timeout.
func Exchange(conn net.Conn, local verbs.Endpoint, remoteRegions int, timeout time.Duration) (verbs.Endpoint, error) {
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return verbs.Endpoint{}, fmt.Errorf("oob: exchange endpoints: set deadline: %w", err)
	}
	defer conn.SetDeadline(time.Time{}) //nolint:errcheck // best effort reset
	peer, err := verbs.ExchangeEndpointDOCA(conn, local, remoteRegions)
	if err != nil {
		return verbs.Endpoint{}, fmt.Errorf("oob: exchange endpoints with %s: %w", conn.RemoteAddr(), err)
	}
	return peer, nil
}

// SendDone sends the client's completion record.
func SendDone(conn net.Conn, d Done, timeout time.Duration) error {
	b, _ := d.MarshalBinary()
	if err := conn.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		return fmt.Errorf("oob: send completion: set deadline: %w", err)
	}
	if _, err := conn.Write(b); err != nil {
		return fmt.Errorf("oob: send completion: %w", err)
	}
	return nil
}

// WaitDone waits for the client's completion record. A connection closed
// cleanly before any byte of it counts as completion (Reported false). It
// gives up when ctx is done or, if timeout > 0, after timeout.
func WaitDone(ctx context.Context, conn net.Conn, timeout time.Duration) (Done, error) {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	if err := conn.SetReadDeadline(deadline); err != nil {
		return Done{}, fmt.Errorf("oob: wait for the client: set deadline: %w", err)
	}
	type result struct {
		d   Done
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b := make([]byte, doneRecordSize)
		n, err := io.ReadFull(conn, b)
		switch {
		case n == 0 && errors.Is(err, io.EOF):
			ch <- result{Done{}, nil}
		case err != nil:
			ch <- result{Done{}, fmt.Errorf("oob: wait for the client's completion: %w", err)}
		default:
			d, err := DecodeDone(b)
			ch <- result{d, err}
		}
	}()
	select {
	case r := <-ch:
		return r.d, r.err
	case <-ctx.Done():
		_ = conn.SetReadDeadline(time.Unix(1, 0))
		<-ch
		return Done{}, fmt.Errorf("oob: wait for the client's completion: %w", context.Cause(ctx))
	}
}
