package doctor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustPath(t *testing.T, p string) pciPath {
	t.Helper()
	pp, err := parsePCIPath(p)
	require.NoError(t, err, p)
	return pp
}

func TestParsePCIPath(t *testing.T) {
	p := mustPath(t, "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:8A:00.0")
	assert.Equal(t, "pci0000:80", p.HostBridge)
	assert.Equal(t, []string{"0000:80:01.0", "0000:81:00.0", "0000:8a:00.0"}, p.Chain)
	assert.Equal(t, "0000:8a:00.0", p.BDF())
	assert.Equal(t, []string{"0000:80:01.0", "0000:81:00.0"}, p.Bridges())
	// Directly on the root bus (integrated devices, many VMs).
	p = mustPath(t, "/sys/devices/pci0000:00/0000:00:05.0")
	assert.Empty(t, p.Bridges())
	for _, bad := range []string{"", "/sys/devices/virtual/net/lo", "/sys/devices/pci0000:00", "/sys/devices/platform/x/0000:00:01.0"} {
		_, err := parsePCIPath(bad)
		assert.ErrorIs(t, err, ErrParse, bad)
	}
}

func TestClassify(t *testing.T) {
	const (
		gpuPIX  = "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:00.0/0000:8a:00.0"
		nicPIX  = "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:01.0/0000:8b:00.0"
		nicPXB  = "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:02.0/0000:90:00.0/0000:91:00.0/0000:92:00.0"
		nicPHB  = "/sys/devices/pci0000:80/0000:80:03.0/0000:a1:00.0"
		nicNode = "/sys/devices/pci0000:a0/0000:a0:01.0/0000:a1:00.0"
		sameDSP = "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:00.0/0000:8a:00.1"
	)
	tests := []struct {
		name       string
		a, b       string
		numaA      int
		numaB      int
		want       TopoClass
		wantBridge []string
	}{
		{"one switch", gpuPIX, nicPIX, 0, 0, TopoPIX, []string{"0000:81:00.0", "0000:82:00.0", "0000:82:01.0"}},
		{"same downstream port", gpuPIX, sameDSP, 0, 0, TopoPIX, []string{"0000:82:00.0"}},
		{"two switch levels", gpuPIX, nicPXB, 0, 0, TopoPXB, []string{"0000:81:00.0", "0000:82:00.0", "0000:82:02.0", "0000:90:00.0", "0000:91:00.0"}},
		{"host bridge", gpuPIX, nicPHB, 0, 0, TopoPHB, []string{"0000:80:01.0", "0000:81:00.0", "0000:82:00.0", "0000:80:03.0"}},
		{"two root complexes, one node", gpuPIX, nicNode, 0, 0, TopoNODE, []string{"0000:80:01.0", "0000:81:00.0", "0000:82:00.0", "0000:a0:01.0"}},
		{"two root complexes, NUMA unknown", gpuPIX, nicNode, -1, -1, TopoNODE, nil},
		{"two sockets", gpuPIX, nicNode, 0, 1, TopoSYS, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := pciFunc{Path: mustPath(t, tc.a), NUMA: tc.numaA}
			b := pciFunc{Path: mustPath(t, tc.b), NUMA: tc.numaB}
			c, why := classify(a, b)
			assert.Equal(t, tc.want, c, why)
			assert.NotEmpty(t, why)
			c2, _ := classify(b, a)
			assert.Equal(t, c, c2, "classification is symmetric")
			if tc.wantBridge != nil {
				assert.Equal(t, tc.wantBridge, bridgesBetween(a.Path, b.Path))
			}
		})
	}
}
