package emu

import "time"

// clock is the time a NIC's timers run on: ACK timeouts and retries, RNR
// waits, doorbell recovery and the wait for a watch's push. A nil clock
// (Config.clock) is the wall clock, read once per engine round.
//
// A test sets a clock that it advances itself, so that a timer expires
// after a given amount of the engine's time whatever a loaded machine does
// to the engine's scheduling: a retry budget then holds to the step of the
// test's clock, where measured on the wall clock it grows with the load.
type clock interface {
	Now() time.Time
	// Ran tells that an engine round that read now has ended: what the
	// round did (CQEs included) is visible.
	Ran(now time.Time)
}

// now is the NIC's time: its clock's, or the wall clock's.
func (n *NIC) now() time.Time {
	if c := n.cfg.clock; c != nil {
		return c.Now()
	}
	return time.Now()
}
