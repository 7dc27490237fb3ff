//go:build !amd64 && !arm64

package mmio

import (
	"sync/atomic"
	"unsafe"
)

var fence atomic.Uint64

func store64(p unsafe.Pointer, v uint64) { atomic.StoreUint64((*uint64)(p), v) }
func store32(p unsafe.Pointer, v uint32) { atomic.StoreUint32((*uint32)(p), v) }
func load64(p unsafe.Pointer) uint64     { return atomic.LoadUint64((*uint64)(p)) }
func writeBarrier()                      { fence.Add(1) }
func readBarrier()                       { fence.Load() }
