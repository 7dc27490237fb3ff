// Package emugpu plugs CUDA device memory into the emulated mlx5 device: it
// implements emu.GPUMemory over the cuda package, so that rings, doorbell
// records and data buffers allocated with cuMemAlloc are read and written by
// the emulator through device copies.
//
// Install registers a CUDA context with the process-wide adapter and
// installs the adapter in the emulator (emu.SetGPUMemory) the first time;
// the returned function removes the context again and, when no context is
// left, uninstalls the adapter. Several contexts (GPUs) may be registered at
// once: an address belongs to the first one that reports it as device
// memory. The emulator classifies a range once, when it is registered (UMEM,
// MR), so install before creating UMEMs or MRs over GPU memory; Claim asks
// the driver which allocation holds the range and keeps the answer, and no
// later copy asks again.
//
// # Copies
//
// Each installed context gets its own reference to the device's primary
// context, a non-blocking stream and a pinned staging buffer, all of them
// made when the first batch runs and released by the uninstall function.
// They are the adapter's, so they never keep the installer's Context from
// being released. A batch (emu.GPUMemory.Copy) queues every copy on that
// stream as an asynchronous copy through the staging buffer (device to host
// into it, host to device out of it, device to device directly), then waits
// for the stream once and copies what was read out of the staging buffer
// (emu.CopyHost: a large piece on several cores): a batch costs one wait
// for the device, however many copies it holds. A host side in memory
// PinHost page-locked (the emulator's own buffers, and host memory regions
// that large payloads land in) is copied to or from directly, by DMA. A
// batch larger than the staging buffer (which grows up to maxStage) is run
// in pieces, each waited for. The copies of a batch take effect in order;
// batches submitted by different goroutines may run at the same time on
// the two copiers (below), otherwise one at a time.
//
// # The copier
//
// A batch of at most 64 copies moving at most 60 KiB (GDAKI_EMU_COPIER_MAX
// bytes) runs instead on the copier, a one-block kernel of the adapter's
// own that polls a control block in pinned host memory and copies with the
// GPU's own loads and stores (copier.go has the protocol and the
// measurements that chose it): on an H100 a WQE and DBR read costs about
// 7.5 us there against 11.5 us on the copy engines. The copier ends after
// 1 ms without work and after 5 ms in all (a context synchronization waits
// for it at most that long) and is started again by the next batch; it is
// skipped while it cannot start (a GPU full of the user's blocks), and a
// range is checked to be still allocated before the copier loads from it.
// Each context has a second copier, the side copier (another instance of
// the kernel, one block, no watches), which takes a batch that comes while
// the first runs another: one QP's landing then does not wait behind
// another QP's CQEs (one-process write_lat on an H100). It is used only
// while its instance runs; a batch that finds it ended launches it again
// without waiting, and goes to the first copier. A batch whose writes to
// device memory are small (a landing of a short message, a lone CQE)
// carries their bytes in the part of the control block the kernel reads
// with each look, so it costs no read of staged bytes over PCIe.
// GDAKI_EMU_COPIER=0 turns both off, GDAKI_EMU_SIDE_COPIER=0 the side
// copier, GDAKI_EMU_COPIER_INLINE=0 the inline bytes; GDAKI_EMU_COPIER_PTX loads another
// build of copier.cu and GDAKI_EMU_COPIER_THREADS sets its block size
// (256), for experiments.
//
// All functions are safe for concurrent use.
package emugpu

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/mlx5/emu"
)

// Staging buffer sizes: the first one, and the largest it grows to.
const (
	minStage = 256 << 10
	maxStage = 8 << 20
)

// errUninstalled is the error of a copy on a context that was removed.
var errUninstalled = errors.New("emugpu: the CUDA context was uninstalled")

// adapter is the emu.GPUMemory over the registered contexts.
type adapter struct {
	mu     sync.RWMutex
	devs   []*device
	pinned []pinned // host ranges page-locked by PinHost; mu
}

// pinned is a host range PinHost registered (portable: for every context)
// through the context of d.
type pinned struct {
	ptr       unsafe.Pointer
	base, end uintptr
	d         *device
	borrowed  bool // registered by someone else before: never unregistered here
}

