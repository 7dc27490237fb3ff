package verbs

import (
	"sort"
	"sync"
)

// node is the lifetime bookkeeping every object embeds: whether it was
// closed, and how many live objects depend on it. A parent with live children
// refuses to close (ErrInUse), so teardown order mistakes are reported rather
// than corrupting the device.
type node struct {
	mu       sync.Mutex
	closed   bool
	children int
	kind     string
}

func (n *node) init(kind string) {
	n.kind = kind
	track(kind, +1)
}

// use returns an error if the object was closed (use after Close).
func (n *node) use(op string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return newErr(op, ErrBadState, "%s is closed", n.kind)
	}
	return nil
}

// acquire registers one more dependent object; it fails if n is closed.
func (n *node) acquire(op string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return newErr(op, ErrBadState, "%s is closed", n.kind)
	}
	n.children++
	return nil
}

func (n *node) release() {
	n.mu.Lock()
	n.children--
	n.mu.Unlock()
}

// beginClose checks that n can close. It returns done=true when n is already
// closed (Close is idempotent). On success the caller frees the resource and
// calls endClose with the result.
func (n *node) beginClose(op string) (done bool, err error) {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return true, nil
	}
	if n.children > 0 {
		c := n.children
		n.mu.Unlock()
		return false, newErr(op, ErrInUse, "%s is still referenced %d time(s) by open objects made on it; close them first", n.kind, c)
	}
	return false, nil
}

// endClose finishes a close started by beginClose (which left n locked).
func (n *node) endClose(err error) {
	if err == nil {
		n.closed = true
		track(n.kind, -1)
	}
	n.mu.Unlock()
}

var (
	liveMu sync.Mutex
	live   = map[string]int{}
)

func track(kind string, d int) {
	liveMu.Lock()
	live[kind] += d
	if live[kind] == 0 {
		delete(live, kind)
	}
	liveMu.Unlock()
}

// LiveObjects reports how many objects of each kind ("Context", "PD", "QP",
// ...) are open. Tests use it to fail on leaks.
func LiveObjects() map[string]int {
	liveMu.Lock()
	defer liveMu.Unlock()
	m := make(map[string]int, len(live))
	for k, v := range live {
		m[k] = v
	}
	return m
}

// LeakReport describes the objects still open, or "" when none is.
func LeakReport() string {
	m := LiveObjects()
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := "leaked verbs objects:"
	for _, k := range keys {
		s += " " + k + "=" + itoa(m[k])
	}
	return s
}

func itoa(v int) string {
	if v == 0 {
		return "0"
	}
	neg := v < 0
	if neg {
		v = -v
	}
	var b [20]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
