package wire

import (
	"bytes"
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
	f.Add([]byte("GDW\x01\x00\x00\x00\x3c"))
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
