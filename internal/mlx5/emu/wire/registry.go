package wire

import (
	"fmt"
	"sync"
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
