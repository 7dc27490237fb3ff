package doctor

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

// CUDA is the CUDAProbe of a real host, through the cuda package.
type CUDA struct{}

// DmabufSupported reads CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED of the GPU at
// busID. A host without libcuda.so.1 gives ErrProbeUnavailable.
func (CUDA) DmabufSupported(busID string) (bool, error) {
	d, err := cuda.DeviceByPCIBusID(busID)
	if err != nil {
		return false, cudaProbeError("dmabuf attribute", err)
	}
	ok, err := d.DMABufSupported()
	if err != nil {
		return false, cudaProbeError("dmabuf attribute", err)
	}
	return ok, nil
}

func cudaProbeError(op string, err error) error {
	if errors.Is(err, cuda.ErrNoDriver) {
		return fmt.Errorf("%s: %w: %w", op, ErrProbeUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// Doorbell is the DoorbellProbe of a real host: it opens the RDMA device
// through the registered mlx5 drivers, allocates a non-cached UAR page,
// host-registers it in the GPU's primary context (with the I/O-memory flag
// when the page is NIC MMIO), asks for its device address, and undoes
// everything in reverse order.
type Doorbell struct{}

// MapDoorbell performs the probe.
func (Doorbell) MapDoorbell(device, gpuBusID string) (desc string, err error) {
	dev, err := mlx5.Open(device)
	if err != nil {
		return "", fmt.Errorf("doorbell probe: %w", err)
	}
	defer func() {
		if cerr := dev.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("doorbell probe: close %s: %w", device, cerr)
		}
	}()
	uar, err := dev.AllocUAR(mlx5.UARTypeNC)
	if err != nil {
		return "", fmt.Errorf("doorbell probe: allocate UAR on %s: %w", device, err)
	}
	defer func() {
		if ferr := uar.Free(); ferr != nil && err == nil {
			err = fmt.Errorf("doorbell probe: free UAR on %s: %w", device, ferr)
		}
	}()
	gpu, err := cuda.DeviceByPCIBusID(gpuBusID)
	if err != nil {
		return "", cudaProbeError("doorbell probe: GPU "+gpuBusID, err)
	}
	ctx, err := gpu.PrimaryContext()
	if err != nil {
		return "", cudaProbeError("doorbell probe: GPU "+gpuBusID, err)
	}
	defer func() {
		if rerr := ctx.Release(); rerr != nil && err == nil {
			err = fmt.Errorf("doorbell probe: %w", rerr)
		}
	}()
	flags, kind := cuda.HostRegisterDeviceMap, "host memory (emulated device)"
	if uar.IOMemory() {
		flags, kind = cuda.HostRegisterIOMemory|cuda.HostRegisterDeviceMap, "I/O memory"
	}
	page := C.gpn_ptr(C.uintptr_t(uar.BaseAddr()))
	if err := ctx.MemHostRegister(unsafe.Pointer(page), mlx5.UARPageSize, flags); err != nil {
		return "", fmt.Errorf("doorbell probe: register UAR page of %s (%s) for GPU %s: %w", device, kind, gpuBusID, err)
	}
	defer func() {
		if uerr := ctx.MemHostUnregister(unsafe.Pointer(page)); uerr != nil && err == nil {
			err = fmt.Errorf("doorbell probe: unregister UAR page: %w", uerr)
		}
	}()
	dptr, err := ctx.HostGetDevicePointer(unsafe.Pointer(page))
	if err != nil {
		return "", fmt.Errorf("doorbell probe: GPU address of the UAR page of %s: %w", device, err)
	}
	return fmt.Sprintf("UAR page %d registered as %s, GPU address 0x%x", uar.PageID(), kind, uintptr(dptr)), nil
}
