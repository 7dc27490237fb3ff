//go:build cgo

package devx

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"os"
	"sync"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/dl"
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
	// loaded keeps the driver's libraries open for the life of the process:
	// gdk_table holds addresses inside them.
	loaded []*dl.Library
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
		loaded, loadErr = loadInto(&C.gdk_table, ibv, mlx)
	})
	return loadErr
}

// loadInto opens the two libraries (Now|Local: nothing else resolves
// against them) and stores every entry point into table t. It returns the
// open libraries, or closes them and returns a *LibraryError naming what is
// missing.
func loadInto(t *C.struct_gdk_fns, ibv, mlx string) ([]*dl.Library, error) {
	names := [2]string{ibv, mlx}
	envs := [2]string{EnvLibIBVerbs, EnvLibMLX5}
	var libs []*dl.Library
	fail := func(err error) ([]*dl.Library, error) {
		closeAll(libs)
		return nil, err
	}
	// libibverbs first: libmlx5 needs it, and loading it under the name
	// asked for keeps libmlx5 from pulling in another copy.
	for i, n := range names {
		l, err := dl.Open(dl.Now|dl.Local, n)
		if err != nil {
			return fail(&LibraryError{Library: n, Env: envs[i], Reason: loaderText(err), Err: err})
		}
		libs = append(libs, l)
	}
	for i := 0; i < symCount; i++ {
		s := symInfo(i)
		li := 0
		if s.library == LibMLX5 {
			li = 1
		}
		fn, err := resolve(libs[li], s)
		if err != nil && !s.optional {
			return fail(&LibraryError{Library: names[li], Symbol: s.name + "@" + s.version,
				Since: s.since, Reason: loaderText(err), Err: err})
		}
		C.gdk_table_set(t, C.int(i), fn)
	}
	return libs, nil
}

// resolve looks s up at its version node, and by its bare name in a library
// built without symbol versioning; a failure reports the bare lookup.
func resolve(l *dl.Library, s sym) (unsafe.Pointer, error) {
	if fn, err := l.LookupVersion(s.name, s.version); err == nil {
		return fn, nil
	}
	return l.Lookup(s.name)
}

// loaderText is the dynamic loader's own message in err.
func loaderText(err error) string {
	var de *dl.Error
	if errors.As(err, &de) {
		return de.Msg
	}
	return err.Error()
}

// closeAll closes libs in the reverse of the load order.
func closeAll(libs []*dl.Library) {
	for i := len(libs) - 1; i >= 0; i-- {
		_ = libs[i].Close()
	}
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
func need(op string, i int) error {
	if C.gdk_has(C.int(i)) != 0 {
		return nil
	}
	s := symInfo(i)
	return missingSymbol(op, s.name, s.version, s.library, s.since)
}

// probe loads the two libraries into a scratch table, resolves every entry
// point and unloads them again: whether rdma-core would load under these
// names, without touching the table the driver uses.
func probe(ibv, mlx string) error {
	t := (*C.struct_gdk_fns)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_gdk_fns{}))))
	defer C.free(unsafe.Pointer(t))
	libs, err := loadInto(t, ibv, mlx)
	if err != nil {
		return err
	}
	closeAll(libs)
	return nil
}

// Indices of the optional entry points, for need() and tests.
const (
	symQueryGIDEx  = int(C.GDK_IBV_QUERY_GID_EX)
	symRegDmabufMR = int(C.GDK_IBV_REG_DMABUF_MR)
	symUMEMRegEx   = int(C.GDK_MLX5DV_DEVX_UMEM_REG_EX)
	symCount       = int(C.GDK_SYM_COUNT)
)

// swapSymbol replaces entry point i of the driver's table and returns the
// previous one. Tests use it to play an rdma-core that lacks an optional
// entry point; nothing else may call it.
func swapSymbol(i int, fn unsafe.Pointer) unsafe.Pointer {
	return C.gdk_set_fn(C.int(i), fn)
}

// headerConstants are the values rdma-core's headers give the constants that
// package mlx5 retypes, so a test can check that they agree.
func headerConstants() map[string]uint64 {
	return map[string]uint64{
		"IBV_ACCESS_LOCAL_WRITE":             C.IBV_ACCESS_LOCAL_WRITE,
		"IBV_ACCESS_REMOTE_WRITE":            C.IBV_ACCESS_REMOTE_WRITE,
		"IBV_ACCESS_REMOTE_READ":             C.IBV_ACCESS_REMOTE_READ,
		"IBV_ACCESS_REMOTE_ATOMIC":           C.IBV_ACCESS_REMOTE_ATOMIC,
		"IBV_ACCESS_MW_BIND":                 C.IBV_ACCESS_MW_BIND,
		"IBV_ACCESS_ZERO_BASED":              C.IBV_ACCESS_ZERO_BASED,
		"IBV_ACCESS_ON_DEMAND":               C.IBV_ACCESS_ON_DEMAND,
		"IBV_ACCESS_HUGETLB":                 C.IBV_ACCESS_HUGETLB,
		"IBV_ACCESS_RELAXED_ORDERING":        C.IBV_ACCESS_RELAXED_ORDERING,
		"IBV_ACCESS_OPTIONAL_RANGE":          C.IBV_ACCESS_OPTIONAL_RANGE,
		"MLX5DV_UAR_ALLOC_TYPE_BF":           C.MLX5DV_UAR_ALLOC_TYPE_BF,
		"MLX5DV_UAR_ALLOC_TYPE_NC":           C.MLX5DV_UAR_ALLOC_TYPE_NC,
		"MLX5DV_UAR_ALLOC_TYPE_NC_DEDICATED": C.MLX5DV_UAR_ALLOC_TYPE_NC_DEDICATED,
		"IBV_LINK_LAYER_UNSPECIFIED":         C.IBV_LINK_LAYER_UNSPECIFIED,
		"IBV_LINK_LAYER_INFINIBAND":          C.IBV_LINK_LAYER_INFINIBAND,
		"IBV_LINK_LAYER_ETHERNET":            C.IBV_LINK_LAYER_ETHERNET,
		"IBV_PORT_DOWN":                      C.IBV_PORT_DOWN,
		"IBV_PORT_INIT":                      C.IBV_PORT_INIT,
		"IBV_PORT_ARMED":                     C.IBV_PORT_ARMED,
		"IBV_PORT_ACTIVE":                    C.IBV_PORT_ACTIVE,
		"IBV_GID_TYPE_IB":                    C.IBV_GID_TYPE_IB,
		"IBV_GID_TYPE_ROCE_V1":               C.IBV_GID_TYPE_ROCE_V1,
		"IBV_GID_TYPE_ROCE_V2":               C.IBV_GID_TYPE_ROCE_V2,
		"IBV_ATOMIC_HCA":                     C.IBV_ATOMIC_HCA,
		"IBV_ATOMIC_GLOB":                    C.IBV_ATOMIC_GLOB,
	}
}
