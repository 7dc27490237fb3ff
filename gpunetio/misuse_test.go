package gpunetio

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/apicheck"
	"github.com/gdaki/gpunetio/verbs"
)

// closeRefused asserts that closing c fails with ErrInUse naming who.
func closeRefused(t *testing.T, c interface{ Close() error }, who string) {
	t.Helper()
	err := c.Close()
	require.ErrorIs(t, err, ErrInUse)
	assert.Contains(t, err.Error(), who)
}

// An exported QP holds the verbs QP and CQ: neither (nor what they use:
// UAR, UMEMs, PD) can be closed under the export, so the CPU proxy never
// rings a freed doorbell page; after Close of the export they close.
func TestExportHoldsVerbsObjects(t *testing.T) {
	for _, h := range []NICHandler{NICHandlerCPUProxy, NICHandlerGPUSMDB} {
		t.Run(h.String(), func(t *testing.T) {
			s := newSide(t, "emu0")
			g, _ := hostGPU(t)
			vqp, cq := plainQP(t, s, verbs.SendDBRValid, nil)
			q, err := g.ExportQP(vqp, cq, nil, ExportConfig{NICHandler: h})
			require.NoError(t, err)
			closeRefused(t, vqp, "gpunetio.QP export of QP 0x")
			closeRefused(t, cq, "gpunetio.QP export of QP 0x")
			closeRefused(t, vqp.UAR(), "QP 0x")
			closeRefused(t, s.pd, "QP 0x")
			if q.CPUAssisted() {
				// The proxy still rings a live page.
				storeMailbox(q, 0)
				_, err := q.ProgressProxy()
				require.NoError(t, err)
			}
			require.NoError(t, q.Close())
			require.NoError(t, vqp.Close(), "released by the unexport")
			_, err = q.ProgressProxy()
			assert.Error(t, err, "the export is closed")
		})
	}
}

// Closed verbs objects are refused by every entry that takes them.
func TestClosedVerbsObjectsRefused(t *testing.T) {
	s := newSide(t, "emu0")
	g, _ := hostGPU(t)
	cq, err := s.dev.NewCQ(verbs.CQConfig{Size: 16})
	require.NoError(t, err)
	qp, err := s.dev.NewQP(verbs.QPConfig{SendCQ: cq, SQWR: 16, SendMaxSGE: 1})
	require.NoError(t, err)
	u := newUAR(t, s)
	dead, err := s.dev.NewUAR(verbs.UARNonCacheDedicated)
	require.NoError(t, err)
	require.NoError(t, dead.Close())
	require.NoError(t, qp.Close())

	_, err = g.ExportQP(qp, cq, nil, ExportConfig{})
	assert.ErrorIs(t, err, ErrBadState, "a closed QP")
	assert.ErrorContains(t, err, "doca_gpu_verbs_export_qp")
	assert.ErrorContains(t, err, "is closed")
	_, err = g.CanGPURegisterUAR(dead)
	assert.ErrorIs(t, err, ErrBadState, "a closed UAR")
	_, err = g.ExportUAR(dead, dead.RegAddr())
	assert.ErrorIs(t, err, ErrBadState)

	// An exported UAR page holds its UAR until unexported.
	d, err := g.ExportUAR(u, u.RegAddr())
	require.NoError(t, err)
	closeRefused(t, u, `hold "gpunetio: UAR page exported to host-memory test GPU"`)
	require.NoError(t, g.UnexportUAR(d))

	pd, err := s.ctx.AllocPD()
	require.NoError(t, err)
	require.NoError(t, pd.Close())
	_, err = NewQPHL(QPHLConfig{GPU: g, PD: pd, SQWQEs: 8})
	assert.ErrorIs(t, err, ErrBadState, "a closed PD")
	_, err = NewQPGroupHL(QPHLConfig{GPU: g, PD: pd, SQWQEs: 8})
	assert.ErrorIs(t, err, ErrBadState, "a closed PD")
	require.NoError(t, cq.Close())
	assert.Zero(t, g.Live())
}

