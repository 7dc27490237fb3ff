package wire

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// conn is one TCP connection of a port, in either direction:
//
//   - dialled: opened by Send towards a destination address; it carries this
//     port's requests out and the destination's responses back in;
//   - accepted: opened by a peer; it carries the peer's requests in and this
//     port's responses back out.
//
// Each direction of a connection is bound to one kind of frame, and every
// frame that arrives must come from the address at the other end, so a
// local process that connects to a port can send it requests (that its QPs
// check like any others) but never a response.
//
// Frames to send are encoded into pending by Send (under mu) and written by
// the connection's writer goroutine, as many per system call as have
// accumulated. Send never waits: a frame that does not fit in the queue
// (Config.MaxQueue) is dropped, as a congested link drops packets.
type conn struct {
	p      *Port
	dialed bool
	peer   GID // the remote port: the dialled address, or the remote address of an accepted connection

	mu      sync.Mutex
	cond    sync.Cond // on mu: bytes queued, or the connection failed
	nc      *net.TCPConn
	pending []byte // encoded frames waiting for the writer
	spare   []byte // the buffer the writer has written, for reuse
	err     error  // why the connection ended; nil while it works
	dialErr bool   // err is the dial's
	shm     *link  // the shared-memory link frames travel on, once it is up

	dead     atomic.Bool   // err is set (read without mu by the link's reader)
	lastRead atomic.Uint64 // the port's activity count when a frame last arrived; accepted connections
}

func newConn(p *Port, dialed bool, peer GID) *conn {
	c := &conn{p: p, dialed: dialed, peer: peer}
	c.cond.L = &c.mu
	c.lastRead.Store(p.activity.Add(1))
	return c
}

// failed returns why the connection ended, or nil.
func (c *conn) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// fail ends the connection with err unless it already ended: it closes the
// socket (which ends the reader) and wakes the writer.
func (c *conn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.dead.Store(true)
	nc := c.nc
	c.pending, c.spare = nil, nil
	if c.shm != nil {
		c.shm.markClosed() // the peer's reader and ours stop; ours unmaps
	}
	c.mu.Unlock()
	c.cond.Broadcast()
	if nc != nil {
		nc.Close()
	}
}

// enqueue appends f's encoding to the queue. Without a deadline it never
// waits (ErrCongested when the queue is full); with one it waits for room
// until then.
func (c *conn) enqueue(f *Frame, deadline time.Time) error {
	n := f.EncodedLen()
	if n > c.p.cfg.MaxFrameLen {
		return &FrameError{Op: "send", Field: "length", Reason: "encoded frame longer than the port's MaxFrameLen"}
	}
	c.mu.Lock()
	if c.shm != nil {
		return c.enqueueShm(f, deadline) // unlocks
	}
	var timer *time.Timer
	for c.err == nil && len(c.pending) > 0 && len(c.pending)+n > c.p.cfg.MaxQueue {
		if deadline.IsZero() || !time.Now().Before(deadline) {
			c.mu.Unlock()
			if timer != nil {
				timer.Stop()
			}
			return ErrCongested
		}
		if timer == nil {
			timer = time.AfterFunc(time.Until(deadline), func() { c.cond.Broadcast() })
		}
		c.cond.Wait() // the writer broadcasts when a write completes
	}
	if timer != nil {
		timer.Stop()
	}
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	wake := len(c.pending) == 0
	c.pending = f.AppendEncode(c.pending)
	c.mu.Unlock()
	if wake {
		c.cond.Signal()
	}
	return nil
}

// enqueueShm puts f into the link's ring; c.mu held, released here.
// Without a deadline it never waits (ErrCongested when the ring is full);
// with one it polls for room until then.
func (c *conn) enqueueShm(f *Frame, deadline time.Time) error {
	for spin := 0; ; spin++ {
		if c.err != nil {
			err := c.err
			c.mu.Unlock()
			return err
		}
		err := c.shm.put(f)
		if err == errShmBroken {
			c.mu.Unlock()
			c.p.stats.decodeErrors.Add(1)
			c.fail(err)
			return err
		}
		if err != ErrCongested || deadline.IsZero() || !time.Now().Before(deadline) {
			c.mu.Unlock()
			return err
		}
		c.mu.Unlock()
		if spin < 64 {
			runtime.Gosched()
		} else {
			time.Sleep(20 * time.Microsecond)
		}
		c.mu.Lock()
	}
}