// device is one installed context and what the adapter made for it.
type device struct {
	user *cuda.Context // as installed: classification

	mu      sync.Mutex // one batch at a time; guards everything below
	closed  bool
	pinning int // PinHost calls registering a range without mu (close waits for them)
	pinDone sync.Cond
	own     *cuda.Context // the adapter's reference to the same primary context
	stream  *cuda.Stream
	stage   unsafe.Pointer
	stCap   int
	pend    []pendRead // device-to-host copies waiting for the stream
	direct  []bool     // per copy of the running batch: its host side is pinned

	// The copier (copier.go): nil when disabled or when it could not be
	// set up (cpErr says why); the copy engines then run every batch.
	cp    *copier
	cpErr error
	ck    copierKit
	side  sideCopier

	// Send-queue watches (watch.go).
	watches    [maxWatch]*sqWatch
	slotUsed   [maxWatch]bool   // the slot has had a watch
	slotFreeAt [maxWatch]uint32 // the first table without the slot's closed watch (0: not yet)
	wMem       unsafe.Pointer   // maxWatch slots of pinned memory, mapped
	wDev       uintptr
	wGen       uint32 // the table generation last published
	wEmpty     bool   // it was empty
	wDirty     atomic.Bool
	wGone      atomic.Bool // freeWatches ran: lock-free users back off
	wUsers     atomic.Int64
}

// pendRead is a device-to-host copy queued into the staging buffer.
type pendRead struct {
	dst []byte
	off int
}

// devRange is the adapter's emu.DeviceRange: where it starts and the
// allocation that held it when it was claimed.
type devRange struct {
	d           *device
	base        uintptr
	start, size uintptr          // the allocation (cuMemGetAddressRange)
	checked     [2]atomic.Uint32 // per copier (epoch parity): the epoch under which it was last found allocated
}

func (r *devRange) Base() uintptr { return r.base }

var (
	instMu    sync.Mutex
	installed *adapter
)

// Install adds ctx to the adapter the emulator uses for GPU memory and
// returns the function that removes it (idempotent). A nil ctx claims
// nothing.
func Install(ctx *cuda.Context) (uninstall func()) {
	instMu.Lock()
	defer instMu.Unlock()
	if installed == nil {
		installed = &adapter{}
		emu.SetGPUMemory(installed)
	}
	a := installed
	d := &device{user: ctx}
	d.pinDone.L = &d.mu
	a.mu.Lock()
	a.devs = append(a.devs, d)
	a.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			instMu.Lock()
			defer instMu.Unlock()
			a.mu.Lock()
			for i, x := range a.devs {
				if x == d {
					a.devs = append(a.devs[:i], a.devs[i+1:]...)
					break
				}
			}
			empty := len(a.devs) == 0
			a.mu.Unlock()
			d.close(a)
			if empty && installed == a {
				emu.SetGPUMemory(nil)
				installed = nil
			}
		})
	}
}

// Installed reports how many contexts the adapter holds.
func Installed() int {
	instMu.Lock()
	defer instMu.Unlock()
	if installed == nil {
		return 0
	}
	installed.mu.RLock()
	defer installed.mu.RUnlock()
	return len(installed.devs)
}

// PinHost page-locks b for every context (cuMemHostRegister, portable)
// through the first installed context that works, so that copies to and
// from it skip the staging buffer. b must not be Go heap memory. The
// registration runs without the context's copy lock (locking a range of
// hundreds of MiB takes a while, and batches of copies go on meanwhile);
// uninstalling the context waits for it. A range the program registered
// with CUDA itself (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, and its
// first and last bytes are registered host memory) counts as pinned and
// is never unregistered here.
func (a *adapter) PinHost(b []byte) (func(), error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("emugpu: pin an empty range")
	}
	base := uintptr(unsafe.Pointer(&b[0]))
	a.mu.RLock()
	devs := append([]*device(nil), a.devs...)
	a.mu.RUnlock()
	var errs []error
	for _, d := range devs {
		d.mu.Lock()
		err := d.setup()
		own := d.own
		if err == nil {
			d.pinning++
		}
		d.mu.Unlock()
		p := pinned{ptr: unsafe.Pointer(&b[0]), base: base, end: base + uintptr(len(b)), d: d}
		if err == nil {
			err = own.MemHostRegister(p.ptr, uintptr(len(b)), cuda.HostRegisterPortable)
			if errors.Is(err, cuda.ErrorHostMemoryAlreadyRegistered) && registeredHost(own, b) {
				p.borrowed, err = true, nil
			}
			err = d.pinned(a, own, p, err)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var once sync.Once
		return func() { once.Do(func() { a.unpin(p) }) }, nil
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("emugpu: pin host memory: no CUDA context installed")
	}
	return nil, fmt.Errorf("emugpu: pin host memory: %w", errors.Join(errs...))
}

