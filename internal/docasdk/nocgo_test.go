//go:build !cgo

package docasdk

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Without cgo nothing loads: DOCA_SDK_LIB_PATH set gives open mode with the
// reference's "not found" lines, and every SDK call is refused.
func TestNoCgo(t *testing.T) {
	t.Setenv(EnvLibPath, "/opt/doca/lib")
	var got []Message
	SetLogger(func(l Level, s string) { got = append(got, Message{l, s}) })
	defer SetLogger(nil)
	d := Current()
	assert.Equal(t, Open, d.Mode)
	assert.Equal(t, "dlopen /opt/doca/lib/libdoca_common.so: "+noCgo, d.Reason)
	assert.Equal(t, []Message{
		errm("Failed to find libdoca_common.so library /opt/doca/lib/libdoca_common.so (DOCA_SDK_LIB_PATH=/opt/doca/lib)"),
		warn("Env var DOCA_SDK_LIB_PATH set to /opt/doca/lib, but DOCA SDK libraries not found. DOCA SDK is not in use"),
	}, got)
	_, err := GPUCreate("0000:01:00.0")
	assert.ErrorIs(t, err, ErrNotActive)
	os.Unsetenv(EnvLibPath)
	assert.Equal(t, d.Reason, Current().Reason, "latched")
}
