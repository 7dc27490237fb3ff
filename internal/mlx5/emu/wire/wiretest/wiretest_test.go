package wiretest

import (
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bindPlain binds a socket without SO_REUSEADDR to ap and returns the
// bind's error (the socket is closed at once).
func bindPlain(t *testing.T, ap netip.AddrPort) error {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, syscall.IPPROTO_TCP)
	require.NoError(t, err)
	defer syscall.Close(fd)
	return syscall.Bind(fd, &syscall.SockaddrInet4{Addr: ap.Addr().As4(), Port: int(ap.Port())})
}

// TestReservePort: while a port is reserved, connections to it are refused
// on every address, a socket without SO_REUSEADDR cannot take it, and Go
// listeners (as wire ports are) bind it on specific addresses; two
// reservations differ; the cleanup gives the port back.
func TestReservePort(t *testing.T) {
	var port uint16
	t.Run("held", func(t *testing.T) {
		port = ReservePort(t)
		require.NotZero(t, port)
		assert.NotEqual(t, port, ReservePort(t), "two reservations, one port")

		for _, a := range []string{"127.0.0.1", "127.250.251.9"} {
			ap := netip.AddrPortFrom(netip.MustParseAddr(a), port)
			_, err := net.DialTimeout("tcp4", ap.String(), 2*time.Second)
			assert.ErrorIs(t, err, syscall.ECONNREFUSED, "dial %s: nothing listens on a reserved port", ap)
			assert.ErrorIs(t, bindPlain(t, ap), syscall.EADDRINUSE, "bind %s without SO_REUSEADDR", ap)
		}

		// Two listeners of the test on the reserved port, on two addresses;
		// each accepts.
		for _, a := range []string{"127.0.0.1", "127.250.251.9"} {
			ap := netip.AddrPortFrom(netip.MustParseAddr(a), port)
			ln, err := net.Listen("tcp4", ap.String())
			require.NoError(t, err, "a listener on the reserved port")
			defer ln.Close()
			c, err := net.DialTimeout("tcp4", ap.String(), 2*time.Second)
			require.NoError(t, err)
			c.Close()
		}
	})
	// The subtest's cleanup closed the reservation.
	assert.NoError(t, bindPlain(t, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port)), "the port after the cleanup")
}

// TestReserveCloseOnExec: the reserving socket is not inherited by a child
// process (which would hold the port after the test).
func TestReserveCloseOnExec(t *testing.T) {
	fd, _, err := reserve()
	require.NoError(t, err)
	defer syscall.Close(fd)
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	require.Zero(t, errno)
	assert.NotZero(t, flags&syscall.FD_CLOEXEC)
}
