package emu

import (
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/spin"
)

// Engine pacing: keep polling (yielding the processor as package spin
// says) for spinFor after the last work, then sleep, doubling from
// minSleep up to maxSleep. A NIC with a QP whose rings are in device
// memory polls for gpuSpinFor and sleeps at most gpuMaxSleep: a GPU
// kernel's doorbell (a store to the UAR page) cannot wake a sleeping
// engine, and kernels post in bursts separated by host work (a launch, a
// wait).
const (
	spinFor     = 100 * time.Microsecond
	minSleep    = 5 * time.Microsecond
	maxSleep    = time.Millisecond
	gpuSpinFor  = 2 * time.Millisecond
	gpuMaxSleep = 50 * time.Microsecond
	// Idle rounds between two yields of the processor while the pollers
	// crowd the processors (spin.Crowded): each Gosched goes through the
	// scheduler's global queue and its lock, which the engines, the wire's
	// readers and the copier's waits of a process then fight over (the
	// scheduler's search for work was about a third of a put_bw client's
	// CPU samples on an H100 host, its lock a tenth, with a yield per
	// round).
	yieldEvery = 16
)

// engine is the NIC's goroutine: it drains responses, watches the UAR pages
// and the DBRs and runs every QP's send side. It sleeps only while nothing
// happens, never past the earliest timer of a QP (ACK timeout, RNR wait,
// doorbell recovery), so a requester's retry-exceeded comes on time. Nothing
// it does waits for the network (wire.Port.Send queues or drops).
func (n *NIC) engine() {
	defer close(n.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	lastWork := time.Now()
	sleep := minSleep
	poller := spin.Poller{Every: yieldEvery}
	poller.Start()
	defer poller.Stop()
	for {
		select {
		case <-n.stop:
			return
		default:
		}
		now := time.Now()
		tnow := now // the timers' time
		if c := n.cfg.clock; c != nil {
			tnow = c.Now()
		}
		work, next := n.round(tnow)
		if c := n.cfg.clock; c != nil {
			c.Ran(tnow)
		}
		if work {
			lastWork, sleep = now, minSleep
			continue
		}
		busyFor, ceil := spinFor, maxSleep
		if n.devQPs.Load() > 0 {
			busyFor, ceil = gpuSpinFor, gpuMaxSleep
		}
		if now.Sub(lastWork) < busyFor {
			poller.Idle(now)
			continue
		}
		// Announce the sleep, then look once more: a producer that queued a
		// response before seeing the flag is caught here, one after it
		// sends on wake (seq-cst atomics, inbox under its mutex).
		n.sleeping.Store(true)
		n.inboxMu.Lock()
		pending := len(n.inbox) > 0
		n.inboxMu.Unlock()
		if pending {
			n.sleeping.Store(false)
			continue
		}
		d := min(sleep, ceil)
		if !next.IsZero() {
			d = min(d, max(next.Sub(n.now()), 0))
		}
		timer.Reset(d)
		t0 := timelineStart()
		poller.Stop()
		select {
		case <-n.stop:
			n.sleeping.Store(false)
			return
		case <-n.wake:
			if !timer.Stop() {
				<-timer.C
			}
			lastWork, sleep = time.Now(), minSleep
		case <-timer.C:
			if sleep *= 2; sleep > ceil {
				sleep = ceil
			}
		}
		n.sleeping.Store(false)
		poller.Start()
		noteSince("sleep", 0, int64(d), 0, t0)
	}
}

// round is one pass of the engine: responses, doorbells, every QP's send
// side. It reports whether anything happened and the earliest timer.
func (n *NIC) round(now time.Time) (work bool, next time.Time) {
	n.spare, work = n.drainInbox(now, n.spare)
	n.flushCQs()
	if n.scanUARs() {
		work = true
	}
	for _, q := range *n.qpSnap.Load() {
		w, t := q.poll(now)
		work = work || w
		next = earliest(next, t)
	}
	n.flushCQs()
	return work, next
}

// Doorbell offsets watched on every UAR page.
var bfOffsets = [...]int{mlx5.UAROffsetBF, mlx5.UAROffsetBF + mlx5.UARBFHalf, mlx5.UAROffsetSecondBF, mlx5.UAROffsetSecondBF + mlx5.UARBFHalf}

// scanUARs takes every doorbell written since the last scan.
func (n *NIC) scanUARs() bool {
	n.uarPollMu.Lock()
	defer n.uarPollMu.Unlock()
	work := false
	for _, u := range *n.uarMap.Load() {
		for _, off := range bfOffsets {
			if v := u.take(off); v != 0 {
				n.doorbell(u, v)
				work = true
			}
		}
		if v := u.take(mlx5.UAROffsetNoDBR); v != 0 {
			n.doorbell(u, v)
			work = true
		}
		if v := u.take(mlx5.UAROffsetCQArm); v != 0 {
			word, cqn := mlx5.DecodeCQArmDoorbell(mlx5.DoorbellFromUint64(v))
			if c := n.cqByNum(cqn & mask24); c != nil && c.uar == u {
				c.arm(word)
			}
			work = true
		}
	}
	return work
}

// doorbell handles one 8-byte send doorbell {wqe_index<<8 | opcode, qpn<<8
// | ds} stored big-endian on page u. A doorbell from a page other than the
// QP's uar_page is ignored, as hardware does. Every doorbell on a page also
// makes the DBR-less QPs bound to the page look for WQEs whose own doorbell
// was overwritten before the engine read it.
func (n *NIC) doorbell(u *uar, v uint64) {
	qpn, pi := mlx5.DecodeSQDoorbell(mlx5.DoorbellFromUint64(v))
	if q := n.qpByNum(qpn); q != nil && q.uar == u {
		q.traceStage(stageDoorbell, 0)
		noteSince("doorbell", qpn, int64(pi), 0, time.Time{})
		if q.noDBR {
			q.mu.Lock()
			q.advancePI(pi)
			q.mu.Unlock()
		} else {
			q.dbHint.Store(uint32(pi) | hintValid)
		}
	}
	now := int64(n.now().Sub(epoch))
	for _, q := range *n.qpSnap.Load() {
		if q.uar != u {
			continue
		}
		if q.noDBR {
			q.pageDB.Store(now)
			q.kick.Store(true)
		} else {
			q.dbrKick.Store(true)
		}
	}
}
