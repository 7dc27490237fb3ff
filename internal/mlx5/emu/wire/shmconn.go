package wire

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/gdaki/gpunetio/internal/spin"
)

// How a link's reader waits: it polls without sleeping for shmSpin after
// the last record (a peer in the middle of an exchange answers within
// microseconds), then sleeps on the ring's futex word, at most shmNap at a
// time (so that it notices the connection's end). On a host with fewer than
// shmSpinCPUs processors it does not poll at all: two processes' readers
// and engines polling would take the processors from each other, and a
// futex wake-up costs less than that.
//
// shmSpinFor is the engine's for a NIC with rings in device memory
// (gpuSpinFor): GPU traffic comes in kernels separated by host work of up
// to about a millisecond (an example's next row), and a reader asleep then
// wakes late for the first frames of the next (on an H100 host, put_bw
// 64 B between two processes, four rounds alternating: 1.09, 0.81, 1.25,
// 1.18 M msgs/s with 2 ms against 0.77, 0.86, 0.78, 0.82 with 500 µs).
const (
	shmSpinFor  = 2 * time.Millisecond
	shmPolls    = 64
	shmSpinCPUs = 4
	shmNap      = 20 * time.Millisecond
)

var shmSpin = func() time.Duration {
	if runtime.NumCPU() < shmSpinCPUs {
		return 0
	}
	return shmSpinFor
}()

// EnvShm, set to 0, keeps every port of the process off shared memory.
const EnvShm = "GDAKI_EMU_SHM"

var errPeerGone = errors.New("wire: the peer closed the shared-memory link")

// shmEnabled reports whether this port sets up or accepts shared-memory
// links.
func (p *Port) shmEnabled() bool {
	return !p.cfg.ForceTCP && !p.cfg.NoShm && sysMemfdCreate >= 0 && os.Getenv(EnvShm) != "0"
}

// offerShm offers the peer a shared-memory link on a freshly dialled
// connection, before any frame: it returns the link when the peer accepts,
// nil when it refuses (or when no segment can be made here: TCP then), and
// an error when the connection failed.
func (c *conn) offerShm(tc *net.TCPConn) (*link, error) {
	p := c.p
	seg, fd, err := createSegment(p.cfg.ShmRing)
	if err != nil {
		return nil, nil
	}
	defer syscall.Close(fd)
	offer := control{kind: ctlOffer, token: seg.token, pid: uint32(os.Getpid()), fd: uint32(fd),
		size: uint64(len(seg.mem)), ring: uint32(seg.ring)}
	deadline := time.Now().Add(p.cfg.ReadTimeout)
	tc.SetDeadline(deadline)
	defer tc.SetDeadline(time.Time{})
	if _, err := tc.Write(appendControl(nil, offer)); err != nil {
		seg.close()
		return nil, err
	}
	var b [maxCtlLen]byte
	if _, err := io.ReadFull(tc, b[:8]); err != nil {
		seg.close()
		return nil, err
	}
	n, err := controlLen(b[:8])
	if err == nil {
		if _, err = io.ReadFull(tc, b[8:n]); err == nil {
			var a control
			if a, err = decodeControl(b[:n]); err == nil && a.token != seg.token {
				err = decodeErr("control", "answer to another offer")
			} else if err == nil && a.kind == ctlAccept {
				return newLink(seg, true), nil
			} else if err == nil && a.kind == ctlRefuse {
				seg.close()
				return nil, nil
			} else if err == nil {
				err = decodeErr("control", "%v in answer to an offer", a)
			}
		}
	}
	seg.close()
	p.stats.decodeErrors.Add(1)
	return nil, err
}

// answerOffer takes or refuses an offer that came first on an accepted
// connection. Taken, the link carries the peer's requests in and this
// port's responses out from now on.
func (c *conn) answerOffer(o control) {
	p := c.p
	refuse := func(why string) {
		c.enqueueRaw(appendControl(nil, control{kind: ctlRefuse, token: o.token, reason: why}))
	}
	if !p.shmEnabled() {
		refuse("shared memory off at this port")
		return
	}
	seg, err := openSegment(o)
	if err != nil {
		refuse(err.Error())
		return
	}
	l := newLink(seg, false)
	if !c.startShm(l) {
		return
	}
	c.enqueueRaw(appendControl(nil, control{kind: ctlAccept, token: o.token}))
}

