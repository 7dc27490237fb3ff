package cuda

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gdaki/gpunetio/internal/cudasys"
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
		switch code, msg := cudasys.LoadDriver(libraryName); code {
		case cudasys.LoadOK:
		case cudasys.LoadNoLibrary:
			loadErr = fmt.Errorf("cuda: dlopen %s: %s: %w", libraryName, msg, ErrNoDriver)
			return
		default:
			loadErr = fmt.Errorf("cuda: %s lacks the entry point %s (driver too old): %w", libraryName, msg, ErrNoDriver)
			return
		}
		loaded.Store(true)
		loadErr = check("cuInit", cudasys.Init(0))
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
	v, r := cudasys.DriverVersion()
	if err := check("cuDriverGetVersion", r); err != nil {
		return 0, err
	}
	return v, nil
}

// GetErrorName returns the enum name of r from the driver (cuGetErrorName).
// Result.Name gives the same without failing when no driver is loaded.
func GetErrorName(r Result) (string, error) {
	if err := load(); !isLoaded() {
		return "", err
	}
	s, rc := cudasys.ErrorName(int32(r))
	if err := check("cuGetErrorName", rc); err != nil {
		return "", err
	}
	return s, nil
}

// GetErrorString returns the driver's description of r (cuGetErrorString).
func GetErrorString(r Result) (string, error) {
	if err := load(); !isLoaded() {
		return "", err
	}
	s, rc := cudasys.ErrorString(int32(r))
	if err := check("cuGetErrorString", rc); err != nil {
		return "", err
	}
	return s, nil
}

// driverErrorName asks the driver for r's name only when the library is
// already loaded; formatting an error never loads the library.
func driverErrorName(r Result) (string, bool) {
	if !isLoaded() {
		return "", false
	}
	s, rc := cudasys.ErrorName(int32(r))
	return s, rc == 0
}

func driverErrorString(r Result) (string, bool) {
	if !isLoaded() {
		return "", false
	}
	s, rc := cudasys.ErrorString(int32(r))
	return s, rc == 0
}
