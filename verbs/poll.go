package verbs

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mmio"
)

// WCStatus is a completion status: 0 for success, otherwise the mlx5 CQE
// error syndrome of the error CQE, named like ibv_wc_status.
type WCStatus uint8

const (
	WCSuccess        WCStatus = 0
	WCLocLenErr      WCStatus = 0x01
	WCLocQPOpErr     WCStatus = 0x02
	WCLocProtErr     WCStatus = 0x04
	WCWRFlushErr     WCStatus = 0x05
	WCMWBindErr      WCStatus = 0x06
	WCBadRespErr     WCStatus = 0x10
	WCLocAccessErr   WCStatus = 0x11
	WCRemInvReqErr   WCStatus = 0x12
	WCRemAccessErr   WCStatus = 0x13
	WCRemOpErr       WCStatus = 0x14
	WCRetryExcErr    WCStatus = 0x15
	WCRNRRetryExcErr WCStatus = 0x16
	WCRemAbortErr    WCStatus = 0x22
)

func (s WCStatus) String() string {
	if s == WCSuccess {
		return "IBV_WC_SUCCESS"
	}
	return mlx5.Syndrome(s).WCStatus()
}

// Error makes a status usable as an errors.Is target:
// errors.Is(wc.Err(), verbs.WCRemAccessErr) tests for that status. It
// returns the same name as String, so a status prints the same with %v and
// %s.
func (s WCStatus) Error() string { return s.String() }

// CompletionError is a work request that completed with an error: the
// error CQE's syndrome (Status), vendor syndrome and the WQE it names. WC.Err
// returns one; it unwraps to its Status, so errors.Is(err,
// verbs.WCRetryExcErr) works.
type CompletionError struct {
	QPN        uint32
	WRID       uint64 // the work request's ID, when the host posted it
	Opcode     WCOpcode
	Status     WCStatus
	VendorErr  uint8  // vendor_err_synd of the CQE
	WQECounter uint16 // SQ index (requester) or RQ index (responder) of the failed WQE
	// Cause is the check an emulated device saw fail, for WCLocProtErr and
	// WCRemAccessErr; CauseUnknown on hardware.
	Cause AccessCause
}

func (e *CompletionError) Error() string {
	if e == nil {
		return "<nil>"
	}
	s := fmt.Sprintf("%s completion on QP 0x%x for WQE %d (wr_id %d): %s (syndrome 0x%02x), vendor syndrome 0x%02x",
		e.Opcode, e.QPN, e.WQECounter, e.WRID, e.Status, uint8(e.Status), e.VendorErr)
	switch {
	case e.Cause != CauseUnknown:
		return s + ": the emulated device saw " + e.Cause.String()
	case e.Status == WCRemAccessErr:
		return s + ": likely causes: " + remAccessCauses
	case e.Status == WCLocProtErr:
		return s + ": likely causes: " + locProtCauses
	}
	return s
}

// The causes of WCRemAccessErr and WCLocProtErr a ConnectX does not tell
// apart (its vendor syndromes are undocumented), as CompletionError lists
// them.
const (
	remAccessCauses = "wrong rkey (the peer's region was deregistered, or the rkey is not the one its MR.Region gave), " +
		"address range outside the peer's region (remote address or length), " +
		"the peer's region lacks the access right (AccessRemoteWrite, AccessRemoteRead, AccessRemoteAtomic), " +
		"or the peer's QP does not allow the operation (AllowRemoteWrite, AllowRemoteRead, RemoteAtomic at its RST -> INIT)"
	locProtCauses = "wrong lkey (or a region deregistered), address range outside the local region, " +
		"a region of another PD than the QP's, or a READ or atomic into a region without AccessLocalWrite"
)

// AccessCause is the check that an emulated device saw fail in a
// WCLocProtErr or WCRemAccessErr completion (for WCRemAccessErr, the
// responder's check). A ConnectX does not say which check failed: on
// hardware the cause is CauseUnknown, and CompletionError lists the likely
// ones.
type AccessCause uint8

// The access causes, the emulated device's vendor syndromes.
const (
	CauseUnknown  AccessCause = 0
	CauseKey      AccessCause = AccessCause(mlx5.VendorSynEmuKey)      // the key names no valid region
	CausePD       AccessCause = AccessCause(mlx5.VendorSynEmuPD)       // the region belongs to another PD than the QP's
	CauseBounds   AccessCause = AccessCause(mlx5.VendorSynEmuBounds)   // the address range lies outside the region
	CauseRight    AccessCause = AccessCause(mlx5.VendorSynEmuRight)    // the region lacks the access right
	CauseQPAccess AccessCause = AccessCause(mlx5.VendorSynEmuQPAccess) // the responder QP does not allow the operation
)

