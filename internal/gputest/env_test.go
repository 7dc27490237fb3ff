package gputest

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/internal/gpuskip"
	"github.com/gdaki/gpunetio/verbs"
)

// kernelImage is the file scripts/build-kernels.sh makes of cuda/test/device_api_test.cu.
const kernelImage = "test_device_api_test.fatbin"

// kernelsEnv overrides where the kernel image is (a directory or the file).
const kernelsEnv = "GDAKI_KERNELS"

// Layout of the registered buffer of each side (mirrored by the kernels'
// use of gt_args): data, then 8-byte signal words, then counter words.
const (
	bufSize    = 1 << 20
	dataOff    = 0
	dataSize   = 512 << 10
	llHalf     = 256 << 10 // gt_lowlevel reads into data + 256 KiB
	sigOff     = 512 << 10
	sigSize    = 64 << 10
	cntOff     = sigOff + sigSize
	cntSize    = 64 << 10
	sqWQEs     = 512 // ring of every initiator QP: above the most WQEs a case has in flight
	peerWQEs   = 64  // the target QPs never post
	devTimeout = 5 * time.Second
	// hostTimeout bounds a launch from the host: the device deadline plus
	// slack for the emulated NIC and the CPU proxy.
	hostTimeout = devTimeout + 15*time.Second
)

// side is one emulated NIC with its PD and registered GPU buffer.
type side struct {
	name string
	dev  *verbs.Context
	pd   *verbs.PD
	gid  verbs.GID
	mem  *gpunetio.Mem
	mr   *verbs.MR
}

func (s *side) addr(off uint64) uint64 { return uint64(s.mem.Dev) + off }

// env is everything the tests share.
type env struct {
	gpu    *gpunetio.GPU
	ctx    *cuda.Context
	mod    *cuda.Module
	stream *cuda.Stream
	svc    *gpunetio.Service
	status *gpunetio.Mem
	loc    *side // emu0: the initiator, where the kernels post
	rem    *side // emu1: the target
	funcs  map[string]*cuda.Function
	fix    map[string]*fixture
	// abandoned is set when a kernel outlived its wait: nothing may be
	// released any more.
	abandoned bool
	closers   []func() error
}

var (
	sharedOnce sync.Once
	sharedEnv  *env
	sharedSkip string
	sharedErr  error
	sharedMu   sync.Mutex
)

// getEnv returns the shared environment, skipping the test when there is no
// GPU or no kernel image and failing it when setting up failed.
func getEnv(t *testing.T) *env {
	t.Helper()
	sharedOnce.Do(func() { sharedEnv, sharedSkip, sharedErr = newEnv() })
	if sharedSkip != "" {
		gpuskip.Skip(t, sharedSkip)
	}
	if sharedErr != nil {
		t.Fatalf("set up the GPU test environment: %v", sharedErr)
	}
	if sharedEnv.abandoned {
		t.Fatal("an earlier kernel never finished: the GPU environment is abandoned")
	}
	return sharedEnv
}

func sharedAbandoned() bool { return sharedEnv != nil && sharedEnv.abandoned }

func closeShared() error {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedEnv == nil {
		return nil
	}
	e := sharedEnv
	if e.abandoned {
		return errors.New("a kernel may still be running: GPU and NIC resources are left to the process exit")
	}
	sharedEnv = nil
	return e.close()
}

