package doctor

import (
	"fmt"

	"github.com/gdaki/gpunetio/internal/doctorprobe"
	"github.com/gdaki/gpunetio/verbs"
)

// DLProbe is the LibProbe of a real host: dlopen, dlsym, dlclose.
type DLProbe struct{}

// Probe loads soname, looks its symbols up and unloads it. A library that
// cannot be loaded gives an error matching ErrLibraryNotFound with the
// dynamic loader's message.
func (DLProbe) Probe(soname string, symbols ...string) (Library, error) {
	path, found, err := doctorprobe.Library(soname, symbols)
	if err != nil {
		return Library{}, fmt.Errorf("dlopen %s: %w", err.Error(), ErrLibraryNotFound)
	}
	lib := Library{Path: path, Symbols: make(map[string]bool, len(symbols))}
	for i, s := range symbols {
		lib.Symbols[s] = found[i]
	}
	return lib, nil
}

// CUDA is the CUDAProbe of a real host. It loads libcuda.so.1 at run time; a
// host without it gives ErrProbeUnavailable.
type CUDA struct{}

// DmabufSupported reads CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED of the GPU at
// busID.
func (CUDA) DmabufSupported(busID string) (bool, error) {
	ok, err := doctorprobe.DmabufSupported(busID)
	if err != nil {
		return false, cudaProbeError("dmabuf attribute", err)
	}
	return ok, nil
}

// cudaProbeError adds op and, when the CUDA driver is missing,
// ErrProbeUnavailable.
func cudaProbeError(op string, err error) error {
	if doctorprobe.NoCUDADriver(err) {
		return fmt.Errorf("%s: %w: %w", op, ErrProbeUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// Doorbell is the DoorbellProbe of a real host: it opens the RDMA device
// with package verbs (a real mlx5 device or an emulated one), allocates the
// context's non-cached UAR page, host-registers that page in the GPU's
// primary context (with the I/O-memory flag when the page is NIC MMIO), asks
// for its GPU address, and undoes everything in reverse order.
type Doorbell struct{}

// MapDoorbell performs the probe. An unknown device gives an error matching
// verbs.ErrNotFound; a host without the CUDA driver gives one matching
// ErrProbeUnavailable.
func (Doorbell) MapDoorbell(device, gpuBusID string) (desc string, err error) {
	ctx, err := verbs.OpenDevice(device)
	if err != nil {
		return "", fmt.Errorf("doorbell probe: %w", err)
	}
	defer func() {
		if cerr := ctx.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("doorbell probe: %w", cerr)
		}
	}()
	// The UAR is made as DOCA GPUNetIO 3.0 makes it: on a device object
	// opened from a PD (which SDK mode needs too).
	pd, err := ctx.AllocPD()
	if err != nil {
		return "", fmt.Errorf("doorbell probe: allocate PD on %s: %w", device, err)
	}
	defer func() {
		if cerr := pd.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("doorbell probe: %w", cerr)
		}
	}()
	dev, err := verbs.OpenDev(pd)
	if err != nil {
		return "", fmt.Errorf("doorbell probe: open the device object of %s: %w", device, err)
	}
	defer func() {
		if cerr := dev.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("doorbell probe: %w", cerr)
		}
	}()
	uar, err := dev.NewUAR(verbs.UARNonCache)
	if err != nil {
		return "", fmt.Errorf("doorbell probe: allocate UAR on %s: %w", device, err)
	}
	defer func() {
		if ferr := uar.Close(); ferr != nil && err == nil {
			err = fmt.Errorf("doorbell probe: free UAR on %s: %w", device, ferr)
		}
	}()
	kind := "host memory (emulated device)"
	if uar.IsMMIO() {
		kind = "I/O memory"
	}
	addr, err := doctorprobe.RegisterUARPage(gpuBusID, uar.BaseAddr(), uar.IsMMIO())
	if err != nil {
		return "", cudaProbeError(fmt.Sprintf("doorbell probe: UAR page of %s (%s)", device, kind), err)
	}
	return fmt.Sprintf("UAR page %d registered as %s, GPU address 0x%x", uar.ID(), kind, addr), nil
}
