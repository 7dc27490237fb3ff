package gpunetio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/apicheck"
	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/internal/docasdk"
	"github.com/gdaki/gpunetio/internal/docasdk/fakesdk"
	"github.com/gdaki/gpunetio/verbs"
)

// SDK mode is latched per process: TestSDKMode runs the TestSDKChild*
// tests in a child process of this test binary, with DOCA_SDK_LIB_PATH set
// to the stand-in SDK of package fakesdk, which hands out real host memory
// from its GPU handle (FAKE_DOCA_REAL_MEM=1), and stand-in PDs on the
// emulated devices. The GPU of those tests is a host-memory GPU whose
// handle the SDK opened too (sdkHostGPU): allocations, frees and dma-bufs
// go through the SDK, copies and doorbell mappings through the host
// backend. The same-API table runs here in open mode and in the child in
// SDK mode; the outcomes are compared.
const (
	sdkChildEnv   = "GPUNETIO_TEST_SDK_CHILD"
	sdkResultsEnv = "GPUNETIO_TEST_SDK_RESULTS"
)

func TestSDKMode(t *testing.T) {
	fake, root := fakesdk.ForTest(t)
	results := filepath.Join(root, "same-api.json")
	out, err := fakesdk.RunTests("^TestSDKChild", []string{
		sdkChildEnv + "=1", docasdk.EnvLibPath + "=" + fake.Full(), fakesdk.EnvRealMem + "=1",
		fakesdk.EnvLog + "=" + filepath.Join(root, "calls.log"), sdkResultsEnv + "=" + results,
	}, 2*time.Minute)
	require.NoError(t, err, "child process:\n%s", out)
	for _, name := range []string{"TestSDKChildQPHL", "TestSDKChildGPU", "TestSDKChildSameAPI", "TestSDKChildExportRQ"} {
		assert.Contains(t, fakesdk.Passed(out), name, "child output:\n%s", out)
	}
	open := runSameAPI(t, func(t *testing.T) *GPU { g, _ := hostGPU(t); return g })
	diffs, err := fakesdk.CompareOutcomes(results, open)
	require.NoError(t, err)
	assert.Empty(t, diffs, "open mode vs SDK mode")
}

func inChild(t *testing.T) {
	t.Helper()
	if os.Getenv(sdkChildEnv) == "" {
		t.Skip("runs in a child process of TestSDKMode")
	}
}

// sdkHostGPU is a host-memory GPU whose handle the SDK opened too, closed
// leak-free at cleanup.
func sdkHostGPU(t *testing.T) *GPU {
	t.Helper()
	sdk, err := docasdk.GPUCreate("0000:3b:00.0")
	require.NoError(t, err)
	b := newHostBackend()
	b.noDmabuf = true // the SDK exports dma-bufs, not the backend
	g := newGPU(b, sdk)
	t.Cleanup(func() {
		require.Equal(t, 0, g.Live(), "GPU allocations leaked")
		require.NoError(t, g.Close())
		a, r := b.live()
		require.Zero(t, a+r, "backend allocations/registrations leaked")
	})
	return g
}

// dev is a Context, PD and device object on an emulated device.
func dev(t *testing.T, name string) *verbs.Dev {
	t.Helper()
	ctx, err := verbs.OpenDevice(name)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, ctx.Close()) })
	pd, err := ctx.AllocPD()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, pd.Close()) })
	d, err := verbs.OpenDev(pd)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return d
}

func callLog() *fakesdk.CallLog { return &fakesdk.CallLog{Path: os.Getenv(fakesdk.EnvLog)} }

// count returns how many times each SDK function was called since mark.
func count(mark int) map[string]int {
	m := map[string]int{}
	for _, f := range callLog().Functions(mark) {
		m[f]++
	}
	return m
}

