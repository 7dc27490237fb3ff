package cudasys

/*
#include "shim.h"
#include "nvrtc.h"
*/
import "C"

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/dl"
)

// loadAlready is the outcome of a second LoadNVRTC after one succeeded.
const loadAlready = 3

var (
	loadMu sync.Mutex
	// kept holds every library whose addresses a C table may hold: they are
	// never closed.
	kept  []*dl.Library
	nvrtc *dl.Library // the loaded NVRTC, nil before
)

// cTable is one of the C entry-point tables (gc_syms in shim.c, gn_syms in
// nvrtc.c) as the loader walks it.
type cTable struct {
	count    func() int
	name     func(i int) string
	required func(i int) bool
	bind     func(i int, fn unsafe.Pointer)
}

var driverTable = cTable{
	count:    func() int { return int(C.gc_sym_count()) },
	name:     func(i int) string { return C.GoString(C.gc_sym_name(C.int(i))) },
	required: func(i int) bool { return C.gc_sym_required(C.int(i)) != 0 },
	bind:     func(i int, fn unsafe.Pointer) { C.gc_bind(C.int(i), fn) },
}

var nvrtcTable = cTable{
	count:    func() int { return int(C.gn_sym_count()) },
	name:     func(i int) string { return C.GoString(C.gn_sym_name(C.int(i))) },
	required: func(i int) bool { return C.gn_sym_required(C.int(i)) != 0 },
	bind:     func(i int, fn unsafe.Pointer) { C.gn_bind(C.int(i), fn) },
}

// bindLibrary opens lib (Now|Local), resolves every entry of t and, only
// when every required one resolved, stores them all (NULL for a missing
// optional one) and keeps the library open. It returns a Load* outcome and,
// on failure, dlerror's text or the missing symbol's name; a failure binds
// nothing and closes the library.
func bindLibrary(lib string, t cTable) (*dl.Library, int, string) {
	l, err := dl.Open(dl.Now|dl.Local, lib)
	if err != nil {
		return nil, LoadNoLibrary, loaderText(err)
	}
	fns := make([]unsafe.Pointer, t.count())
	for i := range fns {
		p, err := l.Lookup(t.name(i))
		if err != nil && t.required(i) {
			_ = l.Close()
			return nil, LoadMissingSymbol, t.name(i)
		}
		fns[i] = p
	}
	for i, p := range fns {
		t.bind(i, p)
	}
	kept = append(kept, l)
	return l, LoadOK, ""
}

// loaderText is the dynamic loader's own message (dlerror) in err.
func loaderText(err error) string {
	var de *dl.Error
	if errors.As(err, &de) {
		return de.Msg
	}
	return err.Error()
}

// LoadDriver opens lib and resolves every entry point. It returns one of the
// Load* outcomes and, on failure, dlerror() or the missing symbol's name.
// Call it once per process; the library is never closed.
func LoadDriver(lib string) (int, string) {
	loadMu.Lock()
	defer loadMu.Unlock()
	_, code, msg := bindLibrary(lib, driverTable)
	return code, msg
}

// LoadNVRTC opens lib and resolves the NVRTC entry points, with the outcomes
// of LoadDriver. Once one library is loaded, later calls fail: one NVRTC per
// process.
func LoadNVRTC(lib string) (int, string) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if nvrtc != nil {
		return loadAlready, "an NVRTC library is already loaded"
	}
	l, code, msg := bindLibrary(lib, nvrtcTable)
	nvrtc = l
	return code, msg
}

// Preload opens lib and keeps it open; it reports whether dlopen
// succeeded. It is for libnvrtc-builtins: libnvrtc opens it by soname,
// which an already loaded library satisfies. It is opened Global, as this
// binding always has, so that its symbols are also in the global scope
// libnvrtc's loads may search.
func Preload(lib string) bool {
	l, err := dl.Open(dl.Now|dl.Global, lib)
	if err != nil {
		return false
	}
	loadMu.Lock()
	kept = append(kept, l)
	loadMu.Unlock()
	return true
}
