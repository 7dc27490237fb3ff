package doctor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRootFSResolve(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, p), 0o755))
	}
	ln := func(p, to string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		require.NoError(t, os.Symlink(to, filepath.Join(root, p)))
	}
	mk("sys/devices/pci0000:00/0000:00:01.0")
	ln("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0")
	ln("sys/abs", "/sys/devices")                // absolute: stays inside the root
	ln("sys/escape", "../../../../../../../etc") // ".." stops at the root
	ln("sys/loop1", "loop2")
	ln("sys/loop2", "loop1")
	fs := newRootFS(root)

	tests := []struct {
		in, want string
		err      error
	}{
		{"/sys/bus/pci/devices/0000:00:01.0", "/sys/devices/pci0000:00/0000:00:01.0", nil},
		{"/sys/bus/pci/devices/0000:00:01.0/..", "/sys/devices/pci0000:00", nil},
		{"/sys/abs/pci0000:00", "/sys/devices/pci0000:00", nil},
		{"/sys/escape", "", os.ErrNotExist},
		{"/sys/loop1", "", ErrLinkLoop},
		{"/sys/missing", "", os.ErrNotExist},
	}
	for _, tc := range tests {
		got, err := fs.resolve(tc.in)
		if tc.err != nil {
			assert.ErrorIs(t, err, tc.err, tc.in)
			assert.NotContains(t, err.Error(), root, "errors name in-root paths only")
			continue
		}
		assert.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	names, err := fs.list("/sys/bus/pci/devices")
	assert.NoError(t, err)
	assert.Equal(t, []string{"0000:00:01.0"}, names)
	names, err = fs.list("/sys/class/infiniband")
	assert.NoError(t, err, "a missing directory is an empty list")
	assert.Empty(t, names)
	assert.True(t, fs.exists("/sys/abs"))
	assert.False(t, fs.exists("/sys/escape"))
}

func TestRootFSReadLimit(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "big"), make([]byte, maxSysfsFile*2), 0o644))
	b, err := newRootFS(root).readFile("/big")
	require.NoError(t, err)
	assert.Len(t, b, maxSysfsFile)
	_, err = newRootFS(root).readFile("/nope")
	assert.ErrorIs(t, err, os.ErrNotExist)
}
