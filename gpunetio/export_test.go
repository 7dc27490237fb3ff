package gpunetio

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/verbs"
)

// plainQP makes a CQ and a QP with host rings on s (what verbs does without
// external UMEMs); uar is optional.
func plainQP(t testing.TB, s *side, mode verbs.SendDBRMode, uar *verbs.UAR) (*verbs.QP, *verbs.CQ) {
	t.Helper()
	cq, err := s.dev.NewCQ(verbs.CQConfig{Size: 128})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cq.Close()) })
	qp, err := s.dev.NewQP(verbs.QPConfig{SendCQ: cq, SQWR: 128, SendMaxSGE: 1, SendDBRMode: mode, UAR: uar})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, qp.Close()) })
	return qp, cq
}

func newUAR(t testing.TB, s *side) *verbs.UAR {
	t.Helper()
	u, err := s.dev.NewUAR(verbs.UARNonCacheDedicated)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, u.Close()) })
	return u
}

func TestExportFillsDeviceQP(t *testing.T) {
	s := newSide(t, "emu0")
	uarNoDBR := newUAR(t, s)
	tests := []struct {
		name     string
		handler  NICHandler
		ext      SendDBRModeExt
		mode     verbs.SendDBRMode
		failReg  bool
		want     NICHandler
		assisted bool
	}{
		{"auto", NICHandlerAuto, SendDBRValid, verbs.SendDBRValid, false, NICHandlerGPUSMDB, false},
		{"auto fallback", NICHandlerAuto, SendDBRValid, verbs.SendDBRValid, true, NICHandlerCPUProxy, true},
		{"cpu proxy", NICHandlerCPUProxy, SendDBRValid, verbs.SendDBRValid, false, NICHandlerCPUProxy, true},
		{"gpu sm db", NICHandlerGPUSMDB, SendDBRValid, verbs.SendDBRValid, false, NICHandlerGPUSMDB, false},
		{"gpu sm bf", NICHandlerGPUSMBF, SendDBRValid, verbs.SendDBRValid, false, NICHandlerGPUSMBF, false},
		{"auto no-dbr hw", NICHandlerAuto, SendNoDBRHW, verbs.SendNoDBRExt, false, NICHandlerGPUSMNoDBR, false},
		{"no-dbr hw proxy", NICHandlerCPUProxy, SendNoDBRHW, verbs.SendNoDBRExt, false, NICHandlerCPUProxy, true},
		{"auto sw emulated", NICHandlerAuto, SendNoDBRSWEmulated, verbs.SendDBRValid, false, NICHandlerGPUSMNoDBR, true},
		{"sm no-dbr sw emulated", NICHandlerGPUSMNoDBR, SendNoDBRSWEmulated, verbs.SendDBRValid, false, NICHandlerGPUSMNoDBR, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, b := hostGPU(t)
			var uar *verbs.UAR
			if tc.mode == verbs.SendNoDBRExt {
				uar = uarNoDBR
			}
			vqp, cq := plainQP(t, s, tc.mode, uar)
			if tc.failReg {
				b.failRegister = func(p, size uintptr, flags uint32) error {
					if p == vqp.UAR().BaseAddr() {
						return errors.New("peer-to-peer to the NIC BAR refused")
					}
					return nil
				}
			}
			q, err := g.ExportQP(vqp, cq, nil, ExportConfig{NICHandler: tc.handler, SendDBRModeExt: tc.ext})
			require.NoError(t, err)
			assert.Equal(t, tc.want, q.NICHandler())
			assert.Equal(t, tc.assisted, q.CPUAssisted())
			assert.Equal(t, tc.ext, q.SendDBRModeExt())
			assert.Same(t, vqp, q.VerbsQP())

			dev, err := q.DeviceQP()
			require.NoError(t, err)
			dev2, err := q.DeviceQP()
			require.NoError(t, err)
			assert.Equal(t, dev, dev2, "the device QP is made once")
			img := hostSlice(uintptr(dev), uintptr(devstruct.QPSize))
			checkDeviceQP(t, img, vqp, cq, tc.want)
			got, err := devstruct.DecodeQP(img)
			require.NoError(t, err)
			assert.Equal(t, q.template(), got)

			// Where sq_db points.
			switch {
			case tc.want == NICHandlerCPUProxy:
				assert.Equal(t, uint64(q.ProxyMailbox()), got.SQDB, "mailbox (host == device address here)")
				assert.Zero(t, hostSlice(q.ProxyMailbox(), 8)[0])
			case tc.mode == verbs.SendNoDBRExt:
				assert.Equal(t, uint64(uarNoDBR.BaseAddr()+0x600), got.SQDB)
			default:
				assert.Equal(t, uint64(vqp.DoorbellAddr()), got.SQDB)
				assert.Equal(t, uint64(vqp.UAR().RegAddr()), got.SQDB)
			}
			if tc.ext == SendNoDBRSWEmulated {
				assert.Equal(t, uintptr(dev)+16, q.cpuDB.Load(), "the helper watches sq_wqe_pi")
			}
			require.NoError(t, q.Close())
			require.NoError(t, q.Close())
		})
	}
}