// pinned ends a registration of p that PinHost ran through own without
// d.mu, with its result err: it records the range (under d.mu, so that
// close, which waits for it, unregisters it with the context's other
// ranges), or undoes it when the context was closed meanwhile.
func (d *device) pinned(a *adapter, own *cuda.Context, p pinned, err error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pinning--; d.pinning == 0 {
		d.pinDone.Broadcast()
	}
	if err != nil {
		return err
	}
	if d.closed {
		if !p.borrowed {
			own.MemHostUnregister(p.ptr)
		}
		return errUninstalled
	}
	a.mu.Lock()
	a.pinned = append(a.pinned, p)
	a.mu.Unlock()
	return nil
}

// registeredHost reports whether the first and the last byte of b are
// host memory registered with CUDA (cuPointerGetAttribute answers for
// them; for pageable memory it fails).
func registeredHost(own *cuda.Context, b []byte) bool {
	for _, p := range [2]uintptr{uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&b[len(b)-1]))} {
		if t, err := own.PointerMemoryType(cuda.DevPtr(p)); err != nil || t != cuda.MemoryTypeHost {
			return false
		}
	}
	return true
}

// unpin unregisters a range PinHost registered, unless its context went
// (whose close unregistered it).
func (a *adapter) unpin(p pinned) {
	a.mu.Lock()
	found := false
	for i, q := range a.pinned {
		if q == p {
			a.pinned = append(a.pinned[:i], a.pinned[i+1:]...)
			found = true
			break
		}
	}
	a.mu.Unlock()
	if !found {
		return
	}
	p.d.mu.Lock()
	defer p.d.mu.Unlock()
	if p.d.own != nil && !p.borrowed {
		p.d.own.MemHostUnregister(p.ptr)
	}
}

// isPinned reports whether b lies in a range PinHost registered.
func (a *adapter) isPinned(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(&b[0]))
	hi := lo + uintptr(len(b))
	a.mu.RLock()
	defer a.mu.RUnlock()
	for _, p := range a.pinned {
		if lo >= p.base && hi <= p.end {
			return true
		}
	}
	return false
}

// Claim returns the range of [addr, addr+n) in the first installed context
// whose device allocation holds all of it.
func (a *adapter) Claim(addr uintptr, n uint64) (emu.DeviceRange, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	for _, d := range a.devs {
		if d.user == nil {
			continue
		}
		if start, size, ok := inRange(d.user, addr, n); ok {
			return &devRange{d: d, base: addr, start: start, size: size}, true
		}
	}
	return nil, false
}

func inRange(c *cuda.Context, addr uintptr, n uint64) (start, size uintptr, ok bool) {
	if !c.IsDevicePointer(addr) {
		return 0, 0, false
	}
	s, size, err := c.PointerRange(cuda.DevPtr(addr))
	if err != nil {
		return 0, 0, false
	}
	return uintptr(s), size, fits(uint64(s), uint64(size), uint64(addr), n)
}

// fits reports whether [addr, addr+n) lies in [start, start+size).
func fits(start, size, addr, n uint64) bool {
	return addr >= start && n <= size && addr-start <= size-n
}

