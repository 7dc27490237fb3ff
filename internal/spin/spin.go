// Package spin paces the emulator's polling goroutines: the NIC engines,
// the readers of shared-memory links, and the waits for the GPU copier.
//
// A polling goroutine that calls runtime.Gosched goes to the scheduler's
// global run queue, and the thread it ran on looks for other work before
// it. The pollers of a process then take turns on fewer threads than there
// are idle processors (Gosched wakes no idle one), and a frame or a
// doorbell waits for its poller's turn. On an H100 host (16 processors)
// two-process write_lat (1 and 64 B) ran at 10.8 to 13.4 µs one-way with
// the pollers not yielding and at 14.7 to 18.0 µs with each yielding every
// 16 idle rounds (four rounds, alternating, one machine).
//
// So a poller yields often only while the process's pollers could hold
// half of the processors Go runs goroutines on, or more: a small machine
// (CI's two processors, where one poller is enough), where the rest of the
// program needs its turn on the processors the pollers hold (on two
// processors a poller that yielded once per Period slowed the emulator's
// tests down). Otherwise it yields once per Period, which bounds how long
// a goroutine waits for a processor that a poller holds when every other
// one is busy as well (the runtime's preemption alone would let it wait
// about 10 ms).
package spin

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Period is the longest a poller polls without yielding when the pollers
// do not crowd the processors.
const Period = time.Millisecond

var (
	polling atomic.Int32 // pollers that poll now (not asleep, not ended)
	procs   atomic.Int32 // the processors goroutines run on, as of the last Start
)

// Crowded reports whether the pollers that poll now could hold half of
// the processors goroutines run on (GOMAXPROCS, at most the machine's
// processors), or more. A wait that polls yields on each of its looks at
// the clock while it is true, and otherwise only when Period has passed.
func Crowded() bool { return 2*polling.Load() >= procs.Load() }

// Poller is the pacing of one polling goroutine. Every is the number of
// idle looks between two yields while the pollers crowd the processors (at
// least 1). The zero value with Every set is a poller not counted yet.
type Poller struct {
	Every int

	on   bool
	idle int
	last time.Time // the last yield, or the first idle look after Start
}

// Start counts the goroutine among the pollers: when it begins polling,
// and after each sleep. It does nothing when the goroutine is counted.
func (p *Poller) Start() {
	if p.on {
		return
	}
	p.on = true
	p.idle, p.last = 0, time.Time{}
	polling.Add(1)
	procs.Store(int32(min(runtime.GOMAXPROCS(0), runtime.NumCPU())))
}

// Stop takes the goroutine out of the pollers: before it sleeps, and when
// it ends.
func (p *Poller) Stop() {
	if p.on {
		p.on = false
		polling.Add(-1)
	}
}

// Idle is a look that found nothing to do, at now: it yields the
// processor when that is due.
func (p *Poller) Idle(now time.Time) {
	p.idle++
	if Crowded() {
		if p.idle%max(p.Every, 1) == 0 {
			runtime.Gosched()
		}
		return
	}
	if p.last.IsZero() {
		p.last = now
	} else if now.Sub(p.last) >= Period {
		runtime.Gosched()
		p.last = now
	}
}
