//go:build cgo

package dl_test

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/dl"
)

// libm and libc are on every host this module builds on.
const (
	libm   = "libm.so.6"
	libc   = "libc.so.6"
	absent = "libgdaki-absent.so.1"
)

func TestOpenLookupClose(t *testing.T) {
	l, err := dl.Open(dl.Now|dl.Local, libm)
	require.NoError(t, err)
	assert.Equal(t, libm, l.Name())

	cos, err := l.Lookup("cos")
	require.NoError(t, err)
	assert.NotNil(t, cos)
	sin, err := l.Lookup("sin")
	require.NoError(t, err)
	assert.NotEqual(t, cos, sin, "two functions, two addresses")

	// A second handle on the same library resolves the same address.
	l2, err := dl.Open(0, libm)
	require.NoError(t, err)
	cos2, err := l2.Lookup("cos")
	require.NoError(t, err)
	assert.Equal(t, cos, cos2)
	require.NoError(t, l2.Close())

	path, err := l.Path()
	require.NoError(t, err)
	assert.Contains(t, path, "libm", "the link map names the file the loader opened")
	assert.True(t, strings.HasPrefix(path, "/"), "an absolute path: %q", path)

	require.NoError(t, l.Close())
	require.NoError(t, l.Close(), "Close is idempotent")

	_, err = l.Lookup("cos")
	require.ErrorIs(t, err, dl.ErrClosed, "a closed handle is never used")
	var de *dl.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "dlsym", de.Op)
	_, err = l.Path()
	require.ErrorIs(t, err, dl.ErrClosed)
}

// The candidates are tried in order; the first that loads wins.
func TestOpenCandidates(t *testing.T) {
	l, err := dl.Open(0, absent, libm, libc)
	require.NoError(t, err)
	defer l.Close()
	assert.Equal(t, libm, l.Name())

	_, err = dl.Open(0, absent, "libgdaki-absent.so")
	require.Error(t, err)
	var de *dl.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "dlopen", de.Op)
	assert.Equal(t, absent, de.Library)
	assert.Equal(t, []string{absent, "libgdaki-absent.so"}, de.Tried)
	// dlerror's text for each candidate, each naming its file.
	assert.Contains(t, de.Msg, absent+": cannot open shared object file")
	assert.Contains(t, de.Msg, "libgdaki-absent.so: cannot open shared object file")
	assert.Equal(t, "dlopen "+absent+" (tried "+absent+", libgdaki-absent.so): "+de.Msg, err.Error())
	assert.NotErrorIs(t, err, dl.ErrClosed)
}

func TestOpenErrors(t *testing.T) {
	_, err := dl.Open(0)
	var de *dl.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "dlopen", de.Op)
	assert.Contains(t, err.Error(), "no library name")

	_, err = dl.Open(0, absent)
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "dlopen "+absent+": "+absent+": cannot open shared object file: No such file or directory", err.Error())

	// A file that is not a shared object: the loader's reason, not a crash.
	_, err = dl.Open(0, "/proc/self/status")
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Msg, "/proc/self/status")
}

func TestLookupMissing(t *testing.T) {
	l, err := dl.Open(0, libm)
	require.NoError(t, err)
	defer l.Close()

	_, err = l.Lookup("gdaki_no_such_symbol")
	var de *dl.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "dlsym", de.Op)
	assert.Equal(t, libm, de.Library)
	assert.Equal(t, "gdaki_no_such_symbol", de.Symbol)
	assert.Contains(t, de.Msg, "undefined symbol: gdaki_no_such_symbol")
	assert.Equal(t, "dlsym gdaki_no_such_symbol in "+libm+": "+de.Msg, err.Error())

	_, err = l.LookupVersion("cos", "GDAKI_0.0")
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "dlvsym", de.Op)
	assert.Equal(t, "GDAKI_0.0", de.Version)
	assert.True(t, strings.HasPrefix(err.Error(), "dlvsym cos@GDAKI_0.0 in "+libm+": "), err.Error())
}

// glibc versions every libm symbol; the base version of cos is the one the
// architecture's first glibc had.
func TestLookupVersion(t *testing.T) {
	base := map[string]string{"amd64": "GLIBC_2.2.5", "arm64": "GLIBC_2.17"}[runtime.GOARCH]
	if base == "" {
		t.Skipf("no glibc base version known for %s", runtime.GOARCH)
	}
	l, err := dl.Open(0, libm)
	require.NoError(t, err)
	defer l.Close()
	v, err := l.LookupVersion("cos", base)
	require.NoError(t, err)
	p, err := l.Lookup("cos")
	require.NoError(t, err)
	assert.Equal(t, p, v, "cos has one implementation: the default is the base version")
}

// Lookups race with Close: each either resolves or fails with ErrClosed,
// never touches a released handle (go test -race, and no crash).
func TestConcurrentLookupClose(t *testing.T) {
	l, err := dl.Open(dl.Now|dl.Local, libm)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 800)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if _, err := l.Lookup("cos"); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		assert.NoError(t, l.Close())
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.True(t, errors.Is(err, dl.ErrClosed), "%v", err)
	}
}

// Global (the mode a library needs when others find it by soname) is
// accepted and lookups work through such a handle.
func TestGlobal(t *testing.T) {
	l, err := dl.Open(dl.Now|dl.Global, libm)
	require.NoError(t, err)
	defer l.Close()
	_, err = l.Lookup("floor")
	require.NoError(t, err)
}
