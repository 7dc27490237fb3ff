package integration

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"slices"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/gpunetio/leaktest"
	"github.com/gdaki/gpunetio/internal/devhost"
	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/verbs"
)

// emuModelEnv is the emulator's NIC model variable (internal/mlx5/emu.EnvModel).
const emuModelEnv = "GDAKI_EMU_MODEL"

func TestMain(m *testing.M) {
	if os.Getenv(emuModelEnv) == "" {
		// Before any emulated NIC is opened: the ConnectX-8 model adds the no-DBR SQ mode
		// (GPU_SM_NO_DBR) and behaves as the ConnectX-7 model otherwise.
		os.Setenv(emuModelEnv, "cx8")
	}
	// Every verbs, gpunetio and CUDA object left open fails the run, with
	// the stack that made it (stacks_test.go turns recording on).
	os.Exit(leaktest.Check(m.Run(), os.Stderr))
}

// side is one emulated NIC with a high-level QP and a data buffer.
type side struct {
	ctx *verbs.Context
	pd  *verbs.PD
	hl  *gpunetio.QPHL
	buf []byte
	mr  *verbs.MR
	gid verbs.GID
}

func be32(v uint32) uint32 { return bits.ReverseBytes32(v) } // keys are handed to device code big-endian

func (s *side) addr(off int) devhost.Addr {
	return devhost.Addr{Addr: uint64(uintptr(unsafe.Pointer(&s.buf[off]))), Key: be32(s.mr.RKey())}
}

func (s *side) laddr(off int) devhost.Addr {
	return devhost.Addr{Addr: uint64(uintptr(unsafe.Pointer(&s.buf[off]))), Key: be32(s.mr.LKey())}
}

func newSide(t *testing.T, g *gpunetio.GPU, dev string, h gpunetio.NICHandler, ext gpunetio.SendDBRModeExt) *side {
	t.Helper()
	return newSideCfg(t, g, dev, gpunetio.QPHLConfig{SQWQEs: 256, NICHandler: h, SendDBRModeExt: ext})
}

// newSideCfg opens dev with a high-level QP made from cfg (GPU and PD filled in).
func newSideCfg(t *testing.T, g *gpunetio.GPU, dev string, cfg gpunetio.QPHLConfig) *side {
	t.Helper()
	s := &side{}
	var err error
	s.ctx, err = verbs.OpenDevice(dev)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.ctx.Close()) })
	s.pd, err = s.ctx.AllocPD()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.pd.Close()) })
	cfg.GPU, cfg.PD = g, s.pd
	s.hl, err = gpunetio.NewQPHL(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.hl.Close()) })
	s.buf, err = syscall.Mmap(-1, 0, 1<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Munmap(s.buf) })
	s.mr, err = s.pd.RegMR(uintptr(unsafe.Pointer(&s.buf[0])), uint64(len(s.buf)),
		verbs.AccessLocalWrite|verbs.AccessRemoteWrite|verbs.AccessRemoteRead|verbs.AccessRemoteAtomic)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.mr.Close()) })
	e, err := s.ctx.QueryGID(1, 0)
	require.NoError(t, err)
	s.gid = e.GID
	return s
}

func connect(t *testing.T, s, peer *side) {
	t.Helper()
	connectQP(t, s.hl.QP(), peer.hl.QP().QPN(), peer.gid, 14, 7)
}

// connectQP connects qp to the peer QP with verbs.QP.ConnectRC; ackTimeout
// (4.096 us x 2^n) and retry set how soon a silent peer fails the requester
// with TRANSPORT_RETRY_EXC.
func connectQP(t *testing.T, qp *verbs.QP, peerQPN uint32, peerGID verbs.GID, ackTimeout, retry uint8) {
	t.Helper()
	local, err := qp.LocalEndpoint(1, 0)
	require.NoError(t, err)
	require.NoError(t, qp.ConnectRC(local, verbs.Endpoint{QPN: peerQPN, GID: peerGID}, &verbs.ConnectOptions{
		PathMTU: verbs.Ptr(verbs.MTU4096), RemoteAtomic: verbs.Ptr(verbs.AtomicUpTo8Bytes),
		AckTimeout: &ackTimeout, RetryCnt: &retry, MaxRDAtomic: 16, MaxDestRDAtomic: 16}))
}

