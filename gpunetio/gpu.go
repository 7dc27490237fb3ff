package gpunetio

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/docasdk"
	"github.com/gdaki/gpunetio/verbs"
)

// GPU is a GPU opened by PCIe address (doca_gpu_t). It owns the table of
// allocations made by MemAlloc (and internally by exports) and the UAR
// export references. All methods are safe for concurrent use.
//
// In SDK mode (see SDKMode) the GPU handle is also the DOCA SDK's
// (doca_gpu_create through the SDK): memory is allocated and freed, and
// dma-bufs exported, by the SDK; the CUDA context is still this package's,
// for copies, doorbell mappings and kernels.
type GPU struct {
	b   backend
	sdk docasdk.GPU // SDK mode
	ref *verbs.GPURef

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
//
// As in DOCA GPUNetIO 3.0, an empty bus id fails with ErrInitialization (the
// cause, ErrInvalidValue, stays in the chain). In SDK mode the SDK opens the
// GPU too (doca_gpu_create); its failure is ErrInitialization with an
// *verbs.SDKError.
func NewGPU(pciBusID string) (*GPU, error) {
	const op = "doca_gpu_create"
	if pciBusID == "" {
		return nil, wrapErr(op, ErrInitialization, ErrInvalidValue, "empty PCIe bus id")
	}
	if _, err := cuda.ParsePCIBusID(pciBusID); err != nil {
		return nil, wrapErr(op, ErrInvalidValue, err, "PCIe bus id %q", pciBusID)
	}
	mode := verbs.SDKMode().Mode
	logf(LogInfo, "%s", docasdk.MsgUse(docasdk.ObjGPU, docasdk.Mode(mode)))
	var sdk docasdk.GPU
	if mode == verbs.ModeSDK {
		var err error
		if sdk, err = docasdk.GPUCreate(pciBusID); err != nil {
			return nil, sdkErr(op, true, err, "GPU %s", pciBusID)
		}
	}
	b, err := newCUDABackend(pciBusID)
	if err != nil {
		if !sdk.IsZero() {
			if derr := sdk.Destroy(); derr != nil {
				logf(LogErr, "%s: doca_gpu_destroy after a failed create: %v", op, derr)
			}
		}
		code := ErrInitialization
		if errors.Is(err, cuda.ErrorInvalidDevice) || errors.Is(err, cuda.ErrorInvalidValue) {
			code = ErrNotFound
		}
		if mode == verbs.ModeOpen {
			logf(LogErr, "%s", docasdk.MsgAllocFailed(docasdk.ObjGPU))
		}
		return nil, wrapErr(op, code, err, "GPU %s", pciBusID)
	}
	g := newGPU(b, sdk)
	logf(LogInfo, "opened %s (dmabuf %v, GDRCopy %v, %v mode)", b.describe(), g.SupportsDmabuf(), g.SupportsGDRCopy(), mode)
	return g, nil
}

func newGPU(b backend, sdk docasdk.GPU) *GPU {
	g := &GPU{b: b, sdk: sdk, allocs: map[DevPtr]*Mem{}, uars: map[uintptr]*uarRef{}, uarDev: map[DevPtr]uintptr{}, canReg: map[bool]bool{}}
	g.ref = docasdk.VerbsGPURef(b.describe(), sdk).(*verbs.GPURef)
	what := b.describe()
	if !sdk.IsZero() {
		what += " (SDK)"
	}
	track(g, "GPU", what)
	return g
}

// Mode is the implementation behind the GPU handle: ModeSDK when the DOCA
// SDK opened it too, ModeOpen otherwise (and always for NewHostGPU).
func (g *GPU) Mode() Mode {
	if g == nil || g.sdk.IsZero() {
		return ModeOpen
	}
	return ModeSDK
}

// VerbsRef is the GPU as package verbs takes it: the gpu argument of
// doca_verbs_umem_create (DOCA GPUNetIO 3.0), carried in verbs.Dmabuf.GPU
// to register this GPU's memory through a dma-buf (Dev.NewUMem). In SDK
// mode it carries the SDK's GPU handle. Nil for a nil or zero GPU.
func (g *GPU) VerbsRef() *verbs.GPURef {
	if g == nil {
		return nil
	}
	return g.ref
}

// newHostGPU returns a GPU made of host memory (tests without a GPU), in
// open mode.
func newHostGPU() (*GPU, *hostBackend) {
	b := newHostBackend()
	return newGPU(b, docasdk.GPU{}), b
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

// Close releases the GPU (doca_gpu_destroy). Like DOCA it fails with
// ErrInvalidValue while allocations (including those made by exports) or UAR
// exports are live; unlike DOCA 3.0, which then frees the handle anyway
// (leaking the allocations), it keeps the GPU usable, so that they can be
// freed and Close called again. In SDK mode the SDK's handle is destroyed
// too; if the SDK fails, the error (ErrUnexpected) is returned and the GPU
// is closed anyway. A second Close returns nil.
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
		logf(LogErr, "mtable map is not empty.")
		return newErr(op, ErrInvalidValue, "%d allocations and %d exported UAR pages still live", len(g.allocs), len(g.uars))
	}
	if err := g.b.release(); err != nil {
		return wrapErr(op, ErrDriver, err, "release %s", g.b.describe())
	}
	var err error
	if !g.sdk.IsZero() {
		if derr := g.sdk.Destroy(); derr != nil {
			err = sdkErr(op, false, derr, "destroy the SDK GPU handle of %s", g.b.describe())
		}
	}
	g.closed = true
	untrack(g)
	return err
}

// sdkErr turns an error of the SDK loader into this package's error:
// ErrInitialization when a creator's SDK call failed, ErrUnexpected for any
// other SDK call (with a *verbs.SDKError naming the function), the loader's
// own code when the call was refused before reaching the SDK.
func sdkErr(op string, creator bool, err error, format string, args ...any) *Error {
	var e *docasdk.Error
	if !errors.As(err, &e) {
		return wrapErr(op, ErrUnexpected, err, format, args...)
	}
	msg := fmt.Sprintf(format, args...)
	if e.FromSDK {
		logf(LogInfo, "%s", docasdk.MsgSDKReturnedError)
		code := ErrUnexpected
		if creator {
			code = ErrInitialization
		}
		return &Error{Op: op, Code: code, Msg: msg, Err: &verbs.SDKError{Func: e.Func, Code: Code(e.Code)}}
	}
	return &Error{Op: op, Code: Code(e.Code), Msg: msg, Err: errors.New(e.Error())}
}