func (c AccessCause) String() string {
	switch c {
	case CauseUnknown:
		return "an unknown cause"
	case CauseKey:
		return "a key that names no valid memory region (wrong key, or the region was deregistered)"
	case CausePD:
		return "a memory region of another PD than the QP's"
	case CauseBounds:
		return "an address range outside the memory region"
	case CauseRight:
		return "a memory region without the access right the operation needs"
	case CauseQPAccess:
		return "a responder QP that does not allow the operation (remote write, read or atomics not enabled)"
	}
	return fmt.Sprintf("AccessCause(0x%02x)", uint8(c))
}

// Unwrap returns the status.
func (e *CompletionError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Status
}

// Err returns nil for a successful completion and a *CompletionError for an
// error completion.
func (wc WC) Err() error {
	if wc.Status == WCSuccess {
		return nil
	}
	return &CompletionError{QPN: wc.QPN, WRID: wc.WRID, Opcode: wc.Opcode, Status: wc.Status,
		VendorErr: wc.VendorErr, WQECounter: wc.WQECounter, Cause: wc.Cause}
}

// WCOpcode says what completed.
type WCOpcode uint8

const (
	WCSend WCOpcode = iota
	WCRDMAWrite
	WCRDMARead
	WCCompSwap
	WCFetchAdd
	WCMaskedCompSwap
	WCMaskedFetchAdd
	WCNop
	WCRecv            // a SEND arrived
	WCRecvRDMAWithImm // an RDMA WRITE with immediate arrived
	WCOther
	// WCWait is the completion of a wait-on-CQ work request (WRWaitCQ;
	// DOCA reports it as IBV_WC_DRIVER1).
	WCWait
)

// WC is a work completion read from a CQ.
type WC struct {
	WRID       uint64
	Status     WCStatus
	Opcode     WCOpcode
	QPN        uint32
	ByteLen    uint32 // bytes received (responder), read (READ) or the operand size (atomics)
	Imm        uint32 // the immediate, when ImmValid
	ImmValid   bool
	WQECounter uint16 // the 16-bit WQE index the CQE reports
	VendorErr  uint8
	// Cause is, for WCLocProtErr and WCRemAccessErr completions of an
	// emulated device, the check that failed (from VendorErr); otherwise
	// CauseUnknown.
	Cause AccessCause
}

func wcOpcodeFor(c *mlx5.CQE) (WCOpcode, bool) {
	switch c.Opcode {
	case mlx5.CQERespSend, mlx5.CQERespSendInv:
		return WCRecv, false
	case mlx5.CQERespSendImm:
		return WCRecv, true
	case mlx5.CQERespWrImm:
		return WCRecvRDMAWithImm, true
	case mlx5.CQERespErr:
		return WCRecv, false
	}
	switch c.WQEOpcode {
	case mlx5.WQEOpRDMAWrite, mlx5.WQEOpRDMAWriteImm:
		return WCRDMAWrite, false
	case mlx5.WQEOpSend, mlx5.WQEOpSendImm, mlx5.WQEOpSendInval:
		return WCSend, false
	case mlx5.WQEOpRDMARead:
		return WCRDMARead, false
	case mlx5.WQEOpAtomicCS:
		return WCCompSwap, false
	case mlx5.WQEOpAtomicFA:
		return WCFetchAdd, false
	case mlx5.WQEOpAtomicMaskedCS:
		return WCMaskedCompSwap, false
	case mlx5.WQEOpAtomicMaskedFA:
		return WCMaskedFetchAdd, false
	case mlx5.WQEOpNop:
		return WCNop, false
	case mlx5.WQEOpWait:
		return WCWait, false
	}
	return WCOther, false
}

// cqQPs maps QP numbers to the QPs that use a CQ, for the host poller, and
// remembers the QPs that used it and were closed: their leftover CQEs are
// dropped (rdma-core cleans them from the CQ when it destroys the QP).
type cqQPs struct {
	mu   sync.RWMutex
	qps  map[uint32]*QP
	gone map[uint32]struct{}
}

func (c *cqQPs) add(q *QP) {
	c.mu.Lock()
	if c.qps == nil {
		c.qps = map[uint32]*QP{}
	}
	c.qps[q.qpn] = q
	delete(c.gone, q.qpn)
	c.mu.Unlock()
}