// enqueueRaw queues bytes that are not a frame (a control record) on the
// socket.
func (c *conn) enqueueRaw(b []byte) {
	c.mu.Lock()
	wake := len(c.pending) == 0
	c.pending = append(c.pending, b...)
	c.mu.Unlock()
	if wake {
		c.cond.Signal()
	}
}

// run is a dialled connection's goroutine: it dials, starts the reader and
// becomes the writer. A failed dial is remembered on the peer for one
// DialTimeout (Sends in that window fail at once).
func (c *conn) run(pr *peer) {
	p := c.p
	defer p.release(c)
	d := net.Dialer{
		Timeout:   p.cfg.DialTimeout,
		LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(p.addr, 0)),
	}
	p.stats.dials.Add(1)
	nc, err := d.DialContext(p.ctx, "tcp4", pr.addr.String())
	if err != nil {
		pr.dialFailed(err)
		c.mu.Lock()
		c.dialErr = true
		c.mu.Unlock()
		c.fail(err)
		return
	}
	tc := nc.(*net.TCPConn)
	c.mu.Lock()
	c.nc = tc
	dead := c.err != nil
	c.mu.Unlock()
	if dead {
		tc.Close()
		c.fail(ErrClosed)
		return
	}
	if p.shmEnabled() {
		l, err := c.offerShm(tc)
		if err != nil {
			tc.Close()
			c.fail(err)
			return
		}
		if l != nil && !c.startShm(l) {
			tc.Close()
			c.fail(ErrClosed)
			return
		}
	}
	if !p.spawn(c, c.readLoop) {
		tc.Close()
		c.fail(ErrClosed)
		return
	}
	c.writeLoop()
}

// writeLoop writes what Sends queue until the connection fails.
func (c *conn) writeLoop() {
	c.mu.Lock()
	for {
		for len(c.pending) == 0 && c.err == nil {
			c.cond.Wait()
		}
		if c.err != nil {
			c.mu.Unlock()
			return
		}
		buf := c.pending
		c.pending, c.spare = c.spare[:0], nil
		nc := c.nc
		c.mu.Unlock()
		err := nc.SetWriteDeadline(time.Now().Add(c.p.cfg.WriteTimeout))
		if err == nil {
			_, err = nc.Write(buf)
		}
		if err != nil {
			c.fail(err)
			c.mu.Lock()
			continue
		}
		c.mu.Lock()
		if c.spare == nil && c.err == nil {
			c.spare = buf[:0]
		}
		c.cond.Broadcast() // room for Replies waiting on a full queue
	}
}

// readLoop decodes the frames of the connection and delivers those it
// admits, until the stream ends, breaks, stalls or carries a bad frame.
func (c *conn) readLoop() {
	p := c.p
	nc := c.nc
	fr := frameReader{r: bufio.NewReaderSize(nc, readBufSize), max: p.cfg.MaxFrameLen}
	fr.wait = func() { nc.SetReadDeadline(time.Now().Add(p.cfg.ReadTimeout)) }
	if !c.dialed {
		// An accepted connection must start with a frame.
		nc.SetReadDeadline(time.Now().Add(p.cfg.ReadTimeout))
	}
	armed := !c.dialed
	var f Frame
	for first := true; ; first = false {
		ctl, waited, err := fr.next(&f)
		if err == nil && ctl != nil {
			// A control record: only an offer, only first, only accepted.
			if !first || c.dialed || ctl.kind != ctlOffer {
				err = decodeErr("control", "%v where none is allowed", *ctl)
			} else {
				c.answerOffer(*ctl)
				nc.SetReadDeadline(time.Time{})
				armed = false
				continue
			}
		}
		if err != nil {
			var fe *FrameError
			var ne net.Error
			switch {
			case errors.As(err, &fe):
				p.stats.decodeErrors.Add(1)
			case errors.As(err, &ne) && ne.Timeout():
				p.stats.readTimeouts.Add(1)
			}
			c.fail(err)
			return
		}
		if waited || armed {
			nc.SetReadDeadline(time.Time{})
			armed = false
		}
		if !c.admit(&f) {
			p.stats.rejected.Add(1)
			continue
		}
		if !c.dialed {
			c.lastRead.Store(p.activity.Add(1)) // a count, not a clock: cheap per frame
			f.Route = Route{c}
		}
		f.More = fr.more(f.DstQPN, f.SrcQPN)
		p.deliver(&f)
	}
}

// admit checks a frame against the connection it arrived on: addressed to
// this port, from the port at the other end, a response on a dialled
// connection and a request on an accepted one.
func (c *conn) admit(f *Frame) bool {
	if f.DstGID != c.p.gid || f.SrcGID != c.peer {
		return false
	}
	return f.Opcode.IsRequest() != c.dialed
}

