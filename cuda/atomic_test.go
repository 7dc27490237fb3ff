package cuda

import "sync/atomic"

// atomicU32 views a word of mapped host memory that the GPU also accesses.
type atomicU32 uint32

func (a *atomicU32) store(v uint32) { atomic.StoreUint32((*uint32)(a), v) }
func (a *atomicU32) load() uint32   { return atomic.LoadUint32((*uint32)(a)) }
