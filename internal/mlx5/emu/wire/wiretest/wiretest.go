// Package wiretest gives tests of the emulated wire a TCP port number of
// their own, so that two test runs on one machine (a developer's beside
// CI, two CI jobs) never bind, dial or answer on each other's addresses.
//
// The wire dials a peer at the peer's address and the dialling port's own
// TCP port number, so a test that needs a stand-in peer (a black hole that
// accepts and never reads, an address where nothing listens) must put its
// ports and the stand-in on one port number. A fixed number is shared by
// every run on the machine: one run's black hole then takes the address
// the other run's needs ("address already in use"), or one run's frames
// reach the other run's stand-in. ReservePort hands out a number that the
// kernel gives no other socket while the test holds it.
//
// Only test code imports this package.
package wiretest

import (
	"fmt"
	"syscall"
	"testing"
)

// ReservePort reserves a TCP port number for the calling test until its
// cleanup and returns it. It binds a socket to 0.0.0.0 on a port the
// kernel chooses, with SO_REUSEADDR and without listening. While it is
// held:
//
//   - nothing listens on that port on any address unless the test itself
//     listens there: a connection to any address on it is refused, so an
//     address of the test's choosing on that port is a dead peer;
//   - the kernel gives the port to no other socket: a bind to port 0 (on
//     any address) and the source port of a connection never get it, and
//     a bind without SO_REUSEADDR to it fails with EADDRINUSE;
//   - a listener with SO_REUSEADDR (every Go listener, so every wire port
//     and every net.Listen) may bind it on any specific address, so the
//     test's own wire ports (wire.Config.Port, $GDAKI_EMU_PORT) and
//     stand-in peers listen on it.
//
// ReservePort fails tb (it does not return) if the socket cannot be made.
func ReservePort(tb testing.TB) uint16 {
	tb.Helper()
	fd, port, err := reserve()
	if err != nil {
		tb.Fatalf("wiretest: reserve a TCP port: %v", err)
	}
	tb.Cleanup(func() { syscall.Close(fd) })
	return port
}

// reserve makes the reserving socket and returns it and its port.
func reserve() (int, uint16, error) {
	// The descriptor is made close-on-exec under ForkLock, as package net
	// does, so that a child process started meanwhile does not inherit it
	// (and hold the port after the test).
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, syscall.IPPROTO_TCP)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, 0, fmt.Errorf("socket: %w", err)
	}
	fail := func(op string, err error) (int, uint16, error) {
		syscall.Close(fd)
		return -1, 0, fmt.Errorf("%s: %w", op, err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return fail("setsockopt SO_REUSEADDR", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{}); err != nil {
		return fail("bind 0.0.0.0:0", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok || in4.Port == 0 {
		return fail("getsockname", fmt.Errorf("bound to %#v, not an IPv4 port", sa))
	}
	return fd, uint16(in4.Port), nil
}