// peer is the outgoing side towards one destination address.
type peer struct {
	addr netip.AddrPort

	mu      sync.Mutex
	link    *conn     // the current dialled connection; nil before the first Send or after a failure was reported
	failAt  time.Time // time of the last failed dial
	failErr error     // its error, returned again until failAt + DialTimeout
}

func (pr *peer) dialFailed(err error) {
	pr.mu.Lock()
	pr.failAt, pr.failErr = time.Now(), err
	pr.mu.Unlock()
}

// peerFor returns the peer of a destination, creating it; nil once closing.
func (p *Port) peerFor(a netip.Addr) *peer {
	// A port sends to one peer or few, frame after frame: the last one
	// found is kept (a peer is never removed), so that a frame takes no
	// lock of the port, which the connections' goroutines take as well.
	if h := p.lastPeer.Load(); h != nil && h.addr == a && !p.closed.Load() {
		return h.pr
	}
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
	p.lastPeer.Store(&peerHint{addr: a, pr: pr})
	return pr
}

// peerHint is the peer a port sent to last.
type peerHint struct {
	addr netip.Addr
	pr   *peer
}

// sendTCP queues a request on the connection to its destination, dialling
// one (in the background) when there is none. A connection that failed is
// reported by the next Send, and the one after dials again; a dial that
// failed is reported again, without dialling, for one DialTimeout.
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
	c := pr.link
	if c != nil && c.dead.Load() { // set with err, under c's mu
		if err := c.failed(); err != nil {
			pr.link = nil
			pr.mu.Unlock()
			op := "write"
			c.mu.Lock()
			if c.dialErr {
				op = "dial"
			}
			c.mu.Unlock()
			if errors.Is(err, ErrClosed) {
				return &SendError{Op: op, Dst: f.DstGID, Kind: ErrClosed}
			}
			return &SendError{Op: op, Dst: f.DstGID, Kind: ErrUnreachable, Err: err}
		}
	}
	if c == nil {
		if pr.failErr != nil && time.Since(pr.failAt) < p.cfg.DialTimeout {
			err := pr.failErr
			pr.mu.Unlock()
			return &SendError{Op: "dial", Dst: f.DstGID, Kind: ErrUnreachable, Err: err}
		}
		c = newConn(p, true, f.DstGID)
		if !p.spawnDial(c, pr) {
			pr.mu.Unlock()
			return &SendError{Op: "send", Dst: f.DstGID, Kind: ErrClosed}
		}
		pr.link = c
	}
	pr.mu.Unlock()
	return p.sendOn(c, f, "send", time.Time{})
}

// SendInPlace sends request f with a payload of n bytes that fill writes
// straight into the shared-memory ring of f's connection (f.Payload must be
// nil): a payload read from GPU memory then lands in the ring without a
// copy through another buffer (the rings are pinned when a MapHook pins
// them). It works only while f's destination is another process reached
// through a shared-memory link: otherwise (a port of this process, TCP, no
// connection yet) it returns ErrNotInPlace without calling fill, and the
// caller sends the frame with Send. The frame is published only when fill
// returns nil; fill's error is returned as is and nothing is sent. fill runs
// with the connection held: other senders to that peer wait for it.
// Congestion is ErrCongested, as for Send; other errors are *SendError.
func (p *Port) SendInPlace(f *Frame, n int, fill func(payload []byte) error) error {
	if p.closed.Load() {
		return p.sendErr(&SendError{Op: "send", Dst: f.DstGID, Kind: ErrClosed})
	}
	var bad error
	switch {
	case f.Payload != nil || f.Ref != nil:
		bad = fmt.Errorf("a payload of %d bytes beside the %d to fill", f.PayloadLen(), n)
	case f.Route.c != nil || !f.Opcode.IsRequest():
		bad = fmt.Errorf("%s: only requests are sent in place", f.Opcode)
	case n < 0 || n > MaxPayload || (n > 0 && !f.Opcode.HasPayload()):
		bad = fmt.Errorf("%d payload bytes on %s", n, f.Opcode)
	default:
		bad = f.Validate()
	}
	if bad != nil {
		return p.sendErr(&SendError{Op: "send", Dst: f.DstGID, Kind: ErrMalformed, Err: bad})
	}
	if HeaderLen+f.Opcode.extLen()+n > p.cfg.MaxFrameLen {
		return ErrNotInPlace
	}
	c := p.inPlaceConn(f.DstGID)
	if c == nil {
		return ErrNotInPlace
	}
	c.mu.Lock()
	if c.err != nil || c.shm == nil {
		c.mu.Unlock()
		return ErrNotInPlace
	}
	err := c.shm.putFill(f, n, fill)
	c.mu.Unlock()
	switch {
	case err == nil:
		p.stats.sent.Add(1)
		return nil
	case err == ErrCongested:
		p.stats.congested.Add(1)
		return ErrCongested
	case err == errShmBroken:
		p.stats.decodeErrors.Add(1)
		c.fail(err)
		return p.sendErr(&SendError{Op: "send", Dst: f.DstGID, Kind: ErrUnreachable, Err: err})
	}
	return err // fill's
}

