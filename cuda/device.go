package cuda

import (
	"fmt"
	"strings"

	"github.com/gdaki/gpunetio/internal/cudasys"
)

// Device is a CUDA device (CUdevice) as returned by DeviceGet or
// DeviceByPCIBusID. The zero value is not a device; its methods fail with
// ErrZeroValue before loading the driver.
type Device struct {
	handle  cudasys.Device
	ordinal int
	valid   bool
}

// DeviceAttribute is a CUdevice_attribute id.
type DeviceAttribute int32

// Device attributes used by this project (fact: the CUdevice_attribute enum
// of the CUDA driver API, cuda.h).
const (
	AttrMaxThreadsPerBlock                DeviceAttribute = 1   // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
	AttrWarpSize                          DeviceAttribute = 10  // CU_DEVICE_ATTRIBUTE_WARP_SIZE
	AttrMultiprocessorCount               DeviceAttribute = 16  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	AttrCanMapHostMemory                  DeviceAttribute = 19  // CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY
	AttrPCIBusID                          DeviceAttribute = 33  // CU_DEVICE_ATTRIBUTE_PCI_BUS_ID
	AttrPCIDeviceID                       DeviceAttribute = 34  // CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID
	AttrUnifiedAddressing                 DeviceAttribute = 41  // CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING
	AttrPCIDomainID                       DeviceAttribute = 50  // CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID
	AttrComputeCapabilityMajor            DeviceAttribute = 75  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	AttrComputeCapabilityMinor            DeviceAttribute = 76  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
	AttrCanUseHostPointerForRegisteredMem DeviceAttribute = 91  // CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM
	AttrHostRegisterSupported             DeviceAttribute = 99  // CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED
	AttrGPUDirectRDMASupported            DeviceAttribute = 116 // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED
	AttrGPUDirectRDMAFlushWritesOptions   DeviceAttribute = 117 // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS
	AttrGPUDirectRDMAWritesOrdering       DeviceAttribute = 118 // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING
	AttrDMABufSupported                   DeviceAttribute = 124 // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
)

// Values of AttrGPUDirectRDMAWritesOrdering (fact: CUGPUDirectRDMAWritesOrdering).
const (
	RDMAWritesOrderingNone       = 0   // CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE
	RDMAWritesOrderingOwner      = 100 // CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER
	RDMAWritesOrderingAllDevices = 200 // CU_GPU_DIRECT_RDMA_WRITES_ORDERING_ALL_DEVICES
)

// DeviceCount returns the number of CUDA devices (cuDeviceGetCount).
func DeviceCount() (int, error) {
	if err := load(); err != nil {
		return 0, err
	}
	n, r := cudasys.DeviceCount()
	if err := check("cuDeviceGetCount", r); err != nil {
		return 0, err
	}
	return n, nil
}

// DeviceGet returns the device with the given ordinal (cuDeviceGet).
func DeviceGet(ordinal int) (Device, error) {
	if err := load(); err != nil {
		return Device{}, err
	}
	if ordinal < 0 || ordinal > 1<<30 {
		return Device{}, &Error{Op: "cuDeviceGet", Result: ErrorInvalidDevice}
	}
	d, r := cudasys.DeviceGet(ordinal)
	if err := check("cuDeviceGet", r); err != nil {
		return Device{}, err
	}
	return Device{handle: d, ordinal: ordinal, valid: true}, nil
}

// DeviceByPCIBusID returns the device at a PCIe address. It accepts the forms
// ParsePCIBusID does ("8A:00.0", "0000:8a:00.0", any case) and normalises the
// id before asking the driver (cuDeviceGetByPCIBusId).
func DeviceByPCIBusID(busID string) (Device, error) {
	want, err := ParsePCIBusID(busID)
	if err != nil {
		return Device{}, err
	}
	if err := load(); err != nil {
		return Device{}, err
	}
	d, r := cudasys.DeviceByPCIBusID(want.String())
	if err := check("cuDeviceGetByPCIBusId", r); err != nil {
		return Device{}, fmt.Errorf("device %s: %w", want, err)
	}
	// Find the ordinal of the handle so Device.Ordinal is meaningful.
	n, err := DeviceCount()
	if err != nil {
		return Device{}, err
	}
	for i := 0; i < n; i++ {
		o, err := DeviceGet(i)
		if err != nil {
			return Device{}, err
		}
		if o.handle == d {
			return o, nil
		}
	}
	return Device{handle: d, ordinal: -1, valid: true}, nil
}

