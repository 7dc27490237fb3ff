//go:build cgo

package docasdk

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/dl"
)

// The table must hold every symbol.
var _ = [C.GDS_MAX_SYMS - int(symCount)]struct{}{}

// systemLoader is the process's dynamic loader, through internal/dl. The
// decision handles libraries as integers (so that tests can play a loader
// in Go); openLibs maps those integers to the open libraries.
type systemLoader struct{}

var (
	openMu   sync.Mutex
	openLibs = map[uintptr]*dl.Library{}
	lastLib  uintptr
)

func (systemLoader) open(path string, global bool) (uintptr, string) {
	flags := dl.Now | dl.Local
	if global {
		flags = dl.Now | dl.Global // see libGlobal
	}
	l, err := dl.Open(flags, path)
	if err != nil {
		return 0, loaderText(err)
	}
	openMu.Lock()
	defer openMu.Unlock()
	lastLib++
	openLibs[lastLib] = l
	return lastLib, ""
}

func (systemLoader) sym(handle uintptr, name string) (uintptr, string) {
	openMu.Lock()
	l := openLibs[handle]
	openMu.Unlock()
	if l == nil {
		return 0, dl.ErrClosed.Error()
	}
	p, err := l.Lookup(name)
	if err != nil {
		return 0, loaderText(err)
	}
	return uintptr(p), ""
}

func (systemLoader) close(handle uintptr) {
	openMu.Lock()
	l := openLibs[handle]
	delete(openLibs, handle)
	openMu.Unlock()
	if l != nil {
		_ = l.Close()
	}
}

// loaderText is the dynamic loader's own message (dlerror) in err.
func loaderText(err error) string {
	var de *dl.Error
	if errors.As(err, &de) {
		return de.Msg
	}
	return err.Error()
}

func (systemLoader) bind(fns []uintptr) {
	for i, fn := range fns {
		C.gds_bind(C.int(i), C.uintptr_t(fn))
	}
}

// Trampolines: one per C signature (shim.h), with the symbol index first.

func tP(s sym, a unsafe.Pointer) int32 { return int32(C.gds_i_p(C.int(s), a)) }

func tOut(s sym, out *unsafe.Pointer) int32 { return int32(C.gds_i_o(C.int(s), out)) }

func tPOut(s sym, a unsafe.Pointer, out *unsafe.Pointer) int32 {
	return int32(C.gds_i_p_o(C.int(s), a, out))
}

func tPAddrOut(s sym, a unsafe.Pointer, out *uintptr) int32 {
	var v C.uintptr_t
	rc := int32(C.gds_i_p_uptro(C.int(s), a, &v))
	*out = uintptr(v)
	return rc
}

func tPP(s sym, a, b unsafe.Pointer) int32 { return int32(C.gds_i_p_p(C.int(s), a, b)) }

func tPAddr(s sym, a unsafe.Pointer, v uintptr) int32 {
	return int32(C.gds_i_p_uptr(C.int(s), a, C.uintptr_t(v)))
}

func tPPOut(s sym, a, b unsafe.Pointer, out *unsafe.Pointer) int32 {
	return int32(C.gds_i_p_p_o(C.int(s), a, b, out))
}

func tPPU64(s sym, a, b unsafe.Pointer, v uint64) int32 {
	return int32(C.gds_i_p_p_u64(C.int(s), a, b, C.uint64_t(v)))
}

func tPInt(s sym, a unsafe.Pointer, v int32) int32 {
	return int32(C.gds_i_p_int(C.int(s), a, C.int(v)))
}

func tPU8(s sym, a unsafe.Pointer, v uint8) int32 {
	return int32(C.gds_i_p_u8(C.int(s), a, C.uint8_t(v)))
}

func tPU16(s sym, a unsafe.Pointer, v uint16) int32 {
	return int32(C.gds_i_p_u16(C.int(s), a, C.uint16_t(v)))
}

func tPU32(s sym, a unsafe.Pointer, v uint32) int32 {
	return int32(C.gds_i_p_u32(C.int(s), a, C.uint32_t(v)))
}

func tPU32Out(s sym, a unsafe.Pointer, out *uint32) int32 {
	var v C.uint32_t
	rc := int32(C.gds_i_p_u32o(C.int(s), a, &v))
	*out = uint32(v)
	return rc
}

func tPSizeOut(s sym, a unsafe.Pointer, out *uint64) int32 {
	var v C.size_t
	rc := int32(C.gds_i_p_sizeo(C.int(s), a, &v))
	*out = uint64(v)
	return rc
}

func tEnumOf(s sym, a unsafe.Pointer) int32 { return int32(C.gds_int_p(C.int(s), a)) }

