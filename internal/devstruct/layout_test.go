package devstruct

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The layout of the device structs: DOCA 2.0's send half and CQ, the DOCA
// SDK's receive-queue block at the SDK's offsets, and our extension area.
func TestLayoutMatchesSpec(t *testing.T) {
	assert.Equal(t, 392, QPSize)
	assert.Equal(t, 64, CQSize)
	assert.Equal(t, 8, QPAlign)
	assert.Equal(t, 8, CQAlign)
	assert.Equal(t, uint32(2), MemTypeGPU)
	assert.Equal(t, uint32(1), MemTypeHost)

	qp := []struct {
		name      string
		got, want int
	}{
		{"sq_rsvd_index", offSQRsvdIndex, 0},
		{"sq_ready_index", offSQReadyIndex, 8},
		{"sq_wqe_pi", offSQWQEPI, 16},
		{"sq_num", offSQNum, 24},
		{"sq_num_shift8", offSQNumShift8, 28},
		{"sq_num_shift8_be", offSQNumShift8BE, 32},
		{"sq_num_shift8_be_1ds", offSQNumBE1DS, 36},
		{"sq_num_shift8_be_2ds", offSQNumBE2DS, 40},
		{"sq_num_shift8_be_3ds", offSQNumBE3DS, 44},
		{"sq_num_shift8_be_4ds", offSQNumBE4DS, 48},
		{"sq_num_shift8_be_5ds", offSQNumBE5DS, 52},
		{"sq_lock", offSQLock, 56},
		{"sq_wqe_num", offSQWQENum, 60},
		{"sq_wqe_mask", offSQWQEMask, 62},
		{"sq_wqe_daddr", offSQWQEDAddr, 64},
		{"sq_dbrec", offSQDBRec, 72},
		{"sq_db", offSQDB, 80},
		// the receive-queue block: the SDK 3.3 offsets
		{"rq_num", offRQNum, 88},
		{"rq_wqe_pi", offRQWQEPI, 96},
		{"rq_wqe_num", offRQWQENum, 104},
		{"rq_wqe_mask", offRQWQEMask, 108},
		{"rq_wqe_daddr", offRQWQEDAddr, 112},
		{"rq_dbrec", offRQDBRec, 120},
		{"rcv_wqe_size", offRcvWQESize, 128},
		{"rq_rsvd_index", offRQRsvdIndex, 136},
		{"rq_ready_index", offRQReadyIndex, 144},
		{"rq_lock", offRQLock, 152},
		{"cq_sq", offCQSQ, 160},
		// ours from here (the SDK: cq_rq 216, nic_handler 272, need_mcst 280, ...)
		{"cq_rq", offCQRQ, 224},
		{"nic_handler", offNICHandler, 288},
		{"mem_type", offQPMemType, 292},
		{"need_mcst", offNeedMCST, 296},
		{"need_dump", offNeedDump, 296},
		{"last_get_wqe_idx", offLastGetWQE, 304},
		{"last_dump_wqe_idx", offLastDumpWQE, 312},
		{"last_recv_wqe_idx", offLastRecvWQE, 320},
		{"cq.cqe_daddr", offCQEDAddr, 0},
		{"cq.cq_num", offCQNum, 8},
		{"cq.cqe_num", offCQENum, 12},
		{"cq.dbrec", offCQDBRec, 16},
		{"cq.cqe_ci", offCQECI, 24},
		{"cq.cqe_mask", offCQEMask, 32},
		{"cq.cqe_size", offCQESize, 36},
		{"cq.reserved1", offCQReserved1, 37},
		{"cq.cqe_rsvd", offCQERsvd, 40},
		{"cq.mem_type", offCQMemType, 48},
		{"cq.reserved2", offCQReserved2, 52},
		// extension area (the last 64 bytes) and the CQ flag byte (reserved1[0])
		{"gdaki", offExt, 328},
		{"gdaki.error", offExt + offExtError, 328},
		{"gdaki.poll_timeout", offExt + offExtPollTimeout, 352},
		{"gdaki.reserved", offExt + offExtReserved, 360},
		{"cq.gdaki_flags", offCQFlags, 37},
		{"error.status", offErrStatus, 0},
		{"error.syndrome", offErrSyndrome, 4},
		{"error.vendor_syndrome", offErrVendor, 5},
		{"error.hw_syndrome", offErrHW, 6},
		{"error.hw_syndrome_type", offErrHWType, 7},
		{"error.cqe_opcode", offErrCQEOpcode, 8},
		{"error.wqe_opcode", offErrWQEOpcode, 9},
		{"error.wqe_counter", offErrWQECounter, 10},
		{"error.reserved", offErrReserved, 12},
		{"error.wqe_index", offErrWQEIndex, 16},
		{"sizeof ext", extSize, 64},
		{"sizeof error", QPErrorSize, 24},
	}
	for _, f := range qp {
		assert.Equal(t, f.want, f.got, "offsetof %s", f.name)
	}
	assert.Equal(t, 16, OffsetSQWQEPI)
	assert.Equal(t, 160, OffsetCQSQ)
	assert.Equal(t, 224, OffsetCQRQ)
	assert.Equal(t, 288, OffsetNICHandler)
	assert.Equal(t, 328, OffsetQPError)
	assert.Equal(t, 352, OffsetPollTimeout)
	assert.Equal(t, 96, OffsetRQWQEPI)
	assert.Equal(t, 136, OffsetRQRsvdIndex)
	assert.Equal(t, 144, OffsetRQReadyIndex)
	assert.Equal(t, 152, OffsetRQLock)
	assert.Equal(t, [3]uint32{0, 1, 2}, [3]uint32{QPErrNone, QPErrCQE, QPErrTimeout})
	assert.Equal(t, uint8(1), CQFlagInQP)
	assert.Equal(t, uint8(2), CQFlagRQ)
}

