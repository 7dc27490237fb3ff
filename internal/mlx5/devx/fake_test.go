//go:build cgo

package devx

import (
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/devx/fakeverbs"
)

// withFakes puts fakeverbs' doubles in place of every rdma-core entry point
// for the rest of the test: the shims, the Go wrappers and their error
// mapping run for real against a fake that records what it was given.
func withFakes(t *testing.T) {
	t.Helper()
	_ = load() // bind once; the fakes do not need rdma-core
	saved := make([]unsafe.Pointer, symCount)
	for i := 0; i < symCount; i++ {
		fn := fakeverbs.Fn(symInfo(i).name)
		require.NotNil(t, fn, "a fake of %s", symInfo(i).name)
		saved[i] = swapSymbol(i, fn)
	}
	savedErr := loadErr
	loadErr = nil
	fakeverbs.Reset()
	t.Cleanup(func() {
		for i, fn := range saved {
			swapSymbol(i, fn)
		}
		loadErr = savedErr
	})
}

func openFake(t *testing.T, name string) *device {
	t.Helper()
	d, err := Provider{}.Open(name)
	require.NoError(t, err)
	return d.(*device)
}

func TestFakeDevices(t *testing.T) {
	withFakes(t)
	devs, err := Provider{}.Devices()
	require.NoError(t, err)
	assert.Equal(t, []mlx5.DeviceInfo{
		{Name: "mlx5_0", Driver: "devx", NodeGUID: 0x0002c90300a1b200, Sysfs: "/sys/class/infiniband/mlx5_0"},
		{Name: "mlx5_1", Driver: "devx", NodeGUID: 0x0002c90300a1b201, Sysfs: "/sys/class/infiniband/mlx5_1"},
	}, devs, "rxe0 is not served by mlx5 and is left out; GUIDs are host-order numbers")

	fakeverbs.FailCall("ibv_get_device_list", syscall.EIO)
	_, err = Provider{}.Devices()
	assert.ErrorIs(t, err, syscall.EIO)
	assert.Contains(t, err.Error(), "ibv_get_device_list")

	fakeverbs.FailCall("ibv_get_device_list", syscall.ENOSYS) // no uverbs in the kernel
	devs, err = Provider{}.Devices()
	assert.NoError(t, err)
	assert.Empty(t, devs)
}

func TestFakeOpen(t *testing.T) {
	withFakes(t)
	_, err := Provider{}.Open("mlx5_7")
	assert.ErrorIs(t, err, mlx5.ErrNoDevice)
	assert.ErrorIs(t, err, syscall.ENODEV)
	assert.Contains(t, err.Error(), `no mlx5 device "mlx5_7" (mlx5 devices present: mlx5_0, mlx5_1)`)

	_, err = Provider{}.Open("rxe0")
	assert.ErrorIs(t, err, mlx5.ErrNoDevice)
	assert.Contains(t, err.Error(), `"rxe0" is not an mlx5 device`)

	d := openFake(t, "mlx5_1")
	rec := fakeverbs.Get()
	assert.Equal(t, 1, rec.Opens)
	assert.Equal(t, uint32(1), rec.OpenFlags, "MLX5DV_CONTEXT_FLAGS_DEVX")
	assert.Zero(t, rec.OpenCompMask)
	assert.Equal(t, "mlx5_1", d.Name())
	assert.Equal(t, "devx", d.Driver())
	releaseTwice(t, d.Close)
	assert.Equal(t, 1, fakeverbs.Get().Closes, "the second Close does not reach rdma-core")
}

