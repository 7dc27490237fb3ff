package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/cudasys"
)

// DevPtr is a device virtual address (CUdeviceptr). gpunetio.DevPtr is the
// same type, so addresses from gpunetio pass to this package unconverted.
type DevPtr uintptr

// Context is a retained primary context of one device. Every method runs its
// driver call with the context current on the calling OS thread (see the
// package documentation) and is safe for concurrent use.
//
// A Context tracks what is made through it (device and pinned host
// allocations, host registrations, modules, streams, events) so that frees
// are idempotent, Release can refuse while anything is still live, and
// LiveObjects can name what was left behind.
type Context struct {
	dev Device
	h   cudasys.Ctx
	at  origin

	// life is held for reading by every driver call and for writing by
	// Release, so Release never races a call in flight.
	life     sync.RWMutex
	released bool
	inDo     atomic.Int32

	mu         sync.Mutex
	devAllocs  map[DevPtr]allocation
	hostAllocs map[unsafe.Pointer]allocation
	registered map[unsafe.Pointer]allocation
	modules    map[*Module]struct{}
	streams    map[*Stream]struct{}
	events     map[*Event]struct{}

	stage stagePool // pinned buffers of the synchronous Go-memory copies
}

// allocation is a live range made through a Context.
type allocation struct {
	size uintptr
	at   origin
}

// Live counts the objects made through a Context and not yet freed.
type Live struct {
	DeviceAllocs, HostAllocs, HostRegistrations, Modules, Streams, Events int
}

// Total is the sum of all counts.
func (l Live) Total() int {
	return l.DeviceAllocs + l.HostAllocs + l.HostRegistrations + l.Modules + l.Streams + l.Events
}

// PrimaryContext retains the device's primary context
// (cuDevicePrimaryCtxRetain). Each call returns a new Context holding one
// reference; Release drops it.
func (d Device) PrimaryContext() (*Context, error) {
	if err := d.ready("PrimaryContext"); err != nil {
		return nil, err
	}
	h, r := cudasys.PrimaryCtxRetain(d.handle)
	if err := check("cuDevicePrimaryCtxRetain", r); err != nil {
		return nil, err
	}
	return newContext(d, h, here()), nil
}

// newContext makes the Context of d's retained primary context h, made at
// at, and registers it as live.
func newContext(d Device, h cudasys.Ctx, at origin) *Context {
	c := &Context{
		dev:        d,
		h:          h,
		at:         at,
		devAllocs:  map[DevPtr]allocation{},
		hostAllocs: map[unsafe.Pointer]allocation{},
		registered: map[unsafe.Pointer]allocation{},
		modules:    map[*Module]struct{}{},
		streams:    map[*Stream]struct{}{},
		events:     map[*Event]struct{}{},
	}
	addLiveContext(c)
	return c
}

// Device returns the context's device.
func (c *Context) Device() Device {
	if c == nil {
		return Device{}
	}
	return c.dev
}

