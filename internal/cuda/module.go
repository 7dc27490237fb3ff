package cuda

/*
#include <stdlib.h>
#include <string.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// jitLogSize is the size of the JIT error log buffer handed to
// cuModuleLoadDataEx.
const jitLogSize = 8192

// Module is a loaded CUDA module (CUmodule).
type Module struct {
	ctx  *Context
	mu   sync.RWMutex
	h    C.gc_module
	dead bool
}

// Function is a kernel of a Module (CUfunction). It is valid while its
// Module is loaded.
type Function struct {
	mod  *Module
	h    C.gc_function
	name string
}

// Name returns the kernel's symbol name.
func (f *Function) Name() string { return f.name }

// ModuleLoadData loads a module from an in-memory image: PTX text, a cubin
// or a fatbin (cuModuleLoadDataEx). PTX is compiled by the driver's JIT for
// the device; on failure the JIT error log is in the error's Detail. The
// image is copied (with a terminating NUL, which PTX needs), so image may be
// Go memory.
func (c *Context) ModuleLoadData(image []byte) (*Module, error) {
	const op = "cuModuleLoadDataEx"
	if len(image) == 0 {
		return nil, &Error{Op: op, Result: ErrorInvalidImage, Detail: "empty image"}
	}
	img := C.malloc(C.size_t(len(image) + 1))
	if img == nil {
		return nil, &Error{Op: op, Result: ErrorOutOfMemory, Detail: "copying the image"}
	}
	defer C.free(img)
	buf := unsafe.Slice((*byte)(img), len(image)+1)
	copy(buf, image)
	buf[len(image)] = 0
	logBuf := (*C.char)(C.calloc(jitLogSize, 1))
	if logBuf == nil {
		return nil, &Error{Op: op, Result: ErrorOutOfMemory, Detail: "JIT log buffer"}
	}
	defer C.free(unsafe.Pointer(logBuf))

	var h C.gc_module
	err := c.call(op, func(ch C.gc_ctx) C.gc_result {
		return C.gc_module_load_data_ex(ch, &h, img, logBuf, jitLogSize)
	})
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Detail = strings.TrimSpace(C.GoStringN(logBuf, C.int(C.strnlen(logBuf, jitLogSize))))
		}
		return nil, err
	}
	m := &Module{ctx: c, h: h}
	c.mu.Lock()
	c.modules[m] = struct{}{}
	c.mu.Unlock()
	return m, nil
}

func (m *Module) with(op string, f func(C.gc_module) error) error {
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

// Function looks a kernel up by its (mangled, unless extern "C") name
// (cuModuleGetFunction). An unknown name fails with CUDA_ERROR_NOT_FOUND.
func (m *Module) Function(name string) (*Function, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f C.gc_function
	err := m.with("cuModuleGetFunction", func(h C.gc_module) error {
		return m.ctx.call("cuModuleGetFunction", func(ch C.gc_ctx) C.gc_result {
			return C.gc_module_get_function(ch, &f, h, cs)
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
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var p C.gc_devptr
	var n C.size_t
	err := m.with("cuModuleGetGlobal_v2", func(h C.gc_module) error {
		return m.ctx.call("cuModuleGetGlobal_v2", func(ch C.gc_ctx) C.gc_result {
			return C.gc_module_get_global(ch, &p, &n, h, cs)
		})
	})
	if err != nil {
		return 0, 0, fmt.Errorf("global %q: %w", name, err)
	}
	return DevPtr(p), uintptr(n), nil
}

// Unload unloads the module (cuModuleUnload); its Functions become invalid.
// A second Unload is a no-op.
func (m *Module) Unload() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	if m.dead {
		m.mu.Unlock()
		return nil
	}
	m.dead = true
	h := m.h
	m.mu.Unlock()
	err := m.ctx.call("cuModuleUnload", func(ch C.gc_ctx) C.gc_result { return C.gc_module_unload(ch, h) })
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
