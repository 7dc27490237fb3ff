package doctorprobe

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

// gpn_probe loads lib, reports for each of n symbols whether it resolves,
// copies the loaded file's name into path and unloads the library. On a load
// failure it returns -1 with dlerror's text in err (dlerror is per thread,
// so it must be read inside this same call).
static int gpn_probe(const char *lib, const char **syms, int n, int *found,
		     char *path, size_t pathlen, char *err, size_t errlen) {
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "unknown dlopen error");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		dlerror();
		found[i] = dlsym(h, syms[i]) != NULL;
	}
	struct link_map *lm = NULL;
	path[0] = 0;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != NULL && lm->l_name != NULL)
		snprintf(path, pathlen, "%s", lm->l_name);
	dlclose(h);
	return 0;
}
*/
import "C"

import (
	"errors"
	"path/filepath"
	"strings"
	"unsafe"
)

// Library loads soname with dlopen(RTLD_NOW | RTLD_LOCAL), reports for each
// of symbols whether dlsym resolves it (found[i] for symbols[i]), returns
// the file the loader opened (symbolic links resolved when they can be) and
// unloads the library again. A library that cannot be loaded gives an error
// holding dlerror's text, which always names soname; no other error occurs.
func Library(soname string, symbols []string) (path string, found []bool, err error) {
	clib := C.CString(soname)
	defer C.free(unsafe.Pointer(clib))
	csyms := C.malloc(C.size_t(len(symbols)+1) * C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(csyms)
	symArr := unsafe.Slice((**C.char)(csyms), len(symbols)+1)
	for i, s := range symbols {
		symArr[i] = C.CString(s)
	}
	defer func() {
		for i := range symbols {
			C.free(unsafe.Pointer(symArr[i]))
		}
	}()
	cfound := (*C.int)(C.calloc(C.size_t(len(symbols)+1), C.size_t(unsafe.Sizeof(C.int(0)))))
	defer C.free(unsafe.Pointer(cfound))
	const bufLen = 4096
	pathBuf := (*C.char)(C.malloc(bufLen))
	defer C.free(unsafe.Pointer(pathBuf))
	errBuf := (*C.char)(C.malloc(bufLen))
	defer C.free(unsafe.Pointer(errBuf))

	rc := C.gpn_probe(clib, (**C.char)(csyms), C.int(len(symbols)), cfound, pathBuf, bufLen, errBuf, bufLen)
	if rc != 0 {
		msg := C.GoString(errBuf)
		if !strings.Contains(msg, soname) {
			msg = soname + ": " + msg
		}
		return "", nil, errors.New(msg)
	}
	path = C.GoString(pathBuf)
	if canon, err := filepath.EvalSymlinks(path); err == nil {
		path = canon
	}
	ok := unsafe.Slice(cfound, len(symbols)+1)
	found = make([]bool, len(symbols))
	for i := range symbols {
		found[i] = ok[i] != 0
	}
	return path, found, nil
}
