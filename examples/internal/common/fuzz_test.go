package common

import (
	"testing"
)

// FuzzDecodeEndpoint feeds arbitrary bytes and buffer counts to the
// endpoint decoder: it must never panic, and whatever it accepts must encode
// back to the same bytes.
func FuzzDecodeEndpoint(f *testing.F) {
	for _, n := range []int{0, 1, len(LatSizes), len(BWSizes)} {
		b, err := sampleEndpoint(n, 0x123).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(n))
	}
	f.Add([]byte{}, uint16(0))
	f.Fuzz(func(t *testing.T, b []byte, n uint16) {
		e, err := DecodeEndpoint(b, int(n))
		if err != nil {
			return
		}
		out, err := e.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded endpoint does not encode: %v", err)
		}
		if string(out) != string(b) {
			t.Fatalf("round trip changed the bytes:\n%x\n%x", b, out)
		}
	})
}

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
