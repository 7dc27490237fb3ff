package wire

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"
)

// peer is the outgoing connection to one destination address.
type peer struct {
	mu      sync.Mutex
	addr    netip.AddrPort
	conn    *net.TCPConn // nil when not connected
	buf     []byte       // encode buffer, reused
	failAt  time.Time    // time of the last failed dial
	failErr error        // its error, returned again until failAt + DialTimeout
}

// readBufSize is the reader's bufio size: large enough to take many small
// frames per read system call.
const readBufSize = 64 << 10

func (p *Port) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.ln.AcceptTCP()
		if err != nil {
			if p.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			// Transient (e.g. EMFILE): back off briefly and go on.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !p.track(c) {
			c.Close()
			return
		}
		go p.readLoop(c)
	}
}

// readLoop decodes the frames of one incoming connection and delivers them.
func (p *Port) readLoop(c *net.TCPConn) {
	defer p.untrack(c)
	defer c.Close()
	r := bufio.NewReaderSize(c, readBufSize)
	buf := make([]byte, 4096)
	var f Frame
	for {
		if _, err := io.ReadFull(r, buf[:8]); err != nil {
			return
		}
		n, err := FrameLen(buf[:8])
		if err != nil {
			p.stats.decodeErrors.Add(1)
			return
		}
		if n > cap(buf) {
			nb := make([]byte, n)
			copy(nb, buf[:8])
			buf = nb
		}
		buf = buf[:cap(buf)]
		if _, err := io.ReadFull(r, buf[8:n]); err != nil {
			return
		}
		if err := DecodeInto(&f, buf[:n]); err != nil {
			p.stats.decodeErrors.Add(1)
			return
		}
		p.deliver(&f)
	}
}

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
	c := pr.conn
	if c == nil {
		var err error
		if c, err = p.dial(pr); err != nil {
			return &SendError{Op: "dial", Dst: f.DstGID, Kind: ErrUnreachable, Err: err}
		}
	}
	pr.buf = f.AppendEncode(pr.buf[:0])
	if err := c.SetWriteDeadline(time.Now().Add(p.cfg.WriteTimeout)); err != nil {
		pr.drop(c)
		return &SendError{Op: "write", Dst: f.DstGID, Kind: ErrUnreachable, Err: err}
	}
	if _, err := c.Write(pr.buf); err != nil {
		pr.drop(c)
		return &SendError{Op: "write", Dst: f.DstGID, Kind: ErrUnreachable, Err: err}
	}
	return nil
}

// dial connects pr (pr.mu held). A failure is remembered for one
// DialTimeout, during which dial fails at once with the same error.
func (p *Port) dial(pr *peer) (*net.TCPConn, error) {
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
	if !p.track(c) {
		c.Close()
		return nil, ErrClosed
	}
	pr.conn = c
	go p.watch(pr, c)
	return c, nil
}

// watch notices when the peer closes an outgoing connection (it never
// sends anything on it) and drops the connection, so the next Send dials
// again instead of writing into a dead socket.
func (p *Port) watch(pr *peer, c *net.TCPConn) {
	defer p.untrack(c)
	var b [1]byte
	c.Read(b[:]) // returns on EOF, reset, or Close
	c.Close()
	pr.mu.Lock()
	if pr.conn == c {
		pr.conn = nil
	}
	pr.mu.Unlock()
}

// drop closes a broken connection (pr.mu held).
func (pr *peer) drop(c *net.TCPConn) {
	c.Close()
	if pr.conn == c {
		pr.conn = nil
	}
}
