package gputest

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/verbs"
)

// Operations of gt_errwait_* (GT_EW_* in the kernel file).
const (
	ewWait      = 0
	ewWaitQP    = 1
	ewPoll      = 2
	ewGetWait   = 3
	ewGetBlock  = 4
	ewRingFull  = 5
	ewCounter   = 6
	ewTimeout   = 7
	ewCollapsed = 8
)

// Where gt_errwait_* leaves its results, in the initiator's counter region.
const (
	ewRecord     = cntOff      // struct gdaki_dev_qp_error of the QP
	ewRC         = cntOff + 32 // int: the wait's return code
	ewStatus     = cntOff + 36 // int: gdaki_dev_qp_get_error's return
	ewCompRecord = cntOff + 64 // the companion's record (counter)
	ewCompStatus = cntOff + 100
)

// gpuFailure is how the kernel's operation fails on the emulated NICs.
type gpuFailure struct {
	name     string
	syndrome verbs.WCStatus
}

var (
	gpuBadRKey  = gpuFailure{"bad_rkey", verbs.WCRemAccessErr}
	gpuDeadPeer = gpuFailure{"dead_peer", verbs.WCRetryExcErr} // target QP back in RST: no ACKs
)

// gpuErrWait is one blocking device wait on a failing QP.
type gpuErrWait struct {
	name      string
	op        uint32
	collapsed bool   // on a QP whose CQ is collapsed
	index     uint64 // the index the failing poll awaited (count for the collapsed poll)
	rc        int32  // the return code the wait gives (0 for a void wait)
}

var gpuErrWaits = []gpuErrWait{
	{name: "wait_ticket", op: ewWait},
	{name: "wait_qp", op: ewWaitQP},
	{name: "poll_cq_at", op: ewPoll, rc: -5}, // awaits the flushed signal; the record names the write
	{name: "get_wait", op: ewGetWait},
	{name: "get_blocking", op: ewGetBlock},
	{name: "availability_check", op: ewRingFull},
	{name: "counter", op: ewCounter},
	{name: "poll_cq_collapsed_at", op: ewCollapsed, collapsed: true, index: 1, rc: -5},
}