func devQP(t *testing.T, s *side) *devhost.QP {
	t.Helper()
	p, err := s.hl.GPUQP().DeviceQP()
	require.NoError(t, err)
	q, err := devhost.FromPointer(*(*unsafe.Pointer)(unsafe.Pointer(&p))) // host memory: never moves
	require.NoError(t, err)
	return q
}

// handlerCase is a NIC handler as the QP is made (qp, ext) and as device
// code sees it (dev).
type handlerCase struct {
	name string
	qp   gpunetio.NICHandler
	ext  gpunetio.SendDBRModeExt
	dev  devhost.Handler
}

var handlers = []handlerCase{
	{"GPU_SM_DB", gpunetio.NICHandlerGPUSMDB, gpunetio.SendDBRValid, devhost.HandlerGPUSMDB},
	{"CPU_PROXY", gpunetio.NICHandlerCPUProxy, gpunetio.SendDBRValid, devhost.HandlerCPUProxy},
	{"AUTO", gpunetio.NICHandlerAuto, gpunetio.SendDBRValid, devhost.HandlerAuto},
}

// TestHeadersPutOnEmulator drives the device headers' thread-scope put, p,
// get and put_signal (compiled as host C++) from many CPU threads sharing one
// exported QP (GPU sharing mode) on emu0, in every NIC handler the emulated
// ConnectX-7 supports, and checks every byte at emu1.
func TestHeadersPutOnEmulator(t *testing.T) {
	for _, hc := range handlers {
		t.Run(hc.name, func(t *testing.T) {
			g := gpunetio.NewHostGPU()
			t.Cleanup(func() { require.NoError(t, g.Close()) }) // first registered: runs last
			a := newSide(t, g, "emu0", hc.qp, hc.ext)
			b := newSide(t, g, "emu1", hc.qp, hc.ext)
			connect(t, a, b)
			connect(t, b, a)
			if a.hl.GPUQP().CPUAssisted() {
				svc, err := gpunetio.NewService()
				require.NoError(t, err)
				require.NoError(t, svc.Monitor(a.hl.GPUQP()))
				t.Cleanup(func() { require.NoError(t, svc.Close()) })
			}
			q := devQP(t, a)
			mode := devhost.Mode{Sharing: devhost.SharingGPU, Handler: hc.dev}
			const threads, perThread, size = 8, 64, 96
			for i := 0; i < threads*perThread*size; i++ {
				a.buf[i] = byte(i*31 + 7)
			}
			var wg sync.WaitGroup
			errs := make(chan error, threads)
			for th := 0; th < threads; th++ {
				wg.Add(1)
				go func(th int) {
					defer wg.Done()
					for k := 0; k < perThread; k++ {
						off := (th*perThread + k) * size
						if _, err := q.Put(b.addr(off), a.laddr(off), size, mode); err != nil {
							errs <- err
							return
						}
					}
				}(th)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.NoError(t, q.WaitAll(devhost.SharingGPU, 10*time.Second))
			n := threads * perThread * size
			assert.True(t, bytes.Equal(a.buf[:n], b.buf[:n]), "every byte written by put arrives")

			// p (inline 8-byte value), put_signal (data then fetch-add on a counter), get.
			tk, err := q.P(b.addr(200000), 0x1122334455667788, 8, mode)
			require.NoError(t, err)
			require.NoError(t, q.Wait(tk, devhost.SharingGPU, 5*time.Second))
			assert.Equal(t, []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}, b.buf[200000:200008])

			copy(a.buf[300000:], "signalled payload")
			tk, err = q.PutSignal(b.addr(300000), a.laddr(300000), 17, b.addr(400000), a.laddr(400008), 5, mode)
			require.NoError(t, err)
			require.NoError(t, q.Wait(tk, devhost.SharingGPU, 5*time.Second))
			assert.Equal(t, "signalled payload", string(b.buf[300000:300017]))
			assert.Equal(t, byte(5), b.buf[400000], "signal added 5 to the counter")

			copy(b.buf[500000:], "read me back")
			tk, err = q.Get(b.addr(500000), a.laddr(600000), 12, a.laddr(700000), false, mode)
			require.NoError(t, err)
			require.NoError(t, q.Wait(tk, devhost.SharingGPU, 5*time.Second))
			assert.Equal(t, "read me back", string(a.buf[600000:600012]))
		})
	}
}

