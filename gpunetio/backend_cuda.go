package gpunetio

import (
	"errors"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/emugpu"
	"github.com/gdaki/gpunetio/internal/gdrcopy"
)

// cudaBackend runs every call on the GPU's retained primary context; each
// Context method makes the context current for its own driver call.
type cudaBackend struct {
	dev       cuda.Device
	ctx       *cuda.Context
	busID     string
	dmabuf    bool
	uninstall func()
}

func newCUDABackend(busID string) (*cudaBackend, error) {
	dev, err := cuda.DeviceByPCIBusID(busID)
	if err != nil {
		return nil, err
	}
	ctx, err := dev.PrimaryContext()
	if err != nil {
		return nil, err
	}
	dmabuf, err := dev.DMABufSupported()
	if err != nil {
		if rerr := ctx.Release(); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		return nil, err
	}
	norm, err := cuda.NormalizePCIBusID(busID)
	if err != nil {
		norm = busID
	}
	return &cudaBackend{dev: dev, ctx: ctx, busID: norm, dmabuf: dmabuf, uninstall: emugpu.Install(ctx)}, nil
}

func (b *cudaBackend) describe() string { return "CUDA device " + b.busID }

func (b *cudaBackend) cudaContext() (*cuda.Context, error) { return b.dev.PrimaryContext() }

func (b *cudaBackend) allocDevice(size uintptr) (uintptr, error) {
	p, err := b.ctx.MemAlloc(size)
	return uintptr(p), err
}

func (b *cudaBackend) freeDevice(p uintptr) error { return b.ctx.MemFree(DevPtr(p)) }

func (b *cudaBackend) setSyncMemops(p uintptr) error {
	return b.ctx.PointerSetSyncMemops(cuda.DevPtr(p), true)
}

func (b *cudaBackend) hostRegister(p, size uintptr, flags uint32) error {
	err := b.ctx.MemHostRegister(hostPtr(p), size, cuda.HostRegisterFlags(flags))
	if errors.Is(err, cuda.ErrorHostMemoryAlreadyRegistered) {
		return errors.Join(errAlreadyRegistered, err)
	}
	return err
}

func (b *cudaBackend) hostUnregister(p uintptr) error { return b.ctx.MemHostUnregister(hostPtr(p)) }

func (b *cudaBackend) hostDevicePointer(p uintptr) (uintptr, error) {
	d, err := b.ctx.HostGetDevicePointer(hostPtr(p))
	return uintptr(d), err
}

func (b *cudaBackend) memcpyHtoD(dst uintptr, src []byte) error {
	return b.ctx.MemcpyHtoD(cuda.DevPtr(dst), src)
}

func (b *cudaBackend) memcpyDtoH(dst []byte, src uintptr) error {
	return b.ctx.MemcpyDtoH(dst, cuda.DevPtr(src))
}

func (b *cudaBackend) memsetD8(dst uintptr, v byte, n uintptr) error {
	return b.ctx.MemsetD8(cuda.DevPtr(dst), v, n)
}

func (b *cudaBackend) synchronize() error { return b.ctx.Synchronize() }

func (b *cudaBackend) dmabufSupported() bool { return b.dmabuf }

func (b *cudaBackend) dmabufFD(p, size uintptr) (int, error) {
	return b.ctx.MemGetHandleForAddressRange(cuda.DevPtr(p), size)
}

func (b *cudaBackend) gdrAvailable() error { return gdrcopy.Open() }

func (b *cudaBackend) rdmaWritesOrdering() (int, error) {
	return b.dev.Attribute(cuda.AttrGPUDirectRDMAWritesOrdering)
}

func (b *cudaBackend) gdrMap(dev, size uintptr) (uintptr, func() error, error) {
	m, err := gdrcopy.Pin(dev, size)
	if err != nil {
		return 0, nil, err
	}
	return m.Addr(), m.Close, nil
}

func (b *cudaBackend) release() error {
	if err := b.ctx.Release(); err != nil {
		return err
	}
	b.uninstall()
	return nil
}
