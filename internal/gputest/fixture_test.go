package gputest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

// handlerCase is one NIC handler configuration: how the initiator QPs are
// created and which kernel instantiation (nic_handler template argument)
// drives them.
type handlerCase struct {
	name   string
	qp     gpunetio.NICHandler
	ext    gpunetio.SendDBRModeExt
	kernel string // suffix of the kernel names: auto, proxy, db, nodbr
	// want is the runtime handler the QPs must resolve to; NICHandlerAuto
	// accepts any.
	want gpunetio.NICHandler
	cx8  bool // needs the emulator's ConnectX-8 model
}

var handlerCases = []handlerCase{
	{name: "AUTO", qp: gpunetio.NICHandlerAuto, ext: gpunetio.SendDBRValid, kernel: "auto", want: gpunetio.NICHandlerAuto},
	{name: "CPU_PROXY", qp: gpunetio.NICHandlerCPUProxy, ext: gpunetio.SendDBRValid, kernel: "proxy", want: gpunetio.NICHandlerCPUProxy},
	{name: "GPU_SM_DB", qp: gpunetio.NICHandlerGPUSMDB, ext: gpunetio.SendDBRValid, kernel: "db", want: gpunetio.NICHandlerGPUSMDB},
	{name: "GPU_SM_NO_DBR", qp: gpunetio.NICHandlerGPUSMDB, ext: gpunetio.SendNoDBRHW, kernel: "nodbr", want: gpunetio.NICHandlerGPUSMNoDBR, cx8: true},
	// The AUTO kernel on a CPU_PROXY QP: the handler is read from the QP at run time.
	{name: "AUTO_kernel_on_CPU_PROXY_QP", qp: gpunetio.NICHandlerCPUProxy, ext: gpunetio.SendDBRValid, kernel: "auto", want: gpunetio.NICHandlerCPUProxy},
}

// skipUnsupported skips a handler case the emulator model cannot run.
func (hc handlerCase) skipUnsupported(t *testing.T) {
	t.Helper()
	if hc.cx8 && os.Getenv(emuModelEnv) != "cx8" {
		t.Skipf("%s needs %s=cx8 (it is %q)", hc.name, emuModelEnv, os.Getenv(emuModelEnv))
	}
}

// qpPair is an initiator QP on emu0 connected to a target QP on emu1.
type qpPair struct {
	loc, rem *gpunetio.QPHL
}

// fixture is the QPs of one handler case: two independent pairs (EXCLUSIVE
// tests give one to each thread or warp; GPU-shared tests use the first;
// submit_multi_qps uses both) and, on demand, a main+companion group whose
// QPs are connected to two target QPs.
type fixture struct {
	hc        handlerCase
	pairs     [2]qpPair
	qps       *gpunetio.Mem // device array of the two initiators' device QPs
	group     *gpunetio.QPGroupHL
	groupPeer [2]*gpunetio.QPHL
	main      *gpunetio.Mem // device array {group main}
	comp      *gpunetio.Mem // device array {group companion}
	monitored []*gpunetio.QP
	closers   []func() error
}

// fixture returns the cached fixture of hc, creating it on first use.
func (e *env) fixture(t *testing.T, hc handlerCase) *fixture {
	t.Helper()
	if f := e.fix[hc.name]; f != nil {
		return f
	}
	f, err := e.newFixture(hc)
	if err != nil {
		t.Fatalf("handler %s: create and connect the QPs: %v", hc.name, err)
	}
	e.fix[hc.name] = f
	return f
}

func (e *env) newFixture(hc handlerCase) (f *fixture, err error) {
	f = &fixture{hc: hc}
	defer func() {
		if err != nil {
			if cerr := f.close(e); cerr != nil {
				err = fmt.Errorf("%w (clean-up: %v)", err, cerr)
			}
			f = nil
		}
	}()
	var ptrs []cuda.DevPtr
	for i := range f.pairs {
		p, err := e.newPair(f, hc)
		if err != nil {
			return nil, fmt.Errorf("QP pair %d: %w", i, err)
		}
		f.pairs[i] = p
		dp, err := p.loc.GPUQP().DeviceQP()
		if err != nil {
			return nil, fmt.Errorf("QP pair %d: device QP: %w", i, err)
		}
		ptrs = append(ptrs, cuda.DevPtr(dp))
	}
	if f.qps, err = e.devArray(f, ptrs); err != nil {
		return nil, err
	}
	return f, nil
}

