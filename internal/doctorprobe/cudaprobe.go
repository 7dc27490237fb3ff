package doctorprobe

/*
#include <stdint.h>

// gpn_ptr turns a mapped address (an mmap of a device page, not Go memory)
// into a pointer for APIs that take one.
static void *gpn_ptr(uintptr_t a) { return (void *)a; }
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/mlx5"
)

// NoCUDADriver reports whether err says that the CUDA driver (libcuda.so.1)
// is not there, as opposed to a GPU or call that failed.
func NoCUDADriver(err error) bool { return errors.Is(err, cuda.ErrNoDriver) }

// DmabufSupported reads CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED of the GPU at
// PCI bus id busID.
func DmabufSupported(busID string) (bool, error) {
	d, err := cuda.DeviceByPCIBusID(busID)
	if err != nil {
		return false, fmt.Errorf("GPU %s: %w", busID, err)
	}
	ok, err := d.DMABufSupported()
	if err != nil {
		return false, fmt.Errorf("GPU %s: %w", busID, err)
	}
	return ok, nil
}

// RegisterUARPage host-registers the UAR page mapped at base (one page of
// mlx5.UARPageSize bytes, an mmap of the device, not Go memory) in the
// primary context of the GPU at busID, with the I/O-memory flag when the page
// is NIC MMIO (ioMemory), asks for its GPU address, and undoes the
// registration and the context before returning. The caller keeps the page
// mapped for the whole call.
func RegisterUARPage(busID string, base uintptr, ioMemory bool) (gpuAddr uintptr, err error) {
	gpu, err := cuda.DeviceByPCIBusID(busID)
	if err != nil {
		return 0, fmt.Errorf("GPU %s: %w", busID, err)
	}
	ctx, err := gpu.PrimaryContext()
	if err != nil {
		return 0, fmt.Errorf("GPU %s: %w", busID, err)
	}
	defer func() {
		if rerr := ctx.Release(); rerr != nil && err == nil {
			err = fmt.Errorf("GPU %s: %w", busID, rerr)
		}
	}()
	flags := cuda.HostRegisterDeviceMap
	if ioMemory {
		flags |= cuda.HostRegisterIOMemory
	}
	page := unsafe.Pointer(C.gpn_ptr(C.uintptr_t(base)))
	if err := ctx.MemHostRegister(page, mlx5.UARPageSize, flags); err != nil {
		return 0, fmt.Errorf("register for GPU %s: %w", busID, err)
	}
	defer func() {
		if uerr := ctx.MemHostUnregister(page); uerr != nil && err == nil {
			err = fmt.Errorf("unregister from GPU %s: %w", busID, uerr)
		}
	}()
	dptr, err := ctx.HostGetDevicePointer(page)
	if err != nil {
		return 0, fmt.Errorf("GPU %s address: %w", busID, err)
	}
	return uintptr(dptr), nil
}
