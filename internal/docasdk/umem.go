package docasdk

import "unsafe"

// UMEMCreate registers size bytes of host memory at addr with the device
// for the access flags (IBV_ACCESS_* bits): doca_umem_create.
func UMEMCreate(dev Dev, addr uintptr, size uint64, access uint32) (UMEM, error) {
	p, err := create(symUMEMCreate, func(out *unsafe.Pointer) int32 {
		return tUMEMCreate(symUMEMCreate, dev.dev, addr, size, access, out)
	}, arg{"dev", dev.dev})
	return UMEM{p}, err
}

// UMEMGPUCreate registers size bytes of GPU memory at addr, allocated
// through gpu, with the device: doca_umem_gpu_create. The SDK finds the
// dmabuf itself from its GPU handle; no fd is passed. The reference falls
// back to the open implementation when this fails; return the error instead.
func UMEMGPUCreate(gpu GPU, dev Dev, addr uintptr, size uint64, access uint32) (UMEM, error) {
	p, err := create(symUMEMGPUCreate, func(out *unsafe.Pointer) int32 {
		return tUMEMGPUCreate(symUMEMGPUCreate, gpu.gpu, dev.dev, addr, size, access, out)
	}, arg{"gpu", gpu.gpu}, arg{"dev", dev.dev})
	return UMEM{p}, err
}

// Destroy deregisters the memory (doca_umem_destroy) and clears u.
func (u *UMEM) Destroy() error {
	if u == nil {
		return refused(symUMEMDestroy, CodeInvalidValue, ErrNilHandle)
	}
	return destroy(symUMEMDestroy, "umem", &u.umem)
}

// ID returns the UMEM id the device knows it by: doca_umem_get_id.
func (u UMEM) ID() (uint32, error) { return getU32(symUMEMGetID, arg{"umem", u.umem}) }

// Size returns the registered size: doca_umem_get_size.
func (u UMEM) Size() (uint64, error) {
	s := symUMEMGetSize
	if err := begin(s, arg{"umem", u.umem}); err != nil {
		return 0, err
	}
	var v uint64
	if err := status(s, tPSizeOut(s, u.umem, &v)); err != nil {
		return 0, err
	}
	return v, nil
}

// Address returns the registered address: doca_umem_get_address.
func (u UMEM) Address() (uintptr, error) { return getAddr(symUMEMGetAddress, arg{"umem", u.umem}) }
