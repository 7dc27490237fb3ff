// Package callstack records where objects are created and formats the
// leak reports of the packages that create them (verbs, gpunetio, cuda,
// the emulator's wire): one recording switch, one capture, one frame
// format, one report layout, one way for a TestMain to fail on a leak.
package callstack

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
)

// maxDepth bounds a recorded stack.
const maxDepth = 32

// Stack is a recorded call stack (program counters), nil when none was
// recorded.
type Stack []uintptr

// Here records the stack of Here's caller, skipping skip more frames
// (0: from the function that calls Here; 1: from its caller).
func Here(skip int) Stack {
	pcs := make([]uintptr, maxDepth)
	n := runtime.Callers(skip+2, pcs)
	return Stack(pcs[:n:n])
}

// String formats the stack one frame per "\tfunction\n\t\tfile:line\n"
// pair, or "" for an empty stack.
func (s Stack) String() string {
	if len(s) == 0 {
		return ""
	}
	var b strings.Builder
	frames := runtime.CallersFrames(s)
	for {
		f, more := frames.Next()
		fmt.Fprintf(&b, "\t%s\n\t\t%s:%d\n", f.Function, f.File, f.Line)
		if !more {
			return b.String()
		}
	}
}

// Object is one open object of a leak report: the public OpenObject and
// LiveObject types of the packages convert to it.
type Object struct {
	Kind  string // the object's type
	What  string // which one, and who references it
	Stack string // Stack.String of where it was made, or ""
}

// String is "Kind: What", followed by ", created at:" and the stack when
// one was recorded.
func (o Object) String() string {
	s := o.Kind + ": " + o.What
	if o.Stack != "" {
		s += ", created at:\n" + strings.TrimRight(o.Stack, "\n")
	}
	return s
}

// Sort orders objects by kind (rank gives a kind's place, nil for
// alphabetical), then by What.
func Sort(objs []Object, rank func(kind string) int) {
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := objs[i], objs[j]
		if a.Kind != b.Kind {
			if rank != nil {
				if ra, rb := rank(a.Kind), rank(b.Kind); ra != rb {
					return ra < rb
				}
			}
			return a.Kind < b.Kind
		}
		return a.What < b.What
	})
}

// Report is "" for no objects, and otherwise the title line followed by
// each object indented by two spaces, then hint (when not "") on a line
// of its own.
func Report(title string, objs []Object, hint string) string {
	if len(objs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(title)
	for _, o := range objs {
		b.WriteString("\n  ")
		b.WriteString(strings.ReplaceAll(o.String(), "\n", "\n  "))
	}
	if hint != "" {
		b.WriteString("\n  " + hint)
	}
	return b.String()
}

// Recorder is a package's stack-recording switch: off by default (creating
// an object then costs nothing extra), on from start-up when the package's
// environment variable is set to a non-empty value other than "0".
type Recorder struct {
	on        atomic.Bool
	env, call string
}

// NewRecorder returns the switch of the package whose environment variable
// is env and whose exported switch is call (for the hint of a report made
// while recording is off, e.g. "verbs.RecordStacks(true)").
func NewRecorder(env, call string) *Recorder {
	r := &Recorder{env: env, call: call}
	if v := os.Getenv(env); v != "" && v != "0" {
		r.on.Store(true)
	}
	return r
}

// Set turns recording on or off.
func (r *Recorder) Set(on bool) { r.on.Store(on) }

// On reports whether recording is on.
func (r *Recorder) On() bool { return r.on.Load() }

// Here is Here(skip) from the caller of this method when recording is on,
// and nil when it is off.
func (r *Recorder) Here(skip int) Stack {
	if !r.on.Load() {
		return nil
	}
	return Here(skip + 1)
}

// Entry is the underlying type of the packages' exported open-object types
// (verbs.OpenObject, gpunetio.OpenObject, cuda.LiveObject), which convert
// to and from Object.
type Entry interface {
	~struct {
		Kind  string
		What  string
		Stack string
	}
}

// Sorted sorts objs as Sort does and returns them as the package's type.
func Sorted[T Entry](objs []Object, rank func(kind string) int) []T {
	Sort(objs, rank)
	out := make([]T, len(objs))
	for i, o := range objs {
		out[i] = T(o)
	}
	return out
}

// LeakReport is the package's report of objs: "" for none, and otherwise
// Report with the title fmt.Sprintf(titleFormat, len(objs)) and, while r is
// off, a hint naming r's environment variable and switch.
func LeakReport[T Entry](r *Recorder, titleFormat string, objs []T) string {
	hint := ""
	if !r.On() {
		hint = "(set " + r.env + "=1 or call " + r.call + " to see where each was created)"
	}
	out := make([]Object, len(objs))
	for i, o := range objs {
		out[i] = Object(o)
	}
	return Report(fmt.Sprintf(titleFormat, len(objs)), out, hint)
}

// FailOnLeaks is what a TestMain does with its tests' exit status: it
// prints each non-empty report to w and returns code, or 1 when code is 0
// and a report is not empty.
func FailOnLeaks(code int, w io.Writer, reports ...string) int {
	for _, r := range reports {
		if r == "" {
			continue
		}
		fmt.Fprintln(w, r)
		if code == 0 {
			code = 1
		}
	}
	return code
}
