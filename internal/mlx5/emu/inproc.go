package emu

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// Large payloads between two NICs of one process. A WRITE or SEND frame of
// inPlaceMin (256 KiB) bytes or more whose bytes all lie in device memory
// of one GPUMemory, sent to a NIC of this process, carries its payload by
// reference (wire.Frame.Ref) instead of bytes read ahead: the responder,
// once it has checked the request as it checks any (QP state, PSN, rkey,
// access, bounds, a receive WQE or an RNR NAK), moves the bytes with one
// batch of copies straight from the requester's buffer to their
// destination: device to host into host memory, device to device into
// device memory of the same GPUMemory. The path it replaces moves them
// twice, one after the other on one goroutine: a device-to-host copy into
// the requester's read-ahead buffer, then a host copy into the
// destination.
//
// A device-to-host copy into host memory that is not page-locked goes
// through the GPUMemory's own staging buffer (a second copy, by the CPU).
// So host MRs where such payloads may land are page-locked through the
// GPUMemory when it is a HostPinner, as a ConnectX's registration pins
// the pages it will DMA to: a writable host MR of inPlaceMin bytes or
// more (up to pinMRMax) is pinned when it is registered, and RegMR
// returns once the pin is through (mr.go, pinAtReg); one registered while
// no such GPUMemory was installed is pinned in the background when the
// first payload by reference lands in it (wantDMA; those landings are
// staged until the pin is through). Later landings move by DMA straight
// into the MR. A pin that fails (a read-only mapping, the GPUMemory gone)
// is not tried again, and the landings stay staged. Deregistration unpins
// the MR before it returns, after a pin still in progress has ended. Pinned
// memory cannot be registered with CUDA again: a program that maps an MR's
// memory into the GPU itself (cuMemHostRegister) does so before it
// registers the MR, and the GPUMemory then takes that registration as the
// pin (internal/emugpu).
//
// What stays as on a ConnectX: the requester pins the spans of the
// frame's source pieces for the whole delivery (pin, memory.go), so a
// buffer deregistered before the frame leaves fails the WQE with
// LOCAL_PROT_ERR without a frame, and one deregistered meanwhile waits
// for the delivery to end, as for any access in progress; the responder
// pins its destination spans for the copy and NAKs a deregistered one as
// a remote access error, before a byte lands; a failed copy is NAKed as a
// remote operation error, as a failed write at the responder is. A
// reference never leaves the process (wire.ErrNotLocal: the frame then goes
// the usual way), so frames to another process or over TCP are unchanged.
//
// GDAKI_EMU_BYREF=0 turns payloads by reference off (the read-ahead path
// for every payload); GDAKI_EMU_PIN_MR=0 keeps them but never page-locks
// an MR (landings into host memory are staged), for comparisons.

// pinMRMax bounds the host MRs page-locked for landings by reference: a
// pin faults in and locks every page, which for a few GiB takes seconds
// and keeps the memory from the rest of the host.
const pinMRMax = 4 << 30

var (
	byRefOn = envOn("GDAKI_EMU_BYREF")
	pinMROn = envOn("GDAKI_EMU_PIN_MR")

	byRefFrames    atomic.Uint64 // frames delivered with a payload by reference
	mrPins         atomic.Uint64 // host MRs page-locked for landings by reference
	mrPinFailures  atomic.Uint64 // pins that failed (the landings stay staged)
	byRefBounced   atomic.Uint64 // landings read into a host buffer first (see landTo)
	errRefGone     = errors.New("emu: payload by reference used after its frame's delivery")
	errRefTooShort = errors.New("emu: payload by reference: the destination is shorter than the payload")
)

// envOn is an on/off switch from the environment: on unless "0".
func envOn(name string) *atomic.Bool {
	b := new(atomic.Bool)
	b.Store(os.Getenv(name) != "0")
	return b
}

// ByRefStats counts the one-process path for large payloads since the
// process started.
type ByRefStats struct {
	Frames      uint64 // frames delivered with their payload by reference (one accepted lands with one batch of copies)
	Bounced     uint64 // landings by reference through a host buffer (another GPUMemory, overlapping ranges)
	MRsPinned   uint64 // host MRs page-locked so that landings move by DMA
	PinFailures uint64 // page-locks that failed (those MRs' landings stay staged)
}

