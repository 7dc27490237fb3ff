package gpunetio

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/devstruct"
)

// DeviceState reads back the indices device code stores in the device QP
// (written here by hand where kernels would), both queues and both CQs,
// and the error record; it needs the device copy and names bad states.
func TestDeviceState(t *testing.T) {
	_, q := hostPair(t, QPHLConfig{SQWQEs: 8, RQWQEs: 4, NICHandler: NICHandlerGPUSMDB})
	_, err := q.DeviceState()
	assert.ErrorIs(t, err, ErrBadState, "no device copy yet")
	assert.ErrorContains(t, err, "QP.DeviceState")

	dev, err := q.DeviceQP()
	require.NoError(t, err)
	s, err := q.DeviceState()
	require.NoError(t, err)
	assert.Equal(t, DeviceQueueState{WQEs: 8, CQEntries: s.SQ.CQEntries}, s.SQ, "a fresh device QP")
	assert.NotZero(t, s.SQ.CQEntries)
	assert.Equal(t, uint32(4), s.RQ.WQEs)
	assert.False(t, s.Error.HasError)

	img := hostSlice(uintptr(dev), uintptr(devstruct.QPSize))
	d, err := devstruct.DecodeQP(img)
	require.NoError(t, err)
	d.SQRsvdIndex, d.SQReadyIndex, d.SQWQEPI, d.SQLock, d.CQ.CQECI = 40, 38, 38, 1, 30
	d.RQRsvdIndex, d.RQReadyIndex, d.RQWQEPI, d.CQRQ.CQECI = 12, 12, 12, 9
	d.Error = devstruct.QPError{Status: devstruct.QPErrTimeout, WQEIndex: 30}
	d.Put(img)
	s, err = q.DeviceState()
	require.NoError(t, err)
	assert.Equal(t, DeviceQueueState{WQEs: 8, Reserved: 40, Ready: 38, Announced: 38, Locked: true,
		CQEntries: s.SQ.CQEntries, CQConsumed: 30}, s.SQ)
	assert.Equal(t, DeviceQueueState{WQEs: 4, Reserved: 12, Ready: 12, Announced: 12,
		CQEntries: s.RQ.CQEntries, CQConsumed: 9}, s.RQ)
	assert.Equal(t, QPErrorTimeout, s.Error.Kind)
	text := s.String()
	assert.Contains(t, text, "SQ: reserved 40, ready 38, doorbell 38 of 8 WQEs, locked; send CQ consumed 30 of")
	assert.Contains(t, text, "RQ: reserved 12, ready 12, record 12 of 4 WQEs; receive CQ consumed 9 of")
	assert.Contains(t, text, "error record:")
	assert.Contains(t, text, "poll for WQE 30 ran past")

	// A record device code is writing is read again, and a writer that
	// never finishes is a timeout, not a hang.
	rec := img[devstruct.OffsetQPError:]
	binary.LittleEndian.PutUint32(rec, 0x80000000)
	_, err = q.DeviceState()
	assert.ErrorIs(t, err, ErrTimeOut)
	binary.LittleEndian.PutUint32(rec, 7)
	_, err = q.DeviceState()
	assert.ErrorIs(t, err, ErrUnexpected)
	binary.LittleEndian.PutUint32(rec, 0)

	// Without a receive queue the text has no RQ line.
	_, sendOnly := hostPair(t, QPHLConfig{SQWQEs: 8, NICHandler: NICHandlerGPUSMDB})
	_, err = sendOnly.DeviceQP()
	require.NoError(t, err)
	s, err = sendOnly.DeviceState()
	require.NoError(t, err)
	assert.Zero(t, s.RQ.WQEs)
	assert.NotContains(t, s.String(), "RQ:")

	var nilQP *QP
	_, err = nilQP.DeviceState()
	assert.ErrorIs(t, err, ErrInvalidValue)
}
