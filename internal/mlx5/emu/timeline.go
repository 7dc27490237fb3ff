package emu

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Timeline (performance diagnosis). While a timeline runs, the engines,
// the responders and the GPUMemory adapter note what they did and when:
// doorbells taken, DBR and WQE reads, transmit rounds, requests handled,
// ACKs, CQ flushes, batches of device copies. Unlike the breakdown
// (trace.go) it follows bursts: where the time of 512 puts in flight went.
// A timeline holds a fixed number of events; later ones are counted and
// dropped. Noting an event costs an atomic load when no timeline runs.
//
// StartTimeline and StopTimeline serve a benchmark in the process;
// GDAKI_EMU_TIMELINE=FILE starts one when the first NIC of the process is
// made and writes it to FILE.<pid> each time the NICs went quiet for a
// second after some work, so that a program that cannot call StopTimeline
// (an example, run as two processes) leaves its timeline behind.

// EnvTimeline names the file prefix of the timeline that every NIC of the
// process records (see above).
const EnvTimeline = "GDAKI_EMU_TIMELINE"

// EnvCPUProfile, set to a file prefix, makes the process write a CPU
// profile (runtime/pprof) to PREFIX.<pid>, from its first NIC to the first
// Close of a device context: a profile of the emulator inside a program
// that has no flag for one (an example).
const EnvCPUProfile = "GDAKI_EMU_CPUPROFILE"

// EnvCPUProfileHz sets the sampling rate of GDAKI_EMU_CPUPROFILE's
// profile, in samples per second (default 100; the runtime then warns once
// on standard error that the rate was already set).
const EnvCPUProfileHz = "GDAKI_EMU_CPUPROFILE_HZ"

var cpuProfile struct {
	sync.Mutex
	f *os.File // the profile being written, nil when none
}

// cpuProfileFromEnv starts GDAKI_EMU_CPUPROFILE's profile (once).
func cpuProfileFromEnv() {
	prefix := os.Getenv(EnvCPUProfile)
	if prefix == "" {
		return
	}
	f, err := os.Create(fmt.Sprintf("%s.%d", prefix, os.Getpid()))
	if err != nil {
		return
	}
	if hz, err := strconv.Atoi(os.Getenv(EnvCPUProfileHz)); err == nil && hz > 0 {
		runtime.SetCPUProfileRate(hz)
	}
	if pprof.StartCPUProfile(f) != nil {
		f.Close()
		return
	}
	cpuProfile.Lock()
	cpuProfile.f = f
	cpuProfile.Unlock()
}

// stopEnvCPUProfile ends GDAKI_EMU_CPUPROFILE's profile, if it runs.
func stopEnvCPUProfile() {
	cpuProfile.Lock()
	defer cpuProfile.Unlock()
	if cpuProfile.f != nil {
		pprof.StopCPUProfile()
		cpuProfile.f.Close()
		cpuProfile.f = nil
	}
}

// TimelineEvent is one thing the emulator did.
type TimelineEvent struct {
	At   time.Duration // when it began, since the timeline started
	Dur  time.Duration // how long it took (0: an instant)
	What string        // what: see the calls of note
	QPN  uint32        // the QP (or CQ) it concerns, 0 when none
	A, B int64         // its figures (indexes, counts, bytes: see the call)
}

type timeline struct {
	t0      time.Time
	ev      []TimelineEvent
	next    atomic.Int64 // the next free slot
	writers atomic.Int64 // notes being written
	last    atomic.Int64 // the last event's time, nanoseconds since t0
}

var (
	timelineOn  atomic.Pointer[timeline]
	timelineEnv sync.Once
	envTimeline struct {
		sync.Mutex
		path string // where GDAKI_EMU_TIMELINE's timeline goes ("": none)
		mark int64  // the last event's time when it was last written
	}
)

// StartTimeline starts a timeline of at most max events (forgetting any
// running one).
func StartTimeline(max int) {
	timelineOn.Store(&timeline{t0: time.Now(), ev: make([]TimelineEvent, max)})
}

// Timeline is a recorded timeline: its events, in the order they were
// noted, how many were dropped for want of room, and when it started.
type Timeline struct {
	Start   time.Time
	Events  []TimelineEvent
	Dropped int
}

