package emu

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5/emu/internal/hostcopy"
)

// GPUMemory is the seam through which the emulator reaches device memory
// (GPU memory that the host cannot load from or store to). Host memory is
// read and written directly; a range the installed GPUMemory claims is only
// ever touched through Copy.
//
// Claim classifies a range once, when a UMEM or MR is registered: it
// reports whether [addr, addr+n) lies in one device allocation the
// implementation reaches and returns the DeviceRange that stands for it in
// every later copy, so that no copy has to find its memory's owner again.
//
// Copy runs a batch of copies in order, as one CUDA stream would: the effect
// of each is visible in device memory (and to the GPU's own loads) before
// the next one starts, and Copy returns once all of them are complete. The
// emulator hands over everything it can move at once (every WQE between two
// producer indexes, the payloads of several messages, the CQEs of a round),
// so that a batch costs one wait for the device, not one per access. Host
// slices may be any memory and are not kept after Copy returns.
//
// Implementations must be safe for concurrent use.
type GPUMemory interface {
	Claim(addr uintptr, n uint64) (DeviceRange, bool)
	Copy(ops []DeviceCopy) error
}

// DeviceRange is a range of device memory classified by Claim: the
// implementation's own handle (which device, which context); the emulator
// only hands it back in copies.
type DeviceRange interface {
	// Base is the device address of the range's first byte.
	Base() uintptr
}

// CopyKind is the direction of a DeviceCopy.
type CopyKind uint8

// Copy directions.
const (
	// CopyToHost copies len(Host) bytes at Src+SrcOff into Host.
	CopyToHost CopyKind = iota + 1
	// CopyToDevice copies Host to Dst+DstOff.
	CopyToDevice
	// CopyDeviceToDevice copies Len bytes from Src+SrcOff to Dst+DstOff.
	CopyDeviceToDevice
)

// DeviceCopy is one copy of a batch. Offsets are byte offsets from the
// ranges' Base; the emulator keeps every copy inside its range.
type DeviceCopy struct {
	Kind   CopyKind
	Dst    DeviceRange // CopyToDevice, CopyDeviceToDevice
	DstOff uint64
	Src    DeviceRange // CopyToHost, CopyDeviceToDevice
	SrcOff uint64
	Host   []byte // CopyToHost: the destination; CopyToDevice: the source
	Len    uint64 // CopyDeviceToDevice: the length
}

// Bytes is the number of bytes the copy moves.
func (c *DeviceCopy) Bytes() uint64 {
	if c.Kind == CopyDeviceToDevice {
		return c.Len
	}
	return uint64(len(c.Host))
}

// HostPinner is implemented by a GPUMemory that can page-lock host memory
// for its copies: a copy whose host side lies in memory pinned this way
// moves by DMA straight to or from it, without a staging buffer. The
// emulator pins its own long-lived buffers (the read-ahead buffer of a QP,
// the rings of a shared-memory link), always memory it mapped itself, and
// host MRs that large payloads from device memory land in (inproc.go),
// from registration to deregistration: never Go heap. PinHost may take a
// while for a large range (the emulator calls it off its data path).
// unpin undoes it; after the GPUMemory is gone, unpin does nothing.
type HostPinner interface {
	PinHost(b []byte) (unpin func(), err error)
}

// pinHost pins b through the installed GPUMemory when it can; the returned
// function (never nil) unpins it.
func pinHost(b []byte) func() {
	if p, ok := currentGPU().(HostPinner); ok && len(b) > 0 {
		if unpin, err := p.PinHost(b); err == nil {
			return unpin
		}
	}
	return func() {}
}

var gpuMem atomic.Pointer[gpuHolder]

type gpuHolder struct{ m GPUMemory }

// SetGPUMemory installs m process-wide (nil removes it). Registrations made
// before the call keep the classification they got when they were made.
func SetGPUMemory(m GPUMemory) {
	if m == nil {
		gpuMem.Store(nil)
		return
	}
	gpuMem.Store(&gpuHolder{m: m})
}

func currentGPU() GPUMemory {
	if h := gpuMem.Load(); h != nil {
		return h.m
	}
	return nil
}

