package mlx5

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFieldPlacement(t *testing.T) {
	// Each case: a field, a value, and the only bytes that may change.
	cases := []struct {
		name string
		f    Field
		v    uint64
		want map[int]byte
	}{
		{"opcode at bit 0", F(0x00, 16), 0x0500, map[int]byte{0: 0x05, 1: 0x00}},
		{"op_mod at bit 0x30", F(0x30, 16), 0x0009, map[int]byte{6: 0x00, 7: 0x09}},
		{"qpn at bit 0x48 w24", F(0x48, 24), 0x1a2b, map[int]byte{9: 0x00, 10: 0x1a, 11: 0x2b}},
		{"msb of dword 1", F(0x20, 1), 1, map[int]byte{4: 0x80}},
		{"lsb of dword 1", F(0x3f, 1), 1, map[int]byte{7: 0x01}},
		{"cqc oi (bit 0x0e)", F(0x0e, 1), 1, map[int]byte{1: 0x02}},
		{"log_sq_size (qpc 0x51 w4)", F(0x51, 4), 8, map[int]byte{10: 0x40}},
		{"full dword", F(0x40, 32), 0xdeadbeef, map[int]byte{8: 0xde, 9: 0xad, 10: 0xbe, 11: 0xef}},
		{"be64 at bit 0x80", F(0x80, 64), 0x0102030405060708, map[int]byte{16: 1, 17: 2, 18: 3, 19: 4, 20: 5, 21: 6, 22: 7, 23: 8}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, fill := range []byte{0x00, 0xff} {
				b := bytes.Repeat([]byte{fill}, 32)
				Set(b, c.f, c.v)
				assert.Equal(t, c.v, Get(b, c.f))
				for i := range b {
					want, touched := c.want[i]
					if !touched {
						assert.Equalf(t, fill, b[i], "byte %d changed (fill 0x%02x)", i, fill)
						continue
					}
					if fill == 0 {
						assert.Equalf(t, want, b[i], "byte %d", i)
					}
				}
			}
		})
	}
}

func TestFieldRoundTripEveryPosition(t *testing.T) {
	for w := uint32(1); w <= 32; w++ {
		for bit := uint32(0); bit+w <= 32; bit++ {
			f := F(32+bit, w)
			b := make([]byte, 12)
			for i := range b {
				b[i] = byte(0xa5 ^ i)
			}
			before := append([]byte(nil), b...)
			Set(b, f, f.Max())
			require.Equal(t, f.Max(), Get(b, f), "%v", f)
			Set(b, f, 0)
			require.Equal(t, uint64(0), Get(b, f), "%v", f)
			Set(b, f, Get(before, f))
			require.Equal(t, before, b, "neighbours of %v changed", f)
		}
	}
}

func TestFieldMisuse(t *testing.T) {
	b := make([]byte, 8)
	assert.Panics(t, func() { Set(b, F(0, 4), 16) }, "overflow")
	assert.Panics(t, func() { Get(b, F(30, 4)) }, "straddles")
	assert.Panics(t, func() { Get(b, F(32, 64)) }, "unaligned 64-bit")
	assert.Panics(t, func() { Get(b, F(64, 8)) }, "outside")
	assert.True(t, F(0, 5).Fits(31))
	assert.False(t, F(0, 5).Fits(32))
	assert.Equal(t, 12, F(0x48, 24).End())
}

func TestBytes(t *testing.T) {
	b := make([]byte, 48)
	gid := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 20}
	SetBytes(b, 0x80, gid)
	assert.Equal(t, gid, Bytes(b, 0x80, 16))
	assert.Equal(t, make([]byte, 16), b[:16])
	assert.Panics(t, func() { Bytes(b, 3, 2) })
}
