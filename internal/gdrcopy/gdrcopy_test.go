package gdrcopy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gdaki/gpunetio/internal/dl"
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

// The loader's failures keep their messages: dlerror's text for a library
// that does not load (with the *dl.Error in the chain), the first missing
// entry point for one that is not GDRCopy.
func TestLoadFailures(t *testing.T) {
	const absent = "libgdaki-absent-gdrapi.so.2"
	err := load(absent)
	assert.ErrorIs(t, err, ErrUnavailable)
	assert.Equal(t, "gdrcopy: dlopen "+absent+": "+absent+
		": cannot open shared object file: No such file or directory: "+ErrUnavailable.Error(), err.Error())
	var de *dl.Error
	if assert.ErrorAs(t, err, &de) {
		assert.Equal(t, "dlopen", de.Op)
	}

	err = load("libc.so.6")
	assert.ErrorIs(t, err, ErrUnavailable)
	assert.Equal(t, "gdrcopy: libc.so.6 lacks gdr_open: "+ErrUnavailable.Error(), err.Error())
}
