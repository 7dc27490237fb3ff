package cudasys

/*
#include <stdlib.h>
#include "nvrtc.h"
*/
import "C"

import (
	"strings"
	"unsafe"
)

// NVRTCNotLoaded is the result of an NVRTC call whose entry point is not
// resolved (GN_NOT_LOADED); no forwarding function calls through one.
const NVRTCNotLoaded = C.GN_NOT_LOADED

// NVRTC results the binding itself produces.
const (
	nvrtcOutOfMemory  = 1 // NVRTC_ERROR_OUT_OF_MEMORY
	nvrtcInvalidInput = 3 // NVRTC_ERROR_INVALID_INPUT
)

// NVRTCVersion calls nvrtcVersion.
func NVRTCVersion() (major, minor int, r int32) {
	var ma, mi C.int
	rc := C.gn_version(&ma, &mi)
	return int(ma), int(mi), int32(rc)
}

// NVRTCErrorString calls nvrtcGetErrorString; false when NVRTC is not
// loaded.
func NVRTCErrorString(r int32) (string, bool) {
	s := C.gn_error_string(C.gn_result(r))
	if s == nil {
		return "", false
	}
	return C.GoString(s), true
}

// NVRTCSupportedArchs calls nvrtcGetNumSupportedArchs and
// nvrtcGetSupportedArchs (CUDA 11.2+); ok is false when the library lacks
// them.
func NVRTCSupportedArchs() (archs []int, ok bool, r int32) {
	if C.gn_has_archs() == 0 {
		return nil, false, 0
	}
	var n C.int
	if rc := C.gn_num_supported_archs(&n); rc != 0 {
		return nil, true, int32(rc)
	}
	if n <= 0 {
		return nil, true, 0
	}
	buf := make([]C.int, int(n))
	if rc := C.gn_supported_archs(&buf[0]); rc != 0 {
		return nil, true, int32(rc)
	}
	archs = make([]int, len(buf))
	for i, a := range buf {
		archs[i] = int(a)
	}
	return archs, true, 0
}

// NVRTCInput is one compilation.
type NVRTCInput struct {
	Source, Name string
	// HeaderNames[i] is the include name of Headers[i].
	HeaderNames, Headers []string
	Options              []string
	NameExpressions      []string
}

// NVRTCOutput is what a compilation produced. On failure Op names the NVRTC
// call that failed and Result is its nvrtcResult; Log is the program log
// whenever NVRTC produced one.
type NVRTCOutput struct {
	PTX, CUBIN []byte
	// CUBINAvailable is false when the library has no nvrtcGetCUBIN.
	CUBINAvailable bool
	Log            string
	// Lowered[i] is the lowered name of NameExpressions[i].
	Lowered []string
	Op      string
	Result  int32
}

// cClean reports whether every string of in crosses into C whole: none
// holds a NUL byte, which C would take for its end. Package cuda names the
// offending input first; this is the binding's own backstop.
func (in *NVRTCInput) cClean() bool {
	if strings.IndexByte(in.Source, 0) >= 0 || strings.IndexByte(in.Name, 0) >= 0 {
		return false
	}
	for _, l := range [][]string{in.HeaderNames, in.Headers, in.Options, in.NameExpressions} {
		for _, s := range l {
			if strings.IndexByte(s, 0) >= 0 {
				return false
			}
		}
	}
	return true
}

// AsC returns in as C reads it: every string converted to a C string and
// back, as NVRTCCompile hands them over. Tests compare it with in to prove
// that what crosses into C is what Go passed.
func (in *NVRTCInput) AsC() NVRTCInput {
	conv := func(s string) string {
		cs := C.CString(s)
		defer C.free(unsafe.Pointer(cs))
		return C.GoString(cs)
	}
	list := func(ss []string) []string {
		if ss == nil {
			return nil
		}
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = conv(s)
		}
		return out
	}
	return NVRTCInput{
		Source: conv(in.Source), Name: conv(in.Name),
		HeaderNames: list(in.HeaderNames), Headers: list(in.Headers),
		Options: list(in.Options), NameExpressions: list(in.NameExpressions),
	}
}

// cstrings is a C array of C strings, freed as a whole.
type cstrings struct {
	arr  **C.char
	strs []*C.char
}