// checkHandler checks the handler a QP of the fixture resolved to and hands
// the QP to the CPU service when it needs one.
func (e *env) checkHandler(f *fixture, what string, q *gpunetio.QPHL) error {
	if f.hc.want != gpunetio.NICHandlerAuto && q.NICHandler() != f.hc.want {
		return fmt.Errorf("%s resolved to NIC handler %v, the %s kernels need %v", what, q.NICHandler(), f.hc.kernel, f.hc.want)
	}
	if q.GPUQP().CPUAssisted() {
		if err := e.svc.Monitor(q.GPUQP()); err != nil {
			return fmt.Errorf("%s: CPU service: %w", what, err)
		}
		f.monitored = append(f.monitored, q.GPUQP())
	}
	return nil
}

func (e *env) newPair(f *fixture, hc handlerCase) (qpPair, error) {
	var p qpPair
	var err error
	p.loc, err = gpunetio.NewQPHL(gpunetio.QPHLConfig{GPU: e.gpu, PD: e.loc.pd, SQWQEs: sqWQEs, NICHandler: hc.qp, SendDBRModeExt: hc.ext})
	if err != nil {
		return p, fmt.Errorf("initiator QP on emu0 (handler %v, DBR mode %v): %w", hc.qp, hc.ext, err)
	}
	f.closers = append(f.closers, p.loc.Close)
	if p.rem, err = e.peerQP(f); err != nil {
		return p, err
	}
	if err := e.checkHandler(f, "initiator QP", p.loc); err != nil {
		return p, err
	}
	return p, e.connectBoth(p.loc, p.rem)
}

// peerQP creates a target QP on emu1 (it never posts).
func (e *env) peerQP(f *fixture) (*gpunetio.QPHL, error) {
	q, err := gpunetio.NewQPHL(gpunetio.QPHLConfig{GPU: e.gpu, PD: e.rem.pd, SQWQEs: peerWQEs, NICHandler: gpunetio.NICHandlerAuto, SendDBRModeExt: gpunetio.SendDBRValid})
	if err != nil {
		return nil, fmt.Errorf("target QP on emu1: %w", err)
	}
	f.closers = append(f.closers, q.Close)
	return q, nil
}

// groupQPs creates the main+companion group of the fixture on first use.
func (e *env) groupQPs(t *testing.T, f *fixture) {
	t.Helper()
	if f.group != nil {
		return
	}
	if err := e.newGroup(f); err != nil {
		t.Fatalf("handler %s: create and connect the counter QP group: %v", f.hc.name, err)
	}
}

func (e *env) newGroup(f *fixture) error {
	g, err := gpunetio.NewQPGroupHL(gpunetio.QPHLConfig{GPU: e.gpu, PD: e.loc.pd, SQWQEs: sqWQEs, NICHandler: f.hc.qp, SendDBRModeExt: f.hc.ext})
	if err != nil {
		return fmt.Errorf("QP group on emu0 (handler %v, DBR mode %v): %w", f.hc.qp, f.hc.ext, err)
	}
	f.closers = append(f.closers, g.Close)
	f.group = g
	for i, q := range []*gpunetio.QPHL{g.Main, g.Companion} {
		what := [...]string{"group main QP", "group companion QP"}[i]
		if err := e.checkHandler(f, what, q); err != nil {
			return err
		}
		if f.groupPeer[i], err = e.peerQP(f); err != nil {
			return err
		}
		if err := e.connectBoth(q, f.groupPeer[i]); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	mp, err := g.Main.GPUQP().DeviceQP()
	if err != nil {
		return fmt.Errorf("group main QP: device QP: %w", err)
	}
	cp, err := g.Companion.GPUQP().DeviceQP()
	if err != nil {
		return fmt.Errorf("group companion QP: device QP: %w", err)
	}
	if f.main, err = e.devArray(f, []cuda.DevPtr{cuda.DevPtr(mp)}); err != nil {
		return err
	}
	f.comp, err = e.devArray(f, []cuda.DevPtr{cuda.DevPtr(cp)})
	return err
}

// devArray copies device QP pointers into a GPU array.
func (e *env) devArray(f *fixture, ptrs []cuda.DevPtr) (*gpunetio.Mem, error) {
	m, err := e.gpu.MemAlloc(uintptr(8*len(ptrs)), 8, gpunetio.MemGPU)
	if err != nil {
		return nil, fmt.Errorf("allocate a device QP array: %w", err)
	}
	f.closers = append(f.closers, m.Free)
	b := make([]byte, 8*len(ptrs))
	for i, p := range ptrs {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(p))
	}
	if err := e.ctx.MemcpyHtoD(cuda.DevPtr(m.Dev), b); err != nil {
		return nil, fmt.Errorf("copy the device QP array: %w", err)
	}
	return m, nil
}

