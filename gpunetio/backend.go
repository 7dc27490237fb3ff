package gpunetio

import (
	"errors"
	"unsafe"

	"github.com/gdaki/gpunetio/cuda"
)

// DevPtr is a GPU virtual address. It is cuda.DevPtr, so addresses pass
// between this package and the cuda package (kernel arguments, copies)
// without conversion.
type DevPtr = cuda.DevPtr

// Host registration flags (CU_MEMHOSTREGISTER_*).
const (
	regPortable  = uint32(cuda.HostRegisterPortable)
	regDeviceMap = uint32(cuda.HostRegisterDeviceMap)
	regIOMemory  = uint32(cuda.HostRegisterIOMemory)
)

// errAlreadyRegistered is what a backend returns (wrapped) when a host range
// is already registered (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED).
var errAlreadyRegistered = errors.New("host memory already registered")

// errNoCUDAContext is what a backend without a CUDA device (NewHostGPU)
// returns for cudaContext.
var errNoCUDAContext = errors.New("a host-memory GPU (NewHostGPU) has no CUDA device and no CUDA context")

// backend is everything gpunetio asks of CUDA. The real one is the cuda
// package on the GPU's primary context; the host one (CI) fakes a GPU whose
// device pointers are host pointers.
type backend interface {
	describe() string
	// cudaContext retains the GPU's primary context for the caller; the
	// host backend has none.
	cudaContext() (*cuda.Context, error)
	allocDevice(size uintptr) (uintptr, error)
	freeDevice(p uintptr) error
	setSyncMemops(p uintptr) error
	hostRegister(p, size uintptr, flags uint32) error
	hostUnregister(p uintptr) error
	hostDevicePointer(p uintptr) (uintptr, error)
	memcpyHtoD(dst uintptr, src []byte) error
	memcpyDtoH(dst []byte, src uintptr) error
	memsetD8(dst uintptr, v byte, n uintptr) error
	synchronize() error
	dmabufSupported() bool
	dmabufFD(p, size uintptr) (int, error)
	// gdrMap maps device memory into the process; nil release and an error
	// matching gdrcopy.ErrUnavailable when GDRCopy cannot be used.
	gdrAvailable() error
	gdrMap(dev, size uintptr) (cpu uintptr, release func() error, err error)
	// rdmaWritesOrdering is the CUDA device attribute
	// CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING (cuda.RDMAWritesOrdering*).
	rdmaWritesOrdering() (int, error)
	release() error
}

// hostSlice views n bytes of memory outside the Go heap.
func hostSlice(addr uintptr, n uintptr) []byte {
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return unsafe.Slice((*byte)(p), n)
}

// hostPtr converts an address outside the Go heap to a pointer.
func hostPtr(addr uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&addr))
}