func sampleQP() QP {
	q := QP{
		SQRsvdIndex: 0x1111, SQReadyIndex: 0x2222, SQWQEPI: 0x3333, SQLock: -1,
		SQWQENum: 256, SQWQEMask: 255, SQWQEDAddr: 0x7f0000001000, SQDBRec: 0x7f0000002004,
		SQDB: 0x7f0000003800, NICHandler: 2, MemType: MemTypeGPU,
		CQ: CQ{CQEDAddr: 0x7f0000004000, CQNum: 0x55, CQENum: 256, DBRec: 0x7f0000005000,
			CQECI: 7, CQEMask: 255, CQESize: 64, Flags: CQFlagInQP, CQERsvd: 9, MemType: MemTypeGPU},
		RQNum: 0xabcdef, RQWQEPI: 0x4444, RQWQENum: 512, RQWQEMask: 511, RQWQEDAddr: 0x7f0000006000,
		RQDBRec: 0x7f0000002000, RcvWQESize: 16, RQRsvdIndex: 0x5555, RQReadyIndex: 0x6666, RQLock: 1,
		CQRQ: CQ{CQEDAddr: 0x7f0000007000, CQNum: 0x56, CQENum: 512, DBRec: 0x7f0000008000,
			CQECI: 11, CQEMask: 511, CQESize: 64, Flags: CQFlagInQP | CQFlagRQ, CQERsvd: 3, MemType: MemTypeGPU},
		NeedMCST: 1, LastGetWQEIdx: 0x7777, LastDumpWQEIdx: 0x8888, LastRecvWQEIdx: 0x9999,
		PollTimeout: 0x123456789,
		Error: QPError{Status: QPErrCQE, Syndrome: 0x13, VendorSyndrome: 0x88, HWSyndrome: 0x21, HWSyndromeType: 0x22,
			CQEOpcode: 13, WQEOpcode: 8, WQECounter: 0xfffe, WQEIndex: 0x1fffe},
	}
	q.SetQPN(0xabcdef)
	return q
}

