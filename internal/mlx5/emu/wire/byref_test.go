package wire

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bytesRef is a PayloadRef over a byte slice; reads counts ReadAt calls.
type bytesRef struct {
	b     []byte
	reads int
}

func (r *bytesRef) Len() int { return len(r.b) }

func (r *bytesRef) ReadAt(p []byte, off int64) (int, error) {
	r.reads++
	if off < 0 || off > int64(len(r.b)) {
		return 0, errors.New("bytesRef: offset out of range")
	}
	n := copy(p, r.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// A request whose payload is by reference reaches the handler of a port of
// this process with the sender's reference, which the handler reads during
// the call; it never goes to another process: with TCP forced on either
// side, or a destination that is closed or unknown, Send returns
// ErrNotLocal bare, sends nothing, dials nothing and counts no error.
// InProcess says the same beforehand.
func TestSendByReference(t *testing.T) {
	noLeak(t)
	want := bytes.Repeat([]byte("by reference "), 1000)
	var seen []byte
	var seenRef PayloadRef
	var seenLen int
	b := listen(t, Config{Handler: func(f *Frame) {
		seenRef, seenLen = f.Ref, f.PayloadLen()
		seen = make([]byte, f.PayloadLen())
		_, err := f.Ref.ReadAt(seen, 0)
		assert.NoError(t, err)
		assert.Nil(t, f.Payload)
	}})
	a := listen(t, Config{})
	ref := &bytesRef{b: want}
	f := sampleFrame(OpWriteOnly)
	f.SrcGID, f.DstGID, f.Payload, f.Ref = a.GID(), b.GID(), nil, ref
	require.True(t, a.InProcess(b.GID()))
	require.NoError(t, a.Send(&f))
	assert.Same(t, ref, seenRef, "the handler gets the sender's reference")
	assert.Equal(t, len(want), seenLen)
	assert.Equal(t, want, seen)
	assert.Equal(t, uint64(1), a.Stats().Sent)
	assert.Equal(t, uint64(1), b.Stats().Received)

	check := func(name string, from *Port, dst GID) {
		t.Helper()
		g := f
		g.SrcGID, g.DstGID = from.GID(), dst
		before := from.Stats()
		reads := ref.reads
		assert.False(t, from.InProcess(dst), name)
		assert.Same(t, ErrNotLocal, from.Send(&g), name)
		after := from.Stats()
		assert.Equal(t, before, after, "%s: nothing sent, dialled or counted", name)
		assert.Equal(t, reads, ref.reads, "%s: the reference was not read", name)
	}
	tcpFrom := listen(t, Config{ForceTCP: true})
	check("sender forces TCP", tcpFrom, b.GID())
	tcpTo := listen(t, Config{ForceTCP: true, Handler: func(*Frame) { t.Error("a frame by reference reached a TCP-only port") }})
	check("destination forces TCP", a, tcpTo.GID())
	shmTo := listen(t, Config{ForceShm: true, Handler: func(*Frame) { t.Error("a frame by reference reached a shm-only port") }})
	check("destination forces shared memory", a, shmTo.GID())
	check("unknown destination", a, GIDFromIPv4(netip.MustParseAddr("127.0.0.1"))) // no port binds it
	c := listen(t, Config{Handler: func(*Frame) { t.Error("a closed port's handler ran") }})
	require.NoError(t, c.Close())
	check("closed destination", a, c.GID())
}

// A payload by reference is valid only on a request whose opcode carries
// a payload, 1 to MaxPayload bytes long, without a payload by value beside
// it; its encoding never decodes; SendInPlace refuses it.
func TestPayloadRefValidation(t *testing.T) {
	ok := sampleFrame(OpSendFirst)
	ok.Payload, ok.Ref = nil, &bytesRef{b: []byte("x")}
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		name string
		edit func(f *Frame)
	}{
		{"beside a payload", func(f *Frame) { f.Payload = []byte("y") }},
		{"on a READ response", func(f *Frame) { f.Opcode = OpReadResponseOnly }},
		{"on an ACK", func(f *Frame) { f.Opcode = OpAck }},
		{"on a READ request", func(f *Frame) { f.Opcode = OpReadRequest }},
		{"empty", func(f *Frame) { f.Ref = &bytesRef{} }},
		{"too long", func(f *Frame) { f.Ref = &longRef{} }},
	} {
		f := ok
		tc.edit(&f)
		err := f.Validate()
		var fe *FrameError
		if assert.ErrorAs(t, err, &fe, tc.name) {
			assert.Equal(t, "payload", fe.Field, tc.name)
			assert.ErrorIs(t, err, ErrMalformed, tc.name)
		}
	}
	for _, op := range Opcodes {
		if !op.IsRequest() || !op.HasPayload() {
			continue
		}
		f := sampleFrame(op)
		f.Payload, f.Ref = nil, &bytesRef{b: []byte("abc")}
		require.NoError(t, f.Validate(), op)
		_, err := Decode(f.AppendEncode(nil))
		assert.ErrorIs(t, err, ErrMalformed, "%s: the encoding of a frame by reference decoded", op)
	}
	a := listen(t, Config{})
	ok.DstGID = a.GID()
	assert.ErrorIs(t, a.SendInPlace(&ok, 1, func([]byte) error { return nil }), ErrMalformed)
}

// longRef claims one byte more than a frame may carry.
type longRef struct{}

func (longRef) Len() int                          { return MaxPayload + 1 }
func (longRef) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }
