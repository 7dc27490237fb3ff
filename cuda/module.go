package cuda

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/gdaki/gpunetio/internal/cudasys"
)

// jitLogSize is the size of the JIT error log buffer handed to
// cuModuleLoadDataEx.
const jitLogSize = 8192

// Module is a loaded CUDA module (CUmodule).
type Module struct {
	ctx  *Context
	at   origin
	mu   sync.RWMutex
	h    cudasys.Module
	dead bool
}

// Function is a kernel of a Module (CUfunction). It is valid while its
// Module is loaded.
type Function struct {
	mod  *Module
	h    cudasys.Function
	name string
}

// Name returns the kernel's symbol name.
func (f *Function) Name() string {
	if f == nil {
		return ""
	}
	return f.name
}

// ModuleLoadData loads a module from an in-memory image: PTX text, a cubin
// or a fatbin (cuModuleLoadDataEx), for example Compiled.Image from Compile
// or the output of nvcc -fatbin. PTX is compiled by the driver's JIT for the
// device; on failure the JIT error log is in the error's Detail. The image is
// copied (with a terminating NUL, which PTX needs), so image may be Go
// memory.
func (c *Context) ModuleLoadData(image []byte) (*Module, error) {
	if err := c.usable("ModuleLoadData"); err != nil {
		return nil, err
	}
	const op = "cuModuleLoadDataEx"
	if len(image) == 0 {
		return nil, &Error{Op: op, Result: ErrorInvalidImage, Detail: "empty image"}
	}
	var (
		h   cudasys.Module
		log string
	)
	err := c.call(op, func(ch cudasys.Ctx) (r int32) {
		h, log, r = cudasys.ModuleLoadData(ch, image, jitLogSize)
		return r
	})
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Detail = strings.TrimSpace(log)
		}
		return nil, err
	}
	m := &Module{ctx: c, h: h, at: here()}
	c.mu.Lock()
	c.modules[m] = struct{}{}
	c.mu.Unlock()
	return m, nil
}

// ModuleLoadFile reads a fatbin, cubin or PTX file and loads it with
// ModuleLoadData.
func (c *Context) ModuleLoadFile(path string) (*Module, error) {
	if err := c.usable("ModuleLoadFile"); err != nil {
		return nil, err
	}
	img, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cuda: load module: %w", err)
	}
	m, err := c.ModuleLoadData(img)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", path, err)
	}
	return m, nil
}

// usable checks, before any driver call, that m can serve typ.method (m
// as what, "" for the receiver): not nil, not a zero value, not unloaded,
// and its context not released.
func (m *Module) usable(typ, method, what string) error {
	switch {
	case m == nil:
		if what == "" {
			what = "nil *Module"
		}
		return released(typ, method, what)
	case m.ctx == nil:
		return zeroValue(typ, method, what)
	}
	m.mu.RLock()
	dead := m.dead
	m.mu.RUnlock()
	if dead {
		return released(typ, method, what)
	}
	ctx := "context"
	if what != "" {
		ctx = what + "'s context"
	}
	return m.ctx.usableAs(typ, method, ctx)
}

func (m *Module) with(op string, f func(cudasys.Module) error) error {
	if m == nil {
		return fmt.Errorf("cuda: %s: nil module: %w", op, ErrReleased)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.dead {
		return fmt.Errorf("cuda: %s: module: %w", op, ErrReleased)
	}
	return f(m.h)
}

// Function looks a kernel up by its symbol name (cuModuleGetFunction): the
// name itself for an extern "C" kernel, otherwise the mangled name (see
// CompileOptions.NameExpressions). An unknown name fails with
// CUDA_ERROR_NOT_FOUND.
func (m *Module) Function(name string) (*Function, error) {
	const op = "cuModuleGetFunction"
	if err := m.usable("Module", "Function", ""); err != nil {
		return nil, err
	}
	if err := checkCString("Module.Function", "kernel name", name); err != nil {
		return nil, err
	}
	var f cudasys.Function
	err := m.with(op, func(h cudasys.Module) error {
		return m.ctx.call(op, func(ch cudasys.Ctx) (r int32) {
			f, r = cudasys.ModuleGetFunction(ch, h, name)
			return r
		})
	})
	if err != nil {
		return nil, fmt.Errorf("kernel %q: %w", name, err)
	}
	return &Function{mod: m, h: f, name: name}, nil
}

// Global returns the device address and size of a module-scope variable
// (cuModuleGetGlobal_v2).
func (m *Module) Global(name string) (DevPtr, uintptr, error) {
	const op = "cuModuleGetGlobal_v2"
	if err := m.usable("Module", "Global", ""); err != nil {
		return 0, 0, err
	}
	if err := checkCString("Module.Global", "variable name", name); err != nil {
		return 0, 0, err
	}
	var (
		p uint64
		n uintptr
	)
	err := m.with(op, func(h cudasys.Module) error {
		return m.ctx.call(op, func(ch cudasys.Ctx) (r int32) {
			p, n, r = cudasys.ModuleGetGlobal(ch, h, name)
			return r
		})
	})
	if err != nil {
		return 0, 0, fmt.Errorf("global %q: %w", name, err)
	}
	return DevPtr(p), n, nil
}

// Unload unloads the module (cuModuleUnload); its Functions become invalid.
// A second Unload is a no-op.
func (m *Module) Unload() error {
	if m == nil {
		return nil
	}
	if m.ctx == nil {
		return zeroValue("Module", "Unload", "")
	}
	m.mu.Lock()
	if m.dead {
		m.mu.Unlock()
		return nil
	}
	if err := m.ctx.usableAs("Module", "Unload", "context"); err != nil {
		m.mu.Unlock()
		return err
	}
	m.dead = true
	h := m.h
	m.mu.Unlock()
	err := m.ctx.call("cuModuleUnload", func(ch cudasys.Ctx) int32 { return cudasys.ModuleUnload(ch, h) })
	if err != nil {
		m.mu.Lock()
		m.dead = false
		m.mu.Unlock()
		return err
	}
	m.ctx.mu.Lock()
	delete(m.ctx.modules, m)
	m.ctx.mu.Unlock()
	return nil
}