func newCStrings(ss []string) (*cstrings, bool) {
	c := &cstrings{}
	if len(ss) == 0 {
		return c, true
	}
	c.arr = (**C.char)(C.calloc(C.size_t(len(ss)), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	if c.arr == nil {
		return c, false
	}
	slots := unsafe.Slice(c.arr, len(ss))
	for i, s := range ss {
		slots[i] = C.CString(s)
		c.strs = append(c.strs, slots[i])
	}
	return c, true
}

func (c *cstrings) free() {
	for _, s := range c.strs {
		C.free(unsafe.Pointer(s))
	}
	if c.arr != nil {
		C.free(unsafe.Pointer(c.arr))
	}
}

// NVRTCCompile creates a program, adds the name expressions, compiles it,
// reads the log, the PTX, the CUBIN (when the library can) and the lowered
// names, and destroys the program. Every C string lives until the program
// is destroyed.
func NVRTCCompile(in *NVRTCInput) (out NVRTCOutput) {
	fail := func(op string, r C.gn_result) NVRTCOutput {
		out.Op, out.Result = op, int32(r)
		return out
	}
	if len(in.Headers) != len(in.HeaderNames) || !in.cClean() {
		return fail("nvrtcCreateProgram", nvrtcInvalidInput)
	}
	src := C.CString(in.Source)
	defer C.free(unsafe.Pointer(src))
	name := C.CString(in.Name)
	defer C.free(unsafe.Pointer(name))
	hdrs, ok1 := newCStrings(in.Headers)
	defer hdrs.free()
	names, ok2 := newCStrings(in.HeaderNames)
	defer names.free()
	opts, ok3 := newCStrings(in.Options)
	defer opts.free()
	exprs, ok4 := newCStrings(in.NameExpressions)
	defer exprs.free()
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return fail("nvrtcCreateProgram", nvrtcOutOfMemory)
	}

	var p C.gn_program
	if r := C.gn_create_program(&p, src, name, C.int(len(in.Headers)), hdrs.arr, names.arr); r != 0 {
		return fail("nvrtcCreateProgram", r)
	}
	defer C.gn_destroy_program(&p)
	for _, e := range exprs.strs {
		if r := C.gn_add_name_expression(p, e); r != 0 {
			return fail("nvrtcAddNameExpression", r)
		}
	}
	rc := C.gn_compile_program(p, C.int(len(in.Options)), opts.arr)
	out.Log = programLog(p)
	if rc != 0 {
		return fail("nvrtcCompileProgram", rc)
	}

	var n C.size_t
	if r := C.gn_get_ptx_size(p, &n); r != 0 {
		return fail("nvrtcGetPTXSize", r)
	}
	if n > 0 {
		buf := C.malloc(n)
		if buf == nil {
			return fail("nvrtcGetPTX", nvrtcOutOfMemory)
		}
		defer C.free(buf)
		if r := C.gn_get_ptx(p, (*C.char)(buf)); r != 0 {
			return fail("nvrtcGetPTX", r)
		}
		out.PTX = C.GoBytes(buf, C.int(n))
	}
	if C.gn_has_cubin() != 0 {
		out.CUBINAvailable = true
		n = 0
		if r := C.gn_get_cubin_size(p, &n); r != 0 {
			return fail("nvrtcGetCUBINSize", r)
		}
		if n > 0 {
			buf := C.malloc(n)
			if buf == nil {
				return fail("nvrtcGetCUBIN", nvrtcOutOfMemory)
			}
			defer C.free(buf)
			if r := C.gn_get_cubin(p, (*C.char)(buf)); r != 0 {
				return fail("nvrtcGetCUBIN", r)
			}
			out.CUBIN = C.GoBytes(buf, C.int(n))
		}
	}
	for _, e := range exprs.strs {
		var lowered *C.char
		if r := C.gn_get_lowered_name(p, e, &lowered); r != 0 {
			return fail("nvrtcGetLoweredName", r)
		}
		out.Lowered = append(out.Lowered, C.GoString(lowered))
	}
	return out
}

// programLog returns the program log, or "" when there is none.
func programLog(p C.gn_program) string {
	var n C.size_t
	if C.gn_get_log_size(p, &n) != 0 || n <= 1 {
		return ""
	}
	buf := C.malloc(n)
	if buf == nil {
		return ""
	}
	defer C.free(buf)
	if C.gn_get_log(p, (*C.char)(buf)) != 0 {
		return ""
	}
	return C.GoString((*C.char)(buf))
}
