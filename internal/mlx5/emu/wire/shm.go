package wire

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5/emu/internal/hostcopy"
)

// Shared-memory links. When a port dials a peer that runs on the same host
// (in another process), the connection can carry its frames through shared
// memory instead of the socket: two single-producer rings in one segment,
// requests from the dialling port to the accepting one and responses back.
// The TCP connection stays: it carries the setup (control.go), and its end
// ends the link. Everything the package documentation says of a connection
// holds for a link: Send never waits (a frame that does not fit in the ring
// is ErrCongested), each destination has its own bounded ring, responses
// travel on the link of their request, and what arrives is admitted against
// the peer the connection was opened for (conn.admit).
//
// The segment is a memfd (memfd_create) sealed against shrinking and
// growing, so that no process can make the other's mapping fault. The
// dialling side creates and maps it and offers it on the connection (its
// pid, the descriptor, the sizes and a random token); the accepting side
// opens it through /proc/<pid>/fd/<fd> (which works only on the same host,
// for a process it may read), checks the seals, the size and the token in
// the segment's header, maps it and accepts; anything else is refused, and
// the connection goes on over TCP.
//
// Layout (offsets in bytes, R the ring size, a power of two):
//
//	0         header: "GDAKISHM", version 4, ring size 4, token 16
//	4096      ring 0 (dialler -> acceptor) control page
//	8192      ring 0 data, R bytes
//	8192+R    ring 1 (acceptor -> dialler) control page
//	12288+R   ring 1 data, R bytes
//
// A control page holds the producer position (tail, offset 0), the consumer
// position (head, offset 64), the consumer's sleeping flag (128), the futex
// word it sleeps on (132) and a closed flag (192); positions count bytes
// since the start and grow without wrapping. A record in the data area is
// an eight-byte head (the encoded frame's length, little-endian, and four
// bytes zero) followed by the frame as encoded on a stream, padded to a
// multiple of eight; a record never wraps: a head whose length is
// shmWrapMark sends the consumer to the start of the area. The consumer
// treats everything in the segment as hostile (see ring.next); a link whose
// ring breaks a rule is closed.

// Ring sizes.
const (
	// DefaultShmRing is the size of each ring of a link.
	DefaultShmRing = 8 << 20
	minShmRing     = 64 << 10
	maxShmRing     = 256 << 20
)

const (
	shmPage     = 4096
	shmHdrMagic = "GDAKISHM"
	shmVersion  = 1
	shmRecHead  = 8
	shmWrapMark = 0xffffffff

	// Control page offsets.
	offTail     = 0
	offHead     = 64
	offSleeping = 128
	offSeq      = 132
	offClosed   = 192

	// memfd and seals (linux/memfd.h, linux/fcntl.h).
	mfdCloexec      = 0x1
	mfdAllowSealing = 0x2
	fAddSeals       = 1033
	fGetSeals       = 1034
	sealSeal        = 0x1
	sealShrink      = 0x2
	sealGrow        = 0x4

	// futex operations (linux/futex.h), shared (not private) across processes.
	futexWait = 0
	futexWake = 1
)

var errShmBroken = errors.New("wire: shared-memory ring broke its rules (peer bug or hostile peer)")

// segmentSize is the size of a segment with rings of r bytes.
func segmentSize(r int) int { return 3*shmPage + 2*r }

func validRingSize(r uint64) bool {
	return r >= minShmRing && r <= maxShmRing && r&(r-1) == 0
}

// segment is one mapped shared-memory segment.
type segment struct {
	mem   []byte
	ring  int
	token [16]byte
	rings [2]ring
}

// ring is one direction of a segment.
type ring struct {
	ctl  []byte
	data []byte
}

func (r *ring) word64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&r.ctl[off])) }
func (r *ring) word32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&r.ctl[off])) }

func (s *segment) layout() {
	at := shmPage
	for i := range s.rings {
		s.rings[i].ctl = s.mem[at : at+shmPage]
		s.rings[i].data = s.mem[at+shmPage : at+shmPage+s.ring]
		at += shmPage + s.ring
	}
}

