package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DeviceInfo describes one GPU as Devices lists it.
type DeviceInfo struct {
	// Ordinal is the CUDA device ordinal (DeviceGet).
	Ordinal int
	// BusID is the PCIe address in canonical form, "0000:8a:00.0"; it is
	// what gpunetio.NewGPU takes.
	BusID string
	// Name is the product name, for example "NVIDIA H100 80GB HBM3".
	Name string
	// NUMANode is the host NUMA node the GPU is attached to, or -1 when
	// the platform does not say (see Device.NUMANode).
	NUMANode int
	// Major and Minor are the compute capability (9 and 0 on Hopper).
	Major, Minor int
	// TotalMem is the device memory size in bytes.
	TotalMem uint64
}

// Arch returns the NVRTC/nvcc name of the GPU's real architecture, for
// example "sm_90".
func (i DeviceInfo) Arch() string { return fmt.Sprintf("sm_%d%d", i.Major, i.Minor) }

// Devices lists every CUDA device the driver sees, by ordinal. Without a
// driver it fails with an error matching ErrNoDriver; a driver with no GPU
// gives an error matching ErrNoDevice.
func Devices() ([]DeviceInfo, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	out := make([]DeviceInfo, 0, n)
	for i := 0; i < n; i++ {
		d, err := DeviceGet(i)
		if err != nil {
			return nil, err
		}
		info, err := d.Info()
		if err != nil {
			return nil, fmt.Errorf("cuda: device %d: %w", i, err)
		}
		out = append(out, info)
	}
	return out, nil
}

// Info gathers the device's DeviceInfo.
func (d Device) Info() (DeviceInfo, error) {
	if err := d.ready("Info"); err != nil {
		return DeviceInfo{}, err
	}
	info := DeviceInfo{Ordinal: d.ordinal}
	var err error
	if info.BusID, err = d.PCIBusID(); err != nil {
		return DeviceInfo{}, err
	}
	if info.Name, err = d.Name(); err != nil {
		return DeviceInfo{}, err
	}
	if info.Major, info.Minor, err = d.ComputeCapability(); err != nil {
		return DeviceInfo{}, err
	}
	if info.TotalMem, err = d.TotalMem(); err != nil {
		return DeviceInfo{}, err
	}
	info.NUMANode = numaNode(info.BusID)
	return info, nil
}

// NUMANode returns the host NUMA node the device is attached to, or -1 when
// the platform does not say. It reads the kernel's view,
// /sys/bus/pci/devices/<bus id>/numa_node, which every driver version has
// (only recent CUDA drivers report the host NUMA node as an attribute) and
// which is also where an RDMA device's node comes from, so a GPU and a NIC
// are compared on the same footing. An unreadable or missing file gives -1.
func (d Device) NUMANode() (int, error) {
	if err := d.ready("NUMANode"); err != nil {
		return -1, err
	}
	bus, err := d.PCIBusID()
	if err != nil {
		return -1, err
	}
	return numaNode(bus), nil
}

// sysfsRoot is where numaNode looks for the PCI device tree; tests point it
// at a fake tree.
var sysfsRoot = "/sys"

// numaNode reads the NUMA node of a PCIe function from sysfs; -1 when
// unknown.
func numaNode(busID string) int {
	b, err := os.ReadFile(filepath.Join(sysfsRoot, "bus", "pci", "devices", busID, "numa_node"))
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < -1 {
		return -1
	}
	return n
}