// Copy runs the copies in order: consecutive copies on one context as one
// batch on its stream.
func (a *adapter) Copy(ops []emu.DeviceCopy) error {
	for i := 0; i < len(ops); {
		d, err := deviceOf(&ops[i])
		if err != nil {
			return fmt.Errorf("emugpu: copy %d of %d (%v): %w", i+1, len(ops), ops[i].Kind, err)
		}
		j := i + 1
		for ; j < len(ops); j++ {
			if e, err := deviceOf(&ops[j]); err != nil || e != d {
				break
			}
		}
		if err := d.run(a, ops[i:j], i, len(ops)); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// deviceOf is the context that runs a copy: the destination's for copies
// into device memory, the source's for copies out of it.
func deviceOf(o *emu.DeviceCopy) (*device, error) {
	r := o.Dst
	if o.Kind == emu.CopyToHost {
		r = o.Src
	}
	dr, ok := r.(*devRange)
	if !ok || dr == nil {
		return nil, fmt.Errorf("a range this adapter did not claim")
	}
	if o.Kind == emu.CopyDeviceToDevice {
		if sr, ok := o.Src.(*devRange); !ok || sr == nil {
			return nil, fmt.Errorf("a source range this adapter did not claim")
		}
	}
	return dr.d, nil
}

// setup makes the device's own context reference, stream and staging
// buffer on first use; d.mu held.
func (d *device) setup() error {
	if d.closed {
		return errUninstalled
	}
	if d.stream != nil {
		return nil
	}
	if d.user == nil {
		return fmt.Errorf("emugpu: no CUDA context")
	}
	own, err := d.user.Device().PrimaryContext()
	if err != nil {
		return fmt.Errorf("emugpu: retain the primary context: %w", err)
	}
	s, err := own.NewStream(cuda.StreamNonBlocking)
	if err != nil {
		own.Release()
		return fmt.Errorf("emugpu: create the copy stream: %w", err)
	}
	d.own, d.stream = own, s
	if err := d.grow(minStage); err != nil {
		return err
	}
	if copierEnabled {
		d.cpErr = d.setupCopier()
	} else {
		d.cpErr = errors.New("emugpu: the copier is off (GDAKI_EMU_COPIER=0)")
	}
	return nil
}

// copierKit is what one copier kernel needs in the adapter's context: its
// own module (so that two copiers do not share the kernel's device
// variables), a stream and the pinned control block and arena.
type copierKit struct {
	mod    *cuda.Module
	fn     *cuda.Function
	stream *cuda.Stream
	mem    unsafe.Pointer
	dev    uintptr
}

// sideCopier is a second copier kernel of the context, for a batch that
// comes while the first one runs another: the landing of one QP's message
// then need not wait behind another QP's CQEs. It runs no watches and is
// used only while its instance runs (one is launched, without waiting for
// it, when a batch finds it not running). mu guards it; it is taken after
// d.mu, never before.
type sideCopier struct {
	mu sync.Mutex
	cp *copier
	ck copierKit
}

// launcher of the side copier: one block, no watches.
type sideLauncher struct{ d *device }

func (l sideLauncher) launch(epoch uint32) error {
	d := l.d
	return d.own.LaunchKernel(d.side.ck.fn, cuda.Dim3{X: 1}, cuda.Dim3{X: copierThreads}, 0, d.side.ck.stream,
		cuda.DevPtr(d.side.ck.dev), epoch, idleNS, lifeNS)
}

// setupCopier loads the copier kernel into the adapter's context, twice
// (the side copier's failure only leaves it out), and makes their streams
// and control blocks; d.mu held.
func (d *device) setupCopier() error {
	image := copierPTX
	if path := os.Getenv("GDAKI_EMU_COPIER_PTX"); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("emugpu: GDAKI_EMU_COPIER_PTX: %w", err)
		}
		image = b
	}
	size := ctlSize + copierArena
	if err := d.ck.make(d.own, image, size); err != nil {
		d.freeCopier()
		return fmt.Errorf("emugpu: set up the copier: %w", err)
	}
	d.cp = newCopier(d.ck.mem, d.ck.dev, size, d)
	if sideCopiers {
		var ck copierKit
		if err := ck.make(d.own, image, size); err != nil {
			ck.free(d.own)
			return nil
		}
		cp := newCopier(ck.mem, ck.dev, size, sideLauncher{d})
		cp.epoch = 1 // odd epochs: unique in the context (see copier.start)
		d.side.mu.Lock()
		d.side.cp, d.side.ck = cp, ck
		d.side.mu.Unlock()
	}
	return nil
}

