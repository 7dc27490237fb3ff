//go:build !amd64

package hostcopy

import "unsafe"

// haveNT: only the amd64 build stores non-temporally; parts elsewhere are
// copy().
const haveNT = false

func ntcopy(dst, src unsafe.Pointer, n uintptr) {
	panic("hostcopy: ntcopy without non-temporal stores")
}
