// Package callstack records where objects are created and formats the
// leak reports of the packages that create them (verbs, gpunetio, cuda,
// the emulator's wire): one capture, one frame format, one report layout.
package callstack

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
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