func TestEncodeFieldBytes(t *testing.T) {
	q := sampleQP()
	b := q.Encode()
	require.Len(t, b, 392)
	be := binary.BigEndian
	tests := []struct {
		name string
		off  int
		n    int
		want uint64
		big  bool
	}{
		{"sq_rsvd_index", 0, 8, 0x1111, false},
		{"sq_ready_index", 8, 8, 0x2222, false},
		{"sq_wqe_pi", 16, 8, 0x3333, false},
		{"sq_num", 24, 4, 0xabcdef, false},
		{"sq_num_shift8", 28, 4, 0xabcdef00, false},
		{"sq_num_shift8_be", 32, 4, 0xabcdef00, true},
		{"1ds", 36, 4, 0xabcdef01, true},
		{"2ds", 40, 4, 0xabcdef02, true},
		{"3ds", 44, 4, 0xabcdef03, true},
		{"4ds", 48, 4, 0xabcdef04, true},
		{"5ds", 52, 4, 0xabcdef05, true},
		{"sq_lock", 56, 4, 0xffffffff, false},
		{"sq_wqe_num", 60, 2, 256, false},
		{"sq_wqe_mask", 62, 2, 255, false},
		{"sq_wqe_daddr", 64, 8, 0x7f0000001000, false},
		{"sq_dbrec", 72, 8, 0x7f0000002004, false},
		{"sq_db", 80, 8, 0x7f0000003800, false},
		{"cq.cqe_daddr", 160, 8, 0x7f0000004000, false},
		{"cq.cq_num", 168, 4, 0x55, false},
		{"cq.cqe_num", 172, 4, 256, false},
		{"cq.dbrec", 176, 8, 0x7f0000005000, false},
		{"cq.cqe_ci", 184, 8, 7, false},
		{"cq.cqe_mask", 192, 4, 255, false},
		{"cq.cqe_size", 196, 1, 64, false},
		{"cq.gdaki_flags", 197, 1, 1, false},
		{"rq_num", 88, 4, 0xabcdef, false},
		{"rq_wqe_pi", 96, 8, 0x4444, false},
		{"rq_wqe_num", 104, 4, 512, false},
		{"rq_wqe_mask", 108, 4, 511, false},
		{"rq_wqe_daddr", 112, 8, 0x7f0000006000, false},
		{"rq_dbrec", 120, 8, 0x7f0000002000, false},
		{"rcv_wqe_size", 128, 4, 16, false},
		{"rq_rsvd_index", 136, 8, 0x5555, false},
		{"rq_ready_index", 144, 8, 0x6666, false},
		{"rq_lock", 152, 4, 1, false},
		{"error.status", 328, 4, 1, false},
		{"error.syndrome", 332, 1, 0x13, false},
		{"error.vendor_syndrome", 333, 1, 0x88, false},
		{"error.hw_syndrome", 334, 1, 0x21, false},
		{"error.hw_syndrome_type", 335, 1, 0x22, false},
		{"error.cqe_opcode", 336, 1, 13, false},
		{"error.wqe_opcode", 337, 1, 8, false},
		{"error.wqe_counter", 338, 2, 0xfffe, false},
		{"error.wqe_index", 344, 8, 0x1fffe, false},
		{"poll_timeout", 352, 8, 0x123456789, false},
		{"cq.cqe_rsvd", 200, 8, 9, false},
		{"cq.mem_type", 208, 4, 2, false},
		{"cq_rq.cqe_daddr", 224, 8, 0x7f0000007000, false},
		{"cq_rq.cq_num", 232, 4, 0x56, false},
		{"cq_rq.cqe_num", 236, 4, 512, false},
		{"cq_rq.dbrec", 240, 8, 0x7f0000008000, false},
		{"cq_rq.cqe_ci", 248, 8, 11, false},
		{"cq_rq.cqe_mask", 256, 4, 511, false},
		{"cq_rq.cqe_size", 260, 1, 64, false},
		{"cq_rq.gdaki_flags", 261, 1, 3, false},
		{"cq_rq.cqe_rsvd", 264, 8, 3, false},
		{"cq_rq.mem_type", 272, 4, 2, false},
		{"nic_handler", 288, 4, 2, false},
		{"mem_type", 292, 4, 2, false},
		{"need_mcst", 296, 1, 1, false},
		{"last_get_wqe_idx", 304, 8, 0x7777, false},
		{"last_dump_wqe_idx", 312, 8, 0x8888, false},
		{"last_recv_wqe_idx", 320, 8, 0x9999, false},
	}
	for _, tc := range tests {
		var got uint64
		switch {
		case tc.n == 8:
			got = le.Uint64(b[tc.off:])
		case tc.n == 4 && tc.big:
			got = uint64(be.Uint32(b[tc.off:]))
		case tc.n == 4:
			got = uint64(le.Uint32(b[tc.off:]))
		case tc.n == 2:
			got = uint64(le.Uint16(b[tc.off:]))
		default:
			got = uint64(b[tc.off])
		}
		assert.Equal(t, tc.want, got, tc.name)
	}
	for _, r := range [][2]int{{92, 96}, {132, 136}, {156, 160}, {198, 200}, {212, 224}, {262, 264}, {276, 288}, {297, 304},
		{340, 344}, {360, 392}} {
		assert.Equal(t, make([]byte, r[1]-r[0]), b[r[0]:r[1]], "reserved %d..%d", r[0], r[1])
	}
}

