// Package emugpu plugs CUDA device memory into the emulated mlx5 device: it
// implements emu.GPUMemory over the cuda package so that rings, doorbell
// records and data buffers allocated with cuMemAlloc are read and written by
// the emulator through device copies (cuMemcpyDtoH / cuMemcpyHtoD).
//
// Install registers a CUDA context with the process-wide adapter and
// installs the adapter in the emulator (emu.SetGPUMemory) the first time;
// the returned function removes the context again and, when no context is
// left, uninstalls the adapter. Several contexts (GPUs) may be registered at
// once: an address belongs to the first one that reports it as device
// memory. The emulator classifies a range when it is registered (UMEM, MR),
// so install before creating UMEMs or MRs over GPU memory.
//
// All functions are safe for concurrent use; Read and Write are called from
// the emulator's engine goroutine and use the context methods, each of which
// makes the context current for its own driver call.
package emugpu

import (
	"fmt"
	"sync"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/mlx5/emu"
)

// adapter is the emu.GPUMemory over the registered contexts.
type adapter struct {
	mu   sync.RWMutex
	ctxs []*cuda.Context
}

var (
	instMu    sync.Mutex
	installed *adapter
)

// Install adds ctx to the adapter the emulator uses for GPU memory and
// returns the function that removes it (idempotent).
func Install(ctx *cuda.Context) (uninstall func()) {
	instMu.Lock()
	defer instMu.Unlock()
	if installed == nil {
		installed = &adapter{}
		emu.SetGPUMemory(installed)
	}
	a := installed
	a.mu.Lock()
	a.ctxs = append(a.ctxs, ctx)
	a.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			instMu.Lock()
			defer instMu.Unlock()
			a.mu.Lock()
			for i, c := range a.ctxs {
				if c == ctx {
					a.ctxs = append(a.ctxs[:i], a.ctxs[i+1:]...)
					break
				}
			}
			empty := len(a.ctxs) == 0
			a.mu.Unlock()
			if empty && installed == a {
				emu.SetGPUMemory(nil)
				installed = nil
			}
		})
	}
}

// Installed reports how many contexts the adapter holds.
func Installed() int {
	instMu.Lock()
	defer instMu.Unlock()
	if installed == nil {
		return 0
	}
	installed.mu.RLock()
	defer installed.mu.RUnlock()
	return len(installed.ctxs)
}

// owner returns the context whose device allocation holds [addr, addr+n).
func (a *adapter) owner(addr uintptr, n uint64) *cuda.Context {
	a.mu.RLock()
	defer a.mu.RUnlock()
	for _, c := range a.ctxs {
		if inRange(c, addr, n) {
			return c
		}
	}
	return nil
}

func inRange(c *cuda.Context, addr uintptr, n uint64) bool {
	if !c.IsDevicePointer(addr) {
		return false
	}
	start, size, err := c.PointerRange(cuda.DevPtr(addr))
	if err != nil {
		return false
	}
	return fits(uint64(start), uint64(size), uint64(addr), n)
}

// fits reports whether [addr, addr+n) lies in [start, start+size).
func fits(start, size, addr, n uint64) bool {
	return addr >= start && n <= size && addr-start <= size-n
}

func (a *adapter) Contains(addr uintptr, n uint64) bool { return a.owner(addr, n) != nil }

func (a *adapter) Read(dst []byte, addr uintptr) error {
	c := a.owner(addr, uint64(len(dst)))
	if c == nil {
		return fmt.Errorf("emugpu: read %d bytes at %#x: not in a registered GPU allocation", len(dst), addr)
	}
	return c.MemcpyDtoH(dst, cuda.DevPtr(addr))
}

func (a *adapter) Write(addr uintptr, src []byte) error {
	c := a.owner(addr, uint64(len(src)))
	if c == nil {
		return fmt.Errorf("emugpu: write %d bytes at %#x: not in a registered GPU allocation", len(src), addr)
	}
	return c.MemcpyHtoD(cuda.DevPtr(addr), src)
}
