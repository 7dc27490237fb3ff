package doctortest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExtract(t *testing.T) {
	arch := filepath.Join(t.TempDir(), "m.tree")
	require.NoError(t, os.WriteFile(arch, []byte(`# a machine
dir sys/class/iommu

file proc/cmdline
ro quiet
iommu=pt
.
hex sys/devices/pci0000:00/0000:00:01.0/config 16
0000: de ad
000e: be ef
.
link sys/bus/pci/devices/0000:00:01.0 -> ../../../devices/pci0000:00/0000:00:01.0
`), 0o644))
	dir := t.TempDir()
	require.NoError(t, Extract(arch, dir))
	fi, err := os.Stat(filepath.Join(dir, "sys/class/iommu"))
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	b, err := os.ReadFile(filepath.Join(dir, "proc/cmdline"))
	require.NoError(t, err)
	assert.Equal(t, "ro quiet\niommu=pt\n", string(b))
	b, err = os.ReadFile(filepath.Join(dir, "sys/bus/pci/devices/0000:00:01.0/config"))
	require.NoError(t, err, "the link resolves")
	assert.Equal(t, []byte{0xde, 0xad, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xbe, 0xef}, b)
}

func TestExtractErrors(t *testing.T) {
	tests := map[string]string{
		"escape":        "file ../x\nhi\n.\n",
		"absolute":      "dir /etc\n",
		"unterminated":  "file a\nhi\n",
		"hex past end":  "hex a 2\n0000: 01 02 03\n.\n",
		"hex bad byte":  "hex a 2\n0000: zz\n.\n",
		"hex no offset": "hex a 2\n01 02\n.\n",
		"hex size":      "hex a lots\n.\n",
		"link no arrow": "link a b\n",
		"unknown":       "blob a\n",
	}
	for name, body := range tests {
		arch := filepath.Join(t.TempDir(), "bad.tree")
		require.NoError(t, os.WriteFile(arch, []byte(body), 0o644))
		err := Extract(arch, t.TempDir())
		assert.Error(t, err, name)
		if err != nil {
			assert.Contains(t, err.Error(), "bad.tree:", name)
		}
	}
	assert.Error(t, Extract(filepath.Join(t.TempDir(), "missing.tree"), t.TempDir()))
}

// Every committed scenario extracts and carries facts.
func TestScenarioArchives(t *testing.T) {
	trees, err := filepath.Glob("../testdata/*.tree")
	require.NoError(t, err)
	require.Len(t, trees, 6)
	for _, tr := range trees {
		root := Tree(t, tr)
		f, err := LoadFacts(root)
		require.NoError(t, err, tr)
		assert.NotEmpty(t, f.Libs, tr)
	}
}

// An entry may not write through a symbolic link made by an earlier entry:
// the link could point anywhere, and the archive would write outside dir.
func TestExtractNoWriteThroughLink(t *testing.T) {
	for name, body := range map[string]string{
		"file": "link a -> OUT\nfile a/x\nhi\n.\n",
		"hex":  "link a -> OUT\nhex a/x 2\n.\n",
		"dir":  "link a -> OUT\ndir a/sub\n",
		"link": "link a -> OUT\nlink a/l -> /etc\n",
		"deep": "dir d\nlink d/a -> OUT\nfile d/./a/b/x\nhi\n.\n",
		"over": "link a -> OUT/x\nfile a\nhi\n.\n",
	} {
		t.Run(name, func(t *testing.T) {
			outside := t.TempDir()
			arch := filepath.Join(t.TempDir(), "bad.tree")
			require.NoError(t, os.WriteFile(arch, []byte(strings.ReplaceAll(body, "OUT", outside)), 0o644))
			err := Extract(arch, t.TempDir())
			assert.ErrorContains(t, err, "symbolic link")
			ents, rerr := os.ReadDir(outside)
			require.NoError(t, rerr)
			assert.Empty(t, ents, "nothing written outside the tree")
		})
	}
}
