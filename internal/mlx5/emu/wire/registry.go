package wire

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/gdaki/gpunetio/internal/callstack"
)

// registry maps the GIDs of this process's open ports to the ports, for the
// in-process fast path.
var registry = struct {
	sync.RWMutex
	m map[GID]*Port
}{m: make(map[GID]*Port)}

func register(p *Port) error {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[p.gid]; dup {
		return fmt.Errorf("wire: listen: GID %s already belongs to a port of this process", p.gid)
	}
	registry.m[p.gid] = p
	return nil
}

func unregister(p *Port) {
	registry.Lock()
	if registry.m[p.gid] == p {
		delete(registry.m, p.gid)
	}
	registry.Unlock()
}

func lookup(g GID) *Port {
	registry.RLock()
	p := registry.m[g]
	registry.RUnlock()
	return p
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
	registry.RLock()
	defer registry.RUnlock()
	var out []string
	for g, p := range registry.m {
		s := fmt.Sprintf("port %s (%s), opened at:\n%s", g, p.Addr(), p.stack)
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
