package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"
)

// readBufSize is the reader's bufio size: large enough to take many small
// frames per read system call.
const readBufSize = 64 << 10

// readChunk is how much a frame's buffer grows by at a time: a length field
// never makes the reader allocate more than this ahead of the bytes that
// actually arrived.
const readChunk = 64 << 10

// frameReader reads the frames of one stream: each is its own length
// prefix (FrameLen), then the rest of the frame.
type frameReader struct {
	r   *bufio.Reader
	max int    // the longest frame accepted (at most MaxFrameLen)
	buf []byte // the current frame; the decoded Payload aliases it
	// wait, if set, is called once per frame whose rest is not buffered
	// yet, before the reader blocks for it (the port sets a deadline).
	wait func()
	hdr  [8]byte // the length prefix being read (here, not on the heap per frame)
}

// next reads one record: a frame into *f (f.Payload is valid until the
// next call), or a control record, returned as ctl. waited reports whether
// wait was called. A malformed or oversized record is a *FrameError; a
// stream that ends inside one io.ErrUnexpectedEOF.
func (fr *frameReader) next(f *Frame) (ctl *control, waited bool, err error) {
	hdr := fr.hdr[:]
	if _, err := io.ReadFull(fr.r, hdr); err != nil {
		return nil, false, err
	}
	if isControl(hdr) {
		n, err := controlLen(hdr)
		if err != nil {
			return nil, false, err
		}
		var b [maxCtlLen]byte
		copy(b[:], hdr)
		if _, err := io.ReadFull(fr.r, b[len(hdr):n]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, false, err
		}
		c, err := decodeControl(b[:n])
		if err != nil {
			return nil, false, err
		}
		return &c, false, nil
	}
	n, err := FrameLen(hdr)
	if err != nil {
		return nil, false, err
	}
	if n > fr.max {
		return nil, false, decodeErr("length", "frame length %d above the stream's limit %d", n, fr.max)
	}
	if fr.wait != nil && fr.r.Buffered() < n-len(hdr) {
		fr.wait()
		waited = true
	}
	buf := append(fr.buf[:0], hdr...)
	for len(buf) < n {
		k := min(n-len(buf), readChunk)
		buf = slices.Grow(buf, k)
		m, err := io.ReadFull(fr.r, buf[len(buf):len(buf)+k])
		buf = buf[:len(buf)+m]
		if err != nil {
			fr.buf = buf
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, waited, err
		}
	}
	fr.buf = buf
	return nil, waited, DecodeInto(f, buf)
}

// more reports whether the bytes already buffered start the next frame,
// between the QPs dst and src (Frame.More); it never reads from the stream.
func (fr *frameReader) more(dst, src uint32) bool {
	if fr.r.Buffered() < sameQPsLen {
		return false
	}
	b, err := fr.r.Peek(sameQPsLen)
	return err == nil && sameQPs(b, dst, src)
}

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
		p.accept(c)
	}
}

// String describes a route for diagnostics.
func (r Route) String() string {
	if r.c == nil {
		return "in-process"
	}
	dir := "accepted from"
	if r.c.dialed {
		dir = "dialled to"
	}
	return fmt.Sprintf("tcp %s %s", dir, r.c.peer)
}
