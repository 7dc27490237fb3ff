package devhost

// #include <stdlib.h>
import "C"

import "unsafe"

// CBuffer is C memory for data that device code reads or writes (inline sources, local
// buffers); free it with Free.
type CBuffer struct {
	p unsafe.Pointer
	n int
}

// NewCBuffer copies data into fresh C memory.
func NewCBuffer(data []byte) *CBuffer {
	n := len(data)
	if n == 0 {
		n = 1
	}
	p := C.calloc(C.size_t(n), 1)
	copy(unsafe.Slice((*byte)(p), n), data)
	return &CBuffer{p: p, n: len(data)}
}

// Pointer returns the address.
func (b *CBuffer) Pointer() unsafe.Pointer { return b.p }

// Free releases the memory.
func (b *CBuffer) Free() {
	if b.p != nil {
		C.free(b.p)
		b.p = nil
	}
}
