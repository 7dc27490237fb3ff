//go:build cgo

package devx

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"syscall"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Name is the driver name under which this package registers its provider.
const Name = "devx"

func init() { mlx5.RegisterProvider(Provider{}) }

// Provider is the rdma-core driver: mlx5 devices opened with a DevX context
// through libibverbs and libmlx5, both loaded at run time.
type Provider struct{}

// Name returns "devx".
func (Provider) Name() string { return Name }

// Devices lists the devices that the mlx5 provider of rdma-core serves
// (ibv_get_device_list filtered by mlx5dv_is_supported). With rdma-core
// installed but no RDMA device present the list is empty and the error nil;
// without rdma-core the error is a *LibraryError (errors.Is ErrUnavailable).
func (Provider) Devices() ([]mlx5.DeviceInfo, error) {
	if err := load(); err != nil {
		return nil, err
	}
	var out []mlx5.DeviceInfo
	err := withDeviceList(func(devs []*C.struct_ibv_device) error {
		for _, dev := range devs {
			if C.gdk_is_supported(dev) == 0 {
				continue
			}
			out = append(out, deviceInfo(dev))
		}
		return nil
	})
	return out, err
}

// Open opens the mlx5 device called name with a DevX context
// (mlx5dv_open_device with MLX5DV_CONTEXT_FLAGS_DEVX).
func (Provider) Open(name string) (mlx5.Device, error) {
	const op = "Open"
	if name == "" {
		return nil, newError(op, syscall.EINVAL, "empty device name")
	}
	if err := load(); err != nil {
		return nil, err
	}
	var d *device
	err := withDeviceList(func(devs []*C.struct_ibv_device) error {
		var names []string
		for _, dev := range devs {
			n := C.GoString(C.gdk_get_device_name(dev))
			if C.gdk_is_supported(dev) == 0 {
				if n == name {
					return &Error{
						Op:     op,
						Errno:  syscall.ENODEV,
						Detail: fmt.Sprintf("RDMA device %q is not an mlx5 device (mlx5dv_is_supported is false)", name),
						Err:    mlx5.ErrNoDevice,
					}
				}
				continue
			}
			if n != name {
				names = append(names, n)
				continue
			}
			ctx, errno := C.gdk_open_devx(dev)
			if ctx == nil {
				return openError(name, errnoOf(errno))
			}
			d = newDevice(name, ctx)
			return nil
		}
		present := "none"
		if len(names) > 0 {
			present = strings.Join(names, ", ")
		}
		return &Error{
			Op:     op,
			Errno:  syscall.ENODEV,
			Detail: fmt.Sprintf("no mlx5 device %q (mlx5 devices present: %s)", name, present),
			Err:    mlx5.ErrNoDevice,
		}
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// withDeviceList calls fn with the current device list and frees the list
// afterwards (contexts opened from it stay valid).
func withDeviceList(fn func([]*C.struct_ibv_device) error) error {
	var n C.int
	list, errno := C.gdk_get_device_list(&n)
	if list == nil {
		e := errnoOf(errno)
		if noDevices(e) {
			return fn(nil)
		}
		return &Error{Op: "ibv_get_device_list", Errno: e}
	}
	defer C.gdk_free_device_list(list)
	devs := make([]*C.struct_ibv_device, 0, int(n))
	for i := 0; i < int(n); i++ {
		devs = append(devs, C.gdk_device_at(list, C.int(i)))
	}
	return fn(devs)
}

// noDevices reports whether a failed ibv_get_device_list means "this machine
// has no RDMA devices" (no uverbs class in sysfs, no kernel module) rather
// than a failure.
func noDevices(e syscall.Errno) bool {
	return e == syscall.ENOSYS || e == syscall.ENODEV || e == syscall.ENOENT
}

func deviceInfo(dev *C.struct_ibv_device) mlx5.DeviceInfo {
	return mlx5.DeviceInfo{
		Name:     C.GoString(C.gdk_get_device_name(dev)),
		Driver:   Name,
		NodeGUID: uint64(C.gdk_get_device_guid(dev)),
		Sysfs:    C.GoString(C.gdk_device_ibdev_path(dev)),
	}
}

// openError explains a refused DevX context.
func openError(name string, e syscall.Errno) error {
	detail := fmt.Sprintf("open %s with a DevX context", name)
	switch e {
	case syscall.EOPNOTSUPP, syscall.EPROTONOSUPPORT:
		detail += " refused: the device, its firmware or the kernel does not offer DevX " +
			"user contexts (HCA capability log_max_uctx is 0, or the kernel's mlx5_ib lacks DevX)"
	case syscall.EPERM, syscall.EACCES:
		detail += " refused: permission denied (check access to /dev/infiniband/uverbs*; " +
			"older kernels also require CAP_NET_RAW for DevX)"
	}
	return &Error{Op: "mlx5dv_open_device", Errno: e, Detail: detail}
}

// errnoOf turns the errno cgo returns beside a failed call into an Errno. A
// call that failed without setting errno reads as EIO.
func errnoOf(err error) syscall.Errno {
	if e, ok := err.(syscall.Errno); ok && e != 0 {
		return e
	}
	return syscall.EIO
}

// ptr is the numeric value of a C pointer, for Native().
func ptr(p unsafe.Pointer) uintptr { return uintptr(p) }
