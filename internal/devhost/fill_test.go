package devhost

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFillQPImage(t *testing.T) {
	mem := NewCBuffer(make([]byte, 512+16*64+16*64+64))
	t.Cleanup(mem.Free)
	base := mem.Pointer()
	sq := unsafe.Add(base, 512)
	cqes := unsafe.Add(sq, 16*64)
	dbr := unsafe.Add(cqes, 16*64)
	g := Geometry{QPN: 0xabcdef, SQ: sq, SQWQEs: 16, SQDBRec: unsafe.Add(dbr, 4), DB: unsafe.Add(dbr, 16),
		Handler: HandlerGPUSMNoDBR, CQN: 0x77, CQEs: cqes, CQENum: 16, CQDBRec: unsafe.Add(dbr, 8)}
	q, err := FillQP(base, g)
	require.NoError(t, err)
	img := unsafe.Slice((*byte)(base), QPSize)
	le32 := func(off int) uint32 { return binary.LittleEndian.Uint32(img[off:]) }
	be32 := func(off int) uint32 { return binary.BigEndian.Uint32(img[off:]) }
	assert.Equal(t, uint32(0xabcdef), le32(24))
	assert.Equal(t, uint32(0xabcdef00), le32(28))
	for ds := 0; ds <= 5; ds++ {
		off := 32 + 4*ds
		assert.Equalf(t, uint32(0xabcdef00)|uint32(ds), be32(off), "sq_num_shift8_be_%dds", ds)
	}
	assert.Equal(t, uint16(16), binary.LittleEndian.Uint16(img[60:]))
	assert.Equal(t, uint16(15), binary.LittleEndian.Uint16(img[62:]))
	assert.Equal(t, uint64(uintptr(sq)), binary.LittleEndian.Uint64(img[64:]))
	assert.Equal(t, uint32(10), le32(288), "nic_handler")
	assert.Equal(t, uint32(2), le32(292), "mem_type GPU")
	assert.Equal(t, uint32(0x77), le32(160+8))
	assert.Equal(t, uint32(16), le32(160+12))
	assert.Equal(t, uint8(64), img[160+36])
	assert.Equal(t, uint8(0xF1), unsafe.Slice((*byte)(cqes), 64)[63])
	rsvd, ready, pi := q.Indexes()
	assert.Zero(t, rsvd+ready+pi)

	_, err = FillQP(base, Geometry{SQWQEs: 12})
	require.Error(t, err)
	_, err = FillQP(unsafe.Add(base, 4), g)
	require.Error(t, err)
}
