package devhost

// #include "devhost.h"
import "C"

import "unsafe"

// Store is one doorbell (Bytes 8), doorbell-record (4) or proxy-mailbox (8) store.
type Store struct {
	Addr  uintptr
	Value uint64
	Bytes int
}

// EnableStoreLog turns the process-global store log on or off.
func EnableStoreLog(on bool) {
	C.devhost_log_enable(cBool(on))
}

// ResetStoreLog clears the log.
func ResetStoreLog() { C.devhost_log_reset() }

// StoreLog returns the stores recorded since the last reset (at most 65536) and the total count.
func StoreLog() ([]Store, int) {
	buf := make([]C.struct_devhost_store, 1<<16)
	n := int(C.devhost_log_read((*C.struct_devhost_store)(unsafe.Pointer(&buf[0])), C.size_t(len(buf))))
	c := n
	if c > len(buf) {
		c = len(buf)
	}
	out := make([]Store, c)
	for i := 0; i < c; i++ {
		out[i] = Store{Addr: uintptr(buf[i].addr), Value: uint64(buf[i].value), Bytes: int(buf[i].bytes)}
	}
	return out, n
}
