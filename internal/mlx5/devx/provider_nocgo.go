//go:build !cgo

package devx

import (
	"syscall"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Name is the driver name under which this package registers its provider.
const Name = "devx"

// Library names and the variables that override them (unused without cgo).
const (
	LibIBVerbs    = "libibverbs.so.1"
	LibMLX5       = "libmlx5.so.1"
	EnvLibIBVerbs = "GDAKI_LIBIBVERBS"
	EnvLibMLX5    = "GDAKI_LIBMLX5"
)

func init() { mlx5.RegisterProvider(Provider{}) }

// Provider is the rdma-core driver. This binary was built without cgo
// (CGO_ENABLED=0), so it cannot load rdma-core: Devices and Open report
// that, and the emulated devices remain available.
type Provider struct{}

// Name returns "devx".
func (Provider) Name() string { return Name }

// Devices returns no devices and a *LibraryError (errors.Is ErrUnavailable).
func (Provider) Devices() ([]mlx5.DeviceInfo, error) { return nil, errNoCgo() }

// Open fails with a *LibraryError (errors.Is ErrUnavailable).
func (Provider) Open(name string) (mlx5.Device, error) {
	if name == "" {
		return nil, newError("Open", syscall.EINVAL, "empty device name")
	}
	return nil, errNoCgo()
}

func errNoCgo() error {
	return &LibraryError{
		Library: LibIBVerbs,
		Reason:  "this binary was built with CGO_ENABLED=0, so it cannot load rdma-core; rebuild with cgo enabled (a C compiler and rdma-core's headers, libibverbs-dev)",
	}
}

// OpenIBVDevice fails: without cgo there is no rdma-core.
func OpenIBVDevice(unsafe.Pointer) (mlx5.Device, error) { return nil, errNoCgo() }

// ImportIBVContext fails: without cgo there is no rdma-core.
func ImportIBVContext(unsafe.Pointer) (mlx5.Device, error) { return nil, errNoCgo() }

// ImportContext fails: without cgo there is no rdma-core.
func ImportContext(int) (mlx5.Device, error) { return nil, errNoCgo() }
