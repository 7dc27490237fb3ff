//go:build cgo

package dl_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/dl"
)

// A name holding a NUL byte would reach the loader cut short (libm.so.6
// followed by anything still opens libm): Open and Lookup refuse it, naming
// the offset, instead of loading or resolving something else.
func TestNULInNames(t *testing.T) {
	_, err := dl.Open(0, libm+"\x00.absent")
	var de *dl.Error
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Msg, "NUL byte at offset 9 of the library name")

	l, err := dl.Open(0, "\x00", libm)
	require.NoError(t, err, "the next candidate still loads")
	defer l.Close()
	_, err = l.Lookup("cos\x00sin")
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Msg, "NUL byte at offset 3")
	_, err = l.LookupVersion("cos", "GLIBC\x002.2.5")
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Msg, "NUL byte at offset 8")
}
