package wire

import (
	"bytes"
	"net/netip"
	"reflect"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzDecodeShared: a shared-memory reader's decoder (decodeShared, which
// reads the headers from a private copy, a word at a time for a frame that
// starts well) agrees with Decode on every input that nobody rewrites
// while it is read: the same frame, or the same error. The copy starts
// full of garbage, as the reader's scratch is after other frames.
func FuzzDecodeShared(f *testing.F) {
	for _, op := range Opcodes {
		fr := sampleFrame(op)
		f.Add(fr.AppendEncode(nil))
		if op.HasPayload() {
			for _, n := range []int{0, 1, 7, 63, 64, 65, 200} {
				fr.Payload = bytes.Repeat([]byte{0x5a}, n)
				f.Add(fr.AppendEncode(nil))
			}
		}
	}
	f.Add([]byte("GDW\x02\x00\x00\x00\x3c"))
	f.Add([]byte("GDW\x01\x00\x00\x00\x3c"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var scratch [maxHead]byte
		for i := range scratch {
			scratch[i] = 0xee
		}
		var got, want Frame
		errGot := decodeShared(&got, b, &scratch)
		errWant := DecodeInto(&want, b)
		switch {
		case (errGot == nil) != (errWant == nil):
			t.Fatalf("decodeShared: %v; Decode: %v", errGot, errWant)
		case errGot != nil:
			if errGot.Error() != errWant.Error() {
				t.Fatalf("decodeShared: %v; Decode: %v", errGot, errWant)
			}
		case !reflect.DeepEqual(got, want):
			t.Fatalf("decodeShared: %+v\nDecode: %+v", got, want)
		}
	})
}

// shmRig is an accepting connection of port p with a link whose records
// the test writes (w) and the connection's reader takes (r), one burst
// (shmBurst) at a time; from is the peer's GID.
type shmRig struct {
	p    *Port
	c    *conn
	w, r *link
	from GID
	rd   shmReader
	n    int // frames delivered
}

func newShmRig(t *testing.T) *shmRig {
	x := &shmRig{from: GIDFromIPv4(netip.MustParseAddr("127.0.0.2"))}
	x.p = listen(t, Config{Handler: func(*Frame) { x.n++ }})
	x.w, x.r = linkPair(t, minShmRing)
	x.c = newConn(x.p, false, x.from)
	return x
}

// burst writes k WRITE requests of n payload bytes and lets the reader
// take them.
func (x *shmRig) burst(t *testing.T, k, n int) {
	t.Helper()
	f := write8()
	f.Payload = make([]byte, n)
	f.RETH.DMALength = uint32(n)
	f.SrcGID, f.DstGID = x.from, x.p.GID()
	for i := 0; i < k; i++ {
		require.NoError(t, x.w.put(&f))
	}
	b, err := x.r.next()
	require.NoError(t, err)
	require.NotNil(t, b)
	require.NoError(t, x.c.shmBurst(x.r, b, &x.rd))
}

// A burst counts as one use of the connection (lastRead, which orders the
// port's evictions) for each shmUseEvery frames, the first at its first
// frame; the connection used last has the highest count.
func TestShmBurstUse(t *testing.T) {
	x := newShmRig(t)
	other := newConn(x.p, false, x.from) // a connection used after the first burst
	a0 := x.p.activity.Load()
	x.burst(t, 1, 64)
	require.Equal(t, a0+1, x.p.activity.Load())
	require.Equal(t, a0+1, x.c.lastRead.Load())
	other.lastRead.Store(x.p.activity.Add(1))
	require.Less(t, x.c.lastRead.Load(), other.lastRead.Load())

	a0 = x.p.activity.Load()
	x.burst(t, 2*shmUseEvery+1, 64)
	require.Equal(t, 2+2*shmUseEvery, x.n)
	require.Equal(t, a0+3, x.p.activity.Load(), "uses counted in a burst of %d frames", 2*shmUseEvery+1)
	require.Equal(t, a0+3, x.c.lastRead.Load())
	require.Greater(t, x.c.lastRead.Load(), other.lastRead.Load())
	require.Zero(t, x.p.Stats().Rejected)
}

// The reader stores its position for the producer after each large record,
// after each shmHoldMax small ones, and at the end of every burst: a
// producer never waits on a position the reader has passed but kept.
func TestShmHeadShown(t *testing.T) {
	x := newShmRig(t)
	shown := func() uint64 { return atomic.LoadUint64(x.r.in.word64(offHead)) }
	f := write8()
	f.SrcGID, f.DstGID = x.from, x.p.GID()
	put := func(n int) int {
		f.Payload = make([]byte, n)
		f.RETH.DMALength = uint32(n)
		require.NoError(t, x.w.put(&f))
		return f.EncodedLen()
	}
	for i := 0; i < shmHoldMax+1; i++ {
		put(64)
	}
	for i := 0; i < shmHoldMax+1; i++ {
		b, err := x.r.next()
		require.NoError(t, err)
		x.r.consume(len(b))
		if i == shmHoldMax-1 {
			require.Equal(t, x.r.head, shown(), "after %d small records", shmHoldMax)
		} else {
			require.Less(t, shown(), x.r.head, "after %d small records", i+1)
		}
	}
	put(shmHoldBytes) // a record of more than shmHoldBytes
	b, err := x.r.next()
	require.NoError(t, err)
	x.r.consume(len(b))
	require.Equal(t, x.r.head, shown(), "after a large record")

	x.burst(t, 3, 64)
	require.Equal(t, x.r.head, shown(), "after a burst")
	require.Equal(t, x.r.head, x.w.tail)
}

// linkPair returns both ends of a link over a new segment of ring size
// size (writer, reader), unmapped at tb's end; it skips where no shared
// memory can be made.
func linkPair(tb testing.TB, size int) (w, r *link) {
	tb.Helper()
	seg, fd, err := createSegment(size)
	if err != nil {
		tb.Skipf("no shared memory here: %v", err)
	}
	syscall.Close(fd)
	tb.Cleanup(seg.close)
	return newLink(seg, true), newLink(seg, false)
}
