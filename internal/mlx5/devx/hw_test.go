//go:build cgo

package devx

import (
	"errors"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// openFirst opens the first mlx5 device, or skips the test where there is
// none (CI, containers): these paths need a real ConnectX.
func openFirst(t *testing.T) mlx5.Device {
	t.Helper()
	devs, err := Provider{}.Devices()
	require.NoError(t, err)
	if len(devs) == 0 {
		t.Skip("no mlx5 device: this test needs a ConnectX NIC with DevX (rdma-core loads, but ibv_get_device_list lists no mlx5 device)")
	}
	d, err := Provider{}.Open(devs[0].Name)
	require.NoError(t, err, "open %s", devs[0].Name)
	t.Cleanup(func() { assert.NoError(t, d.Close()) })
	return d
}

// queryHCACap builds QUERY_HCA_CAP by hand:
// opcode 0x100, op_mod = cap_type<<1 | current.
func queryHCACap(capType uint64, current bool) (in, out []byte) {
	in = make([]byte, 16)
	mlx5.Set(in, mlx5.F(0x00, 16), uint64(mlx5.OpQueryHCACap))
	opMod := capType << 1
	if current {
		opMod |= 1
	}
	mlx5.Set(in, mlx5.F(0x30, 16), opMod)
	return in, make([]byte, 16+4096)
}

func TestHardwareBringUp(t *testing.T) {
	d := openFirst(t)
	assert.Equal(t, Name, d.Driver())

	attr, err := d.QueryDevice()
	require.NoError(t, err)
	assert.NotEmpty(t, attr.FWVersion)
	assert.NotZero(t, attr.PhysPortCnt)
	port, err := d.QueryPort(1)
	require.NoError(t, err)
	assert.NotZero(t, port.GIDTblLen)
	if g, err := d.QueryGID(1, 0); err == nil {
		assert.Equal(t, uint32(0), g.Index)
		assert.Equal(t, uint32(1), g.Port)
	} else {
		assert.ErrorIs(t, err, syscall.ENODATA, "an empty GID slot is ENODATA")
	}

	// General device capabilities: the device reports at least one port
	// and the log of its QP count, as ibv_query_device does.
	in, out := queryHCACap(0, true)
	require.NoError(t, d.GeneralCmd(in, out))
	caps := out[16:]
	assert.Equal(t, uint32(attr.PhysPortCnt), mlx5.Get32(caps, mlx5.F(0x1b8, 8)), "num_ports")
	assert.NotZero(t, mlx5.Get32(caps, mlx5.F(0x09b, 5)), "log_max_qp")

	// A capability type no device has is refused by firmware: the error
	// carries the opcode, status and syndrome.
	in, out = queryHCACap(0x7f, true)
	err = d.GeneralCmd(in, out)
	require.Error(t, err)
	if ce, ok := mlx5.AsCmdError(err); ok && ce.Status != mlx5.StatusOK {
		assert.Equal(t, mlx5.OpQueryHCACap, ce.Opcode)
		assert.ErrorIs(t, err, syscall.EREMOTEIO)
	}

	pd, err := d.AllocPD()
	require.NoError(t, err)
	assert.LessOrEqual(t, pd.PDN(), uint32(1<<24-1))
	assert.NotZero(t, pd.Native())

	// Close refuses while the PD lives.
	assert.ErrorIs(t, d.Close(), syscall.EBUSY)

	mem := mmapPages(t, 2)
	um, err := d.RegUMEM(mem, 2*4096, mlx5.AccessLocalWrite)
	require.NoError(t, err)
	assert.Equal(t, mem, um.Addr())
	mr, err := d.RegMR(pd, mem, 2*4096, uint64(mem), mlx5.AccessLocalWrite|mlx5.AccessRemoteWrite)
	require.NoError(t, err)
	assert.NotZero(t, mr.LKey())
	assert.ErrorIs(t, pd.Dealloc(), syscall.EBUSY, "a PD with an MR refuses")

	for _, ty := range []mlx5.UARType{mlx5.UARTypeNC, mlx5.UARTypeBF, mlx5.UARTypeNCDedicated} {
		u, err := d.AllocUAR(ty)
		if ty == mlx5.UARTypeNCDedicated && errors.Is(err, syscall.EOPNOTSUPP) {
			t.Logf("NC_DEDICATED: %v", err)
			continue
		}
		require.NoError(t, err, ty.String())
		assert.Equal(t, u.BaseAddr()+mlx5.UAROffsetBF, u.RegAddr(), ty.String())
		assert.True(t, u.IOMemory())
		releaseTwice(t, u.Free)
	}

	_, err = d.QueryEQN(0)
	assert.NoError(t, err)

	// A DevX object: ALLOC_PD (opcode 0x800) returns the pd at bit 0x48;
	// destroying it runs DEALLOC_PD.
	in = make([]byte, 16)
	mlx5.Set(in, mlx5.F(0, 16), uint64(mlx5.OpAllocPD))
	out = make([]byte, 16)
	o, err := d.CreateObj(in, out)
	require.NoError(t, err)
	assert.Equal(t, mlx5.Get32(out, mlx5.F(0x48, 24)), o.ID())
	releaseTwice(t, o.Destroy, mr.Dereg, um.Dereg, pd.Dealloc)
}

// TestHardwareEventChannel: on a ConnectX, a DevX event channel opens with
// a nonblocking fd, takes a subscription to the device's unaffiliated
// events, has nothing pending, and closes. (Events themselves are
// exercised through package verbs on the emulator; on hardware they need
// a CQ armed and completing, which no test here does yet.)
func TestHardwareEventChannel(t *testing.T) {
	d := openFirst(t)
	ch, err := d.CreateEventChannel()
	if errors.Is(err, syscall.ENOTSUP) {
		t.Skipf("no DevX event channel: %v", err)
	}
	require.NoError(t, err)
	nb, err := isNonblocking(ch.FD())
	require.NoError(t, err)
	assert.True(t, nb)
	require.NoError(t, ch.Subscribe(nil, []mlx5.EventType{mlx5.EventPortChange}, 0))
	_, err = ch.GetEvent()
	assert.ErrorIs(t, err, syscall.EAGAIN)
	releaseTwice(t, ch.Close)
}
