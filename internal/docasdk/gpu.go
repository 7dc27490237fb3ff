package docasdk

import "unsafe"

// GPUCreate opens the GPU with PCI bus id busID ("0000:01:00.0") through the
// SDK: doca_gpu_create.
func GPUCreate(busID string) (GPU, error) {
	p, err := create(symGPUCreate, func(out *unsafe.Pointer) int32 {
		return tGPUCreate(symGPUCreate, busID, out)
	})
	return GPU{p}, err
}

// Destroy releases the GPU handle (doca_gpu_destroy) and clears g.
func (g *GPU) Destroy() error {
	if g == nil {
		return refused(symGPUDestroy, CodeInvalidValue, ErrNilHandle)
	}
	return destroy(symGPUDestroy, "gpu", &g.gpu)
}

// MemAlloc allocates size bytes aligned to align of memory type memType
// (enum doca_gpu_mem_type) and returns its GPU address and, for the types
// the CPU can reach, its CPU address (else 0): doca_gpu_mem_alloc.
func (g GPU) MemAlloc(size, align uint64, memType uint32) (gpuPtr, cpuPtr uintptr, err error) {
	if err := begin(symGPUMemAlloc, arg{"gpu", g.gpu}); err != nil {
		return 0, 0, err
	}
	gp, cp, rc := tGPUMemAlloc(symGPUMemAlloc, g.gpu, size, align, int32(memType))
	if err := status(symGPUMemAlloc, rc); err != nil {
		return 0, 0, err
	}
	return gp, cp, nil
}

// MemFree frees memory that MemAlloc returned, by its GPU address:
// doca_gpu_mem_free.
func (g GPU) MemFree(gpuPtr uintptr) error {
	if err := begin(symGPUMemFree, arg{"gpu", g.gpu}); err != nil {
		return err
	}
	return status(symGPUMemFree, tGPUMemFree(symGPUMemFree, g.gpu, gpuPtr))
}

// DmabufFD exports size bytes of GPU memory at gpuPtr as a dmabuf and
// returns its file descriptor, which the caller closes: the SDK's
// doca_gpu_dmabuf_fd (doca_gpu_get_dmabuf_fd in the 3.0 open API).
func (g GPU) DmabufFD(gpuPtr uintptr, size uint64) (int, error) {
	if err := begin(symGPUDmabufFD, arg{"gpu", g.gpu}); err != nil {
		return -1, err
	}
	fd, rc := tGPUDmabufFD(symGPUDmabufFD, g.gpu, gpuPtr, size)
	if err := status(symGPUDmabufFD, rc); err != nil {
		return -1, err
	}
	return fd, nil
}
