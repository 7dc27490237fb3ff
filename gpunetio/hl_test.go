package gpunetio

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/verbs"
)

// A write with a bad rkey puts the QP in ERR: LastError reports it.
func TestLastErrorAfterBadRKey(t *testing.T) {
	p, q := hostPair(t, QPHLConfig{SQWQEs: 8, NICHandler: NICHandlerCPUProxy})
	info, err := q.LastError()
	require.NoError(t, err)
	assert.False(t, info.HasError)
	p.postWrite(t, 0, 0, 0, 8, p.b.mr.RKey()^0x5a5a00)
	storeMailbox(q, 1)
	_, err = q.ProgressProxy()
	require.NoError(t, err)
	c := p.waitCQE(t, 0, nil)
	assert.True(t, c.Opcode.IsError(), "opcode %v", c.Opcode)
	info, err = q.LastError()
	require.NoError(t, err)
	assert.True(t, info.HasError)
	assert.Zero(t, info.Syndrome, "reserved fields stay 0")
}

func TestResetTrackingAndMemory(t *testing.T) {
	p, q := hostPair(t, QPHLConfig{SQWQEs: 8, NICHandler: NICHandlerCPUProxy})
	assert.ErrorIs(t, q.ResetTrackingAndMemory(), ErrBadState, "no device QP yet")
	dev, err := q.DeviceQP()
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		p.postWrite(t, uint16(i), 0, 0, 8, p.b.mr.RKey())
		storeMailbox(q, uint64(i+1))
		_, err = q.ProgressProxy()
		require.NoError(t, err)
		p.waitCQE(t, uint32(i), nil)
	}
	// What kernels would have advanced.
	img := hostSlice(uintptr(dev), uintptr(devstruct.QPSize))
	cur, err := devstruct.DecodeQP(img)
	require.NoError(t, err)
	cur.SQRsvdIndex, cur.SQReadyIndex, cur.SQWQEPI, cur.SQLock, cur.CQ.CQECI = 3, 3, 3, 1, 3
	cur.Put(img)

	require.NoError(t, q.ResetTrackingAndMemory())
	got, err := devstruct.DecodeQP(img)
	require.NoError(t, err)
	assert.Zero(t, got.SQRsvdIndex)
	assert.Zero(t, got.SQReadyIndex)
	assert.Zero(t, got.SQWQEPI)
	assert.Zero(t, got.SQLock)
	assert.Zero(t, got.CQ.CQECI)
	assert.Equal(t, uint64(3), got.CQ.CQERsvd, "cqe_rsvd bridges the old numbering")
	assert.Equal(t, uint64(0), le64(hostSlice(q.ProxyMailbox(), 8)))
	assert.Equal(t, uint32(0), le32(hostSlice(p.hl.QP().DBRAddr()+4, 4)))
	ring := hostSlice(uintptr(p.hl.CQRing().Dev), 8*64)
	for _, v := range ring {
		require.Equal(t, byte(0xff), v)
	}
	assert.Equal(t, make([]byte, 8*64), hostSlice(uintptr(p.hl.SQRing().Dev), 8*64))
	progressed, err := q.ProgressProxy()
	require.NoError(t, err)
	assert.False(t, progressed, "the helper restarted at 0")
}

func TestQPHLConfigRejects(t *testing.T) {
	g, b := hostGPU(t)
	s := newSide(t, "emu0")
	tests := []struct {
		name string
		cfg  QPHLConfig
		code Code
	}{
		{"no GPU", QPHLConfig{PD: s.pd, SQWQEs: 8}, ErrInvalidValue},
		{"no PD", QPHLConfig{GPU: g, SQWQEs: 8}, ErrInvalidValue},
		{"zero WQEs", QPHLConfig{GPU: g, PD: s.pd}, ErrInvalidValue},
		{"too many WQEs", QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 40000}, ErrInvalidValue},
		{"no-dbr handler", QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 8, NICHandler: NICHandlerGPUSMNoDBR}, ErrInvalidValue},
		{"dmabuf required", QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 8, MemRegType: MemRegCUDADmabuf}, ErrNotSupported},
	}
	for _, tc := range tests {
		_, err := NewQPHL(tc.cfg)
		assert.ErrorIs(t, err, tc.code, tc.name)
	}
	b.noGDR = true
	_, err := NewQPHL(QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 8, SendDBRModeExt: SendNoDBRSWEmulated})
	assert.ErrorIs(t, err, ErrInvalidValue)
	_, err = NewQPGroupHL(QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 8, NICHandler: NICHandlerGPUSMBF})
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.Equal(t, 0, g.Live(), "failed creations clean up")
}