// CanSendInPlace reports whether SendInPlace would write a request to dst
// in place now (a shared-memory link to dst is up); a sender uses it to
// decide how to read a payload before it has the frame.
func (p *Port) CanSendInPlace(dst GID) bool {
	c := p.inPlaceConn(dst)
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err == nil && c.shm != nil
}

// Flush publishes the requests to dst that a shared-memory link holds back
// (Frame.Hold). It does nothing when there are none, or when requests to
// dst do not go over such a link.
func (p *Port) Flush(dst GID) {
	c := p.inPlaceConn(dst)
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.err == nil && c.shm != nil && c.shm.held > 0 {
		c.shm.publish()
	}
	c.mu.Unlock()
}

// inPlaceConn returns the connection a request to dst would go on when it
// can go in place (not forced onto TCP, not to a port of this process, a
// connection dialled already), or nil; whether that connection has a
// shared-memory link is for the caller to see under its mu.
func (p *Port) inPlaceConn(dst GID) *conn {
	if p.closed.Load() || p.cfg.ForceTCP {
		return nil
	}
	if !p.cfg.ForceShm {
		if d := p.lookupDst(dst); d != nil && !d.cfg.ForceTCP && !d.cfg.ForceShm {
			return nil // in-process delivery
		}
	}
	a, ok := dst.IPv4()
	if !ok {
		return nil
	}
	pr := p.peerFor(a)
	if pr == nil {
		return nil
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.link
}

// sendOn queues f on connection c, waiting for room until deadline (zero:
// not at all).
func (p *Port) sendOn(c *conn, f *Frame, op string, deadline time.Time) error {
	err := c.enqueue(f, deadline)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrCongested):
		// Expected under load and retried by the caller: the bare sentinel,
		// without allocating.
		p.stats.congested.Add(1)
		return ErrCongested
	case errors.Is(err, ErrMalformed):
		return &SendError{Op: op, Dst: f.DstGID, Kind: ErrMalformed, Err: err}
	case errors.Is(err, ErrClosed):
		return &SendError{Op: op, Dst: f.DstGID, Kind: ErrClosed}
	}
	return &SendError{Op: op, Dst: f.DstGID, Kind: ErrUnreachable, Err: err}
}

// spawnDial registers a new dialled connection and starts its goroutine;
// false when the port is closing.
func (p *Port) spawnDial(c *conn, pr *peer) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing {
		return false
	}
	p.conns[c] = struct{}{}
	p.wg.Add(1)
	go c.run(pr)
	return true
}

// spawn starts another goroutine of a registered connection; false when the
// port is closing.
func (p *Port) spawn(c *conn, fn func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing {
		return false
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		fn()
	}()
	return true
}

// release forgets a connection whose writer goroutine is ending.
func (p *Port) release(c *conn) {
	c.fail(ErrClosed)
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	p.wg.Done()
}

// accept registers an incoming connection, closing the accepted connection
// that has been quiet the longest when MaxConns are open.
func (p *Port) accept(nc *net.TCPConn) {
	ra := nc.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
	if !ra.Is4() {
		nc.Close()
		return
	}
	c := newConn(p, false, GIDFromIPv4(ra))
	c.nc = nc
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		nc.Close()
		return
	}
	var oldest *conn
	n := 0
	for o := range p.conns {
		if o.dialed || o.failed() != nil {
			continue
		}
		n++
		if oldest == nil || o.lastRead.Load() < oldest.lastRead.Load() {
			oldest = o
		}
	}
	p.conns[c] = struct{}{}
	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		c.readLoop()
	}()
	go func() {
		defer p.release(c)
		c.writeLoop()
	}()
	p.mu.Unlock()
	if n >= p.cfg.MaxConns && oldest != nil {
		p.stats.evicted.Add(1)
		oldest.fail(errEvicted)
	}
}

var errEvicted = errors.New("wire: connection closed to admit a newer one (MaxConns)")