// TestHeadersErrorCQE: a put with a bad rkey completes with an error CQE that
// the device code returns to its caller instead of spinning.
func TestHeadersErrorCQE(t *testing.T) {
	g := gpunetio.NewHostGPU()
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	a := newSide(t, g, "emu0", gpunetio.NICHandlerGPUSMDB, gpunetio.SendDBRValid)
	b := newSide(t, g, "emu1", gpunetio.NICHandlerGPUSMDB, gpunetio.SendDBRValid)
	connect(t, a, b)
	connect(t, b, a)
	q := devQP(t, a)
	bad := b.addr(0)
	bad.Key ^= 0x01000000 // flip a bit of the big-endian rkey
	tk, err := q.Put(bad, a.laddr(0), 64, devhost.Mode{Sharing: devhost.SharingExclusive, Handler: devhost.HandlerGPUSMDB})
	require.NoError(t, err)
	err = q.Wait(tk, devhost.SharingExclusive, 5*time.Second)
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.EIO, "error CQE reported: %v", err)
	info, err := a.hl.GPUQP().LastError()
	require.NoError(t, err)
	assert.True(t, info.HasError, "the QP went to ERR")
}

// ---- Waits that return on an error (device error record, LastError) ----------------------------

// errBound bounds every device wait of a failing QP. Bad-rkey errors arrive
// within a millisecond; a dead peer fails after ack_timeout x (retry+1) =
// 65 us x 2 with the connection below.
const errBound = 10 * time.Second

// returnsWithin runs f, a device wait that must give up on a failed QP, on a
// goroutine and fails the test when it has not returned after d (the call
// then stays blocked in C; the test fails instead of hanging).
func returnsWithin(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		hung(t, what, d)
	}
}

// hung reports a device call that never returned and stops the test binary:
// the call is still running in C, and the test's clean-up would free the
// memory under it.
func hung(t *testing.T, what string, d time.Duration) {
	t.Errorf("%s did not return within %v", what, d)
	fmt.Fprintf(os.Stderr, "FAIL: %s: %s did not return within %v; stopping: it still runs in C on memory the clean-up would free\n", t.Name(), what, d)
	os.Exit(1)
}

// errHandlers are the NIC handlers a host-compiled kernel can drive on the
// emulator (GPU_SM_NO_DBR needs the ConnectX-8 model, which TestMain selects).
var errHandlers = append(slices.Clip(handlers),
	handlerCase{"GPU_SM_NO_DBR", gpunetio.NICHandlerGPUSMDB, gpunetio.SendNoDBRHW, devhost.HandlerGPUSMNoDBR})

// failure is how the initiator's operations fail, and the CQE syndrome that says so.
type failure struct {
	name     string
	syndrome verbs.WCStatus
}

var (
	badRKey  = failure{"bad_rkey", verbs.WCRemAccessErr}
	deadPeer = failure{"dead_peer", verbs.WCRetryExcErr}
)

// errPair is an initiator QP on emu0 (driven by the host-compiled headers)
// connected to a target QP on emu1, set up to fail as f says.
type errPair struct {
	a, b *side
	q    *devhost.QP
	mode devhost.Mode
	f    failure
}

// serve hands a CPU-assisted QP to a CPU proxy service for the test.
func serve(t *testing.T, qps ...*gpunetio.QPHL) {
	t.Helper()
	var svc *gpunetio.Service
	for _, q := range qps {
		if !q.GPUQP().CPUAssisted() {
			continue
		}
		if svc == nil {
			var err error
			svc, err = gpunetio.NewService()
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, svc.Close()) })
		}
		require.NoError(t, svc.Monitor(q.GPUQP()))
		q := q
		t.Cleanup(func() { require.NoError(t, svc.Unmonitor(q.GPUQP())) })
	}
}

// connectFailing connects initiator and target; for deadPeer the initiator
// gives up quickly and the target then goes back to RST, where it drops
// every request, as a crashed peer would.
func connectFailing(t *testing.T, a, b *side, f failure) {
	t.Helper()
	connectQP(t, a.hl.QP(), b.hl.QP().QPN(), b.gid, 4, 1)
	connect(t, b, a)
	if f == deadPeer {
		require.NoError(t, b.hl.QP().Modify(&verbs.QPAttr{NextState: verbs.QPStateRST}, verbs.QPAttrNextState))
	}
}

