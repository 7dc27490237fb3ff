package mlx5

import (
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDoorbellGolden reproduces worked doorbell and DBR images (computed by
// hand from the PRM layouts) and decodes both doorbell styles to the same producer index.
func TestDoorbellGolden(t *testing.T) {
	ring := make([]byte, 8*WQEBB)
	w := NewRDMAWrite(WQEHead{Index: 5, QPN: 0x1a2b, Flags: CtrlCQUpdate}, dpRemote, dpWith(dpLocal, 0, 4096))
	n, err := w.Encode(ring)
	assert.NoError(t, err)

	rdma := SQDoorbell(w.Ctrl)
	assert.Equal(t, "00000508001a2b03", rdma.String())
	assert.Equal(t, ring[5*WQEBB:5*WQEBB+8], rdma[:], "the first 8 bytes of the WQE")
	gn := SQDoorbellPI(0x1a2b, 5+uint32(n))
	assert.Equal(t, "00000600001a2b00", gn.String())

	for _, d := range []Doorbell{rdma, gn} {
		qpn, pi := DecodeSQDoorbell(d)
		assert.Equal(t, uint32(0x1a2b), qpn, "%v", d)
		assert.Equal(t, uint16(6), pi, "%v", d)
	}

	dbr := make([]byte, QPDBRSize)
	PutQPDBRSend(dbr, 6)
	assert.Equal(t, "0000000000000006", hex.EncodeToString(dbr))
	assert.Equal(t, uint16(6), QPDBRSend(dbr))
	assert.Zero(t, QPDBRRecv(dbr))
}

func TestSQDoorbellDecode(t *testing.T) {
	cases := []struct {
		name string
		d    Doorbell
		qpn  uint32
		pi   uint16
	}{
		{"2-WQEBB masked CS at 0xffff wraps to 1", SQDoorbell(CtrlSeg{OpMod: 0x09, WQEIndex: 0xffff, Opcode: WQEOpAtomicMaskedCS, QPN: 0xabcdef, DS: 5}), 0xabcdef, 1},
		{"ds 63 spans 16 WQEBBs", SQDoorbell(CtrlSeg{WQEIndex: 100, Opcode: WQEOpSend, QPN: 1, DS: 63}), 1, 116},
		{"ds 4 is one WQEBB", SQDoorbell(CtrlSeg{WQEIndex: 7, Opcode: WQEOpAtomicFA, QPN: 2, DS: 4}), 2, 8},
		{"gpunetio, pi not masked (gpunetio stores 24 bits)", SQDoorbellPI(0x1a2b, 0x12fffe), 0x1a2b, 0xfffe},
		{"gpunetio, QPN masked to 24 bits", SQDoorbellPI(0xff000001, 3), 1, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			qpn, pi := DecodeSQDoorbell(c.d)
			assert.Equal(t, c.qpn, qpn)
			assert.Equal(t, c.pi, pi)
		})
	}
	// gpunetio stores the PI unmasked: its bits 16..23 land in the opmod byte.
	assert.Equal(t, "12fffe0000000100", SQDoorbellPI(1, 0x12fffe).String())
	// The masked-atomic opmod travels in an rdma-core doorbell, as rdma-core copies the ctrl.
	assert.Equal(t, "09ffff1400abcdef"[:8], SQDoorbell(CtrlSeg{OpMod: 0x09, WQEIndex: 0xffff, Opcode: 0x14}).String()[:8])
}

func TestDoorbellUint64(t *testing.T) {
	d := SQDoorbellPI(0x1a2b, 6)
	v := d.Uint64()
	var mem [8]byte
	binary.NativeEndian.PutUint64(mem[:], v) // what a 64-bit store of v leaves in memory
	assert.Equal(t, d[:], mem[:])
	assert.Equal(t, d, DoorbellFromUint64(v))

	w := BE32Native(0x00000006)
	var m4 [4]byte
	binary.NativeEndian.PutUint32(m4[:], w)
	assert.Equal(t, []byte{0, 0, 0, 6}, m4[:])
	assert.Equal(t, uint32(0x1234), QPDBRWord(0xabcd1234))
}

func TestQPDBR(t *testing.T) {
	dbr := make([]byte, QPDBRSize)
	PutQPDBRSend(dbr, 0x12345678)
	PutQPDBRRecv(dbr, 0x0001ffff)
	assert.Equal(t, "0000ffff00005678", hex.EncodeToString(dbr), "low 16 bits, upper half zero")
	assert.Equal(t, uint16(0x5678), QPDBRSend(dbr))
	assert.Equal(t, uint16(0xffff), QPDBRRecv(dbr))
	dbr[4] = 0xff // the NIC ignores the upper half
	assert.Equal(t, uint16(0x5678), QPDBRSend(dbr))
}

func TestCQDBRAndArm(t *testing.T) {
	dbr := make([]byte, CQDBRSize)
	PutCQDBRCI(dbr, 0x12345678)
	assert.Equal(t, "0034567800000000", hex.EncodeToString(dbr))
	assert.Equal(t, uint32(0x345678), CQDBRCI(dbr))

	cases := []struct {
		sn   uint8
		cmd  CQArmCmd
		ci   uint32
		want uint32
	}{
		{0, CQArmNext, 5, 0x00000005},
		{1, CQArmSolicited, 0x1000000 | 7, 0x11000007},
		{3, CQArmNext, 0xffffff, 0x30ffffff},
		{5, CQArmSolicited, 0, 0x11000000}, // sn is 2 bits
	}
	for _, c := range cases {
		w := CQArmWord(c.sn, c.cmd, c.ci)
		assert.Equal(t, c.want, w, "sn %d cmd %v ci 0x%x", c.sn, c.cmd, c.ci)
		sn, cmd, ci := DecodeCQArmWord(w)
		assert.Equal(t, c.sn&3, sn)
		assert.Equal(t, c.cmd, cmd)
		assert.Equal(t, c.ci&0xffffff, ci)

		PutCQDBRArm(dbr, w)
		assert.Equal(t, w, CQDBRArm(dbr))
		assert.Equal(t, uint32(0x345678), CQDBRCI(dbr), "arm word leaves the CI alone")

		d := CQArmDoorbell(w, 0x400)
		aw, cqn := DecodeCQArmDoorbell(d)
		assert.Equal(t, w, aw)
		assert.Equal(t, uint32(0x400), cqn)
		assert.Equal(t, binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, w), 0x400), d[:])
	}
	assert.Equal(t, "REQ_NOT", CQArmNext.String())
	assert.Equal(t, "REQ_NOT_SOL", CQArmSolicited.String())
	assert.Equal(t, "CQArmCmd(7)", CQArmCmd(7).String())
}
