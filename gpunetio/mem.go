package gpunetio

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"syscall"

	"github.com/gdaki/gpunetio/internal/gdrcopy"
	"github.com/gdaki/gpunetio/verbs"
)

// gpuPage is the GPU page size GDRCopy pins: GPU_CPU memory is aligned to it.
const gpuPage = 64 << 10

// Mem is one allocation of MemAlloc. Dev is the address GPU code uses; Host
// the CPU address (0 for MemGPU: device memory the CPU cannot reach; the
// BAR1 mapping for MemGPUCPU, to be used with aligned word accesses only).
// HostBytes gives the CPU side as a []byte.
type Mem struct {
	Dev  DevPtr
	Host uintptr
	Size uintptr
	Type MemType

	g       *GPU
	sdk     bool // allocated by the DOCA SDK (SDK mode)
	mu      sync.Mutex
	freed   bool
	owner   string       // the object this memory belongs to, if any
	mrs     []*verbs.MR  // regions made by RegMR (Free refuses while one is open)
	devBase uintptr      // MemGPU/MemGPUCPU: what cuMemAlloc returned
	host    []byte       // MemCPUGPU: the whole mapping
	hostReg uintptr      // MemCPUGPU: the registered (aligned) address
	unmap   func() error // MemGPUCPU: GDRCopy unmap+unpin
}

// MemAlloc allocates size bytes of the given type aligned to alignment (0:
// the host page size; otherwise a power of two), doca_gpu_mem_alloc:
//
//   - MemGPU: device memory with SYNC_MEMOPS set, not initialised.
//   - MemGPUCPU: device memory aligned to 64 KiB and mapped for the CPU
//     through GDRCopy, not initialised. Without GDRCopy it fails with
//     ErrNotSupported (DOCA silently hands out host memory instead).
//   - MemCPUGPU: zeroed host memory (mmap), registered with CUDA
//     (portable, device-mapped); Dev is its GPU address.
//
// In SDK mode the DOCA SDK allocates every type (doca_gpu_mem_alloc
// through the SDK) and frees it; an SDK failure is ErrUnexpected with a
// *verbs.SDKError.
func (g *GPU) MemAlloc(size, alignment uintptr, t MemType) (*Mem, error) {
	const op = "doca_gpu_mem_alloc"
	if err := g.use(op); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, newErr(op, ErrInvalidValue, "size 0")
	}
	if alignment == 0 {
		alignment = hostPage
	}
	if !isPow2(alignment) {
		return nil, newErr(op, ErrInvalidValue, "alignment %d is not a power of two", alignment)
	}
	// Every size computed below (the size rounded up to pages or GPU pages,
	// plus the alignment slack) must fit: a wrapped sum would allocate a
	// few bytes for a Mem claiming size.
	if need := maxAllocSlack(alignment); size > maxAlloc-need {
		return nil, newErr(op, ErrInvalidValue, "size %d (0x%x) with alignment %d exceeds the largest allocation, 0x%x bytes", size, size, alignment, maxAlloc-need)
	}
	m := &Mem{Size: size, Type: t, g: g}
	if !g.sdk.IsZero() {
		if t != MemGPU && t != MemGPUCPU && t != MemCPUGPU {
			return nil, newErr(op, ErrInvalidValue, "unknown memory type %v", t)
		}
		dev, host, err := g.sdk.MemAlloc(uint64(size), uint64(alignment), uint32(t))
		if err != nil {
			return nil, sdkErr(op, false, err, "%v %d bytes", t, size)
		}
		m.Dev, m.Host, m.sdk = DevPtr(dev), host, true
		if t == MemGPU {
			m.Host = 0
		}
		g.mu.Lock()
		g.allocs[m.Dev] = m
		g.mu.Unlock()
		track(m, "Mem", fmt.Sprintf("%v %d bytes at %#x on %s (SDK)", t, size, m.Dev, g.b.describe()))
		return m, nil
	}
	switch t {
	case MemGPU:
		if err := g.allocDevice(op, m, size, alignment); err != nil {
			return nil, err
		}
	case MemGPUCPU:
		if err := g.b.gdrAvailable(); err != nil {
			return nil, wrapErr(op, ErrNotSupported, err, "GPU_CPU memory needs GDRCopy (libgdrapi.so.2 and the gdrdrv module)")
		}
		if alignment < gpuPage {
			alignment = gpuPage
		}
		if err := g.allocDevice(op, m, size, alignment); err != nil {
			return nil, err
		}
		cpu, unmap, err := g.b.gdrMap(uintptr(m.Dev), alignUp(size, gpuPage))
		if err != nil {
			g.b.freeDevice(m.devBase)
			code := ErrDriver
			if errors.Is(err, gdrcopy.ErrUnavailable) {
				code = ErrNotSupported
			}
			return nil, wrapErr(op, code, err, "GDRCopy map of %d bytes", size)
		}
		m.Host, m.unmap = cpu, unmap
	case MemCPUGPU:
		n := alignUp(size, hostPage)
		extra := uintptr(0)
		if alignment > hostPage {
			extra = alignment
		}
		h, err := mmapHost(n + extra)
		if err != nil {
			return nil, wrapErr(op, ErrNoMemory, err, "mmap %d bytes", n+extra)
		}
		p := alignUp(uintptr(addrOf(h)), alignment)
		if err := g.b.hostRegister(p, n, regPortable|regDeviceMap); err != nil {
			syscall.Munmap(h)
			return nil, wrapErr(op, ErrDriver, err, "register %d bytes of host memory", n)
		}
		d, err := g.b.hostDevicePointer(p)
		if err != nil {
			g.b.hostUnregister(p)
			syscall.Munmap(h)
			return nil, wrapErr(op, ErrDriver, err, "device pointer of host memory")
		}
		m.host, m.hostReg, m.Host, m.Dev = h, p, p, DevPtr(d)
	default:
		return nil, newErr(op, ErrInvalidValue, "unknown memory type %v", t)
	}
	g.mu.Lock()
	g.allocs[m.Dev] = m
	g.mu.Unlock()
	track(m, "Mem", fmt.Sprintf("%v %d bytes at %#x on %s", t, size, m.Dev, g.b.describe()))
	logf(LogDebug, "%s: %v %d bytes at %#x (host %#x)", op, t, size, m.Dev, m.Host)
	return m, nil
}

