package cuda

import (
	"sync"

	"github.com/gdaki/gpunetio/internal/callstack"
)

// StacksEnv is the environment variable that turns on stack recording at
// start-up when it is set to a non-empty value other than "0".
const StacksEnv = "GPUNETIO_CUDA_STACKS"

var stacks = callstack.NewRecorder(StacksEnv, "cuda.RecordStacks(true)")

// RecordStacks turns on (or off) recording of the stack that creates each
// Context and each object made through one. LiveObjects and LeakReport show
// the recorded stacks. It is off by default, when creating an object costs
// nothing extra; the package's own tests and StacksEnv turn it on.
func RecordStacks(on bool) { stacks.Set(on) }

// origin is the stack that created an object, or nil when recording was off.
type origin = callstack.Stack

// here records the stack of its caller's caller (the creating method and
// everything above it).
func here() origin { return stacks.Here(1) }

// liveContexts holds every Context retained and not yet released.
var liveContexts = struct {
	sync.Mutex
	m map[*Context]struct{}
}{m: map[*Context]struct{}{}}

func addLiveContext(c *Context) {
	liveContexts.Lock()
	liveContexts.m[c] = struct{}{}
	liveContexts.Unlock()
}

func removeLiveContext(c *Context) {
	liveContexts.Lock()
	delete(liveContexts.m, c)
	liveContexts.Unlock()
}

// LiveObject is one CUDA object of this process that is still live: a
// Context not released, or an allocation, registration, module, stream or
// event made through a Context and not freed.
type LiveObject struct {
	// Kind is "context", "device memory", "pinned host memory", "host
	// registration", "module", "stream" or "event".
	Kind string
	// What names the object: its device and, for memory, address and size.
	What string
	// Stack is the stack that created the object (one "\tfunction\n\t\tfile:line\n"
	// pair per frame), or "" when stack recording was off at the time.
	Stack string
}

// String formats the object and, when recorded, its stack.
func (o LiveObject) String() string { return callstack.Object(o).String() }

var kindOrder = map[string]int{
	"context": 0, "device memory": 1, "pinned host memory": 2, "host registration": 3,
	"module": 4, "stream": 5, "event": 6,
}

// LiveObjects lists every live Context of the process and every live object
// made through one, contexts first. Tests call it (or LeakReport) after
// everything should have been released.
func LiveObjects() []LiveObject {
	liveContexts.Lock()
	ctxs := make([]*Context, 0, len(liveContexts.m))
	for c := range liveContexts.m {
		ctxs = append(ctxs, c)
	}
	liveContexts.Unlock()
	var out []LiveObject
	for _, c := range ctxs {
		out = append(out, c.liveObjects()...)
	}
	objs := make([]callstack.Object, len(out))
	for i, o := range out {
		objs[i] = callstack.Object(o)
	}
	return callstack.Sorted[LiveObject](objs, func(kind string) int { return kindOrder[kind] })
}

// LeakReport returns "" when LiveObjects is empty, and otherwise a
// multi-line report naming each live object and the stack that created it.
// A TestMain can fail the run on it:
//
//	code := m.Run()
//	if r := cuda.LeakReport(); r != "" && code == 0 {
//		fmt.Fprintln(os.Stderr, r)
//		code = 1
//	}
func LeakReport() string {
	return callstack.LeakReport(stacks, "cuda: %d CUDA object(s) still live:", LiveObjects())
}
