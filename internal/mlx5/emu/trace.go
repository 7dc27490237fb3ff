package emu

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// Stage timing. StartBreakdown makes every NIC of the process stamp the
// stages of each RDMA WRITE or SEND it sends, and the NIC that executes it
// stamp when the data landed; StopBreakdown returns the mean time between
// stages. It serves latency breakdowns (write_lat: one message in flight
// per QP): with several messages in flight on one QP the stages of
// different messages overlap, and only the newest is followed. Both NICs
// must be in this process (the stamps share one clock).
//
// Stages of one message, requester then responder then requester:
//
//	doorbell  the engine took the doorbell that announced the WQE
//	wqe       the WQE was read (with the DBR, in one batch)
//	payload   the payload was read from its buffer (a device copy)
//	landed    the responder wrote the payload into its buffer
//	cqe       the requester's CQE was written (after the ACK)

// Breakdown is the mean duration of each stage over the messages followed
// from doorbell to CQE.
type Breakdown struct {
	Messages       int
	DoorbellToWQE  time.Duration // the DBR and WQE read
	WQEToPayload   time.Duration // the payload read from its buffer
	PayloadToLand  time.Duration // the transport and the write at the responder
	LandToCQE      time.Duration // the ACK back and the CQE written
	DoorbellToLand time.Duration // everything the peer's kernel waits for
}

// tracer holds the stamps of the messages in flight, per requester QP.
type tracer struct {
	mu   sync.Mutex
	msgs map[traceKey]*traceMsg
	sum  [5]time.Duration
	n    int
}

type traceKey struct {
	gid wire.GID
	qpn uint32
}

type traceMsg struct {
	idx                                 uint16
	doorbell, wqe, payload, landed, cqe time.Time
}

var tracing atomic.Pointer[tracer]

// StartBreakdown starts following messages (see Breakdown), forgetting
// what an earlier run gathered.
func StartBreakdown() {
	tracing.Store(&tracer{msgs: map[traceKey]*traceMsg{}})
}

// StopBreakdown stops following messages and returns the means.
func StopBreakdown() Breakdown {
	t := tracing.Swap(nil)
	if t == nil {
		return Breakdown{}
	}
	t.mu.Lock() // a stamp that loaded the tracer before the swap may still be adding
	defer t.mu.Unlock()
	if t.n == 0 {
		return Breakdown{}
	}
	d := func(i int) time.Duration { return t.sum[i] / time.Duration(t.n) }
	return Breakdown{Messages: t.n, DoorbellToWQE: d(0), WQEToPayload: d(1), PayloadToLand: d(2), LandToCQE: d(3), DoorbellToLand: d(4)}
}

// Stages traceStage stamps.
const (
	stageDoorbell = iota
	stageWQE
	stagePayload
	stageCQE
)

// traceStage stamps a stage of the message of QP q (the requester).
func (q *qp) traceStage(stage int, idx uint16) {
	if tracing.Load() != nil {
		traceAt(traceKey{gid: wire.GID(q.nic.gid), qpn: q.qpn}, stage, idx)
	}
}

// traceAt stamps a stage of the message of the requester QP k.
func traceAt(k traceKey, stage int, idx uint16) {
	t := tracing.Load()
	if t == nil {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.msgs[k]
	switch stage {
	case stageDoorbell:
		t.msgs[k] = &traceMsg{doorbell: now}
		return
	case stageWQE:
		if m != nil && m.wqe.IsZero() {
			m.wqe, m.idx = now, idx
		}
		return
	case stagePayload:
		if m != nil && m.payload.IsZero() && m.idx == idx {
			m.payload = now
		}
		return
	}
	if m == nil || m.idx != idx || m.payload.IsZero() || m.landed.IsZero() {
		return
	}
	m.cqe = now
	t.sum[0] += m.wqe.Sub(m.doorbell)
	t.sum[1] += m.payload.Sub(m.wqe)
	t.sum[2] += m.landed.Sub(m.payload)
	t.sum[3] += m.cqe.Sub(m.landed)
	t.sum[4] += m.landed.Sub(m.doorbell)
	t.n++
	delete(t.msgs, k)
}

// traceLanded stamps, at the responder, that the last data of a message
// from QP qpn at gid landed.
func traceLanded(gid wire.GID, qpn uint32) {
	t := tracing.Load()
	if t == nil {
		return
	}
	now := time.Now()
	t.mu.Lock()
	if m := t.msgs[traceKey{gid: gid, qpn: qpn}]; m != nil && !m.payload.IsZero() && m.landed.IsZero() {
		m.landed = now
	}
	t.mu.Unlock()
}