// make loads image and makes the stream and a control block of size bytes.
func (k *copierKit) make(own *cuda.Context, image []byte, size int) error {
	mod, err := own.ModuleLoadData(image)
	if err != nil {
		return fmt.Errorf("load the copier kernel: %w", err)
	}
	k.mod = mod
	if k.fn, err = mod.Function("gdaki_emu_copier"); err != nil {
		return err
	}
	if k.stream, err = own.NewStream(cuda.StreamNonBlocking); err != nil {
		return err
	}
	if k.mem, err = own.MemAllocHost(uintptr(size), cuda.HostAllocDeviceMap|cuda.HostAllocPortable); err != nil {
		return err
	}
	clear(unsafe.Slice((*byte)(k.mem), size))
	dev, err := own.HostGetDevicePointer(k.mem)
	k.dev = uintptr(dev)
	return err
}

// free waits for the kernel's stream and frees what make made.
func (k *copierKit) free(own *cuda.Context) {
	if k.stream != nil {
		k.stream.Synchronize()
		k.stream.Destroy()
	}
	if k.mod != nil {
		k.mod.Unload()
	}
	if k.mem != nil {
		own.MemFreeHost(k.mem)
	}
	*k = copierKit{}
}

// launch starts the copier kernel with an epoch (launcher): block 0 runs
// batches, block 1 the watches, which start with an empty table (watch.go).
func (d *device) launch(epoch uint32) error {
	d.publish()
	return d.own.LaunchKernel(d.ck.fn, cuda.Dim3{X: 2}, cuda.Dim3{X: copierThreads}, 0, d.ck.stream,
		cuda.DevPtr(d.cp.ctlDev), epoch, idleNS, lifeNS)
}

// freeCopier ends the copiers and frees what setupCopier made; d.mu held.
func (d *device) freeCopier() {
	d.side.mu.Lock()
	if d.side.cp != nil {
		d.side.cp.stop(100 * time.Millisecond)
		d.side.cp = nil
	}
	d.side.ck.free(d.own)
	d.side.mu.Unlock()
	if d.cp != nil {
		d.cp.stop(100 * time.Millisecond)
		d.freeWatches()
		d.cp = nil
	}
	d.ck.free(d.own)
	if d.wMem != nil {
		d.own.MemFreeHost(d.wMem)
		d.wMem, d.wDev = nil, 0
	}
}

// rangesLive reports an error when a device range of ops is no longer the
// allocation it was claimed in (freed, or freed and allocated again in
// another shape): the copier must not load from it.
func rangesLive(ops []emu.DeviceCopy, epoch uint32) error {
	var last *devRange
	for i := range ops {
		for _, r := range [2]emu.DeviceRange{ops[i].Src, ops[i].Dst} {
			dr, ok := r.(*devRange)
			if !ok || dr == nil || dr == last {
				continue
			}
			last = dr
			if err := dr.live(epoch); err != nil {
				return fmt.Errorf("emugpu: copy %d (%v): %w", i+1, ops[i].Kind, err)
			}
		}
	}
	return nil
}

// live reports an error when r is no longer the allocation it was claimed
// in. A range found allocated under the copier instance epoch is not asked
// again while that instance runs: a free waits for the running kernel.
func (r *devRange) live(epoch uint32) error {
	if r.checked[epoch&1].Load() == epoch {
		return nil
	}
	start, size, err := r.d.own.MemGetAddressRange(cuda.DevPtr(r.start))
	if err != nil {
		return fmt.Errorf("the device memory at %#x: %w", r.base, err)
	}
	if uintptr(start) != r.start || size != r.size {
		return fmt.Errorf("the device memory at %#x is no longer the allocation it was registered in", r.base)
	}
	r.checked[epoch&1].Store(epoch)
	return nil
}

