// Package gdrcopy loads GDRCopy (libgdrapi.so.2) at run time and maps GPU
// memory into the process through the gdrdrv kernel module (BAR1), which
// gpunetio needs for its GPU_CPU memory type and for SW-emulated no-DBR QPs.
//
// Nothing is linked at build time: Open opens the library (internal/dl) once per
// process, resolves its entry points and calls gdr_open, which fails when
// the gdrdrv module is not loaded. The environment variable
// DOCA_GPUNETIO_DISABLE_GDRCOPY set to a non-zero integer disables GDRCopy;
// GDRCOPY_PATH_L, as for DOCA, names the libgdrapi file to load instead of
// the soname. When GDRCopy cannot be used, Open logs why once, at WARNING
// (at INFO when it was disabled on purpose), through the library's logger
// (DOCA_GPUNETIO_LOG).
// The decision and the handle are cached for the life of the process (the
// handle is never closed, as in DOCA). All functions are safe for concurrent
// use.
package gdrcopy

/*
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct { unsigned long h; } gg_mh;
typedef void *(*gg_open_fn)(void);
typedef int (*gg_pin_fn)(void *, unsigned long, size_t, uint64_t, uint32_t, gg_mh *);
typedef int (*gg_unpin_fn)(void *, gg_mh);
typedef int (*gg_map_fn)(void *, gg_mh, void **, size_t);
typedef int (*gg_unmap_fn)(void *, gg_mh, void *, size_t);

// The entry points, resolved in Go (internal/dl) and stored once by
// gg_bind under Open's sync.Once; read-only afterwards.
static void *gg_handle;
static gg_pin_fn gg_pin;
static gg_unpin_fn gg_unpin;
static gg_map_fn gg_map;
static gg_unmap_fn gg_unmap;

// gg_bind stores the entry points and calls gdr_open; 0 when it returned
// a handle.
static int gg_bind(void *open, void *pin, void *unpin, void *map, void *unmap) {
	gg_pin = (gg_pin_fn)pin;
	gg_unpin = (gg_unpin_fn)unpin;
	gg_map = (gg_map_fn)map;
	gg_unmap = (gg_unmap_fn)unmap;
	gg_handle = ((gg_open_fn)open)();
	return gg_handle ? 0 : -1;
}

static int gg_pin_map(unsigned long addr, size_t size, unsigned long *mh, void **va) {
	gg_mh h;
	if (gg_handle == NULL || gg_pin == NULL || gg_map == NULL || gg_unpin == NULL)
		return -ENOSYS; // not bound: never call through NULL
	int r = gg_pin(gg_handle, addr, size, 0, 0, &h);
	if (r)
		return r;
	r = gg_map(gg_handle, h, va, size);
	if (r) {
		gg_unpin(gg_handle, h);
		return r;
	}
	*mh = h.h;
	return 0;
}

static int gg_unmap_unpin(unsigned long mh, void *va, size_t size) {
	gg_mh h = {mh};
	if (gg_handle == NULL || gg_unmap == NULL || gg_unpin == NULL)
		return -ENOSYS;
	int r = gg_unmap(gg_handle, h, va, size);
	int r2 = gg_unpin(gg_handle, h);
	return r ? r : r2;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/dl"
	"github.com/gdaki/gpunetio/internal/doclog"
)

// DisableEnv is the environment variable that turns GDRCopy off.
const DisableEnv = "DOCA_GPUNETIO_DISABLE_GDRCOPY"

// library is GDRCopy's soname.
const library = "libgdrapi.so.2"

// PathEnv names the libgdrapi file to load instead of the soname (a path,
// or a name the dynamic loader resolves), as DOCA honours it.
const PathEnv = "GDRCOPY_PATH_L"

// symbols are the entry points GDRCopy must export: the ones bound below
// and the rest of the API, whose absence says the library is not GDRCopy 2.
var symbols = []string{"gdr_open", "gdr_close", "gdr_pin_buffer", "gdr_unpin_buffer",
	"gdr_map", "gdr_unmap", "gdr_copy_from_mapping", "gdr_copy_to_mapping",
	"gdr_runtime_get_version", "gdr_driver_get_version"}

// ErrUnavailable is matched (errors.Is) by every error that says GDRCopy
// cannot be used in this process.
var ErrUnavailable = errors.New("GDRCopy (libgdrapi.so.2 and the gdrdrv module) is required")

var (
	once    sync.Once
	loadErr error
)

// disabled reports whether v asks to disable GDRCopy: a non-zero integer.
func disabled(v string) bool {
	n, err := strconv.Atoi(v)
	return err == nil && n != 0
}

// Open loads GDRCopy once per process; nil means Pin may be used.
func Open() error {
	once.Do(func() { loadErr = open(os.Getenv) })
	return loadErr
}

// open is Open's decision with the environment read through getenv: the
// library PathEnv names (or the soname) is loaded unless DisableEnv
// disables GDRCopy, and a failure is logged.
func open(getenv func(string) string) error {
	if v := getenv(DisableEnv); disabled(v) {
		err := fmt.Errorf("gdrcopy: disabled by %s=%s: %w", DisableEnv, v, ErrUnavailable)
		doclog.Printf(doclog.Info, "GDRCopy disabled by %s=%s: GPU_CPU memory and NO_DBR_SW_EMULATED QPs are unavailable", DisableEnv, v)
		return err
	}
	lib := library
	if p := getenv(PathEnv); p != "" {
		lib = p
	}
	err := load(lib)
	if err != nil {
		if lib != library {
			err = fmt.Errorf("%w (library from %s)", err, PathEnv)
		}
		doclog.Printf(doclog.Warning, "GDRCopy not available, GPU_CPU memory and NO_DBR_SW_EMULATED QPs are unavailable: %v", err)
	}
	return err
}

// load opens name (Now|Local), checks that it exports every GDRCopy entry
// point, binds the ones Pin uses and calls gdr_open. On success the library
// stays open for the life of the process (as in DOCA); otherwise it is
// closed again.
func load(name string) error {
	lib, err := dl.Open(dl.Now|dl.Local, name)
	if err != nil {
		// dl's message is "dlopen <name>: <dlerror>".
		return fmt.Errorf("gdrcopy: %w: %w", err, ErrUnavailable)
	}
	fns := make(map[string]unsafe.Pointer, len(symbols))
	for _, s := range symbols {
		p, err := lib.Lookup(s)
		if err != nil {
			_ = lib.Close()
			return fmt.Errorf("gdrcopy: %s lacks %s: %w", name, s, ErrUnavailable)
		}
		fns[s] = p
	}
	if C.gg_bind(fns["gdr_open"], fns["gdr_pin_buffer"], fns["gdr_unpin_buffer"], fns["gdr_map"], fns["gdr_unmap"]) != 0 {
		return fmt.Errorf("gdrcopy: gdr_open failed (is the gdrdrv module loaded?): %w", ErrUnavailable)
	}
	return nil
}

// Mapping is a pinned and CPU-mapped GPU range.
type Mapping struct {
	mu   sync.Mutex
	mh   C.ulong
	va   unsafe.Pointer
	size uintptr
}

// Pin pins [devAddr, devAddr+size) (64 KiB aligned GPU memory) and maps it
// into the process (gdr_pin_buffer + gdr_map). Use the mapping with aligned
// word loads and stores only: it is uncached device memory.
func Pin(devAddr, size uintptr) (*Mapping, error) {
	if err := Open(); err != nil {
		return nil, err
	}
	var mh C.ulong
	var va unsafe.Pointer
	if r := C.gg_pin_map(C.ulong(devAddr), C.size_t(size), &mh, &va); r != 0 {
		return nil, fmt.Errorf("gdrcopy: pin/map %#x+%d: %w", devAddr, size, errnoOf(r))
	}
	return &Mapping{mh: mh, va: va, size: size}, nil
}

func errnoOf(r C.int) error {
	if r < 0 {
		r = -r
	}
	return syscall.Errno(r)
}

// Addr is the CPU address of the start of the range.
func (m *Mapping) Addr() uintptr { return uintptr(m.va) }

// Close unmaps and unpins (idempotent).
func (m *Mapping) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.va == nil {
		return nil
	}
	if r := C.gg_unmap_unpin(m.mh, m.va, C.size_t(m.size)); r != 0 {
		return fmt.Errorf("gdrcopy: unmap/unpin %#x+%d: %w", uintptr(m.va), m.size, errnoOf(r))
	}
	m.va = nil
	return nil
}
