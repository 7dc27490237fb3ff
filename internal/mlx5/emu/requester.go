package emu

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// Kinds of outstanding send WQEs.
const (
	kLocal  = iota // completes without the wire (NOP, WAIT, DUMP, UC sends, local errors)
	kAcked         // WRITE / SEND: done when an ACK covers its last PSN
	kRead          // READ: done when its last response arrived
	kAtomic        // atomics: done when the ATOMIC ACK arrived
)

// target is a resolved local buffer: a span and a byte offset in it.
type target struct {
	mem *span
	off uint64
	len uint64
}

// outEntry is the requester's record of one WQE between transmission and
// completion, kept in the slot of its first WQEBB.
type outEntry struct {
	idx      uint16
	bbs      uint16
	op       uint8
	kind     uint8
	signaled bool
	done     bool
	partial  bool   // WRITE/SEND whose frames are not all transmitted yet
	sentOff  uint64 // message bytes transmitted so far
	syn      mlx5.Syndrome
	vendor   uint8  // vendor syndrome of an error CQE: what the failed check was
	first    uint32 // first PSN
	last     uint32 // last PSN transmitted so far
	end      uint32 // last PSN of the whole message (a NAK may name it after go-back-N rewound last)
	byteCnt  uint32
	got      uint64
	sg       []target // READ scatter list
	res      target   // atomic result buffer
	masked   bool
	size     int
}

// requester is the send side of a QP; guarded by qp.mu and run by the
// NIC's engine goroutine.
type requester struct {
	pi, ci, send uint16 // producer, oldest uncompleted, next to transmit (WQEBB indexes)
	hsend        uint16 // one past the furthest WQE ever started (go-back-N rewinds send, not this)
	npsn         uint32 // PSN of the next packet to transmit
	hpsn         uint32 // one past the highest PSN ever transmitted (go-back-N rewinds npsn, not this)
	lastAcked    uint32
	ent          []outEntry
	nRA          int
	partial      bool   // the WQE at cur has frames left to transmit (its wqe is w)
	cur          uint16 // index of that WQE
	stalled      bool   // the last transmit stopped on a congested link
	held         bool   // this transmit sent frames with Hold (flushed at its end)
	retries      int
	rnrRetries   int
	lastProgress time.Time
	rnrUntil     time.Time

	buf     [localBBs * wqebb]byte
	pd      dwqe // a WQE plainWQE decoded for transmit
	w       wqe
	f       wire.Frame
	tg      [maxSGEPerWQE]target
	scratch []byte

	// An SQ ring in device memory is read into mirror, a host copy of the
	// whole ring, every WQE between the last index read (mirEnd) and the
	// producer index with one batch of copies. Software rewrites a slot
	// only after its WQE completed, and the engine reads a WQE before it
	// completes, so mirror holds what software published from the
	// consumer index up to mirEnd.
	mirror []byte
	mirEnd uint16
	dbrBuf [4]byte
	rb     batch
	pf     prefetch
	// The last lookup of an MR by L_Key (mr.go).
	mrs mrCache
	ref refPayload // the payload of a frame sent by reference (inproc.go)
}

func (r *requester) init(q *qp) {
	*r = requester{scratch: r.scratch, mirror: r.mirror, pf: prefetch{buf: r.pf.buf, unpin: r.pf.unpin}}
	if !q.noSQ {
		r.ent = make([]outEntry, 1<<q.sqLog)
		if q.wq.mem.gpu != nil && len(r.mirror) != wqebb<<q.sqLog {
			r.mirror = make([]byte, wqebb<<q.sqLog)
		}
	}
}

func (q *qp) slot(i uint16) int { return int(i) & (1<<q.sqLog - 1) }

// dist is b - a in the 16-bit WQEBB index space.
func dist(a, b uint16) int { return int(b - a) }

// psnLE reports a <= b in 24-bit serial-number arithmetic.
func psnLE(a, b uint32) bool { return (b-a)&mask24 < 1<<23 }

// advance moves the next PSN by k packets, keeping the high-water mark.
func (r *requester) advance(k uint32) {
	r.npsn = (r.npsn + k) & mask24
	if !psnLE(r.npsn, r.hpsn) {
		r.hpsn = r.npsn
	}
}

// inWindow reports whether a response PSN names a packet this requester
// has transmitted and not yet seen acknowledged: lastAcked < psn < hpsn,
// or psn == lastAcked when dupOK (a repeated ACK).
func (r *requester) inWindow(psn uint32, dupOK bool) bool {
	d := (psn - r.lastAcked) & mask24
	if d == 0 {
		return dupOK
	}
	return d <= (r.hpsn-1-r.lastAcked)&mask24 && d < 1<<23
}