// span is a registered range of memory, classified once at registration:
// host memory (gpu == nil) is accessed through a slice over the range,
// device memory through the seam, by the DeviceRange Claim returned.
//
// Every access pins the span for its duration, and deregistration retires
// it: it marks the span dead and waits until no access is in progress, so
// that when MR or UMEM dereg returns the NIC is not touching the memory and
// never will again (the caller may unmap it at once). A pin is held for one
// copy or one batch of copies (a few MiB at most), never across a wait for
// the network.
type span struct {
	base uintptr
	size uint64
	gpu  GPUMemory   // the seam that claimed the range; nil for host memory
	dev  DeviceRange // its handle for the range
	host []byte      // the whole range, for host memory

	pins atomic.Int64 // accesses in progress
	dead atomic.Bool  // retired: every later access fails with errRetired

	// Page-locking of a host span for the copy engines of the GPUMemory
	// that lands payloads in it by reference (inproc.go): where it
	// stands (dmaNone, dmaPinning, dmaPinned, dmaNever), guarded by dmaMu
	// where it changes; dmaDone closes when a pin in progress has ended.
	dmaState atomic.Uint32
	dmaMu    sync.Mutex
	dmaDone  chan struct{}
	dmaUnpin func()
}

// errRetired is the error of an access to a deregistered range.
var errRetired = errors.New("emu: memory region deregistered")

// pin starts an access; false once the span is retired. Pins nest (an
// access may pin a span its caller already pinned).
func (s *span) pin() bool {
	s.pins.Add(1)
	if s.dead.Load() {
		s.pins.Add(-1)
		return false
	}
	return true
}

func (s *span) unpin() { s.pins.Add(-1) }

// retire makes every later access fail and waits for those in progress:
// a pin either sees dead (and backs off) or is counted before dead is set
// (and retire waits for it), as both sides use sequentially consistent
// atomics.
func (s *span) retire() {
	s.dead.Store(true)
	for i := 0; s.pins.Load() != 0; i++ {
		if i < 64 {
			runtime.Gosched()
		} else {
			time.Sleep(10 * time.Microsecond)
		}
	}
}

// maxRegSize bounds one registration (the reported max_mr_size).
const maxRegSize = 1 << 46

// newSpan classifies [addr, addr+size) and, for host memory, checks with
// mincore(2) that every page of the range is mapped (EFAULT otherwise).
func newSpan(op string, addr uintptr, size uint64) (*span, error) {
	if size == 0 {
		return nil, fmt.Errorf("emu: %s: zero-length range: %w", op, syscall.EINVAL)
	}
	if size > maxRegSize {
		return nil, fmt.Errorf("emu: %s: %d bytes exceed the largest registration (2^46): %w", op, size, syscall.EINVAL)
	}
	if addr == 0 || uint64(addr)+size < uint64(addr) {
		return nil, fmt.Errorf("emu: %s: range 0x%x+%d: %w", op, addr, size, syscall.EFAULT)
	}
	if g := currentGPU(); g != nil {
		if r, ok := g.Claim(addr, size); ok {
			return &span{base: addr, size: size, gpu: g, dev: r}, nil
		}
	}
	if err := checkMapped(addr, size); err != nil {
		return nil, fmt.Errorf("emu: %s: range 0x%x+%d is not mapped host memory: %w", op, addr, size, err)
	}
	return &span{base: addr, size: size, host: hostBytes(addr, int(size))}, nil
}

var pageSize = uintptr(syscall.Getpagesize())

// checkMapped asks mincore(2) about the range, a bounded number of pages
// at a time (the result vector is one byte per page).
func checkMapped(addr uintptr, size uint64) error {
	start := addr &^ (pageSize - 1)
	end := (addr + uintptr(size) + pageSize - 1) &^ (pageSize - 1)
	if end < start {
		return syscall.EFAULT
	}
	var vec [4096]byte
	for p := start; p < end; {
		n := min((end-p)/pageSize, uintptr(len(vec)))
		_, _, e := syscall.Syscall(syscall.SYS_MINCORE, p, n*pageSize, uintptr(unsafe.Pointer(&vec[0])))
		switch e {
		case 0:
		case syscall.ENOMEM:
			return syscall.EFAULT
		default:
			return e
		}
		p += n * pageSize
	}
	return nil
}

// hostBytes views n bytes of host memory at addr. The address comes from
// the caller of a registration and is outside the Go heap by contract.
func hostBytes(addr uintptr, n int) []byte {
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return unsafe.Slice((*byte)(p), n)
}

// CopyHost copies src to dst (min(len(dst), len(src)) bytes, which it
// returns) as the emulator copies a large payload in host memory: above
// 256 KiB on several cores (GDAKI_EMU_COPY_THREADS), complete when it
// returns. The GPU adapter copies what it staged out with it.
func CopyHost(dst, src []byte) int { return hostcopy.Copy(dst, src) }

// read copies len(dst) bytes at offset off of the span.
func (s *span) read(dst []byte, off uint64) error {
	if !s.pin() {
		return errRetired
	}
	defer s.unpin()
	if s.gpu == nil {
		hostcopy.Copy(dst, s.host[off:off+uint64(len(dst))])
		return nil
	}
	return s.gpu.Copy([]DeviceCopy{{Kind: CopyToHost, Src: s.dev, SrcOff: off, Host: dst}})
}

