package emu

import (
	"runtime"
	"time"
)

// CQEs for rings in device memory are written by the NIC's flusher
// goroutine, not by the engine or a responder that produced them: a batch
// of copies to the GPU takes 8 to 12 us on an H100 host (the copier
// kernel's round trips over PCIe), and an engine that waited for it did not
// see the doorbells rung meanwhile. In a ping-pong (write_lat) the ACK of
// a side's last WRITE arrives as the peer's WRITE lands, the kernel posts
// its next WRITE at once, and the engine took its doorbell only after the
// CQE batch: about 12 us of every one-way trip.
//
// What does not change: a CQ's CQEs are written in the order they were
// produced (one flusher; cq.fmu orders it with any other writer), each
// batch as before (bodies, then the final op_owns), a failed write puts the
// CQ in error, and nothing is left unwritten when the NIC closes. A CQE is
// produced (its QP's consumer index moves, QUERY_CQ counts it) when its
// completion happens; it becomes visible a batch later, as with a NIC's
// DMA. A NIC driven by hand (the fuzz targets) writes them at once.

// flushSpin is how long the flusher keeps looking for CQEs after its last
// batch before it blocks until it is kicked (a kick wakes a blocked
// goroutine in a few microseconds; CQEs come in bursts).
const flushSpin = 500 * time.Microsecond

// flushSoon has the queued CQs written: by the flusher, or here when the
// NIC is driven by hand.
func (n *NIC) flushSoon() {
	if n.manual {
		n.flushCQs()
		return
	}
	n.flushMu.Lock()
	queued := len(n.toFlush) > 0
	n.flushMu.Unlock()
	if queued {
		select {
		case n.flushKick <- struct{}{}:
		default: // a kick is pending already
		}
	}
}

// flusher writes the queued CQs until the NIC stops, and once more after.
func (n *NIC) flusher() {
	defer close(n.flushDone)
	for {
		select {
		case <-n.stop:
			<-n.done // the engine produces no more CQEs
			n.flushCQs()
			return
		case <-n.flushKick:
		}
		var last time.Time
		idle := 0
		for {
			if n.flushCQs() {
				last, idle = time.Time{}, 0
				continue
			}
			if idle++; idle%yieldEvery != 0 {
				continue
			}
			if last.IsZero() {
				last = time.Now()
			} else if time.Since(last) > flushSpin {
				break
			}
			runtime.Gosched()
		}
	}
}