func (c *cqQPs) remove(q *QP) {
	c.mu.Lock()
	if c.qps[q.qpn] == q {
		delete(c.qps, q.qpn)
		if c.gone == nil {
			c.gone = map[uint32]struct{}{}
		}
		c.gone[q.qpn] = struct{}{}
	}
	c.mu.Unlock()
}

// get returns the QP numbered qpn, or nil and whether a closed QP had
// that number.
func (c *cqQPs) get(qpn uint32) (*QP, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if q := c.qps[qpn]; q != nil {
		return q, false
	}
	_, gone := c.gone[qpn]
	return nil, gone
}

func (c *cqQPs) all() []*QP {
	c.mu.RLock()
	defer c.mu.RUnlock()
	l := make([]*QP, 0, len(c.qps))
	for _, q := range c.qps {
		l = append(l, q)
	}
	return l
}

// CQStatus is the state of a completion queue as the device reports it
// (cqc.status of QUERY_CQ). A CQ leaves CQStatusOK only for good: the
// device then writes no more completions to it and moves every QP that
// completes to it to ERR.
type CQStatus uint8

// The CQ statuses.
const (
	CQStatusOK        CQStatus = 0x0
	CQStatusOverflow  CQStatus = 0x9 // a CQE found the ring full (overrun)
	CQStatusWriteFail CQStatus = 0xa // the device could not write a CQE to the ring
)

// Error makes a status usable as an errors.Is target:
// errors.Is(err, verbs.CQStatusOverflow).
func (s CQStatus) Error() string { return s.String() }

// CQError is a completion queue the device put in error: the CQ number
// and the status QUERY_CQ reports. Poll, PollWait and CQ.Err return it
// (through an *Error with ErrIOFailed); it unwraps to its Status.
type CQError struct {
	CQN    uint32
	Status CQStatus
}

func (e *CQError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("CQ 0x%x is in error: %s (cqc.status 0x%x); the device writes no more completions to it and its QPs are in ERR",
		e.CQN, e.Status, uint8(e.Status))
}

// Unwrap returns the status.
func (e *CQError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Status
}

func cqFailure(op string, q *CQ, e *CQError) *Error {
	return &Error{Op: op, Code: ErrIOFailed, Msg: q.userName(), Err: e}
}

// cqStatusEvery is how often an idle Poll asks the device whether the CQ
// went to error without a full ring having been consumed (a failed CQE
// write, an overrun of a CQ shared by QPs that Poll does not see).
const cqStatusEvery = 10 * time.Millisecond

// Poll reads up to len(wcs) completions without blocking and returns how
// many it read. Error completions are returned as WCs with a non-zero
// Status, not as errors; an error completion also tells Poll that its QP
// is in ERR (QP.State). An error means the CQ cannot be polled from the
// host (a collapsed CQ, use after Close), holds a CQE that no QP of this CQ
// can have written (ErrUnexpected: an external ring that was not
// initialised), or is in error (ErrIOFailed wrapping a *CQError: overrun, or
// a failed CQE write). Once the CQ is in error, Poll still returns the
// completions the device wrote before, then that error on every call.
//
// Poll learns of a CQ error by asking the device (QUERY_CQ) when it finds
// the ring empty after a whole ring of completions since it last asked (an
// overrun needs that many), and at most every 10 ms otherwise, so an
// overrun is reported by the first Poll that finds nothing after reading
// the completions that fitted.
func (q *CQ) Poll(wcs []WC) (int, error) {
	const op = "doca_verbs_poll_cq"
	if q == nil {
		return 0, newErr(op, ErrInvalidValue, "nil CQ")
	}
	if err := q.enter(op, "CQ"); err != nil {
		return 0, err
	}
	defer q.leave()
	if q.sdk != nil {
		return 0, openOnly(op, "the host data path (CQ.Poll)")
	}
	if q.cfg.Collapsed {
		return 0, newErr(op, ErrNotSupported, "CQ 0x%x is collapsed: only its entry 0 is written; read it directly", q.cqn)
	}
	q.pollMu.Lock()
	defer q.pollMu.Unlock()
	ring := mem(q.ring, int(q.entries)*cqeSize)
	logSize := uint(log2(uint64(q.entries)))
	n, start := 0, q.ci
	var err error
	for n < len(wcs) {
		slot := q.ci & (q.entries - 1)
		b := ring[slot*cqeSize : (slot+1)*cqeSize]
		if !mlx5.CQEOwned(b[63], q.ci, logSize) {
			break
		}
		mmio.ReadBarrier()
		c, derr := mlx5.DecodeCQE(b)
		if derr != nil {
			err = wrapErr(op, ErrUnexpected, derr, "CQE %d of CQ 0x%x", q.ci, q.cqn)
			break
		}
		qp, gone := q.qps.get(c.QPN)
		if qp == nil && !gone {
			err = newErr(op, ErrUnexpected, "CQE %d of CQ 0x%x names QP 0x%x, which never completed to this CQ (was the external ring initialised?)", q.ci, q.cqn, c.QPN)
			break
		}
		q.ci++
		if qp == nil {
			continue // a closed QP's leftover
		}
		fillWC(&wcs[n], qp, &c)
		n++
	}
	if q.ci != start {
		mmio.WriteBarrier()
		mmio.Store32(ptr(q.dbr), mlx5.BE32Native(q.ci&0xffffff))
	}
	if err != nil || n > 0 {
		return n, err
	}
	if e := q.failed.Load(); e != nil {
		return 0, cqFailure(op, q, e)
	}
	return 0, q.checkStatus(op)
}