// ByRefCounts returns the counters of the one-process path for large
// payloads.
func ByRefCounts() ByRefStats {
	return ByRefStats{Frames: byRefFrames.Load(), Bounced: byRefBounced.Load(), MRsPinned: mrPins.Load(), PinFailures: mrPinFailures.Load()}
}

// Sub returns the counts of the interval from o to s.
func (s ByRefStats) Sub(o ByRefStats) ByRefStats {
	return ByRefStats{Frames: s.Frames - o.Frames, Bounced: s.Bounced - o.Bounced,
		MRsPinned: s.MRsPinned - o.MRsPinned, PinFailures: s.PinFailures - o.PinFailures}
}

// refPayload is the payload of a frame sent by reference: the n message
// bytes at offset off of a WQE whose pieces (src, the WQE's resolved
// SGEs) all lie in device memory of g. It is the requester's, used by the
// responder on the requester's goroutine during the delivery (live), with
// the source spans pinned by the requester.
type refPayload struct {
	g    GPUMemory
	src  []target
	off  uint64
	n    int
	live bool

	ops   []DeviceCopy // the landing's copies (scratch)
	spans []*span      // the landing's destination spans (scratch)
	rb    batch        // ReadAt's copies
}

// Len is the payload's length (wire.PayloadRef).
func (p *refPayload) Len() int { return p.n }

// ReadAt copies len(b) payload bytes at off into b with one batch of
// copies (wire.PayloadRef): what a handler that does not know the
// reference does, and the landing's way through a host buffer.
func (p *refPayload) ReadAt(b []byte, off int64) (int, error) {
	if !p.live {
		return 0, errRefGone
	}
	if off < 0 || off > int64(p.n) || int64(len(b)) > int64(p.n)-off {
		return 0, fmt.Errorf("emu: payload by reference: %d bytes at %d of %d", len(b), off, p.n)
	}
	rb := &p.rb
	done := 0
	walk(p.src, p.off+uint64(off), uint64(len(b)), func(t target, at, k uint64) {
		rb.read(t.mem, t.off+at, b[done:done+int(k)])
		done += int(k)
	})
	if err := rb.run(); err != nil {
		return 0, err
	}
	return len(b), nil
}

// walk calls f for each piece of the n message bytes at offset off of the
// targets: the target, the offset in it and the piece's length.
func walk(tg []target, off, n uint64, f func(t target, at, k uint64)) {
	for _, t := range tg {
		if n == 0 {
			return
		}
		if off >= t.len {
			off -= t.len
			continue
		}
		k := min(t.len-off, n)
		f(t, off, k)
		n -= k
		off = 0
	}
}

// sendsLargeDirect reports whether a large payload in device memory for
// the peer at gid leaves without being read ahead: by reference to a NIC
// of this process, or into the shared-memory ring of the connection to
// another process.
func (q *qp) sendsLargeDirect(gid wire.GID) bool {
	return (byRefOn.Load() && q.nic.port.InProcess(gid)) || q.nic.port.CanSendInPlace(gid)
}

// sendByRef sends frame f with the n message bytes at off of w by
// reference, when the peer is a NIC of this process and the bytes all lie
// in device memory of one GPUMemory; placed reports whether it tried (err
// is then Send's, or errGather for a source deregistered before the frame
// left). The source spans stay pinned while the responder lands the bytes.
func (q *qp) sendByRef(w *wqe, f *wire.Frame, off, n uint64, last bool) (placed bool, err error) {
	if !byRefOn.Load() || !q.nic.port.InProcess(wire.GID(q.rgid)) {
		return false, nil
	}
	r := &q.req
	tg := r.tg[:w.nsge]
	var g GPUMemory
	mixed := false
	walk(tg, off, n, func(t target, _, _ uint64) {
		if t.mem.gpu == nil || (g != nil && t.mem.gpu != g) {
			mixed = true
		}
		g = t.mem.gpu
	})
	if mixed || g == nil {
		return false, nil
	}
	if !pinPieces(tg, off, n) {
		return true, errGather
	}
	defer unpinPieces(tg, off, n)
	p := &r.ref
	p.g, p.src, p.off, p.n, p.live = g, tg, off, int(n), true
	if last {
		q.traceStage(stagePayload, w.idx)
	}
	f.Ref = p
	err = q.nic.port.Send(f)
	f.Ref = nil
	p.g, p.src, p.live = nil, nil, false
	if err == wire.ErrNotLocal {
		return false, nil // the peer's port went away meanwhile: the usual way
	}
	if err == nil {
		byRefFrames.Add(1)
	}
	return true, err
}