// A high-level QP made in SDK mode: every object through the SDK, and the
// device QP built from the SDK's getters in the same layout.
func TestSDKChildQPHL(t *testing.T) {
	inChild(t)
	require.Equal(t, ModeSDK, SDKMode().Mode)
	g := sdkHostGPU(t)
	assert.Equal(t, ModeSDK, g.Mode())
	d := dev(t, "emu0")
	log := callLog()

	mark := log.Mark()
	q, err := NewQPHL(QPHLConfig{GPU: g, NetDev: d, SQWQEs: 100, NICHandler: NICHandlerAuto,
		OrderingSemantic: verbs.OrderingOOOAll})
	require.NoError(t, err)
	calls := count(mark)
	for fn, n := range map[string]int{
		"doca_gpu_mem_alloc":                            3, // CQ ring+DBR, SQ ring, SQ DBR
		"doca_gpu_dmabuf_fd":                            3,
		"doca_umem_gpu_create":                          3,
		"doca_uar_create":                               1,
		"doca_verbs_cq_create":                          1,
		"doca_verbs_cq_attr_set_external_umem":          1,
		"doca_verbs_qp_create":                          1,
		"doca_verbs_qp_init_attr_set_external_umem":     1,
		"doca_verbs_qp_init_attr_set_external_dbr_umem": 1,
		"doca_verbs_qp_init_attr_set_ordering_semantic": 1,
		"doca_verbs_qp_get_wq":                          1,
		"doca_verbs_qp_get_dbr_addr":                    1,
		"doca_verbs_qp_get_uar_addr":                    1,
		"doca_verbs_qp_get_qpn":                         1,
		"doca_verbs_cq_get_wq":                          1,
		"doca_verbs_cq_get_dbr_addr":                    1,
		"doca_verbs_cq_get_cqn":                         1,
		"doca_verbs_qp_query":                           1,
	} {
		assert.Equal(t, n, calls[fn], "%s calls", fn)
	}
	lines := strings.Join(log.Since(mark), "\n")
	// One buffer for the CQ's 128 CQEs and its doorbell record (DOCA 3.0):
	// align_up(128*64+8, 4096) bytes.
	assert.Contains(t, lines, fmt.Sprintf("doca_gpu_mem_alloc gpu=gpu@%#x size=12288 align=4096 type=0", g.sdk.Addr()))
	assert.Contains(t, lines, "doca_verbs_cq_attr_set_cq_size attr=")
	assert.Contains(t, lines, "v=128")
	assert.Contains(t, lines, "doca_verbs_qp_init_attr_set_ordering_semantic attr=")
	assert.Contains(t, lines, "v=2")
	assert.NotContains(t, lines, "doca_umem_create ", "GPU memory goes through doca_umem_gpu_create")
	assert.Equal(t, NICHandlerGPUSMDB, q.NICHandler())
	assert.Equal(t, uint32(128), q.SQWQEs())

	// The device QP: the same layout, filled from the SDK's getters.
	mark = log.Mark()
	p, err := q.GPUQP().DeviceQP()
	require.NoError(t, err)
	assert.Equal(t, 1, count(mark)["doca_gpu_mem_alloc"], "the device QP's memory comes from the SDK")
	dq, err := devstruct.DecodeQP(hostSlice(uintptr(p), uintptr(devstruct.QPSize)))
	require.NoError(t, err)
	assert.Equal(t, uint32(0xfedcba), dq.SQNum)
	assert.Equal(t, uint16(128), dq.SQWQENum)
	assert.Equal(t, uint16(127), dq.SQWQEMask)
	assert.Equal(t, uint64(0x7e0000000000), dq.SQWQEDAddr)
	assert.Equal(t, uint64(0x7e0000200000+4), dq.SQDBRec)
	assert.Equal(t, uint64(0x7c0000000800), dq.SQDB, "the exported doorbell (a host GPU maps pages one to one)")
	assert.Equal(t, uint64(0x7d0000000000), dq.CQ.CQEDAddr)
	assert.Equal(t, uint32(0xabcdef), dq.CQ.CQNum)
	assert.Equal(t, uint32(128), dq.CQ.CQENum)
	assert.Equal(t, uint64(0x7d0000100000), dq.CQ.DBRec)
	assert.Equal(t, uint32(NICHandlerGPUSMDB), dq.NICHandler)

	// Connect: SDK modifies with DOCA 3.0's masks.
	local, err := q.LocalEndpoint(1, 0)
	require.NoError(t, err)
	mark = log.Mark()
	require.NoError(t, q.ConnectRC(local, verbs.Endpoint{QPN: 0x99, GID: local.GID, MTU: 4096}, nil))
	lines = strings.Join(log.Since(mark), "\n")
	for _, m := range []string{"mask=0x8037", "mask=0x245a8", "mask=0x13a20"} {
		assert.Contains(t, lines, m)
	}

	mark = log.Mark()
	require.NoError(t, q.Close())
	calls = count(mark)
	assert.Equal(t, 1, calls["doca_verbs_qp_destroy"])
	assert.Equal(t, 1, calls["doca_verbs_cq_destroy"])
	assert.Equal(t, 3, calls["doca_umem_destroy"])
	assert.Equal(t, 4, calls["doca_gpu_mem_free"])
	assert.Equal(t, 1, calls["doca_uar_destroy"])
	assert.Zero(t, calls["doca_dev_close"], "the NetDev is the caller's")
}

