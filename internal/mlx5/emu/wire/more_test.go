package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moreFrames is a burst on one connection: two requests from QP 0x10 to
// QP 0x20, one from 0x11 to 0x20, one from 0x10 to 0x21 and a last one from
// 0x10 to 0x20; want is Frame.More of each as it is read.
func moreFrames() (fs []Frame, want []bool) {
	qps := [][2]uint32{{0x20, 0x10}, {0x20, 0x10}, {0x20, 0x11}, {0x21, 0x10}, {0x20, 0x10}}
	for i, q := range qps {
		f := sampleFrame(OpWriteOnly)
		f.DstQPN, f.SrcQPN, f.PSN = q[0], q[1], uint32(i)
		f.Payload = bytes.Repeat([]byte{byte(i)}, 8*i+1)
		fs = append(fs, f)
	}
	return fs, []bool{true, false, false, false, false}
}

// The stream reader sets More only when the next frame is already buffered
// and between the same two QPs.
func TestMoreStream(t *testing.T) {
	fs, want := moreFrames()
	var b []byte
	for i := range fs {
		b = fs[i].AppendEncode(b)
	}
	fr := frameReader{r: bufio.NewReaderSize(bytes.NewReader(b), readBufSize), max: MaxFrameLen}
	for i := range fs {
		var f Frame
		_, _, err := fr.next(&f)
		require.NoError(t, err, "frame %d", i)
		assert.Equal(t, fs[i].PSN, f.PSN)
		assert.Equal(t, want[i], fr.more(f.DstQPN, f.SrcQPN), "frame %d", i)
	}
	// Only part of the next frame's header has arrived: not More.
	half := fs[0].AppendEncode(nil)
	half = fs[1].AppendEncode(half)[:len(half)+sameQPsLen-1]
	fr = frameReader{r: bufio.NewReaderSize(bytes.NewReader(half), readBufSize), max: MaxFrameLen}
	var f Frame
	_, _, err := fr.next(&f)
	require.NoError(t, err)
	assert.False(t, fr.more(f.DstQPN, f.SrcQPN))
}

// The shared-memory reader sets More by the same rule, and never for the
// record before a wrap of the ring (the bytes after a wrap mark are stale).
func TestMoreShm(t *testing.T) {
	seg, fd, err := createSegment(minShmRing)
	require.NoError(t, err)
	defer syscall.Close(fd)
	defer seg.close()
	peer, err := openSegment(offerOf(seg, fd))
	require.NoError(t, err)
	defer peer.close()
	out, in := newLink(seg, true), newLink(peer, false)

	read := func() (Frame, bool) {
		t.Helper()
		b, err := in.next()
		require.NoError(t, err)
		require.NotNil(t, b)
		var f Frame
		var scratch [maxHead]byte
		require.NoError(t, decodeShared(&f, b, &scratch))
		more := in.more(len(b), f.DstQPN, f.SrcQPN)
		in.done(len(b))
		return f, more
	}
	fs, want := moreFrames()
	for i := range fs {
		require.NoError(t, out.put(&fs[i]))
	}
	for i := range fs {
		f, more := read()
		assert.Equal(t, fs[i].PSN, f.PSN)
		assert.Equal(t, want[i], more, "frame %d", i)
	}

	// A wrap mark after a frame, with the stale bytes of an older frame
	// between the same QPs after the mark (as a ring that went round has):
	// the frame before the mark is not More.
	a := sampleFrame(OpWriteOnly)
	require.NoError(t, out.put(&a))
	size := uint64(len(out.out.data))
	e := out.tail % size
	binary.LittleEndian.PutUint32(out.out.data[e:], shmWrapMark)
	stale := a.AppendEncode(nil)
	require.Less(t, e+shmRecHead+uint64(len(stale)), size, "room for the stale frame")
	copy(out.out.data[e+shmRecHead:], stale)
	out.tail += size - e
	b := sampleFrame(OpWriteOnly)
	b.PSN = 7
	require.NoError(t, out.put(&b))
	_, more := read()
	assert.False(t, more, "the record before a wrap mark")
	got, more := read()
	assert.Equal(t, uint32(7), got.PSN, "the frame after the wrap")
	assert.False(t, more)
}
