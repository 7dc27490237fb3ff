package verbs

import (
	"syscall"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// hostBuf is page-aligned, zeroed host memory from mmap, never Go heap: the
// NIC (or the emulator) reads and writes it, and GPUs may map it.
type hostBuf struct {
	b []byte
}

const hostPage = 4096

func allocHost(op string, size uint64) (*hostBuf, error) {
	n := (size + hostPage - 1) &^ (hostPage - 1)
	if n == 0 {
		n = hostPage
	}
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, wrapErr(op, ErrNoMemory, err, "mmap %d bytes", n)
	}
	return &hostBuf{b: b}, nil
}

func (h *hostBuf) addr() uintptr { return uintptr(unsafe.Pointer(&h.b[0])) }

// freeRing unmaps *buf, when set, and clears it; a failure (what names the
// ring) keeps it for a retry.
func freeRing(op string, buf **hostBuf, what string) error {
	if *buf == nil {
		return nil
	}
	if err := (*buf).free(); err != nil {
		return wrapErr(op, ErrOperatingSystem, err, "munmap %s", what)
	}
	*buf = nil
	return nil
}

// destroyObj destroys the device object *obj, when set, and clears it; a
// failure (format and args name the object) keeps it for a retry.
func destroyObj(op string, obj *mlx5.Obj, format string, args ...any) error {
	if *obj == nil {
		return nil
	}
	if err := (*obj).Destroy(); err != nil {
		return driverErr(op, err, format, args...)
	}
	*obj = nil
	return nil
}

func (h *hostBuf) free() error {
	if h == nil || h.b == nil {
		return nil
	}
	err := syscall.Munmap(h.b)
	h.b = nil
	return err
}

// mem returns n bytes of process memory at addr. The caller guarantees the
// range is mapped host memory (a ring it allocated or a UMEM the user
// registered as host memory).
func mem(addr uintptr, n int) []byte {
	return unsafe.Slice((*byte)(ptr(addr)), n)
}

// ptr turns an address that is not Go memory (mmap'd rings, MMIO pages,
// memory a user registered) into an unsafe.Pointer. Such memory never moves,
// so the uintptr-to-pointer rule that protects Go heap objects does not apply;
// the double conversion keeps vet's check quiet for exactly these cases.
func ptr(addr uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&addr))
}
