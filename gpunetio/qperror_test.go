package gpunetio

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/verbs"
)

// devRecord views the error record of a device QP in host memory (host GPU).
func devRecord(dev DevPtr) []byte {
	return hostSlice(uintptr(dev)+uintptr(devstruct.OffsetQPError), uintptr(devstruct.QPErrorSize))
}

// LastError reads what device code recorded in the device QP (here written
// by hand where a kernel would): syndromes, WQE index and counter, by name.
func TestLastErrorReadsDeviceRecord(t *testing.T) {
	_, q := hostPair(t, QPHLConfig{SQWQEs: 8, NICHandler: NICHandlerGPUSMDB})
	info, err := q.LastError()
	require.NoError(t, err)
	assert.False(t, info.HasError)
	assert.Equal(t, QPErrorNone, info.Kind, "no device copy: no record")
	assert.Equal(t, verbs.QPStateRTS, info.State)

	dev, err := q.DeviceQP()
	require.NoError(t, err)
	info, err = q.LastError()
	require.NoError(t, err)
	assert.False(t, info.HasError, "a fresh device QP has an empty record")

	rec := devstruct.QPError{Status: devstruct.QPErrCQE, Syndrome: 0x15, VendorSyndrome: 0x81, HWSyndrome: 1, HWSyndromeType: 2,
		CQEOpcode: 13, WQEOpcode: 0x08, WQECounter: 0x0003, WQEIndex: 0x30003}
	rec.Put(devRecord(dev))
	info, err = q.LastError()
	require.NoError(t, err)
	assert.Equal(t, QPErrorInfo{HasError: true, Syndrome: 0x15, VendorErrSynd: 0x81, HWErrSynd: 1, HWSyndType: 2, WQECounter: 3,
		State: verbs.QPStateRTS, Kind: QPErrorCQE, Status: verbs.WCRetryExcErr, CQEOpcode: 13, WQEOpcode: 8, WQEIndex: 0x30003}, info)
	assert.Contains(t, info.String(), "IBV_WC_RETRY_EXC_ERR")
	assert.Contains(t, info.String(), "WQE 196611")

	// ResetTrackingAndMemory clears it.
	require.NoError(t, q.ResetTrackingAndMemory())
	info, err = q.LastError()
	require.NoError(t, err)
	assert.False(t, info.HasError)
	assert.Equal(t, "no error (QP RTS)", info.String())
}

// A corrupt record is an error naming the operation; a record that stays
// busy (a writer that never finishes) is a timeout, not a hang.
func TestLastErrorBadRecords(t *testing.T) {
	_, q := hostPair(t, QPHLConfig{SQWQEs: 8, NICHandler: NICHandlerGPUSMDB})
	dev, err := q.DeviceQP()
	require.NoError(t, err)
	b := devRecord(dev)

	binary.LittleEndian.PutUint32(b, 7)
	_, err = q.LastError()
	assert.ErrorIs(t, err, ErrUnexpected)
	assert.ErrorContains(t, err, "doca_gpu_verbs_query_last_error")
	assert.ErrorContains(t, err, "unknown status")

	binary.LittleEndian.PutUint32(b, 0x80000000)
	_, err = q.LastError()
	assert.ErrorIs(t, err, ErrTimeOut)
	assert.ErrorContains(t, err, "busy")
	clear(b)

	var nilQP *QP
	_, err = nilQP.LastError()
	assert.ErrorIs(t, err, ErrInvalidValue)
}

// SetPollTimeout keeps the bound in the template and in the device copy, in
// whichever order they are made; it refuses nil and unexported QPs.
func TestSetPollTimeout(t *testing.T) {
	p, q := hostPair(t, QPHLConfig{SQWQEs: 8, NICHandler: NICHandlerCPUProxy})
	g := p.g
	assert.Zero(t, q.PollTimeout())
	require.NoError(t, q.SetPollTimeout(1234))
	assert.Equal(t, uint64(1234), q.PollTimeout())
	dev, err := q.DeviceQP()
	require.NoError(t, err)
	img, err := devstruct.DecodeQP(hostSlice(uintptr(dev), uintptr(devstruct.QPSize)))
	require.NoError(t, err)
	assert.Equal(t, uint64(1234), img.PollTimeout, "the device copy carries the bound")
	assert.Equal(t, devstruct.CQFlagInQP, img.CQ.Flags, "the export marks the CQ as the QP's own")

	require.NoError(t, q.SetPollTimeout(99))
	img, err = devstruct.DecodeQP(hostSlice(uintptr(dev), uintptr(devstruct.QPSize)))
	require.NoError(t, err)
	assert.Equal(t, uint64(99), img.PollTimeout, "rewritten in place")

	var nilQP *QP
	assert.ErrorIs(t, nilQP.SetPollTimeout(1), ErrInvalidValue)
	other := newHLPair(t, g, QPHLConfig{SQWQEs: 8, NICHandler: NICHandlerGPUSMDB})
	exp, err := g.ExportQP(other.hl.QP(), other.hl.CQ(), nil, ExportConfig{NICHandler: NICHandlerGPUSMDB})
	require.NoError(t, err)
	require.NoError(t, exp.Close())
	assert.ErrorIs(t, exp.SetPollTimeout(1), ErrBadState)
}

func TestQPErrorKindString(t *testing.T) {
	assert.Equal(t, []string{"none", "error CQE", "poll timeout", "QPErrorKind(9)"},
		[]string{QPErrorNone.String(), QPErrorCQE.String(), QPErrorTimeout.String(), QPErrorKind(9).String()})
	assert.Contains(t, QPErrorInfo{HasError: true, State: verbs.QPStateERR}.String(), "nothing recorded")
	assert.Contains(t, QPErrorInfo{HasError: true, Kind: QPErrorTimeout, WQEIndex: 4}.String(), "WQE 4 ran past")
}