func newErrPair(t *testing.T, g *gpunetio.GPU, hc int, f failure, cfg gpunetio.QPHLConfig) *errPair {
	t.Helper()
	h := errHandlers[hc]
	cfg.NICHandler, cfg.SendDBRModeExt = h.qp, h.ext
	p := &errPair{f: f, mode: devhost.Mode{Sharing: devhost.SharingGPU, Handler: h.dev}}
	if cfg.CQCollapsed {
		// A collapsed CQ has no per-slot CQEs to check availability with, and its poll waits
		// for sq_wqe_pi, which a proxy submit advances only when asked to.
		p.mode.Opt = devhost.CodeOptSkipAvailabilityCheck | devhost.CodeOptCPUProxyUpdatePI
	}
	p.a = newSideCfg(t, g, "emu0", cfg)
	p.b = newSideCfg(t, g, "emu1", gpunetio.QPHLConfig{SQWQEs: 64, NICHandler: gpunetio.NICHandlerAuto})
	connectFailing(t, p.a, p.b, f)
	serve(t, p.a.hl)
	p.q = devQP(t, p.a)
	return p
}

// remote is where the initiator's operations go: b's buffer, with a wrong
// key for badRKey.
func (p *errPair) remote(off int) devhost.Addr {
	r := p.b.addr(off)
	if p.f == badRKey {
		r.Key ^= 0x01000000 // flip a bit of the big-endian rkey
	}
	return r
}

// checkRecorded checks what the device record and gpunetio's LastError say
// about the failure of the WQE at index (the index the failing poll awaited).
func checkRecorded(t *testing.T, what string, q *devhost.QP, exp *gpunetio.QP, f failure, index uint64) {
	t.Helper()
	rec := q.Error()
	assert.Equalf(t, devstruct.QPErrCQE, rec.Status, "%s: device record status", what)
	assert.Equalf(t, uint8(f.syndrome), rec.Syndrome, "%s: device record syndrome", what)
	assert.Equalf(t, index, rec.WQEIndex, "%s: device record WQE index", what)
	info, err := exp.LastError()
	require.NoError(t, err)
	assert.Truef(t, info.HasError, "%s: LastError.HasError", what)
	assert.Equalf(t, gpunetio.QPErrorCQE, info.Kind, "%s: LastError.Kind", what)
	assert.Equalf(t, f.syndrome, info.Status, "%s: LastError.Status %v, want %v", what, info.Status, f.syndrome)
	assert.Equalf(t, int(f.syndrome), info.Syndrome, "%s: LastError.Syndrome", what)
	assert.Equalf(t, index, info.WQEIndex, "%s: LastError.WQEIndex", what)
	assert.Equalf(t, int(uint16(rec.WQECounter)), info.WQECounter, "%s: LastError.WQECounter", what)
	t.Logf("%s: %v", what, info)
}

// errWait is one blocking device wait run on a QP whose operation fails.
type errWait struct {
	name      string
	sqWQEs    uint16
	collapsed bool
	// run posts, waits (the call that must return) and says which index the
	// failing poll awaited.
	run func(t *testing.T, p *errPair) uint64
}