// checkDeviceQP reads every field of the device QP image byte by byte.
func checkDeviceQP(t *testing.T, b []byte, qp *verbs.QP, cq *verbs.CQ, h NICHandler) {
	t.Helper()
	qpn := qp.QPN()
	wq := qp.WQ()
	ring, entries, _ := cq.Ring()
	_, ciDBR, _ := cq.Doorbells()
	for off := 0; off < 24; off++ {
		assert.Zero(t, b[off], "indices byte %d", off)
	}
	assert.Equal(t, qpn, le32(b[24:]), "sq_num")
	assert.Equal(t, qpn<<8, le32(b[28:]), "sq_num_shift8")
	for k := uint32(0); k <= 5; k++ {
		assert.Equal(t, qpn<<8|k, be32At(b[32+4*k:]), "sq_num_shift8_be %dds", k)
	}
	assert.Zero(t, le32(b[56:]), "sq_lock")
	assert.Equal(t, uint16(wq.SQWQEBBs), le16(b[60:]), "sq_wqe_num")
	assert.Equal(t, uint16(wq.SQWQEBBs-1), le16(b[62:]), "sq_wqe_mask")
	assert.Equal(t, uint64(wq.SQAddr), le64(b[64:]), "sq_wqe_daddr")
	assert.Equal(t, uint64(qp.DBRAddr()+4), le64(b[72:]), "sq_dbrec")
	assert.Equal(t, uint64(ring), le64(b[160:]), "cqe_daddr")
	assert.Equal(t, cq.CQN(), le32(b[168:]), "cq_num")
	assert.Equal(t, entries, le32(b[172:]), "cqe_num")
	assert.Equal(t, uint64(ciDBR), le64(b[176:]), "cq dbrec")
	assert.Zero(t, le64(b[184:]), "cqe_ci")
	assert.Equal(t, entries-1, le32(b[192:]), "cqe_mask")
	assert.Equal(t, byte(64), b[196], "cqe_size")
	assert.Zero(t, le64(b[200:]), "cqe_rsvd")
	assert.Equal(t, uint32(2), le32(b[208:]), "cq mem_type")
	assert.Equal(t, uint32(h), le32(b[288:]), "nic_handler")
	assert.Equal(t, uint32(2), le32(b[292:]), "mem_type")
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
func le32(b []byte) uint32 { return uint32(le16(b)) | uint32(le16(b[2:]))<<16 }
func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }

func TestExportRejects(t *testing.T) {
	s := newSide(t, "emu0")
	g, b := hostGPU(t)
	vqp, cq := plainQP(t, s, verbs.SendDBRValid, nil)
	otherCQ, err := s.dev.NewCQ(verbs.CQConfig{Size: 16})
	require.NoError(t, err)
	defer otherCQ.Close()
	tests := []struct {
		name string
		qp   *verbs.QP
		cq   *verbs.CQ
		cfg  ExportConfig
		code Code
		msg  string
	}{
		{"nil qp", nil, cq, ExportConfig{}, ErrInvalidValue, "nil"},
		{"nil cq", vqp, nil, ExportConfig{}, ErrInvalidValue, "nil"},
		{"not its send CQ", vqp, otherCQ, ExportConfig{}, ErrInvalidValue, "send CQ"},
		{"no-dbr handler with valid dbr", vqp, cq, ExportConfig{NICHandler: NICHandlerGPUSMNoDBR}, ErrInvalidValue, "VALID_DBR"},
		{"no-dbr hw on a DBR_VALID QP", vqp, cq, ExportConfig{SendDBRModeExt: SendNoDBRHW}, ErrInvalidValue, "NO_DBR_EXT"},
		{"unknown handler", vqp, cq, ExportConfig{NICHandler: 5}, ErrInvalidValue, "unknown NIC handler"},
		{"unknown ext", vqp, cq, ExportConfig{SendDBRModeExt: 7}, ErrInvalidValue, "unknown send DBR"},
	}
	for _, tc := range tests {
		_, err := g.ExportQP(tc.qp, tc.cq, nil, tc.cfg)
		assert.ErrorIs(t, err, tc.code, tc.name)
		assert.ErrorContains(t, err, tc.msg, tc.name)
	}
	// SW-emulated needs GDRCopy.
	b.noGDR = true
	_, err = g.ExportQP(vqp, cq, nil, ExportConfig{SendDBRModeExt: SendNoDBRSWEmulated})
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorContains(t, err, "GDRCopy")
	// A GPU_SM_DB request whose doorbell cannot be mapped fails (no fallback).
	b.failRegister = func(uintptr, uintptr, uint32) error { return errors.New("refused") }
	_, err = g.ExportQP(vqp, cq, nil, ExportConfig{NICHandler: NICHandlerGPUSMDB})
	assert.ErrorIs(t, err, ErrDriver)
	assert.Equal(t, 0, g.Live(), "nothing left behind by failed exports")
}

func TestUARExportRefcount(t *testing.T) {
	s := newSide(t, "emu0")
	g, b := hostGPU(t)
	u := newUAR(t, s)
	ok, err := g.CanGPURegisterUAR(u)
	require.NoError(t, err)
	assert.True(t, ok)
	_, regs := b.live()
	assert.Zero(t, regs, "the probe undoes its registration")

	d1, err := g.ExportUAR(u, u.RegAddr())
	require.NoError(t, err)
	d2, err := g.ExportUAR(u, u.DBRLessAddr())
	require.NoError(t, err)
	assert.Equal(t, DevPtr(u.RegAddr()), d1)
	assert.Equal(t, uintptr(d1)-0x800, uintptr(d2)-0x600, "one page, offsets kept")
	_, regs = b.live()
	assert.Equal(t, 1, regs, "the page is registered once")
	_, err = g.ExportUAR(u, u.RegAddr()+8192)
	assert.ErrorIs(t, err, ErrInvalidValue)

	require.NoError(t, g.UnexportUAR(d2))
	_, regs = b.live()
	assert.Equal(t, 1, regs)
	assert.ErrorIs(t, g.Close(), ErrInvalidValue, "GPU close refuses while a UAR is exported")
	require.NoError(t, g.UnexportUAR(d1))
	_, regs = b.live()
	assert.Zero(t, regs)
	assert.ErrorIs(t, g.UnexportUAR(d1), ErrInvalidValue)

	// The cached answer.
	b.failRegister = func(uintptr, uintptr, uint32) error { return fmt.Errorf("refused") }
	ok, err = g.CanGPURegisterUAR(u)
	require.NoError(t, err)
	assert.True(t, ok, "cached")
}
