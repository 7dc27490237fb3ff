package emu

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Leak tracking. When enabled (tests do it in TestMain), every NIC,
// context and object records what it is and the stack that created it
// until it is closed, destroyed or deregistered, so that a check at the end
// can name each one still alive and where it came from. Disabled, it costs
// one atomic load per create and destroy.

var leakTracking atomic.Bool

var liveObjs = struct {
	sync.Mutex
	m map[any]string
}{m: map[any]string{}}

// track records o as alive, described by format and args, with the
// caller's stack.
func track(o any, format string, args ...any) {
	if !leakTracking.Load() {
		return
	}
	desc := fmt.Sprintf(format, args...) + ", created at:\n" + stack(3)
	liveObjs.Lock()
	liveObjs.m[o] = desc
	liveObjs.Unlock()
}

// untrack forgets o.
func untrack(o any) {
	if !leakTracking.Load() {
		return
	}
	liveObjs.Lock()
	delete(liveObjs.m, o)
	liveObjs.Unlock()
}

// stack formats the stack above skip frames, one function and line each.
func stack(skip int) string {
	pc := make([]uintptr, 32)
	n := runtime.Callers(skip, pc)
	fr := runtime.CallersFrames(pc[:n])
	var b strings.Builder
	for {
		f, more := fr.Next()
		if !strings.HasPrefix(f.Function, "runtime.") && !strings.HasPrefix(f.Function, "testing.") {
			fmt.Fprintf(&b, "\t%s\n\t\t%s:%d\n", f.Function, f.File, f.Line)
		}
		if !more {
			return b.String()
		}
	}
}

// liveObjects describes every tracked object still alive, sorted.
func liveObjects() []string {
	liveObjs.Lock()
	defer liveObjs.Unlock()
	out := make([]string, 0, len(liveObjs.m))
	for _, d := range liveObjs.m {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// TrackLeaks turns on leak tracking for the rest of the process: from now
// on every NIC, context and object records the stack that created it.
// Test mains of packages built on the emulator call it first and LiveObjects
// after their tests.
func TrackLeaks() { leakTracking.Store(true) }

// LiveObjects describes every NIC, context and object created since
// TrackLeaks that is still alive, each with the stack that created it
// (named devices emu0.. live until the process exits and are not listed).
func LiveObjects() []string { return liveObjects() }