var errWaits = []errWait{
	{name: "wait_ticket", run: func(t *testing.T, p *errPair) uint64 {
		tk, err := p.q.Put(p.remote(0), p.a.laddr(0), 64, p.mode)
		require.NoError(t, err)
		returnsWithin(t, errBound, "wait(qp, ticket)", func() { p.q.WaitDirect(tk, p.mode.Sharing) })
		return tk
	}},
	{name: "wait_qp", run: func(t *testing.T, p *errPair) uint64 {
		_, err := p.q.P(p.remote(8), 0x1122, 8, p.mode)
		require.NoError(t, err)
		returnsWithin(t, errBound, "wait(qp)", func() { p.q.WaitAllDirect(p.mode.Sharing) })
		return 0
	}},
	{name: "poll_cq_at", run: func(t *testing.T, p *errPair) uint64 {
		tk, err := p.q.PutSignal(p.remote(0), p.a.laddr(0), 64, p.remote(4096), p.a.laddr(4096), 1, p.mode)
		require.NoError(t, err)
		var perr error
		returnsWithin(t, errBound, "poll_cq_at", func() { perr = p.q.PollCQAtDirect(tk, p.mode.Sharing) })
		require.ErrorIs(t, perr, syscall.EIO)
		// The poll awaits the signal (index 1), which the NIC flushes; the record names the
		// write before it (index 0), whose error CQE says why.
		return 0
	}},
	{name: "get_wait", run: func(t *testing.T, p *errPair) uint64 {
		tk, err := p.q.Get(p.remote(0), p.a.laddr(0), 64, devhost.Addr{}, false, p.mode)
		require.NoError(t, err)
		var werr error
		returnsWithin(t, errBound, "get_wait", func() { werr = p.q.GetWaitDirect(devhost.Addr{}, tk, false, p.mode) })
		require.NoError(t, werr)
		return tk
	}},
	{name: "get_blocking", run: func(t *testing.T, p *errPair) uint64 {
		var tk uint64
		var err error
		returnsWithin(t, errBound, "get<BLOCKING_MODE_ENABLED>", func() {
			tk, err = p.q.GetBlocking(p.remote(0), p.a.laddr(0), 64, devhost.Addr{}, false, p.mode)
		})
		require.NoError(t, err)
		return tk
	}},
	{name: "availability_check", sqWQEs: 16, run: func(t *testing.T, p *errPair) uint64 {
		// 17 puts on a 16-slot ring: the 17th reserve waits for slot 0's CQE, the error.
		returnsWithin(t, errBound, "17 puts on a 16-slot ring", func() {
			for i := 0; i < 17; i++ {
				if _, err := p.q.Put(p.remote(64*i), p.a.laddr(64*i), 64, p.mode); err != nil {
					t.Error(err)
					return
				}
			}
		})
		return 0
	}},
	{name: "poll_cq_collapsed_at", collapsed: true, run: func(t *testing.T, p *errPair) uint64 {
		_, err := p.q.Put(p.remote(0), p.a.laddr(0), 64, p.mode)
		require.NoError(t, err)
		var perr error
		returnsWithin(t, errBound, "poll_cq_collapsed_at", func() { perr = p.q.PollCQCollapsedAtDirect(1, p.mode.Sharing) })
		require.ErrorIs(t, perr, syscall.EIO)
		return 1 // count semantics: the poll awaited 1 completed WQE
	}},
}

// TestHeadersWaitsReturnOnError: for every blocking device wait, NIC handler
// and failure (a bad rkey, a dead peer), the host-compiled headers driving an
// emulated NIC return within a bound, and the error CQE's syndrome reaches
// both the in-kernel record (gdaki_dev_qp_get_error) and gpunetio's
// LastError. DOCA's waits spin forever there.
func TestHeadersWaitsReturnOnError(t *testing.T) {
	for hc, h := range errHandlers {
		for _, f := range []failure{badRKey, deadPeer} {
			for _, w := range errWaits {
				t.Run(h.name+"/"+f.name+"/"+w.name, func(t *testing.T) {
					g := gpunetio.NewHostGPU()
					t.Cleanup(func() { require.NoError(t, g.Close()) })
					sq := w.sqWQEs
					if sq == 0 {
						sq = 64
					}
					p := newErrPair(t, g, hc, f, gpunetio.QPHLConfig{SQWQEs: sq, CQCollapsed: w.collapsed})
					idx := w.run(t, p)
					checkRecorded(t, w.name, p.q, p.a.hl.GPUQP(), f, idx)
				})
			}
		}
	}
}

