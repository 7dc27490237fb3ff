//go:build cgo

package dl

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>

// The dynamic loader, one call per operation. Each reads dlerror() in the
// same call as the operation it reports on: dlerror is per thread and Go may
// run the next cgo call on another one.

static void gdl_err(char *err, size_t errlen, const char *fallback)
{
	const char *e = dlerror();

	if (errlen > 0)
		snprintf(err, errlen, "%s", e != NULL ? e : fallback);
}

static void *gdl_open(const char *name, int flags, char *err, size_t errlen)
{
	dlerror();
	void *h = dlopen(name, flags);
	if (h == NULL)
		gdl_err(err, errlen, "dlopen failed");
	return h;
}

// gdl_sym resolves name (at version when version is not NULL). A symbol
// whose address is NULL counts as missing: no binding can call it.
static void *gdl_sym(void *h, const char *name, const char *version, char *err, size_t errlen)
{
	dlerror();
	void *p = version != NULL ? dlvsym(h, name, version) : dlsym(h, name);
	if (p == NULL)
		gdl_err(err, errlen, "symbol resolves to NULL");
	return p;
}

static int gdl_close(void *h, char *err, size_t errlen)
{
	dlerror();
	int rc = dlclose(h);
	if (rc != 0)
		gdl_err(err, errlen, "dlclose failed");
	return rc;
}

static int gdl_path(void *h, char *path, size_t pathlen, char *err, size_t errlen)
{
	struct link_map *lm = NULL;

	dlerror();
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL) {
		gdl_err(err, errlen, "no link map");
		return -1;
	}
	snprintf(path, pathlen, "%s", lm->l_name != NULL ? lm->l_name : "");
	return 0;
}
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// Flags for Open: the dlopen modes.
const (
	Lazy   Flags = C.RTLD_LAZY   // resolve functions on first call
	Now    Flags = C.RTLD_NOW    // resolve every symbol at load time
	Local  Flags = C.RTLD_LOCAL  // symbols do not serve later loads
	Global Flags = C.RTLD_GLOBAL // symbols serve libraries loaded later
)

// errLen is the room for one dlerror text; the loader's messages are a
// path and a sentence.
const errLen = 1024

// Library is an open shared library.
type Library struct {
	name  string
	flags Flags

	mu sync.RWMutex
	h  unsafe.Pointer // nil once closed
}

// Open opens the first of names that the dynamic loader can load, with
// flags (Now|Local when flags is 0). When none loads, the *Error has Op
// "dlopen", Library names[0], Tried every name, and Msg the loader's
// message for each, joined by "; ".
func Open(flags Flags, names ...string) (*Library, error) {
	if flags == 0 {
		flags = Now | Local
	}
	if len(names) == 0 {
		return nil, &Error{Op: "dlopen", Msg: "no library name given"}
	}
	var msgs []string
	buf := (*C.char)(C.malloc(errLen))
	defer C.free(unsafe.Pointer(buf))
	for _, n := range names {
		if i := strings.IndexByte(n, 0); i >= 0 {
			// C would read the name only up to the NUL and open another
			// library than the one named.
			msgs = append(msgs, fmt.Sprintf("%q: NUL byte at offset %d of the library name", n, i))
			continue
		}
		cn := C.CString(n)
		h := C.gdl_open(cn, C.int(flags), buf, errLen)
		C.free(unsafe.Pointer(cn))
		if h != nil {
			return &Library{name: n, flags: flags, h: h}, nil
		}
		msgs = append(msgs, C.GoString(buf))
	}
	return nil, openError(names, msgs)
}

// Name is the candidate name that loaded.
func (l *Library) Name() string { return l.name }

// Lookup returns the address of symbol name (dlsym). The address is for a C
// shim to store in its function-pointer table; Go never calls it.
func (l *Library) Lookup(name string) (unsafe.Pointer, error) {
	return l.lookup("dlsym", name, "")
}

// LookupVersion returns the address of name at version node version
// (dlvsym), for libraries that export several implementations of a name.
func (l *Library) LookupVersion(name, version string) (unsafe.Pointer, error) {
	return l.lookup("dlvsym", name, version)
}

func (l *Library) lookup(op, name, version string) (unsafe.Pointer, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.h == nil {
		return nil, &Error{Op: op, Library: l.name, Symbol: name, Version: version, Msg: ErrClosed.Error(), err: ErrClosed}
	}
	if i := strings.IndexByte(name+version, 0); i >= 0 {
		return nil, &Error{Op: op, Library: l.name, Symbol: name, Version: version,
			Msg: fmt.Sprintf("NUL byte at offset %d of the symbol name or version", i)}
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var cv *C.char
	if version != "" {
		cv = C.CString(version)
		defer C.free(unsafe.Pointer(cv))
	}
	buf := (*C.char)(C.malloc(errLen))
	defer C.free(unsafe.Pointer(buf))
	p := C.gdl_sym(l.h, cn, cv, buf, errLen)
	if p == nil {
		return nil, &Error{Op: op, Library: l.name, Symbol: name, Version: version, Msg: C.GoString(buf)}
	}
	return p, nil
}

// Path returns the file the dynamic loader opened for the library (its
// link-map name, dlinfo RTLD_DI_LINKMAP): the path as the loader found it,
// symbolic links not resolved.
func (l *Library) Path() (string, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.h == nil {
		return "", &Error{Op: "dlinfo", Library: l.name, Msg: ErrClosed.Error(), err: ErrClosed}
	}
	path := (*C.char)(C.malloc(errLen * 4))
	defer C.free(unsafe.Pointer(path))
	buf := (*C.char)(C.malloc(errLen))
	defer C.free(unsafe.Pointer(buf))
	if C.gdl_path(l.h, path, errLen*4, buf, errLen) != 0 {
		return "", &Error{Op: "dlinfo", Library: l.name, Msg: C.GoString(buf)}
	}
	return C.GoString(path), nil
}

// Close releases the handle (dlclose). Addresses looked up through it must
// not be called afterwards. Close is idempotent: later calls return nil.
func (l *Library) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h == nil {
		return nil
	}
	buf := (*C.char)(C.malloc(errLen))
	defer C.free(unsafe.Pointer(buf))
	rc := C.gdl_close(l.h, buf, errLen)
	l.h = nil
	if rc != 0 {
		return &Error{Op: "dlclose", Library: l.name, Msg: C.GoString(buf)}
	}
	return nil
}
