package docasdk

import "unsafe"

// UARCreate allocates a UAR of allocation type allocType (enum
// doca_verbs_uar_allocation_type, passed through unchanged): doca_uar_create.
func UARCreate(dev Dev, allocType uint32) (UAR, error) {
	p, err := create(symUARCreate, func(out *unsafe.Pointer) int32 {
		return tUARCreate(symUARCreate, dev.dev, int32(allocType), out)
	}, arg{"dev", dev.dev})
	return UAR{p}, err
}

// Destroy frees the UAR (doca_uar_destroy) and clears u.
func (u *UAR) Destroy() error {
	if u == nil {
		return refused(symUARDestroy, CodeInvalidValue, ErrNilHandle)
	}
	return destroy(symUARDestroy, "uar", &u.uar)
}

// ID returns the UAR page index: doca_uar_id_get.
func (u UAR) ID() (uint32, error) { return getU32(symUARIDGet, arg{"uar", u.uar}) }

// RegAddr returns the address of the doorbell register: doca_uar_reg_addr_get.
// The SDK has no getter for the doorbell-record-less address; the reference
// returns this one in its place, which is wrong (callers should refuse that
// getter in SDK mode).
func (u UAR) RegAddr() (uintptr, error) { return getAddr(symUARRegAddrGet, arg{"uar", u.uar}) }
