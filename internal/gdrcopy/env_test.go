package gdrcopy

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/doclog"
)

// captureLog sends the library's log at level lv to a buffer until the
// test ends.
func captureLog(t *testing.T, lv int32) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := doclog.Level()
	doclog.SetLevel(lv)
	doclog.SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() {
		doclog.SetLevel(old)
		doclog.SetLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})))
	})
	return &buf
}

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// GDRCOPY_PATH_L names the library loaded instead of the soname, and a
// library that cannot be used is reported at WARNING naming it.
func TestPathEnvAndWarning(t *testing.T) {
	const absent = "/nonexistent/gdaki/libgdrapi.so.2"
	log := captureLog(t, doclog.Warning)
	err := open(env(map[string]string{PathEnv: absent}))
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "dlopen "+absent+": ")
	assert.Contains(t, err.Error(), "(library from GDRCOPY_PATH_L)")
	assert.Contains(t, log.String(), "level=WARN")
	assert.Contains(t, log.String(), "doca_level=WARNING")
	assert.Contains(t, log.String(), "GDRCopy not available")
	assert.Contains(t, log.String(), absent)

	log.Reset()
	err = open(env(map[string]string{PathEnv: "libc.so.6"}))
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "libc.so.6 lacks gdr_open")
	assert.Contains(t, log.String(), "libc.so.6 lacks gdr_open")

	// Without it, the soname.
	log.Reset()
	if err = open(env(nil)); err == nil {
		t.Log("GDRCopy is available on this host")
		assert.Empty(t, log.String(), "nothing to warn about")
		return
	}
	assert.Contains(t, err.Error(), library)
	assert.NotContains(t, err.Error(), PathEnv)
	assert.Contains(t, log.String(), "GDRCopy not available")
}

// Disabling GDRCopy on purpose is reported at INFO, not WARNING, and wins
// over GDRCOPY_PATH_L.
func TestDisabledIsInfo(t *testing.T) {
	log := captureLog(t, doclog.Warning)
	e := map[string]string{DisableEnv: "1", PathEnv: "libc.so.6"}
	err := open(env(e))
	require.True(t, errors.Is(err, ErrUnavailable))
	assert.Contains(t, err.Error(), "disabled by DOCA_GPUNETIO_DISABLE_GDRCOPY=1")
	assert.Empty(t, log.String(), "nothing at WARNING")

	log = captureLog(t, doclog.Info)
	_ = open(env(e))
	assert.Contains(t, log.String(), "doca_level=INFO")
	assert.Contains(t, log.String(), "GDRCopy disabled by DOCA_GPUNETIO_DISABLE_GDRCOPY=1")
}
