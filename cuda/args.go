package cuda

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"unsafe"
)

// ErrBadArgument matches every error about a kernel argument, or an element
// type of a typed copy, that cannot be marshalled exactly.
var ErrBadArgument = errors.New("cuda: bad kernel argument")

// ArgumentError is a kernel argument LaunchKernel cannot marshal exactly:
// the kernel, the argument's position (from 0), its Go type and why.
// errors.Is matches ErrBadArgument.
type ArgumentError struct {
	Kernel string
	Index  int
	GoType string
	Reason string
}

// Error formats "cuda: cuLaunchKernel: kernel <name>: argument <i> (Go
// type <T>): <reason>".
func (e *ArgumentError) Error() string {
	s := "cuda: cuLaunchKernel: "
	if e.Kernel != "" {
		s += "kernel " + e.Kernel + ": "
	}
	return s + fmt.Sprintf("argument %d (Go type %s): %s", e.Index, e.GoType, e.Reason)
}

// Unwrap returns ErrBadArgument.
func (e *ArgumentError) Unwrap() error { return ErrBadArgument }

// marshalArgs packs kernel arguments into one buffer, each at its alignment,
// and returns the buffer and each argument's offset. See LaunchKernel for
// the accepted types.
func marshalArgs(args []any) ([]byte, []int, error) {
	var buf []byte
	offs := make([]int, 0, len(args))
	for i, a := range args {
		b, align, err := marshalArg(a)
		if err != nil {
			return nil, nil, &ArgumentError{Index: i, GoType: fmt.Sprintf("%T", a), Reason: err.Error()}
		}
		for len(buf)%align != 0 {
			buf = append(buf, 0)
		}
		offs = append(offs, len(buf))
		buf = append(buf, b...)
	}
	return buf, offs, nil
}

// marshalArg returns the bytes of one argument and their alignment.
func marshalArg(a any) ([]byte, int, error) {
	ne := binary.NativeEndian
	// The common cases without reflection.
	switch v := a.(type) {
	case nil:
		return nil, 0, errors.New("nil has no C type")
	case uint32:
		return ne.AppendUint32(nil, v), 4, nil
	case int32:
		return ne.AppendUint32(nil, uint32(v)), 4, nil
	case uint64:
		return ne.AppendUint64(nil, v), 8, nil
	case int64:
		return ne.AppendUint64(nil, uint64(v)), 8, nil
	case DevPtr:
		return ne.AppendUint64(nil, uint64(v)), 8, nil
	case unsafe.Pointer:
		return ne.AppendUint64(nil, uint64(uintptr(v))), 8, nil
	case []byte:
		if len(v) == 0 {
			return nil, 0, errors.New("empty struct bytes")
		}
		return append([]byte(nil), v...), 8, nil
	}
	t := reflect.TypeOf(a)
	switch t.Kind() {
	case reflect.Array:
		return nil, 0, errors.New("an array: C passes no array by value; wrap it in a struct, or pass the DevPtr of device memory holding it")
	case reflect.Pointer:
		return nil, 0, errors.New("a Go pointer: the GPU cannot use Go memory; pass a DevPtr (device memory) or an unsafe.Pointer to mapped host memory")
	}
	if err := plainType(t); err != nil {
		return nil, 0, err
	}
	b := make([]byte, t.Size())
	encode(b, reflect.ValueOf(a))
	return b, t.Align(), nil
}

// plainCache remembers plainType's verdict per type.
var plainCache sync.Map // reflect.Type -> error (nil stored as errOK)

var errOK = errors.New("ok")

// plainType checks that values of t can be copied to the GPU byte for byte
// with the same meaning in C: fixed-size numbers and bool, and arrays and
// structs of them whose Go layout (offsets, padding, size, alignment) equals
// the C layout of the same declaration.
func plainType(t reflect.Type) error {
	if v, ok := plainCache.Load(t); ok {
		if v.(error) == errOK {
			return nil
		}
		return v.(error)
	}
	err := checkPlain(t)
	if err == nil {
		plainCache.Store(t, errOK)
	} else {
		plainCache.Store(t, err)
	}
	return err
}

