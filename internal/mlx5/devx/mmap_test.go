//go:build cgo

package devx

import (
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// mmapPages maps n anonymous pages (memory the NIC may touch: never the Go
// heap) and unmaps them when the test ends.
func mmapPages(t *testing.T, n int) uintptr {
	t.Helper()
	b, err := syscall.Mmap(-1, 0, n*os.Getpagesize(), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, syscall.Munmap(b)) })
	return uintptr(unsafe.Pointer(&b[0]))
}