// In SDK mode the receive half of the device QP is filled by this package
// from the SDK's getters (the receive ring, its entries and WQE size from
// doca_verbs_qp_get_wq, doorbell-record word 0 from doca_verbs_qp_get_dbr_addr,
// the receive CQ from doca_verbs_cq_get_wq, _get_dbr_addr and _get_cqn), in
// the layout the headers define; the SDK's own export (whose struct has the
// SDK's layout) is never called.
func TestSDKChildExportRQ(t *testing.T) {
	inChild(t)
	g := sdkHostGPU(t)
	d := dev(t, "emu0")
	scq, err := d.NewCQ(verbs.CQConfig{Size: 64})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, scq.Close()) })
	rcq, err := d.NewCQ(verbs.CQConfig{Size: 64})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rcq.Close()) })
	qp, err := d.NewQP(verbs.QPConfig{SendCQ: scq, RecvCQ: rcq, SQWR: 64, RQWR: 64, SendMaxSGE: 1, RecvMaxSGE: 1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, qp.Close()) })
	assert.Equal(t, uint32(16), qp.WQ().RQWQESize, "the SDK reports 16-byte receive WQEs for one scatter entry")

	mark := callLog().Mark()
	q, err := g.ExportQP(qp, scq, rcq, ExportConfig{NICHandler: NICHandlerCPUProxy})
	require.NoError(t, err)
	p, err := q.DeviceQP()
	require.NoError(t, err)
	calls := count(mark)
	assert.Zero(t, calls["doca_gpu_verbs_export_qp"], "the SDK's export is not used")
	dq, err := devstruct.DecodeQP(hostSlice(uintptr(p), uintptr(devstruct.QPSize)))
	require.NoError(t, err)
	assert.Equal(t, uint32(0xfedcba), dq.RQNum)
	assert.Equal(t, uint64(0x7e0000100000), dq.RQWQEDAddr, "the SDK's receive ring")
	assert.Equal(t, uint32(64), dq.RQWQENum)
	assert.Equal(t, uint32(63), dq.RQWQEMask)
	assert.Equal(t, uint32(16), dq.RcvWQESize)
	assert.Equal(t, uint64(0x7e0000200000), dq.RQDBRec, "word 0 of the SDK's doorbell record")
	assert.Equal(t, uint64(0x7e0000200000+4), dq.SQDBRec)
	assert.Equal(t, uint64(0x7d0000000000), dq.CQRQ.CQEDAddr)
	assert.Equal(t, uint32(0xabcdef), dq.CQRQ.CQNum)
	assert.Equal(t, uint64(0x7d0000100000), dq.CQRQ.DBRec)
	assert.Equal(t, devstruct.CQFlagInQP|devstruct.CQFlagRQ, dq.CQRQ.Flags)
	require.NoError(t, q.Close())

	// Two scatter entries per receive: 32-byte WQEs, refused.
	wide, err := d.NewQP(verbs.QPConfig{SendCQ: scq, RecvCQ: rcq, SQWR: 64, RQWR: 64, SendMaxSGE: 1, RecvMaxSGE: 2})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, wide.Close()) })
	_, err = g.ExportQP(wide, scq, rcq, ExportConfig{NICHandler: NICHandlerCPUProxy})
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorContains(t, err, "receive WQEs of 32 bytes")
}

// The GPU handle in SDK mode: allocations, frees and dma-bufs through the
// SDK; failures mapped to DOCA's codes; an open-mode GPU and an SDK Dev do
// not mix; a QPHL without NetDev opens and closes a device object itself.
func TestSDKChildGPU(t *testing.T) {
	inChild(t)
	g := sdkHostGPU(t)
	log := callLog()
	mark := log.Mark()
	m, err := g.MemAlloc(5000, 0, MemCPUGPU)
	require.NoError(t, err)
	assert.NotZero(t, m.Host)
	h, err := m.HostBytes()
	require.NoError(t, err)
	h[4999] = 1 // real memory
	fd, err := g.GetDmabufFD(m.Dev, 8192)
	require.NoError(t, err)
	require.NoError(t, syscall.Close(fd))
	require.NoError(t, m.Free())
	assert.Equal(t, []string{"doca_gpu_mem_alloc", "doca_gpu_dmabuf_fd", "doca_gpu_mem_free"}, log.Functions(mark))
	assert.Contains(t, strings.Join(log.Since(mark), "\n"), "size=5000 align=4096 type=2")

	require.NoError(t, os.Setenv(fakesdk.EnvFail, "doca_gpu_mem_alloc=7"))
	_, err = g.MemAlloc(64, 0, MemGPU)
	require.NoError(t, os.Unsetenv(fakesdk.EnvFail))
	assert.ErrorIs(t, err, ErrUnexpected)
	var se *verbs.SDKError
	require.True(t, errors.As(err, &se))
	assert.Equal(t, verbs.SDKError{Func: "doca_gpu_mem_alloc", Code: ErrNoMemory}, *se)

	require.NoError(t, os.Setenv(fakesdk.EnvFail, "doca_gpu_create=8"))
	_, err = NewGPU("0000:3b:00.0")
	require.NoError(t, os.Unsetenv(fakesdk.EnvFail))
	assert.ErrorIs(t, err, ErrInitialization)
	require.True(t, errors.As(err, &se))
	assert.Equal(t, "doca_gpu_create", se.Func)

	// An open-mode GPU with an SDK device object: refused.
	open, _ := hostGPU(t)
	_, err = NewQPHL(QPHLConfig{GPU: open, NetDev: dev(t, "emu0"), SQWQEs: 8})
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorContains(t, err, "do not mix")

	// Without NetDev the QPHL opens its own device object on the PD.
	d := dev(t, "emu0")
	mark = log.Mark()
	q, err := NewQPHL(QPHLConfig{GPU: g, PD: d.PD(), SQWQEs: 8, NICHandler: NICHandlerCPUProxy})
	require.NoError(t, err)
	assert.Equal(t, 1, count(mark)["doca_rdma_bridge_open_dev_from_pd"])
	mark = log.Mark()
	require.NoError(t, q.Close())
	assert.Equal(t, 1, count(mark)["doca_dev_close"])
}

