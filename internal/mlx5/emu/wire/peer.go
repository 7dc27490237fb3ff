package wire

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"
)

// peer is the outgoing side towards one destination address.
type peer struct {
	mu      sync.Mutex
	cond    sync.Cond // on mu: queued bytes, freed space, link failure
	addr    netip.AddrPort
	link    *link     // the current connection; nil before the first dial
	failAt  time.Time // time of the last failed dial
	failErr error     // its error, returned again until failAt + DialTimeout
}

// link is one outgoing connection and its queue. Send appends encoded
// frames to pending; the link's writer goroutine writes them out, as many per
// system call as have accumulated. Fields other than c are guarded by the
// peer's mu.
type link struct {
	c       *net.TCPConn
	pending []byte // frames queued, in order
	spare   []byte // the buffer the writer is writing or has written
	err     error  // why the link died; nil while it works
}

// maxPending bounds the bytes queued on one link; a Send that would exceed
// it waits for the writer (at most one write, bounded by WriteTimeout).
const maxPending = 4 << 20

// peerFor returns the peer of a destination, creating it; nil once closing.
func (p *Port) peerFor(a netip.Addr) *peer {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing {
		return nil
	}
	pr := p.peers[a]
	if pr == nil {
		pr = &peer{addr: netip.AddrPortFrom(a, p.cfg.Port)}
		pr.cond.L = &pr.mu
		p.peers[a] = pr
	}
	return pr
}

func (p *Port) sendTCP(f *Frame) error {
	a, ok := f.DstGID.IPv4()
	if !ok {
		return &SendError{Op: "send", Dst: f.DstGID, Kind: ErrBadGID}
	}
	pr := p.peerFor(a)
	if pr == nil {
		return &SendError{Op: "send", Dst: f.DstGID, Kind: ErrClosed}
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	l := pr.link
	if l != nil && l.err != nil {
		// Report the broken link once; the next Send dials again.
		pr.link = nil
		return &SendError{Op: "write", Dst: f.DstGID, Kind: ErrUnreachable, Err: l.err}
	}
	if l == nil {
		var err error
		if l, err = p.dial(pr); err != nil {
			return &SendError{Op: "dial", Dst: f.DstGID, Kind: ErrUnreachable, Err: err}
		}
	}
	n := f.EncodedLen()
	for len(l.pending) > 0 && len(l.pending)+n > maxPending && l.err == nil {
		pr.cond.Wait() // the writer's current write ends within WriteTimeout
	}
	if l.err != nil {
		pr.link = nil
		return &SendError{Op: "write", Dst: f.DstGID, Kind: ErrUnreachable, Err: l.err}
	}
	wake := len(l.pending) == 0
	l.pending = f.AppendEncode(l.pending)
	if wake {
		pr.cond.Broadcast()
	}
	return nil
}

// dial connects pr and starts the link's writer and watcher (pr.mu held).
// A failure is remembered for one DialTimeout, during which dial fails at
// once with the same error.
func (p *Port) dial(pr *peer) (*link, error) {
	if pr.failErr != nil && time.Since(pr.failAt) < p.cfg.DialTimeout {
		return nil, pr.failErr
	}
	d := net.Dialer{
		Timeout:   p.cfg.DialTimeout,
		LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(p.addr, 0)),
	}
	p.stats.dials.Add(1)
	nc, err := d.Dial("tcp4", pr.addr.String())
	if err != nil {
		pr.failAt, pr.failErr = time.Now(), err
		return nil, err
	}
	pr.failErr = nil
	c := nc.(*net.TCPConn)
	if !p.track(c, 2) {
		c.Close()
		return nil, ErrClosed
	}
	l := &link{c: c}
	pr.link = l
	go p.writeLoop(pr, l)
	go p.watch(pr, l)
	return l, nil
}

// writeLoop writes what Sends queue on l until the link fails or the port
// closes.
func (p *Port) writeLoop(pr *peer, l *link) {
	defer p.untrack(l.c)
	defer l.c.Close()
	pr.mu.Lock()
	defer pr.mu.Unlock()
	for {
		for len(l.pending) == 0 && l.err == nil {
			pr.cond.Wait()
		}
		if l.err != nil {
			return
		}
		buf := l.pending
		l.pending, l.spare = l.spare[:0], nil
		pr.mu.Unlock()
		err := l.c.SetWriteDeadline(time.Now().Add(p.cfg.WriteTimeout))
		if err == nil {
			_, err = l.c.Write(buf)
		}
		pr.mu.Lock()
		l.spare = buf[:0]
		if err != nil && l.err == nil {
			l.err = err
		}
		pr.cond.Broadcast() // space freed, or the link failed
	}
}

// watch notices when the peer closes an outgoing connection (it never
// sends anything on it) and fails the link, so that the next Send reports
// it and the one after dials again.
func (p *Port) watch(pr *peer, l *link) {
	defer p.untrack(l.c)
	var b [1]byte
	_, err := l.c.Read(b[:]) // returns on EOF, reset, or Close
	if err == nil {
		err = errors.New("peer sent data on an outgoing connection")
	}
	pr.fail(l, err)
	l.c.Close()
}

// fail marks l dead with err unless it already is, waking its writer and
// any Send waiting for queue space.
func (pr *peer) fail(l *link, err error) {
	pr.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	pr.cond.Broadcast()
	pr.mu.Unlock()
}
