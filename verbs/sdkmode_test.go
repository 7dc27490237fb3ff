package verbs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/apicheck"
	"github.com/gdaki/gpunetio/internal/docasdk"
	"github.com/gdaki/gpunetio/internal/docasdk/fakesdk"
	"github.com/gdaki/gpunetio/internal/doclog"
)

// SDK mode is latched per process, so TestSDKMode runs the TestSDKChild*
// tests in child processes of this test binary with DOCA_SDK_LIB_PATH set
// to the stand-in SDK of package fakesdk (or a broken variant of it), and
// stand-in PDs on the emulated devices. Each child test checks what the
// stand-in recorded: every routed call, with its arguments. The same-API
// table runs in open mode here and in SDK mode in the child, and the
// outcomes are compared.
const (
	sdkChildEnv   = "VERBS_TEST_SDK_CHILD"   // the scenario a child runs
	sdkResultsEnv = "VERBS_TEST_SDK_RESULTS" // where the child writes the same-API outcomes
)

// childScenario skips a child test unless this process is a child running
// scenario.
func childScenario(t *testing.T, scenario string) {
	t.Helper()
	if os.Getenv(sdkChildEnv) != scenario {
		t.Skipf("runs in a child process of TestSDKMode (scenario %q)", scenario)
	}
}

func TestSDKMode(t *testing.T) {
	fake, root := fakesdk.ForTest(t)
	noVerbs, err := fake.Without(fakesdk.LibVerbs)
	require.NoError(t, err)
	noOrdering, err := fake.Hiding(fakesdk.LibVerbs, "doca_verbs_qp_init_attr_set_ordering_semantic", "doca_verbs_qp_init_attr_get_ordering_semantic")
	require.NoError(t, err)
	results := filepath.Join(root, "same-api.json")

	for _, sc := range []struct {
		scenario, dir string
		tests         []string
	}{
		{"sdk", fake.Full(), []string{"TestSDKChildRouted", "TestSDKChildFailures", "TestSDKChildRefusals", "TestSDKChildSameAPI"}},
		{"fallback", noVerbs, []string{"TestSDKChildFallback"}},
		{"no-ordering", noOrdering, []string{"TestSDKChildNoOrdering"}},
	} {
		t.Run(sc.scenario, func(t *testing.T) {
			out, err := fakesdk.RunTests("^TestSDKChild", []string{
				sdkChildEnv + "=" + sc.scenario, docasdk.EnvLibPath + "=" + sc.dir,
				fakesdk.EnvLog + "=" + filepath.Join(root, sc.scenario+"-calls.log"),
				sdkResultsEnv + "=" + results,
			}, 2*time.Minute)
			require.NoError(t, err, "child process:\n%s", out)
			passed := fakesdk.Passed(out)
			for _, name := range sc.tests {
				assert.Contains(t, passed, name, "child output:\n%s", out)
			}
		})
	}

	// The Go API behaves the same in both modes.
	open := runSameAPI(t)
	require.NotEmpty(t, open)
	diffs, err := fakesdk.CompareOutcomes(results, open)
	require.NoError(t, err)
	assert.Empty(t, diffs, "open mode vs SDK mode")
}

// outcome describes what a call returned, in terms both modes share: "ok"
// and a detail, or the DOCA code of the error and of each *Error under it.
func outcome(err error, detail string) string {
	return apicheck.Outcome(err, detail, func(x *Error) string { return x.Code.Name() })
}

