package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Port is one emulated NIC port on the wire. See the package documentation
// for addressing, delivery, threading and lifetime.
type Port struct {
	cfg  Config
	addr netip.Addr
	gid  GID
	ln   *net.TCPListener

	handler  atomic.Pointer[func(*Frame)]
	closed   atomic.Bool
	active   atomic.Int64  // in-process deliveries running in the handler
	activity atomic.Uint64 // counts accepted connections and their frames (a shared-memory link's by burst, conn.shmBurst): orders them by recent use

	ctx    context.Context // cancelled by Close: ends dials in progress
	cancel context.CancelFunc

	mu      sync.Mutex // guards closing, peers, conns and wg.Add
	closing bool
	peers   map[netip.Addr]*peer
	// lastPeer is the peer peerFor found last (read without mu).
	lastPeer atomic.Pointer[peerHint]
	// lastDst is the destination lookupDst looked up last.
	lastDst atomic.Pointer[dstHint]
	conns   map[*conn]struct{} // every connection, both directions
	wg      sync.WaitGroup     // accept loop, connection goroutines

	closeOnce sync.Once
	stats     counters
	stack     string // where Listen was called, when trackStacks is set
}

// Stats are a port's counters since Listen.
type Stats struct {
	Sent         uint64 // frames Send accepted (in-process or queued on a connection)
	Received     uint64 // frames handed to the handler
	Dropped      uint64 // frames that arrived while there was no handler
	DecodeErrors uint64 // TCP streams closed for an undecodable or oversized frame
	Dials        uint64 // connections dialled
	SendErrors   uint64 // Sends that returned an error
	Congested    uint64 // frames Send dropped because their connection's queue was full
	Rejected     uint64 // frames dropped for arriving on the wrong connection (see conn.admit)
	ReadTimeouts uint64 // TCP streams closed because a frame did not arrive within ReadTimeout
	Evicted      uint64 // accepted connections closed to admit a newer one (MaxConns)
	SharedMemory uint64 // connections whose frames moved to a shared-memory link
}

type counters struct {
	sent, received, dropped, decodeErrors, dials, sendErrors atomic.Uint64
	congested, rejected, readTimeouts, evicted, shm          atomic.Uint64
}

