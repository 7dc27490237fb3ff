package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"sync/atomic"
	"testing"
)

// FuzzDecode checks that Decode never panics, and that whatever it accepts is
// valid and re-encodes to exactly the input (the encoding is canonical, so a
// frame has one byte form and Decode loses nothing).
func FuzzDecode(f *testing.F) {
	for _, op := range Opcodes {
		fr := sampleFrame(op)
		f.Add(fr.AppendEncode(nil))
	}
	f.Add([]byte("GDW\x02\x00\x00\x00\x3c"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := Decode(b)
		if err != nil {
			if fr2, err2 := Decode(b); err2 == nil {
				t.Fatalf("Decode not deterministic: %v then %+v", err, fr2)
			}
			return
		}
		if err := fr.Validate(); err != nil {
			t.Fatalf("Decode accepted a frame Validate rejects: %v", err)
		}
		if n := fr.EncodedLen(); n != len(b) {
			t.Fatalf("EncodedLen %d, input %d bytes", n, len(b))
		}
		if re := fr.AppendEncode(nil); !bytes.Equal(re, b) {
			t.Fatalf("re-encoding differs:\n in  % x\n out % x", b, re)
		}
	})
}

// FuzzStreamReader feeds arbitrary bytes to the TCP stream reader as one
// connection's stream. It must never panic, never hold more memory for a
// frame than the stream limit allows (plus one growth step), stop at the
// first bad frame, and hand out only frames that re-encode to exactly the
// bytes they came from. Every frame also goes through the connection's
// admission check, from both kinds of connection.
func FuzzStreamReader(f *testing.F) {
	var stream []byte
	for _, op := range Opcodes {
		fr := sampleFrame(op)
		b := fr.AppendEncode(nil)
		f.Add(b)
		stream = append(stream, b...)
	}
	f.Add(stream)
	f.Add([]byte("GDW\x02\x00\x00\x10\x00" + "short"))
	f.Add([]byte("GDW\x02\xff\xff\xff\xff"))
	f.Add([]byte("GDW\x01\x00\x00\x00\x3c"))
	f.Add(appendControl(nil, control{kind: ctlOffer, pid: 1, fd: 3, size: 1 << 20, ring: 1 << 19}))
	f.Add(append(appendControl(nil, control{kind: ctlRefuse, reason: "no"}), stream...))
	const limit = 4096
	p := &Port{gid: gidB}
	conns := []*conn{newConn(p, true, gidA), newConn(p, false, gidA)}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr := frameReader{r: bufio.NewReaderSize(bytes.NewReader(b), 16), max: limit}
		waits := 0
		fr.wait = func() { waits++ }
		var g Frame
		off := 0
		for {
			ctl, waited, err := fr.next(&g)
			if cap(fr.buf) > 2*limit+readChunk {
				t.Fatalf("frame buffer of %d bytes for a %d-byte limit", cap(fr.buf), limit)
			}
			if err != nil {
				var fe *FrameError
				if !errors.As(err, &fe) && err != io.EOF && err != io.ErrUnexpectedEOF {
					t.Fatalf("unexpected error type %T: %v", err, err)
				}
				if err == io.EOF && off != len(b) {
					t.Fatalf("clean EOF at %d of %d bytes", off, len(b))
				}
				return
			}
			if ctl != nil {
				n := len(appendControl(nil, *ctl))
				if re := appendControl(nil, *ctl); off+n > len(b) || !bytes.Equal(re, b[off:off+n]) {
					t.Fatalf("control record at %d re-encodes differently", off)
				}
				off += n
				continue
			}
			buffered := fr.r.Buffered()
			if fr.more(g.DstQPN, g.SrcQPN) && buffered < sameQPsLen {
				t.Fatal("More without the next frame's header buffered")
			}
			if fr.r.Buffered() != buffered {
				t.Fatal("more consumed bytes of the stream")
			}
			n := g.EncodedLen()
			if n > limit || off+n > len(b) {
				t.Fatalf("frame of %d bytes at %d of %d (limit %d)", n, off, len(b), limit)
			}
			if re := g.AppendEncode(nil); !bytes.Equal(re, b[off:off+n]) {
				t.Fatalf("frame at %d re-encodes differently", off)
			}
			if waited != (waits > 0) {
				t.Fatal("waited disagrees with the wait callback")
			}
			waits = 0
			for _, c := range conns {
				if c.admit(&g) && g.Opcode.IsRequest() == c.dialed {
					t.Fatalf("%s admitted on a connection for the other kind", g.Opcode)
				}
			}
			off += n
		}
	})
}

// FuzzShmRing writes arbitrary bytes into the ring a shared-memory link's
// reader consumes (the data area from its start, then the producer
// position the input's first eight bytes give), as a hostile process that
// shares the segment could. The reader must never panic or read outside
// the ring, return only records that decode to frames that re-encode to
// exactly their bytes, never move its position past the producer's, and
// stop (errShmBroken) at the first broken rule.
func FuzzShmRing(f *testing.F) {
	w, r := linkPair(f, minShmRing)
	// Seeds: what a real producer writes, then the same with a wrap.
	for _, op := range Opcodes {
		fr := sampleFrame(op)
		if err := w.put(&fr); err != nil {
			f.Fatal(err)
		}
	}
	good := append([]byte(nil), w.out.data[:w.tail]...)
	f.Add(append(binary.LittleEndian.AppendUint64(nil, w.tail), good...))
	f.Add(append(binary.LittleEndian.AppendUint64(nil, 8), binary.LittleEndian.AppendUint32(nil, shmWrapMark)...))
	f.Add(append(binary.LittleEndian.AppendUint64(nil, 64), 60, 0, 0, 0, 0, 0, 0, 0, 'G', 'D', 'W', 2))
	ring := w.out // the reader's in ring
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 8 {
			return
		}
		clear(ring.data[:min(len(ring.data), 1<<16)])
		tail := binary.LittleEndian.Uint64(in[:8])
		copy(ring.data, in[8:])
		r.head, r.seenTail = 0, 0 // a fresh reader for each input
		atomic.StoreUint64(ring.word64(offHead), 0)
		atomic.StoreUint64(ring.word64(offTail), tail)
		var g Frame
		var scratch [maxHead]byte
		for i := 0; i < 1000; i++ {
			b, err := r.next()
			if err != nil || b == nil {
				return
			}
			if r.head > tail {
				t.Fatalf("reader position %d past the producer's %d", r.head, tail)
			}
			if err := decodeShared(&g, b, &scratch); err != nil {
				return
			}
			if re := g.AppendEncode(nil); !bytes.Equal(re, b) {
				t.Fatal("a record re-encodes differently")
			}
			r.more(len(b), g.DstQPN, g.SrcQPN) // reads hostile bytes too: must stay in the ring
			r.done(len(b))
			if r.head > tail {
				t.Fatalf("reader position %d past the producer's %d", r.head, tail)
			}
		}
	})
}
