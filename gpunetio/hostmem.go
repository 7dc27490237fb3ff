package gpunetio

import (
	"os"
	"syscall"
	"unsafe"
)

var hostPage = uintptr(os.Getpagesize())

func alignUp(v, a uintptr) uintptr { return (v + a - 1) &^ (a - 1) }

func isPow2(v uintptr) bool { return v != 0 && v&(v-1) == 0 }

func addrOf(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }

// mmapHost maps n zeroed bytes of anonymous host memory (never Go heap).
func mmapHost(n uintptr) ([]byte, error) {
	return syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}
