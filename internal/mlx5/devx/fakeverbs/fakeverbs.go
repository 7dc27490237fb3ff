//go:build cgo

package fakeverbs

/*
#include <stdlib.h>
#include "fake.h"
*/
import "C"

import (
	"syscall"
	"unsafe"
)

// Fn returns the fake of the rdma-core entry point called name, or nil.
func Fn(name string) unsafe.Pointer {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.fake_fn(cs)
}

// Reset clears the record and the failure injections.
func Reset() { C.fake_reset() }

// FailNext makes the next faked call fail with errno e.
func FailNext(e syscall.Errno) { FailCall("", e) }

// FailCall makes the next call of the entry point called name fail with
// errno e.
func FailCall(name string, e syscall.Errno) {
	for i := range C.fake.fail_fn {
		C.fake.fail_fn[i] = 0
	}
	for i := 0; i < len(name) && i < len(C.fake.fail_fn)-1; i++ {
		C.fake.fail_fn[i] = C.char(name[i])
	}
	C.fake.fail_errno = C.int(e)
}

// FirmwareFailNext makes the next DevX command fail in "firmware": status and
// syndrome in its output, EREMOTEIO from the call.
func FirmwareFailNext(status uint8, syndrome uint32) {
	C.fake.fail_status = C.uint8_t(status)
	C.fake.fail_syndrome = C.uint32_t(syndrome)
}

// SetExtended makes Open return a context with the provider's extended
// query_port op (true) or a legacy one (false).
func SetExtended(on bool) {
	C.fake.extended = 0
	if on {
		C.fake.extended = 1
	}
}

// UMEMIn is the mlx5dv_devx_umem_in the umem_reg_ex fake received.
type UMEMIn struct {
	Addr       uintptr
	Size       uint64
	Access     uint32
	PgszBitmap uint64
	CompMask   uint64
	DmabufFD   int
}

// Record is what the fakes received and how often they were called.
type Record struct {
	OpenFlags, UARFlags                  uint32
	OpenCompMask, ObjType                uint64
	Port                                 uint8
	PortAttrSize                         uint64 // 0: the compat ibv_query_port symbol was used
	GIDPort, GIDIndex, GIDFlags          uint32
	GIDEntrySize                         uint64
	MRPD                                 uintptr
	MRAddr                               uintptr
	MRLength, MRIOVA                     uint64
	MRAccess                             uint32
	DmabufOffset, DmabufLength           uint64
	DmabufIOVA                           uint64
	DmabufFD, DmabufAccess               int
	UMEMAddr                             uintptr
	UMEMSize                             uint64
	UMEMAccess                           uint32
	UMEMIn                               UMEMIn
	InLen, OutLen                        uint64
	In                                   [16]byte
	EQNVector                            uint32
	SubObj                               uintptr
	SubEventsSize, SubFirstEvent         uint16
	SubCookie                            uint64
	EventChannelFlags                    uint32
	Channels, ChannelFrees, Subs         int
	ImportFD                             int
	ImportPDHandle                       uint32
	Imports, PDImports, PDUnimports      int
	Opens, Closes, PDs, PDFrees          int
	MRs, MRFrees, UMEMs, UMEMFrees       int
	UARs, UARFrees, Objs, ObjFrees, Cmds int
}

// Get returns a copy of the record.
func Get() Record {
	f := &C.fake
	r := Record{
		OpenFlags:    uint32(f.open_flags),
		OpenCompMask: uint64(f.open_comp_mask),
		UARFlags:     uint32(f.uar_flags),
		ObjType:      uint64(f.obj_type),
		Port:         uint8(f.port),
		PortAttrSize: uint64(f.port_attr_size),
		GIDPort:      uint32(f.gid_port),
		GIDIndex:     uint32(f.gid_index),
		GIDFlags:     uint32(f.gid_flags),
		GIDEntrySize: uint64(f.gid_entry_size),
		MRPD:         uintptr(f.mr_pd),
		MRAddr:       uintptr(f.mr_addr),
		MRLength:     uint64(f.mr_length),
		MRIOVA:       uint64(f.mr_iova),
		MRAccess:     uint32(f.mr_access),
		DmabufOffset: uint64(f.dmabuf_offset),
		DmabufLength: uint64(f.dmabuf_length),
		DmabufIOVA:   uint64(f.dmabuf_iova),
		DmabufFD:     int(f.dmabuf_fd),
		DmabufAccess: int(f.dmabuf_access),
		UMEMAddr:     uintptr(f.umem_addr),
		UMEMSize:     uint64(f.umem_size),
		UMEMAccess:   uint32(f.umem_access),
		UMEMIn: UMEMIn{
			Addr:       uintptr(f.umem_in.addr),
			Size:       uint64(f.umem_in.size),
			Access:     uint32(f.umem_in.access),
			PgszBitmap: uint64(f.umem_in.pgsz_bitmap),
			CompMask:   uint64(f.umem_in.comp_mask),
			DmabufFD:   int(f.umem_in.dmabuf_fd),
		},
		InLen:          uint64(f.inlen),
		OutLen:         uint64(f.outlen),
		EQNVector:      uint32(f.eqn_vector),
		ImportFD:       int(f.import_fd),
		ImportPDHandle: uint32(f.import_pd_handle),
		Imports:        int(f.imports),
		PDImports:      int(f.pd_imports),
		PDUnimports:    int(f.pd_unimports),
		Opens:          int(f.opens),
		Closes:         int(f.closes),
		PDs:            int(f.pds),
		PDFrees:        int(f.pd_frees),
		MRs:            int(f.mrs),
		MRFrees:        int(f.mr_frees),
		UMEMs:          int(f.umems),
		UMEMFrees:      int(f.umem_frees),
		UARs:           int(f.uars),
		UARFrees:       int(f.uar_frees),
		Objs:           int(f.objs),
		ObjFrees:       int(f.obj_frees),
		Cmds:           int(f.cmds),

		SubObj:            uintptr(f.sub_obj),
		SubEventsSize:     uint16(f.sub_events_sz),
		SubFirstEvent:     uint16(f.sub_first_event),
		SubCookie:         uint64(f.sub_cookie),
		EventChannelFlags: uint32(f.ev_channel_flags),
		Channels:          int(f.channels),
		ChannelFrees:      int(f.channel_frees),
		Subs:              int(f.subs),
	}
	for i := range r.In {
		r.In[i] = byte(f.in[i])
	}
	return r
}

// PushEvent queues one event (its cookie and 64-byte EQE) on the fake
// event channel, whose fd becomes readable.
func PushEvent(cookie uint64, eqe [64]byte) {
	C.fake_push_event(C.uint64_t(cookie), (*C.uint8_t)(unsafe.Pointer(&eqe[0])))
}

// FailEventRead makes the next read of the fake event channel fail with e.
func FailEventRead(e syscall.Errno) { C.fake.ev_read_errno = C.int(e) }
