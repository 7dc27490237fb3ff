package verbs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseGID(t *testing.T) {
	cases := []struct {
		in, out string
		ipv4    bool
		bad     bool
	}{
		{in: "fe80::1", out: "fe80::1"},
		{in: "10.1.2.3", out: "10.1.2.3", ipv4: true},
		{in: "::ffff:10.1.2.3", out: "10.1.2.3", ipv4: true},
		{in: "::", out: "::"},
		{in: "", bad: true},
		{in: "10.1.2", bad: true},
		{in: "fe80::1%eth0", bad: true},
		{in: "gid", bad: true},
	}
	for _, c := range cases {
		g, err := ParseGID(c.in)
		if c.bad {
			assert.ErrorIs(t, err, ErrInvalidValue, "%q", c.in)
			continue
		}
		require.NoError(t, err, "%q", c.in)
		assert.Equal(t, c.out, g.String())
		assert.Equal(t, c.ipv4, g.IPv4() != nil, "%q", c.in)
	}
}

// FuzzParseGID: ParseGID never panics, and a GID it returns formats to text
// that parses back to the same GID.
func FuzzParseGID(f *testing.F) {
	for _, s := range []string{"fe80::1", "10.1.2.3", "::ffff:127.1.2.3", "::", "1:2:3:4:5:6:7:8", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGID(s)
		if err != nil {
			return
		}
		h, err := ParseGID(g.String())
		if err != nil {
			t.Fatalf("%q parsed to %v, which does not parse: %v", s, g, err)
		}
		if h != g {
			t.Fatalf("%q: %v formats and parses back to %v", s, g, h)
		}
	})
}