func TestQPHLShapes(t *testing.T) {
	g, _ := hostGPU(t)
	s := newSide(t, "emu0")
	tests := []struct {
		handler NICHandler
		ext     SendDBRModeExt
		want    NICHandler
		uarType verbs.UARAllocType
	}{
		{NICHandlerAuto, SendDBRValid, NICHandlerGPUSMDB, verbs.UARNonCacheDedicated},
		{NICHandlerGPUSMDB, SendNoDBRHW, NICHandlerGPUSMNoDBR, verbs.UARNonCacheDedicated},
		{NICHandlerGPUSMBF, SendDBRValid, NICHandlerGPUSMBF, verbs.UARBlueFlame},
		{NICHandlerCPUProxy, SendDBRValid, NICHandlerCPUProxy, verbs.UARNonCacheDedicated},
	}
	for _, tc := range tests {
		q, err := NewQPHL(QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 5, NICHandler: tc.handler, SendDBRModeExt: tc.ext, CQCollapsed: true})
		require.NoError(t, err, "%v/%v", tc.handler, tc.ext)
		assert.Equal(t, tc.want, q.NICHandler())
		assert.Equal(t, tc.uarType, q.UAR().AllocType())
		assert.Equal(t, uint32(8), q.SQWQEs())
		_, entries, _ := q.CQ().Ring()
		assert.Equal(t, uint32(8), entries, "CQ depth == SQ depth")
		ring := hostSlice(uintptr(q.CQRing().Dev), 8*64)
		for i := 0; i < 8; i++ {
			assert.Equal(t, byte(0xf1), ring[i*64+63], "CQE %d op_own", i)
		}
		assert.Equal(t, q.QP().Config().CoreDirectMaster, false)
		require.NoError(t, q.Close())
		require.NoError(t, q.Close())
	}
}

func TestGroupAndFlatList(t *testing.T) {
	g, _ := hostGPU(t)
	s := newSide(t, "emu0")
	grp, err := NewQPGroupHL(QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 16, NICHandler: NICHandlerCPUProxy})
	require.NoError(t, err)
	assert.Same(t, grp.Main.UAR(), grp.Companion.UAR(), "one shared UAR")
	assert.Same(t, grp.Main.UAR(), grp.Main.CQ().UAR(), "the CQs use it too")
	assert.True(t, grp.Companion.QP().Config().CoreDirectMaster)
	assert.False(t, grp.Main.QP().Config().CoreDirectMaster)

	fl, err := NewQPFlatList([]*QPHL{grp.Main, grp.Companion})
	require.NoError(t, err)
	assert.Equal(t, 2, fl.Len())
	arr := hostSlice(uintptr(fl.Ptr()), 2*uintptr(devstruct.QPSize))
	for i, q := range []*QPHL{grp.Main, grp.Companion} {
		got, err := devstruct.DecodeQP(arr[i*devstruct.QPSize:])
		require.NoError(t, err)
		assert.Equal(t, q.GPUQP().template(), got)
	}
	_, err = NewQPFlatList(nil)
	assert.ErrorIs(t, err, ErrInvalidValue)
	require.NoError(t, fl.Close())

	// Multi-QP export: the array becomes each QP's device copy.
	qa, qb := grp.Main.GPUQP(), grp.Companion.GPUQP()
	_, err = qa.DeviceQP()
	require.NoError(t, err)
	ma, err := g.ExportQPs([]*QP{qa, qb})
	require.NoError(t, err)
	assert.Zero(t, uintptr(ma.Ptr())%(64<<10))
	da, _ := qa.DeviceQP()
	db, _ := qb.DeviceQP()
	for i, d := range []DevPtr{da, db} {
		p, err := ma.At(i)
		require.NoError(t, err)
		assert.Equal(t, p, d)
	}
	for _, i := range []int{-1, 2} {
		_, err := ma.At(i)
		assert.ErrorIs(t, err, ErrInvalidValue, "index %d is out of range", i)
	}
	_, err = g.ExportQPs([]*QP{qa})
	assert.ErrorIs(t, err, ErrInUse)
	_, err = g.ExportQPs([]*QP{qb, qb})
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorIs(t, qa.Close(), ErrInUse, "unexport the array first")
	assert.ErrorIs(t, grp.Close(), ErrInUse)
	require.NoError(t, ma.Close())
	require.NoError(t, ma.Close())
	require.NoError(t, grp.Close())
	require.NoError(t, grp.Close())
}