func TestFakeOpenRefused(t *testing.T) {
	tests := []struct {
		errno   syscall.Errno
		mention string
	}{
		{syscall.EOPNOTSUPP, "does not offer DevX user contexts"},
		{syscall.EPROTONOSUPPORT, "log_max_uctx"},
		{syscall.EPERM, "permission denied"},
		{syscall.EACCES, "/dev/infiniband/uverbs"},
		{syscall.ENOMEM, "open mlx5_0 with a DevX context"},
	}
	for _, tt := range tests {
		t.Run(ErrnoString(tt.errno), func(t *testing.T) {
			withFakes(t)
			fakeverbs.FailCall("mlx5dv_open_device", tt.errno)
			_, err := Provider{}.Open("mlx5_0")
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.errno)
			assert.Contains(t, err.Error(), "mlx5dv_open_device")
			assert.Contains(t, err.Error(), tt.mention)
			assert.Zero(t, fakeverbs.Get().Opens)
		})
	}
}

func TestFakeQueries(t *testing.T) {
	for _, extended := range []bool{false, true} {
		t.Run(map[bool]string{false: "legacy context", true: "extended context"}[extended], func(t *testing.T) {
			withFakes(t)
			fakeverbs.SetExtended(extended)
			d := openFake(t, "mlx5_0")
			defer func() { require.NoError(t, d.Close()) }()

			attr, err := d.QueryDevice()
			require.NoError(t, err)
			assert.Equal(t, mlx5.DeviceAttr{
				FWVersion: "16.35.1012", NodeGUID: 0x0002c90300a1b200, VendorID: 0x02c9, VendorPartID: 4125,
				MaxMRSize: 1 << 40, MaxQP: 1 << 17, MaxQPWR: 32768, MaxCQE: 1 << 22, MaxPD: 1 << 24,
				MaxQPRDAtom: 16, MaxQPInitRDAtom: 16, AtomicCap: 1, PhysPortCnt: 1,
			}, attr)

			port, err := d.QueryPort(1)
			require.NoError(t, err)
			assert.Equal(t, mlx5.PortAttr{
				State: mlx5.PortActive, MaxMTU: 5, ActiveMTU: 3, GIDTblLen: 255, LID: 0x12, SMLID: 1,
				LinkLayer: mlx5.LinkLayerEthernet, ActiveSpeed: 64, ActiveWidth: 2,
			}, port)
			rec := fakeverbs.Get()
			assert.Equal(t, uint8(1), rec.Port)
			if extended {
				assert.NotZero(t, rec.PortAttrSize, "the provider's query_port op gets the struct size")
			} else {
				assert.Zero(t, rec.PortAttrSize, "without the op the exported compat symbol is called")
			}

			g, err := d.QueryGID(1, 3)
			require.NoError(t, err)
			want := mlx5.GID{0xfe, 0x80}
			want[15] = 3
			assert.Equal(t, mlx5.GIDEntry{GID: want, Index: 3, Port: 1, Type: mlx5.GIDTypeRoCEv2, NetdevIndex: 7}, g)
			rec = fakeverbs.Get()
			assert.Equal(t, uint64(32), rec.GIDEntrySize, "sizeof(struct ibv_gid_entry)")
			assert.Zero(t, rec.GIDFlags)

			fakeverbs.FailNext(syscall.ENODATA)
			_, err = d.QueryGID(1, 9)
			assert.ErrorIs(t, err, syscall.ENODATA)
			assert.Contains(t, err.Error(), "ibv_query_gid_ex: device mlx5_0 port 1 GID index 9")

			fakeverbs.FailNext(syscall.EINVAL)
			_, err = d.QueryPort(2)
			assert.ErrorIs(t, err, syscall.EINVAL)
			assert.Contains(t, err.Error(), "port 2")

			eqn, err := d.QueryEQN(2)
			require.NoError(t, err)
			assert.Equal(t, uint32(12), eqn)
			assert.Equal(t, uint32(2), fakeverbs.Get().EQNVector)
		})
	}
}

