package wire

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SendInPlace writes a request's payload straight into the shared-memory
// ring: the peer receives it as if Send had sent it. Without a link (no
// connection yet, a port of this process, TCP) it returns ErrNotInPlace
// and never calls fill; a fill that fails sends nothing; a frame that
// already carries a payload, or a response, is malformed.
func TestSendInPlace(t *testing.T) {
	noLeak(t)
	got := make(collector, 16)
	a := listen(t, Config{ForceShm: true})
	b := listen(t, Config{ForceShm: true, Handler: got.handle})
	req := func(psn uint32) Frame {
		f := sampleFrame(OpWriteOnly)
		f.SrcGID, f.DstGID, f.PSN = a.GID(), b.GID(), psn
		f.Payload = nil
		return f
	}
	called := false
	fill := func(p []byte) error { called = true; return nil }

	f := req(1)
	assert.False(t, a.CanSendInPlace(b.GID()))
	assert.Same(t, ErrNotInPlace, a.SendInPlace(&f, 8, fill), "no connection yet")
	assert.False(t, called)

	// The first Send dials and sets up the link.
	first := req(2)
	first.Payload = []byte("dial")
	require.NoError(t, a.Send(&first))
	got.next(t)
	require.Eventually(t, func() bool { return a.Stats().SharedMemory == 1 }, 5*time.Second, time.Millisecond)
	assert.True(t, a.CanSendInPlace(b.GID()))

	want := bytes.Repeat([]byte("in place "), 100000) // 900 kB
	f = req(3)
	require.NoError(t, a.SendInPlace(&f, len(want), func(p []byte) error {
		require.Len(t, p, len(want))
		copy(p, want)
		return nil
	}))
	g := got.next(t)
	assert.Equal(t, uint32(3), g.PSN)
	assert.True(t, bytes.Equal(want, g.Payload), "the payload as filled")

	// A fill that fails: nothing is sent, its error comes back.
	boom := errors.New("boom")
	sent := a.Stats().Sent
	f = req(4)
	assert.Same(t, boom, a.SendInPlace(&f, 64, func([]byte) error { return boom }))
	assert.Equal(t, sent, a.Stats().Sent)
	f = req(5)
	require.NoError(t, a.SendInPlace(&f, 3, func(p []byte) error { copy(p, "abc"); return nil }))
	g = got.next(t)
	assert.Equal(t, uint32(5), g.PSN, "the frame after the failed fill is the next one received")
	assert.Equal(t, "abc", string(g.Payload))

	// Malformed: a payload beside the fill, a response, a payload on an
	// opcode without one.
	f = req(6)
	f.Payload = []byte("x")
	assert.ErrorIs(t, a.SendInPlace(&f, 8, fill), ErrMalformed)
	ack := sampleFrame(OpAck)
	ack.SrcGID, ack.DstGID = a.GID(), b.GID()
	assert.ErrorIs(t, a.SendInPlace(&ack, 0, fill), ErrMalformed)
	rd := req(7)
	rd.Opcode = OpReadRequest
	assert.ErrorIs(t, a.SendInPlace(&rd, 8, fill), ErrMalformed)
	assert.False(t, called)

	// Ports of one process without ForceShm deliver in-process.
	c := listen(t, Config{})
	d := listen(t, Config{Handler: got.handle})
	f = req(8)
	f.SrcGID, f.DstGID = c.GID(), d.GID()
	assert.Same(t, ErrNotInPlace, c.SendInPlace(&f, 8, fill))
	assert.False(t, c.CanSendInPlace(d.GID()))
	assert.False(t, called)
}

// A ring without room: ErrCongested, fill not called; once the reader took
// what was there, the frame goes.
func TestSendInPlaceCongested(t *testing.T) {
	seg, fd, err := createSegment(minShmRing)
	require.NoError(t, err)
	defer seg.close()
	defer syscall.Close(fd)
	l := newLink(seg, true)
	f := sampleFrame(OpWriteOnly)
	f.Payload = nil
	calls := 0
	fill := func(p []byte) error { calls++; return nil }
	for {
		err := l.putFill(&f, 4096, fill)
		if err == ErrCongested {
			break
		}
		require.NoError(t, err)
	}
	n := calls
	require.Equal(t, ErrCongested, l.putFill(&f, 4096, fill))
	assert.Equal(t, n, calls, "fill is not called without room")
}
