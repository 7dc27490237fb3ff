package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/doctor"
	"github.com/gdaki/gpunetio/verbs"
)

// fakeDevice is an open RDMA device with fixed answers.
type fakeDevice struct {
	ports  []portAttr
	gids   map[uint32]gidEntry
	closed *int
}

type gidEntry struct {
	gid [16]byte
	typ string
}

func (f fakeDevice) attr() (string, uint8, error) { return "28.39.1002", uint8(len(f.ports)), nil }

func (f fakeDevice) port(p uint8) (portAttr, error) { return f.ports[p-1], nil }

func (f fakeDevice) gid(p uint8, i uint32) ([16]byte, string, error) {
	g, ok := f.gids[i]
	if !ok {
		return [16]byte{}, "", errors.New("empty")
	}
	return g.gid, g.typ, nil
}

func (f fakeDevice) Close() error { *f.closed++; return nil }

type fakeGPUs struct {
	gpus []doctor.GPU
	err  error
}

func (g fakeGPUs) GPUs() ([]doctor.GPU, error)    { return g.gpus, g.err }
func (g fakeGPUs) DriverVersion() (string, error) { return "550.54.15", nil }

func TestDevices(t *testing.T) {
	v4 := netip.MustParseAddr("::ffff:192.168.1.10").As16()
	ll := netip.MustParseAddr("fe80::ba3f:d2ff:fe00:1").As16()
	closed := 0
	dev := fakeDevice{
		ports: []portAttr{{State: "ACTIVE", ActiveMTU: 4096, MaxMTU: 4096, GIDTblLen: 4, LinkLayer: "Ethernet"},
			{State: "DOWN", ActiveMTU: 1024, MaxMTU: 4096, GIDTblLen: 0, LinkLayer: "InfiniBand", LID: 7}},
		gids: map[uint32]gidEntry{
			0: {ll, "RoCE v1"},
			1: {ll, "RoCE v2"},
			2: {typ: "RoCE v2"}, // an empty slot is not listed
			3: {v4, "RoCE v2"},
		},
		closed: &closed,
	}
	d := deps{
		listRDMA: func() ([]verbs.DeviceInfo, error) {
			return []verbs.DeviceInfo{{Name: "mlx5_0", Driver: "devx", NodeGUID: 0xb83fd20300000001}, {Name: "mlx5_1", Driver: "devx"}}, nil
		},
		openRDMA: func(name string) (rdmaHandle, error) {
			if name == "mlx5_0" {
				return dev, nil
			}
			return nil, errors.New("open mlx5_1: permission denied")
		},
		gpus: fakeGPUs{gpus: []doctor.GPU{{Index: 0, BusID: "0000:8a:00.0", Name: "NVIDIA H100 80GB HBM3", MemTotal: 80 << 30,
			BAR1Total: 128 << 30, BAR1Used: 2 << 20, Persistence: true}}},
	}

	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, run([]string{"devices", "--json"}, d, &out, &errOut), errOut.String())
	assert.Equal(t, 1, closed, "the opened device is closed")
	var l deviceList
	require.NoError(t, json.Unmarshal(out.Bytes(), &l))
	require.Len(t, l.RDMA, 2)
	m := l.RDMA[0]
	assert.Equal(t, "b83fd20300000001", m.NodeGUID)
	assert.Equal(t, "28.39.1002", m.FWVersion)
	require.Len(t, m.Ports, 2)
	assert.Equal(t, rdmaPort{Port: 1, State: "ACTIVE", LinkLayer: "Ethernet", ActiveMTU: 4096, MaxMTU: 4096, GIDs: []gidInfo{
		{0, "fe80::ba3f:d2ff:fe00:1", "RoCE v1"}, {1, "fe80::ba3f:d2ff:fe00:1", "RoCE v2"}, {3, "::ffff:192.168.1.10", "RoCE v2"},
	}}, m.Ports[0])
	assert.Equal(t, rdmaPort{Port: 2, State: "DOWN", LinkLayer: "InfiniBand", ActiveMTU: 1024, MaxMTU: 4096, LID: 7, GIDs: []gidInfo{}}, m.Ports[1])
	assert.Contains(t, l.RDMA[1].Error, "permission denied")
	require.Len(t, l.GPUs, 1)
	assert.Equal(t, "0000:8a:00.0", l.GPUs[0].BusID)
	assert.True(t, l.GPUs[0].Persistence)

	out.Reset()
	require.Equal(t, exitOK, run([]string{"devices"}, d, &out, &errOut))
	text := out.String()
	assert.Regexp(t, `(?m)^mlx5_0 +devx +1 +ACTIVE +Ethernet +4096/4096 +28\.39\.1002 +3$`, text)
	assert.Regexp(t, `(?m)^mlx5_0 +devx +2 +DOWN +InfiniBand +1024/4096 +28\.39\.1002 +0$`, text)
	assert.Regexp(t, `(?m)^mlx5_1 +devx +- .*error: open mlx5_1: permission denied`, text)
	assert.Regexp(t, `(?m)^mlx5_0 +1 +3 +::ffff:192\.168\.1\.10 +RoCE v2$`, text)
	assert.Regexp(t, `(?m)^0 +0000:8a:00\.0 +NVIDIA H100 80GB HBM3 +81920 MiB +2/131072 MiB +on$`, text)
}

func TestDevicesNothingAtAll(t *testing.T) {
	d := deps{
		listRDMA: func() ([]verbs.DeviceInfo, error) { return nil, errors.New("devx: libibverbs.so.1 not found") },
		gpus:     fakeGPUs{err: errors.New("nvmlInit: driver not loaded")},
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, exitFail, run([]string{"devices"}, d, &out, &errOut))
	assert.Contains(t, errOut.String(), "libibverbs.so.1 not found")
	assert.Contains(t, errOut.String(), "driver not loaded")
	assert.Equal(t, 2, strings.Count(out.String(), "(none)"))
}

// TestDevicesEmulated lists the real emulated devices through the driver
// boundary (no fakes): they are always there.
func TestDevicesEmulated(t *testing.T) {
	d := hostDeps()
	d.gpus = fakeGPUs{err: errors.New("no GPU in this test")}
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, run([]string{"devices", "--json"}, d, &out, &errOut), errOut.String())
	var l deviceList
	require.NoError(t, json.Unmarshal(out.Bytes(), &l))
	var emu []rdmaDevice
	for _, r := range l.RDMA {
		if r.Driver == "emu" {
			emu = append(emu, r)
		}
	}
	require.NotEmpty(t, emu, "emulated devices are listed: %s", out.String())
	assert.Equal(t, "emu0", emu[0].Name)
	assert.Empty(t, emu[0].Error)
	require.NotEmpty(t, emu[0].Ports)
	p := emu[0].Ports[0]
	assert.Equal(t, "ACTIVE", p.State)
	assert.Equal(t, "Ethernet", p.LinkLayer)
	assert.Equal(t, 4096, p.ActiveMTU)
	assert.Equal(t, 4096, p.MaxMTU)
	assert.NotEmpty(t, emu[0].FWVersion)
	require.NotEmpty(t, p.GIDs)
	// The emulated GIDs are IPv4-mapped: printed with their ::ffff: prefix.
	assert.Regexp(t, `^::ffff:\d+\.\d+\.\d+\.\d+$`, p.GIDs[0].GID)
	assert.Equal(t, "RoCE v2", p.GIDs[0].Type)
}
