package verbs

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gdaki/gpunetio/internal/callstack"
)

// node is the lifetime bookkeeping every object embeds.
//
//   - made: the object came from this package's constructor. A zero value
//     (&QP{}) or a nil pointer is refused by every method with
//     ErrInvalidValue instead of being dereferenced.
//   - users: who references the object: the objects made on it (a QP on its
//     PD, CQs, UMEMs, UAR...) and the Holds taken by layers built on this
//     package. An object with users refuses to close (ErrInUse), naming
//     them.
//   - life: calls that touch the object's rings, doorbells or device object
//     hold it shared (enter/leave); Close holds it exclusively while it
//     destroys the object, so no call can run on memory Close frees, and
//     every call after Close fails with ErrBadState.
type node struct {
	life sync.RWMutex

	mu     sync.Mutex
	made   bool
	closed bool // written under life (exclusive) and mu; read under either
	kind   string
	nm     atomic.Pointer[string] // read without mu: other nodes' locks may be held
	users  map[user]int
	stack  callstack.Stack
}

// user is what can reference a node: another object's node, or a Hold.
type user interface{ userName() string }

// init marks n as made, names it ("QP 0x1a2 on emu0") and registers it as
// open.
func (n *node) init(kind, name string) {
	n.mu.Lock()
	n.made, n.kind = true, kind
	n.nm.Store(&name)
	n.stack = stacks.Here(1)
	n.mu.Unlock()
	track(n, true)
}

func (n *node) userName() string {
	if p := n.nm.Load(); p != nil {
		return *p
	}
	return "an object being created"
}

// notMade is the error for a zero-value object.
func notMade(op, kind string) *Error {
	return newErr(op, ErrInvalidValue, "%s is a zero value, not one made by this package", kind)
}

// use checks that n is a made, open object without holding it.
func (n *node) use(op, kind string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.usableLocked(op, kind)
}

func (n *node) usableLocked(op, kind string) error {
	if !n.made {
		return notMade(op, kind)
	}
	if n.closed {
		return newErr(op, ErrBadState, "%s is closed", n.userName())
	}
	return nil
}

// enter holds n shared for a call that touches its memory or device
// object; on success the caller must call leave. It fails on a zero value
// and on a closed object.
func (n *node) enter(op, kind string) error {
	n.life.RLock()
	if !n.made {
		n.life.RUnlock()
		return notMade(op, kind)
	}
	if n.closed {
		n.life.RUnlock()
		return newErr(op, ErrBadState, "%s is closed", n.userName())
	}
	return nil
}

func (n *node) leave() { n.life.RUnlock() }

// acquire records that u references n; it fails if n is a zero value or
// closed. Release with release(u).
func (n *node) acquire(op, kind string, u user) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.usableLocked(op, kind); err != nil {
		return err
	}
	if n.users == nil {
		n.users = map[user]int{}
	}
	n.users[u]++
	return nil
}

func (n *node) release(u user) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.users[u] <= 1 {
		delete(n.users, u)
		return
	}
	n.users[u]--
}

// releaseParents drops the references n took on its Context and, when it
// has one, its Dev.
func (n *node) releaseParents(c *Context, d *Dev) {
	c.release(n)
	if d != nil {
		d.release(n)
	}
}

// closeOwned closes child, a UAR or UMem that the owner made for itself:
// the owner's reference goes first, and comes back when Close fails, so
// that a later teardown can try again.
func (n *node) closeOwned(op, kind string, child *node, closeChild func() error) error {
	child.release(n)
	if err := closeChild(); err != nil {
		child.acquire(op, kind, n)
		return err
	}
	return nil
}

// closeLeaf is the Close of an object that references only its Context and
// Dev (a UAR, a UMem). In SDK mode (sdkFree not nil) an SDK failure still
// closes it, as DOCA releases the handle in every case; in open mode a
// driver failure leaves it open, so Close can be called again.
func (n *node) closeLeaf(op, kind string, c *Context, d *Dev, sdkFree, free func() error) error {
	done, err := n.beginClose(op, kind)
	if done || err != nil {
		return err
	}
	if sdkFree != nil {
		err = sdkFree()
		d.release(n)
		n.endClose(nil)
		return err
	}
	if err = free(); err == nil {
		n.releaseParents(c, d)
	}
	n.endClose(err)
	return err
}

// usersLocked describes the users: "QP 0x12 on emu0 (2), hold \"...\"".
func (n *node) usersLocked() (int, string) {
	total := 0
	names := make([]string, 0, len(n.users))
	for u, c := range n.users {
		total += c
		s := u.userName()
		if c > 1 {
			s += fmt.Sprintf(" (%d)", c)
		}
		names = append(names, s)
	}
	sort.Strings(names)
	return total, strings.Join(names, ", ")
}

// beginClose starts closing n. It returns done=true when n is already
// closed (Close is idempotent) and ErrInUse, naming the users, while
// anything references n. On success n is held exclusively (no call runs on
// it) and locked: the caller frees the resource and calls endClose.
func (n *node) beginClose(op, kind string) (done bool, err error) {
	n.life.Lock()
	n.mu.Lock()
	switch {
	case !n.made:
		err = notMade(op, kind)
	case n.closed:
		done = true
	case len(n.users) > 0:
		c, who := n.usersLocked()
		err = newErr(op, ErrInUse, "%s is still referenced %d time(s), by %s; close or release them first", n.userName(), c, who)
	default:
		return false, nil
	}
	n.mu.Unlock()
	n.life.Unlock()
	return done, err
}

