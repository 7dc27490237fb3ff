package gpunetio

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/verbs"
)

// rqQP is a verbs QP with a receive queue of rq entries of rsges scatter
// entries each, a send CQ and a receive CQ of rcqSize entries.
func rqQP(t testing.TB, s *side, rq, rsges, rcqSize uint32) (qp *verbs.QP, scq, rcq *verbs.CQ) {
	t.Helper()
	var err error
	scq, err = s.dev.NewCQ(verbs.CQConfig{Size: 128})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, scq.Close()) })
	rcq, err = s.dev.NewCQ(verbs.CQConfig{Size: rcqSize})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rcq.Close()) })
	qp, err = s.dev.NewQP(verbs.QPConfig{SendCQ: scq, RecvCQ: rcq, SQWR: 128, RQWR: rq, SendMaxSGE: 1, RecvMaxSGE: rsges})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, qp.Close()) })
	return qp, scq, rcq
}

// The receive half of the device QP comes from the verbs QP and its receive
// CQ: ring, entries, mask, doorbell-record word 0, the 16-byte stride, the
// receive CQ marked as the QP's cq_rq; indexes start at 0; need_mcst follows
// the GPU's RDMA write ordering. The export holds the receive CQ.
func TestExportRQFillsDeviceQP(t *testing.T) {
	s := newSide(t, "emu0")
	for _, tc := range []struct {
		name     string
		ordering int
		mcst     uint8
	}{
		{"owner ordering", cuda.RDMAWritesOrderingOwner, 0},
		{"all devices", cuda.RDMAWritesOrderingAllDevices, 0},
		{"no ordering", cuda.RDMAWritesOrderingNone, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, b := hostGPU(t)
			b.writesOrdering = tc.ordering
			vqp, scq, rcq := rqQP(t, s, 64, 1, 64)
			q, err := g.ExportQP(vqp, scq, rcq, ExportConfig{NICHandler: NICHandlerGPUSMDB})
			require.NoError(t, err)
			assert.Same(t, rcq, q.RecvCQ())
			dev, err := q.DeviceQP()
			require.NoError(t, err)
			got, err := devstruct.DecodeQP(hostSlice(uintptr(dev), uintptr(devstruct.QPSize)))
			require.NoError(t, err)
			wq := vqp.WQ()
			ring, entries, _ := rcq.Ring()
			_, ci, _ := rcq.Doorbells()
			assert.Equal(t, vqp.QPN(), got.RQNum)
			assert.Equal(t, uint64(wq.RQAddr), got.RQWQEDAddr)
			assert.Equal(t, uint32(64), got.RQWQENum)
			assert.Equal(t, uint32(63), got.RQWQEMask)
			assert.Equal(t, uint64(vqp.DBRAddr()), got.RQDBRec, "word 0 of the doorbell record")
			assert.Equal(t, uint64(vqp.DBRAddr()+4), got.SQDBRec, "word 1")
			assert.Equal(t, uint32(16), got.RcvWQESize)
			assert.Zero(t, got.RQWQEPI+got.RQRsvdIndex+got.RQReadyIndex+uint64(got.RQLock))
			assert.Equal(t, devstruct.CQ{CQEDAddr: uint64(ring), CQNum: rcq.CQN(), CQENum: entries, DBRec: uint64(ci),
				CQEMask: entries - 1, CQESize: 64, Flags: devstruct.CQFlagInQP | devstruct.CQFlagRQ,
				MemType: devstruct.MemTypeGPU}, got.CQRQ)
			assert.Equal(t, scq.CQN(), got.CQ.CQNum, "cq_sq is the send CQ")
			assert.Equal(t, tc.mcst, got.NeedMCST)

			err = rcq.Close()
			assert.ErrorIs(t, err, ErrInUse, "the export holds the receive CQ")
			require.NoError(t, q.Close())
		})
	}
}

