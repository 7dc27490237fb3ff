package gdrcopy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDisabled(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{{"", false}, {"0", false}, {"1", true}, {"-3", true}, {"yes", false}, {"00", false}}
	for _, tc := range tests {
		assert.Equal(t, tc.want, disabled(tc.v), "%q", tc.v)
	}
}

// Without the library (CI) Open fails with a message that names what is
// needed; with it, Open succeeds or names the missing module.
func TestOpenReportsCause(t *testing.T) {
	err := Open()
	if err == nil {
		t.Log("GDRCopy is available")
		return
	}
	assert.True(t, errors.Is(err, ErrUnavailable))
	assert.Contains(t, err.Error(), "libgdrapi.so.2")
	assert.Equal(t, err, Open(), "the decision is cached")
	_, perr := Pin(0x10000, 0x10000)
	assert.ErrorIs(t, perr, ErrUnavailable)
}
