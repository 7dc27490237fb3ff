package gpunetio

import (
	"errors"
	"fmt"

	"github.com/gdaki/gpunetio/verbs"
)

const uarPage = 4096

func uarFlags(mmio bool) uint32 {
	f := regPortable | regDeviceMap
	if mmio {
		f |= regIOMemory
	}
	return f
}

// CanGPURegisterUAR reports whether this GPU can map the UAR's doorbell page
// (doca_gpu_verbs_can_gpu_register_uar): it tries the host registration
// once and undoes it. A GPU can only store to a real NIC's doorbell when
// PCIe peer-to-peer to the NIC BAR works; an emulated UAR is host memory.
// The answer is cached per GPU (separately for MMIO and host-memory UARs);
// DOCA caches one answer per process.
func (g *GPU) CanGPURegisterUAR(u *verbs.UAR) (bool, error) {
	const op = "doca_gpu_verbs_can_gpu_register_uar"
	if err := g.use(op); err != nil {
		return false, err
	}
	if u == nil {
		return false, newErr(op, ErrInvalidValue, "nil UAR")
	}
	// The probe maps the page: hold the UAR meanwhile (a closed UAR, whose
	// page is gone, is refused).
	h, err := u.Hold("gpunetio: CanGPURegisterUAR probe on " + g.b.describe())
	if err != nil {
		return false, wrapErr(op, codeOf(err), err, "UAR %d", u.ID())
	}
	defer h.Release()
	mmio := u.IsMMIO()
	page := u.BaseAddr() &^ (uarPage - 1)
	g.mu.Lock()
	defer g.mu.Unlock()
	if ok, done := g.canReg[mmio]; done {
		return ok, nil
	}
	if _, exported := g.uars[page]; exported {
		g.canReg[mmio] = true
		return true, nil
	}
	err = g.b.hostRegister(page, uarPage, uarFlags(mmio))
	ok := err == nil || errors.Is(err, errAlreadyRegistered)
	if err == nil {
		if uerr := g.b.hostUnregister(page); uerr != nil {
			return false, wrapErr(op, ErrDriver, uerr, "undo the probe registration of %#x", page)
		}
	} else {
		logf(LogInfo, "%s: %s cannot map UAR page %#x: %v", op, g.b.describe(), page, err)
	}
	g.canReg[mmio] = ok
	return ok, nil
}

// ExportUAR maps the doorbell register at host address db, inside UAR u,
// into the GPU and returns its GPU address (doca_gpu_verbs_export_uar). The
// 4 KiB page holding it is registered once (portable, device-mapped, plus
// I/O memory for a real NIC's MMIO page) and reference-counted by host page.
// Each export holds u (verbs.UAR.Hold) until its UnexportUAR: closing the
// UAR while a GPU may store to its page fails with ErrInUse, and a closed
// UAR is refused (ErrBadState).
func (g *GPU) ExportUAR(u *verbs.UAR, db uintptr) (DevPtr, error) {
	const op = "doca_gpu_verbs_export_uar"
	if err := g.use(op); err != nil {
		return 0, err
	}
	if u == nil || db == 0 {
		return 0, newErr(op, ErrInvalidValue, "nil UAR or doorbell address")
	}
	h, err := u.Hold(fmt.Sprintf("gpunetio: UAR page exported to %s", g.b.describe()))
	if err != nil {
		return 0, wrapErr(op, codeOf(err), err, "UAR %d", u.ID())
	}
	page := db &^ (uarPage - 1)
	if base := u.BaseAddr(); page != base&^(uarPage-1) {
		h.Release()
		return 0, newErr(op, ErrInvalidValue, "doorbell %#x is not in UAR page %#x", db, base)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.uars[page]
	if r == nil {
		if err := g.b.hostRegister(page, uarPage, uarFlags(u.IsMMIO())); err != nil {
			h.Release()
			return 0, wrapErr(op, ErrDriver, err, "register UAR page %#x (MMIO %v)", page, u.IsMMIO())
		}
		d, err := g.b.hostDevicePointer(page)
		if err != nil {
			g.b.hostUnregister(page)
			h.Release()
			return 0, wrapErr(op, ErrDriver, err, "device pointer of UAR page %#x", page)
		}
		r = &uarRef{dev: d}
		g.uars[page] = r
		g.uarDev[DevPtr(d)] = page
	}
	r.refs++
	r.holds = append(r.holds, h)
	return DevPtr(r.dev + (db - page)), nil
}

// UnexportUAR drops one reference taken by ExportUAR; p is the address
// ExportUAR returned (doca_gpu_verbs_unexport_uar). The page is unregistered
// with the last reference.
func (g *GPU) UnexportUAR(p DevPtr) error {
	const op = "doca_gpu_verbs_unexport_uar"
	if err := g.made(op); err != nil {
		return err
	}
	if p == 0 {
		return newErr(op, ErrInvalidValue, "address 0")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	devPage := p &^ (uarPage - 1)
	page, ok := g.uarDev[devPage]
	if !ok {
		return newErr(op, ErrInvalidValue, "%#x is not an exported UAR address", p)
	}
	r := g.uars[page]
	if r.refs == 1 {
		if err := g.b.hostUnregister(page); err != nil {
			return wrapErr(op, ErrDriver, err, "unregister UAR page %#x", page)
		}
		delete(g.uars, page)
		delete(g.uarDev, devPage)
	}
	r.refs--
	h := r.holds[len(r.holds)-1]
	r.holds = r.holds[:len(r.holds)-1]
	h.Release()
	return nil
}