func TestFakeMemory(t *testing.T) {
	withFakes(t)
	d := openFake(t, "mlx5_0")
	lw := mlx5.AccessLocalWrite

	pd, err := d.AllocPD()
	require.NoError(t, err)
	assert.Equal(t, uint32(0x1a2b3c), pd.PDN())
	assert.Equal(t, uint64(1<<6), fakeverbs.Get().ObjType, "MLX5DV_OBJ_PD")
	require.NotZero(t, pd.Native())

	mr, err := d.RegMR(pd, 0x10000, 8192, 0x5000, lw|mlx5.AccessRemoteWrite)
	require.NoError(t, err)
	rec := fakeverbs.Get()
	assert.Equal(t, pd.Native(), rec.MRPD)
	assert.Equal(t, uintptr(0x10000), rec.MRAddr)
	assert.Equal(t, uint64(8192), rec.MRLength)
	assert.Equal(t, uint64(0x5000), rec.MRIOVA)
	assert.Equal(t, uint32(lw|mlx5.AccessRemoteWrite), rec.MRAccess)
	assert.Equal(t, []any{uint32(0x1234), uint32(0x5678), uintptr(0x10000), uint64(0x5000), uint64(8192)},
		[]any{mr.LKey(), mr.RKey(), mr.Addr(), mr.IOVA(), mr.Len()})

	dm, err := d.RegDmabufMR(pd, 9, 0x1000, 0x2000, 0x7000, 0xdead000, lw)
	require.NoError(t, err)
	rec = fakeverbs.Get()
	assert.Equal(t, []any{uint64(0x1000), uint64(0x2000), uint64(0x7000), 9, 1},
		[]any{rec.DmabufOffset, rec.DmabufLength, rec.DmabufIOVA, rec.DmabufFD, rec.DmabufAccess})
	assert.Equal(t, uintptr(0xdead000), dm.Addr())
	assert.Equal(t, uint32(0x4321), dm.LKey())

	um, err := d.RegUMEM(0x20000, 4096, lw)
	require.NoError(t, err)
	rec = fakeverbs.Get()
	assert.Equal(t, []any{uintptr(0x20000), uint64(4096), uint32(1)}, []any{rec.UMEMAddr, rec.UMEMSize, rec.UMEMAccess})
	assert.Equal(t, uint32(0x77), um.ID())

	du, err := d.RegDmabufUMEM(11, 0x3000, 0x10000, 0xbeef000, lw, 0)
	require.NoError(t, err)
	assert.Equal(t, fakeverbs.UMEMIn{Addr: 0x3000, Size: 0x10000, Access: 1, PgszBitmap: uint64(os.Getpagesize()), CompMask: 1, DmabufFD: 11},
		fakeverbs.Get().UMEMIn, "the dma-buf offset travels in addr, with MLX5DV_UMEM_MASK_DMABUF")
	assert.Equal(t, uint32(0x78), du.ID())
	assert.Equal(t, uintptr(0xbeef000), du.Addr())

	fakeverbs.FailNext(syscall.EOPNOTSUPP)
	_, err = d.RegDmabufUMEM(11, 0, 4096, 0, lw, 1<<21)
	assert.ErrorIs(t, err, syscall.EOPNOTSUPP)
	assert.Contains(t, err.Error(), "rdma-core v43")
	assert.Equal(t, uint64(1<<21), fakeverbs.Get().UMEMIn.PgszBitmap)

	fakeverbs.FailNext(syscall.EFAULT)
	_, err = d.RegMR(pd, 0x10000, 8192, 0x10000, lw)
	assert.ErrorIs(t, err, syscall.EFAULT)
	assert.Contains(t, err.Error(), "ibv_reg_mr_iova2: [0x10000, +0x2000) iova 0x10000 access 0x1 on mlx5_0")

	// Ordering: the device and the PD refuse while their children live.
	err = d.Close()
	assert.ErrorIs(t, err, syscall.EBUSY)
	assert.Contains(t, err.Error(), "1 PD, 2 MR, 2 UMEM")
	assert.ErrorIs(t, pd.Dealloc(), syscall.EBUSY)
	assert.Zero(t, fakeverbs.Get().PDFrees)

	// A failed release leaves the object alive, to be retried.
	fakeverbs.FailNext(syscall.EBUSY)
	assert.ErrorIs(t, um.Dereg(), syscall.EBUSY)
	releaseTwice(t, um.Dereg, du.Dereg, mr.Dereg, dm.Dereg)
	assert.Zero(t, mr.Native())
	releaseTwice(t, pd.Dealloc)
	assert.Zero(t, pd.Native())
	_, err = d.RegMR(pd, 0x10000, 1, 0, 0)
	assert.ErrorIs(t, err, syscall.EBADF)
	require.NoError(t, d.Close())

	rec = fakeverbs.Get()
	assert.Equal(t, []int{1, 1, 2, 2, 2, 2, 1}, []int{rec.PDs, rec.PDFrees, rec.MRs, rec.MRFrees, rec.UMEMs, rec.UMEMFrees, rec.Closes})
}