// TestHeadersCounterWaitsReturnOnError: a counted put whose main operation
// fails: the waits on the main and on the companion QP both return, and the
// main QP records the failure.
func TestHeadersCounterWaitsReturnOnError(t *testing.T) {
	for _, h := range errHandlers {
		for _, f := range []failure{badRKey, deadPeer} {
			t.Run(h.name+"/"+f.name, func(t *testing.T) {
				g := gpunetio.NewHostGPU()
				t.Cleanup(func() { require.NoError(t, g.Close()) })
				a := newSide(t, g, "emu0", h.qp, h.ext) // for its PD and buffer; its own QP stays unused
				b := newSide(t, g, "emu1", gpunetio.NICHandlerAuto, gpunetio.SendDBRValid)
				grp, err := gpunetio.NewQPGroupHL(gpunetio.QPHLConfig{GPU: g, PD: a.pd, SQWQEs: 64, NICHandler: h.qp, SendDBRModeExt: h.ext})
				require.NoError(t, err)
				t.Cleanup(func() { require.NoError(t, grp.Close()) })
				peers := [2]*gpunetio.QPHL{}
				for i, q := range []*gpunetio.QPHL{grp.Main, grp.Companion} {
					peers[i], err = gpunetio.NewQPHL(gpunetio.QPHLConfig{GPU: g, PD: b.pd, SQWQEs: 64, NICHandler: gpunetio.NICHandlerAuto})
					require.NoError(t, err)
					pq := peers[i]
					t.Cleanup(func() { require.NoError(t, pq.Close()) })
					connectQP(t, q.QP(), pq.QP().QPN(), b.gid, 4, 1)
					connectQP(t, pq.QP(), q.QP().QPN(), a.gid, 14, 7)
				}
				if f == deadPeer { // only the main QP's peer dies
					require.NoError(t, peers[0].QP().Modify(&verbs.QPAttr{NextState: verbs.QPStateRST}, verbs.QPAttrNextState))
				}
				serve(t, grp.Main, grp.Companion)
				main, comp := devQP(t, &side{hl: grp.Main}), devQP(t, &side{hl: grp.Companion})
				remote := b.addr(0)
				if f == badRKey {
					remote.Key ^= 0x01000000
				}
				mode := devhost.Mode{Sharing: devhost.SharingGPU, Handler: h.dev}
				require.NoError(t, main.Counter(devhost.Counter{Kind: devhost.CounterPut, Remote: remote, Local: a.laddr(0), Size: 64,
					Companion: comp, CounterRemote: b.addr(8192), CounterLocal: a.laddr(8192), CounterVal: 1}, mode))
				returnsWithin(t, errBound, "wait(main)", func() { main.WaitAllDirect(mode.Sharing) })
				returnsWithin(t, errBound, "wait(companion)", func() { comp.WaitAllDirect(mode.Sharing) })
				checkRecorded(t, "counter main QP", main, grp.Main.GPUQP(), f, 0)
			})
		}
	}
}

// TestHeadersPollTimeout: a CPU-proxy QP nobody serves never completes; with
// the QP's poll bound set through gpunetio the device wait returns after it,
// records a timeout, and LastError reports it while the QP is still in RTS.
func TestHeadersPollTimeout(t *testing.T) {
	g := gpunetio.NewHostGPU()
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	a := newSide(t, g, "emu0", gpunetio.NICHandlerCPUProxy, gpunetio.SendDBRValid)
	b := newSide(t, g, "emu1", gpunetio.NICHandlerAuto, gpunetio.SendDBRValid)
	connect(t, a, b)
	connect(t, b, a)
	exp := a.hl.GPUQP()
	const bound = 50 * time.Millisecond // host compile: ticks are nanoseconds
	require.NoError(t, exp.SetPollTimeout(uint64(bound)))
	assert.Equal(t, uint64(bound), exp.PollTimeout())
	q := devQP(t, a) // DeviceQP after SetPollTimeout: the copy carries the bound
	mode := devhost.Mode{Sharing: devhost.SharingGPU, Handler: devhost.HandlerCPUProxy}
	tk, err := q.Put(b.addr(0), a.laddr(0), 64, mode)
	require.NoError(t, err)
	start := time.Now()
	returnsWithin(t, errBound, "wait on an unserved proxy QP", func() { q.WaitDirect(tk, mode.Sharing) })
	assert.GreaterOrEqual(t, time.Since(start), bound)
	rec := q.Error()
	assert.Equal(t, devstruct.QPErrTimeout, rec.Status)
	assert.Equal(t, tk, rec.WQEIndex)
	info, err := exp.LastError()
	require.NoError(t, err)
	assert.True(t, info.HasError)
	assert.Equal(t, gpunetio.QPErrorTimeout, info.Kind)
	assert.Equal(t, verbs.QPStateRTS, info.State, "the NIC saw nothing wrong")
	assert.Contains(t, info.String(), "poll timeout")

	// Reset clears the record and keeps the bound.
	require.NoError(t, exp.ResetTrackingAndMemory())
	assert.Equal(t, devstruct.QPError{}, q.Error())
	info, err = exp.LastError()
	require.NoError(t, err)
	assert.False(t, info.HasError)
	assert.Equal(t, uint64(bound), exp.PollTimeout())

	// Setting the bound with the device copy in place rewrites it there.
	require.NoError(t, exp.SetPollTimeout(0))
	assert.Zero(t, exp.PollTimeout())
}