// A send-only export of a QP that has a receive queue leaves the receive
// half zero.
func TestExportWithoutRQCQ(t *testing.T) {
	s := newSide(t, "emu0")
	g, _ := hostGPU(t)
	vqp, scq, _ := rqQP(t, s, 64, 1, 64)
	q, err := g.ExportQP(vqp, scq, nil, ExportConfig{NICHandler: NICHandlerGPUSMDB})
	require.NoError(t, err)
	defer q.Close()
	assert.Nil(t, q.RecvCQ())
	got, err := devstruct.DecodeQP(hostSlice(uintptr(must(q.DeviceQP())), uintptr(devstruct.QPSize)))
	require.NoError(t, err)
	assert.Zero(t, got.RQWQENum)
	assert.Zero(t, got.RQDBRec)
	assert.Equal(t, devstruct.CQ{}, got.CQRQ)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Bad receive halves are refused with a message naming the cause.
func TestExportRQRejects(t *testing.T) {
	s := newSide(t, "emu0")
	g, _ := hostGPU(t)
	good, scq, rcq := rqQP(t, s, 64, 1, 64)
	_, _, otherRCQ := rqQP(t, s, 64, 1, 64)
	wide, wscq, wrcq := rqQP(t, s, 64, 2, 64)
	small, sscq, srcq := rqQP(t, s, 64, 1, 32)
	sendOnly, oscq := plainQP(t, s, verbs.SendDBRValid, nil)
	shared, err := s.dev.NewCQ(verbs.CQConfig{Size: 64})
	require.NoError(t, err)
	defer shared.Close()
	sharedQP, err := s.dev.NewQP(verbs.QPConfig{SendCQ: shared, RecvCQ: shared, SQWR: 16, RQWR: 16, SendMaxSGE: 1, RecvMaxSGE: 1})
	require.NoError(t, err)
	defer sharedQP.Close()
	noRQCQ, err := s.dev.NewCQ(verbs.CQConfig{Size: 64})
	require.NoError(t, err)
	defer noRQCQ.Close()
	noRQ, err := s.dev.NewQP(verbs.QPConfig{SendCQ: oscq, RecvCQ: noRQCQ, SQWR: 16, SendMaxSGE: 1})
	require.NoError(t, err)
	defer noRQ.Close()
	for _, tc := range []struct {
		name     string
		qp       *verbs.QP
		sq, rq   *verbs.CQ
		contains string
	}{
		{"receive CQ is the send CQ", sharedQP, shared, shared, "is the send CQ"},
		{"not the QP's receive CQ", good, scq, otherRCQ, "not the receive CQ"},
		{"no receive CQ on the QP", sendOnly, oscq, rcq, "not the receive CQ"},
		{"no receive queue", noRQ, oscq, noRQCQ, "no receive queue"},
		{"two scatter entries per receive", wide, wscq, wrcq, "32 bytes"},
		{"receive CQ smaller than the ring", small, sscq, srcq, "smaller than the receive queue"},
	} {
		_, err := g.ExportQP(tc.qp, tc.sq, tc.rq, ExportConfig{NICHandler: NICHandlerGPUSMDB})
		assert.ErrorIs(t, err, ErrInvalidValue, tc.name)
		assert.ErrorContains(t, err, tc.contains, tc.name)
		assert.ErrorContains(t, err, "doca_gpu_verbs_export_qp", tc.name)
	}
	assert.Zero(t, g.Live(), "nothing stays allocated after a refusal")
}

// ResetTrackingAndMemory rewinds the receive side too: indexes and lock to
// 0, cq_rq's consumer index to 0 and its reserved count to the old
// rq_rsvd_index, the receive DBR word to 0.
func TestResetTrackingRQ(t *testing.T) {
	s := newSide(t, "emu0")
	g, _ := hostGPU(t)
	vqp, scq, rcq := rqQP(t, s, 64, 1, 64)
	q, err := g.ExportQP(vqp, scq, rcq, ExportConfig{NICHandler: NICHandlerGPUSMDB})
	require.NoError(t, err)
	defer q.Close()
	dev, err := q.DeviceQP()
	require.NoError(t, err)
	img := hostSlice(uintptr(dev), uintptr(devstruct.QPSize))
	cur, err := devstruct.DecodeQP(img)
	require.NoError(t, err)
	cur.RQRsvdIndex, cur.RQReadyIndex, cur.RQWQEPI, cur.CQRQ.CQECI = 9, 9, 9, 5
	cur.Put(img)
	hostSlice(vqp.DBRAddr(), 4)[3] = 9
	require.NoError(t, q.ResetTrackingAndMemory())
	got, err := devstruct.DecodeQP(img)
	require.NoError(t, err)
	assert.Zero(t, got.RQRsvdIndex+got.RQReadyIndex+got.RQWQEPI+got.CQRQ.CQECI)
	assert.Equal(t, uint64(9), got.CQRQ.CQERsvd)
	assert.Equal(t, make([]byte, 4), hostSlice(vqp.DBRAddr(), 4), "receive DBR word cleared")
	assert.Equal(t, uint32(64), got.RQWQENum, "the geometry stays")
}
