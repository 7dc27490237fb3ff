package wire

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5/emu/internal/hostcopy"
)

// Defaults.
const (
	// DefaultPort is the TCP port ports listen on and dial: the RoCE v2 UDP
	// port number, reused.
	DefaultPort = 4791
	// DefaultDialTimeout bounds one connection attempt.
	DefaultDialTimeout = 100 * time.Millisecond
	// DefaultWriteTimeout bounds one write on a connection: a peer that
	// does not take the bytes within it loses the connection.
	DefaultWriteTimeout = time.Second
	// DefaultReadTimeout bounds the arrival of a frame whose first bytes
	// have arrived, and of the first frame of an accepted connection.
	DefaultReadTimeout = time.Second
	// DefaultMaxConns bounds the accepted connections of a port.
	DefaultMaxConns = 128
	// DefaultMaxFrameLen is the longest encoded frame a port reads from a
	// stream (and sends over one): a 1 MiB payload and every header.
	DefaultMaxFrameLen = HeaderLen + maskedLen + 1<<20
	// DefaultMaxQueue bounds the bytes queued for one connection; a Send
	// that would exceed it does not queue its frame (ErrCongested).
	DefaultMaxQueue = 4 << 20
)

// Environment variables read by Listen when the Config leaves the field zero.
const (
	EnvPort = "GDAKI_EMU_PORT" // TCP port number
	EnvAddr = "GDAKI_EMU_ADDR" // IPv4 address to bind instead of a private loopback address
)

// Config configures a Port. The zero value is a port on a private loopback
// address, TCP port 4791 (or $GDAKI_EMU_PORT), with no handler yet.
type Config struct {
	// Addr is the IPv4 address to bind. Zero: $GDAKI_EMU_ADDR if set,
	// otherwise a loopback address 127.x.y.z of this port's own.
	Addr netip.Addr
	// Port is the TCP port to listen on and to dial peers at. Zero:
	// $GDAKI_EMU_PORT if set, otherwise DefaultPort.
	Port uint16
	// Handler receives the frames addressed to this port (see SetHandler).
	Handler func(*Frame)
	// ForceTCP makes this port send and receive only through its sockets,
	// even to and from ports of the same process (for tests of the socket
	// path).
	ForceTCP bool
	// DialTimeout bounds a connection attempt (default DefaultDialTimeout).
	DialTimeout time.Duration
	// WriteTimeout bounds one write system call on a connection (default
	// DefaultWriteTimeout); a connection whose peer does not read within it
	// is closed.
	WriteTimeout time.Duration
	// ReadTimeout bounds the arrival of the rest of a frame once its first
	// bytes have arrived, and of the first frame of an accepted connection
	// (default DefaultReadTimeout); the connection is closed otherwise.
	ReadTimeout time.Duration
	// MaxConns bounds the accepted connections (default DefaultMaxConns):
	// accepting one more closes the one that has been quiet the longest.
	MaxConns int
	// MaxFrameLen is the longest encoded frame read from or sent on a stream
	// (default DefaultMaxFrameLen, at most MaxFrameLen). A stream announcing
	// a longer one is closed.
	MaxFrameLen int
	// MaxQueue bounds the bytes queued for one connection (default
	// DefaultMaxQueue); Send refuses a frame that does not fit
	// (ErrCongested).
	MaxQueue int
	// NoShm keeps the port's connections on their sockets: no
	// shared-memory link is offered or accepted (also for every port when
	// $GDAKI_EMU_SHM is 0).
	NoShm bool
	// ShmRing is the size of each of a shared-memory link's two rings
	// (default DefaultShmRing; a power of two, at least 2 x MaxFrameLen).
	ShmRing int
	// MapHook, if set, is called with the whole mapping of each
	// shared-memory segment once its link is up, and the function it
	// returns just before the segment is unmapped. The emulator pins the
	// rings there for its GPU copies (a payload copied out of GPU memory
	// then lands in the ring by DMA).
	MapHook func(mem []byte) (release func())
	// ForceShm makes this port send to ports of its own process as it does
	// to other processes (for tests of the shared-memory path): no
	// in-process delivery, a connection with a shared-memory link where
	// the peer accepts one.
	ForceShm bool
}

// resolve fills the defaults, reading the environment.
func (c Config) resolve() (Config, error) {
	if _, err := hostcopy.Threads(); err != nil {
		return c, fmt.Errorf("wire: listen: %w", err)
	}
	if c.Port == 0 {
		c.Port = DefaultPort
		if s := os.Getenv(EnvPort); s != "" {
			n, err := strconv.ParseUint(s, 10, 16)
			if err != nil || n == 0 {
				return c, fmt.Errorf("wire: listen: %s=%q is not a TCP port number", EnvPort, s)
			}
			c.Port = uint16(n)
		}
	}
	if !c.Addr.IsValid() {
		if s := os.Getenv(EnvAddr); s != "" {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return c, fmt.Errorf("wire: listen: %s=%q: %w", EnvAddr, s, err)
			}
			c.Addr = a
		}
	}
	if c.Addr.IsValid() {
		c.Addr = c.Addr.Unmap()
		if !c.Addr.Is4() || c.Addr.IsUnspecified() {
			return c, fmt.Errorf("wire: listen: address %s is not a specific IPv4 address", c.Addr)
		}
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.MaxFrameLen <= 0 {
		c.MaxFrameLen = DefaultMaxFrameLen
	}
	if c.MaxFrameLen < HeaderLen || c.MaxFrameLen > MaxFrameLen {
		return c, fmt.Errorf("wire: listen: MaxFrameLen %d outside [%d, %d]", c.MaxFrameLen, HeaderLen, MaxFrameLen)
	}
	if c.MaxQueue <= 0 {
		c.MaxQueue = DefaultMaxQueue
	}
	if c.ShmRing <= 0 {
		c.ShmRing = DefaultShmRing
	}
	if !validRingSize(uint64(c.ShmRing)) || c.ShmRing < 2*c.MaxFrameLen || c.ShmRing < c.MaxQueue {
		return c, fmt.Errorf("wire: listen: ShmRing %d: want a power of two in [%d, %d], at least twice MaxFrameLen and MaxQueue", c.ShmRing, minShmRing, maxShmRing)
	}
	return c, nil
}