// maxAlloc bounds one allocation: what mmap and the CUDA allocator can be
// asked for (a signed int of bytes).
const maxAlloc = uintptr(math.MaxInt64)

// maxAllocSlack is the most MemAlloc adds to a size: rounding up to a GPU
// page and the alignment slack.
func maxAllocSlack(alignment uintptr) uintptr {
	a := alignment
	if a < gpuPage {
		a = gpuPage
	}
	return 2 * a
}

func (g *GPU) allocDevice(op string, m *Mem, size, alignment uintptr) error {
	base, err := g.b.allocDevice(size + alignment)
	if err != nil {
		return wrapErr(op, ErrDriver, err, "cuMemAlloc %d bytes", size+alignment)
	}
	p := alignUp(base, alignment)
	if err := g.b.setSyncMemops(p); err != nil {
		g.b.freeDevice(base)
		return wrapErr(op, ErrDriver, err, "SYNC_MEMOPS")
	}
	m.devBase, m.Dev = base, DevPtr(p)
	return nil
}

// HostBytes returns the CPU side of a MemCPUGPU or MemGPUCPU allocation as a
// slice of exactly Size bytes at Host, so host code reads and writes it
// without converting addresses. The slice aliases memory outside the Go heap
// that the GPU (and a NIC) may access concurrently: order accesses with the
// kernel as for any shared memory (for example atomics from sync/atomic on
// aligned words, or synchronising with the stream first). For MemGPUCPU the
// slice is a PCIe BAR mapping of device memory: writes are posted and
// cheap, reads are slow uncached PCIe reads, and only aligned 4- and 8-byte
// accesses are atomic. The slice is valid until Free; using it afterwards
// faults. MemGPU memory has no CPU side: ErrNotSupported.
func (m *Mem) HostBytes() ([]byte, error) {
	const op = "Mem.HostBytes"
	if err := m.made(op); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed {
		return nil, newErr(op, ErrBadState, "%v memory at %#x is freed", m.Type, m.Dev)
	}
	if m.Host == 0 {
		return nil, newErr(op, ErrNotSupported, "%v memory at %#x has no CPU mapping", m.Type, m.Dev)
	}
	return hostSlice(m.Host, m.Size), nil
}

// MemFree frees the allocation whose GPU address is p (doca_gpu_mem_free).
func (g *GPU) MemFree(p DevPtr) error {
	const op = "doca_gpu_mem_free"
	if err := g.made(op); err != nil {
		return err
	}
	g.mu.Lock()
	m := g.allocs[p]
	g.mu.Unlock()
	if m == nil {
		return newErr(op, ErrInvalidValue, "%#x is not an allocation of %s", p, g.b.describe())
	}
	return m.Free()
}

// made refuses a nil Mem and a zero value (one MemAlloc did not return).
func (m *Mem) made(op string) error {
	if m == nil {
		return newErr(op, ErrInvalidValue, "nil Mem")
	}
	if m.g == nil {
		return newErr(op, ErrInvalidValue, "Mem is a zero value, not one returned by MemAlloc")
	}
	return nil
}