// sameAPIRows are the operations compared across the modes: the Dev and
// the objects made on it, misuse, transitions and teardown order. Each
// runs on fresh objects and returns its outcome.
func sameAPIRows() []struct {
	name string
	run  func(t *testing.T) string
} {
	type row = struct {
		name string
		run  func(t *testing.T) string
	}
	withDev := func(f func(t *testing.T, d *Dev, buf []byte) string) func(t *testing.T) string {
		return func(t *testing.T) string {
			df := newDevFixture(t, "emu0")
			return f(t, df.dev, mmapT(t, 1<<16))
		}
	}
	addrOf := func(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
	return []row{
		{"dev nil PD", func(t *testing.T) string { _, err := OpenDev(nil); return outcome(err, "") }},
		{"dev open", withDev(func(t *testing.T, d *Dev, _ []byte) string { return outcome(nil, d.PD().Context().Name()) })},
		{"umem address 0", withDev(func(t *testing.T, d *Dev, _ []byte) string {
			_, err := d.NewUMem(0, 4096, 0, nil)
			return outcome(err, "")
		})},
		{"umem access bits", withDev(func(t *testing.T, d *Dev, b []byte) string {
			_, err := d.NewUMem(addrOf(b), 4096, 1<<29, nil)
			return outcome(err, "")
		})},
		{"umem", withDev(func(t *testing.T, d *Dev, b []byte) string {
			u, err := d.NewUMem(addrOf(b), 8192, AccessLocalWrite, nil)
			if err != nil {
				return outcome(err, "")
			}
			defer u.Close()
			return outcome(nil, fmt.Sprintf("size %d, address matches %v", u.Size(), u.Addr() == addrOf(b)))
		})},
		{"uar type", withDev(func(t *testing.T, d *Dev, _ []byte) string { _, err := d.NewUAR(9); return outcome(err, "") })},
		{"uar", withDev(func(t *testing.T, d *Dev, _ []byte) string {
			u, err := d.NewUAR(UARNonCache)
			if err != nil {
				return outcome(err, "")
			}
			defer u.Close()
			return outcome(nil, fmt.Sprintf("%v, register in page %v", u.AllocType(), u.RegAddr()&^4095 == u.BaseAddr()))
		})},
		{"cq size", withDev(func(t *testing.T, d *Dev, _ []byte) string {
			_, err := d.NewCQ(CQConfig{Size: 3})
			return outcome(err, "")
		})},
		{"cq umem too small", withDev(func(t *testing.T, d *Dev, b []byte) string {
			u, err := d.NewUMem(addrOf(b), 64*64, AccessLocalWrite, nil)
			require.NoError(t, err)
			defer u.Close()
			_, err = d.NewCQ(CQConfig{Size: 64, UMem: u})
			return outcome(err, "")
		})},
		{"cq umem", withDev(func(t *testing.T, d *Dev, b []byte) string {
			for i := 0; i < 64; i++ {
				b[i*64+63] = cqeInvalidOwned // the ring's owner initialises it
			}
			u, err := d.NewUMem(addrOf(b), 64*64+8, AccessLocalWrite, nil)
			require.NoError(t, err)
			defer u.Close()
			cq, err := d.NewCQ(CQConfig{Size: 64, UMem: u})
			if err != nil {
				return outcome(err, "")
			}
			defer cq.Close()
			_, n, _ := cq.Ring()
			return outcome(u.Close(), "") + fmt.Sprintf(" (umem in use); %d entries", n)
		})},
		{"cq other dev's uar", func(t *testing.T) string {
			a, b := newDevFixture(t, "emu0"), newDevFixture(t, "emu1")
			u, err := b.dev.NewUAR(UARNonCache)
			require.NoError(t, err)
			defer u.Close()
			_, err = a.dev.NewCQ(CQConfig{Size: 8, UAR: u})
			return outcome(err, "")
		}},
		{"qp other PD", func(t *testing.T) string {
			a, b := newDevFixture(t, "emu0"), newDevFixture(t, "emu0")
			_, err := a.dev.NewQP(QPConfig{PD: b.pd})
			return outcome(err, "")
		}},
		{"qp without send cq", withDev(func(t *testing.T, d *Dev, _ []byte) string {
			_, err := d.NewQP(QPConfig{SQWR: 8, SendMaxSGE: 1})
			return outcome(err, "")
		})},
		{"qp lifecycle", withDev(func(t *testing.T, d *Dev, _ []byte) string {
			cq, err := d.NewCQ(CQConfig{Size: 64})
			require.NoError(t, err)
			defer cq.Close()
			qp, err := d.NewQP(QPConfig{SendCQ: cq, RecvCQ: cq, SQWR: 32, SendMaxSGE: 1})
			if err != nil {
				return outcome(err, "")
			}
			var steps []string
			steps = append(steps, qp.State().String(), qp.SendDBRMode().String())
			steps = append(steps, outcome(cq.Close(), "cq close"))
			steps = append(steps, outcome(d.Close(), "dev close"))
			bad := qp.Modify(&QPAttr{NextState: QPStateRTS}, QPAttrNextState)
			steps = append(steps, outcome(bad, "RST -> RTS"))
			badAtomic := qp.Modify(&QPAttr{NextState: QPStateINIT, PortNum: 1, RemoteAtomic: 9},
				QPAttrNextState|QPAttrPKeyIndex|QPAttrPortNum|QPAttrAllowRemoteWrite|QPAttrAllowRemoteRead|QPAttrAtomicMode)
			steps = append(steps, outcome(badAtomic, "atomic mode 9"))
			local, err := qp.LocalEndpoint(1, 0)
			require.NoError(t, err)
			remote := Endpoint{QPN: 0x123, GID: local.GID, MTU: 4096}
			steps = append(steps, outcome(qp.ConnectRC(local, remote, nil), "connect"), qp.State().String())
			steps = append(steps, outcome(qp.ConnectRC(local, remote, nil), "connect again"))
			attr, _, err := qp.Query()
			steps = append(steps, outcome(err, attr.CurrentState.String()))
			steps = append(steps, outcome(qp.Close(), "qp close"), outcome(qp.Close(), "second close"))
			steps = append(steps, outcome(qp.Modify(&QPAttr{NextState: QPStateRST}, QPAttrNextState), "modify after close"))
			return strings.Join(steps, "; ")
		})},
	}
}

// runSameAPI runs the rows in this process's mode and returns the outcomes.
func runSameAPI(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, r := range sameAPIRows() {
		t.Run(r.name, func(t *testing.T) { out[r.name] = r.run(t) })
	}
	return out
}

func TestSDKChildSameAPI(t *testing.T) {
	childScenario(t, "sdk")
	require.Equal(t, ModeSDK, SDKMode().Mode)
	require.NoError(t, fakesdk.WriteOutcomes(os.Getenv(sdkResultsEnv), runSameAPI(t)))
}

// callLog is the stand-in's record of this child's calls.
func callLog() *fakesdk.CallLog { return &fakesdk.CallLog{Path: os.Getenv(fakesdk.EnvLog)} }

// expectCalls checks that the calls recorded since mark are fns, in order,
// and returns the recorded lines (calls and results) for argument checks.
func expectCalls(t *testing.T, mark int, what string, fns ...string) string {
	t.Helper()
	l := callLog()
	assert.Equal(t, fns, l.Functions(mark), "%s: the SDK calls", what)
	return strings.Join(l.Since(mark), "\n")
}

func TestSDKChildRouted(t *testing.T) {
	childScenario(t, "sdk")
	logs := captureLog(t, doclog.Info)
	m := SDKMode()
	require.Equal(t, ModeSDK, m.Mode)
	assert.Equal(t, os.Getenv(docasdk.EnvLibPath), m.Dir)
	assert.True(t, m.SetOrderingSemantic && m.GetOrderingSemantic)
	assert.Contains(t, m.String(), "SDK (libraries from ")

	ctx, pd := openPD(t, "emu0")
	log := callLog()

	mark := log.Mark()
	dev, err := OpenDev(pd)
	require.NoError(t, err)
	assert.Equal(t, ModeSDK, dev.Mode())
	lines := expectCalls(t, mark, "OpenDev", "doca_rdma_bridge_open_dev_from_pd")
	standIn := fmt.Sprintf("pd=%#x", dev.standIn.addr())
	assert.Contains(t, lines, "doca_rdma_bridge_open_dev_from_pd "+standIn)

	buf := mmapT(t, 1<<16)
	base := uintptr(unsafe.Pointer(&buf[0]))
	mark = log.Mark()
	u, err := dev.NewUMem(base, 8192, AccessLocalWrite|AccessRemoteWrite, nil)
	require.NoError(t, err)
	lines = expectCalls(t, mark, "NewUMem", "doca_umem_create", "doca_umem_get_id", "doca_umem_get_address", "doca_umem_get_size")
	assert.Contains(t, lines, fmt.Sprintf("addr=%#x size=8192 access=0x3", base))
	assert.Equal(t, uint32(0xfeedc0de), u.ID(), "the id comes from the SDK's getter")
	assert.Equal(t, base, u.Addr())
	assert.Equal(t, uint64(8192), u.Size())

	gpu, err := docasdk.GPUCreate("0000:3b:00.0")
	require.NoError(t, err)
	ref := docasdk.VerbsGPURef("test GPU", gpu).(*GPURef)
	mark = log.Mark()
	gu, err := dev.NewUMem(base+8192, 4096, AccessLocalWrite, &Dmabuf{FD: 5, GPU: ref})
	require.NoError(t, err)
	lines = expectCalls(t, mark, "NewUMem with a dma-buf", "doca_umem_gpu_create", "doca_umem_get_id", "doca_umem_get_address", "doca_umem_get_size")
	assert.Contains(t, lines, fmt.Sprintf("doca_umem_gpu_create gpu=gpu@%#x", gpu.Addr()))
	_, err = dev.NewUMem(base, 4096, 0, &Dmabuf{FD: 5})
	assert.ErrorIs(t, err, ErrInvalidValue, "a dma-buf UMEM in SDK mode needs the GPU")
	_, err = dev.NewUMem(base, 4096, 0, &Dmabuf{FD: 5, GPU: &GPURef{name: "an open-mode GPU"}})
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorContains(t, err, "do not mix")

	mark = log.Mark()
	uar, err := dev.NewUAR(UARNonCacheDedicated)
	require.NoError(t, err)
	expectCalls(t, mark, "NewUAR", "doca_uar_create", "doca_uar_id_get", "doca_uar_reg_addr_get")
	assert.Contains(t, strings.Join(log.Since(mark), "\n"), "type=2")
	assert.Equal(t, uint32(0x80000007), uar.ID())
	assert.Equal(t, uintptr(0x7c0000000800), uar.RegAddr())
	assert.Equal(t, uintptr(0x7c0000000000), uar.BaseAddr())
	assert.Zero(t, uar.DBRLessAddr(), "no dbr-less getter in the SDK")
	assert.True(t, uar.IsMMIO())

	mark = log.Mark()
	cq, err := dev.NewCQ(CQConfig{Size: 64, UMem: u, UAR: uar, Overrun: true, UserContext: 0xc0ffee})
	require.NoError(t, err)
	lines = expectCalls(t, mark, "NewCQ",
		"doca_rdma_bridge_get_dev_pd", "doca_verbs_bridge_verbs_context_import", // once per Dev
		"doca_verbs_cq_attr_create", "doca_verbs_cq_attr_set_cq_size", "doca_verbs_cq_attr_set_cq_context",
		"doca_verbs_cq_attr_set_external_umem", "doca_verbs_cq_attr_set_external_datapath_en",
		"doca_verbs_cq_attr_set_external_uar", "doca_verbs_cq_attr_set_cq_overrun",
		"doca_verbs_cq_create", "doca_verbs_cq_attr_destroy",
		"doca_verbs_cq_get_wq", "doca_verbs_cq_get_dbr_addr", "doca_verbs_cq_get_cqn")
	ctxWord := fmt.Sprintf("context=%#x flags=0", dev.standIn.addr()+hostPage/2)
	assert.Contains(t, lines, "doca_verbs_bridge_verbs_context_import "+ctxWord, "the context of the stand-in PD")
	assert.Contains(t, lines, "set_cq_size attr=")
	assert.Contains(t, lines, " v=64")
	assert.Contains(t, lines, "v=0xc0ffee")
	assert.Contains(t, lines, "offset=0")
	assert.Equal(t, uint32(0xabcdef), cq.CQN())
	ring, n, size := cq.Ring()
	assert.Equal(t, uintptr(0x7d0000000000), ring)
	assert.Equal(t, uint32(64), n)
	assert.Equal(t, uint8(128), size, "the SDK's entry size")
	db, ci, arm := cq.Doorbells()
	assert.Equal(t, []uintptr{0x7c0000000020, 0x7d0000100000, 0x7d0000100004}, []uintptr{db, ci, arm})

	mark = log.Mark()
	cq2, err := dev.NewCQ(CQConfig{Size: 16})
	require.NoError(t, err)
	expectCalls(t, mark, "NewCQ (internal memory, context already imported)",
		"doca_verbs_cq_attr_create", "doca_verbs_cq_attr_set_cq_size", "doca_verbs_cq_create", "doca_verbs_cq_attr_destroy",
		"doca_verbs_cq_get_wq", "doca_verbs_cq_get_dbr_addr", "doca_verbs_cq_get_cqn")

	dbrU, err := dev.NewUMem(base+16384, 4096, AccessLocalWrite, nil)
	require.NoError(t, err)
	mark = log.Mark()
	qp, err := dev.NewQP(QPConfig{SendCQ: cq, RecvCQ: cq2, SQWR: 32, RQWR: 16, SendMaxSGE: 1, RecvMaxSGE: 2,
		MaxInlineData: 28, UserIndex: 5, UMem: gu, DBRUMem: dbrU, DBRUMemOffset: 8, UAR: uar,
		UserContext: 0xabc, OrderingSemantic: OrderingOOORW})
	require.NoError(t, err)
	lines = expectCalls(t, mark, "NewQP",
		"doca_verbs_qp_init_attr_create",
		"doca_rdma_bridge_get_dev_pd", "doca_verbs_bridge_verbs_pd_import", // once per Dev
		"doca_verbs_qp_init_attr_set_pd", "doca_verbs_qp_init_attr_set_send_cq", "doca_verbs_qp_init_attr_set_receive_cq",
		"doca_verbs_qp_init_attr_set_sq_sig_all", "doca_verbs_qp_init_attr_set_sq_wr", "doca_verbs_qp_init_attr_set_rq_wr",
		"doca_verbs_qp_init_attr_set_send_max_sges", "doca_verbs_qp_init_attr_set_receive_max_sges",
		"doca_verbs_qp_init_attr_set_max_inline_data", "doca_verbs_qp_init_attr_set_user_index",
		"doca_verbs_qp_init_attr_set_qp_type", "doca_verbs_qp_init_attr_set_external_umem",
		"doca_verbs_qp_init_attr_set_external_datapath_en", "doca_verbs_qp_init_attr_set_external_dbr_umem",
		"doca_verbs_qp_init_attr_set_external_uar", "doca_verbs_qp_init_attr_set_qp_context",
		"doca_verbs_qp_init_attr_set_core_direct_master", "doca_verbs_qp_init_attr_set_send_dbr_mode",
		"doca_verbs_qp_init_attr_set_ordering_semantic",
		"doca_verbs_qp_create", "doca_verbs_qp_init_attr_destroy",
		"doca_verbs_qp_get_qpn", "doca_verbs_qp_get_wq", "doca_verbs_qp_get_dbr_addr", "doca_verbs_qp_get_uar_addr",
		"doca_verbs_qp_attr_create", "doca_verbs_qp_init_attr_create", "doca_verbs_qp_query",
		"doca_verbs_qp_init_attr_get_send_dbr_mode", "doca_verbs_qp_init_attr_destroy", "doca_verbs_qp_attr_destroy")
	for _, want := range []string{
		"doca_verbs_qp_init_attr_set_sq_wr attr=", "v=32", "v=16", "v=28", "v=5",
		fmt.Sprintf("umem=umem@%#x offset=0", gu.sdk.Addr()), fmt.Sprintf("umem=umem@%#x offset=8", dbrU.sdk.Addr()),
		"doca_verbs_qp_init_attr_set_qp_context", "v=0xabc", "doca_verbs_qp_init_attr_set_ordering_semantic", "v=1",
		"doca_verbs_qp_query", "mask=out",
	} {
		assert.Contains(t, lines, want)
	}
	assert.Equal(t, uint32(0xfedcba), qp.QPN())
	wq := qp.WQ()
	assert.Equal(t, WQInfo{SQAddr: 0x7e0000000000, SQWQEBBs: 32, RQAddr: 0x7e0000100000, RQEntries: 16, RQWQESize: 32, SQWQESize: 64}, wq) // 2 receive SGEs: 32-byte WQEs
	assert.Equal(t, uintptr(0x7e0000200000), qp.DBRAddr())
	assert.Equal(t, uintptr(0x7c0000000800), qp.DoorbellAddr())
	assert.Equal(t, SendDBRValid, qp.SendDBRMode())
	assert.Equal(t, OrderingOOORW, qp.Config().OrderingSemantic)

	// Transitions: one SDK attribute object per Modify, set from the fields
	// in the mask, modify with the same mask.
	local, err := qp.LocalEndpoint(1, 0)
	require.NoError(t, err)
	steps, err := RCTransitions(local, Endpoint{QPN: 0x4242, GID: local.GID, MTU: 4096}, nil)
	require.NoError(t, err)
	for i, step := range []struct {
		name     string
		calls    []string
		contains []string // with what each line must hold
	}{
		{"RST -> INIT", []string{"doca_verbs_qp_attr_create", "doca_verbs_qp_attr_set_next_state", "doca_verbs_qp_attr_set_allow_remote_write",
			"doca_verbs_qp_attr_set_allow_remote_read", "doca_verbs_qp_attr_set_atomic_mode", "doca_verbs_qp_attr_set_pkey_index",
			"doca_verbs_qp_attr_set_port_num", "doca_verbs_qp_modify", "doca_verbs_qp_attr_destroy"},
			[]string{"doca_verbs_qp_attr_set_atomic_mode attr=", "mask=0x8037"}},
		{"INIT -> RTR", []string{"doca_verbs_qp_attr_create", "doca_verbs_qp_attr_set_next_state", "doca_verbs_qp_attr_set_path_mtu",
			"doca_verbs_qp_attr_set_rq_psn", "doca_verbs_qp_attr_set_dest_qp_num",
			"doca_verbs_ah_attr_create", "doca_verbs_ah_attr_set_gid", "doca_verbs_ah_attr_set_addr_type",
			"doca_verbs_ah_attr_set_dlid", "doca_verbs_ah_attr_set_sl", "doca_verbs_ah_attr_set_sgid_index",
			"doca_verbs_ah_attr_set_static_rate", "doca_verbs_ah_attr_set_hop_limit", "doca_verbs_ah_attr_set_traffic_class",
			"doca_verbs_qp_attr_set_ah_attr", "doca_verbs_qp_attr_set_min_rnr_timer", "doca_verbs_qp_attr_set_max_dest_rd_atomic",
			"doca_verbs_qp_modify", "doca_verbs_ah_attr_destroy", "doca_verbs_qp_attr_destroy"},
			[]string{
				fmt.Sprintf("v=%x", local.GID[:]), // the remote GID
				"v=16962",                         // the remote QPN 0x4242
				"mask=0x245a8",
				"doca_verbs_ah_attr_create context=vctx@", // on the Dev's imported context
			}},
		{"RTR -> RTS", []string{"doca_verbs_qp_attr_create", "doca_verbs_qp_attr_set_next_state", "doca_verbs_qp_attr_set_sq_psn",
			"doca_verbs_qp_attr_set_ack_timeout", "doca_verbs_qp_attr_set_retry_cnt", "doca_verbs_qp_attr_set_rnr_retry",
			"doca_verbs_qp_attr_set_max_rd_atomic", "doca_verbs_qp_modify", "doca_verbs_qp_attr_destroy"},
			[]string{"mask=0x13a20", "doca_verbs_qp_attr_set_ack_timeout attr=", "v=14"}},
	} {
		mark = log.Mark()
		require.NoError(t, qp.Modify(&steps[i].Attr, steps[i].Mask), step.name)
		lines = expectCalls(t, mark, step.name, step.calls...)
		for _, c := range step.contains {
			assert.Contains(t, lines, c, step.name)
		}
	}

	mark = log.Mark()
	assert.Equal(t, QPStateRTS, qp.State(), "RTS: asked of the SDK")
	expectCalls(t, mark, "State", "doca_verbs_qp_attr_create", "doca_verbs_qp_init_attr_create", "doca_verbs_qp_query",
		"doca_verbs_qp_attr_get_current_state", "doca_verbs_qp_init_attr_destroy", "doca_verbs_qp_attr_destroy")

	// The open-mode-only entry points are refused, naming SDK mode.
	assert.ErrorIs(t, qp.PostSend(SendWR{Opcode: WRNop}), ErrNotSupported)
	assert.ErrorIs(t, qp.PostRecv(RecvWR{}), ErrNotSupported)
	_, err = cq.Poll(make([]WC, 1))
	assert.ErrorIs(t, err, ErrNotSupported)
	_, err = NewCQ(ctx, CQConfig{Size: 8})
	assert.ErrorIs(t, err, ErrNotSupported)
	assert.ErrorContains(t, err, "not available in SDK mode")

	// Teardown, in DOCA's order.
	sdkDev := fmt.Sprintf("doca_dev_close dev=dev@%#x", dev.sdk.Addr())
	mark = log.Mark()
	for _, c := range []func() error{qp.Close, cq2.Close, cq.Close, dbrU.Close, gu.Close, u.Close, uar.Close, dev.Close} {
		require.NoError(t, c())
	}
	lines = expectCalls(t, mark, "teardown", "doca_verbs_qp_destroy", "doca_verbs_cq_destroy", "doca_verbs_cq_destroy",
		"doca_umem_destroy", "doca_umem_destroy", "doca_umem_destroy", "doca_uar_destroy", "doca_dev_close")
	assert.Contains(t, lines, sdkDev)
	require.NoError(t, gpu.Destroy())

	// DOCA's lines, at its levels.
	got := strings.Join(logs.all(), "\n")
	for _, want := range []string{
		"Use DOCA Verbs Dev SDK", "Use DOCA Verbs UMEM SDK", "Use DOCA Verbs UAR SDK", "Use DOCA Verbs CQ Attr SDK",
		"Use DOCA Verbs CQ SDK", "Use DOCA Verbs QP Init Attr SDK", "Use DOCA Verbs qp SDK", "Use DOCA Verbs QP Attr SDK",
		"Use DOCA Verbs AH Attr SDK", "Env var DOCA_SDK_LIB_PATH set to " + m.Dir + ". DOCA SDK is in use",
	} {
		assert.Contains(t, got, want)
	}
	assert.NotContains(t, got, " open\n")
}

// SDK failures: a creator fails with ErrInitialization, any other call
// with ErrUnexpected, each with the SDK function and code in an *SDKError;
// destroyers release the object even when the SDK fails.
func TestSDKChildFailures(t *testing.T) {
	childScenario(t, "sdk")
	logs := captureLog(t, doclog.Info)
	f := newDevFixture(t, "emu0")
	fail := func(spec string) {
		t.Helper()
		require.NoError(t, os.Setenv(fakesdk.EnvFail, spec))
	}
	defer os.Unsetenv(fakesdk.EnvFail)

	fail("doca_verbs_cq_create=18")
	_, err := f.dev.NewCQ(CQConfig{Size: 8})
	var e *Error
	require.True(t, errors.As(err, &e), "%v", err)
	assert.Equal(t, ErrInitialization, e.Code)
	var se *SDKError
	require.True(t, errors.As(err, &se))
	assert.Equal(t, SDKError{Func: "doca_verbs_cq_create", Code: ErrBadState}, *se)
	assert.Contains(t, err.Error(), "the DOCA SDK's doca_verbs_cq_create returned DOCA_ERROR_BAD_STATE (18)")
	assert.Contains(t, logs.all(), "DOCA SDK function returned an error")
	assert.Contains(t, logs.all(), "DOCA SDK function in doca_verbs_cq_create returned error 18")

	fail("")
	cq, err := f.dev.NewCQ(CQConfig{Size: 8})
	require.NoError(t, err)
	qp, err := f.dev.NewQP(QPConfig{SendCQ: cq, SQWR: 8, SendMaxSGE: 1})
	require.NoError(t, err)
	fail("doca_verbs_qp_modify=21")
	err = qp.Modify(&QPAttr{NextState: QPStateERR}, QPAttrNextState)
	require.True(t, errors.As(err, &e))
	assert.Equal(t, ErrUnexpected, e.Code)
	require.True(t, errors.As(err, &se))
	assert.Equal(t, "doca_verbs_qp_modify", se.Func)
	assert.Equal(t, QPStateRST, qp.State(), "a failed modify leaves the cached state")

	fail("doca_verbs_qp_destroy=22")
	err = qp.Close()
	assert.ErrorIs(t, err, ErrUnexpected)
	require.NoError(t, qp.Close(), "the QP is closed anyway: a second Close returns nil")
	fail("")
	require.NoError(t, cq.Close(), "the QP's reference on the CQ is gone")

	fail("doca_umem_get_id=6")
	buf := mmapT(t, 4096)
	_, err = f.dev.NewUMem(uintptr(unsafe.Pointer(&buf[0])), 4096, 0, nil)
	assert.ErrorIs(t, err, ErrInitialization, "a getter failing during creation is a construction failure")
	fail("doca_verbs_cq_create=null")
	_, err = f.dev.NewCQ(CQConfig{Size: 8})
	assert.ErrorIs(t, err, ErrInitialization)
	assert.ErrorContains(t, err, "no object")
	fail("")
}

// What SDK mode refuses: emulated devices without stand-in PDs, SRQs with
// SDK QPs, EmulateNoDBRExt.
func TestSDKChildRefusals(t *testing.T) {
	childScenario(t, "sdk")
	_, pd := openPD(t, "emu0")
	docasdk.SetStandInPDs(false)
	_, err := OpenDev(pd)
	docasdk.SetStandInPDs(true)
	assert.ErrorIs(t, err, ErrNotSupported)
	assert.ErrorContains(t, err, "emulated device")

	f := newDevFixture(t, "emu0")
	cq, err := f.dev.NewCQ(CQConfig{Size: 8})
	require.NoError(t, err)
	defer cq.Close()
	srq, err := NewSRQ(f.ctx, SRQConfig{PD: f.pd, WR: 8, MaxRecvSGE: 1})
	require.NoError(t, err)
	defer srq.Close()
	_, err = f.dev.NewQP(QPConfig{RecvCQ: cq, SRQ: srq})
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorContains(t, err, "do not mix")
	_, err = f.dev.NewQP(QPConfig{SendCQ: cq, SQWR: 4, SendMaxSGE: 1, EmulateNoDBRExt: true})
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorContains(t, err, "not supported by the DOCA SDK")
}

// A broken SDK directory (no libdoca_verbs.so) falls back to open mode for
// the whole process, with DOCA's lines, and the objects are open ones.
func TestSDKChildFallback(t *testing.T) {
	childScenario(t, "fallback")
	m := SDKMode()
	require.Equal(t, ModeOpen, m.Mode)
	dir := os.Getenv(docasdk.EnvLibPath)
	assert.Equal(t, []string{
		"ERR: Failed to find libdoca_verbs.so library " + dir + "/libdoca_verbs.so (DOCA_SDK_LIB_PATH=" + dir + ")",
		"WARNING: Env var DOCA_SDK_LIB_PATH set to " + dir + ", but DOCA SDK libraries not found. DOCA SDK is not in use",
	}, m.Log)
	assert.Contains(t, m.Reason, "libdoca_verbs.so")
	logs := captureLog(t, doclog.Info)
	f := newDevFixture(t, "emu0")
	assert.Equal(t, ModeOpen, f.dev.Mode())
	cq, err := f.dev.NewCQ(CQConfig{Size: 8})
	require.NoError(t, err)
	require.NoError(t, cq.Close())
	got := strings.Join(logs.all(), "\n")
	assert.Contains(t, got, "Use DOCA Verbs Dev open")
	assert.Contains(t, got, "Use DOCA Verbs CQ open")
	assert.Regexp(t, `doca_verbs_cq_open=0x[0-9a-f]+ was created`, got)
	assert.Empty(t, callLog().Lines(), "nothing reached the stand-in")
}

// An SDK without the optional ordering-semantic entry points: the mode is
// SDK, but a QP with a non-IBTA ordering fails with ErrNotSupported.
func TestSDKChildNoOrdering(t *testing.T) {
	childScenario(t, "no-ordering")
	m := SDKMode()
	require.Equal(t, ModeSDK, m.Mode)
	assert.False(t, m.SetOrderingSemantic)
	assert.Contains(t, m.Log, "WARNING: The DOCA SDK installed on the system doesn't provide symbols for the set/get ordering semantic")
	logs := captureLog(t, doclog.Info)
	f := newDevFixture(t, "emu0")
	cq, err := f.dev.NewCQ(CQConfig{Size: 8})
	require.NoError(t, err)
	defer cq.Close()
	_, err = f.dev.NewQP(QPConfig{SendCQ: cq, SQWR: 4, SendMaxSGE: 1, OrderingSemantic: OrderingOOOAll})
	assert.ErrorIs(t, err, ErrNotSupported)
	assert.ErrorContains(t, err, "ordering semantic")
	assert.Contains(t, logs.all(), "DOCA SDK installation doesn't support QP init attribute setter set_ordering_semantic")
	qp, err := f.dev.NewQP(QPConfig{SendCQ: cq, SQWR: 4, SendMaxSGE: 1})
	require.NoError(t, err, "IBTA needs no setter")
	require.NoError(t, qp.Close())
}