// errFixture makes fresh QPs (an error leaves them in ERR) for one case.
func (e *env) errFixture(t *testing.T, hc handlerCase, collapsed bool) *fixture {
	t.Helper()
	f, err := e.newFixture(hc)
	if err != nil {
		t.Fatalf("handler %s: create and connect fresh QPs: %v", hc.name, err)
	}
	t.Cleanup(func() {
		if !e.abandoned {
			if err := f.close(e); err != nil {
				t.Errorf("release the fresh QPs: %v", err)
			}
		}
	})
	if collapsed {
		q, err := gpunetio.NewQPHL(gpunetio.QPHLConfig{GPU: e.gpu, PD: e.loc.pd, SQWQEs: sqWQEs, NICHandler: hc.qp, SendDBRModeExt: hc.ext, CQCollapsed: true})
		if err != nil {
			t.Fatalf("collapsed-CQ QP (handler %v): %v", hc.qp, err)
		}
		f.closers = append(f.closers, q.Close)
		peer, err := e.peerQP(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.checkHandler(f, "collapsed-CQ QP", q); err != nil {
			t.Fatal(err)
		}
		if err := e.connectBoth(q, peer); err != nil {
			t.Fatal(err)
		}
		f.pairs[0] = qpPair{loc: q, rem: peer}
	}
	return f
}

// devQP is the GPU address of q's device QP (gt_errwait_* takes it directly).
func devQP(t *testing.T, q *gpunetio.QPHL) uint64 {
	t.Helper()
	p, err := q.GPUQP().DeviceQP()
	if err != nil {
		t.Fatalf("device QP of QP 0x%x: %v", q.QP().QPN(), err)
	}
	return uint64(p)
}

// kill makes a target QP drop everything, as a crashed peer would.
func kill(t *testing.T, q *verbs.QP) {
	t.Helper()
	if err := q.Modify(&verbs.QPAttr{NextState: verbs.QPStateRST}, verbs.QPAttrNextState); err != nil {
		t.Fatalf("move target QP 0x%x to RST: %v", q.QPN(), err)
	}
}

// ewResult is what gt_errwait_* left in memory.
type ewResult struct {
	rec, comp       devstruct.QPError
	rc, st, compSt  int32
	recErr, compErr error
}

func (e *env) ewRead(t *testing.T) ewResult {
	t.Helper()
	im := e.read(t)
	le := binary.LittleEndian
	var r ewResult
	r.rec, r.recErr = devstruct.DecodeQPError(im.loc[ewRecord:])
	r.comp, r.compErr = devstruct.DecodeQPError(im.loc[ewCompRecord:])
	r.rc = int32(le.Uint32(im.loc[ewRC:]))
	r.st = int32(le.Uint32(im.loc[ewStatus:]))
	r.compSt = int32(le.Uint32(im.loc[ewCompStatus:]))
	return r
}

// TestGPUWaitsReturnOnError: for every NIC handler and blocking wait, a
// kernel whose operation fails (a bad rkey, or a target QP that stopped
// answering) returns from the wait by itself, reads the failure with
// gdaki_dev_qp_get_error, and the host reads the same through LastError.
// DOCA's waits spin forever there; the host-side launch timeout turns such a
// hang into a failure.
func TestGPUWaitsReturnOnError(t *testing.T) {
	e := getEnv(t)
	for _, hc := range handlerCases {
		for _, fl := range []gpuFailure{gpuBadRKey, gpuDeadPeer} {
			for _, w := range gpuErrWaits {
				t.Run(hc.name+"/"+fl.name+"/"+w.name, func(t *testing.T) {
					hc.skipUnsupported(t)
					f := e.errFixture(t, hc, w.collapsed)
					a := e.baseArgs()
					a.qps = devQP(t, f.pairs[0].loc)
					a.op, a.size, a.iters = w.op, 64, 1
					if w.op == ewRingFull {
						a.iters = sqWQEs + 1
					}
					victims := []*verbs.QP{f.pairs[0].rem.QP()}
					var main *gpunetio.QP = f.pairs[0].loc.GPUQP()
					if w.op == ewCounter {
						e.groupQPs(t, f)
						a.qps, a.cqps = devQP(t, f.group.Main), devQP(t, f.group.Companion)
						victims = []*verbs.QP{f.groupPeer[0].QP()} // only the main QP's peer dies
						main = f.group.Main.GPUQP()
					}
					if fl == gpuBadRKey {
						a.rkey ^= 0x01000000 // flip a bit of the big-endian rkey
					} else {
						for _, q := range victims {
							kill(t, q)
						}
					}
					e.load(t, newImages(nextSeed()))
					kernel := "gt_errwait_" + hc.kernel
					st := e.run(t, launch{kernel: kernel, grid: 1, block: 1, args: a})
					what := fmt.Sprintf("%s after a %s [handler %s]", w.name, fl.name, hc.name)
					if st.failures != 0 {
						t.Fatalf("%s: kernel %s reported %v", what, kernel, st)
					}
					r := e.ewRead(t)
					if r.recErr != nil {
						t.Fatalf("%s: the kernel's copy of the record: %v", what, r.recErr)
					}
					if r.rc != w.rc {
						t.Errorf("%s: the wait returned %d, want %d", what, r.rc, w.rc)
					}
					if r.st != int32(devstruct.QPErrCQE) || r.rec.Status != devstruct.QPErrCQE {
						t.Errorf("%s: gdaki_dev_qp_get_error returned %d with record %+v, want an error CQE", what, r.st, r.rec)
					}
					if r.rec.Syndrome != uint8(fl.syndrome) || r.rec.WQEIndex != w.index {
						t.Errorf("%s: record %+v: want syndrome %#x (%v) for WQE %d", what, r.rec, uint8(fl.syndrome), fl.syndrome, w.index)
					}
					info, err := main.LastError()
					if err != nil {
						t.Fatalf("%s: LastError: %v", what, err)
					}
					if !info.HasError || info.Kind != gpunetio.QPErrorCQE || info.Status != fl.syndrome || info.WQEIndex != w.index {
						t.Errorf("%s: LastError says %v, want %v for WQE %d", what, info, fl.syndrome, w.index)
					}
					if w.op == ewCounter && r.compErr != nil {
						t.Errorf("%s: the companion's record: %v", what, r.compErr)
					}
					t.Logf("%s: %v", what, info)
				})
			}
		}
	}
}

// TestGPUPollTimeout: with a poll bound set through gpunetio, a poll for a
// WQE that was never posted returns -ETIMEDOUT in the kernel and the QP
// records the timeout; LastError reports it while the QP is healthy.
func TestGPUPollTimeout(t *testing.T) {
	e := getEnv(t)
	for _, hc := range handlerCases {
		t.Run(hc.name, func(t *testing.T) {
			hc.skipUnsupported(t)
			f := e.errFixture(t, hc, false)
			q := f.pairs[0].loc.GPUQP()
			const ticks = 20_000_000 // ~10 ms of SM clock
			if err := q.SetPollTimeout(ticks); err != nil {
				t.Fatalf("SetPollTimeout: %v", err)
			}
			a := e.baseArgs()
			a.qps, a.op = devQP(t, f.pairs[0].loc), ewTimeout
			e.load(t, newImages(nextSeed()))
			start := time.Now()
			st := e.run(t, launch{kernel: "gt_errwait_" + hc.kernel, grid: 1, block: 1, args: a})
			if st.failures != 0 {
				t.Fatalf("kernel reported %v", st)
			}
			r := e.ewRead(t)
			if r.rc != -110 || r.st != int32(devstruct.QPErrTimeout) || r.rec.WQEIndex != 1 {
				t.Errorf("poll of an index never posted: rc %d, status %d, record %+v; want -ETIMEDOUT and a timeout at WQE 1", r.rc, r.st, r.rec)
			}
			info, err := q.LastError()
			if err != nil {
				t.Fatalf("LastError: %v", err)
			}
			if !info.HasError || info.Kind != gpunetio.QPErrorTimeout || info.State != verbs.QPStateRTS {
				t.Errorf("LastError says %v, want a poll timeout on a QP in RTS", info)
			}
			t.Logf("timeout after %v (host view): %v", time.Since(start).Round(time.Millisecond), info)
		})
	}
}
