package wire

import (
	"bufio"
	"errors"
	"io"
	"net"
	"time"
)

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
		if !p.track(c, 1) {
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
