//go:build cgo

package devx

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"os"
	"sync"
	"unsafe"
)

// Library names and the variables that override them.
const (
	LibIBVerbs    = "libibverbs.so.1"
	LibMLX5       = "libmlx5.so.1"
	EnvLibIBVerbs = "GDAKI_LIBIBVERBS"
	EnvLibMLX5    = "GDAKI_LIBMLX5"
)

var (
	loadOnce sync.Once
	loadErr  error
)

// libNames returns the names to dlopen: the environment's, else the sonames.
func libNames() (ibv, mlx string) {
	ibv, mlx = LibIBVerbs, LibMLX5
	if v := os.Getenv(EnvLibIBVerbs); v != "" {
		ibv = v
	}
	if v := os.Getenv(EnvLibMLX5); v != "" {
		mlx = v
	}
	return ibv, mlx
}

// load binds rdma-core on first use; later calls return the first result.
// The libraries stay loaded for the life of the process.
func load() error {
	loadOnce.Do(func() {
		ibv, mlx := libNames()
		loadErr = loadInto(&C.gdk_table, ibv, mlx)
	})
	return loadErr
}

// loadInto opens the two libraries into table t and resolves every entry
// point, or returns a *LibraryError naming what is missing.
func loadInto(t *C.struct_gdk_fns, ibv, mlx string) error {
	cibv := C.CString(ibv)
	defer C.free(unsafe.Pointer(cibv))
	cmlx := C.CString(mlx)
	defer C.free(unsafe.Pointer(cmlx))
	var errbuf [512]C.char
	var badLib, badSym C.int
	if C.gdk_load(t, cibv, cmlx, &badLib, &badSym, &errbuf[0], C.size_t(len(errbuf))) == 0 {
		return nil
	}
	names := [2]string{ibv, mlx}
	envs := [2]string{EnvLibIBVerbs, EnvLibMLX5}
	e := &LibraryError{Reason: C.GoString(&errbuf[0])}
	if badLib >= 0 && badLib < 2 {
		e.Library, e.Env = names[badLib], envs[badLib]
	}
	if badSym >= 0 {
		s := symInfo(int(badSym))
		e.Symbol = s.name + "@" + s.version
		e.Since = s.since
		e.Env = ""
	}
	return e
}

// sym describes one entry point of the table (shim.c's gdk_syms).
type sym struct {
	name, version, library string
	optional               bool
	since                  int
}

func symInfo(i int) sym {
	p := C.gdk_sym_info_at(C.int(i))
	if p == nil {
		return sym{}
	}
	lib := LibIBVerbs
	if p.lib == C.GDK_LIB_MLX5 {
		lib = LibMLX5
	}
	return sym{
		name:     C.GoString(p.name),
		version:  C.GoString(p.version),
		library:  lib,
		optional: p.optional != 0,
		since:    int(p.since),
	}
}

// need returns nil when optional entry point i is bound, else the ENOTSUP
// error of op naming the symbol and the rdma-core release that added it.
func need(op string, i C.int) error {
	if C.gdk_has(i) != 0 {
		return nil
	}
	s := symInfo(int(i))
	return missingSymbol(op, s.name, s.version, s.library, s.since)
}