// pinPieces pins the spans of the n message bytes at off of tg, one pin
// per piece; false (and nothing pinned) when one was retired.
func pinPieces(tg []target, off, n uint64) bool {
	var buf [maxSGEPerWQE]*span
	pieces := buf[:0]
	walk(tg, off, n, func(t target, _, _ uint64) { pieces = append(pieces, t.mem) })
	return pinAll(pieces)
}

// unpinPieces undoes pinPieces.
func unpinPieces(tg []target, off, n uint64) {
	walk(tg, off, n, func(t target, _, _ uint64) { t.mem.unpin() })
}

// landWrite lands the payload of a WRITE frame at offset off of mem.
func landWrite(mem *span, off uint64, f *wire.Frame) error {
	if f.Ref == nil {
		return mem.write(off, f.Payload)
	}
	t := [1]target{{mem: mem, off: off, len: uint64(f.Ref.Len())}}
	return landRef(t[:], 0, f.Ref)
}

// land lands the payload of frame f at message offset off across the
// targets dst (a SEND's receive buffers); it stops at the first target
// that fails (a deregistered buffer).
func land(dst []target, off uint64, f *wire.Frame) error {
	if f.Ref == nil {
		return scatter(dst, off, f.Payload)
	}
	return landRef(dst, off, f.Ref)
}

// landRef lands a payload by reference: one batch of copies from the
// requester's memory for the emulator's own references, the reference's
// ReadAt into a host buffer and then the targets for any other.
func landRef(dst []target, off uint64, ref wire.PayloadRef) error {
	if p, ok := ref.(*refPayload); ok {
		return p.landTo(dst, off)
	}
	buf := make([]byte, ref.Len())
	if _, err := ref.ReadAt(buf, 0); err != nil {
		return err
	}
	return scatter(dst, off, buf)
}

// landTo copies the payload to message offset off of the targets dst with
// one batch: device to host into host memory, device to device into
// device memory of the payload's GPUMemory. A target in another
// GPUMemory, or device ranges that overlap (a loopback WRITE onto its own
// source, which a device-to-device copy does not order), take the way
// through a host buffer (ReadAt, then the targets). The destination spans
// are pinned for the batch (a retired one fails it with errRetired before
// a byte lands), and a host one asks to be page-locked (wantDMA).
func (p *refPayload) landTo(dst []target, off uint64) error {
	if !p.live {
		return errRefGone
	}
	ops, spans := p.ops[:0], p.spans[:0]
	defer func() {
		clear(ops)
		clear(spans)
		p.ops, p.spans = ops[:0], spans[:0]
	}()
	si, so := 0, p.off // the source piece and the offset in it
	for si < len(p.src) && so >= p.src[si].len {
		so -= p.src[si].len
		si++
	}
	di, do := 0, off
	for di < len(dst) && do >= dst[di].len {
		do -= dst[di].len
		di++
	}
	bounce := false
	for left := uint64(p.n); left > 0; {
		if si == len(p.src) || di == len(dst) {
			return errRefTooShort
		}
		s, d := p.src[si], dst[di]
		if k := min(left, s.len-so, d.len-do); k > 0 {
			sa, da := s.mem.base+uintptr(s.off+so), d.mem.base+uintptr(d.off+do)
			switch {
			case d.mem.gpu == nil:
				ops = append(ops, DeviceCopy{Kind: CopyToHost, Src: s.mem.dev, SrcOff: s.off + so, Host: d.mem.host[d.off+do : d.off+do+k]})
			case d.mem.gpu == p.g && (sa+uintptr(k) <= da || da+uintptr(k) <= sa):
				ops = append(ops, DeviceCopy{Kind: CopyDeviceToDevice, Dst: d.mem.dev, DstOff: d.off + do, Src: s.mem.dev, SrcOff: s.off + so, Len: k})
			default:
				bounce = true
			}
			spans = addSpan(spans, d.mem)
			so, do, left = so+k, do+k, left-k
		}
		if so == s.len {
			si, so = si+1, 0
		}
		if do == d.len {
			di, do = di+1, 0
		}
	}
	if bounce {
		byRefBounced.Add(1)
		buf := make([]byte, p.n)
		if _, err := p.ReadAt(buf, 0); err != nil {
			return err
		}
		return scatter(dst, off, buf)
	}
	if !pinAll(spans) {
		return errRetired
	}
	for _, s := range spans {
		if s.gpu == nil {
			s.wantDMA(p.g)
		}
	}
	err := p.g.Copy(ops)
	unpinAll(spans)
	return err
}