// grow makes the staging buffer at least n bytes (up to maxStage); no copy
// may be in flight. d.mu held.
func (d *device) grow(n int) error {
	if n <= d.stCap {
		return nil
	}
	n = min(max(n, 2*d.stCap), maxStage)
	p, err := d.own.MemAllocHost(uintptr(n), 0)
	if err != nil {
		return fmt.Errorf("emugpu: pinned staging buffer: %w", err)
	}
	if d.stage != nil {
		d.own.MemFreeHost(d.stage)
	}
	d.stage, d.stCap = p, n
	return nil
}

// close frees what the adapter made for the context, the host ranges a
// records as pinned for it included (taken from a once no registration is
// in progress); a batch in flight finishes first, later ones fail.
func (d *device) close(a *adapter) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	for d.pinning > 0 {
		d.pinDone.Wait() // a registration in progress ends (and is undone) first
	}
	var pins []pinned
	a.mu.Lock()
	for i := 0; i < len(a.pinned); {
		if a.pinned[i].d == d {
			pins = append(pins, a.pinned[i])
			a.pinned = append(a.pinned[:i], a.pinned[i+1:]...)
			continue
		}
		i++
	}
	a.mu.Unlock()
	if d.own == nil {
		return
	}
	d.freeCopier()
	for _, p := range pins {
		if !p.borrowed {
			d.own.MemHostUnregister(p.ptr)
		}
	}
	if d.stage != nil {
		d.own.MemFreeHost(d.stage)
	}
	d.stream.Destroy()
	d.own.Release()
	d.own, d.stream, d.stage, d.stCap = nil, nil, nil, 0
}

// stageBytes views n bytes of the staging buffer at off.
func (d *device) stageBytes(off, n int) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(d.stage, off)), n)
}

// run queues ops (copies first+1.. of total) on the stream and waits. A
// host side in pinned memory is copied to or from directly; any other
// goes through the staging buffer.
func (d *device) run(a *adapter, ops []emu.DeviceCopy, first, total int) error {
	t0 := emu.TimelineStart()
	if !d.mu.TryLock() {
		// The first copier (or the copy engines) runs another batch: the
		// side copier takes this one when it is free and running.
		if ran, err := d.runSide(ops, first, total); ran {
			return err
		}
		d.mu.Lock()
	}
	defer d.mu.Unlock()
	if err := d.setup(); err != nil {
		return err
	}
	if d.cp != nil {
		ran, err := d.cp.run(ops, func(epoch uint32) error { return rangesLive(ops, epoch) })
		if d.cp != nil && d.wDirty.Load() {
			d.publish()
		}
		if err != nil {
			return fmt.Errorf("emugpu: copies %d-%d of %d on the copier: %w", first+1, first+len(ops), total, err)
		}
		if ran {
			noteBatch("copier", ops, t0)
			return nil
		}
	}
	defer noteBatch("copy-engine", ops, t0)
	engineBatches.Add(1)
	defer func(t0 time.Time) { engineNanos.Add(uint64(time.Since(t0))) }(time.Now())
	direct := d.direct[:0]
	need := 0
	for i := range ops {
		pin := ops[i].Kind != emu.CopyDeviceToDevice && a.isPinned(ops[i].Host)
		direct = append(direct, pin)
		if ops[i].Kind != emu.CopyDeviceToDevice && !pin {
			need += len(ops[i].Host)
		}
	}
	d.direct = direct
	for i := range ops {
		engineBytes.Add(ops[i].Bytes())
	}
	engineStaged.Add(uint64(need))
	if need > d.stCap {
		if err := d.grow(need); err != nil {
			return err
		}
	}
	used := 0
	fail := func(i int, err error) error {
		d.pend = d.pend[:0]
		d.stream.Synchronize() // nothing may still use the staging buffer
		o := &ops[i]
		return fmt.Errorf("emugpu: copy %d of %d (%v, %d bytes): %w", first+i+1, total, o.Kind, o.Bytes(), err)
	}
	for i := range ops {
		o := &ops[i]
		switch o.Kind {
		case emu.CopyToHost:
			src := cuda.DevPtr(o.Src.Base() + uintptr(o.SrcOff))
			if direct[i] {
				if err := d.own.MemcpyDtoHAsync(unsafe.Pointer(&o.Host[0]), src, uintptr(len(o.Host)), d.stream); err != nil {
					return fail(i, err)
				}
				continue
			}
			err := d.staged(len(o.Host), &used, func(at, done, n int) error {
				if err := d.own.MemcpyDtoHAsync(unsafe.Add(d.stage, at), src+cuda.DevPtr(done), uintptr(n), d.stream); err != nil {
					return err
				}
				d.pend = append(d.pend, pendRead{dst: o.Host[done : done+n], off: at})
				return nil
			})
			if err != nil {
				return fail(i, err)
			}
		case emu.CopyToDevice:
			dst := cuda.DevPtr(o.Dst.Base() + uintptr(o.DstOff))
			if direct[i] {
				if err := d.own.MemcpyHtoDAsync(dst, unsafe.Pointer(&o.Host[0]), uintptr(len(o.Host)), d.stream); err != nil {
					return fail(i, err)
				}
				continue
			}
			err := d.staged(len(o.Host), &used, func(at, done, n int) error {
				copy(d.stageBytes(at, n), o.Host[done:done+n])
				return d.own.MemcpyHtoDAsync(dst+cuda.DevPtr(done), unsafe.Add(d.stage, at), uintptr(n), d.stream)
			})
			if err != nil {
				return fail(i, err)
			}
		case emu.CopyDeviceToDevice:
			dst := cuda.DevPtr(o.Dst.Base() + uintptr(o.DstOff))
			src := cuda.DevPtr(o.Src.Base() + uintptr(o.SrcOff))
			if err := d.own.MemcpyDtoDAsync(dst, src, uintptr(o.Len), d.stream); err != nil {
				return fail(i, err)
			}
		default:
			return fail(i, fmt.Errorf("unknown copy kind"))
		}
	}
	if err := d.wait(); err != nil {
		return fail(len(ops)-1, err)
	}
	return nil
}

