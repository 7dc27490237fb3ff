package hostcopy

import "unsafe"

// haveNT: amd64 has non-temporal stores (SSE2, part of the base
// instruction set).
const haveNT = true

// ntcopy copies n bytes, a multiple of 64, from src to dst, which is
// 64-byte aligned, with non-temporal stores, and fences them
// (ntcopy_amd64.s).
//
//go:noescape
func ntcopy(dst, src unsafe.Pointer, n uintptr)