// Live returns the number of live objects made through c.
func (c *Context) Live() Live {
	if c == nil {
		return Live{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return Live{
		DeviceAllocs:      len(c.devAllocs),
		HostAllocs:        len(c.hostAllocs),
		HostRegistrations: len(c.registered),
		Modules:           len(c.modules),
		Streams:           len(c.streams),
		Events:            len(c.events),
	}
}

// liveObjects describes c (unless released) and everything live in it.
func (c *Context) liveObjects() []LiveObject {
	dev := fmt.Sprintf("device %d", c.dev.ordinal)
	var out []LiveObject
	c.life.RLock()
	if !c.released {
		out = append(out, LiveObject{Kind: "context", What: "primary context of " + dev, Stack: c.at.String()})
	}
	c.life.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, a := range c.devAllocs {
		out = append(out, LiveObject{Kind: "device memory", What: fmt.Sprintf("%s: %d bytes at %#x", dev, a.size, uintptr(p)), Stack: a.at.String()})
	}
	for p, a := range c.hostAllocs {
		out = append(out, LiveObject{Kind: "pinned host memory", What: fmt.Sprintf("%s: %d bytes at %p", dev, a.size, p), Stack: a.at.String()})
	}
	for p, a := range c.registered {
		out = append(out, LiveObject{Kind: "host registration", What: fmt.Sprintf("%s: %d bytes at %p", dev, a.size, p), Stack: a.at.String()})
	}
	for m := range c.modules {
		out = append(out, LiveObject{Kind: "module", What: dev, Stack: m.at.String()})
	}
	for s := range c.streams {
		out = append(out, LiveObject{Kind: "stream", What: dev, Stack: s.at.String()})
	}
	for e := range c.events {
		out = append(out, LiveObject{Kind: "event", What: dev, Stack: e.at.String()})
	}
	return out
}

// Release drops the primary context reference (cuDevicePrimaryCtxRelease_v2).
// It refuses with ErrInUse while objects made through c are live or a Do
// is running. A second Release is a no-op.
func (c *Context) Release() error {
	if c == nil {
		return nil
	}
	if c.devAllocs == nil {
		return zeroValue("Context", "Release", "")
	}
	c.life.Lock()
	defer c.life.Unlock()
	if c.released {
		return nil
	}
	if n := c.inDo.Load(); n > 0 {
		return fmt.Errorf("cuda: release context: %d Do call(s) running: %w", n, ErrInUse)
	}
	if l := c.Live(); l.Total() > 0 {
		return fmt.Errorf("cuda: release context: %+v: %w", l, ErrInUse)
	}
	c.stage.drain(c.h)
	if err := check("cuDevicePrimaryCtxRelease_v2", cudasys.PrimaryCtxRelease(c.dev.handle)); err != nil {
		return err
	}
	c.released = true
	removeLiveContext(c)
	return nil
}

// usable checks, before any driver call, that c can serve its method named
// method: not nil (ErrReleased), not a zero value (ErrZeroValue: newContext
// makes the maps every Context has), not released (ErrReleased).
func (c *Context) usable(method string) error {
	return c.usableAs("Context", method, "")
}

// usableAs is usable for a call of typ.method that uses c as what ("" when
// c is the receiver).
func (c *Context) usableAs(typ, method, what string) error {
	ctx := what
	if ctx == "" {
		ctx = "nil *Context"
	}
	switch {
	case c == nil:
		return released(typ, method, ctx)
	case c.devAllocs == nil:
		return zeroValue(typ, method, what)
	}
	c.life.RLock()
	rel := c.released
	c.life.RUnlock()
	if rel {
		return released(typ, method, what)
	}
	return nil
}

// call runs one binding call with the context handle, holding the context
// alive.
func (c *Context) call(op string, f func(h cudasys.Ctx) int32) error {
	if err := c.enter(op); err != nil {
		return err
	}
	defer c.life.RUnlock()
	return check(op, f(c.h))
}

// enter read-locks c.life for a call named op on the context handle, or
// fails with ErrReleased (c nil or released) holding nothing. The caller
// unlocks c.life.
func (c *Context) enter(op string) error {
	if c == nil {
		return fmt.Errorf("cuda: %s: nil context: %w", op, ErrReleased)
	}
	c.life.RLock()
	if c.released {
		c.life.RUnlock()
		return fmt.Errorf("cuda: %s: %w", op, ErrReleased)
	}
	return nil
}

// Do runs fn on one OS thread with c current (cuCtxPushCurrent_v2 before,
// cuCtxPopCurrent_v2 after), for code that calls CUDA by other means (C
// code of its own, or several calls that must share a thread). The methods
// of Context do not need it. Do may nest and may call Context methods.
func (c *Context) Do(fn func() error) (err error) {
	if err := c.usable("Do"); err != nil {
		return err
	}
	if fn == nil {
		return &InputError{Op: "Context.Do", Input: "fn", Offset: -1, Reason: "nil function"}
	}
	c.life.RLock()
	if c.released {
		c.life.RUnlock()
		return fmt.Errorf("cuda: Do: %w", ErrReleased)
	}
	c.inDo.Add(1)
	c.life.RUnlock()
	defer c.inDo.Add(-1)

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := check("cuCtxPushCurrent_v2", cudasys.CtxPush(c.h)); err != nil {
		return err
	}
	defer func() {
		if perr := check("cuCtxPopCurrent_v2", cudasys.CtxPop()); perr != nil && err == nil {
			err = perr
		}
	}()
	return fn()
}

// Synchronize blocks until all work in the context has finished
// (cuCtxSynchronize). It has no timeout: use Stream.Wait or Event.Wait where
// the GPU work may never finish.
func (c *Context) Synchronize() error {
	if err := c.usable("Synchronize"); err != nil {
		return err
	}
	return c.call("cuCtxSynchronize", cudasys.CtxSynchronize)
}

// MemGetInfo returns the free and total device memory (cuMemGetInfo_v2).
func (c *Context) MemGetInfo() (free, total uint64, err error) {
	if err := c.usable("MemGetInfo"); err != nil {
		return 0, 0, err
	}
	err = c.call("cuMemGetInfo_v2", func(h cudasys.Ctx) (r int32) {
		free, total, r = cudasys.MemGetInfo(h)
		return r
	})
	return free, total, err
}
