package mmio

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestStoresAndLoads(t *testing.T) {
	page, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer syscall.Munmap(page)
	p := unsafe.Pointer(&page[0x800])
	WriteBarrier()
	Store64(p, 0x0807060504030201)
	ReadBarrier()
	require.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8}, page[0x800:0x808], "host-order 8-byte store")
	require.Equal(t, uint64(0x0807060504030201), Load64(p))
	Store32(unsafe.Pointer(&page[4]), 0xaabbccdd)
	require.Equal(t, []byte{0xdd, 0xcc, 0xbb, 0xaa}, page[4:8])
	require.Equal(t, make([]byte, 4), page[0:4], "neighbours untouched")
}