// startShm puts a link under the connection: the frames queued for the
// socket so far go into the link first (so the order holds), every later
// frame goes there, and a reader goroutine takes what the peer puts into
// the other ring. False when the connection or the port is closing.
func (c *conn) startShm(l *link) bool {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		l.seg.close()
		return false
	}
	if len(c.pending) > 0 {
		if err := l.putRaw(c.pending); err != nil {
			c.mu.Unlock()
			l.seg.close()
			c.fail(fmt.Errorf("wire: move queued frames to shared memory: %w", err))
			return false
		}
		c.pending = c.pending[:0]
	}
	if h := c.p.cfg.MapHook; h != nil {
		l.release = h(l.seg.mem)
	}
	c.shm = l
	c.mu.Unlock()
	if !c.p.spawn(c, func() { c.shmLoop(l) }) {
		c.fail(ErrClosed)
		c.mu.Lock()
		c.shm = nil
		c.mu.Unlock()
		l.close()
		return false
	}
	c.p.stats.shm.Add(1)
	return true
}

// shmLoop is a link's reader: it decodes the records of the in ring and
// delivers those the connection admits, until the connection ends, the
// peer closes the link or breaks a rule of the ring. Then it unmaps the
// segment, once no sender can be writing into it.
func (c *conn) shmLoop(l *link) {
	p := c.p
	var rd shmReader
	last := time.Now()
	idle, fresh := 0, false
	poller := spin.Poller{Every: 1}
	poller.Start()
	defer poller.Stop()
	for !c.dead.Load() {
		b, err := l.next()
		if err == nil && b == nil {
			if fresh {
				// The spin starts at the first empty look after a frame:
				// the clock is read once per busy spell, not per frame.
				last, fresh = time.Now(), false
			}
			// While it spins, the reader looks at the ring shmPolls times
			// between two looks at the clock, each a chance to yield the
			// processor as package spin says (both cost more than a look
			// at the ring).
			if idle++; shmSpin > 0 && idle%shmPolls != 0 {
				continue
			}
			if l.peerClosed() {
				c.fail(errPeerGone)
				break
			}
			if now := time.Now(); now.Sub(last) < shmSpin {
				poller.Idle(now)
			} else {
				poller.Stop()
				l.sleep(shmNap)
			}
			continue
		}
		poller.Start() // a frame, or an error: this goroutine is busy
		if err == nil {
			err = c.shmBurst(l, b, &rd)
		}
		if err != nil {
			p.stats.decodeErrors.Add(1)
			c.fail(err)
			break
		}
		fresh = true
	}
	c.mu.Lock() // every sender checks c.err under mu before it writes
	c.shm = nil
	c.mu.Unlock()
	l.close()
}

// shmReader is what a link's reader keeps from one record to the next.
type shmReader struct {
	f       Frame
	scratch [maxHead]byte
}

// shmBurst handles the record b that next returned and those after it,
// until the ring is empty or the connection ends; it returns the error
// that breaks the link (a record that does not decode, a broken rule of
// the ring). The consumer position is stored for the producer before it
// returns.
//
// An accepted connection's last use (lastRead, the order in which the
// port evicts connections) is counted at the first frame of a burst and
// every shmUseEvery frames after it, not at each: one atomic addition on
// the port's counter and one store per frame otherwise.
func (c *conn) shmBurst(l *link, b []byte, rd *shmReader) error {
	p := c.p
	f := &rd.f
	defer l.showHead()
	defer func() { *f = Frame{} }() // no hold on the ring's bytes or the connection
	use := 0
	for {
		if err := decodeShared(f, b, &rd.scratch); err != nil {
			return err
		}
		if c.admit(f) {
			if !c.dialed {
				if use == 0 {
					c.lastRead.Store(p.activity.Add(1))
				}
				use = (use + 1) % shmUseEvery
				f.Route = Route{c}
			}
			f.More = l.more(len(b), f.DstQPN, f.SrcQPN)
			p.deliver(f)
		} else {
			p.stats.rejected.Add(1)
		}
		l.consume(len(b))
		if c.dead.Load() {
			return nil
		}
		var err error
		if b, err = l.next(); err != nil || b == nil {
			return err
		}
	}
}

// shmUseEvery is how many frames of a burst one count of the connection's
// use (lastRead) stands for.
const shmUseEvery = 64
