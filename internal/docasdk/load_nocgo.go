//go:build !cgo

package docasdk

import "unsafe"

// Without cgo nothing can be loaded: the decision is open mode (with the
// reference's lines when DOCA_SDK_LIB_PATH asks for the SDK), and every SDK
// call is refused with ErrNotActive before it reaches a trampoline. The
// trampolines exist so that the package builds; they report "not bound".

const noCgo = "this binary was built without cgo (CGO_ENABLED=0) and cannot load shared libraries"

type systemLoader struct{}

func (systemLoader) open(string, bool) (uintptr, string)   { return 0, noCgo }
func (systemLoader) sym(uintptr, string) (uintptr, string) { return 0, noCgo }
func (systemLoader) close(uintptr)                         {}
func (systemLoader) bind([]uintptr)                        {}

func tP(sym, unsafe.Pointer) int32                                      { return notBound }
func tOut(sym, *unsafe.Pointer) int32                                   { return notBound }
func tPOut(sym, unsafe.Pointer, *unsafe.Pointer) int32                  { return notBound }
func tPAddrOut(sym, unsafe.Pointer, *uintptr) int32                     { return notBound }
func tPP(sym, unsafe.Pointer, unsafe.Pointer) int32                     { return notBound }
func tPAddr(sym, unsafe.Pointer, uintptr) int32                         { return notBound }
func tPPOut(sym, unsafe.Pointer, unsafe.Pointer, *unsafe.Pointer) int32 { return notBound }
func tPPU64(sym, unsafe.Pointer, unsafe.Pointer, uint64) int32          { return notBound }
func tPInt(sym, unsafe.Pointer, int32) int32                            { return notBound }
func tPU8(sym, unsafe.Pointer, uint8) int32                             { return notBound }
func tPU16(sym, unsafe.Pointer, uint16) int32                           { return notBound }
func tPU32(sym, unsafe.Pointer, uint32) int32                           { return notBound }
func tPU32Out(sym, unsafe.Pointer, *uint32) int32                       { return notBound }
func tPSizeOut(sym, unsafe.Pointer, *uint64) int32                      { return notBound }
func tEnumOf(sym, unsafe.Pointer) int32                                 { return 0 }
func tU32Of(sym, unsafe.Pointer) uint32                                 { return 0 }
func tAddrOf(sym, unsafe.Pointer) uintptr                               { return 0 }
func tGPUCreate(sym, string, *unsafe.Pointer) int32                     { return notBound }
func tGPUMemAlloc(sym, unsafe.Pointer, uint64, uint64, int32) (uintptr, uintptr, int32) {
	return 0, 0, notBound
}
func tGPUMemFree(sym, unsafe.Pointer, uintptr) int32 { return notBound }
func tGPUDmabufFD(sym, unsafe.Pointer, uintptr, uint64) (int, int32) {
	return -1, notBound
}
func tUMEMCreate(sym, unsafe.Pointer, uintptr, uint64, uint32, *unsafe.Pointer) int32 {
	return notBound
}
func tUMEMGPUCreate(sym, unsafe.Pointer, unsafe.Pointer, uintptr, uint64, uint32, *unsafe.Pointer) int32 {
	return notBound
}
func tUARCreate(sym, unsafe.Pointer, int32, *unsafe.Pointer) int32 { return notBound }
func tQPModify(sym, unsafe.Pointer, unsafe.Pointer, int32) int32   { return notBound }
func tQPQuery(sym, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer) (int32, int32) {
	return 0, notBound
}
func tCQGetWQ(sym, unsafe.Pointer) (uintptr, uint32, uint8, int32) { return 0, 0, 0, notBound }
func tCQGetDBRAddr(sym, unsafe.Pointer) (uintptr, uintptr, uintptr, int32) {
	return 0, 0, 0, notBound
}
func tQPGetWQ(sym, unsafe.Pointer) (QPWorkQueues, int32)                { return QPWorkQueues{}, notBound }
func tContextImport(sym, unsafe.Pointer, uint32, *unsafe.Pointer) int32 { return notBound }
func tAHSetGID(sym, unsafe.Pointer, *[16]byte) int32                    { return notBound }
func pdContext(unsafe.Pointer) unsafe.Pointer                           { return nil }