func checkPlain(t reflect.Type) error {
	switch t.Kind() {
	case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		// C aligns these scalars to their size on the 64-bit ABIs CUDA runs on.
		if uintptr(t.Align()) != t.Size() {
			return fmt.Errorf("%s: Go aligns it to %d bytes, C to %d", t, t.Align(), t.Size())
		}
		return nil
	case reflect.Int, reflect.Uint:
		return fmt.Errorf("%s has no fixed C width: use int32/int64 or uint32/uint64", t)
	case reflect.Array:
		if t.Len() == 0 {
			return fmt.Errorf("%s: a zero-length array has no C equivalent", t)
		}
		return checkPlain(t.Elem())
	case reflect.Struct:
		if t.NumField() == 0 {
			return fmt.Errorf("%s: an empty struct has size 0 in Go and 1 in C++", t)
		}
		var off, maxAlign uintptr = 0, 1
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if err := checkPlain(f.Type); err != nil {
				return fmt.Errorf("%s field %s: %w", t, f.Name, err)
			}
			a := cAlign(f.Type)
			off = alignUp(off, a)
			if f.Offset != off {
				return fmt.Errorf("%s field %s: offset %d in Go, %d in C", t, f.Name, f.Offset, off)
			}
			off += f.Type.Size()
			maxAlign = max(maxAlign, a)
		}
		if size := alignUp(off, maxAlign); size != t.Size() || uintptr(t.Align()) != maxAlign {
			return fmt.Errorf("%s: %d bytes aligned to %d in Go, %d aligned to %d in C", t, t.Size(), t.Align(), size, maxAlign)
		}
		return nil
	case reflect.UnsafePointer:
		return fmt.Errorf("%s: a host pointer inside a value cannot be checked; pass it as its own argument", t)
	}
	return fmt.Errorf("%s (%s) cannot be marshalled: only fixed-size numbers and bool, and arrays and structs of them", t, t.Kind())
}

// cAlign is the C alignment of a type checkPlain accepted.
func cAlign(t reflect.Type) uintptr {
	switch t.Kind() {
	case reflect.Array:
		return cAlign(t.Elem())
	case reflect.Struct:
		a := uintptr(1)
		for i := 0; i < t.NumField(); i++ {
			a = max(a, cAlign(t.Field(i).Type))
		}
		return a
	}
	return t.Size()
}

func alignUp(v, a uintptr) uintptr { return (v + a - 1) &^ (a - 1) }

// encode writes v (a type checkPlain accepted) into b in host byte order;
// padding stays as it is in b (zero).
func encode(b []byte, v reflect.Value) {
	ne := binary.NativeEndian
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			b[0] = 1
		}
	case reflect.Int8:
		b[0] = byte(v.Int())
	case reflect.Uint8:
		b[0] = byte(v.Uint())
	case reflect.Int16:
		ne.PutUint16(b, uint16(v.Int()))
	case reflect.Uint16:
		ne.PutUint16(b, uint16(v.Uint()))
	case reflect.Int32:
		ne.PutUint32(b, uint32(v.Int()))
	case reflect.Uint32:
		ne.PutUint32(b, uint32(v.Uint()))
	case reflect.Int64:
		ne.PutUint64(b, uint64(v.Int()))
	case reflect.Uint64, reflect.Uintptr:
		ne.PutUint64(b, v.Uint())
	case reflect.Float32:
		ne.PutUint32(b, math.Float32bits(float32(v.Float())))
	case reflect.Float64:
		ne.PutUint64(b, math.Float64bits(v.Float()))
	case reflect.Array:
		es := v.Type().Elem().Size()
		for i := 0; i < v.Len(); i++ {
			encode(b[uintptr(i)*es:], v.Index(i))
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			encode(b[t.Field(i).Offset:], v.Field(i))
		}
	}
}
