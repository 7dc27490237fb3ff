package emu

import (
	"runtime"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Engine pacing: keep polling (yielding the processor between rounds) for
// spinFor after the last work, then sleep, doubling from minSleep up to
// maxSleep.
const (
	spinFor  = 100 * time.Microsecond
	minSleep = 5 * time.Microsecond
	maxSleep = time.Millisecond
)

// engine is the NIC's goroutine: it drains responses, watches the UAR pages
// and the DBRs and runs every QP's send side.
func (n *NIC) engine() {
	defer close(n.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var spare []response
	lastWork := time.Now()
	sleep := minSleep
	for {
		select {
		case <-n.stop:
			return
		default:
		}
		now := time.Now()
		var work bool
		spare, work = n.drainInbox(now, spare)
		if n.scanUARs() {
			work = true
		}
		for _, q := range *n.qpSnap.Load() {
			if q.poll(now) {
				work = true
			}
		}
		if work {
			lastWork, sleep = now, minSleep
			continue
		}
		if now.Sub(lastWork) < spinFor {
			runtime.Gosched()
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
		timer.Reset(sleep)
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
			if sleep *= 2; sleep > maxSleep {
				sleep = maxSleep
			}
		}
		n.sleeping.Store(false)
	}
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
	if q := n.qpByNum(qpn); q != nil && q.uar == u && q.noDBR {
		q.mu.Lock()
		q.advancePI(pi)
		q.mu.Unlock()
	}
	now := int64(time.Since(epoch))
	for _, q := range *n.qpSnap.Load() {
		if q.uar == u && q.noDBR {
			q.pageDB.Store(now)
			q.kick.Store(true)
		}
	}
}
