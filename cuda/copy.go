package cuda

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"unsafe"
)

// elemBytes views s as bytes after checking that T is plain (see
// LaunchKernel: fixed-size numbers and bool, and arrays and structs of them
// with the C layout), so its bytes mean the same to a kernel.
func elemBytes[T any](op string, s []T) ([]byte, error) {
	t := reflect.TypeFor[T]()
	if err := plainType(t); err != nil {
		return nil, fmt.Errorf("cuda: %s: element type: %w: %v", op, ErrBadArgument, err)
	}
	if len(s) == 0 {
		return nil, nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), uintptr(len(s))*t.Size()), nil
}

// CopyToDevice copies the elements of src to device memory at dst and
// returns when the copy is done (cuMemcpyHtoD_v2). T must be a fixed-size
// number or bool, or an array or struct of them (not int or uint); its
// bytes are copied as they are in Go memory, which for such types is the C
// layout. src may be Go memory.
func CopyToDevice[T any](c *Context, dst DevPtr, src []T) error {
	b, err := elemBytes("CopyToDevice", src)
	if err != nil {
		return err
	}
	return c.MemcpyHtoD(dst, b)
}

// CopyFromDevice fills dst with elements read from device memory at src and
// returns when the copy is done (cuMemcpyDtoH_v2). T is as for CopyToDevice.
func CopyFromDevice[T any](c *Context, dst []T, src DevPtr) error {
	b, err := elemBytes("CopyFromDevice", dst)
	if err != nil {
		return err
	}
	return c.MemcpyDtoH(b, src)
}

// Buffer is device memory holding Len elements of T, allocated with Alloc.
// Its methods check bounds against the length, so a copy never runs past the
// allocation. Ptr is what a kernel receives. Free it with Free (or the
// Context refuses to Release).
type Buffer[T any] struct {
	ctx   *Context
	p     DevPtr
	n     int
	freed atomic.Bool
}

// Alloc allocates device memory for n elements of T (cuMemAlloc_v2); the
// contents are not initialised. T is as for CopyToDevice.
func Alloc[T any](c *Context, n int) (*Buffer[T], error) {
	t := reflect.TypeFor[T]()
	if err := plainType(t); err != nil {
		return nil, fmt.Errorf("cuda: Alloc: element type: %w: %v", ErrBadArgument, err)
	}
	if n <= 0 {
		return nil, &Error{Op: "cuMemAlloc_v2", Result: ErrorInvalidValue, Detail: fmt.Sprintf("Alloc of %d elements of %s", n, t)}
	}
	size := uintptr(n) * t.Size()
	if size/t.Size() != uintptr(n) {
		return nil, &Error{Op: "cuMemAlloc_v2", Result: ErrorInvalidValue, Detail: fmt.Sprintf("Alloc of %d elements of %s overflows", n, t)}
	}
	p, err := c.MemAlloc(size)
	if err != nil {
		return nil, err
	}
	return &Buffer[T]{ctx: c, p: p, n: n}, nil
}

// Ptr returns the device address of element 0 (0 for a nil or zero
// Buffer).
func (b *Buffer[T]) Ptr() DevPtr {
	if b == nil {
		return 0
	}
	return b.p
}

// Len returns the number of elements (0 for a nil Buffer).
func (b *Buffer[T]) Len() int {
	if b == nil {
		return 0
	}
	return b.n
}

// Size returns the size in bytes.
func (b *Buffer[T]) Size() uintptr { return uintptr(b.Len()) * reflect.TypeFor[T]().Size() }

// At returns the device address of element i, which must be in [0, Len]
// (Len is the address just past the end).
func (b *Buffer[T]) At(i int) (DevPtr, error) {
	if err := b.bounds("At", "Buffer.At", i, 0); err != nil {
		return 0, err
	}
	return b.p + DevPtr(uintptr(i)*reflect.TypeFor[T]().Size()), nil
}

// usable checks, before any driver call, that b can serve Buffer.method:
// not nil, not a zero value (no context), not freed, and its context not
// released.
func (b *Buffer[T]) usable(method string) error {
	switch {
	case b == nil:
		return released("Buffer", method, "nil *Buffer")
	case b.ctx == nil:
		return zeroValue("Buffer", method, "")
	case b.freed.Load():
		return released("Buffer", method, fmt.Sprintf("buffer of %d elements at %#x", b.n, uintptr(b.p)))
	}
	return b.ctx.usableAs("Buffer", method, "context")
}

// bounds checks that b can serve Buffer.method and that elements [off,
// off+n) lie in it; op names the driver call for a range error.
func (b *Buffer[T]) bounds(method, op string, off, n int) error {
	if err := b.usable(method); err != nil {
		return err
	}
	if off < 0 || n < 0 || n > b.n || off > b.n-n {
		return &Error{Op: op, Result: ErrorInvalidValue, Detail: fmt.Sprintf("elements [%d, %d) of a buffer of %d", off, off+n, b.n)}
	}
	return nil
}

// Write copies src into the buffer starting at element off
// (cuMemcpyHtoD_v2); it must fit.
func (b *Buffer[T]) Write(off int, src []T) error {
	if err := b.bounds("Write", "cuMemcpyHtoD_v2", off, len(src)); err != nil {
		return err
	}
	p, _ := b.At(off)
	return CopyToDevice(b.ctx, p, src)
}

// Read fills dst from the buffer starting at element off (cuMemcpyDtoH_v2);
// it must fit.
func (b *Buffer[T]) Read(off int, dst []T) error {
	if err := b.bounds("Read", "cuMemcpyDtoH_v2", off, len(dst)); err != nil {
		return err
	}
	p, _ := b.At(off)
	return CopyFromDevice(b.ctx, dst, p)
}

// Elements returns a new slice with all the buffer's elements.
func (b *Buffer[T]) Elements() ([]T, error) {
	if err := b.bounds("Elements", "cuMemcpyDtoH_v2", 0, 0); err != nil {
		return nil, err
	}
	out := make([]T, b.n)
	if err := b.Read(0, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Zero sets every byte of the buffer to 0 (cuMemsetD8_v2).
func (b *Buffer[T]) Zero() error {
	if err := b.bounds("Zero", "cuMemsetD8_v2", 0, 0); err != nil {
		return err
	}
	return b.ctx.MemsetD8(b.p, 0, b.Size())
}

// Free frees the memory (cuMemFree_v2); a second Free does nothing. Later
// copies fail with ErrReleased.
func (b *Buffer[T]) Free() error {
	if b == nil || b.freed.Load() {
		return nil
	}
	if b.ctx == nil {
		return zeroValue("Buffer", "Free", "")
	}
	if err := b.ctx.usableAs("Buffer", "Free", "context"); err != nil {
		return err
	}
	if err := b.ctx.MemFree(b.p); err != nil {
		return err
	}
	b.freed.Store(true)
	return nil
}
