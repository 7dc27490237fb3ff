package common

import (
	"testing"
)

// FuzzDecodeDone checks the completion-record decoder the same way.
func FuzzDecodeDone(f *testing.F) {
	f.Add([]byte("GDKD\x00\x00\x00\x00"))
	f.Add([]byte("GDKD\xff\xff\xff\xff"))
	f.Add([]byte("GDK"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeDone(b)
		if err != nil {
			return
		}
		out, _ := d.MarshalBinary()
		if string(out) != string(b) || !d.Reported {
			t.Fatalf("round trip: %x -> %+v -> %x", b, d, out)
		}
	})
}
