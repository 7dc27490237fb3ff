package devhost

// #include "devhost.h"
import "C"

import "unsafe"

// Field is one entry of the C layout table: "struct.field" (or "struct" for the size,
// "struct.align" for the alignment), its offset and size.
type Field struct {
	Name   string
	Offset uintptr
	Size   uintptr
}

// Layout returns the offsets and sizes of the device structs as the C compiler lays them out.
func Layout() []Field {
	var p *C.struct_devhost_field
	n := int(C.devhost_layout(&p))
	fields := unsafe.Slice(p, n)
	out := make([]Field, n)
	for i, f := range fields {
		out[i] = Field{Name: C.GoString(f.name), Offset: uintptr(f.offset), Size: uintptr(f.size)}
	}
	return out
}
