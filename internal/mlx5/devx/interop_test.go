//go:build cgo

package devx

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/devx/fakeverbs"
)

// fakeIBVDevice returns the fake library's ibv_device called name.
func fakeIBVDevice(t *testing.T, name string) unsafe.Pointer {
	t.Helper()
	var p unsafe.Pointer
	require.NoError(t, withDeviceList(func(devs []*_Ctype_struct_ibv_device) error {
		for _, d := range devs {
			if deviceInfo(d).Name == name {
				p = unsafe.Pointer(d)
			}
		}
		return nil
	}))
	require.NotNil(t, p, "fake device %s", name)
	return p
}

// TestFakeOpenIBVDevice: a caller's ibv_device opens with a DevX context of
// this package's; a non-mlx5 one is refused.
func TestFakeOpenIBVDevice(t *testing.T) {
	withFakes(t)
	d, err := OpenIBVDevice(fakeIBVDevice(t, "mlx5_1"))
	require.NoError(t, err)
	assert.Equal(t, "mlx5_1", d.Name())
	rec := fakeverbs.Get()
	assert.Equal(t, 1, rec.Opens)
	assert.Equal(t, uint32(1), rec.OpenFlags, "MLX5DV_CONTEXT_FLAGS_DEVX")
	require.NoError(t, d.Close())
	assert.Equal(t, 1, fakeverbs.Get().Closes, "the context is this package's")

	_, err = OpenIBVDevice(fakeIBVDevice(t, "rxe0"))
	assert.ErrorIs(t, err, mlx5.ErrNoDevice)
	assert.ErrorContains(t, err, "rxe0 is not an mlx5 device")
	_, err = OpenIBVDevice(nil)
	assert.ErrorIs(t, err, syscall.EINVAL)

	fakeverbs.FailCall("mlx5dv_open_device", syscall.EPERM)
	_, err = OpenIBVDevice(fakeIBVDevice(t, "mlx5_0"))
	assert.ErrorIs(t, err, syscall.EPERM)
}

// TestFakeImportIBVContext: a caller's context is wrapped, not closed; its
// PDs are borrowed, not deallocated; a PD of another context is refused.
func TestFakeImportIBVContext(t *testing.T) {
	withFakes(t)
	own := openFake(t, "mlx5_0")
	ctx := own.IBVContext()
	require.NotNil(t, ctx)

	d, err := ImportIBVContext(ctx)
	require.NoError(t, err)
	assert.Equal(t, "mlx5_0", d.Name())
	r := d.(mlx5.RDMACore)
	assert.Equal(t, ctx, r.IBVContext())

	ownPD, err := own.AllocPD()
	require.NoError(t, err)
	ibvPD := ownPD.(mlx5.RDMACorePD).IBVPD()
	pd, err := r.BorrowPD(ibvPD)
	require.NoError(t, err)
	assert.Equal(t, uint32(0x1a2b3c), pd.PDN())
	assert.Equal(t, uint32(3), pd.(mlx5.RDMACorePD).Handle())
	assert.Equal(t, ibvPD, pd.(mlx5.RDMACorePD).IBVPD())
	require.NoError(t, pd.Dealloc())
	assert.Zero(t, fakeverbs.Get().PDFrees, "a borrowed PD stays allocated")
	assert.Nil(t, pd.(mlx5.RDMACorePD).IBVPD())
	require.NoError(t, d.Close())
	assert.Zero(t, fakeverbs.Get().Closes, "a borrowed context stays open")

	// A PD of another context.
	imp, err := ImportContext(9)
	require.NoError(t, err)
	_, err = imp.(mlx5.RDMACore).BorrowPD(ibvPD)
	assert.ErrorIs(t, err, syscall.EINVAL)
	assert.ErrorContains(t, err, "ibv_pd belongs to another ibv_context")
	_, err = imp.(mlx5.RDMACore).BorrowPD(nil)
	assert.ErrorIs(t, err, syscall.EINVAL)
	require.NoError(t, imp.Close())

	require.NoError(t, ownPD.Dealloc())
	assert.Equal(t, 1, fakeverbs.Get().PDFrees)
	require.NoError(t, own.Close())
	_, err = ImportIBVContext(nil)
	assert.ErrorIs(t, err, syscall.EINVAL)
}

// TestFakeImportByHandle: a context imported from its command descriptor and
// a PD from its handle; the PD is unimported, the context closed.
func TestFakeImportByHandle(t *testing.T) {
	withFakes(t)
	d, err := ImportContext(7)
	require.NoError(t, err)
	assert.Equal(t, 7, fakeverbs.Get().ImportFD)
	assert.Equal(t, "mlx5_0", d.Name())
	r := d.(mlx5.RDMACore)
	assert.Equal(t, 7, r.CmdFD())

	pd, err := r.ImportPD(42)
	require.NoError(t, err)
	rec := fakeverbs.Get()
	assert.Equal(t, 1, rec.PDImports)
	assert.Equal(t, uint32(42), rec.ImportPDHandle)
	assert.Equal(t, uint32(42), pd.(mlx5.RDMACorePD).Handle())
	assert.Equal(t, uint32(0x1a2b3c), pd.PDN())
	assert.Error(t, d.Close(), "the PD is alive")
	require.NoError(t, pd.Dealloc())
	rec = fakeverbs.Get()
	assert.Equal(t, 1, rec.PDUnimports)
	assert.Zero(t, rec.PDFrees, "an imported PD is unimported, not deallocated")
	require.NoError(t, d.Close())
	assert.Equal(t, 1, fakeverbs.Get().Closes)
	assert.Equal(t, -1, r.CmdFD())

	fakeverbs.FailCall("ibv_import_pd", syscall.ENOENT)
	d, err = ImportContext(8)
	require.NoError(t, err)
	_, err = d.(mlx5.RDMACore).ImportPD(5)
	assert.ErrorIs(t, err, syscall.ENOENT)
	assert.ErrorContains(t, err, "PD handle 5 on mlx5_0")
	require.NoError(t, d.Close())

	_, err = ImportContext(-1)
	assert.ErrorIs(t, err, syscall.EBADF)
	fakeverbs.FailCall("ibv_import_device", syscall.EINVAL)
	_, err = ImportContext(3)
	assert.ErrorIs(t, err, syscall.EINVAL)
	assert.ErrorContains(t, err, "ibv_import_device")
}

// An rdma-core older than v32 lacks the import calls: they fail naming the
// symbol and the release.
func TestFakeImportMissingSymbol(t *testing.T) {
	withFakes(t)
	old := swapSymbol(symImportDevice, nil)
	defer swapSymbol(symImportDevice, old)
	_, err := ImportContext(3)
	assert.ErrorIs(t, err, syscall.ENOTSUP)
	assert.ErrorContains(t, err, "ibv_import_device@IBVERBS_1.10 (added in rdma-core v32)")

	d := openFake(t, "mlx5_0")
	defer func() { require.NoError(t, d.Close()) }()
	oldPD := swapSymbol(symImportPD, nil)
	defer swapSymbol(symImportPD, oldPD)
	_, err = d.ImportPD(1)
	assert.ErrorIs(t, err, syscall.ENOTSUP)
	assert.ErrorContains(t, err, "ibv_import_pd")
}
