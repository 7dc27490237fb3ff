package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type point struct {
	X, Y float32
	ID   uint64
}

// TestTypedCopyChecks covers what the typed copies and Buffer check before
// any driver call: element types, nil contexts, nil and freed buffers, and
// bounds.
func TestTypedCopyChecks(t *testing.T) {
	b, err := elemBytes("CopyToDevice", []point{{1, 2, 3}, {4, 5, 6}})
	require.NoError(t, err)
	require.Len(t, b, 32, "two 16-byte points viewed as bytes")
	require.Equal(t, []byte{0, 0, 0x80, 0x3f}, b[0:4], "float32 1.0 in host order")

	require.ErrorIs(t, CopyToDevice(nil, 0x1000, []int{1}), ErrBadArgument, "int has no fixed C width")
	require.ErrorIs(t, CopyFromDevice(nil, []string{"x"}, 0x1000), ErrBadArgument)
	require.ErrorIs(t, CopyToDevice(nil, 0x1000, []*uint32{nil}), ErrBadArgument)
	require.ErrorIs(t, CopyToDevice(nil, 0x1000, []point{{}}), ErrReleased, "a nil context")
	require.ErrorIs(t, CopyToDevice(nil, 0x1000, []point{}), ErrReleased, "a nil context, even with nothing to copy")

	_, err = Alloc[int](nil, 4)
	require.ErrorIs(t, err, ErrBadArgument)
	_, err = Alloc[uint32](nil, 0)
	require.ErrorIs(t, err, ErrorInvalidValue)
	_, err = Alloc[uint32](nil, 4)
	require.ErrorIs(t, err, ErrReleased, "a nil context")

	var nb *Buffer[uint32]
	require.Zero(t, nb.Ptr())
	require.Zero(t, nb.Len())
	require.ErrorIs(t, nb.Write(0, []uint32{1}), ErrReleased)
	require.ErrorIs(t, nb.Read(0, make([]uint32, 1)), ErrReleased)
	_, err = nb.Elements()
	require.ErrorIs(t, err, ErrReleased)
	require.ErrorIs(t, nb.Zero(), ErrReleased)
	require.NoError(t, nb.Free())

	ctx := unregisteredContext()
	buf := &Buffer[point]{ctx: ctx, p: 0x10000, n: 4}
	require.Equal(t, uintptr(64), buf.Size())
	p, err := buf.At(4)
	require.NoError(t, err)
	require.Equal(t, DevPtr(0x10040), p, "At(Len) is the end address")
	_, err = buf.At(5)
	require.ErrorIs(t, err, ErrorInvalidValue)
	_, err = buf.At(-1)
	require.ErrorIs(t, err, ErrorInvalidValue)
	for _, tc := range []struct{ off, n int }{{0, 5}, {1, 4}, {4, 1}, {-1, 1}, {3, 2}} {
		err := buf.Write(tc.off, make([]point, tc.n))
		require.ErrorIs(t, err, ErrorInvalidValue, "write [%d,+%d)", tc.off, tc.n)
		require.Contains(t, err.Error(), "of a buffer of 4")
		require.ErrorIs(t, buf.Read(tc.off, make([]point, tc.n)), ErrorInvalidValue, "read [%d,+%d)", tc.off, tc.n)
	}
	ctx.released = true
	require.ErrorIs(t, buf.Write(3, make([]point, 1)), ErrReleased, "in bounds, then the released context")
	ctx.released = false
	buf.freed.Store(true)
	require.ErrorIs(t, buf.Write(0, make([]point, 1)), ErrReleased, "a freed buffer")
	require.NoError(t, buf.Free(), "a second Free does nothing")
}