// poll runs the QP's send side once: read the DBR, flush in ERR, transmit,
// check the ACK timer. It reports whether anything happened and, when a
// timer runs, when it expires (zero otherwise), so the engine never sleeps
// past it.
func (q *qp) poll(now time.Time) (work bool, next time.Time) {
	if q.noSQ {
		if q.state.Load() == stERR {
			return q.flushRecvs(now)
		}
		return false, time.Time{}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dead {
		return false, time.Time{}
	}
	r := &q.req
	size := 1 << q.sqLog
	if !q.noDBR {
		if q.dbr.mem.gpu == nil {
			// A DBR in host memory costs a load: read it every round, so
			// that no doorbell is needed at all (a CPU proxy).
			if v, err := q.dbr.mem.load32(q.doff + mlx5.QPDBRSendOffset); err == nil {
				if pi := uint16(v); dist(r.ci, pi) <= size {
					r.pi = pi
				}
			}
		} else if q.dbrKick.Load() && q.dbrKick.Swap(false) && !q.readPushed(now) {
			// (Load first: a Swap writes the line of state, which the
			// responder reads on every request, even when nothing changes.)
			q.readDBR()
		}
	} else if q.kick.Load() {
		if quiet := epoch.Add(time.Duration(q.pageDB.Load())).Add(recoverQuiet); now.Before(quiet) {
			next = quiet
		} else if q.recoverDoorbells(now) {
			q.kick.Store(false)
		} else {
			next = q.scanAt.Add(recoverQuiet)
		}
	}
	switch q.state.Load() {
	case stERR:
		w := q.flush()
		rw, rnext := q.flushRecvs(now)
		return w || rw, earliest(next, rnext)
	case stRTS:
	default:
		return false, next
	}
	p := q.transmit(now)
	t, deadline := q.timers(now)
	if t {
		p = true
	}
	return p, earliest(next, deadline)
}

// earliest returns the earlier of two deadlines, a zero one meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// readDBR reads a send DBR in device memory, as a ConnectX does when a
// doorbell arrives, and, in the same batch of copies, the WQEs the QP's
// newest doorbell announced (from the last index read up to the doorbell's
// producer index: software rings only once they are complete). The DBR
// stays the authority for the producer index; the doorbell only tells how
// far to read ahead. A failed read leaves the producer index as it was. The
// same batch copies the payloads guessed for those WQEs (prefetch.go).
func (q *qp) readDBR() {
	r := &q.req
	size := 1 << q.sqLog
	t0, from := timelineStart(), r.mirEnd
	defer func() { noteSince("dbr-read", q.qpn, int64(r.pi), int64(dist(from, r.mirEnd)), t0) }()
	b := &r.rb
	b.read(q.dbr.mem, q.doff+mlx5.QPDBRSendOffset, r.dbrBuf[:])
	end := r.mirEnd
	guessed := false
	if h := q.dbHint.Load(); h&hintValid != 0 && q.wq.mem.gpu != nil {
		hint := uint16(h)
		if d := dist(r.mirEnd, hint); d > 0 && dist(r.ci, r.mirEnd)+d <= size {
			q.readRing(b, r.mirEnd, hint)
			end = hint
			guessed = q.addGuess(b, hint, q.dbr.mem.gpu)
		}
	}
	if b.run() != nil {
		// Perhaps only the read ahead failed: the DBR alone, and the WQEs
		// again when they are executed (and fail there).
		b.read(q.dbr.mem, q.doff+mlx5.QPDBRSendOffset, r.dbrBuf[:])
		if b.run() != nil {
			return
		}
		end, guessed = r.mirEnd, false
	}
	r.pf.g.valid = guessed
	r.mirEnd = end
	pi := uint16(binary.BigEndian.Uint32(r.dbrBuf[:]))
	if dist(r.ci, pi) <= size {
		r.pi = pi
	}
}

// readRing adds to b the copies of SQ slots [from, to) into the mirror
// (one copy, or two where the range wraps).
func (q *qp) readRing(b *batch, from, to uint16) {
	r := &q.req
	for from != to {
		s := q.slot(from)
		n := min(dist(from, to), 1<<q.sqLog-s)
		b.read(q.wq.mem, q.sqOff+uint64(s)*wqebb, r.mirror[s*wqebb:(s+n)*wqebb])
		from += uint16(n)
	}
}

// hintValid marks dbHint as holding a doorbell's producer index.
const hintValid = 1 << 16

// advancePI applies a DBR-less doorbell carrying a new producer index.
func (q *qp) advancePI(pi uint16) {
	r := &q.req
	if d := dist(r.ci, pi); d <= 1<<q.sqLog && d > dist(r.ci, r.pi) {
		r.pi = pi
	}
}

// recoverQuiet is how long a UAR page must have been silent, and a
// candidate WQE unchanged, before a DBR-less QP takes a WQE whose doorbell it
// never saw (see doc.go).
const recoverQuiet = 500 * time.Microsecond

// recoverDoorbells finds WQEs of a DBR-less QP whose doorbell was
// overwritten on the shared UAR page by another QP's. It runs once the page
// has been quiet for recoverQuiet: starting at the known producer index, a
// WQE whose ctrl segment names this QP with the expected wqe_index, and
// whose bytes were identical in two scans at least recoverQuiet apart, is
// taken as posted. It reports whether the scan is finished (no candidate
// left); false asks to be called again.
func (q *qp) recoverDoorbells(now time.Time) bool {
	r := &q.req
	size := 1 << q.sqLog
	for dist(r.ci, r.pi) < size {
		first := q.scanTmp[:wqebb]
		if q.wq.mem.read(first, q.sqOff+uint64(q.slot(r.pi))*wqebb) != nil {
			return true
		}
		_, idx, _, qpn, ds := mlx5.DecodeCtrlHead(first)
		bbs := mlx5.WQEBBs(ds)
		if qpn != q.qpn || idx != r.pi || ds == 0 || dist(r.ci, r.pi)+bbs > size {
			q.scanLen = 0
			return true
		}
		for i := 1; i < bbs; i++ {
			if q.wq.mem.read(q.scanTmp[i*wqebb:(i+1)*wqebb], q.sqOff+uint64(q.slot(r.pi+uint16(i)))*wqebb) != nil {
				return true
			}
		}
		n := bbs * wqebb
		if q.scanLen != n || q.scanIdx != r.pi || string(q.scanBuf[:n]) != string(q.scanTmp[:n]) {
			copy(q.scanBuf[:n], q.scanTmp[:n])
			q.scanIdx, q.scanLen, q.scanAt = r.pi, n, now
			return false
		}
		if now.Sub(q.scanAt) < recoverQuiet {
			return false
		}
		q.scanLen = 0
		r.pi += uint16(bbs)
	}
	return true
}

// flush completes every WQE from the consumer index to the producer index
// with WR_FLUSH_ERR (the QP is in ERR), one error CQE each.
func (q *qp) flush() bool {
	r := &q.req
	r.partial = false
	if r.ci == r.pi {
		r.send, r.hsend = r.ci, r.ci
		return false
	}
	for r.ci != r.pi {
		var op uint8
		var bbs int
		if dist(r.ci, r.send) > 0 {
			e := &r.ent[q.slot(r.ci)]
			op, bbs = e.op, int(e.bbs)
		} else {
			q.readWQE(r.ci, &r.buf, &r.w)
			op, bbs = r.w.opcode, r.w.bbs
			r.send = r.ci + uint16(bbs)
		}
		if dist(r.ci, r.pi) < bbs {
			bbs = dist(r.ci, r.pi)
		}
		q.scq.push(cqe{opcode: cqeReqErr, wqeOp: op, qpn: q.qpn, wqeCount: r.ci, uidx: q.uidx, syndrome: uint8(mlx5.SyndromeWRFlushErr)})
		r.ci += uint16(bbs)
	}
	r.send, r.hsend = r.ci, r.ci
	r.nRA = 0
	r.pf.clear() // the WQEs it read ahead are flushed, and their slots will be posted again
	return true
}

// fail completes entry e with an error syndrome.
func (q *qp) fail(e *outEntry, syn mlx5.Syndrome) {
	if !e.done && (e.kind == kRead || e.kind == kAtomic) {
		q.req.nRA--
	}
	e.done, e.syn = true, syn
}

// complete writes the CQEs of finished WQEs, in posting order. The CQEs
// of one call complete at one instant and carry one timestamp, read once
// (the clock costs about 0.1 us on some hosts, a CQE's encoding less).
func (q *qp) complete(now time.Time) {
	r := &q.req
	var ts uint64
	for r.ci != r.send {
		e := &r.ent[q.slot(r.ci)]
		if !e.done {
			break
		}
		if e.syn != 0 {
			// The QP is in ERR (QUERY_QP says so) before its error CQE
			// can be seen. The error CQE is its report: a requester
			// error raises no QP event.
			q.toError(evNone)
			q.scq.push(cqe{opcode: cqeReqErr, wqeOp: e.op, qpn: q.qpn, wqeCount: e.idx, uidx: q.uidx, syndrome: uint8(e.syn), vendor: e.vendor})
			r.ci += e.bbs
			q.flush()
			return
		}
		if e.signaled {
			// A CQ in error takes no CQE and has moved its QPs to ERR.
			if ts == 0 {
				ts = uint64(time.Since(epoch))
			}
			q.scq.push(cqe{opcode: cqeReq, wqeOp: e.op, qpn: q.qpn, wqeCount: e.idx, byteCnt: e.byteCnt, uidx: q.uidx, ts: ts})
		}
		e.sg = nil
		r.ci += e.bbs
		r.lastProgress = now
	}
}

// goBack restarts transmission at the oldest uncompleted WQE (go-back-N).
func (q *qp) goBack() {
	r := &q.req
	if r.ci == r.send {
		return
	}
	r.npsn = r.ent[q.slot(r.ci)].first
	r.send = r.ci
	r.nRA = 0
	r.partial = false
}

// timers checks the ACK timeout of the oldest outstanding WQE. It reports
// whether it acted, and when it next needs to look (zero: no timer runs).
// A WQE that cannot even start because the link to the peer is congested
// is timed as if it were outstanding: a peer that stopped reading costs its
// requester (retry_count+1) ACK timeouts, never more.
func (q *qp) timers(now time.Time) (bool, time.Time) {
	r := &q.req
	if now.Before(r.rnrUntil) {
		r.lastProgress = now // waiting out an RNR NAK
		return false, r.rnrUntil
	}
	if r.ci == r.send && !r.stalled {
		r.lastProgress = now // nothing outstanding
		return false, time.Time{}
	}
	if q.ackTimeout == 0 {
		return false, time.Time{}
	}
	if exp := r.lastProgress.Add(q.ackTimeout); now.Before(exp) {
		return false, exp
	}
	r.retries++
	r.lastProgress = now
	if r.retries > int(q.retryCount) {
		if r.ci == r.send {
			q.failHead(mlx5.SyndromeTransportRetryExcErr)
		} else {
			q.fail(&r.ent[q.slot(r.ci)], mlx5.SyndromeTransportRetryExcErr)
		}
		q.complete(now)
		return true, time.Time{}
	}
	q.goBack()
	return true, now.Add(q.ackTimeout)
}

// failHead fails the WQE at the send index, which never got a frame out.
func (q *qp) failHead(syn mlx5.Syndrome) {
	r := &q.req
	if r.send == r.pi {
		return
	}
	q.readWQE(r.send, &r.buf, &r.w)
	bbs := min(r.w.bbs, dist(r.send, r.pi))
	e := &r.ent[q.slot(r.send)]
	*e = outEntry{idx: r.send, bbs: uint16(bbs), op: r.w.opcode, kind: kLocal, first: r.npsn, last: (r.npsn - 1) & mask24}
	q.fail(e, syn)
	r.send += uint16(bbs)
	r.started()
	r.stalled = false
}

// started records the send index as the furthest transmission reached.
func (r *requester) started() {
	if dist(r.ci, r.send) > dist(r.ci, r.hsend) {
		r.hsend = r.send
	}
}

// transmit executes WQEs from the send index up to the producer index.
// The port never waits: a frame it cannot queue (the link to the peer is
// congested) is not lost but sent again in a later round, from where the
// message stopped, as a NIC's transmitter is paced by its link.
func (q *qp) transmit(now time.Time) bool {
	r := &q.req
	if now.Before(r.rnrUntil) {
		return false
	}
	progress := false
	t0, from := timelineStart(), r.send
	defer func() {
		if progress {
			noteSince("transmit", q.qpn, int64(from), int64(r.send), t0)
		}
	}()
	wasStalled := r.stalled
	r.stalled = false
	for q.state.Load() == stRTS {
		if r.partial {
			e := &r.ent[q.slot(r.cur)]
			if e.done { // failed by a NAK meanwhile
				r.partial, e.partial = false, false
				continue
			}
			before := e.sentOff
			syn, done := q.sendMessage(&r.w, e)
			if e.sentOff != before {
				progress = true
			}
			if syn != 0 {
				r.partial, e.partial = false, false
				q.fail(e, syn)
				progress = true
				break
			}
			if !done {
				r.stalled = true
				break // congested: the rest goes in a later round
			}
			r.partial, e.partial = false, false
			if q.uc {
				e.done = true
			}
			continue
		}
		if r.send == r.pi {
			break
		}
		w := &r.w
		var syn mlx5.Syndrome
		if !r.pf.take(r.send, w) {
			// Not decoded by a walk (none ran: the cover read again, or a
			// host ring): the plain shapes straight from the mirror, the
			// rest with the PRM parser.
			if q.plainWQE(r.send, &r.pd) {
				r.pd.fill(r.send, w)
			} else {
				syn = q.readWQE(r.send, &r.buf, w)
			}
		}
		q.traceStage(stageWQE, r.send)
		if dist(r.send, r.pi) < w.bbs {
			// The producer index ends inside the WQE: software published
			// a partial WQE (rdma-core and gpunetio publish whole ones).
			syn = mlx5.SyndromeLocalQPOpErr
			w.bbs = dist(r.send, r.pi)
		}
		e := &r.ent[q.slot(r.send)]
		if syn == 0 && (w.fm == 2 || w.fm == 3 || w.fm == 4) && r.nRA > 0 {
			break // fence: wait for earlier READs/atomics
		}
		isRA := w.opcode == uint8(mlx5.WQEOpRDMARead) || w.opcode == uint8(mlx5.WQEOpAtomicCS) ||
			w.opcode == uint8(mlx5.WQEOpAtomicFA) || w.opcode == uint8(mlx5.WQEOpAtomicMaskedCS) || w.opcode == uint8(mlx5.WQEOpAtomicMaskedFA)
		if syn == 0 && isRA && r.nRA >= q.maxRA {
			break // log_sra_max outstanding READs/atomics
		}
		if syn == 0 && w.opcode == uint8(mlx5.WQEOpWait) {
			if !q.cdM {
				syn = mlx5.SyndromeLocalQPOpErr
			} else if c := q.nic.cqByNum(w.waitCQN & mask24); c == nil {
				syn = mlx5.SyndromeLocalQPOpErr
			} else if d := (c.produced() - (w.waitIndex + 1)) & mask24; d >= 1<<23 {
				break // the awaited CQE is not there yet
			}
		}
		if r.ci == r.send && !wasStalled {
			// The ACK timer starts with the oldest outstanding WQE, also
			// when the link is congested and not a frame of it leaves (it
			// then keeps running from here). The round's clock was read
			// before its doorbells were taken and may predate this WQE's
			// post, by as long as the engine slept: the engine reads a
			// fresh one, so that the error never comes before
			// (retry_cnt+1) ACK timeouts from the post.
			r.lastProgress = now
			if !q.nic.manual {
				r.lastProgress = q.nic.now()
			}
		}
		// Cleared in place, then filled (as frame does).
		*e = outEntry{}
		e.idx, e.bbs, e.op, e.signaled, e.kind = r.send, uint16(w.bbs), w.opcode, w.ce >= 2, kLocal
		e.first, e.last = r.npsn, (r.npsn-1)&mask24
		if syn == 0 {
			var again bool
			if syn, again = q.execute(w, e); again {
				r.stalled = true
				break // congested before any of it went out: again later
			}
		}
		if syn != 0 {
			e.kind = kLocal
			q.fail(e, syn)
			r.send += uint16(w.bbs)
			r.started()
			progress = true
			break
		}
		r.send += uint16(w.bbs)
		r.started()
		progress = true
	}
	if r.held {
		r.held = false
		q.nic.port.Flush(wire.GID(q.rgid)) // the frames a link holds back (wire.Frame.Hold)
	}
	if progress {
		q.complete(now)
	}
	return progress
}

// holdMax is the largest frame payload transmit lets a shared-memory link
// hold back while more frames follow (wire.Frame.Hold).
const holdMax = 2 << 10

// resolve checks the local SGEs of w against the QP's PD and MRs and fills
// r.tg; need is the right the NIC uses the memory with.
func (q *qp) resolve(w *wqe, need mlx5.Access) bool {
	r := &q.req
	for i := 0; i < w.nsge; i++ {
		s := w.sges[i]
		m := r.mrs.lookup(q.nic, s.lkey)
		if m == nil {
			return false
		}
		off, ok := m.check(q.pd, s.addr, s.len, need)
		if !ok {
			return false
		}
		r.tg[i] = target{mem: m.mem, off: off, len: s.len}
	}
	return true
}

// resolveCause names the local check that resolve(w, need) failed, as
// the error CQE's vendor syndrome.
func (q *qp) resolveCause(w *wqe, need mlx5.Access) uint8 {
	for i := 0; i < w.nsge; i++ {
		s := w.sges[i]
		if c := q.req.mrs.lookup(q.nic, s.lkey).cause(q.pd, s.addr, s.len, need); c != 0 {
			return c
		}
	}
	return 0
}

// execute starts one valid WQE: local checks, then its packets. again
// reports that the port could not take its first frame (congestion):
// nothing happened, and the WQE is to be executed again later.
func (q *qp) execute(w *wqe, e *outEntry) (syn mlx5.Syndrome, again bool) {
	r := &q.req
	op := mlx5.WQEOpcode(w.opcode)
	switch op {
	case mlx5.WQEOpNop, mlx5.WQEOpWait:
		e.done = true
		return 0, false
	case mlx5.WQEOpDump:
		if !q.resolve(w, 0) {
			e.vendor = q.resolveCause(w, 0)
			return mlx5.SyndromeLocalProtErr, false
		}
		e.byteCnt = uint32(w.length)
		e.done = true
		return 0, false
	}
	if w.length > 1<<q.logMsgMax {
		return mlx5.SyndromeLocalLengthErr, false
	}
	e.byteCnt = uint32(w.length)
	switch op {
	case mlx5.WQEOpRDMAWrite, mlx5.WQEOpRDMAWriteImm, mlx5.WQEOpSend, mlx5.WQEOpSendImm, mlx5.WQEOpSendInval:
		if !w.isInl && !q.resolve(w, 0) {
			e.vendor = q.resolveCause(w, 0)
			return mlx5.SyndromeLocalProtErr, false
		}
		if !w.isInl && w.nsge > 0 && r.tg[0].mem.gpu != nil && !q.again(w) {
			q.prefetchFrom(w.idx) // this payload and the next ones, in one batch
		}
		e.kind = kAcked
		e.partial = true
		e.end = (r.npsn + uint32(packets(w.length, q.mtu)) - 1) & mask24
		syn, done := q.sendMessage(w, e)
		switch {
		case syn != 0:
			e.partial = false
			return syn, false
		case !done && e.sentOff == 0:
			return 0, true // not a frame went out (a sent frame, even empty, moves sentOff or finishes)
		case !done:
			r.cur, r.partial = r.send, true // the rest in later rounds
			return 0, false
		}
		e.partial = false
		if q.uc {
			e.done = true
		}
		return 0, false
	case mlx5.WQEOpRDMARead:
		if !q.resolve(w, mlx5.AccessLocalWrite) {
			e.vendor = q.resolveCause(w, mlx5.AccessLocalWrite)
			return mlx5.SyndromeLocalProtErr, false
		}
		n := packets(w.length, q.mtu)
		f := q.frame(wire.OpReadRequest)
		f.RETH = wire.RETH{VA: w.raddr, RKey: w.rkey, DMALength: uint32(w.length)}
		f.AckReq = true
		if congested(q.nic.port.Send(f)) {
			return 0, true
		}
		e.kind = kRead
		e.sg = append([]target(nil), r.tg[:w.nsge]...)
		e.last = (r.npsn + uint32(n) - 1) & mask24
		e.end = e.last
		r.advance(uint32(n))
		r.nRA++
		return 0, false
	default: // atomics
		if !q.resolve(w, mlx5.AccessLocalWrite) {
			e.vendor = q.resolveCause(w, mlx5.AccessLocalWrite)
			return mlx5.SyndromeLocalProtErr, false
		}
		var f *wire.Frame
		switch op {
		case mlx5.WQEOpAtomicCS:
			f = q.frame(wire.OpCompareSwap)
		case mlx5.WQEOpAtomicFA:
			f = q.frame(wire.OpFetchAdd)
		case mlx5.WQEOpAtomicMaskedCS:
			f = q.frame(wire.OpMaskedCompareSwap)
		default:
			f = q.frame(wire.OpMaskedFetchAdd)
		}
		f.Atomic = wire.AtomicETH{VA: w.raddr, RKey: w.rkey, SwapAdd: w.swapAdd, Compare: w.compare,
			SwapMask: w.swapMask, CompareMask: w.compareMask, FieldBoundary: w.boundary, Size: uint8(w.size)}
		f.AckReq = true
		if congested(q.nic.port.Send(f)) {
			return 0, true
		}
		e.kind = kAtomic
		e.res = r.tg[0]
		e.masked = w.masked
		e.size = w.size
		e.byteCnt = uint32(w.size)
		e.last, e.end = r.npsn, r.npsn
		r.advance(1)
		r.nRA++
		return 0, false
	}
}

// congested reports whether a Send failed only because the link to the
// peer had no room (the frame was not queued and must be sent again). Any
// other failure loses the frame like a dropped packet: ACK timeouts and
// retransmission recover, or retry-exceeded reports the peer gone.
func congested(err error) bool { return err != nil && errors.Is(err, wire.ErrCongested) }

// packets is the number of packets of a message of n bytes.
func packets(n uint64, mtu int) int {
	if n <= uint64(mtu) {
		return 1 // a small message: no division
	}
	return int((n + uint64(mtu) - 1) / uint64(mtu))
}

// frame resets the QP's reusable frame for a packet of opcode op with the
// next PSN (the caller advances npsn).
func (q *qp) frame(op wire.Opcode) *wire.Frame {
	r := &q.req
	f := &r.f
	// Cleared in place, then filled member by member: a literal is built
	// on the stack in narrow stores and copied here in wide loads, which
	// stalls store forwarding on amd64 (a tenth of a small WRITE's cost).
	*f = wire.Frame{}
	f.Opcode, f.DstQPN, f.PSN, f.SrcQPN = op, q.remoteQPN, r.npsn, q.qpn
	f.SrcGID, f.DstGID = wire.GID(q.nic.gid), wire.GID(q.rgid)
	return f
}

// Frames and packets. A wire frame stands for one or more consecutive
// packets of a message: all but the last of a message carry a whole number
// of path-MTU packets (up to frameChunk bytes), and a frame of k packets
// uses k PSNs (the first is the frame's PSN). The PSN accounting, the
// message limits, ACKs and retransmission are those of MTU packets; only
// the number of frames on the emulated wire is smaller.
const maxFrameBytes = 1 << 20

// frameChunk is the largest multiple of the MTU that fits in a frame.
func frameChunk(mtu int) int { return maxFrameBytes / mtu * mtu }

// sendMessage sends (the rest of) a WRITE or SEND message in frames of
// whole MTU packets, from e.sentOff on. Every frame asks for an ACK (ACKs
// are cumulative, so a long message shows progress, and its sender's ACK
// timer restarts, as frames land). done is false when the port had no room
// for a frame: e.sentOff says where to go on. A local buffer deregistered
// under it stops the message with LOCAL_PROT_ERR.
func (q *qp) sendMessage(w *wqe, e *outEntry) (syn mlx5.Syndrome, done bool) {
	r := &q.req
	op := mlx5.WQEOpcode(w.opcode)
	write := op == mlx5.WQEOpRDMAWrite || op == mlx5.WQEOpRDMAWriteImm
	imm := op == mlx5.WQEOpRDMAWriteImm || op == mlx5.WQEOpSendImm
	inv := op == mlx5.WQEOpSendInval
	chunk := uint64(frameChunk(q.mtu))
	for off := e.sentOff; ; {
		size := min(w.length-off, chunk)
		first, last := off == 0, off+size == w.length
		var code wire.Opcode
		switch {
		case write && first && last && imm:
			code = wire.OpWriteOnlyImm
		case write && first && last:
			code = wire.OpWriteOnly
		case write && first:
			code = wire.OpWriteFirst
		case write && last && imm:
			code = wire.OpWriteLastImm
		case write && last:
			code = wire.OpWriteLast
		case write:
			code = wire.OpWriteMiddle
		case first && last && imm:
			code = wire.OpSendOnlyImm
		case first && last && inv:
			code = wire.OpSendOnlyInv
		case first && last:
			code = wire.OpSendOnly
		case first:
			code = wire.OpSendFirst
		case last && imm:
			code = wire.OpSendLastImm
		case last && inv:
			code = wire.OpSendLastInv
		case last:
			code = wire.OpSendLast
		default:
			code = wire.OpSendMiddle
		}
		f := q.frame(code)
		if write && first {
			f.RETH = wire.RETH{VA: w.raddr, RKey: w.rkey, DMALength: uint32(w.length)}
		}
		if last {
			if imm {
				f.Imm = w.imm
			}
			if inv {
				f.InvRKey = binary.BigEndian.Uint32(w.imm[:])
			}
			f.SE = w.se && code.AllowsSE()
		}
		f.AckReq = !q.uc
		// A small frame with more to follow in this round (the rest of the
		// message, or the WQEs after it) may wait in a shared-memory link
		// for the ones after it: transmit flushes when it stops.
		f.Hold = size <= holdMax && (!last || dist(w.idx, r.pi) > w.bbs)
		r.held = r.held || f.Hold
		placed, err := q.sendInPlace(w, f, off, size, last)
		if err == errGather {
			return mlx5.SyndromeLocalProtErr, false
		}
		if !placed {
			payload, pinned, ok := q.gather(w, off, size)
			if !ok {
				return mlx5.SyndromeLocalProtErr, false
			}
			if last {
				q.traceStage(stagePayload, w.idx)
			}
			f.Payload = payload
			err = q.nic.port.Send(f)
			if pinned != nil {
				pinned.unpin()
			}
			f.Payload = nil
		}
		if congested(err) {
			return 0, false
		}
		k := uint32(packets(size, q.mtu))
		e.last = (r.npsn + k - 1) & mask24
		r.advance(k)
		off += size
		e.sentOff = off
		if last {
			return 0, true
		}
	}
}

// inPlaceMin is the smallest frame payload the requester reads straight
// into the shared-memory ring of its connection (wire.Port.SendInPlace)
// instead of reading it ahead into its own buffer and having the frame's
// encoding copy it: below, batching the reads of many payloads pays more.
const inPlaceMin = 256 << 10

// errGather is the fill error of a payload that could not be read (a
// buffer deregistered, a failed device copy): LOCAL_PROT_ERR.
var errGather = errors.New("emu: the payload could not be read")

// sendInPlace sends frame f with the n message bytes at off of w without
// reading them ahead, when the frame is large, not inline and not read
// ahead: by reference to a NIC of this process, which lands them with one
// copy (sendByRef, inproc.go), or read straight into the wire's
// shared-memory ring when the QP's peer is reached through one now.
// placed reports whether it tried (err is then Send's, or errGather).
func (q *qp) sendInPlace(w *wqe, f *wire.Frame, off, n uint64, last bool) (placed bool, err error) {
	if n < inPlaceMin || w.isInl || q.req.pf.find(w.idx) != nil {
		return false, nil
	}
	if placed, err = q.sendByRef(w, f, off, n, last); placed {
		return true, err
	}
	err = q.nic.port.SendInPlace(f, int(n), func(p []byte) error {
		if !q.gatherTo(w, off, p) {
			return errGather
		}
		if last {
			q.traceStage(stagePayload, w.idx)
		}
		return nil
	})
	if err == wire.ErrNotInPlace {
		return false, nil
	}
	if err == nil {
		q.inPlaceFrames.Add(1)
	}
	return true, err
}

// gather returns n message bytes at offset off: a view of host memory when
// they lie in one host SGE (its span pinned: the caller unpins it once the
// frame is sent), otherwise a copy in the QP's scratch buffer. ok is false
// when a buffer was deregistered.
func (q *qp) gather(w *wqe, off, n uint64) (b []byte, pinned *span, ok bool) {
	if w.isInl {
		return w.inline[off : off+n], nil, true
	}
	if v, ok, hit := q.prefetched(w, off, n); hit {
		return v, nil, ok
	}
	r := &q.req
	moff := off // the message offset, for gatherTo
	i := 0
	for ; i < w.nsge && off >= r.tg[i].len; i++ {
		off -= r.tg[i].len
	}
	if n == 0 || i == w.nsge {
		return nil, nil, true
	}
	if t := r.tg[i]; t.mem.gpu == nil && off+n <= t.len {
		v, ok := t.mem.view(t.off+off, n)
		if !ok {
			return nil, nil, false
		}
		return v, t.mem, true
	}
	if cap(r.scratch) < int(n) {
		r.scratch = make([]byte, n)
	}
	buf := r.scratch[:n]
	if !q.gatherTo(w, moff, buf) {
		return nil, nil, false
	}
	return buf, nil, true
}

// gatherTo reads the len(buf) message bytes at offset off of w into buf:
// the device pieces with one batch, host pieces directly. It reports false
// when a buffer was deregistered or a copy failed.
func (q *qp) gatherTo(w *wqe, off uint64, buf []byte) bool {
	r := &q.req
	n := uint64(len(buf))
	i := 0
	for ; i < w.nsge && off >= r.tg[i].len; i++ {
		off -= r.tg[i].len
	}
	done := uint64(0)
	rb := &r.rb
	for ; i < w.nsge && done < n; i++ {
		t := r.tg[i]
		k := t.len - off
		if k > n-done {
			k = n - done
		}
		switch {
		case k == 0:
		case t.mem.gpu == nil || (!rb.empty() && rb.spans[0].gpu != t.mem.gpu):
			if t.mem.read(buf[done:done+k], t.off+off) != nil {
				rb.reset()
				return false
			}
		default:
			rb.read(t.mem, t.off+off, buf[done:done+k]) // the device pieces of this frame: one batch
		}
		done += k
		off = 0
	}
	return rb.run() == nil
}
