package gpunetio

import (
	"errors"
	"sync"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/verbs"
)

// GPU is a GPU opened by PCIe address (struct doca_gpu). It owns the table of
// allocations made by MemAlloc (and internally by exports) and the UAR
// export references. All methods are safe for concurrent use.
type GPU struct {
	b backend

	mu     sync.Mutex
	allocs map[DevPtr]*Mem
	uars   map[uintptr]*uarRef // by host page address
	uarDev map[DevPtr]uintptr  // device page -> host page
	canReg map[bool]bool       // CanGPURegisterUAR answer, per "is MMIO"
	closed bool
}

type uarRef struct {
	refs  int
	dev   uintptr       // device address of the page
	holds []*verbs.Hold // one per ExportUAR: the UAR stays open while exported
}

// NewGPU opens the GPU at a PCIe address ("8A:00.0", "0000:8a:00.0", any
// case) and retains its primary CUDA context (doca_gpu_create). It also
// plugs CUDA memory into the emulated NIC (internal/emugpu), so QPs whose
// rings live in this GPU's memory work on emu* devices; the hook is removed
// when the GPU is closed.
func NewGPU(pciBusID string) (*GPU, error) {
	const op = "doca_gpu_create"
	if pciBusID == "" {
		return nil, newErr(op, ErrInvalidValue, "empty PCIe bus id")
	}
	if _, err := cuda.ParsePCIBusID(pciBusID); err != nil {
		return nil, wrapErr(op, ErrInvalidValue, err, "PCIe bus id %q", pciBusID)
	}
	b, err := newCUDABackend(pciBusID)
	if err != nil {
		code := ErrInitialization
		if errors.Is(err, cuda.ErrorInvalidDevice) || errors.Is(err, cuda.ErrorInvalidValue) {
			code = ErrNotFound
		}
		return nil, wrapErr(op, code, err, "GPU %s", pciBusID)
	}
	g := newGPU(b)
	logf(LogInfo, "opened %s (dmabuf %v, GDRCopy %v)", b.describe(), g.SupportsDmabuf(), g.SupportsGDRCopy())
	return g, nil
}

func newGPU(b backend) *GPU {
	g := &GPU{b: b, allocs: map[DevPtr]*Mem{}, uars: map[uintptr]*uarRef{}, uarDev: map[DevPtr]uintptr{}, canReg: map[bool]bool{}}
	track(g, "GPU", b.describe())
	return g
}

// newHostGPU returns a GPU made of host memory (tests without a GPU).
func newHostGPU() (*GPU, *hostBackend) {
	b := newHostBackend()
	return newGPU(b), b
}

// CUDAContext retains the GPU's primary CUDA context and returns it, for the
// GPU side of a program: loading or compiling modules, launching kernels,
// streams, events and copies through package cuda. It is the context the
// GPU's own allocations and exports live in, so device pointers (DevPtr,
// Mem.Dev, exported QPs) pass to kernels launched in it as they are. Each
// call returns a new reference, which the caller releases with
// Context.Release once everything made through it is freed; releasing it
// before or after Close is fine. Do not make the context current yourself:
// every cuda method does that for its own call. A GPU from NewHostGPU has no
// CUDA context: the error carries ErrNotSupported.
func (g *GPU) CUDAContext() (*cuda.Context, error) {
	const op = "GPU.CUDAContext"
	if err := g.use(op); err != nil {
		return nil, err
	}
	c, err := g.b.cudaContext()
	if errors.Is(err, errNoCUDAContext) {
		return nil, wrapErr(op, ErrNotSupported, err, "%s", g.b.describe())
	}
	if err != nil {
		return nil, wrapErr(op, ErrDriver, err, "retain the primary context of %s", g.b.describe())
	}
	return c, nil
}

// String names the GPU ("" for a nil or zero GPU).
func (g *GPU) String() string {
	if g == nil || g.b == nil {
		return ""
	}
	return g.b.describe()
}

// SupportsDmabuf reports CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED.
func (g *GPU) SupportsDmabuf() bool { return g != nil && g.b != nil && g.b.dmabufSupported() }

// SupportsGDRCopy reports whether GDRCopy can be used (GPU_CPU memory,
// SW-emulated no-DBR).
func (g *GPU) SupportsGDRCopy() bool { return g != nil && g.b != nil && g.b.gdrAvailable() == nil }

// made refuses a nil GPU and a zero value (one not made by NewGPU or
// NewHostGPU).
func (g *GPU) made(op string) error {
	if g == nil {
		return newErr(op, ErrInvalidValue, "nil GPU")
	}
	if g.b == nil {
		return newErr(op, ErrInvalidValue, "GPU is a zero value, not one made by NewGPU or NewHostGPU")
	}
	return nil
}

func (g *GPU) use(op string) error {
	if err := g.made(op); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return newErr(op, ErrBadState, "GPU is closed")
	}
	return nil
}

// Live returns the number of live allocations (MemAlloc and internal).
func (g *GPU) Live() int {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.allocs)
}

// Close releases the GPU (doca_gpu_destroy). Like DOCA it refuses with
// ErrInvalidValue, keeping the GPU usable, while allocations (including
// those made by exports) or UAR exports are live. A second Close returns nil.
func (g *GPU) Close() error {
	const op = "doca_gpu_destroy"
	if err := g.made(op); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	if len(g.allocs) > 0 || len(g.uars) > 0 {
		logf(LogErr, "%s: %d allocations and %d exported UAR pages still live", op, len(g.allocs), len(g.uars))
		return newErr(op, ErrInvalidValue, "%d allocations and %d exported UAR pages still live", len(g.allocs), len(g.uars))
	}
	if err := g.b.release(); err != nil {
		return wrapErr(op, ErrDriver, err, "release %s", g.b.describe())
	}
	g.closed = true
	untrack(g)
	return nil
}
