package cuda

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
)

// libraryName is the driver library opened on first use. Tests point it at a
// missing file to exercise the no-driver path.
var libraryName = "libcuda.so.1"

var (
	loadOnce sync.Once
	loadErr  error
	// loaded is true once the library is open and its symbols resolved,
	// even when cuInit then failed: cuGetErrorName is usable from then on.
	loaded atomic.Bool
)

func isLoaded() bool { return loaded.Load() }

// load opens libcuda.so.1, resolves its entry points and calls cuInit(0),
// once per process. Every exported entry point calls it first, so a binary
// without a driver starts normally and fails only when CUDA is asked for.
func load() error {
	loadOnce.Do(func() {
		name := C.CString(libraryName)
		defer C.free(unsafe.Pointer(name))
		var msg [512]C.char
		switch C.gc_load(name, &msg[0], C.size_t(len(msg))) {
		case 0:
		case 1:
			loadErr = fmt.Errorf("cuda: dlopen %s: %s: %w", libraryName, C.GoString(&msg[0]), ErrNoDriver)
			return
		default:
			loadErr = fmt.Errorf("cuda: %s lacks the entry point %s (driver too old): %w",
				libraryName, C.GoString(&msg[0]), ErrNoDriver)
			return
		}
		loaded.Store(true)
		loadErr = check("cuInit", int32(C.gc_init(0)))
	})
	return loadErr
}

// Init loads the CUDA driver library (libcuda.so.1) and initialises the
// driver (cuInit). It is called implicitly by every other entry point; calling
// it first only moves the cost and the error earlier. Errors match
// ErrNoDriver when the library is missing and ErrNoDevice when the driver
// sees no GPU.
func Init() error { return load() }

// DriverVersion returns the driver's CUDA version as 1000*major + 10*minor
// (cuDriverGetVersion), for example 12020 for CUDA 12.2.
func DriverVersion() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	var v C.int
	if err := check("cuDriverGetVersion", int32(C.gc_driver_version(&v))); err != nil {
		return 0, err
	}
	return int(v), nil
}

// GetErrorName returns the enum name of r from the driver (cuGetErrorName).
func GetErrorName(r Result) (string, error) {
	if err := load(); !isLoaded() {
		return "", err
	}
	var s *C.char
	if err := check("cuGetErrorName", int32(C.gc_error_name(C.gc_result(r), &s))); err != nil {
		return "", err
	}
	return C.GoString(s), nil
}

// GetErrorString returns the driver's description of r (cuGetErrorString).
func GetErrorString(r Result) (string, error) {
	if err := load(); !isLoaded() {
		return "", err
	}
	var s *C.char
	if err := check("cuGetErrorString", int32(C.gc_error_string(C.gc_result(r), &s))); err != nil {
		return "", err
	}
	return C.GoString(s), nil
}

// driverErrorName asks the driver for r's name only when the library is
// already loaded; formatting an error never loads the library.
func driverErrorName(r Result) (string, bool) {
	if !isLoaded() {
		return "", false
	}
	var s *C.char
	if C.gc_error_name(C.gc_result(r), &s) != 0 || s == nil {
		return "", false
	}
	return C.GoString(s), true
}

func driverErrorString(r Result) (string, bool) {
	if !isLoaded() {
		return "", false
	}
	var s *C.char
	if C.gc_error_string(C.gc_result(r), &s) != 0 || s == nil {
		return "", false
	}
	return C.GoString(s), true
}
