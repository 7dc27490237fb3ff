package cuda

import (
	"sync"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/cudasys"
)

// The synchronous copies to and from Go memory (MemcpyHtoD, MemcpyDtoH)
// move the bytes through pinned buffers of C memory that the Context owns:
// no Go pointer is ever handed to the driver. cgo refuses, with a panic, a
// Go pointer into an allocation that also holds Go pointers, and a []byte
// that slices an array field of such a struct is exactly that; staging makes
// every []byte safe. It costs one host memcpy, which the driver's own path
// for pageable memory pays as well.
const (
	stageSize = 256 << 10 // bytes per staging buffer; larger copies go in pieces
	maxStaged = 4         // buffers kept for reuse; more are freed after use
)

// stagePool is the Context's free list of staging buffers.
type stagePool struct {
	mu   sync.Mutex
	free []unsafe.Pointer
}

// get returns a staging buffer of stageSize bytes, allocating one when none
// is free.
func (s *stagePool) get(h cudasys.Ctx) (unsafe.Pointer, int32) {
	s.mu.Lock()
	if n := len(s.free); n > 0 {
		p := s.free[n-1]
		s.free = s.free[:n-1]
		s.mu.Unlock()
		return p, 0
	}
	s.mu.Unlock()
	return cudasys.MemHostAlloc(h, stageSize, 0)
}

// put returns a buffer to the pool, or frees it when the pool is full.
func (s *stagePool) put(h cudasys.Ctx, p unsafe.Pointer) {
	s.mu.Lock()
	if len(s.free) < maxStaged {
		s.free = append(s.free, p)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	cudasys.MemFreeHost(h, p)
}

// drain frees every pooled buffer (Release, with no copy in flight).
func (s *stagePool) drain(h cudasys.Ctx) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.free {
		cudasys.MemFreeHost(h, p)
	}
	s.free = nil
}

// staged runs f with the context handle and a staging buffer, holding the
// context alive like call does.
func (c *Context) staged(op string, f func(h cudasys.Ctx, buf unsafe.Pointer) int32) error {
	if err := c.enter(op); err != nil {
		return err
	}
	defer c.life.RUnlock()
	buf, r := c.stage.get(c.h)
	if err := check("cuMemHostAlloc (copy staging)", r); err != nil {
		return err
	}
	defer c.stage.put(c.h, buf)
	return check(op, f(c.h, buf))
}

// stageBytes views a staging buffer.
func stageBytes(buf unsafe.Pointer, n int) []byte { return unsafe.Slice((*byte)(buf), n) }
