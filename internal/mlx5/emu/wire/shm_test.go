package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Frames between two ports of one process that treat each other as remote
// (ForceShm) travel on a shared-memory link set up on their connection:
// requests in order, responses back on the request's link, admitted as on
// TCP, and the counters say so.
func TestShmDelivery(t *testing.T) {
	noLeak(t)
	got := make(collector, 64)
	resp := make(collector, 256)
	var mapped, released atomic.Int64
	hook := func(mem []byte) func() {
		if len(mem) != segmentSize(DefaultShmRing) {
			t.Errorf("map hook got %d bytes", len(mem))
		}
		mapped.Add(1)
		return func() { released.Add(1) }
	}
	t.Cleanup(func() {
		// After both ports closed (cleanups run last first): every mapping released.
		if mapped.Load() != 2 || released.Load() != 2 {
			t.Errorf("map hook: %d mapped, %d released; want 2 and 2", mapped.Load(), released.Load())
		}
	})
	a := listen(t, Config{ForceShm: true, Handler: resp.handle, MapHook: hook})
	var b *Port
	b = listen(t, Config{ForceShm: true, MapHook: hook, Handler: func(f *Frame) { got.handle(f); replier(&b)(f) }})
	nReq, nResp := exchangeAll(t, a, b, got, resp)
	sa, sb := a.Stats(), b.Stats()
	assert.Equal(t, uint64(1), sa.SharedMemory, "the dialling side's link")
	assert.Equal(t, uint64(1), sb.SharedMemory, "the accepting side's link")
	assert.Equal(t, uint64(1), sa.Dials)
	assert.Equal(t, uint64(nReq), sb.Received)
	assert.Equal(t, uint64(nReq*nResp), sa.Received)
	assert.Zero(t, sa.Rejected+sb.Rejected+sa.DecodeErrors+sb.DecodeErrors)
}

// Order holds per sender, also for frames sent while the link was being
// set up (they were queued for the socket and move into the ring first).
func TestShmOrdering(t *testing.T) {
	noLeak(t)
	for _, senders := range []int{1, 8} {
		t.Run(fmt.Sprintf("%d senders", senders), func(t *testing.T) {
			o := &order{next: map[uint32]uint32{}}
			b := listen(t, Config{ForceShm: true, Handler: o.handle})
			a := listen(t, Config{ForceShm: true})
			const per = 5000
			done := make(chan error, senders)
			for s := 0; s < senders; s++ {
				go func(s int) {
					f := Frame{Opcode: OpWriteOnly, DstGID: b.GID(), SrcGID: a.GID(), SrcQPN: uint32(s), Payload: make([]byte, 64)}
					for i := 0; i < per; {
						f.PSN = uint32(i)
						err := a.Send(&f)
						if err == ErrCongested {
							time.Sleep(10 * time.Microsecond)
							continue // as the RC engine does: the same frame again later
						}
						if err != nil {
							done <- err
							return
						}
						i++
					}
					done <- nil
				}(s)
			}
			for s := 0; s < senders; s++ {
				require.NoError(t, <-done)
			}
			require.Eventually(t, func() bool { return o.n.Load() == int64(senders*per) }, 10*time.Second, time.Millisecond)
			assert.Zero(t, o.bad.Load(), "frames out of order")
			assert.Equal(t, uint64(1), a.Stats().SharedMemory)
		})
	}
}

// A port that does not take shared memory refuses the offer, and the
// connection goes on over TCP.
func TestShmRefused(t *testing.T) {
	noLeak(t)
	got := make(collector, 4)
	b := listen(t, Config{ForceShm: true, NoShm: true, Handler: got.handle})
	a := listen(t, Config{ForceShm: true})
	f := sampleFrame(OpSendOnly)
	f.SrcGID, f.DstGID = a.GID(), b.GID()
	require.NoError(t, a.Send(&f))
	g := got.next(t)
	g.Route = Route{}
	assert.Equal(t, f, g)
	assert.Zero(t, a.Stats().SharedMemory+b.Stats().SharedMemory)
}