// checkStatus asks the device for the CQ's status when a whole ring of
// completions went by since it last asked, or cqStatusEvery; q.pollMu is
// held.
func (q *CQ) checkStatus(op string) error {
	if now := time.Now(); q.ci-q.checkCI >= q.entries || now.Sub(q.checkAt) >= cqStatusEvery {
		q.checkCI, q.checkAt = q.ci, now
		if e, err := q.queryStatus(op); err != nil {
			return err
		} else if e != nil {
			return cqFailure(op, q, e)
		}
	}
	return nil
}

// fillWC converts CQE c of qp into wc and retires its work request.
func fillWC(wc *WC, qp *QP, c *mlx5.CQE) {
	*wc = WC{QPN: c.QPN, ByteLen: c.ByteCnt, WQECounter: c.WQECounter}
	wc.Opcode, wc.ImmValid = wcOpcodeFor(c)
	if wc.ImmValid {
		wc.Imm = c.ImmInvalPKey
	}
	if c.Opcode.IsError() {
		wc.Status, wc.VendorErr = WCStatus(c.Syndrome), c.VendorSyndrome
		if (wc.Status == WCLocProtErr || wc.Status == WCRemAccessErr) && qp.ctx.Driver() == "emu" &&
			wc.VendorErr >= mlx5.VendorSynEmuKey && wc.VendorErr <= mlx5.VendorSynEmuQPAccess {
			wc.Cause = AccessCause(wc.VendorErr)
		}
		qp.sawError()
	}
	switch {
	case c.Opcode == mlx5.CQEReq || c.Opcode == mlx5.CQEReqErr:
		wc.WRID = qp.post.complete(c.WQECounter)
	case qp.cfg.SRQ != nil:
		wc.WRID = qp.cfg.SRQ.recv.complete(c.WQECounter)
	default:
		wc.WRID = qp.post.rq.complete(c.WQECounter)
	}
}

// queryStatus asks the device for the CQ's status (QUERY_CQ). On an error
// status it records it (every later Poll and post fails with it) and marks
// the QPs of the CQ as in ERR, where the device put them. q is entered.
func (q *CQ) queryStatus(op string) (*CQError, error) {
	if e := q.failed.Load(); e != nil {
		return e, nil
	}
	in, err := mlx5.QueryCQIn(q.cqn).Marshal()
	if err != nil {
		return nil, wrapErr(op, ErrUnexpected, err, "build QUERY_CQ")
	}
	out := make([]byte, mlx5.QueryCQOutLen)
	if err := q.obj.Query(in, out); err != nil {
		return nil, driverErr(op, err, "QUERY_CQ 0x%x", q.cqn)
	}
	o, err := mlx5.UnmarshalQueryCQOut(out)
	if err != nil {
		return nil, wrapErr(op, ErrUnexpected, err, "QUERY_CQ 0x%x output", q.cqn)
	}
	if o.CQC.Status == uint8(CQStatusOK) {
		return nil, nil
	}
	e := &CQError{CQN: q.cqn, Status: CQStatus(o.CQC.Status)}
	if !q.failed.CompareAndSwap(nil, e) {
		return q.failed.Load(), nil
	}
	for _, qp := range q.qps.all() {
		qp.sawError()
	}
	return e, nil
}

