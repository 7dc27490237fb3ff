package verbs

import (
	"errors"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu"
)

// Port state, link layer and GID type are verbs types with the ibverbs
// values and readable names.
func TestPortAndGIDTypes(t *testing.T) {
	ctx, err := OpenDevice("emu0")
	require.NoError(t, err)
	defer ctx.Close()
	p, err := ctx.QueryPort(1)
	require.NoError(t, err)
	assert.Equal(t, PortActive, p.State)
	assert.Equal(t, LinkLayerEthernet, p.LinkLayer)
	g, err := ctx.QueryGID(1, 0)
	require.NoError(t, err)
	assert.Equal(t, GIDTypeRoCEv2, g.Type)

	for v, want := range map[PortState]string{0: "NOP", 1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER", 6: "PortState(6)"} {
		assert.Equal(t, want, v.String())
	}
	for v, want := range map[LinkLayer]string{0: "Unspecified", 1: "InfiniBand", 2: "Ethernet", 3: "LinkLayer(3)"} {
		assert.Equal(t, want, v.String())
	}
	for v, want := range map[GIDType]string{0: "IB", 1: "RoCE v1", 2: "RoCE v2", 3: "GIDType(3)"} {
		assert.Equal(t, want, v.String())
	}
}

// A command the device refuses reaches the user as a *FirmwareError, never
// as the driver's internal type.
func TestFirmwareErrorFromDevice(t *testing.T) {
	o := defaultPairOpts()
	a := newEnd(t, "emu0", o)
	require.NoError(t, a.qp.Modify(&QPAttr{NextState: QPStateINIT, PortNum: 1},
		QPAttrNextState|QPAttrPKeyIndex|QPAttrPortNum|QPAttrAllowRemoteWrite|QPAttrAllowRemoteRead))
	err := a.qp.Modify(&QPAttr{NextState: QPStateRTR, PathMTU: MTU1024, DestQPNum: 5,
		AH: &AHAttr{GID: GID{0xfe, 0x80, 15: 1}}}, // not IPv4-mapped: the emulated firmware refuses it
		QPAttrNextState|QPAttrPathMTU|QPAttrRQPSN|QPAttrDestQPNum|QPAttrAHAttr|QPAttrMinRNRTimer)
	require.Error(t, err)
	var fe *FirmwareError
	require.True(t, errors.As(err, &fe), "%v", err)
	assert.Equal(t, &FirmwareError{Call: fe.Call, Command: "INIT2RTR_QP", Opcode: uint16(mlx5.OpINIT2RTR),
		Status: FirmwareStatusBadParam, Syndrome: emu.SynQPRemoteGID, Errno: syscall.EREMOTEIO}, fe)
	assert.NotEmpty(t, fe.Call)
	assert.Equal(t, "BAD_PARAM", fe.Status.String())
	assert.ErrorIs(t, err, ErrDriver, "the DOCA code still matches")
	assert.ErrorIs(t, err, syscall.EREMOTEIO)
	assert.ErrorIs(t, err, syscall.EINVAL, "the errno rdma-core maps BAD_PARAM to")
	assert.NotErrorIs(t, err, syscall.EBUSY)
	var internal *mlx5.CmdError
	assert.False(t, errors.As(err, &internal), "the internal command error is not in the chain")
	assert.Contains(t, err.Error(), "INIT2RTR_QP (op_mod 0x0): firmware status BAD_PARAM (0x03), syndrome 0x0e000039")
}

func TestFirmwareErrorConversion(t *testing.T) {
	// Refused by the kernel before firmware saw it.
	kernel := &mlx5.CmdError{Op: "devx_obj_create", Opcode: uint16(mlx5.OpCreateQP), Errno: syscall.EPERM}
	err := wrapErr("op", ErrDriver, kernel, "x")
	var fe *FirmwareError
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, FirmwareStatusOK, fe.Status)
	assert.Equal(t, "CREATE_QP", fe.Command)
	assert.ErrorIs(t, err, syscall.EPERM)
	assert.NotErrorIs(t, err, syscall.EINVAL)
	assert.Contains(t, err.Error(), "devx_obj_create CREATE_QP (op_mod 0x0): operation not permitted")

	// Firmware statuses keep their names and errnos.
	for s, name := range map[FirmwareStatus]string{FirmwareStatusResBusy: "RES_BUSY", FirmwareStatusLimErr: "LIM_ERR",
		FirmwareStatusBadQPState: "BAD_QP_STATE", FirmwareStatus(0x77): "STATUS_0x77"} {
		assert.Equal(t, name, s.String())
	}
	busy := driverErr("op", &mlx5.CmdError{Op: "devx_obj_destroy", Opcode: uint16(mlx5.OpDestroyCQ),
		Status: mlx5.StatusResBusy, Syndrome: 1, Errno: syscall.EREMOTEIO}, "x")
	assert.ErrorIs(t, busy, syscall.EBUSY)
	assert.ErrorIs(t, busy, ErrDriver)

	// Other causes pass through unchanged.
	assert.Equal(t, syscall.ENOMEM, wrapErr("op", ErrNoMemory, syscall.ENOMEM, "x").Err)
}

// Error completions become *CompletionError; success is nil.
func TestCompletionError(t *testing.T) {
	a, b := newPair(t, defaultPairOpts())
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 1, Opcode: WRRDMAWrite, Signaled: true, InlineData: []byte("ok"),
		RemoteAddr: b.addr(0), RKey: b.mr.RKey()}))
	require.NoError(t, waitWC(t, a.cq, 1)[0].Err())

	require.NoError(t, a.qp.PostSend(
		SendWR{WRID: 7, Opcode: WRRDMAWrite, SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(0), RKey: b.mr.RKey() ^ 0x100},
		SendWR{WRID: 8, Opcode: WRNop, Signaled: true}))
	wcs := waitWC(t, a.cq, 2)
	err := wcs[0].Err()
	var ce *CompletionError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, CompletionError{QPN: a.qp.QPN(), WRID: 7, Opcode: WCRDMAWrite, Status: WCRemAccessErr,
		VendorErr: wcs[0].VendorErr, WQECounter: wcs[0].WQECounter, Cause: CauseKey}, *ce)
	assert.ErrorIs(t, err, WCRemAccessErr)
	assert.NotErrorIs(t, err, WCWRFlushErr)
	assert.Contains(t, err.Error(), "IBV_WC_REM_ACCESS_ERR (syndrome 0x13)")
	assert.ErrorIs(t, wcs[1].Err(), WCWRFlushErr, "the WQE after the error is flushed")
}
