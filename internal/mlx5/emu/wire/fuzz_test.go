package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
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
			waited, err := fr.next(&g)
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