func TestFakeUAR(t *testing.T) {
	withFakes(t)
	d := openFake(t, "mlx5_0")
	for _, ty := range []mlx5.UARType{mlx5.UARTypeBF, mlx5.UARTypeNC, mlx5.UARTypeNCDedicated} {
		u, err := d.AllocUAR(ty)
		require.NoError(t, err)
		assert.Equal(t, uint32(ty), fakeverbs.Get().UARFlags)
		assert.Equal(t, ty, u.Type())
		assert.Equal(t, uint32(0x19), u.PageID())
		assert.Equal(t, uintptr(0x7f0000010000), u.BaseAddr())
		assert.Equal(t, u.BaseAddr()+mlx5.UAROffsetBF, u.RegAddr())
		assert.Equal(t, int64(0x3000), u.MmapOffset())
		assert.True(t, u.IOMemory())
		releaseTwice(t, u.Free)
	}
	assert.Equal(t, 3, fakeverbs.Get().UARFrees)

	fakeverbs.FailNext(syscall.EOPNOTSUPP)
	_, err := d.AllocUAR(mlx5.UARTypeNCDedicated)
	assert.ErrorIs(t, err, syscall.EOPNOTSUPP)
	assert.Contains(t, err.Error(), "NC_DEDICATED needs rdma-core v45")
	require.NoError(t, d.Close())
}

