package wire

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/gdaki/gpunetio/internal/callstack"
)

// registry maps the GIDs of this process's open ports to the ports, for the
// in-process fast path. Every frame sent looks its destination up, from the
// engines of several NICs at once: the map is copied on every change
// (ports open and close rarely) and read through an atomic pointer, so that
// a lookup writes nothing the ports share (lookupDst stores the sending
// port's own hint, when the destination or the map changed).
var registry struct {
	sync.Mutex // serializes changes
	m          atomic.Pointer[map[GID]*Port]
}

func register(p *Port) error {
	registry.Lock()
	defer registry.Unlock()
	old := registryMap()
	if _, dup := old[p.gid]; dup {
		return fmt.Errorf("wire: listen: GID %s already belongs to a port of this process", p.gid)
	}
	m := make(map[GID]*Port, len(old)+1)
	for g, q := range old {
		m[g] = q
	}
	m[p.gid] = p
	registry.m.Store(&m)
	return nil
}

func unregister(p *Port) {
	registry.Lock()
	defer registry.Unlock()
	old := registryMap()
	if old[p.gid] != p {
		return
	}
	m := make(map[GID]*Port, len(old))
	for g, q := range old {
		if g != p.gid {
			m[g] = q
		}
	}
	registry.m.Store(&m)
}

// registryMap returns the current map (never written after it is stored).
func registryMap() map[GID]*Port {
	if m := registry.m.Load(); m != nil {
		return *m
	}
	return nil
}

// dstHint is the answer of a port's last lookup of a destination: the
// port of this process that owns gid (nil for none) in registry map m.
type dstHint struct {
	m   *map[GID]*Port
	gid GID
	p   *Port
}

// lookupDst returns the port of this process that owns g, or nil, through
// the port's hint: a port sends to one destination or few, frame after
// frame, and the hint holds while the registry's map is the one it was
// found in (a map is never written after it is stored), so a frame costs a
// compare instead of hashing its GID. Every port of the process that opens
// or closes stores a new map.
func (p *Port) lookupDst(g GID) *Port {
	m := registry.m.Load()
	if h := p.lastDst.Load(); h != nil && h.m == m && h.gid == g {
		return h.p
	}
	var d *Port
	if m != nil {
		d = (*m)[g]
	}
	p.lastDst.Store(&dstHint{m: m, gid: g, p: d})
	return d
}

// trackStacks, when set (by tests), makes Listen record the stack that
// opened each port, so that a leak check can name where a port still open
// came from.
var trackStacks atomic.Bool

// callers returns the caller's stack below skip frames, formatted one frame
// per line.
func callers(skip int) string { return callstack.Here(skip).String() }

// openPorts describes every port of this process that is still open, with
// the stack that opened it when trackStacks was set.
func openPorts() []string {
	var out []string
	for g, p := range registryMap() {
		s := fmt.Sprintf("port %s (%s), opened at:\n%s", g, p.Addr(), p.stack)
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