// Err asks the device whether the CQ is in error (QUERY_CQ): nil while it
// is not, else an *Error with ErrIOFailed wrapping the *CQError. It works
// on every CQ, host or GPU polled (Poll checks by itself).
func (q *CQ) Err() error {
	const op = "CQ.Err"
	if q == nil {
		return newErr(op, ErrInvalidValue, "nil CQ")
	}
	if err := q.enter(op, "CQ"); err != nil {
		return err
	}
	defer q.leave()
	if q.sdk != nil {
		return openOnly(op, "CQ.Err (the SDK reports no CQ status)")
	}
	e, err := q.queryStatus(op)
	if err != nil {
		return err
	}
	if e != nil {
		return cqFailure(op, q, e)
	}
	return nil
}

// PollWait polls until at least min completions have been read into wcs or
// the timeout expires (ErrTimeOut, with the completions read so far). It
// spins, then yields the processor between polls (so a thread that
// completes the work, such as the emulator's engine, can run), then sleeps
// 20 us between polls. A CQ in error ends the wait with Poll's error; a
// timeout first asks the device, so a CQ error is never reported as a
// timeout. A timeout of 0 or less polls once and returns at once.
//
// PollWait is a bounded busy wait: a wait of any length costs CPU while it
// lasts (about 5% of a core once it sleeps between polls). To wait without
// a bound use PollWaitContext; to wait without burning CPU, create the CQ
// with a completion channel and block on CompChannel.GetEvent, the
// documented blocking way.
func (q *CQ) PollWait(wcs []WC, min int, timeout time.Duration) (int, error) {
	const op = "doca_verbs_poll_cq"
	if q == nil {
		return 0, newErr(op, ErrInvalidValue, "nil CQ")
	}
	if min > len(wcs) {
		return 0, newErr(op, ErrInvalidValue, "waiting for %d completions with room for %d", min, len(wcs))
	}
	deadline := time.Now().Add(timeout)
	got := 0
	for spins := 0; ; spins++ {
		n, err := q.Poll(wcs[got:])
		got += n
		if err != nil || got >= min {
			return got, err
		}
		if time.Now().After(deadline) {
			if err := q.Err(); err != nil {
				return got, &Error{Op: op, Code: codeOf(err), Msg: fmt.Sprintf("%d of %d completions on CQ 0x%x", got, min, q.cqn), Err: err}
			}
			return got, newErr(op, ErrTimeOut, "%d of %d completions on CQ 0x%x after %v", got, min, q.cqn, timeout)
		}
		switch {
		case spins < 64:
		case spins < 4096:
			runtime.Gosched() // let the thread that completes the work run
		default:
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// PollWaitContext polls as PollWait does until at least min completions
// have been read into wcs or ctx is done, with no other bound: with
// context.Background it waits as long as the completions take. A ctx
// ended by its deadline is ErrTimeOut and a cancelled one ErrShutdown,
// both wrapping ctx.Err(), with the completions read so far; a CQ in error
// ends the wait with Poll's error. It polls (busy, then every 20 us); the
// blocking wait without CPU cost is a completion channel
// (CompChannel.GetEvent).
func (q *CQ) PollWaitContext(ctx context.Context, wcs []WC, min int) (int, error) {
	const op = "doca_verbs_poll_cq"
	if q == nil {
		return 0, newErr(op, ErrInvalidValue, "nil CQ")
	}
	if ctx == nil {
		return 0, newErr(op, ErrInvalidValue, "nil context.Context")
	}
	if min > len(wcs) {
		return 0, newErr(op, ErrInvalidValue, "waiting for %d completions with room for %d", min, len(wcs))
	}
	got := 0
	for spins := 0; ; spins++ {
		n, err := q.Poll(wcs[got:])
		got += n
		if err != nil || got >= min {
			return got, err
		}
		if ctx.Err() != nil {
			if err := q.Err(); err != nil {
				return got, &Error{Op: op, Code: codeOf(err), Msg: fmt.Sprintf("%d of %d completions on CQ 0x%x", got, min, q.cqn), Err: err}
			}
			code := ErrShutdown
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				code = ErrTimeOut
			}
			return got, wrapErr(op, code, ctx.Err(), "%d of %d completions on CQ 0x%x", got, min, q.cqn)
		}
		switch {
		case spins < 64:
		case spins < 4096:
			runtime.Gosched()
		default:
			time.Sleep(20 * time.Microsecond)
		}
	}
}