// endClose finishes a close started by beginClose. On error the object
// stays open and usable.
func (n *node) endClose(err error) {
	if err == nil {
		n.closed = true
	}
	n.mu.Unlock()
	n.life.Unlock()
	if err == nil {
		track(n, false)
	}
}

// Hold is a reference on a verbs object taken by code that uses the object
// without being made on it: package gpunetio holds every QP and CQ it
// exports and every UAR page it maps into a GPU. While a Hold is
// unreleased, Close of the object fails with ErrInUse naming the holder,
// and the object stays fully usable; so a CPU proxy or a GPU kernel never
// writes a doorbell page or ring that was freed under it. A Hold is taken
// with the Hold method of the object (QP.Hold, CQ.Hold, ...), which fails
// with ErrBadState on a closed object: a layer that holds what it uses
// refuses closed objects at the same time.
type Hold struct {
	n      *node
	holder string
	stack  callstack.Stack
	done   atomic.Bool
}

func (h *Hold) userName() string { return fmt.Sprintf("hold %q", h.holder) }

// Holder is the description given when the hold was taken.
func (h *Hold) Holder() string {
	if h == nil {
		return ""
	}
	return h.holder
}

// Release drops the reference. It is idempotent, and a nil Hold is a no-op.
func (h *Hold) Release() {
	if h == nil || h.n == nil || !h.done.CompareAndSwap(false, true) {
		return
	}
	h.n.release(h)
	trackHold(h, false)
}

// hold takes a Hold on n for holder.
func (n *node) hold(op, kind, holder string) (*Hold, error) {
	if err := n.use(op, kind); err != nil {
		return nil, err
	}
	if holder == "" {
		return nil, newErr(op, ErrInvalidValue, "empty holder description")
	}
	h := &Hold{n: n, holder: holder, stack: stacks.Here(2)}
	if err := n.acquire(op, kind, h); err != nil {
		return nil, err
	}
	trackHold(h, true)
	return h, nil
}

// StacksEnv is the environment variable that turns on stack recording at
// start-up when it is set to a non-empty value other than "0".
const StacksEnv = "GPUNETIO_VERBS_STACKS"

var stacks = callstack.NewRecorder(StacksEnv, "verbs.RecordStacks(true)")

// RecordStacks turns on (or off) recording of the stack that creates each
// object and takes each Hold, for OpenObjects and LeakReport. It is off by
// default, when creating an object costs nothing extra; this package's
// tests and StacksEnv turn it on.
func RecordStacks(on bool) { stacks.Set(on) }

var live = struct {
	sync.Mutex
	nodes map[*node]struct{}
	holds map[*Hold]struct{}
}{nodes: map[*node]struct{}{}, holds: map[*Hold]struct{}{}}

func track(n *node, open bool) {
	live.Lock()
	if open {
		live.nodes[n] = struct{}{}
	} else {
		delete(live.nodes, n)
	}
	live.Unlock()
}

func trackHold(h *Hold, open bool) {
	live.Lock()
	if open {
		live.holds[h] = struct{}{}
	} else {
		delete(live.holds, h)
	}
	live.Unlock()
}

// LiveObjects reports how many objects of each kind ("Context", "PD", "QP",
// ...) are open. Internal objects count too: a CQ made without external
// memory owns a UMem and a UAR.
func LiveObjects() map[string]int {
	live.Lock()
	defer live.Unlock()
	m := map[string]int{}
	for n := range live.nodes {
		m[n.kind]++
	}
	return m
}

// OpenObject is one open object of this package, or one unreleased Hold.
type OpenObject struct {
	// Kind is "Context", "PD", "MR", "UMem", "UAR", "CQ", "SRQ", "QP", or
	// "Hold".
	Kind string
	// What names the object ("QP 0x1a2 on emu0") and who still references
	// it; for a Hold, the holder and the object held.
	What string
	// Stack is where the object was created or the hold taken (one
	// "\tfunction\n\t\tfile:line\n" pair per frame), or "" when stack
	// recording was off at the time (RecordStacks).
	Stack string
}

func (o OpenObject) String() string { return callstack.Object(o).String() }

// OpenObjects lists every open object and every unreleased Hold, sorted by
// kind and name.
func OpenObjects() []OpenObject {
	live.Lock()
	nodes := make([]*node, 0, len(live.nodes))
	for n := range live.nodes {
		nodes = append(nodes, n)
	}
	holds := make([]*Hold, 0, len(live.holds))
	for h := range live.holds {
		holds = append(holds, h)
	}
	live.Unlock()
	out := make([]callstack.Object, 0, len(nodes)+len(holds))
	for _, n := range nodes {
		n.mu.Lock()
		what := n.userName()
		if c, who := n.usersLocked(); c > 0 {
			what += ", referenced by " + who
		}
		out = append(out, callstack.Object{Kind: n.kind, What: what, Stack: n.stack.String()})
		n.mu.Unlock()
	}
	for _, h := range holds {
		out = append(out, callstack.Object{Kind: "Hold", What: fmt.Sprintf("%q on %s", h.holder, h.n.userName()), Stack: h.stack.String()})
	}
	return callstack.Sorted[OpenObject](out, nil)
}

// LeakReport returns "" when nothing is open, and otherwise a multi-line
// report naming each open object, who references it and, when stacks are
// recorded, where it was created. A TestMain fails the run on it.
func LeakReport() string {
	return callstack.LeakReport(stacks, "verbs: %d object(s) still open:", OpenObjects())
}
