package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParsePCIBusID(t *testing.T) {
	tests := []struct {
		in   string
		want string // canonical form, "" when the input is malformed
	}{
		{"8A:00.0", "0000:8a:00.0"},
		{"8a:00.0", "0000:8a:00.0"},
		{"0000:8a:00.0", "0000:8a:00.0"},
		{"0000:8A:00.0", "0000:8a:00.0"},
		{"00000000:8A:00.0", "0000:8a:00.0"},
		{" 0000:1b:00.1\n", "0000:1b:00.1"},
		{"0001:c1:1f.7", "0001:c1:1f.7"},
		{"1:2:3.4", "0001:02:03.4"},
		{"abcd1234:ff:1F.7", "abcd1234:ff:1f.7"},
		{"", ""},
		{"8a:00", ""},             // no function
		{"8a.00.0", ""},           // no colon
		{"0000:8a:20.0", ""},      // device > 31
		{"0000:8a:00.8", ""},      // function > 7
		{"0000:18a:00.0", ""},     // bus > 2 digits
		{"100000000:8a:00.0", ""}, // domain > 8 digits
		{"0:0:0:00.0", ""},        // too many fields
		{"0000:8g:00.0", ""},      // not hex
		{"0000:+8:00.0", ""},      // sign
		{"0000::00.0", ""},        // empty bus
		{"0000:8a:00.", ""},       // empty function
		{"0x00:8a:00.0", ""},      // prefix
	}
	for _, tc := range tests {
		got, err := NormalizePCIBusID(tc.in)
		if tc.want == "" {
			require.ErrorIs(t, err, ErrBadBusID, "%q", tc.in)
			require.Contains(t, err.Error(), tc.in, "error quotes the input")
			continue
		}
		require.NoError(t, err, "%q", tc.in)
		require.Equal(t, tc.want, got, "%q", tc.in)
	}
}

func TestPCIAddressFields(t *testing.T) {
	a, err := ParsePCIBusID("0002:8A:1c.3")
	require.NoError(t, err)
	require.Equal(t, PCIAddress{Domain: 2, Bus: 0x8a, Device: 0x1c, Function: 3}, a)
}

// FuzzParsePCIBusID checks the parser never panics, that everything it
// accepts round-trips through the canonical form, and that the canonical
// form is a fixed point.
func FuzzParsePCIBusID(f *testing.F) {
	for _, s := range []string{"8A:00.0", "0000:8a:00.0", "00000000:8A:00.0", "1:2:3.4", ":.", "0000:8a:00."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParsePCIBusID(s)
		if err != nil {
			return
		}
		require.LessOrEqual(t, a.Device, uint8(31))
		require.LessOrEqual(t, a.Function, uint8(7))
		canon := a.String()
		b, err := ParsePCIBusID(canon)
		require.NoError(t, err, "canonical %q of %q", canon, s)
		require.Equal(t, a, b)
		require.Equal(t, canon, b.String())
	})
}
