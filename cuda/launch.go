package cuda

import (
	"errors"
	"fmt"

	"github.com/gdaki/gpunetio/internal/cudasys"
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

// LaunchKernel launches f on stream s (nil: the legacy default stream) with
// the given grid and block shapes and dynamic shared memory
// (cuLaunchKernel). The launch is asynchronous: wait with Stream.Wait,
// Event.Wait or Synchronize. f must come from a module of c's device.
//
// Each argument is marshalled to the bytes of the matching kernel
// parameter, in host (little-endian) order:
//
//	bool, int8, uint8          1 byte (bool as 0 or 1)
//	int16, uint16              2 bytes
//	int32, uint32, float32     4 bytes
//	int64, uint64, float64     8 bytes
//	uintptr, DevPtr            8 bytes (a device address)
//	unsafe.Pointer             8 bytes (a host address the GPU can use, e.g.
//	                           mapped pinned memory under unified addressing)
//	a struct                   its Go memory layout, which is the C layout of
//	                           a struct with the same field types in the same
//	                           order; fields may be the types above (not
//	                           unsafe.Pointer), arrays and structs of them
//	[]byte                     a struct passed by value given as its exact
//	                           bytes, aligned to 8
//
// Named types count by their underlying type, so gpunetio.DevPtr or a
// `type Flags uint32` pass as they are. int and uint are refused (their
// width does not match C's int), as are Go pointers, strings, slices other
// than []byte, maps, interfaces and complex numbers; a struct with any of
// them, with a zero-size field, or whose layout would differ from C's, is
// refused too. CUDA vector types (float2, int4, ...) carry an alignment
// larger than their fields': declare such a kernel parameter as a plain C
// struct, or pass its bytes. The types and count must match the kernel's
// parameter list; the driver does not check them. Errors about an argument
// match ErrBadArgument and are an *ArgumentError naming the kernel, the
// argument's position and its Go type. A nil, zero-value or unloaded
// Function, a zero-value or destroyed Stream and an unusable Context are
// refused first (ErrZeroValue, ErrReleased).
func (c *Context) LaunchKernel(f *Function, grid, block Dim3, sharedMem uint32, s *Stream, args ...any) error {
	const op = "cuLaunchKernel"
	if err := c.usable("LaunchKernel"); err != nil {
		return err
	}
	switch {
	case f == nil:
		return released("Context", "LaunchKernel", "nil *Function")
	case f.mod == nil:
		return zeroValue("Context", "LaunchKernel", "function argument")
	}
	if err := f.mod.usable("Context", "LaunchKernel", "module of kernel "+f.name); err != nil {
		return err
	}
	if err := s.asArg("Context", "LaunchKernel"); err != nil {
		return err
	}
	grid, block = grid.norm(), block.norm()
	if grid.X == 0 || block.X == 0 {
		return &Error{Op: op, Result: ErrorInvalidValue, Detail: fmt.Sprintf("kernel %s: grid %v block %v", f.name, grid, block)}
	}
	buf, offs, err := marshalArgs(args)
	if err != nil {
		var ae *ArgumentError
		if errors.As(err, &ae) {
			ae.Kernel = f.name
		}
		return err
	}
	if f.mod.ctx.h != c.h {
		return &Error{Op: op, Result: ErrorInvalidContext, Detail: fmt.Sprintf("kernel %s belongs to a module of device %d, not of device %d", f.name, f.mod.ctx.dev.ordinal, c.dev.ordinal)}
	}
	err = f.mod.with(op, func(cudasys.Module) error {
		return s.with(op, func(sh cudasys.Stream) error {
			return c.call(op, func(h cudasys.Ctx) int32 {
				return cudasys.LaunchKernel(h, f.h,
					[3]uint32{grid.X, grid.Y, grid.Z}, [3]uint32{block.X, block.Y, block.Z},
					sharedMem, sh, buf, offs)
			})
		})
	})
	if err != nil {
		return fmt.Errorf("kernel %s: %w", f.name, err)
	}
	return nil
}