// runSameAPI runs the operations compared across the modes on GPUs made by
// newG, and returns their outcomes.
func runSameAPI(t *testing.T, newG func(t *testing.T) *GPU) map[string]string {
	outcome := func(err error, detail string) string {
		return apicheck.Outcome(err, detail, func(x *Error) string { return x.Code.Name() })
	}
	rows := []struct {
		name string
		run  func(t *testing.T) string
	}{
		{"mem types", func(t *testing.T) string {
			g := newG(t)
			var out []string
			for _, mt := range []MemType{MemGPU, MemCPUGPU, MemType(9)} {
				m, err := g.MemAlloc(4096, 0, mt)
				out = append(out, outcome(err, fmt.Sprintf("%v host=%v", mt, m != nil && m.Host != 0)))
				if m != nil {
					require.NoError(t, m.Free())
				}
			}
			_, err := g.MemAlloc(0, 0, MemGPU)
			out = append(out, outcome(err, ""))
			_, err = g.GetDmabufFD(0x1001, 4096)
			out = append(out, outcome(err, ""))
			return strings.Join(out, "; ")
		}},
		{"close with live memory", func(t *testing.T) string {
			g := newG(t)
			m, err := g.MemAlloc(4096, 0, MemGPU)
			require.NoError(t, err)
			defer m.Free()
			return outcome(g.Close(), "")
		}},
		{"qphl bad size", func(t *testing.T) string {
			_, err := NewQPHL(QPHLConfig{GPU: newG(t), NetDev: dev(t, "emu0"), SQWQEs: 0})
			return outcome(err, "")
		}},
		{"qphl", func(t *testing.T) string {
			g := newG(t)
			d := dev(t, "emu0")
			q, err := NewQPHL(QPHLConfig{GPU: g, NetDev: d, SQWQEs: 16})
			if err != nil {
				return outcome(err, "")
			}
			var out []string
			out = append(out, outcome(nil, fmt.Sprintf("%v %d", q.NICHandler(), q.SQWQEs())))
			out = append(out, outcome(q.CQRing().Free(), "free an owned ring"))
			out = append(out, outcome(d.Close(), "close the NetDev under it"))
			out = append(out, outcome(q.QP().Close(), "close its QP"))
			_, err = g.ExportQP(q.QP(), nil, nil, ExportConfig{})
			out = append(out, outcome(err, "export without CQ"))
			out = append(out, outcome(q.Close(), ""), outcome(q.Close(), "twice"))
			return strings.Join(out, "; ")
		}},
	}
	got := map[string]string{}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) { got[r.name] = r.run(t) })
	}
	return got
}

func TestSDKChildSameAPI(t *testing.T) {
	inChild(t)
	require.NoError(t, fakesdk.WriteOutcomes(os.Getenv(sdkResultsEnv), runSameAPI(t, sdkHostGPU)))
}

// In open mode the ordering semantic of a high-level QP is refused, naming
// SDK mode, and the lines the 3.0 library prints come out.
func TestQPHLOrderingSemanticOpenMode(t *testing.T) {
	g, _ := hostGPU(t)
	_, err := NewQPHL(QPHLConfig{GPU: g, NetDev: dev(t, "emu0"), SQWQEs: 8, OrderingSemantic: verbs.OrderingOOORW})
	assert.ErrorIs(t, err, ErrNotSupported)
	assert.ErrorContains(t, err, "needs SDK mode")
	assert.Equal(t, ModeOpen, SDKMode().Mode)
	assert.Equal(t, ModeOpen, g.Mode())
}
