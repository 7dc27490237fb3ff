package cuda

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNUMANodeSysfs reads numa_node from a fake sysfs tree: a node, the
// kernel's -1, garbage and a missing device all come out as the node or -1.
func TestNUMANodeSysfs(t *testing.T) {
	root := t.TempDir()
	old := sysfsRoot
	sysfsRoot = root
	defer func() { sysfsRoot = old }()
	put := func(bus, content string) {
		dir := filepath.Join(root, "bus", "pci", "devices", bus)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "numa_node"), []byte(content), 0o644))
	}
	put("0000:8a:00.0", "1\n")
	put("0000:1b:00.0", "-1\n")
	put("0000:2c:00.0", "x\n")
	put("0000:3d:00.0", "-7\n")
	require.Equal(t, 1, numaNode("0000:8a:00.0"))
	require.Equal(t, -1, numaNode("0000:1b:00.0"))
	require.Equal(t, -1, numaNode("0000:2c:00.0"))
	require.Equal(t, -1, numaNode("0000:3d:00.0"))
	require.Equal(t, -1, numaNode("0000:99:00.0"), "no such device")
}

func TestDeviceInfoArch(t *testing.T) {
	require.Equal(t, "sm_90", DeviceInfo{Major: 9}.Arch())
	require.Equal(t, "sm_86", DeviceInfo{Major: 8, Minor: 6}.Arch())
	require.Equal(t, "sm_100", DeviceInfo{Major: 10}.Arch())
}
