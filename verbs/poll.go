package verbs

import (
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
}

func (e *CompletionError) Error() string {
	return fmt.Sprintf("%s completion on QP 0x%x for WQE %d (wr_id %d): %s (syndrome 0x%02x), vendor syndrome 0x%02x",
		e.Opcode, e.QPN, e.WQECounter, e.WRID, e.Status, uint8(e.Status), e.VendorErr)
}

// Unwrap returns the status.
func (e *CompletionError) Unwrap() error { return e.Status }

// Err returns nil for a successful completion and a *CompletionError for an
// error completion.
func (wc WC) Err() error {
	if wc.Status == WCSuccess {
		return nil
	}
	return &CompletionError{QPN: wc.QPN, WRID: wc.WRID, Opcode: wc.Opcode, Status: wc.Status,
		VendorErr: wc.VendorErr, WQECounter: wc.WQECounter}
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
)

var wcOpNames = [...]string{"SEND", "RDMA_WRITE", "RDMA_READ", "COMP_SWAP", "FETCH_ADD", "MASKED_COMP_SWAP",
	"MASKED_FETCH_ADD", "NOP", "RECV", "RECV_RDMA_WITH_IMM", "OTHER"}

func (o WCOpcode) String() string {
	if int(o) < len(wcOpNames) {
		return wcOpNames[o]
	}
	return fmt.Sprintf("WCOpcode(%d)", uint8(o))
}

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
	}
	return WCOther, false
}

// cqQPs maps QP numbers to the QPs that use a CQ, for the host poller.
type cqQPs struct {
	mu  sync.RWMutex
	qps map[uint32]*QP
}

func (c *cqQPs) add(q *QP) {
	c.mu.Lock()
	if c.qps == nil {
		c.qps = map[uint32]*QP{}
	}
	c.qps[q.qpn] = q
	c.mu.Unlock()
}

func (c *cqQPs) remove(q *QP) {
	c.mu.Lock()
	delete(c.qps, q.qpn)
	c.mu.Unlock()
}

func (c *cqQPs) get(qpn uint32) *QP {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.qps[qpn]
}

// Poll reads up to len(wcs) completions without blocking and returns how
// many it read. Error completions are returned as WCs with a non-zero
// Status, not as errors; an error means the CQ cannot be polled from the
// host (a collapsed CQ, use after Close) or holds a corrupt CQE.
func (q *CQ) Poll(wcs []WC) (int, error) {
	const op = "doca_verbs_poll_cq"
	if err := q.use(op); err != nil {
		return 0, err
	}
	if q.cfg.Collapsed {
		return 0, newErr(op, ErrNotSupported, "CQ 0x%x is collapsed: only its entry 0 is written; read it directly", q.cqn)
	}
	q.pollMu.Lock()
	defer q.pollMu.Unlock()
	ring := mem(q.ring, int(q.entries)*cqeSize)
	logSize := uint(log2(uint64(q.entries)))
	n := 0
	for n < len(wcs) {
		slot := q.ci & (q.entries - 1)
		b := ring[slot*cqeSize : (slot+1)*cqeSize]
		if !mlx5.CQEOwned(b[63], q.ci, logSize) {
			break
		}
		mmio.ReadBarrier()
		c, err := mlx5.DecodeCQE(b)
		if err != nil {
			return n, wrapErr(op, ErrUnexpected, err, "CQE %d of CQ 0x%x", q.ci, q.cqn)
		}
		wc := &wcs[n]
		*wc = WC{QPN: c.QPN, ByteLen: c.ByteCnt, WQECounter: c.WQECounter}
		wc.Opcode, wc.ImmValid = wcOpcodeFor(&c)
		if wc.ImmValid {
			wc.Imm = c.ImmInvalPKey
		}
		if c.Opcode.IsError() {
			wc.Status, wc.VendorErr = WCStatus(c.Syndrome), c.VendorSyndrome
		}
		if qp := q.users.get(c.QPN); qp != nil {
			switch {
			case c.Opcode == mlx5.CQEReq || c.Opcode == mlx5.CQEReqErr:
				wc.WRID = qp.post.complete(c.WQECounter)
			case qp.cfg.SRQ != nil:
				wc.WRID = qp.cfg.SRQ.recv.complete(c.WQECounter)
			default:
				wc.WRID = qp.post.rq.complete(c.WQECounter)
			}
		}
		q.ci++
		n++
	}
	if n > 0 {
		mmio.WriteBarrier()
		mmio.Store32(ptr(q.dbr), mlx5.BE32Native(q.ci&0xffffff))
	}
	return n, nil
}

// PollWait polls until at least min completions have been read into wcs or
// the timeout expires (ErrTimeOut, with the completions read so far). It
// spins, then yields the processor between polls (so a thread that
// completes the work, such as the emulator's engine, can run), then sleeps
// 20 us between polls.
func (q *CQ) PollWait(wcs []WC, min int, timeout time.Duration) (int, error) {
	if min > len(wcs) {
		return 0, newErr("doca_verbs_poll_cq", ErrInvalidValue, "waiting for %d completions with room for %d", min, len(wcs))
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
			return got, newErr("doca_verbs_poll_cq", ErrTimeOut, "%d of %d completions on CQ 0x%x after %v", got, min, q.cqn, timeout)
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
