package verbs

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInteropOnEmulatedDevice: every IB Verbs interop call on an emulated
// device fails with ErrNotRDMACoreDevice (code ErrNotSupported), naming the
// SDK call and the device, and leaves nothing open.
func TestInteropOnEmulatedDevice(t *testing.T) {
	c, pd := openPD(t, "emu0")
	var dummy [64]byte
	ptr := unsafe.Pointer(&dummy[0])
	calls := []struct {
		op  string
		err func() error
	}{
		{"doca_verbs_bridge_get_ibv_ctx", func() error { _, err := c.IBVContext(); return err }},
		{"doca_verbs_context_export_handle", func() error { _, err := c.ExportHandle(); return err }},
		{"doca_verbs_bridge_verbs_pd_import", func() error { _, err := c.ImportIBVPD(ptr); return err }},
		{"doca_verbs_pd_import_from_handle", func() error { _, err := c.ImportPDHandle(3); return err }},
		{"doca_verbs_bridge_verbs_pd_get_ibv_pd", func() error { _, err := pd.IBVPD(); return err }},
		{"doca_verbs_pd_export_handle", func() error { _, err := pd.ExportHandle(); return err }},
	}
	for _, call := range calls {
		err := call.err()
		require.Error(t, err, call.op)
		assert.True(t, errors.Is(err, ErrNotRDMACoreDevice), "%s: %v", call.op, err)
		assert.ErrorIs(t, err, ErrNotSupported, call.op)
		assert.ErrorContains(t, err, call.op)
		assert.ErrorContains(t, err, "not an rdma-core device")
	}
	assert.Contains(t, calls[0].err().Error(), "device emu0 (driver emu)")
	h, err := c.ExportHandle()
	assert.Equal(t, -1, h)
	assert.Error(t, err)
	assert.Equal(t, 1, LiveObjects()["PD"], "no PD was made by the refused imports")
}

// TestInteropMisuse: nil pointers, negative handles and closed objects are
// refused by name before any driver sees them.
func TestInteropMisuse(t *testing.T) {
	_, err := OpenIBVDevice(nil)
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorContains(t, err, "doca_verbs_bridge_verbs_context_create")
	_, err = ImportIBVContext(nil)
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorContains(t, err, "nil ibv_context")
	_, err = ImportContextHandle(-1)
	assert.ErrorIs(t, err, ErrInvalidValue)

	c, pd := openPD(t, "emu0")
	_, err = c.ImportIBVPD(nil)
	assert.ErrorIs(t, err, ErrInvalidValue)
	require.NoError(t, pd.Close())
	_, err = pd.IBVPD()
	assert.ErrorIs(t, err, ErrBadState)
	_, err = pd.ExportHandle()
	assert.ErrorIs(t, err, ErrBadState)
	require.NoError(t, c.Close())
	_, err = c.IBVContext()
	assert.ErrorIs(t, err, ErrBadState)
	_, err = c.ImportPDHandle(1)
	assert.ErrorIs(t, err, ErrBadState)
	var nc *Context
	_, err = nc.ExportHandle()
	assert.ErrorIs(t, err, ErrInvalidValue)
	var np *PD
	_, err = np.IBVPD()
	assert.ErrorIs(t, err, ErrInvalidValue)
}