// High-level objects refuse to close under their users: the verbs objects
// of a QPHL, a QPHL in a flat list or monitored by a service, a QP of a
// group.
func TestHighLevelReferences(t *testing.T) {
	hl, g, s := proxyHL(t, 8)
	closeRefused(t, hl.QP(), "gpunetio.QPHL export")
	closeRefused(t, hl.CQ(), "gpunetio.QPHL export")
	closeRefused(t, hl.UAR(), "QP 0x")
	closeRefused(t, s.pd, "QP 0x")

	// Its memory belongs to it: freeing a ring or the device QP under it
	// is refused.
	closeRefused(t, memFreer{hl.SQRing()}, "belongs to a high-level QP (QPHL)")
	closeRefused(t, memFreer{hl.CQRing()}, "belongs to a high-level QP (QPHL)")
	dev, err := hl.GPUQP().DeviceQP()
	require.NoError(t, err)
	err = g.MemFree(dev)
	require.ErrorIs(t, err, ErrInUse)
	assert.Contains(t, err.Error(), "belongs to the device QP of exported QP 0x")

	fl, err := NewQPFlatList([]*QPHL{hl})
	require.NoError(t, err)
	closeRefused(t, hl, "flat list")
	closeRefused(t, memFreer{fl.mem}, "belongs to a FlatList")
	require.NoError(t, fl.Close())
	require.NoError(t, fl.Close())

	svc, err := NewService()
	require.NoError(t, err)
	require.NoError(t, svc.Monitor(hl.GPUQP()))
	closeRefused(t, hl, "monitored")
	require.NoError(t, svc.Close())
	require.NoError(t, hl.Close())
	_, err = NewQPFlatList([]*QPHL{hl})
	assert.ErrorIs(t, err, ErrInvalidValue, "a closed QPHL")

	grp, err := NewQPGroupHL(QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 8, NICHandler: NICHandlerCPUProxy})
	require.NoError(t, err)
	closeRefused(t, grp.Main, "QPGroupHL")
	closeRefused(t, grp.Companion, "QPGroupHL")
	closeRefused(t, grp.Main.UAR(), "QP 0x")
	require.NoError(t, grp.Close())
	require.NoError(t, grp.Main.Close(), "closed with its group")
}

// The largest sizes are refused before anything is allocated: 2^64-4096
// bytes used to wrap to a 4 KiB mapping and return a Mem claiming the size.
func TestMemAllocHugeSizes(t *testing.T) {
	g, _ := hostGPU(t)
	for _, ty := range []MemType{MemGPU, MemGPUCPU, MemCPUGPU} {
		for _, align := range []uintptr{0, 4096, 8192, 1 << 20} {
			for _, size := range []uintptr{^uintptr(0) - 4095, ^uintptr(0), 1 << 63} {
				m, err := g.MemAlloc(size, align, ty)
				assert.Nil(t, m)
				require.ErrorIs(t, err, ErrInvalidValue, "%v %#x aligned %d", ty, size, align)
				assert.ErrorContains(t, err, "exceeds the largest allocation")
			}
		}
	}
	// Sizes that fit the arithmetic but not the machine fail in the
	// allocator, and still leave nothing behind.
	_, err := g.MemAlloc(1<<62, 0, MemCPUGPU)
	assert.ErrorIs(t, err, ErrNoMemory)
	assert.Zero(t, g.Live())
	_, err = g.DmabufFD(0x1001, 4096)
	assert.ErrorIs(t, err, ErrInvalidValue)
}

