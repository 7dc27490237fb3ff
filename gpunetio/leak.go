package gpunetio

import (
	"sync"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/callstack"
	"github.com/gdaki/gpunetio/verbs"
)

// StacksEnv is the environment variable that turns on stack recording at
// start-up (for this package, package verbs and package cuda) when it is
// set to a non-empty value other than "0".
const StacksEnv = "GPUNETIO_STACKS"

var stacks = callstack.NewRecorder(StacksEnv, "gpunetio.RecordStacks(true)")

func init() {
	if stacks.On() {
		RecordStacks(true)
	}
}

// RecordStacks turns on (or off) recording of the stack that creates each
// object of this package, of package verbs (verbs.RecordStacks) and of
// package cuda (cuda.RecordStacks), for OpenObjects and the LeakReport of
// each package. It is off by default, when creating an object costs
// nothing extra.
func RecordStacks(on bool) {
	stacks.Set(on)
	verbs.RecordStacks(on)
	cuda.RecordStacks(on)
}

// OpenObject is one object of this package that is still open: a GPU not
// closed, memory not freed, a QP not unexported, a DevQPArray, QPHL,
// QPGroupHL or FlatList not closed, a Service not stopped.
type OpenObject struct {
	// Kind is "GPU", "Mem", "QP", "DevQPArray", "QPHL", "QPGroupHL",
	// "FlatList" or "Service".
	Kind string
	// What names the object.
	What string
	// Stack is where the object was made (one "\tfunction\n\t\tfile:line\n"
	// pair per frame), or "" when stack recording was off at the time.
	Stack string
}

func (o OpenObject) String() string { return callstack.Object(o).String() }

type tracked struct {
	kind, what string
	stack      callstack.Stack
}

var live = struct {
	sync.Mutex
	m map[any]*tracked
}{m: map[any]*tracked{}}

// track records obj as open, with the stack from track's caller up.
func track(obj any, kind, what string) {
	t := &tracked{kind: kind, what: what, stack: stacks.Here(1)}
	live.Lock()
	live.m[obj] = t
	live.Unlock()
}

func untrack(obj any) {
	live.Lock()
	delete(live.m, obj)
	live.Unlock()
}

// OpenObjects lists every open object of this package, sorted by kind and
// name. The verbs objects under them are listed by verbs.OpenObjects.
func OpenObjects() []OpenObject {
	live.Lock()
	out := make([]callstack.Object, 0, len(live.m))
	for _, t := range live.m {
		out = append(out, callstack.Object{Kind: t.kind, What: t.what, Stack: t.stack.String()})
	}
	live.Unlock()
	return callstack.Sorted[OpenObject](out, nil)
}

// LeakReport returns "" when no object of this package is open, and
// otherwise a multi-line report naming each one and, when stacks are
// recorded, where it was made. A TestMain fails the run on it (and on
// verbs.LeakReport and cuda.LeakReport).
func LeakReport() string {
	return callstack.LeakReport(stacks, "gpunetio: %d object(s) still open:", OpenObjects())
}
