package cuda

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Dim3 is a grid or block shape. A zero Y or Z counts as 1; X must be at
// least 1.
type Dim3 struct{ X, Y, Z uint32 }

func (d Dim3) norm() Dim3 {
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

// ErrBadArgument matches every error about a kernel argument that cannot be
// marshalled.
var ErrBadArgument = errors.New("cuda: bad kernel argument")

// LaunchKernel launches f on stream s (nil: the legacy default stream) with
// the given grid and block shapes and dynamic shared memory
// (cuLaunchKernel). The launch is asynchronous.
//
// Each argument is marshalled to the bytes of the matching kernel
// parameter, in host (little-endian) order:
//
//	uint8, int8, bool        1 byte (bool as 0 or 1)
//	uint16, int16            2 bytes
//	uint32, int32, float32   4 bytes
//	uint64, int64, float64   8 bytes
//	uintptr, DevPtr          8 bytes (a device address)
//	unsafe.Pointer           8 bytes (a host address the GPU can use, e.g.
//	                         mapped pinned memory under unified addressing)
//	[]byte                   a struct passed by value: its exact bytes,
//	                         laid out as the kernel's C struct
//
// int and uint are refused: their width is ambiguous against C's int. The
// types and count must match the kernel's parameter list; the driver does
// not check them.
func (c *Context) LaunchKernel(f *Function, grid, block Dim3, sharedMem uint32, s *Stream, args ...any) error {
	const op = "cuLaunchKernel"
	if f == nil {
		return fmt.Errorf("cuda: %s: nil function: %w", op, ErrReleased)
	}
	grid, block = grid.norm(), block.norm()
	if grid.X == 0 || block.X == 0 {
		return &Error{Op: op, Result: ErrorInvalidValue, Detail: fmt.Sprintf("%s: grid %v block %v", f.name, grid, block)}
	}
	buf, offs, err := marshalArgs(args)
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, f.name, err)
	}
	// The argument bytes and the array of pointers to each argument live in
	// C memory: cgo forbids handing C a Go pointer to Go pointers.
	ptrBytes := len(offs) * int(unsafe.Sizeof(uintptr(0)))
	mem := C.malloc(C.size_t(ptrBytes + len(buf) + 1))
	if mem == nil {
		return &Error{Op: op, Result: ErrorOutOfMemory, Detail: "kernel parameters"}
	}
	defer C.free(mem)
	vals := unsafe.Add(mem, ptrBytes)
	copy(unsafe.Slice((*byte)(vals), len(buf)+1), buf)
	var params *unsafe.Pointer
	if len(offs) > 0 {
		ptrs := unsafe.Slice((*uintptr)(mem), len(offs))
		for i, o := range offs {
			ptrs[i] = uintptr(vals) + uintptr(o)
		}
		params = (*unsafe.Pointer)(mem)
	}
	err = f.mod.with(op, func(C.gc_module) error {
		return s.with(op, func(sh C.gc_stream) error {
			return c.call(op, func(h C.gc_ctx) C.gc_result {
				return C.gc_launch_kernel(h, f.h,
					C.uint(grid.X), C.uint(grid.Y), C.uint(grid.Z),
					C.uint(block.X), C.uint(block.Y), C.uint(block.Z),
					C.uint(sharedMem), sh, params)
			})
		})
	})
	if err != nil {
		return fmt.Errorf("kernel %s: %w", f.name, err)
	}
	return nil
}

// marshalArgs packs kernel arguments into one buffer, each at its natural
// alignment (structs at 8), and returns the buffer and each argument's
// offset. See LaunchKernel for the accepted types.
func marshalArgs(args []any) ([]byte, []int, error) {
	var buf []byte
	offs := make([]int, 0, len(args))
	put := func(align int, b []byte) {
		for len(buf)%align != 0 {
			buf = append(buf, 0)
		}
		offs = append(offs, len(buf))
		buf = append(buf, b...)
	}
	ne := binary.NativeEndian
	for i, a := range args {
		switch v := a.(type) {
		case uint8:
			put(1, []byte{v})
		case int8:
			put(1, []byte{byte(v)})
		case bool:
			var b byte
			if v {
				b = 1
			}
			put(1, []byte{b})
		case uint16:
			put(2, ne.AppendUint16(nil, v))
		case int16:
			put(2, ne.AppendUint16(nil, uint16(v)))
		case uint32:
			put(4, ne.AppendUint32(nil, v))
		case int32:
			put(4, ne.AppendUint32(nil, uint32(v)))
		case float32:
			put(4, ne.AppendUint32(nil, math.Float32bits(v)))
		case uint64:
			put(8, ne.AppendUint64(nil, v))
		case int64:
			put(8, ne.AppendUint64(nil, uint64(v)))
		case float64:
			put(8, ne.AppendUint64(nil, math.Float64bits(v)))
		case uintptr:
			put(8, ne.AppendUint64(nil, uint64(v)))
		case DevPtr:
			put(8, ne.AppendUint64(nil, uint64(v)))
		case unsafe.Pointer:
			put(8, ne.AppendUint64(nil, uint64(uintptr(v))))
		case []byte:
			if len(v) == 0 {
				return nil, nil, fmt.Errorf("%w %d: empty struct bytes", ErrBadArgument, i)
			}
			put(8, v)
		case int, uint:
			return nil, nil, fmt.Errorf("%w %d: %T has no fixed C width; use int32/int64 or uint32/uint64", ErrBadArgument, i, a)
		default:
			return nil, nil, fmt.Errorf("%w %d: unsupported type %T", ErrBadArgument, i, a)
		}
	}
	return buf, offs, nil
}