// ---- Extensions: fetching atomics, signal SET, quiet, ordering fence ---------------------------

// extPair is a connected pair for the extension tests, in GPU sharing mode.
func extPair(t *testing.T, hc int) (a, b *side, q *devhost.QP, mode devhost.Mode) {
	t.Helper()
	h := errHandlers[hc]
	g := gpunetio.NewHostGPU()
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	a = newSide(t, g, "emu0", h.qp, h.ext)
	b = newSide(t, g, "emu1", gpunetio.NICHandlerAuto, gpunetio.SendDBRValid)
	connect(t, a, b)
	connect(t, b, a)
	serve(t, a.hl)
	return a, b, devQP(t, a), devhost.Mode{Sharing: devhost.SharingGPU, Handler: h.dev}
}

// TestHeadersFetchingAtomics: fetch-adds from 8 CPU threads on one remote
// word each return a distinct old value; sorted, they chain up to the final
// value. compare-swap returns the old value and swaps only on a match.
func TestHeadersFetchingAtomics(t *testing.T) {
	for hc, h := range errHandlers {
		t.Run(h.name, func(t *testing.T) {
			a, b, q, mode := extPair(t, hc)
			const threads, per, word, res = 8, 16, 800000, 810000
			var wg sync.WaitGroup
			olds := make([]uint64, threads*per)
			errs := make(chan error, threads)
			for th := 0; th < threads; th++ {
				wg.Add(1)
				go func(th int) {
					defer wg.Done()
					for k := 0; k < per; k++ {
						i := th*per + k
						tk, err := q.FetchAdd(b.addr(word), a.laddr(res+8*i), uint64(th+1), mode)
						if err == nil {
							olds[i], err = q.FetchWaitDirect(tk, a.laddr(res+8*i), mode.Sharing)
						}
						if err != nil {
							errs <- err
							return
						}
					}
				}(th)
			}
			returnsWithin(t, errBound, "128 fetch-adds", wg.Wait)
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			type fa struct{ old, add uint64 }
			v := make([]fa, len(olds))
			for i, o := range olds {
				v[i] = fa{o, uint64(i/per + 1)}
			}
			sort.Slice(v, func(i, j int) bool { return v[i].old < v[j].old })
			var sum uint64
			for i, x := range v {
				require.Equalf(t, sum, x.old, "the %d-th smallest old value", i)
				sum += x.add
			}
			assert.Equal(t, sum, binary.LittleEndian.Uint64(b.buf[word:]), "the word holds every add")

			const cw = 820000
			binary.LittleEndian.PutUint64(b.buf[cw:], 5)
			tk, err := q.CompareSwap(b.addr(cw), a.laddr(res), 5, 9, mode)
			require.NoError(t, err)
			old, err := q.FetchWaitDirect(tk, a.laddr(res), mode.Sharing)
			require.NoError(t, err)
			assert.Equal(t, [2]uint64{5, 9}, [2]uint64{old, binary.LittleEndian.Uint64(b.buf[cw:])}, "match: swapped")
			tk, err = q.CompareSwap(b.addr(cw), a.laddr(res), 5, 11, mode)
			require.NoError(t, err)
			old, err = q.FetchWaitDirect(tk, a.laddr(res), mode.Sharing)
			require.NoError(t, err)
			assert.Equal(t, [2]uint64{9, 9}, [2]uint64{old, binary.LittleEndian.Uint64(b.buf[cw:])}, "no match: unchanged")
		})
	}
}