// runSide runs ops on the side copier when it is free, its instance runs
// and the batch is its kind; ran reports whether it did (or failed trying).
func (d *device) runSide(ops []emu.DeviceCopy, first, total int) (ran bool, err error) {
	s := &d.side
	if !s.mu.TryLock() {
		return false, nil
	}
	defer s.mu.Unlock()
	if s.cp == nil || !s.cp.ready() {
		return false, nil
	}
	t0 := emu.TimelineStart()
	ran, err = s.cp.run(ops, func(epoch uint32) error { return rangesLive(ops, epoch) })
	if err != nil {
		err = fmt.Errorf("emugpu: copies %d-%d of %d on the side copier: %w", first+1, first+len(ops), total, err)
	}
	if ran {
		sideBatches.Add(1)
		noteBatch("side-copier", ops, t0)
	}
	return ran, err
}

// noteBatch notes a batch of copies on the emulator's timeline (when one
// runs: t0 is not zero).
func noteBatch(path string, ops []emu.DeviceCopy, t0 time.Time) {
	if t0.IsZero() {
		return
	}
	var n uint64
	for i := range ops {
		n += ops[i].Bytes()
	}
	emu.TimelineNote(path, int64(len(ops)), int64(n), t0)
}

// staged moves a copy of total bytes through the staging buffer in pieces: step
// queues the n bytes at offset done of the copy, staged at offset at;
// a full buffer is drained (d.wait) first. used is the buffer's fill.
func (d *device) staged(total int, used *int, step func(at, done, n int) error) error {
	for done := 0; done < total; {
		if *used == d.stCap {
			if err := d.wait(); err != nil {
				return err
			}
			*used = 0
		}
		n := min(total-done, d.stCap-*used)
		if err := step(*used, done, n); err != nil {
			return err
		}
		*used += n
		done += n
	}
	return nil
}

// wait waits for the stream and copies the staged reads out; d.mu held.
func (d *device) wait() error {
	err := d.stream.Synchronize()
	if err == nil {
		for _, p := range d.pend {
			emu.CopyHost(p.dst, d.stageBytes(p.off, len(p.dst))) // a large one on several cores
		}
	}
	clear(d.pend)
	d.pend = d.pend[:0]
	return err
}
