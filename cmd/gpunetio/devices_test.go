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

	"github.com/gdaki/gpunetio/internal/doctor"
	"github.com/gdaki/gpunetio/internal/mlx5"
)

// fakeDevice answers the queries devices makes; any other method panics
// through the nil embedded interface, which the test would report.
type fakeDevice struct {
	mlx5.Device
	name   string
	ports  []mlx5.PortAttr
	gids   map[uint32]mlx5.GIDEntry
	closed *int
}

func (f fakeDevice) QueryDevice() (mlx5.DeviceAttr, error) {
	return mlx5.DeviceAttr{FWVersion: "28.39.1002", PhysPortCnt: uint8(len(f.ports))}, nil
}

func (f fakeDevice) QueryPort(p uint8) (mlx5.PortAttr, error) { return f.ports[p-1], nil }

func (f fakeDevice) QueryGID(p uint8, i uint32) (mlx5.GIDEntry, error) {
	g, ok := f.gids[i]
	if !ok {
		return mlx5.GIDEntry{}, errors.New("empty")
	}
	return g, nil
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
		name: "mlx5_0",
		ports: []mlx5.PortAttr{{State: mlx5.PortActive, ActiveMTU: 5, MaxMTU: 5, GIDTblLen: 4, LinkLayer: mlx5.LinkLayerEthernet},
			{State: mlx5.PortDown, ActiveMTU: 3, MaxMTU: 5, GIDTblLen: 0, LinkLayer: mlx5.LinkLayerInfiniBand, LID: 7}},
		gids: map[uint32]mlx5.GIDEntry{
			0: {GID: ll, Type: mlx5.GIDTypeRoCEv1},
			1: {GID: ll, Type: mlx5.GIDTypeRoCEv2},
			2: {}, // an empty slot is not listed
			3: {GID: v4, Type: mlx5.GIDTypeRoCEv2},
		},
		closed: &closed,
	}
	d := deps{
		listRDMA: func() ([]mlx5.DeviceInfo, error) {
			return []mlx5.DeviceInfo{{Name: "mlx5_0", Driver: "devx", NodeGUID: 0xb83fd20300000001}, {Name: "mlx5_1", Driver: "devx"}}, nil
		},
		openRDMA: func(name string) (mlx5.Device, error) {
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
		listRDMA: func() ([]mlx5.DeviceInfo, error) { return nil, errors.New("devx: libibverbs.so.1 not found") },
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
	assert.NotEmpty(t, emu[0].Ports[0].State)
	assert.NotZero(t, emu[0].Ports[0].ActiveMTU)
	assert.Contains(t, emulatedNames(d.listRDMA), "emu0")
}