// createSegment makes, seals and maps a segment with rings of r bytes; it
// returns the segment and the memfd (the caller closes it once the peer
// has answered).
func createSegment(r int) (*segment, int, error) {
	if sysMemfdCreate < 0 {
		return nil, -1, fmt.Errorf("wire: shared memory: memfd_create unknown on %s", runtime.GOARCH)
	}
	name := []byte("gdaki-wire\x00")
	fd, _, e := syscall.Syscall(uintptr(sysMemfdCreate), uintptr(unsafe.Pointer(&name[0])), mfdCloexec|mfdAllowSealing, 0)
	if e != 0 {
		return nil, -1, fmt.Errorf("wire: shared memory: memfd_create: %w", e)
	}
	size := segmentSize(r)
	fail := func(op string, err error) (*segment, int, error) {
		syscall.Close(int(fd))
		return nil, -1, fmt.Errorf("wire: shared memory: %s: %w", op, err)
	}
	if err := syscall.Ftruncate(int(fd), int64(size)); err != nil {
		return fail("ftruncate", err)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, fAddSeals, sealShrink|sealGrow|sealSeal); e != 0 {
		return fail("seal", e)
	}
	mem, err := syscall.Mmap(int(fd), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fail("mmap", err)
	}
	s := &segment{mem: mem, ring: r}
	if _, err := rand.Read(s.token[:]); err != nil {
		syscall.Munmap(mem)
		return fail("token", err)
	}
	copy(mem[0:8], shmHdrMagic)
	binary.LittleEndian.PutUint32(mem[8:12], shmVersion)
	binary.LittleEndian.PutUint32(mem[12:16], uint32(r))
	copy(mem[16:32], s.token[:])
	s.layout()
	return s, int(fd), nil
}

