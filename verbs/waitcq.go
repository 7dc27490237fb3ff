package verbs

import (
	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mmio"
)

// Wait-on-CQ work requests (the SDK's doca_verbs_bridge_set_wait_cq_pi_wr):
// a WAIT WQE on a send queue stalls that queue until a CQ has produced a
// given CQE; the work requests posted after it start only then. This is how
// the DOCA Verbs "wait CQ WR" sample chains two QPs so that one sends only
// after the other's completion, without the host in between.

// SetWaitCQPIWR fills wr as a wait-on-CQ work request
// (doca_verbs_bridge_set_wait_cq_pi_wr): posted with QP.PostSend, it stalls
// the QP's send queue until CQ cq has produced the CQE at index waitPI
// (CQE indexes count from 0 at the CQ's creation and run modulo 2^24, as
// the WAIT segment's max_index does), that is until cq's producer index
// passes waitPI. CQ.ProducerIndex and CQ.ConsumerIndex give the current
// positions: to wait for the next n completions of a CQ whose completions
// have all been polled, use ConsumerIndex()+n-1.
//
// Only wr.Opcode (WRWaitCQ), wr.WaitCQ and wr.WaitIndex are set; WRID,
// Signaled and Fence are the caller's. A signaled wait completes with
// opcode WCWait (DOCA: IBV_WC_DRIVER1) once it releases. The QP that posts
// it must be created with QPConfig.CoreDirectMaster (qpc.cd_master, which
// needs DeviceAttr.CoreDirect), and cq must be a CQ of the same device.
// DOCA further requires the waiting QP and the watched CQ to share a UAR
// page; this package does not (the emulator has no such limit; on hardware,
// give both the same QPConfig.UAR and CQConfig.UAR when in doubt).
func SetWaitCQPIWR(cq *CQ, waitPI uint32, wr *SendWR) error {
	const op = "doca_verbs_bridge_set_wait_cq_pi_wr"
	if wr == nil {
		return newErr(op, ErrInvalidValue, "nil work request")
	}
	if err := cq.check(op); err != nil {
		return err
	}
	if waitPI > cqIndexMask {
		return newErr(op, ErrInvalidValue, "wait index 0x%x does not fit the WAIT segment's 24 bits", waitPI)
	}
	wr.Opcode, wr.WaitCQ, wr.WaitIndex = WRWaitCQ, cq, waitPI
	return nil
}

// cqIndexMask keeps the 24 bits of a CQ index that the CQ doorbell record
// and the WAIT segment carry.
const cqIndexMask = 1<<24 - 1

// check refuses a nil or zero-value CQ and a closed one.
func (q *CQ) check(op string) error {
	if q == nil {
		return newErr(op, ErrInvalidValue, "nil CQ")
	}
	return q.use(op, "CQ")
}

// waitWQE builds the WAIT WQE of a wait-on-CQ work request.
func (q *QP) waitWQE(op string, wr *SendWR, h mlx5.WQEHead) (mlx5.WQE, error) {
	if !q.cfg.CoreDirectMaster {
		return mlx5.WQE{}, newErr(op, ErrNotSupported, "QP 0x%x posts a wait-on-CQ work request but was created without QPConfig.CoreDirectMaster (qpc.cd_master)", q.qpn)
	}
	c := wr.WaitCQ
	if err := c.check(op); err != nil {
		return mlx5.WQE{}, wrapErr(op, codeOf(err), err, "wait-on-CQ work request")
	}
	if c.ctx != q.ctx {
		return mlx5.WQE{}, newErr(op, ErrInvalidValue, "wait-on-CQ work request watches CQ 0x%x of %s, not of the QP's device %s", c.cqn, c.ctx.Name(), q.ctx.Name())
	}
	if wr.WaitIndex > cqIndexMask {
		return mlx5.WQE{}, newErr(op, ErrInvalidValue, "wait index 0x%x does not fit 24 bits", wr.WaitIndex)
	}
	if wr.SGL != nil || wr.InlineData != nil {
		return mlx5.WQE{}, newErr(op, ErrInvalidValue, "a wait-on-CQ work request carries no data")
	}
	return mlx5.NewWait(h, c.cqn, wr.WaitIndex), nil
}

// ConsumerIndex is the CQ's consumer index (doca_verbs_bridge_get_current_cq_ci):
// how many CQEs the host poller (Poll) has consumed since the CQ was
// created, modulo 2^24 as the doorbell record holds it. 0 for a nil CQ.
func (q *CQ) ConsumerIndex() uint32 {
	if q == nil || q.sdk != nil {
		return 0
	}
	q.pollMu.Lock()
	defer q.pollMu.Unlock()
	return q.ci & cqIndexMask
}

// ProducerIndex is the CQ's producer index as the host sees it: the
// consumer index plus the CQEs the device has written and Poll has not
// consumed yet (read by owner bit, without consuming them), modulo 2^24.
// It is the index the next CQE will take, so a wait-on-CQ work request
// with SetWaitCQPIWR(cq, cq.ProducerIndex(), ...) waits for the next
// completion. The ring must be in host memory, as for Poll: a CQ with a
// GPU ring, a collapsed CQ or an SDK CQ is ErrNotSupported.
func (q *CQ) ProducerIndex() (uint32, error) {
	const op = "CQ.ProducerIndex"
	if q == nil {
		return 0, newErr(op, ErrInvalidValue, "nil CQ")
	}
	if err := q.enter(op, "CQ"); err != nil {
		return 0, err
	}
	defer q.leave()
	if q.sdk != nil {
		return 0, openOnly(op, "the host data path (CQ.ProducerIndex)")
	}
	if q.cfg.Collapsed {
		return 0, newErr(op, ErrNotSupported, "CQ 0x%x is collapsed: it has no producer index to read", q.cqn)
	}
	q.pollMu.Lock()
	defer q.pollMu.Unlock()
	ring := mem(q.ring, int(q.entries)*cqeSize)
	logSize := uint(log2(uint64(q.entries)))
	pi := q.ci
	for pi-q.ci < q.entries {
		slot := pi & (q.entries - 1)
		if !mlx5.CQEOwned(ring[slot*cqeSize+63], pi, logSize) {
			break
		}
		pi++
	}
	mmio.ReadBarrier()
	return pi & cqIndexMask, nil
}
