//go:build amd64 || arm64

package mmio

import "unsafe"

//go:noescape
func store64(p unsafe.Pointer, v uint64)

//go:noescape
func store32(p unsafe.Pointer, v uint32)

//go:noescape
func load64(p unsafe.Pointer) uint64

func writeBarrier()
func readBarrier()
