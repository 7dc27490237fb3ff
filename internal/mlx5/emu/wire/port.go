package wire

import (
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

	handler atomic.Pointer[func(*Frame)]
	closed  atomic.Bool
	active  atomic.Int64 // in-process deliveries running in the handler

	mu      sync.Mutex // guards closing, peers, conns and wg.Add
	closing bool
	peers   map[netip.Addr]*peer
	conns   map[net.Conn]struct{} // every open connection, both directions
	wg      sync.WaitGroup        // accept loop, readers, watchers

	closeOnce sync.Once
	stats     counters
}

// Stats are a port's counters since Listen.
type Stats struct {
	Sent         uint64 // frames Send accepted (in-process or written to a socket)
	Received     uint64 // frames handed to the handler
	Dropped      uint64 // frames that arrived while there was no handler
	DecodeErrors uint64 // incoming TCP streams closed for an undecodable frame
	Dials        uint64 // connections dialled
	SendErrors   uint64 // Sends that returned an error
}

type counters struct {
	sent, received, dropped, decodeErrors, dials, sendErrors atomic.Uint64
}

// Listen opens a port: it binds the address and TCP port of cfg (see Config
// for the defaults), starts accepting connections and makes the port's GID
// reachable from this process's other ports.
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
		conns: make(map[net.Conn]struct{}),
	}
	if cfg.Handler != nil {
		p.SetHandler(cfg.Handler)
	}
	if err := register(p); err != nil {
		ln.Close()
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

// Send transmits f to the port that owns f.DstGID. It validates f first and
// does not modify it. See the package documentation for the paths, the
// bound on blocking and what an error means.
func (p *Port) Send(f *Frame) error {
	if p.closed.Load() {
		return p.sendErr(&SendError{Op: "send", Dst: f.DstGID, Kind: ErrClosed})
	}
	if err := f.Validate(); err != nil {
		return p.sendErr(&SendError{Op: "send", Dst: f.DstGID, Kind: ErrMalformed, Err: err})
	}
	if !p.cfg.ForceTCP {
		if d := lookup(f.DstGID); d != nil && !d.cfg.ForceTCP && d.deliverLocal(f) {
			p.stats.sent.Add(1)
			return nil
		}
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

// track registers a new connection and counts its n goroutines, each of
// which calls untrack when it ends; false when the port is closing (the
// caller closes c).
func (p *Port) track(c net.Conn, n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing {
		return false
	}
	p.conns[c] = struct{}{}
	p.wg.Add(n)
	return true
}

// untrack forgets a connection whose goroutine is ending.
func (p *Port) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	p.wg.Done()
}

// Close closes the port: see the package documentation. It returns the
// listener's close error, if any, the first time and nil after.
func (p *Port) Close() error {
	var err error
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		unregister(p)
		err = p.ln.Close()
		p.mu.Lock()
		p.closing = true
		for c := range p.conns {
			c.Close()
		}
		peers := make([]*peer, 0, len(p.peers))
		for _, pr := range p.peers {
			peers = append(peers, pr)
		}
		p.mu.Unlock()
		for _, pr := range peers {
			pr.mu.Lock()
			l := pr.link
			pr.mu.Unlock()
			if l != nil {
				pr.fail(l, ErrClosed)
			}
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