func TestDecodeRoundTripAndRejects(t *testing.T) {
	q := sampleQP()
	b := q.Encode()
	got, err := DecodeQP(b)
	require.NoError(t, err)
	assert.Equal(t, q, got)

	_, err = DecodeQP(b[:391])
	assert.ErrorContains(t, err, "391 bytes")
	for _, off := range []int{92, 95, 132, 156, 159, 198, 215, 262, 280, 297, 303, 340, 360, 391} {
		c := append([]byte(nil), b...)
		c[off] = 1
		_, err := DecodeQP(c)
		assert.ErrorContains(t, err, "reserved", "offset %d", off)
	}
	_, err = DecodeCQ(b[160:200])
	assert.Error(t, err)

	c := append([]byte(nil), b...)
	c[296] = 2 // need_mcst is a bool
	_, err = DecodeQP(c)
	assert.ErrorContains(t, err, "need_mcst")

	c = append([]byte(nil), b...)
	c[328] = 3 // no such status
	_, err = DecodeQP(c)
	assert.ErrorContains(t, err, "unknown status")
	le.PutUint32(c[328:], 0x80000000)
	_, err = DecodeQP(c)
	assert.ErrorIs(t, err, ErrRecordBusy, "a record being written is reported as such")
}

func TestQPErrorRoundTrip(t *testing.T) {
	for _, e := range []QPError{
		{},
		{Status: QPErrTimeout, WQECounter: 7, WQEIndex: 0x10007},
		sampleQP().Error,
	} {
		b := make([]byte, QPErrorSize)
		e.Put(b)
		got, err := DecodeQPError(b)
		require.NoError(t, err)
		assert.Equal(t, e, got)
	}
	_, err := DecodeQPError(make([]byte, QPErrorSize-1))
	assert.ErrorContains(t, err, "23 bytes")
}

func TestBE32(t *testing.T) {
	var b [4]byte
	for _, v := range []uint32{0, 1, 0x12345678, 0xffffff00} {
		le.PutUint32(b[:], BE32(v))
		assert.Equal(t, v, binary.BigEndian.Uint32(b[:]))
	}
}

func FuzzDecodeQP(f *testing.F) {
	q := sampleQP()
	f.Add(q.Encode())
	f.Add(make([]byte, 392))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := DecodeQP(b)
		if err != nil {
			return
		}
		// A decodable image re-encodes to itself.
		out := q.Encode()
		if string(out) != string(b[:QPSize]) {
			t.Fatalf("re-encoding differs")
		}
	})
}

// FuzzDecodeQPError: any 24 bytes decode to a record that re-encodes to
// them, or to a clear error (short, busy, unknown status, dirty reserved word).
func FuzzDecodeQPError(f *testing.F) {
	e := sampleQP().Error
	b := make([]byte, QPErrorSize)
	e.Put(b)
	f.Add(b)
	f.Add(make([]byte, QPErrorSize))
	f.Add([]byte{0, 0, 0, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeQPError(b)
		if err != nil {
			return
		}
		out := make([]byte, QPErrorSize)
		e.Put(out)
		if string(out) != string(b[:QPErrorSize]) {
			t.Fatalf("re-encoding differs")
		}
	})
}

// Every member Put and the decoders walk has the width of the C field at its
// offset (a member typed wider or narrower than the header's field would
// spill into its neighbour or drop bytes).
func TestMembersMatchCFieldSizes(t *testing.T) {
	sizes := func(prefix string, base uintptr) map[uintptr]uintptr {
		m := map[uintptr]uintptr{}
		for _, f := range Layout() {
			// reserved arrays share offsets with the extension fields of their unions
			if rest, ok := strings.CutPrefix(f.Name, prefix+"."); ok && rest != "align" && !strings.HasPrefix(rest, "reserved") {
				m[base+f.Offset] = f.Size
			}
		}
		return m
	}
	qp := sizes("doca_gpu_dev_verbs_qp", 0)
	for off, n := range sizes("gdaki_dev_qp_ext", uintptr(offExt)) {
		qp[off] = n
	}
	width := func(p any) uintptr {
		switch p.(type) {
		case *uint8:
			return 1
		case *uint16:
			return 2
		case *uint32, *int32:
			return 4
		case *uint64:
			return 8
		}
		t.Fatalf("member of type %T", p)
		return 0
	}
	var q QP
	var e QPError
	var c CQ
	for _, s := range []struct {
		name    string
		members []member
		sizes   map[uintptr]uintptr
	}{
		{"QP", q.members(), qp},
		{"QPError", e.members(), sizes("gdaki_dev_qp_error", 0)},
		{"CQ", c.members(), sizes("doca_gpu_dev_verbs_cq", 0)},
	} {
		for _, m := range s.members {
			n, ok := s.sizes[uintptr(m.off)]
			if s.name == "QP" && m.off >= offSQNumShift8BE && m.off < offSQLock {
				n, ok = 4, true // the six big-endian qpn words
			}
			if assert.Truef(t, ok, "%s member at %d: no C field starts there", s.name, m.off) {
				assert.Equalf(t, n, width(m.p), "%s member at %d", s.name, m.off)
			}
		}
	}
}