// Ordinal returns the device's ordinal (-1 when unknown).
func (d Device) Ordinal() int { return d.ordinal }

// ready checks d for Device.method before any driver call (a zero value
// fails with ErrZeroValue), then loads the driver.
func (d Device) ready(method string) error {
	if !d.valid {
		return zeroValue("Device", method, "")
	}
	return load()
}

// Name returns the device's product name (cuDeviceGetName).
func (d Device) Name() (string, error) {
	if err := d.ready("Name"); err != nil {
		return "", err
	}
	name, r := cudasys.DeviceName(d.handle)
	if err := check("cuDeviceGetName", r); err != nil {
		return "", err
	}
	return name, nil
}

// TotalMem returns the device memory size in bytes (cuDeviceTotalMem_v2).
func (d Device) TotalMem() (uint64, error) {
	if err := d.ready("TotalMem"); err != nil {
		return 0, err
	}
	n, r := cudasys.DeviceTotalMem(d.handle)
	if err := check("cuDeviceTotalMem_v2", r); err != nil {
		return 0, err
	}
	return n, nil
}

// Attribute returns one device attribute (cuDeviceGetAttribute).
func (d Device) Attribute(attr DeviceAttribute) (int, error) {
	if err := d.ready("Attribute"); err != nil {
		return 0, err
	}
	v, r := cudasys.DeviceAttribute(d.handle, int32(attr))
	if err := check("cuDeviceGetAttribute", r); err != nil {
		return 0, fmt.Errorf("attribute %d: %w", attr, err)
	}
	return v, nil
}

func (d Device) flag(method string, attr DeviceAttribute) (bool, error) {
	if err := d.ready(method); err != nil {
		return false, err
	}
	v, err := d.Attribute(attr)
	return v != 0, err
}

// ComputeCapability returns the major and minor compute capability (9, 0 on
// Hopper).
func (d Device) ComputeCapability() (major, minor int, err error) {
	if err := d.ready("ComputeCapability"); err != nil {
		return 0, 0, err
	}
	if major, err = d.Attribute(AttrComputeCapabilityMajor); err != nil {
		return 0, 0, err
	}
	if minor, err = d.Attribute(AttrComputeCapabilityMinor); err != nil {
		return 0, 0, err
	}
	return major, minor, nil
}

// DMABufSupported reports CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: the device
// can export device memory as a dmabuf fd (MemGetHandleForAddressRange).
func (d Device) DMABufSupported() (bool, error) {
	return d.flag("DMABufSupported", AttrDMABufSupported)
}

// GPUDirectRDMASupported reports CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED.
func (d Device) GPUDirectRDMASupported() (bool, error) {
	return d.flag("GPUDirectRDMASupported", AttrGPUDirectRDMASupported)
}

// CanMapHostMemory reports CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY.
func (d Device) CanMapHostMemory() (bool, error) {
	return d.flag("CanMapHostMemory", AttrCanMapHostMemory)
}

// UnifiedAddressing reports CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: host and
// device share one virtual address space, so a mapped host pointer and its
// device pointer are numerically equal.
func (d Device) UnifiedAddressing() (bool, error) {
	return d.flag("UnifiedAddressing", AttrUnifiedAddressing)
}

// PCIAddress returns the device's PCIe address from the domain, bus and
// device attributes (CUDA reports function 0).
func (d Device) PCIAddress() (PCIAddress, error) {
	if err := d.ready("PCIAddress"); err != nil {
		return PCIAddress{}, err
	}
	dom, err := d.Attribute(AttrPCIDomainID)
	if err != nil {
		return PCIAddress{}, err
	}
	bus, err := d.Attribute(AttrPCIBusID)
	if err != nil {
		return PCIAddress{}, err
	}
	dev, err := d.Attribute(AttrPCIDeviceID)
	if err != nil {
		return PCIAddress{}, err
	}
	return PCIAddress{Domain: uint32(dom), Bus: uint8(bus), Device: uint8(dev)}, nil
}

// PCIBusID returns the driver's bus id string (cuDeviceGetPCIBusId),
// normalised to the canonical lower-case form "0000:8a:00.0".
func (d Device) PCIBusID() (string, error) {
	if err := d.ready("PCIBusID"); err != nil {
		return "", err
	}
	s, r := cudasys.DevicePCIBusID(d.handle)
	if err := check("cuDeviceGetPCIBusId", r); err != nil {
		return "", err
	}
	raw := strings.TrimRight(s, "\x00")
	return NormalizePCIBusID(raw)
}
