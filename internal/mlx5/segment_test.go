package mlx5

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The generated segment codecs (wqe_gen.go) work on whole words with
// shifts and masks the generator computed. These tests hold them to the
// generic view of the same layout: the segment's bindings, which read and
// write each field through Get and Set at its Field. A wrong shift, mask,
// word or conversion in the generator shows up here as a field that differs.

// segCodec is the generated code of one segment type.
type segCodec[T comparable] struct {
	decode func([]byte) T
	read   func(*T, []byte)
	put    func(T, []byte)
	bind   func(*T) []binding
}

// segmentCodecs lists every generated segment decoder, by name; each entry
// runs the checks below on its type. TestSegmentCodecsListed fails when a
// table adds a segment that is not here.
var segmentCodecs = map[string]func(*testing.T){
	"DecodeCtrlSeg": segCodec[CtrlSeg]{DecodeCtrlSeg, (*CtrlSeg).read, CtrlSeg.Put, (*CtrlSeg).bindings}.check,
	"DecodeRAddrSeg": segCodec[RAddrSeg]{DecodeRAddrSeg, (*RAddrSeg).read, RAddrSeg.Put,
		(*RAddrSeg).bindings}.check,
	"DecodeDataSeg": segCodec[DataSeg]{DecodeDataSeg, (*DataSeg).read, DataSeg.Put, (*DataSeg).bindings}.check,
	"DecodeAtomicSeg": segCodec[AtomicSeg]{DecodeAtomicSeg, (*AtomicSeg).read, AtomicSeg.Put,
		(*AtomicSeg).bindings}.check,
	"DecodeWaitSeg": segCodec[WaitSeg]{DecodeWaitSeg, (*WaitSeg).read, WaitSeg.Put, (*WaitSeg).bindings}.check,
}

func TestSegmentCodecs(t *testing.T) {
	for name, check := range segmentCodecs {
		t.Run(name, check)
	}
}

// segmentBuffers returns the inputs of a decoder check: zero, all ones,
// each of the 128 bits alone, each bit cleared from all ones, and n random
// segments.
func segmentBuffers(rng *rand.Rand, n int) [][]byte {
	bufs := [][]byte{make([]byte, DSSize), bytes.Repeat([]byte{0xff}, DSSize)}
	for bit := 0; bit < 8*DSSize; bit++ {
		one := make([]byte, DSSize)
		one[bit/8] = 0x80 >> (bit % 8)
		zero := bytes.Repeat([]byte{0xff}, DSSize)
		zero[bit/8] &^= 0x80 >> (bit % 8)
		bufs = append(bufs, one, zero)
	}
	for i := 0; i < n; i++ {
		b := make([]byte, DSSize)
		rng.Read(b)
		bufs = append(bufs, b)
	}
	return bufs
}

func (c segCodec[T]) check(t *testing.T) {
	rng := rand.New(rand.NewSource(int64(len(t.Name()))))
	var probe T
	if len(c.bind(&probe)) == 0 {
		t.Fatal("the segment has no bindings")
	}
	// Decode and read agree with Get on every field, for any bytes.
	for _, b := range segmentBuffers(rng, 5000) {
		var want T
		require.NoError(t, decodeFields("reference decode", b, DSSize, c.bind(&want)))
		got := c.decode(b)
		if got != want {
			t.Fatalf("bytes %x: Decode gives %+v, Get over the fields %+v", b, got, want)
		}
		var in T
		c.read(&in, b)
		if in != want {
			t.Fatalf("bytes %x: read gives %+v, Get over the fields %+v", b, in, want)
		}
		// Only the 16 bytes count: a longer slice decodes the same.
		long := append(append([]byte(nil), b...), 0xee, 0xee)
		if got := c.decode(long); got != want {
			t.Fatalf("bytes %x and a tail: Decode gives %+v, want %+v", b, got, want)
		}
	}
	// Put writes what Set writes through the fields, reserved bits zero
	// whatever b held, and Decode gives the values back.
	for i := 0; i < 5000; i++ {
		var x T
		for _, f := range c.bind(&x) {
			v := rng.Uint64() >> rng.Intn(64) // small values too
			f.set(v & f.f.Max())
		}
		want := make([]byte, DSSize)
		require.NoError(t, encodeFields("reference encode", want, DSSize, c.bind(&x)))
		got := make([]byte, DSSize)
		rng.Read(got)
		c.put(x, got)
		if !bytes.Equal(got, want) {
			t.Fatalf("%+v: Put writes %x, Set over the fields %x", x, got, want)
		}
		if back := c.decode(got); back != x {
			t.Fatalf("%+v: Put then Decode gives %+v", x, back)
		}
	}
	// A value wider than its field panics, naming the field, before
	// anything is written.
	var x T
	for _, f := range c.bind(&x) {
		if f.f.Width >= 64 || f.get() != 0 {
			continue
		}
		f.set(f.f.Max() + 1)
		if f.get() != f.f.Max()+1 {
			f.set(0)
			continue // the Go type is as wide as the field: nothing can overflow
		}
		b := bytes.Repeat([]byte{0x5a}, DSSize)
		assert.PanicsWithValue(t, fmt.Sprintf("mlx5: value 0x%x does not fit field %v", f.f.Max()+1, f.f),
			func() { c.put(x, b) }, f.name)
		assert.Equal(t, bytes.Repeat([]byte{0x5a}, DSSize), b, "%s: Put wrote before it panicked", f.name)
		f.set(0)
	}
}

// TestSegmentCodecsListed finds every segment decoder the generator wrote
// (a func DecodeX(b []byte) X in a *_gen.go file) and requires it in
// segmentCodecs, so that a new segment is checked from its first day.
func TestSegmentCodecsListed(t *testing.T) {
	files, err := filepath.Glob("*_gen.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var found []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Decode") {
				continue
			}
			res := fn.Type.Results
			if res == nil || res.NumFields() != 1 || fn.Type.Params.NumFields() != 1 {
				continue // the codecs of contexts and mailboxes also return an error
			}
			if id, ok := res.List[0].Type.(*ast.Ident); ok && "Decode"+id.Name == fn.Name.Name {
				found = append(found, fn.Name.Name)
			}
		}
	}
	sort.Strings(found)
	require.NotEmpty(t, found)
	for _, name := range found {
		assert.Contains(t, segmentCodecs, name, "generated segment decoder without a check")
	}
	assert.Len(t, segmentCodecs, len(found))
}