// A peer that stops taking frames fills its ring: Send returns
// ErrCongested at once, without waiting, and frames flow again once the
// peer drains.
func TestShmCongestion(t *testing.T) {
	noLeak(t)
	release := make(chan struct{})
	var n atomic.Int64
	b := listen(t, Config{ForceShm: true, ShmRing: 4 << 20, Handler: func(f *Frame) {
		if n.Add(1) == 1 {
			<-release
		}
	}})
	a := listen(t, Config{ForceShm: true, ShmRing: 4 << 20})
	f := Frame{Opcode: OpWriteOnly, SrcGID: a.GID(), DstGID: b.GID(), Payload: make([]byte, 64<<10)}
	sent := 0
	deadline := time.Now().Add(10 * time.Second)
	for {
		start := time.Now()
		err := a.Send(&f)
		require.Less(t, time.Since(start), 50*time.Millisecond+schedSlack, "Send waited")
		if err == ErrCongested && sent > 0 {
			break
		}
		if err == nil {
			sent++
		}
		require.True(t, time.Now().Before(deadline), "the ring never filled")
	}
	assert.Greater(t, sent, 50, "a 4 MiB ring holds about 60 frames of 64 KiB")
	close(release)
	require.Eventually(t, func() bool { return a.Send(&f) == nil }, 5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return n.Load() == int64(sent+1) }, 5*time.Second, time.Millisecond)
}

// offerOf is this process's offer of seg through descriptor fd.
func offerOf(seg *segment, fd int) control {
	return control{kind: ctlOffer, token: seg.token, pid: uint32(os.Getpid()), fd: uint32(fd), size: uint64(len(seg.mem)), ring: uint32(seg.ring)}
}

// offerFrom dials p from a raw socket and offers seg; it returns the
// connection and p's answer.
func offerFrom(t *testing.T, p *Port, seg *segment, fd int) (*net.TCPConn, control) {
	return sendOffer(t, p, offerOf(seg, fd))
}

// sendOffer dials p from a raw socket and sends o; it returns the
// connection and p's answer.
func sendOffer(t *testing.T, p *Port, o control) (*net.TCPConn, control) {
	t.Helper()
	c := rawDial(t, p, netip.MustParseAddr("127.0.0.1"))
	_, err := c.Write(appendControl(nil, o))
	require.NoError(t, err)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [maxCtlLen]byte
	_, err = io.ReadFull(c, b[:8])
	require.NoError(t, err)
	n, err := controlLen(b[:8])
	require.NoError(t, err)
	_, err = io.ReadFull(c, b[8:n])
	require.NoError(t, err)
	a, err := decodeControl(b[:n])
	require.NoError(t, err)
	return c, a
}

// A hostile process on the same host that offers a link and then breaks
// the ring's rules (positions beyond the ring, a record longer than the
// ring, garbage frames, responses where requests belong) gets its
// connection closed; nothing it wrote is delivered, and the port lives on.
func TestShmHostileRing(t *testing.T) {
	noLeak(t)
	got := make(collector, 16)
	p := listen(t, Config{Handler: got.handle})
	cases := []struct {
		name  string
		write func(l *link)
		drop  bool // the frame is only dropped (Rejected), the link lives
	}{
		{"tail beyond the ring", func(l *link) { atomic.StoreUint64(l.out.word64(offTail), 1<<40) }, false},
		{"unaligned tail", func(l *link) { atomic.StoreUint64(l.out.word64(offTail), 12) }, false},
		{"record longer than the ring", func(l *link) {
			binary.LittleEndian.PutUint32(l.out.data, 1<<30)
			atomic.StoreUint64(l.out.word64(offTail), 64)
		}, false},
		{"record past the tail", func(l *link) {
			binary.LittleEndian.PutUint32(l.out.data, 4000)
			atomic.StoreUint64(l.out.word64(offTail), 64)
		}, false},
		{"garbage frame", func(l *link) {
			binary.LittleEndian.PutUint32(l.out.data, 100)
			copy(l.out.data[8:], bytes.Repeat([]byte{0xee}, 100))
			atomic.StoreUint64(l.out.word64(offTail), 112)
		}, false},
		{"a response from the dialling side", func(l *link) {
			f := sampleFrame(OpAck)
			f.SrcGID, f.DstGID = GIDFromIPv4(netip.MustParseAddr("127.0.0.1")), p.GID()
			require.NoError(t, l.put(&f))
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seg, fd, err := createSegment(minShmRing)
			require.NoError(t, err)
			defer syscall.Close(fd)
			c, a := offerFrom(t, p, seg, fd)
			defer c.Close()
			require.Equal(t, uint8(ctlAccept), a.kind, a.reason)
			l := newLink(seg, true)
			rej, dec := p.Stats().Rejected, p.Stats().DecodeErrors
			tc.write(l)
			if tc.drop {
				require.Eventually(t, func() bool { return p.Stats().Rejected > rej }, 5*time.Second, time.Millisecond)
			} else {
				require.Eventually(t, func() bool { return p.Stats().DecodeErrors > dec }, 5*time.Second, time.Millisecond)
				expectClosed(t, c, 5*time.Second)
			}
			assert.Len(t, got, 0, "nothing hostile was delivered")
			seg.close()
		})
	}
}