// openSegment maps the segment an offer names, after checking that it is
// a sealed memfd of the offered size whose header carries the offer's
// token.
func openSegment(o control) (*segment, error) {
	if !validRingSize(uint64(o.ring)) || o.size != uint64(segmentSize(int(o.ring))) {
		return nil, fmt.Errorf("rings of %d bytes in %d: not a valid layout", o.ring, o.size)
	}
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/%d", o.pid, o.fd), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	if uint64(st.Size) != o.size {
		return nil, fmt.Errorf("segment of %d bytes, offered %d", st.Size, o.size)
	}
	seals, _, e := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), fGetSeals, 0)
	if e != 0 {
		return nil, fmt.Errorf("seals: %w", e)
	}
	if seals&(sealShrink|sealGrow) != sealShrink|sealGrow {
		return nil, fmt.Errorf("segment not sealed against resizing (seals %#x)", seals)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(o.size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	s := &segment{mem: mem, ring: int(o.ring), token: o.token}
	if string(mem[0:8]) != shmHdrMagic || binary.LittleEndian.Uint32(mem[8:12]) != shmVersion ||
		binary.LittleEndian.Uint32(mem[12:16]) != o.ring || !bytes.Equal(mem[16:32], o.token[:]) {
		syscall.Munmap(mem)
		return nil, fmt.Errorf("segment header does not match the offer")
	}
	s.layout()
	return s, nil
}

// close runs the map hook's release and unmaps the segment.
func (l *link) close() {
	if l.release != nil {
		l.release()
		l.release = nil
	}
	l.seg.close()
}

func (s *segment) close() {
	if s.mem != nil {
		syscall.Munmap(s.mem)
		s.mem = nil
	}
}

// link is one side of a shared-memory link: it produces into out and
// consumes in.
type link struct {
	seg     *segment
	release func() // the MapHook's, run before the segment is unmapped
	out, in *ring

	// The producer's fields and the consumer's are on cache lines of their
	// own (the pads): a sender (the engine) writes its own per frame while
	// this process's reader of the link spins on its own, and on one line
	// each store would take the line from the other core and each look
	// bring it back.
	_ [64]byte

	tail uint64 // out's producer position; the conn's mu

	// The other side's position as last read (and checked): the producer
	// reads the consumer's head again only when the ring looks full by the
	// one it has, the consumer the producer's tail only when it has caught
	// up with the one it has. Each read of a position the other side has
	// just stored is a cache miss between two cores, two or three per frame
	// otherwise; a stale position only underestimates what the other side
	// has done.
	seenHead uint64 // the conn's mu
	held     int    // records written after the published tail (Frame.Hold); the conn's mu

	_ [64]byte

	head     uint64 // in's consumer position; the reader goroutine
	seenTail uint64 // the reader goroutine
	unshown  int    // records released since head was last stored (done); the reader goroutine

	_ [64]byte
}

// shmHoldMax bounds the records a link writes without publishing them
// (Frame.Hold): a burst's frames reach the reader in groups, each one
// store of the tail (a cache miss for the reader) instead of one per frame.
const shmHoldMax = 16

// shmHoldBytes is the largest record a link holds back: a large frame is
// published at once, so that the reader copies it out while the next one
// is written.
const shmHoldBytes = 4 << 10

func newLink(s *segment, dialer bool) *link {
	l := &link{seg: s, out: &s.rings[0], in: &s.rings[1]}
	if !dialer {
		l.out, l.in = l.in, l.out
	}
	return l
}

// put writes f into the out ring; the conn's mu held. It returns
// ErrCongested when the ring has no room for it now, errShmBroken when the
// consumer's position is impossible.
func (l *link) put(f *Frame) error {
	return l.putFill(f, len(f.Payload), func(p []byte) error {
		hostcopy.Copy(p, f.Payload)
		return nil
	})
}

// putFill writes f with a payload of n bytes into the out ring: its headers,
// then fill writes the payload in place; the record is published only when
// fill returns nil (its error is returned and nothing is sent otherwise).
// The conn's mu held. Errors as put.
func (l *link) putFill(f *Frame, n int, fill func(payload []byte) error) error {
	r := l.out
	size := uint64(len(r.data))
	flen := HeaderLen + f.Opcode.extLen() + n
	rec := uint64(shmRecHead + (flen+7)&^7)
	tail := l.tail
	o := tail & (size - 1)
	need := rec
	if o+rec > size {
		need += size - o // the wrap mark and the rest of the area
	}
	if tail-l.seenHead+need > size {
		head := atomic.LoadUint64(r.word64(offHead))
		used := tail - head
		if used > size || head&7 != 0 {
			return errShmBroken
		}
		l.seenHead = head
		if used+need > size {
			return ErrCongested
		}
	}
	if o+rec > size {
		binary.LittleEndian.PutUint32(r.data[o:], shmWrapMark)
		tail += size - o
		o = 0
	}
	binary.LittleEndian.PutUint64(r.data[o:], uint64(flen))
	if err := fill(f.encodeHead(r.data[o+shmRecHead:o+shmRecHead+uint64(flen)], n)); err != nil {
		return err // nothing published: the wrap mark, if any, is past the tail
	}
	l.tail = tail + rec
	if f.Hold && rec <= shmHoldBytes && l.held < shmHoldMax-1 {
		l.held++
		return nil // published by the next frame without Hold, or by publish
	}
	l.publish()
	return nil
}

// publish stores the producer position, making every record written so
// far visible to the reader, and wakes the reader if it sleeps; the conn's
// mu held.
func (l *link) publish() {
	r := l.out
	l.held = 0
	atomic.StoreUint64(r.word64(offTail), l.tail)
	// Wake a sleeping consumer, once per sleep: the first producer to see
	// the flag clears it.
	if atomic.LoadUint32(r.word32(offSleeping)) != 0 && atomic.CompareAndSwapUint32(r.word32(offSleeping), 1, 0) {
		atomic.AddUint32(r.word32(offSeq), 1)
		futex(r.word32(offSeq), futexWake, 1, 0)
	}
}

// putRaw moves encoded frames (a TCP queue's bytes, frames back to back)
// into the out ring, for the frames a connection queued before its link was
// up; the conn's mu held.
func (l *link) putRaw(b []byte) error {
	var f Frame
	for len(b) > 0 {
		n, err := FrameLen(b)
		if err != nil || n > len(b) {
			return errShmBroken
		}
		if err := DecodeInto(&f, b[:n]); err != nil {
			return err
		}
		if err := l.put(&f); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// next returns the encoded frame at the consumer position, or nil when the
// ring is empty. The bytes stay the peer's to write: the caller decodes
// them at once and may read the payload only until it calls done. Every
// position and length is checked against the ring: a producer that breaks
// a rule gives errShmBroken.
func (l *link) next() ([]byte, error) {
	r := l.in
	size := uint64(len(r.data))
	for {
		tail := l.seenTail
		if tail == l.head {
			if tail = atomic.LoadUint64(r.word64(offTail)); tail == l.head {
				return nil, nil
			}
			l.seenTail = tail
		}
		avail := tail - l.head
		if avail > size || avail < shmRecHead || tail&7 != 0 {
			return nil, errShmBroken
		}
		o := l.head & (size - 1)
		n := binary.LittleEndian.Uint32(r.data[o:])
		if n == shmWrapMark {
			skip := size - o
			if skip > avail {
				return nil, errShmBroken
			}
			l.head += skip
			l.showHead()
			continue
		}
		rec := uint64(shmRecHead) + (uint64(n)+7)&^7
		if n < HeaderLen || n > MaxFrameLen || rec > avail || o+rec > size {
			return nil, errShmBroken
		}
		return r.data[o+shmRecHead : o+shmRecHead+uint64(n)], nil
	}
}

// more reports whether the ring already holds the record after the one of
// n bytes that next returned, for a frame between the same QPs (Frame.More).
// Like next it trusts nothing in the ring: a wrong answer only delays or
// hastens an ACK to the peer that wrote it.
func (l *link) more(n int, dst, src uint32) bool {
	r := l.in
	size := uint64(len(r.data))
	at := l.head + uint64(shmRecHead) + (uint64(n)+7)&^7
	tail := l.seenTail
	if tail-at > size || tail-at < shmRecHead+sameQPsLen {
		if tail = atomic.LoadUint64(r.word64(offTail)); tail-at > size || tail-at < shmRecHead+sameQPsLen {
			return false
		}
		l.seenTail = tail
	}
	o := at & (size - 1)
	if o+shmRecHead+sameQPsLen > size {
		return false // a record at the start of the area: not worth a look
	}
	if k := binary.LittleEndian.Uint32(r.data[o:]); k == shmWrapMark || k < HeaderLen || uint64(k)+shmRecHead > tail-at {
		return false // a wrap mark (stale bytes after it), or not all there
	}
	return sameQPs(r.data[o+shmRecHead:o+shmRecHead+sameQPsLen], dst, src)
}

// done releases the record of n bytes that next returned, and stores the
// consumer position for the producer.
func (l *link) done(n int) {
	l.consume(n)
	l.showHead()
}

// consume is done for a reader that goes on to the next record: the
// position is stored (showHead) at once after a large record, so that the
// producer may write the next while this one's payload is being copied,
// otherwise every shmHoldMax records. The producer reads it only when the
// ring looks full by the position it has, and each store is a full
// barrier; the reader stores it at the end of every burst as well, before
// it waits.
func (l *link) consume(n int) {
	rec := shmRecHead + (n+7)&^7
	l.head += uint64(rec)
	if l.unshown++; rec > shmHoldBytes || l.unshown >= shmHoldMax {
		l.showHead()
	}
}

// showHead stores the consumer position for the producer.
func (l *link) showHead() {
	l.unshown = 0
	atomic.StoreUint64(l.in.word64(offHead), l.head)
}

// sleep waits for the producer of in to publish something, for at most d:
// it announces the sleep, looks once more, and waits on the futex word the
// producer bumps (clearing the flag) after publishing while the flag is
// set. A producer that stores its position and then reads the flag, and a
// consumer that stores the flag and then reads the position (sequentially
// consistent atomics, in shared memory as in one process), cannot both
// miss the other.
func (l *link) sleep(d time.Duration) {
	r := l.in
	seq := atomic.LoadUint32(r.word32(offSeq))
	atomic.StoreUint32(r.word32(offSleeping), 1)
	if atomic.LoadUint64(r.word64(offTail)) == l.head && atomic.LoadUint32(r.word32(offClosed)) == 0 {
		futex(r.word32(offSeq), futexWait, seq, d)
	}
	atomic.StoreUint32(r.word32(offSleeping), 0)
}

// markClosed tells the peer, through both rings, that this side is gone,
// and wakes whichever of the two readers sleeps.
func (l *link) markClosed() {
	for _, r := range []*ring{l.out, l.in} {
		atomic.StoreUint32(r.word32(offClosed), 1)
		atomic.AddUint32(r.word32(offSeq), 1)
		futex(r.word32(offSeq), futexWake, 1<<30, 0)
	}
}

func (l *link) peerClosed() bool { return atomic.LoadUint32(l.in.word32(offClosed)) != 0 }

// futex waits on or wakes the 32-bit word at p (shared, across processes).
func futex(p *uint32, op int, val uint32, timeout time.Duration) {
	var ts *syscall.Timespec
	if timeout > 0 {
		t := syscall.NsecToTimespec(int64(timeout))
		ts = &t
	}
	syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(p)), uintptr(op), uintptr(val), uintptr(unsafe.Pointer(ts)), 0, 0)
}