// write copies src to offset off of the span. A payload landing in host
// memory (a WRITE, a SEND's scatter, a READ response) is the largest host
// copy of the data path: above hostcopy.Threshold it runs on several cores,
// and it is complete, every byte stored, when write returns (before the
// responder ACKs or writes a CQE for it).
func (s *span) write(off uint64, src []byte) error {
	if !s.pin() {
		return errRetired
	}
	defer s.unpin()
	if s.gpu == nil {
		hostcopy.Copy(s.host[off:off+uint64(len(src))], src)
		return nil
	}
	return s.gpu.Copy([]DeviceCopy{{Kind: CopyToDevice, Dst: s.dev, DstOff: off, Host: src}})
}

// view pins a host span and returns n bytes at off; the caller unpins it
// when done with them. ok is false for GPU memory (use read) or a retired
// span.
func (s *span) view(off, n uint64) (b []byte, ok bool) {
	if s.gpu != nil || !s.pin() {
		return nil, false
	}
	return s.host[off : off+n], true
}

// load32 reads a big-endian 32-bit word at off (8-byte DBR halves).
func (s *span) load32(off uint64) (uint32, error) {
	if s.gpu == nil {
		if !s.pin() {
			return 0, errRetired
		}
		p := (*uint32)(unsafe.Pointer(&s.host[off]))
		v := atomic.LoadUint32(p)
		s.unpin()
		return bswap32(v), nil
	}
	var b [4]byte
	if err := s.read(b[:], off); err != nil {
		return 0, err
	}
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]), nil
}

// storeLast writes a CQE to host memory so that its last dword
// (wqe_counter, signature, op_own) becomes visible after the rest: bytes
// 0..59 first, then bytes 60..63 in one atomic store. (CQEs in device
// memory go through cq.flush, in batches.)
func (s *span) storeLast(off uint64, cqe []byte) error {
	if !s.pin() {
		return errRetired
	}
	defer s.unpin()
	copy(s.host[off:off+60], cqe[:60])
	p := (*uint32)(unsafe.Pointer(&s.host[off+60]))
	atomic.StoreUint32(p, *(*uint32)(unsafe.Pointer(&cqe[60])))
	return nil
}

// batch gathers copies to and from device memory, to run them with one
// Copy call. Each span it touches is pinned while the batch runs (never
// across a wait for the network), so deregistration waits for it; a span
// retired before the batch runs fails it with errRetired.
type batch struct {
	ops   []DeviceCopy
	spans []*span
}

// reset empties the batch, keeping its memory.
func (b *batch) reset() {
	clear(b.ops)
	b.ops = b.ops[:0]
	clear(b.spans)
	b.spans = b.spans[:0]
}

func (b *batch) empty() bool { return len(b.ops) == 0 }

func (b *batch) use(s *span) { b.spans = addSpan(b.spans, s) }

// addSpan appends s to spans unless it is there.
func addSpan(spans []*span, s *span) []*span {
	for _, t := range spans {
		if t == s {
			return spans
		}
	}
	return append(spans, s)
}

// pinAll pins every span of spans, or none: false when one was retired.
func pinAll(spans []*span) bool {
	for i, s := range spans {
		if !s.pin() {
			unpinAll(spans[:i])
			return false
		}
	}
	return true
}

// unpinAll undoes pinAll.
func unpinAll(spans []*span) {
	for _, s := range spans {
		s.unpin()
	}
}

// read adds a copy of len(dst) bytes at offset off of device span s.
func (b *batch) read(s *span, off uint64, dst []byte) {
	b.use(s)
	b.ops = append(b.ops, DeviceCopy{Kind: CopyToHost, Src: s.dev, SrcOff: off, Host: dst})
}

// write adds a copy of src to offset off of device span s.
func (b *batch) write(s *span, off uint64, src []byte) {
	b.use(s)
	b.ops = append(b.ops, DeviceCopy{Kind: CopyToDevice, Dst: s.dev, DstOff: off, Host: src})
}

// run pins the batch's spans, runs its copies and unpins them; the batch is
// empty afterwards. Every span of a batch belongs to one GPUMemory.
func (b *batch) run() error {
	if len(b.ops) == 0 {
		return nil
	}
	defer b.reset()
	if !pinAll(b.spans) {
		return errRetired
	}
	err := b.spans[0].gpu.Copy(b.ops)
	unpinAll(b.spans)
	return err
}

func bswap32(v uint32) uint32 {
	// The host is little-endian (amd64, arm64); PRM words are big-endian.
	return v>>24 | v>>8&0xff00 | v<<8&0xff0000 | v<<24
}