// memAllocFor allocates memory that belongs to an object of this package
// (the rings of a QPHL, a device QP, a proxy mailbox, an array): Free and
// MemFree refuse it with ErrInUse naming the owner, which frees it with
// free when it closes.
func (g *GPU) memAllocFor(owner string, size, alignment uintptr, t MemType) (*Mem, error) {
	m, err := g.MemAlloc(size, alignment, t)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.owner = owner
	m.mu.Unlock()
	return m, nil
}

// Free releases the memory (idempotent). Memory that an object of this
// package allocated for itself (a QPHL's rings, an exported QP's device
// copy or mailbox, an array) is refused with ErrInUse naming the object:
// close the object instead.
func (m *Mem) Free() error {
	const op = "doca_gpu_mem_free"
	if err := m.made(op); err != nil {
		return err
	}
	m.mu.Lock()
	owner, freed := m.owner, m.freed
	m.mu.Unlock()
	if owner != "" && !freed {
		return newErr(op, ErrInUse, "%v memory at %#x belongs to %s: close that instead", m.Type, m.Dev, owner)
	}
	return m.free()
}

// free releases the memory, owned or not (idempotent), unless a region
// registered over it is open.
func (m *Mem) free() error {
	const op = "doca_gpu_mem_free"
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed {
		return nil
	}
	if open := m.openMRs(); len(open) > 0 {
		return newErr(op, ErrInUse, "%v memory at %#x is registered as MR lkey 0x%x (and %d more): close the region first", m.Type, m.Dev, open[0].LKey(), len(open)-1)
	}
	b := m.g.b
	switch {
	case m.sdk:
		if err := m.g.sdk.MemFree(uintptr(m.Dev)); err != nil {
			return sdkErr(op, false, err, "free %#x", m.Dev)
		}
	case m.Type == MemGPU || m.Type == MemGPUCPU:
		if m.unmap != nil {
			if err := m.unmap(); err != nil {
				return wrapErr(op, ErrDriver, err, "GDRCopy unmap %#x", m.Dev)
			}
			m.unmap = nil
		}
		if err := b.freeDevice(m.devBase); err != nil {
			return wrapErr(op, ErrDriver, err, "cuMemFree %#x", m.devBase)
		}
	case m.Type == MemCPUGPU:
		if err := b.hostUnregister(m.hostReg); err != nil {
			logf(LogErr, "%s: unregister host memory %#x: %v", op, m.hostReg, err)
		}
		if err := syscall.Munmap(m.host); err != nil {
			return wrapErr(op, ErrOperatingSystem, err, "munmap %#x", m.hostReg)
		}
	}
	m.freed = true
	m.g.mu.Lock()
	delete(m.g.allocs, m.Dev)
	m.g.mu.Unlock()
	untrack(m)
	return nil
}

// GetDmabufFD exports [p, p+size) of device memory as a dma-buf file
// descriptor (doca_gpu_get_dmabuf_fd, DOCA GPUNetIO 3.0's name for
// doca_gpu_dmabuf_fd); p and size must be host-page aligned. The caller
// closes the fd. ErrNotSupported when the GPU or driver has no dma-buf. In
// SDK mode the SDK exports it.
func (g *GPU) GetDmabufFD(p DevPtr, size uintptr) (int, error) {
	return g.getDmabufFD("doca_gpu_get_dmabuf_fd", p, size)
}

// DmabufFD is GetDmabufFD.
//
// Deprecated: DOCA GPUNetIO 3.0 renamed doca_gpu_dmabuf_fd to
// doca_gpu_get_dmabuf_fd; use GetDmabufFD.
func (g *GPU) DmabufFD(p DevPtr, size uintptr) (int, error) {
	return g.getDmabufFD("doca_gpu_get_dmabuf_fd", p, size)
}

func (g *GPU) getDmabufFD(op string, p DevPtr, size uintptr) (int, error) {
	if err := g.use(op); err != nil {
		return -1, err
	}
	if size == 0 || uintptr(p)%hostPage != 0 || size%hostPage != 0 || uintptr(p)+size < uintptr(p) {
		return -1, newErr(op, ErrInvalidValue, "range %#x+%d: want a non-empty, host-page aligned range", p, size)
	}
	if !g.sdk.IsZero() {
		fd, err := g.sdk.DmabufFD(uintptr(p), uint64(size))
		if err != nil {
			return -1, sdkErr(op, false, err, "range %#x+%d", p, size)
		}
		return fd, nil
	}
	if !g.b.dmabufSupported() {
		return -1, newErr(op, ErrNotSupported, "%s does not support dma-buf", g.b.describe())
	}
	fd, err := g.b.dmabufFD(uintptr(p), size)
	if err != nil {
		return -1, wrapErr(op, ErrNotSupported, err, "range %#x+%d", p, size)
	}
	return fd, nil
}
