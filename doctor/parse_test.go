package doctor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseKernelRelease(t *testing.T) {
	tests := []struct {
		in           string
		major, minor int
		ok           bool
	}{
		{"6.8.0-45-generic", 6, 8, true},
		{"6.2", 6, 2, true},
		{"5.15.0-91-generic\n", 5, 15, true},
		{"6.18.44-fc-v769", 6, 18, true},
		{"4.18.0-513.el8.x86_64", 4, 18, true},
		{"6", 0, 0, false},
		{"", 0, 0, false},
		{"linux", 0, 0, false},
		{"99999999999999999999.1", 0, 0, false},
	}
	for _, tc := range tests {
		maj, min, err := parseKernelRelease(tc.in)
		if !tc.ok {
			assert.ErrorIs(t, err, ErrParse, tc.in)
			continue
		}
		if assert.NoError(t, err, tc.in) {
			assert.Equal(t, [2]int{tc.major, tc.minor}, [2]int{maj, min}, tc.in)
		}
	}
}

func TestParseNvidiaVersion(t *testing.T) {
	tests := []struct {
		in   string
		want nvidiaModule
		ok   bool
	}{
		{"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  (dvs-builder@U16)  Tue Mar  5 2024\nGCC version: 12", nvidiaModule{"550.54.15", true}, true},
		{"NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023", nvidiaModule{"535.104.05", false}, true},
		{"NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.10  Release Build", nvidiaModule{"570.86.10", true}, true},
		{"NVRM version: something without a number", nvidiaModule{}, false},
		{"GCC version: 12.3.0", nvidiaModule{}, false},
		{"", nvidiaModule{}, false},
	}
	for _, tc := range tests {
		m, err := parseNvidiaVersion(tc.in)
		if !tc.ok {
			assert.ErrorIs(t, err, ErrParse, tc.in)
			continue
		}
		assert.NoError(t, err)
		assert.Equal(t, tc.want, m)
	}
}

func TestParseRegistryDwords(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]string
	}{
		{"RmMsg: \"\"\nRegistryDwords: \"PeerMappingOverride=1;RmFoo=0x2\"\n", map[string]string{"PeerMappingOverride": "1", "RmFoo": "0x2"}},
		{"RegistryDwords: \"PeerMappingOverride=1\"", map[string]string{"PeerMappingOverride": "1"}},
		{"RegistryDwords: \"\"\nRegistryDwordsPerDevice: \"PeerMappingOverride=1\"", map[string]string{}},
		{"RegistryDwords: \";=3; A = 0 ;B\"", map[string]string{"A": "0"}},
		{"EnableMSI: 1", map[string]string{}},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, parseRegistryDwords(tc.in), tc.in)
	}
	for v, want := range map[string]bool{"1": true, "0x1": true, "0": false, "": false, "yes": false, "0x0": false} {
		assert.Equal(t, want, registryTrue(v), v)
	}
}

func TestParseIOMMUCmdline(t *testing.T) {
	tests := []struct {
		in          string
		on, off, pt bool
		params      int
	}{
		{"BOOT_IMAGE=/vmlinuz ro quiet", false, false, false, 0},
		{"ro intel_iommu=on iommu=pt", true, false, true, 2},
		{"amd_iommu=on iommu.passthrough=1", true, false, true, 2},
		{"intel_iommu=off", false, true, false, 1},
		{"iommu=off", false, true, false, 1},
		{"intel_iommu=on,sm_on", true, false, false, 1},
		{"iommu.passthrough=0", false, false, false, 1},
	}
	for _, tc := range tests {
		c := parseIOMMUCmdline(tc.in)
		assert.Equal(t, tc.on, c.On, tc.in)
		assert.Equal(t, tc.off, c.Off, tc.in)
		assert.Equal(t, tc.pt, c.Passthrough, tc.in)
		assert.Len(t, c.Params, tc.params, tc.in)
	}
}

func TestParsePortState(t *testing.T) {
	n, name, err := parsePortState("4: ACTIVE\n")
	assert.NoError(t, err)
	assert.Equal(t, 4, n)
	assert.Equal(t, "ACTIVE", name)
	n, name, err = parsePortState("1: DOWN")
	assert.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, "DOWN", name)
	for _, bad := range []string{"", "ACTIVE", "x: ACTIVE", "-1: X", "300: X"} {
		_, _, err := parsePortState(bad)
		assert.ErrorIs(t, err, ErrParse, bad)
	}
}

func TestRdmaCoreRelease(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0", 44, true},
		{"/usr/lib64/libibverbs.so.1.11.28.0", 28, true},
		{"libibverbs.so.1.14.50.0", 50, true},
		{"/usr/lib/x86_64-linux-gnu/libibverbs.so.1", 0, false},
		{"libibverbs.so", 0, false},
		{"", 0, false},
		{"libibverbs.so.1.14.x.0", 0, false},
	}
	for _, tc := range tests {
		got, err := rdmaCoreRelease(tc.in)
		if !tc.ok {
			assert.ErrorIs(t, err, ErrParse, tc.in)
			continue
		}
		assert.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestNormalizeBusID(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"00000000:8A:00.0", "0000:8a:00.0"},
		{"0000:8a:00.0", "0000:8a:00.0"},
		{"00000001:17:00.1", "0001:17:00.1"},
		{"8a:00.0", "0000:8a:00.0"},
		{" 0000:8B:00.0\n", "0000:8b:00.0"},
	}
	for _, tc := range tests {
		got, err := NormalizeBusID(tc.in)
		assert.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{"", "gpu0", "0000:8a:00", "0000:8a:00.8", "100000:8a:00.0", "0000:zz:00.0", "0:1:2:3"} {
		_, err := NormalizeBusID(bad)
		assert.True(t, errors.Is(err, ErrParse), bad)
	}
}

func TestVerdictText(t *testing.T) {
	for _, v := range []Verdict{Pass, Warn, Fail, Skip} {
		b, err := v.MarshalText()
		assert.NoError(t, err)
		var back Verdict
		assert.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, v, back)
		assert.Equal(t, v.String(), string(b))
	}
	_, err := Verdict(9).MarshalText()
	assert.Error(t, err)
	assert.Equal(t, "Verdict(9)", Verdict(9).String())
	var v Verdict
	assert.Error(t, v.UnmarshalText([]byte("OK")))
}