// An offer that names something other than a sealed segment of the
// offered size with the offer's token is refused, and the connection goes
// on (over TCP).
func TestShmBadOffers(t *testing.T) {
	noLeak(t)
	p := listen(t, Config{})
	seg, fd, err := createSegment(minShmRing)
	require.NoError(t, err)
	defer syscall.Close(fd)
	defer seg.close()
	plain, err := os.CreateTemp(t.TempDir(), "notsealed")
	require.NoError(t, err)
	require.NoError(t, plain.Truncate(int64(len(seg.mem))))
	defer plain.Close()
	for _, tc := range []struct {
		name string
		edit func(o *control)
	}{
		{"wrong token", func(o *control) { o.token[0] ^= 1 }},
		{"wrong size", func(o *control) { o.size += 4096 }},
		{"ring not a power of two", func(o *control) { o.ring += 8; o.size = uint64(segmentSize(int(o.ring))) }},
		{"no such process", func(o *control) { o.pid = 1 << 30 }},
		{"unsealed file", func(o *control) { o.fd = uint32(plain.Fd()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := offerOf(seg, fd)
			tc.edit(&o)
			c, a := sendOffer(t, p, o)
			defer c.Close()
			assert.Equal(t, uint8(ctlRefuse), a.kind)
			t.Logf("refused: %s", a.reason)
		})
	}
	assert.Zero(t, p.Stats().SharedMemory)
}

// An offer anywhere but first on an accepted connection closes it.
func TestShmOfferNotFirst(t *testing.T) {
	noLeak(t)
	p := listen(t, Config{Handler: func(*Frame) {}})
	c := rawDial(t, p, netip.MustParseAddr("127.0.0.1"))
	defer c.Close()
	f := sampleFrame(OpSendOnly)
	f.SrcGID, f.DstGID = GIDFromIPv4(netip.MustParseAddr("127.0.0.1")), p.GID()
	_, err := c.Write(f.AppendEncode(nil))
	require.NoError(t, err)
	_, err = c.Write(appendControl(nil, control{kind: ctlOffer, pid: 1, fd: 1, size: 1, ring: 1}))
	require.NoError(t, err)
	expectClosed(t, c, 5*time.Second)
}

// The control records round-trip, and the decoder refuses what is not one.
func TestControlRecords(t *testing.T) {
	for _, c := range []control{
		{kind: ctlOffer, token: [16]byte{1, 2}, pid: 7, fd: 9, size: 1 << 24, ring: 1 << 23},
		{kind: ctlAccept, token: [16]byte{3}},
		{kind: ctlRefuse, token: [16]byte{4}, reason: "no shared memory here"},
	} {
		b := appendControl(nil, c)
		d, err := decodeControl(b)
		require.NoError(t, err)
		assert.Equal(t, c, d)
	}
	long := appendControl(nil, control{kind: ctlRefuse, reason: string(bytes.Repeat([]byte("x"), 500))})
	assert.Len(t, long, maxCtlLen, "a long reason is cut")
	for _, b := range [][]byte{
		nil,
		[]byte("GDC\x01\x00\x00\x00\x08"),
		[]byte("GDC\x02\x00\x00\x00\x1c" + string(make([]byte, 20))),
		append(appendControl(nil, control{kind: ctlAccept}), 0),
		func() []byte { b := appendControl(nil, control{kind: ctlAccept}); b[8] = 9; return b }(),
		func() []byte { b := appendControl(nil, control{kind: ctlAccept}); b[10] = 1; return b }(),
		func() []byte { b := appendControl(nil, control{kind: ctlOffer}); b[8] = ctlAccept; return b }(),
	} {
		_, err := decodeControl(b)
		assert.ErrorIs(t, err, ErrMalformed, "% x", b)
	}
}

// A frame sent with Hold over a shared-memory link waits in the ring until
// a frame without Hold or Flush publishes it: the reader sees none of a
// held group, then all of it in order, each frame but the group's last
// marked More; at most shmHoldMax frames wait, and a large one never does.
func TestShmHold(t *testing.T) {
	type got struct {
		psn  uint32
		more bool
	}
	var mu sync.Mutex
	var seen []got
	d := listen(t, Config{ForceShm: true, Handler: func(f *Frame) {
		mu.Lock()
		seen = append(seen, got{f.PSN, f.More})
		mu.Unlock()
	}})
	a := listen(t, Config{ForceShm: true})
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
	wait := func(n int) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); count() < n; time.Sleep(100 * time.Microsecond) {
			if time.Now().After(end) {
				t.Fatalf("%d frames delivered, want %d", count(), n)
			}
		}
	}
	psn := uint32(0)
	send := func(hold bool, n int) {
		t.Helper()
		f := write8()
		f.SrcGID, f.DstGID = a.GID(), d.GID()
		f.Payload = make([]byte, n)
		f.RETH.DMALength = uint32(n)
		f.PSN, f.Hold = psn, hold
		psn++
		for i := 0; ; i++ {
			err := a.Send(&f)
			if err == nil {
				return
			}
			if err != ErrCongested || i == 1000 {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for a.Stats().SharedMemory == 0 { // the link comes up in the background
		send(false, 8)
		wait(int(psn))
		time.Sleep(time.Millisecond)
	}
	base := count()
	quiet := func(what string) {
		t.Helper()
		time.Sleep(20 * time.Millisecond)
		if n := count(); n != base {
			t.Fatalf("%s: %d held frames delivered", what, n-base)
		}
	}
	check := func(from, n int) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		for i, g := range seen[from : from+n] {
			if g.psn != seen[from].psn+uint32(i) {
				t.Fatalf("frame %d of the group has PSN %d, want %d", i, g.psn, seen[from].psn+uint32(i))
			}
			if g.more != (i < n-1) {
				t.Fatalf("frame %d of %d: More %v", i, n, g.more)
			}
		}
	}
	for i := 0; i < 5; i++ {
		send(true, 64)
	}
	quiet("five with Hold")
	a.Flush(d.GID())
	wait(base + 5)
	check(base, 5)

	base = count()
	for i := 0; i < 3; i++ {
		send(true, 64)
	}
	quiet("three with Hold")
	send(false, 64)
	wait(base + 4)
	check(base, 4)

	base = count()
	for i := 0; i < shmHoldMax+3; i++ {
		send(true, 64)
	}
	wait(base + shmHoldMax)
	if n := count() - base; n != shmHoldMax {
		t.Fatalf("%d frames delivered of %d sent with Hold, want the first %d", n, shmHoldMax+3, shmHoldMax)
	}
	a.Flush(d.GID())
	wait(base + shmHoldMax + 3)

	base = count()
	send(true, shmHoldBytes) // a record of more than shmHoldBytes
	wait(base + 1)
	a.Flush(d.GID()) // nothing held: nothing happens
	time.Sleep(5 * time.Millisecond)
	if n := count() - base; n != 1 {
		t.Fatalf("%d frames after a large one with Hold and a Flush, want 1", n)
	}
}