// findKernel locates the kernel image; "" when there is none.
func findKernel() (string, []string) {
	var tried []string
	ok := func(p string) bool {
		tried = append(tried, p)
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular()
	}
	if v := os.Getenv(kernelsEnv); v != "" {
		if st, err := os.Stat(v); err == nil && st.IsDir() {
			v = filepath.Join(v, kernelImage)
		}
		if ok(v) {
			return v, tried
		}
		return "", tried
	}
	if p := filepath.Join("..", "..", "build", "kernels", kernelImage); ok(p) {
		return p, tried
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if p := filepath.Join(dir, "build", "kernels", kernelImage); ok(p) {
				return p, tried
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return "", tried
}

// newEnv builds the shared environment. A non-empty skip means the machine
// cannot run the tests.
func newEnv() (e *env, skip string, err error) {
	if err := cuda.Init(); err != nil {
		if errors.Is(err, cuda.ErrNoDevice) {
			return nil, fmt.Sprintf("no GPU: %v", err), nil
		}
		return nil, fmt.Sprintf("no CUDA driver: %v", err), nil
	}
	if n, err := cuda.DeviceCount(); err != nil || n == 0 {
		return nil, fmt.Sprintf("no GPU: cuDeviceGetCount: %d devices, %v", n, err), nil
	}
	path, tried := findKernel()
	if path == "" {
		return nil, fmt.Sprintf("kernels not built: run make kernels (%s not found; tried %v; set %s to override)", kernelImage, tried, kernelsEnv), nil
	}
	img, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("read kernel image: %w", err)
	}

	e = &env{funcs: map[string]*cuda.Function{}, fix: map[string]*fixture{}}
	defer func() {
		if err != nil {
			if cerr := e.close(); cerr != nil {
				err = fmt.Errorf("%w (clean-up: %v)", err, cerr)
			}
			e = nil
		}
	}()
	d, err := cuda.DeviceGet(0)
	if err != nil {
		return nil, "", fmt.Errorf("CUDA device 0: %w", err)
	}
	busID, err := d.PCIBusID()
	if err != nil {
		return nil, "", fmt.Errorf("PCIe address of CUDA device 0: %w", err)
	}
	if e.gpu, err = gpunetio.NewGPU(busID); err != nil {
		return nil, "", fmt.Errorf("open GPU %s: %w", busID, err)
	}
	e.closers = append(e.closers, e.gpu.Close)
	if e.ctx, err = d.PrimaryContext(); err != nil {
		return nil, "", fmt.Errorf("CUDA primary context of %s: %w", busID, err)
	}
	e.closers = append(e.closers, e.ctx.Release)
	if e.mod, err = e.ctx.ModuleLoadData(img); err != nil {
		return nil, "", fmt.Errorf("load kernel image %s: %w", path, err)
	}
	e.closers = append(e.closers, e.mod.Unload)
	// Non-blocking: the emulated NIC's own CUDA copies must not wait for
	// the test kernel (which waits for them).
	if e.stream, err = e.ctx.NewStream(cuda.StreamNonBlocking); err != nil {
		return nil, "", fmt.Errorf("create a CUDA stream: %w", err)
	}
	e.closers = append(e.closers, e.stream.Destroy)
	if e.status, err = e.gpu.MemAlloc(16, 0, gpunetio.MemGPU); err != nil {
		return nil, "", fmt.Errorf("allocate the kernel status words: %w", err)
	}
	e.closers = append(e.closers, e.status.Free)
	if e.loc, err = e.newSide("emu0"); err != nil {
		return nil, "", err
	}
	if e.rem, err = e.newSide("emu1"); err != nil {
		return nil, "", err
	}
	if e.svc, err = gpunetio.NewService(); err != nil {
		return nil, "", fmt.Errorf("start the CPU proxy service: %w", err)
	}
	e.closers = append(e.closers, e.svc.Close)
	return e, "", nil
}

func (e *env) newSide(name string) (*side, error) {
	s := &side{name: name}
	var err error
	if s.dev, err = verbs.OpenDevice(name); err != nil {
		return nil, fmt.Errorf("open emulated NIC %s: %w", name, err)
	}
	e.closers = append(e.closers, s.dev.Close)
	if s.pd, err = s.dev.AllocPD(); err != nil {
		return nil, fmt.Errorf("%s: allocate PD: %w", name, err)
	}
	e.closers = append(e.closers, s.pd.Close)
	g, err := s.dev.QueryGID(1, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: query GID 0: %w", name, err)
	}
	s.gid = g.GID
	if s.mem, err = e.gpu.MemAlloc(bufSize, 0, gpunetio.MemGPU); err != nil {
		return nil, fmt.Errorf("%s: allocate %d bytes of GPU memory: %w", name, bufSize, err)
	}
	e.closers = append(e.closers, s.mem.Free)
	access := verbs.AccessLocalWrite | verbs.AccessRemoteWrite | verbs.AccessRemoteRead | verbs.AccessRemoteAtomic
	if s.mr, err = s.pd.RegMR(uintptr(s.mem.Dev), bufSize, access); err != nil {
		return nil, fmt.Errorf("%s: register %d bytes of GPU memory at 0x%x: %w", name, bufSize, uintptr(s.mem.Dev), err)
	}
	e.closers = append(e.closers, s.mr.Close)
	return s, nil
}

// close releases the fixtures, then everything else in reverse order of
// creation.
func (e *env) close() error {
	var errs []error
	for name, f := range e.fix {
		if err := f.close(e); err != nil {
			errs = append(errs, fmt.Errorf("fixture %s: %w", name, err))
		}
		delete(e.fix, name)
	}
	for i := len(e.closers) - 1; i >= 0; i-- {
		errs = append(errs, e.closers[i]())
	}
	e.closers = nil
	return errors.Join(errs...)
}

// be32 is a key as device code takes it (htobe32 on a little-endian host).
func be32(v uint32) uint32 { return bits.ReverseBytes32(v) }

// function returns a kernel entry point of the module.
func (e *env) function(name string) (*cuda.Function, error) {
	if f := e.funcs[name]; f != nil {
		return f, nil
	}
	f, err := e.mod.Function(name)
	if err != nil {
		return nil, fmt.Errorf("kernel %s not in %s (rebuild with make kernels): %w", name, kernelImage, err)
	}
	e.funcs[name] = f
	return f, nil
}