// Listen opens a port: it binds the address and TCP port of cfg (see Config
// for the defaults), starts accepting connections and makes the port's GID
// reachable from this process's other ports. A malformed
// GDAKI_EMU_COPY_THREADS (the bound on the cores that copy a large payload)
// fails it, as a malformed GDAKI_EMU_PORT or GDAKI_EMU_ADDR does.
func Listen(cfg Config) (*Port, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	var ln *net.TCPListener
	if cfg.Addr.IsValid() {
		ln, err = listenTCP(cfg.Addr, cfg.Port)
		if err != nil {
			return nil, err
		}
	} else {
		for try := 0; ; try++ {
			a := nextLoopback()
			ln, err = listenTCP(a, cfg.Port)
			if err == nil {
				break
			}
			if !errors.Is(err, syscall.EADDRINUSE) || try == 63 {
				return nil, err
			}
		}
	}
	addr := ln.Addr().(*net.TCPAddr).AddrPort().Addr().Unmap()
	p := &Port{
		cfg:   cfg,
		addr:  addr,
		gid:   GIDFromIPv4(addr),
		ln:    ln,
		peers: make(map[netip.Addr]*peer),
		conns: make(map[*conn]struct{}),
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	if trackStacks.Load() {
		p.stack = callers(2)
	}
	if cfg.Handler != nil {
		p.SetHandler(cfg.Handler)
	}
	if err := register(p); err != nil {
		ln.Close()
		p.cancel()
		return nil, err
	}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

func listenTCP(a netip.Addr, port uint16) (*net.TCPListener, error) {
	ap := netip.AddrPortFrom(a, port)
	ln, err := net.ListenTCP("tcp4", net.TCPAddrFromAddrPort(ap))
	if err != nil {
		return nil, fmt.Errorf("wire: listen on %s: %w", ap, err)
	}
	return ln, nil
}

// GID is the port's RoCE v2 IPv4-mapped GID.
func (p *Port) GID() GID { return p.gid }

// Addr is the IPv4 address and TCP port the port listens on.
func (p *Port) Addr() netip.AddrPort { return netip.AddrPortFrom(p.addr, p.cfg.Port) }

// SetHandler sets the function that receives the frames addressed to this
// port, replacing the previous one; nil drops arriving frames. The frame is
// valid only during the call (see the package documentation).
func (p *Port) SetHandler(h func(*Frame)) {
	if h == nil {
		p.handler.Store(nil)
		return
	}
	p.handler.Store(&h)
}

// Stats returns the port's counters.
func (p *Port) Stats() Stats {
	c := &p.stats
	return Stats{
		Sent: c.sent.Load(), Received: c.received.Load(), Dropped: c.dropped.Load(),
		DecodeErrors: c.decodeErrors.Load(), Dials: c.dials.Load(), SendErrors: c.sendErrors.Load(),
		Congested: c.congested.Load(), Rejected: c.rejected.Load(), ReadTimeouts: c.readTimeouts.Load(),
		Evicted: c.evicted.Load(), SharedMemory: c.shm.Load(),
	}
}

// deliver hands f to the handler.
func (p *Port) deliver(f *Frame) {
	if h := p.handler.Load(); h != nil {
		p.stats.received.Add(1)
		(*h)(f)
		return
	}
	p.stats.dropped.Add(1)
}

// deliverLocal is the in-process fast path; false when p is closed.
func (p *Port) deliverLocal(f *Frame) bool {
	p.active.Add(1)
	if p.closed.Load() {
		p.active.Add(-1)
		return false
	}
	p.deliver(f)
	p.active.Add(-1)
	return true
}

// Send transmits f to the port that owns f.DstGID. It validates f first,
// does not modify it and never waits for the network. A request goes
// in-process when a port of this process owns DstGID (and neither side
// forces TCP), otherwise onto the connection this port dials to DstGID's
// address. A response goes back the way its request came: in-process when
// f.Route is zero, otherwise on the connection f.Route names (and nowhere
// else). A request whose payload is by reference (f.Ref) goes in-process
// or not at all: when it cannot, Send returns ErrNotLocal and sends
// nothing. See the package documentation for what an error means.
func (p *Port) Send(f *Frame) error { return p.send(f, false) }

// InProcess reports whether a request to dst is delivered in-process now:
// a port of this process owns dst, and neither side forces TCP or shared
// memory. A sender uses it to decide how to read a payload (by reference,
// Frame.Ref) before it has the frame; the answer may change when a port
// opens or closes, and Send decides for itself.
func (p *Port) InProcess(dst GID) bool {
	if p.closed.Load() || p.cfg.ForceTCP || p.cfg.ForceShm {
		return false
	}
	d := p.lookupDst(dst)
	return d != nil && !d.cfg.ForceTCP && !d.cfg.ForceShm && !d.closed.Load()
}

// Reply sends a response to a request this port's handler received: like
// Send, except that on a full connection queue it waits for room, up to
// WriteTimeout, instead of dropping the frame. Call it from the handler of
// the request: the wait holds back only the connection that request came
// on (its reader), that is the peer that asked, as a responder's resources
// hold back its requester. In-process it is Send.
func (p *Port) Reply(f *Frame) error { return p.send(f, true) }

func (p *Port) send(f *Frame, wait bool) error {
	if p.closed.Load() {
		return p.sendErr(&SendError{Op: "send", Dst: f.DstGID, Kind: ErrClosed})
	}
	if err := f.Validate(); err != nil {
		return p.sendErr(&SendError{Op: "send", Dst: f.DstGID, Kind: ErrMalformed, Err: err})
	}
	req := f.Opcode.IsRequest()
	if c := f.Route.c; c != nil {
		if req || c.p != p || c.dialed || c.peer != f.DstGID {
			return p.sendErr(&SendError{Op: "send", Dst: f.DstGID, Kind: ErrMalformed,
				Err: fmt.Errorf("%s with a route (%v) that is not the connection of a request to this port from its destination", f.Opcode, f.Route)})
		}
		var deadline time.Time
		if wait {
			deadline = time.Now().Add(p.cfg.WriteTimeout)
		}
		if err := p.sendOn(c, f, "reply", deadline); err != nil {
			return p.sendErr(err)
		}
		p.stats.sent.Add(1)
		return nil
	}
	if !p.cfg.ForceTCP && !p.cfg.ForceShm {
		if d := p.lookupDst(f.DstGID); d != nil && !d.cfg.ForceTCP && !d.cfg.ForceShm && d.deliverLocal(f) {
			p.stats.sent.Add(1)
			return nil
		}
	}
	if f.Ref != nil {
		return ErrNotLocal // nothing sent: the caller sends the payload by value
	}
	if !req {
		return p.sendErr(&SendError{Op: "send", Dst: f.DstGID, Kind: ErrNoRoute})
	}
	if err := p.sendTCP(f); err != nil {
		return p.sendErr(err)
	}
	p.stats.sent.Add(1)
	return nil
}

func (p *Port) sendErr(err error) error {
	p.stats.sendErrors.Add(1)
	return err
}

// Close closes the port: see the package documentation. It returns the
// listener's close error, if any, the first time and nil after.
func (p *Port) Close() error {
	var err error
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		unregister(p)
		err = p.ln.Close()
		p.cancel()
		p.mu.Lock()
		p.closing = true
		conns := make([]*conn, 0, len(p.conns))
		for c := range p.conns {
			conns = append(conns, c)
		}
		p.mu.Unlock()
		for _, c := range conns {
			c.fail(ErrClosed)
		}
		p.wg.Wait()
		for p.active.Load() != 0 {
			time.Sleep(50 * time.Microsecond)
		}
		if err != nil {
			err = fmt.Errorf("wire: close %s: %w", p.gid, err)
		}
	})
	return err
}
