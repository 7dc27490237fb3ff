package doctor

import (
	"errors"

	"github.com/gdaki/gpunetio/verbs"
)

// GPU is what the doctor needs to know about one GPU.
type GPU struct {
	Index       int    `json:"index"`
	BusID       string `json:"bus_id"` // sysfs form, "0000:8a:00.0"
	Name        string `json:"name"`
	UUID        string `json:"uuid,omitempty"`
	MemTotal    uint64 `json:"mem_total"` // bytes
	MemUsed     uint64 `json:"mem_used"`
	BAR1Total   uint64 `json:"bar1_total"` // bytes
	BAR1Used    uint64 `json:"bar1_used"`
	BAR1Free    uint64 `json:"bar1_free"`
	Persistence bool   `json:"persistence_mode"`
}

// GPUSource lists the GPUs (NVML on a real host).
type GPUSource interface {
	// GPUs returns every GPU. A host with no NVIDIA driver returns an
	// error matching ErrNoGPUDriver.
	GPUs() ([]GPU, error)
	// DriverVersion is the NVIDIA driver version NVML reports.
	DriverVersion() (string, error)
}

// ErrNoGPUDriver is matched when the NVIDIA driver or its management
// library is not there.
var ErrNoGPUDriver = errors.New("NVIDIA driver not available")

// Library is the result of probing a shared library.
type Library struct {
	// Path is the file the dynamic loader opened (symbolic links resolved
	// when the probe can).
	Path string
	// Symbols says, for every symbol asked about, whether it resolved.
	Symbols map[string]bool
}

// LibProbe loads a shared library to see whether it and some of its
// symbols are there, and unloads it again.
type LibProbe interface {
	// Probe returns an error matching ErrLibraryNotFound when the library
	// cannot be loaded.
	Probe(soname string, symbols ...string) (Library, error)
}

// ErrLibraryNotFound is matched when a shared library cannot be loaded.
var ErrLibraryNotFound = errors.New("shared library not found")

// CUDAProbe asks the CUDA driver about a GPU.
type CUDAProbe interface {
	// DmabufSupported reports CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED for the
	// GPU with the given bus id. ErrProbeUnavailable when CUDA cannot be
	// asked from this build.
	DmabufSupported(busID string) (bool, error)
}

// DoorbellProbe performs the real test of GPU-initiated doorbells: allocate
// a UAR page on the RDMA device and host-register it for the GPU with the
// I/O-memory flag, then undo both.
type DoorbellProbe interface {
	// MapDoorbell returns a short description of what was mapped on
	// success ("UAR page 0x... registered as I/O memory").
	MapDoorbell(device, gpuBusID string) (string, error)
}

// ErrProbeUnavailable is matched when a probe cannot run in this build or
// on this host (for example the CUDA binding is not there); checks that need
// it are skipped, not failed.
var ErrProbeUnavailable = errors.New("probe not available")

// SDKModeProbe reports the process's DOCA SDK mode decision: whether the
// control path runs through NVIDIA's DOCA SDK (DOCA_SDK_LIB_PATH) or the
// open implementation. verbs.SDKMode on a real host.
type SDKModeProbe interface {
	SDKMode() verbs.ModeInfo
}

// Env is everything the checks read.
type Env struct {
	// Root stands for "/": /sys and /proc are read below it. Empty means
	// the real root.
	Root string
	GPUs GPUSource
	Libs LibProbe
	CUDA CUDAProbe
	UAR  DoorbellProbe
	// Emulated names the emulated RDMA devices (emu0, ...) that -d may
	// select; they have no sysfs entry.
	Emulated []string
	// SDK reports the DOCA SDK mode (the sdk-mode line); nil leaves the
	// line out.
	SDK SDKModeProbe
}

// Options select what to check.
type Options struct {
	// Device is the RDMA device to check ("mlx5_0", "emu0"); empty checks
	// every real device in /sys/class/infiniband.
	Device string
	// GPU is a GPU index ("0") or PCI bus id; empty selects GPU 0, or the
	// GPU closest to the first NIC when there are several.
	GPU string
	// BAR1MiB is the GPU mapping size the application needs, checked
	// against BAR1 free space. Zero means DefaultBAR1MiB.
	BAR1MiB uint64
}

// DefaultBAR1MiB is the BAR1 space checked for when Options.BAR1MiB is 0:
// enough for a few QPs' rings and doorbell records mapped for the CPU.
const DefaultBAR1MiB = 64