func tU32Of(s sym, a unsafe.Pointer) uint32 { return uint32(C.gds_u32_p(C.int(s), a)) }

func tAddrOf(s sym, a unsafe.Pointer) uintptr { return uintptr(C.gds_ptr_p(C.int(s), a)) }

func tGPUCreate(s sym, busID string, out *unsafe.Pointer) int32 {
	cbus := C.CString(busID)
	defer C.free(unsafe.Pointer(cbus))
	return int32(C.gds_gpu_create(C.int(s), cbus, out))
}

func tGPUMemAlloc(s sym, gpu unsafe.Pointer, size, align uint64, memType int32) (gpuPtr, cpuPtr uintptr, rc int32) {
	var g, c C.uintptr_t
	rc = int32(C.gds_gpu_mem_alloc(C.int(s), gpu, C.size_t(size), C.size_t(align), C.int(memType), &g, &c))
	return uintptr(g), uintptr(c), rc
}

func tGPUMemFree(s sym, gpu unsafe.Pointer, ptr uintptr) int32 {
	return int32(C.gds_gpu_mem_free(C.int(s), gpu, C.uintptr_t(ptr)))
}

func tGPUDmabufFD(s sym, gpu unsafe.Pointer, ptr uintptr, size uint64) (int, int32) {
	var fd C.int
	rc := int32(C.gds_gpu_dmabuf_fd(C.int(s), gpu, C.uintptr_t(ptr), C.size_t(size), &fd))
	return int(fd), rc
}

func tUMEMCreate(s sym, dev unsafe.Pointer, addr uintptr, size uint64, access uint32, out *unsafe.Pointer) int32 {
	return int32(C.gds_umem_create(C.int(s), dev, C.uintptr_t(addr), C.size_t(size), C.uint32_t(access), out))
}

func tUMEMGPUCreate(s sym, gpu, dev unsafe.Pointer, addr uintptr, size uint64, access uint32, out *unsafe.Pointer) int32 {
	return int32(C.gds_umem_gpu_create(C.int(s), gpu, dev, C.uintptr_t(addr), C.size_t(size), C.uint32_t(access), out))
}

func tUARCreate(s sym, dev unsafe.Pointer, allocType int32, out *unsafe.Pointer) int32 {
	return int32(C.gds_uar_create(C.int(s), dev, C.int(allocType), out))
}

func tQPModify(s sym, qp, attr unsafe.Pointer, mask int32) int32 {
	return int32(C.gds_qp_modify(C.int(s), qp, attr, C.int(mask)))
}

func tQPQuery(s sym, qp, attr, initAttr unsafe.Pointer) (mask int32, rc int32) {
	var m C.int
	rc = int32(C.gds_qp_query(C.int(s), qp, attr, initAttr, &m))
	return int32(m), rc
}

func tCQGetWQ(s sym, cq unsafe.Pointer) (buf uintptr, n uint32, entrySize uint8, rc int32) {
	var b C.uintptr_t
	var cn C.uint32_t
	var es C.uint8_t
	rc = int32(C.gds_cq_get_wq(C.int(s), cq, &b, &cn, &es))
	return uintptr(b), uint32(cn), uint8(es), rc
}

func tCQGetDBRAddr(s sym, cq unsafe.Pointer) (uarDBReg, ciDBR, armDBR uintptr, rc int32) {
	var u, c, a C.uintptr_t
	rc = int32(C.gds_cq_get_dbr_addr(C.int(s), cq, &u, &c, &a))
	return uintptr(u), uintptr(c), uintptr(a), rc
}

func tQPGetWQ(s sym, qp unsafe.Pointer) (w QPWorkQueues, rc int32) {
	var sq, rq C.uintptr_t
	var sqn, rqn, rwqe C.uint32_t
	rc = int32(C.gds_qp_get_wq(C.int(s), qp, &sq, &sqn, &rq, &rqn, &rwqe))
	return QPWorkQueues{
		SQ: uintptr(sq), SQEntries: uint32(sqn),
		RQ: uintptr(rq), RQEntries: uint32(rqn),
		RWQESize: uint32(rwqe),
	}, rc
}

func tContextImport(s sym, ibvContext unsafe.Pointer, flags uint32, out *unsafe.Pointer) int32 {
	return int32(C.gds_context_import(C.int(s), ibvContext, C.uint32_t(flags), out))
}

func tAHSetGID(s sym, ah unsafe.Pointer, gid *[16]byte) int32 {
	return int32(C.gds_ah_set_gid(C.int(s), ah, (*C.uint8_t)(unsafe.Pointer(&gid[0]))))
}

func pdContext(pd unsafe.Pointer) unsafe.Pointer { return C.gds_pd_context(pd) }