// StopTimeline ends the running timeline and returns it (empty when none
// ran).
func StopTimeline() Timeline {
	t := timelineOn.Swap(nil)
	if t == nil {
		return Timeline{}
	}
	return t.snapshot()
}

// snapshot returns the events so far, once the notes that took their slots
// are written (a note takes its slot after it counts itself a writer).
func (t *timeline) snapshot() Timeline {
	n := int(t.next.Load())
	for t.writers.Load() != 0 {
		runtime.Gosched()
	}
	if n <= len(t.ev) {
		return Timeline{Start: t.t0, Events: t.ev[:n:n]}
	}
	return Timeline{Start: t.t0, Events: t.ev[:len(t.ev):len(t.ev)], Dropped: n - len(t.ev)}
}

// noteSince notes an event that began at start (zero: now, an instant).
func noteSince(what string, qpn uint32, a, b int64, start time.Time) {
	t := timelineOn.Load()
	if t == nil {
		return
	}
	now := time.Now()
	e := TimelineEvent{What: what, QPN: qpn, A: a, B: b, At: now.Sub(t.t0)}
	if !start.IsZero() {
		e.At, e.Dur = start.Sub(t.t0), now.Sub(start)
	}
	t.writers.Add(1)
	if i := t.next.Add(1) - 1; i < int64(len(t.ev)) {
		t.ev[i] = e
	}
	t.last.Store(int64(now.Sub(t.t0)))
	t.writers.Add(-1)
}

// timelineStart returns now when a timeline runs, the zero time otherwise
// (noteSince's start).
func timelineStart() time.Time {
	if timelineOn.Load() == nil {
		return time.Time{}
	}
	return time.Now()
}

// TimelineNote notes an event for a GPUMemory adapter: a batch of copies
// (what names its path) of n copies and bytes bytes, begun at start.
func TimelineNote(what string, n, bytes int64, start time.Time) {
	noteSince(what, 0, n, bytes, start)
}

// TimelineStart is timelineStart for a GPUMemory adapter.
func TimelineStart() time.Time { return timelineStart() }

// Write writes the timeline as text: a line with the dropped count and the
// wall-clock start (so that the timelines of two processes can be laid
// side by side), a line naming the columns, then one line per event: the
// start and the duration in microseconds, what, the QP and the two
// figures.
func (tl Timeline) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# dropped %d t0_unix_ns %d\n", tl.Dropped, tl.Start.UnixNano())
	fmt.Fprintf(bw, "# at_us dur_us what qpn a b\n")
	for _, e := range tl.Events {
		fmt.Fprintf(bw, "%.3f %.3f %s %#x %d %d\n", float64(e.At)/1e3, float64(e.Dur)/1e3, e.What, e.QPN, e.A, e.B)
	}
	return bw.Flush()
}

// Save writes the timeline to the file path (see Write).
func (tl Timeline) Save(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := tl.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// diagnosticsFromEnv starts GDAKI_EMU_CPUPROFILE's profile and, when
// GDAKI_EMU_TIMELINE is set, the process's timeline (once, with the first
// NIC) and a goroutine that writes it whenever the emulator went quiet for
// a second after work, for the rest of the process's life (a diagnostic
// run's only); a device context's Close writes it too.
func diagnosticsFromEnv() {
	timelineEnv.Do(func() {
		cpuProfileFromEnv()
		prefix := os.Getenv(EnvTimeline)
		if prefix == "" {
			return
		}
		StartTimeline(1 << 20)
		envTimeline.Lock()
		envTimeline.path = fmt.Sprintf("%s.%d", prefix, os.Getpid())
		envTimeline.Unlock()
		go func() {
			for range time.Tick(250 * time.Millisecond) {
				writeEnvTimeline(time.Second)
			}
		}()
	})
}

// writeEnvTimeline writes GDAKI_EMU_TIMELINE's timeline when something
// happened since it was last written, and nothing for quiet.
func writeEnvTimeline(quiet time.Duration) {
	envTimeline.Lock()
	defer envTimeline.Unlock()
	t := timelineOn.Load()
	if envTimeline.path == "" || t == nil {
		return
	}
	last := t.last.Load()
	if last == envTimeline.mark || time.Since(t.t0) < time.Duration(last)+quiet {
		return
	}
	envTimeline.mark = last
	t.snapshot().Save(envTimeline.path) // a diagnostic: nobody to tell of a failure
}