func TestFakeDevXCommands(t *testing.T) {
	withFakes(t)
	d := openFake(t, "mlx5_0")

	in := hdr(16, uint64(mlx5.OpCreateCQ), 0)
	in[12] = 0x5a
	out := make([]byte, 16)
	o, err := d.CreateObj(in, out)
	require.NoError(t, err)
	assert.Equal(t, uint32(0x4242), o.ID(), "read from bit 0x48 of the output")
	rec := fakeverbs.Get()
	assert.Equal(t, []uint64{16, 16}, []uint64{rec.InLen, rec.OutLen})
	assert.Equal(t, in, rec.In[:], "the input mailbox reaches rdma-core unchanged")

	// Firmware rejects: status and syndrome come back in a *mlx5.CmdError.
	fakeverbs.FirmwareFailNext(uint8(mlx5.StatusBadParam), 0xdeadbeef)
	_, err = d.CreateObj(hdr(16, uint64(mlx5.OpCreateQP), 0), make([]byte, 16))
	ce, ok := mlx5.AsCmdError(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, mlx5.CmdError{Op: "mlx5dv_devx_obj_create", Opcode: mlx5.OpCreateQP, Status: mlx5.StatusBadParam,
		Syndrome: 0xdeadbeef, Errno: syscall.EREMOTEIO}, *ce)
	assert.ErrorIs(t, err, syscall.EREMOTEIO)
	assert.ErrorIs(t, err, syscall.EINVAL)

	// The kernel rejects: errno only.
	fakeverbs.FailNext(syscall.EPERM)
	err = d.GeneralCmd(hdr(16, uint64(mlx5.OpQueryHCACap), 1), make([]byte, 4112))
	ce, ok = mlx5.AsCmdError(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, mlx5.CmdError{Op: "mlx5dv_devx_general_cmd", Opcode: mlx5.OpQueryHCACap, OpMod: 1, Errno: syscall.EPERM}, *ce)
	assert.Equal(t, uint64(4112), fakeverbs.Get().OutLen)

	require.NoError(t, d.GeneralCmd(hdr(16, uint64(mlx5.OpQueryHCACap), 1), make([]byte, 4112)))

	mod := hdr(24, uint64(mlx5.OpRST2INIT), 0)
	require.NoError(t, o.Modify(mod, make([]byte, 16)))
	rec = fakeverbs.Get()
	assert.Equal(t, mod[:16], rec.In[:])
	fakeverbs.FirmwareFailNext(uint8(mlx5.StatusBadResState), 0x1)
	err = o.Modify(hdr(24, uint64(mlx5.OpINIT2RTR), 0), make([]byte, 16))
	assert.ErrorIs(t, err, &mlx5.CmdError{Status: mlx5.StatusBadResState, Opcode: mlx5.OpINIT2RTR})
	assert.Contains(t, err.Error(), "mlx5dv_devx_obj_modify INIT2RTR")
	require.NoError(t, o.Query(hdr(16, uint64(mlx5.OpQueryCQ), 0), make([]byte, 64)))
	assert.Equal(t, uint64(64), fakeverbs.Get().OutLen)

	assert.ErrorIs(t, d.Close(), syscall.EBUSY)
	fakeverbs.FailNext(syscall.EBUSY)
	err = o.Destroy()
	assert.ErrorIs(t, err, syscall.EBUSY)
	assert.Contains(t, err.Error(), "object 0x4242 made by CREATE_CQ on mlx5_0")
	releaseTwice(t, o.Destroy)
	assert.ErrorIs(t, o.Query(hdr(16, uint64(mlx5.OpQueryCQ), 0), make([]byte, 64)), syscall.EBADF)
	require.NoError(t, d.Close())
	rec = fakeverbs.Get()
	assert.Equal(t, []int{1, 1}, []int{rec.Objs, rec.ObjFrees}, "the rejected create made no object")
}

func TestFakePDNumberFailure(t *testing.T) {
	withFakes(t)
	d := openFake(t, "mlx5_0")
	fakeverbs.FailCall("mlx5dv_init_obj", syscall.EINVAL)
	_, err := d.AllocPD()
	assert.ErrorIs(t, err, syscall.EINVAL)
	assert.Contains(t, err.Error(), "mlx5dv_init_obj: PD number of a new PD on mlx5_0")
	rec := fakeverbs.Get()
	assert.Equal(t, []int{1, 1}, []int{rec.PDs, rec.PDFrees}, "the PD is deallocated again")
	require.NoError(t, d.Close(), "nothing is left alive")
}

// BenchmarkFakeGeneralCmd measures what the driver adds to a DevX command
// (validation, the cgo call, the table indirection, status check) with a
// fake that returns at once.
func BenchmarkFakeGeneralCmd(b *testing.B) {
	_ = load()
	saved := make([]unsafe.Pointer, symCount)
	for i := 0; i < symCount; i++ {
		saved[i] = swapSymbol(i, fakeverbs.Fn(symInfo(i).name))
	}
	savedErr := loadErr
	loadErr = nil
	fakeverbs.Reset()
	defer func() {
		for i, fn := range saved {
			swapSymbol(i, fn)
		}
		loadErr = savedErr
	}()
	d, err := Provider{}.Open("mlx5_0")
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	in := hdr(16, uint64(mlx5.OpQueryHCACap), 1)
	out := make([]byte, 16)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := d.GeneralCmd(in, out); err != nil {
			b.Fatal(err)
		}
	}
}

