package gpunetio

import (
	"fmt"
	"sync"
	"syscall"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/gdrcopy"
)

// hostBackend is a GPU made of host memory, for tests without a GPU: device
// allocations are anonymous mappings, a device pointer is the host pointer,
// copies are copy(). It counts what is live so tests can check for leaks,
// and hooks let tests make registrations or GDRCopy fail.
type hostBackend struct {
	mu         sync.Mutex
	allocs     map[uintptr][]byte
	registered map[uintptr]uintptr
	noGDR      bool
	noDmabuf   bool
	// writesOrdering is what rdmaWritesOrdering reports: the CPU sees
	// NIC writes to host memory in order (owner ordering) unless a test
	// sets another value.
	writesOrdering int
	// failRegister, when set, decides whether a host registration fails.
	failRegister func(p, size uintptr, flags uint32) error
}

func newHostBackend() *hostBackend {
	return &hostBackend{allocs: map[uintptr][]byte{}, registered: map[uintptr]uintptr{}, noDmabuf: true,
		writesOrdering: cuda.RDMAWritesOrderingOwner}
}

func (b *hostBackend) describe() string { return "host-memory test GPU" }

func (b *hostBackend) cudaContext() (*cuda.Context, error) { return nil, errNoCUDAContext }

func (b *hostBackend) live() (allocs, regs int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.allocs), len(b.registered)
}

func (b *hostBackend) allocDevice(size uintptr) (uintptr, error) {
	m, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return 0, fmt.Errorf("host test GPU: mmap %d bytes: %w", size, err)
	}
	p := uintptr(addrOf(m))
	b.mu.Lock()
	b.allocs[p] = m
	b.mu.Unlock()
	return p, nil
}

func (b *hostBackend) freeDevice(p uintptr) error {
	b.mu.Lock()
	m, ok := b.allocs[p]
	delete(b.allocs, p)
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("host test GPU: free %#x: not allocated: %w", p, syscall.EINVAL)
	}
	return syscall.Munmap(m)
}

func (b *hostBackend) setSyncMemops(uintptr) error { return nil }

func (b *hostBackend) hostRegister(p, size uintptr, flags uint32) error {
	if b.failRegister != nil {
		if err := b.failRegister(p, size, flags); err != nil {
			return err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.registered[p]; ok {
		return fmt.Errorf("host test GPU: register %#x: %w", p, errAlreadyRegistered)
	}
	b.registered[p] = size
	return nil
}

func (b *hostBackend) hostUnregister(p uintptr) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.registered[p]; !ok {
		return fmt.Errorf("host test GPU: unregister %#x: not registered: %w", p, syscall.EINVAL)
	}
	delete(b.registered, p)
	return nil
}

func (b *hostBackend) hostDevicePointer(p uintptr) (uintptr, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for base, n := range b.registered {
		if p >= base && p < base+n {
			return p, nil
		}
	}
	return 0, fmt.Errorf("host test GPU: %#x is not registered: %w", p, syscall.EINVAL)
}

func (b *hostBackend) memcpyHtoD(dst uintptr, src []byte) error {
	copy(hostSlice(dst, uintptr(len(src))), src)
	return nil
}

func (b *hostBackend) memcpyDtoH(dst []byte, src uintptr) error {
	copy(dst, hostSlice(src, uintptr(len(dst))))
	return nil
}

func (b *hostBackend) memsetD8(dst uintptr, v byte, n uintptr) error {
	s := hostSlice(dst, n)
	for i := range s {
		s[i] = v
	}
	return nil
}

func (b *hostBackend) synchronize() error { return nil }

func (b *hostBackend) dmabufSupported() bool { return !b.noDmabuf }

func (b *hostBackend) dmabufFD(p, size uintptr) (int, error) {
	return -1, fmt.Errorf("host test GPU: no dma-buf: %w", syscall.EOPNOTSUPP)
}

func (b *hostBackend) rdmaWritesOrdering() (int, error) { return b.writesOrdering, nil }

func (b *hostBackend) gdrAvailable() error {
	if b.noGDR {
		return fmt.Errorf("host test GPU: GDRCopy switched off: %w", gdrcopy.ErrUnavailable)
	}
	return nil
}

func (b *hostBackend) gdrMap(dev, size uintptr) (uintptr, func() error, error) {
	if err := b.gdrAvailable(); err != nil {
		return 0, nil, err
	}
	return dev, func() error { return nil }, nil
}

func (b *hostBackend) release() error {
	if a, r := b.live(); a+r > 0 {
		return fmt.Errorf("host test GPU: %d allocations and %d registrations live: %w", a, r, syscall.EBUSY)
	}
	return nil
}