// close unmonitors the QPs, then releases the rest in reverse order.
func (f *fixture) close(e *env) error {
	var errs []error
	for _, q := range f.monitored {
		errs = append(errs, e.svc.Unmonitor(q))
	}
	f.monitored = nil
	for i := len(f.closers) - 1; i >= 0; i-- {
		errs = append(errs, f.closers[i]())
	}
	f.closers = nil
	return errors.Join(errs...)
}

func (e *env) connectBoth(loc, rem *gpunetio.QPHL) error {
	if err := connect(loc.QP(), rem.QP(), e.rem.gid); err != nil {
		return fmt.Errorf("connect emu0 QP 0x%x to emu1 QP 0x%x: %w", loc.QP().QPN(), rem.QP().QPN(), err)
	}
	if err := connect(rem.QP(), loc.QP(), e.loc.gid); err != nil {
		return fmt.Errorf("connect emu1 QP 0x%x to emu0 QP 0x%x: %w", rem.QP().QPN(), loc.QP().QPN(), err)
	}
	return nil
}

// connect moves qp through INIT and RTR to RTS towards peer (RoCE, GID peerGID).
func connect(qp, peer *verbs.QP, peerGID verbs.GID) error {
	if err := qp.Modify(&verbs.QPAttr{NextState: verbs.QPStateINIT, PortNum: 1, AllowRemoteWrite: true, AllowRemoteRead: true, RemoteAtomic: verbs.AtomicUpTo8Bytes},
		verbs.QPAttrNextState|verbs.QPAttrPKeyIndex|verbs.QPAttrPortNum|verbs.QPAttrAllowRemoteWrite|verbs.QPAttrAllowRemoteRead|verbs.QPAttrAtomicMode); err != nil {
		return fmt.Errorf("RST->INIT: %w", err)
	}
	if err := qp.Modify(&verbs.QPAttr{NextState: verbs.QPStateRTR, PathMTU: verbs.MTU4096, DestQPNum: peer.QPN(),
		AH: &verbs.AHAttr{GID: peerGID, AddrType: verbs.AddrTypeIPv4, HopLimit: 255}, MinRNRTimer: 1, MaxDestRDAtomic: 16},
		verbs.QPAttrNextState|verbs.QPAttrPathMTU|verbs.QPAttrRQPSN|verbs.QPAttrDestQPNum|verbs.QPAttrAHAttr|verbs.QPAttrMinRNRTimer|verbs.QPAttrMaxDestRDAtomic); err != nil {
		return fmt.Errorf("INIT->RTR: %w", err)
	}
	if err := qp.Modify(&verbs.QPAttr{NextState: verbs.QPStateRTS, AckTimeout: 14, RetryCnt: 7, RNRRetry: 1, MaxRDAtomic: 16},
		verbs.QPAttrNextState|verbs.QPAttrSQPSN|verbs.QPAttrAckTimeout|verbs.QPAttrRetryCnt|verbs.QPAttrRNRRetry|verbs.QPAttrMaxQPRDAtomic); err != nil {
		return fmt.Errorf("RTR->RTS: %w", err)
	}
	return nil
}