// A CQ overrun of an exported QP's CQ: the QP error query says the QP is in
// error, and the CQ reports why.
func TestQPErrorAfterCQOverrun(t *testing.T) {
	a, b := newSide(t, "emu0"), newSide(t, "emu1")
	g, _ := hostGPU(t)
	cq, err := a.dev.NewCQ(verbs.CQConfig{Size: 4})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cq.Close()) })
	vqp, err := a.dev.NewQP(verbs.QPConfig{SendCQ: cq, SQWR: 32, SendMaxSGE: 1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, vqp.Close()) })
	peerCQ, err := b.dev.NewCQ(verbs.CQConfig{Size: 16})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, peerCQ.Close()) })
	peer, err := b.dev.NewQP(verbs.QPConfig{SendCQ: peerCQ, RecvCQ: peerCQ, SQWR: 4, RQWR: 4, SendMaxSGE: 1, RecvMaxSGE: 1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, peer.Close()) })
	connectQP(t, vqp, peer.QPN(), b.gid)
	connectQP(t, peer, vqp.QPN(), a.gid)
	q, err := g.ExportQP(vqp, cq, nil, ExportConfig{NICHandler: NICHandlerCPUProxy})
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Close()) }()

	info, err := q.LastError()
	require.NoError(t, err)
	require.False(t, info.HasError)
	for i := 0; i < 16; i++ {
		require.NoError(t, vqp.PostSend(verbs.SendWR{Opcode: verbs.WRRDMAWrite, Signaled: true,
			SGL:        []verbs.SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}},
			RemoteAddr: b.addr(0), RKey: b.mr.RKey()}))
	}
	deadline := time.Now().Add(5 * time.Second)
	for !info.HasError && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		info, err = q.LastError()
		require.NoError(t, err)
	}
	assert.True(t, info.HasError, "the QP error query reports the overrun")
	err = q.CQ().Err()
	assert.ErrorIs(t, err, verbs.CQStatusOverflow)
	var ce *verbs.CQError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, cq.CQN(), ce.CQN)
}

// Every exported method of every gpunetio object, on a nil pointer and on
// a zero value, returns a named error or a zero value; none panics.
func TestNilAndZeroReceivers(t *testing.T) {
	errType := reflect.TypeOf((*error)(nil)).Elem()
	for _, ptr := range []any{(*GPU)(nil), (*Mem)(nil), (*QP)(nil), (*DevQPArray)(nil), (*QPHL)(nil),
		(*QPGroupHL)(nil), (*FlatList)(nil), (*Service)(nil)} {
		pt := reflect.TypeOf(ptr)
		for i := 0; i < pt.NumMethod(); i++ {
			if _, valueMethod := pt.Elem().MethodByName(pt.Method(i).Name); valueMethod {
				t.Fatalf("%s.%s has a value receiver", pt.Elem().Name(), pt.Method(i).Name)
			}
		}
		apicheck.CallMethods(t, ptr, func(t *testing.T, recv string, m reflect.Method, out []reflect.Value) {
			for _, o := range out {
				if o.Type() != errType {
					continue
				}
				err, _ := o.Interface().(error)
				require.Error(t, err, "a %s receiver must be refused", recv)
				var e *Error
				require.True(t, errors.As(err, &e), "%T: %v", err, err)
				assert.NotEmpty(t, e.Op)
				assert.False(t, strings.HasPrefix(err.Error(), ":"), "%v", err)
			}
		})
	}
}

// The package's leak report names open objects and where they were made.
func TestLeakReport(t *testing.T) {
	g, _ := hostGPU(t)
	m, err := g.MemAlloc(4096, 0, MemCPUGPU)
	require.NoError(t, err)
	r := LeakReport()
	assert.Contains(t, r, "Mem: CPU_GPU 4096 bytes at ")
	assert.Contains(t, r, "gpunetio.TestLeakReport")
	require.NoError(t, m.Free())
	assert.NotContains(t, LeakReport(), "Mem: CPU_GPU 4096 bytes at ")
}

// memFreer closes a Mem with Free.
type memFreer struct{ m *Mem }

func (f memFreer) Close() error { return f.m.Free() }

// Memory registered with Mem.RegMR cannot be freed under its region: the
// NIC would write freed memory.
func TestMemFreeRefusedUnderMR(t *testing.T) {
	g, _ := hostGPU(t)
	s := newSide(t, "emu0")
	m, err := g.MemAlloc(8192, 0, MemGPU)
	require.NoError(t, err)
	mr, err := m.RegMR(s.pd, verbs.AccessLocalWrite|verbs.AccessRemoteWrite, MemRegCUDAPeermem)
	require.NoError(t, err)
	err = m.Free()
	require.ErrorIs(t, err, ErrInUse)
	assert.Contains(t, err.Error(), fmt.Sprintf("registered as MR lkey 0x%x", mr.LKey()))
	require.NoError(t, mr.Close())
	require.NoError(t, m.Free())
}