// TestHeadersSignalSet: put_signal, p_signal and signal with the SET
// extension leave the value itself in the signal word (ADD would add it).
func TestHeadersSignalSet(t *testing.T) {
	for hc, h := range errHandlers {
		t.Run(h.name, func(t *testing.T) {
			a, b, q, mode := extPair(t, hc)
			mode.Signal = devhost.SignalSet
			const sig = 900000
			binary.LittleEndian.PutUint64(b.buf[sig:], 1000) // SET ignores what was there
			copy(a.buf[300000:], "payload before its signal")
			tk, err := q.PutSignal(b.addr(300000), a.laddr(300000), 25, b.addr(sig), a.laddr(0), 0xAABBCCDD11223344, mode)
			require.NoError(t, err)
			require.NoError(t, q.Wait(tk, mode.Sharing, errBound))
			assert.Equal(t, "payload before its signal", string(b.buf[300000:300025]))
			assert.Equal(t, uint64(0xAABBCCDD11223344), binary.LittleEndian.Uint64(b.buf[sig:]))

			tk, err = q.PSignal(b.addr(400000), 0x77, b.addr(sig+8), a.laddr(0), 3, mode)
			require.NoError(t, err)
			require.NoError(t, q.Wait(tk, mode.Sharing, errBound))
			assert.Equal(t, [2]uint64{0x77, 3}, [2]uint64{binary.LittleEndian.Uint64(b.buf[400000:]), binary.LittleEndian.Uint64(b.buf[sig+8:])})

			for _, v := range []uint64{42, 7} { // set, then set lower: no add, no max
				tk, err = q.Signal(b.addr(sig), a.laddr(0), v, mode)
				require.NoError(t, err)
				require.NoError(t, q.Wait(tk, mode.Sharing, errBound))
				assert.Equal(t, v, binary.LittleEndian.Uint64(b.buf[sig:]))
			}
		})
	}
}

// TestHeadersQuietAndFence: quiet returns once everything posted from
// several threads completed; the ordering fence lets a put send what a get
// before it read; on a failing QP quiet reports the error CQE's syndrome.
func TestHeadersQuietAndFence(t *testing.T) {
	for hc, h := range errHandlers {
		t.Run(h.name, func(t *testing.T) {
			a, b, q, mode := extPair(t, hc)
			const threads, per, size = 4, 32, 256
			for i := 0; i < threads*per*size; i++ {
				a.buf[i] = byte(i*13 + 5)
			}
			var wg sync.WaitGroup
			for th := 0; th < threads; th++ {
				wg.Add(1)
				go func(th int) {
					defer wg.Done()
					for k := 0; k < per; k++ {
						off := (th*per + k) * size
						if _, err := q.Put(b.addr(off), a.laddr(off), size, mode); err != nil {
							t.Error(err)
							return
						}
					}
				}(th)
			}
			wg.Wait()
			var err error
			returnsWithin(t, errBound, "quiet", func() { err = q.QuietDirect(mode.Sharing) })
			require.NoError(t, err)
			n := threads * per * size
			assert.True(t, bytes.Equal(a.buf[:n], b.buf[:n]), "everything quiet waited for has arrived")

			copy(b.buf[500000:], "read, fenced, then written back")
			_, err = q.Get(b.addr(500000), a.laddr(600000), 31, devhost.Addr{}, false, mode)
			require.NoError(t, err)
			_, err = q.FenceExt(mode)
			require.NoError(t, err)
			_, err = q.Put(b.addr(700000), a.laddr(600000), 31, mode)
			require.NoError(t, err)
			returnsWithin(t, errBound, "quiet after the fence", func() { err = q.QuietDirect(mode.Sharing) })
			require.NoError(t, err)
			assert.Equal(t, "read, fenced, then written back", string(b.buf[700000:700031]))

			bad := b.addr(0)
			bad.Key ^= 0x01000000
			_, err = q.Put(bad, a.laddr(0), 8, mode)
			require.NoError(t, err)
			returnsWithin(t, errBound, "quiet on a failing QP", func() { err = q.QuietDirect(mode.Sharing) })
			require.ErrorIs(t, err, syscall.EIO)
			info, lerr := a.hl.GPUQP().LastError()
			require.NoError(t, lerr)
			assert.Equal(t, verbs.WCRemAccessErr, info.Status)
		})
	}
}