// Page-locking states of a span (span.dmaState).
const (
	dmaNone    = iota // not asked for
	dmaPinning        // a pin is in progress
	dmaPinned         // page-locked: dmaUnpin undoes it
	dmaNever          // not pinned, and never to be (failed, too large, no pinner, deregistered)
)

// wantDMA asks, once, for the host span s to be page-locked through g (a
// HostPinner) so that g's copies into it move by DMA; the pin runs on a
// goroutine of its own, since locking a large range takes a while. Called
// with s pinned (a live access).
func (s *span) wantDMA(g GPUMemory) {
	if s.gpu != nil || s.dmaState.Load() != dmaNone {
		return
	}
	s.dmaMu.Lock()
	defer s.dmaMu.Unlock()
	if s.dmaState.Load() != dmaNone {
		return
	}
	hp, ok := g.(HostPinner)
	if !ok || !pinMROn.Load() || s.size > pinMRMax {
		s.dmaState.Store(dmaNever)
		return
	}
	s.dmaState.Store(dmaPinning)
	done := make(chan struct{})
	s.dmaDone = done
	go s.pinDMA(hp, done)
}

// pinForDMA is wantDMA, waiting for the pin to be through (MR
// registration).
func (s *span) pinForDMA(g GPUMemory) {
	s.wantDMA(g)
	s.dmaMu.Lock()
	done, st := s.dmaDone, s.dmaState.Load()
	s.dmaMu.Unlock()
	if st == dmaPinning {
		<-done
	}
}

// pinDMA page-locks the span (no lock held while it runs) and records the
// result, unless the span was deregistered meanwhile: then it unlocks it
// again at once. It closes done when it is through.
func (s *span) pinDMA(hp HostPinner, done chan struct{}) {
	defer close(done)
	unpin, err := hp.PinHost(s.host)
	s.dmaMu.Lock()
	defer s.dmaMu.Unlock()
	switch {
	case s.dmaState.Load() != dmaPinning: // dropDMA ran: it waits for done
		if err == nil {
			unpin()
		}
	case err != nil:
		mrPinFailures.Add(1)
		s.dmaState.Store(dmaNever)
	default:
		mrPins.Add(1)
		s.dmaUnpin = unpin
		s.dmaState.Store(dmaPinned)
	}
}

// dropDMA undoes wantDMA, once the span is retired (MR deregistration):
// it waits for a pin in progress and unlocks what was locked, so that the
// caller may unmap the memory when Dereg returns. Idempotent.
func (s *span) dropDMA() {
	s.dmaMu.Lock()
	st := s.dmaState.Swap(dmaNever)
	done, unpin := s.dmaDone, s.dmaUnpin
	s.dmaDone, s.dmaUnpin = nil, nil
	s.dmaMu.Unlock()
	if st == dmaPinning {
		<-done // pinDMA sees dmaNever and unlocks what it locked
	}
	if unpin != nil {
		unpin()
	}
}