// The DevX event channel: created with event data (flags 0), its fd put
// in nonblocking mode; Subscribe passes the object, the size of the event
// array in bytes, the types and the cookie; GetEvent reads nothing
// (EAGAIN) until an event is pending, then its cookie and EQE; a failed
// device's read (EIO) is reported once as INTERNAL_ERROR.
func TestFakeEventChannel(t *testing.T) {
	withFakes(t)
	d := openFake(t, "mlx5_0")
	ch, err := d.CreateEventChannel()
	require.NoError(t, err)
	assert.Equal(t, uint32(0), fakeverbs.Get().EventChannelFlags)
	fd := ch.FD()
	require.GreaterOrEqual(t, fd, 0)
	nb, err := isNonblocking(fd)
	require.NoError(t, err)
	assert.True(t, nb, "the channel's fd is nonblocking")

	o, err := d.CreateObj(hdr(16, uint64(mlx5.OpCreateCQ), 0), make([]byte, 16))
	require.NoError(t, err)
	require.NoError(t, ch.Subscribe(o, []mlx5.EventType{mlx5.EventComp, mlx5.EventCQError}, 0x1234))
	rec := fakeverbs.Get()
	assert.NotZero(t, rec.SubObj)
	assert.Equal(t, []uint64{4, 0, 0x1234}, []uint64{uint64(rec.SubEventsSize), uint64(rec.SubFirstEvent), rec.SubCookie})
	require.NoError(t, ch.Subscribe(nil, []mlx5.EventType{mlx5.EventPortChange}, 0))
	assert.Zero(t, fakeverbs.Get().SubObj, "unaffiliated events: no object")
	assert.ErrorIs(t, ch.Subscribe(o, nil, 1), syscall.EINVAL)
	fakeverbs.FailCall("mlx5dv_devx_subscribe_devx_event", syscall.EINVAL)
	assert.ErrorIs(t, ch.Subscribe(o, []mlx5.EventType{mlx5.EventComp}, 1), syscall.EINVAL)

	_, err = ch.GetEvent()
	assert.ErrorIs(t, err, syscall.EAGAIN)
	var img [64]byte
	e := mlx5.CompEQE(0x4242)
	require.NoError(t, e.Encode(img[:]))
	fakeverbs.PushEvent(0x1234, img)
	ev, err := ch.GetEvent()
	require.NoError(t, err)
	assert.Equal(t, mlx5.ChannelEvent{Cookie: 0x1234, EQE: e}, ev)
	_, err = ch.GetEvent()
	assert.ErrorIs(t, err, syscall.EAGAIN)

	fakeverbs.FailEventRead(syscall.EIO)
	ev, err = ch.GetEvent()
	require.NoError(t, err)
	assert.Equal(t, mlx5.EventInternalError, ev.EQE.Type)
	fakeverbs.FailEventRead(syscall.EIO)
	_, err = ch.GetEvent()
	assert.ErrorIs(t, err, syscall.EIO, "the failure is reported as an event once")

	require.NoError(t, o.Destroy())
	assert.ErrorIs(t, d.Close(), syscall.EBUSY, "the channel is open")
	releaseTwice(t, ch.Close)
	assert.Equal(t, -1, ch.FD())
	_, err = ch.GetEvent()
	assert.ErrorIs(t, err, syscall.EBADF)
	assert.ErrorIs(t, ch.Subscribe(nil, []mlx5.EventType{mlx5.EventPortChange}, 0), syscall.EBADF)
	require.NoError(t, d.Close())
	rec = fakeverbs.Get()
	assert.Equal(t, []int{1, 1}, []int{rec.Channels, rec.ChannelFrees})

	d = openFake(t, "mlx5_0")
	fakeverbs.FailCall("mlx5dv_devx_create_event_channel", syscall.ENOMEM)
	_, err = d.CreateEventChannel()
	assert.ErrorIs(t, err, syscall.ENOMEM)
	require.NoError(t, d.Close())
}

func isNonblocking(fd int) (bool, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 {
		return false, errno
	}
	return r&syscall.O_NONBLOCK != 0, nil
}
