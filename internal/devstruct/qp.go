package devstruct

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The device structs are little-endian images (the host and the GPU are
// little-endian); fields documented as big-endian (__be32) hold values that
// are already byte-swapped, stored like any other 32-bit word.
var le = binary.LittleEndian

// CQ mirrors struct doca_gpu_dev_verbs_cq field by field. Reserved bytes are
// not represented: Encode writes them as zero.
type CQ struct {
	CQEDAddr uint64 // GPU address of CQE 0
	CQNum    uint32
	CQENum   uint32 // a power of two
	DBRec    uint64 // GPU address of the CQ doorbell record
	CQECI    uint64
	CQEMask  uint32
	CQESize  uint8
	// Flags is the extension byte gdaki_flags (reserved1[0]); an exported
	// QP's cq_sq carries CQFlagInQP, its cq_rq CQFlagInQP|CQFlagRQ.
	Flags   uint8
	CQERsvd uint64
	MemType uint32
}

// QPError mirrors struct gdaki_dev_qp_error: the first failure device code
// saw on a QP (an error CQE or a poll that ran past its bound).
type QPError struct {
	Status         uint32 // QPErrNone, QPErrCQE or QPErrTimeout
	Syndrome       uint8  // CQE byte 55
	VendorSyndrome uint8  // CQE byte 54
	HWSyndrome     uint8  // CQE byte 52
	HWSyndromeType uint8  // CQE byte 53
	CQEOpcode      uint8  // 13 REQ_ERR, 14 RESP_ERR; 0 for a timeout
	WQEOpcode      uint8  // opcode of the failed WQE
	WQECounter     uint16 // the CQE's 16-bit WQE counter
	WQEIndex       uint64 // the 64-bit WQE index whose poll saw the failure
}

// QP mirrors struct doca_gpu_dev_verbs_qp field by field. The QPN-derived
// words are explicit fields (SetQPN fills them consistently); reserved bytes
// are not represented and Encode writes them as zero.
type QP struct {
	SQRsvdIndex  uint64
	SQReadyIndex uint64
	SQWQEPI      uint64
	SQNum        uint32
	SQNumShift8  uint32
	// SQNumShift8BE[k] is the in-memory value of the big-endian word
	// (qpn << 8) | k: index 0 is sq_num_shift8_be, 1..5 the _Nds words.
	SQNumShift8BE [6]uint32
	SQLock        int32
	SQWQENum      uint16
	SQWQEMask     uint16
	SQWQEDAddr    uint64
	SQDBRec       uint64
	SQDB          uint64
	// The receive queue (zero for a QP without one).
	RQNum        uint32
	RQWQEPI      uint64
	RQWQENum     uint32
	RQWQEMask    uint32
	RQWQEDAddr   uint64
	RQDBRec      uint64 // GPU-writable address of doorbell-record word 0
	RcvWQESize   uint32
	RQRsvdIndex  uint64
	RQReadyIndex uint64
	RQLock       int32
	CQ           CQ // cq_sq
	CQRQ         CQ // cq_rq
	NICHandler   uint32
	MemType      uint32
	// NeedMCST is need_mcst (alias need_dump): 1 when the GPU needs a DUMP
	// to see GPUDirect RDMA writes in order; 0 or 1.
	NeedMCST       uint8
	LastGetWQEIdx  uint64
	LastDumpWQEIdx uint64
	LastRecvWQEIdx uint64
	// PollTimeout (extension) bounds every device poll of the QP, in GPU
	// clock ticks; 0 means no bound.
	PollTimeout uint64
	// Error (extension) is what device code recorded; the host leaves it
	// zero.
	Error QPError
}

// BE32 returns the host-order value whose memory image is v big-endian: a
// __be32 field holding v.
func BE32(v uint32) uint32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return le.Uint32(b[:])
}

// SetQPN fills sq_num, sq_num_shift8 and the six big-endian qpn_ds words.
func (q *QP) SetQPN(qpn uint32) {
	q.SQNum = qpn
	q.SQNumShift8 = qpn << 8
	for k := range q.SQNumShift8BE {
		q.SQNumShift8BE[k] = BE32(qpn<<8 | uint32(k))
	}
}

// ErrRecordBusy is returned by DecodeQPError for a record that device code
// is writing at that moment: read it again.
var ErrRecordBusy = errors.New("devstruct: QP error record is being written")

var beOffsets = [6]int{offSQNumShift8BE, offSQNumBE1DS, offSQNumBE2DS, offSQNumBE3DS, offSQNumBE4DS, offSQNumBE5DS}

// Encode returns the QPSize-byte image of q in the C layout.
func (q *QP) Encode() []byte {
	b := make([]byte, QPSize)
	q.Put(b)
	return b
}

// member ties one scalar of a mirror struct to its offset in the C image;
// p is a *uint8, *uint16, *uint32, *int32 or *uint64 and gives the width.
// Each struct lists its members once (members below), and Put and the
// decoders walk that list, so an offset is written in one place.
type member struct {
	off int
	p   any
}

func putMembers(b []byte, ms []member) {
	for _, m := range ms {
		switch p := m.p.(type) {
		case *uint8:
			b[m.off] = *p
		case *uint16:
			le.PutUint16(b[m.off:], *p)
		case *uint32:
			le.PutUint32(b[m.off:], *p)
		case *int32:
			le.PutUint32(b[m.off:], uint32(*p))
		case *uint64:
			le.PutUint64(b[m.off:], *p)
		}
	}
}

func getMembers(b []byte, ms []member) {
	for _, m := range ms {
		switch p := m.p.(type) {
		case *uint8:
			*p = b[m.off]
		case *uint16:
			*p = le.Uint16(b[m.off:])
		case *uint32:
			*p = le.Uint32(b[m.off:])
		case *int32:
			*p = int32(le.Uint32(b[m.off:]))
		case *uint64:
			*p = le.Uint64(b[m.off:])
		}
	}
}

// members lists the scalars of struct doca_gpu_dev_verbs_qp outside its
// embedded CQ and error record.
func (q *QP) members() []member {
	ms := []member{
		{offSQRsvdIndex, &q.SQRsvdIndex}, {offSQReadyIndex, &q.SQReadyIndex}, {offSQWQEPI, &q.SQWQEPI},
		{offSQNum, &q.SQNum}, {offSQNumShift8, &q.SQNumShift8}, {offSQLock, &q.SQLock},
		{offSQWQENum, &q.SQWQENum}, {offSQWQEMask, &q.SQWQEMask}, {offSQWQEDAddr, &q.SQWQEDAddr},
		{offSQDBRec, &q.SQDBRec}, {offSQDB, &q.SQDB}, {offExt + offExtPollTimeout, &q.PollTimeout},
		{offNICHandler, &q.NICHandler}, {offQPMemType, &q.MemType},
		{offRQNum, &q.RQNum}, {offRQWQEPI, &q.RQWQEPI}, {offRQWQENum, &q.RQWQENum}, {offRQWQEMask, &q.RQWQEMask},
		{offRQWQEDAddr, &q.RQWQEDAddr}, {offRQDBRec, &q.RQDBRec}, {offRcvWQESize, &q.RcvWQESize},
		{offRQRsvdIndex, &q.RQRsvdIndex}, {offRQReadyIndex, &q.RQReadyIndex}, {offRQLock, &q.RQLock},
		{offNeedMCST, &q.NeedMCST}, {offLastGetWQE, &q.LastGetWQEIdx}, {offLastDumpWQE, &q.LastDumpWQEIdx},
		{offLastRecvWQE, &q.LastRecvWQEIdx},
	}
	for k, off := range beOffsets {
		ms = append(ms, member{off, &q.SQNumShift8BE[k]})
	}
	return ms
}

// members lists the fields of struct gdaki_dev_qp_error but its reserved word.
func (e *QPError) members() []member {
	return []member{
		{offErrStatus, &e.Status}, {offErrSyndrome, &e.Syndrome}, {offErrVendor, &e.VendorSyndrome},
		{offErrHW, &e.HWSyndrome}, {offErrHWType, &e.HWSyndromeType}, {offErrCQEOpcode, &e.CQEOpcode},
		{offErrWQEOpcode, &e.WQEOpcode}, {offErrWQECounter, &e.WQECounter}, {offErrWQEIndex, &e.WQEIndex},
	}
}

// members lists the fields of struct doca_gpu_dev_verbs_cq but its reserved
// bytes.
func (c *CQ) members() []member {
	return []member{
		{offCQEDAddr, &c.CQEDAddr}, {offCQNum, &c.CQNum}, {offCQENum, &c.CQENum}, {offCQDBRec, &c.DBRec},
		{offCQECI, &c.CQECI}, {offCQEMask, &c.CQEMask}, {offCQESize, &c.CQESize}, {offCQFlags, &c.Flags},
		{offCQERsvd, &c.CQERsvd}, {offCQMemType, &c.MemType},
	}
}

// Put writes the image of q to b[:QPSize], reserved bytes zeroed. b must be
// at least QPSize bytes.
func (q *QP) Put(b []byte) {
	b = b[:QPSize]
	clear(b)
	putMembers(b, q.members())
	q.Error.Put(b[offExt+offExtError : offExt+offExtError+QPErrorSize])
	q.CQ.Put(b[offCQSQ : offCQSQ+CQSize])
	q.CQRQ.Put(b[offCQRQ : offCQRQ+CQSize])
}

// Put writes the image of e to b[:QPErrorSize], the reserved word zeroed.
func (e *QPError) Put(b []byte) {
	b = b[:QPErrorSize]
	clear(b)
	putMembers(b, e.members())
}

// DecodeQPError reads an error record (for example one copied back from a
// device QP at OffsetQPError). It fails on a short buffer, a non-zero
// reserved word and an unknown status; a record device code is still
// writing (the status has bit 31 set) is reported as such, so the caller
// can read it again.
func DecodeQPError(b []byte) (QPError, error) {
	if len(b) < QPErrorSize {
		return QPError{}, fmt.Errorf("devstruct: QP error record of %d bytes, need %d", len(b), QPErrorSize)
	}
	var e QPError
	getMembers(b, e.members())
	switch {
	case e.Status == qpErrWriting:
		return QPError{}, ErrRecordBusy
	case e.Status != QPErrNone && e.Status != QPErrCQE && e.Status != QPErrTimeout:
		return QPError{}, fmt.Errorf("devstruct: QP error record has unknown status %#x", e.Status)
	case le.Uint32(b[offErrReserved:]) != 0:
		return QPError{}, fmt.Errorf("devstruct: QP error record reserved word is %#x, not zero", le.Uint32(b[offErrReserved:]))
	}
	return e, nil
}

// DecodeQP reads a device QP image (for example one copied back from GPU
// memory). It fails on a short buffer and on non-zero reserved bytes, which
// no host writes and no kernel may touch.
func DecodeQP(b []byte) (QP, error) {
	if len(b) < QPSize {
		return QP{}, fmt.Errorf("devstruct: device QP image of %d bytes, need %d", len(b), QPSize)
	}
	b = b[:QPSize]
	for _, r := range [][2]int{
		{offRQReserved0, offRQReserved0 + 4}, {offRQReserved1, offRQReserved1 + 4}, {offRQReserved2, offRQReserved2 + 4},
		{offReservedMCST, offReservedMCST + 7}, {offExt + offExtReserved, offExt + extSize},
	} {
		if off, ok := nonZero(b[r[0]:r[1]]); ok {
			return QP{}, fmt.Errorf("devstruct: device QP reserved byte at offset %d is not zero", r[0]+off)
		}
	}
	var q QP
	getMembers(b, q.members())
	var err error
	if q.NeedMCST > 1 {
		return QP{}, fmt.Errorf("devstruct: device QP need_mcst is %d, not a bool", q.NeedMCST)
	}
	if q.CQ, err = DecodeCQ(b[offCQSQ : offCQSQ+CQSize]); err != nil {
		return QP{}, err
	}
	if q.CQRQ, err = DecodeCQ(b[offCQRQ : offCQRQ+CQSize]); err != nil {
		return QP{}, err
	}
	if q.Error, err = DecodeQPError(b[offExt+offExtError:]); err != nil {
		return QP{}, err
	}
	return q, nil
}

// Put writes the image of c to b[:CQSize], reserved bytes zeroed.
func (c *CQ) Put(b []byte) {
	b = b[:CQSize]
	clear(b)
	putMembers(b, c.members())
}

// DecodeCQ reads a device CQ image; reserved bytes must be zero.
func DecodeCQ(b []byte) (CQ, error) {
	if len(b) < CQSize {
		return CQ{}, fmt.Errorf("devstruct: device CQ image of %d bytes, need %d", len(b), CQSize)
	}
	b = b[:CQSize]
	for _, r := range [][2]int{{offCQFlags + 1, offCQERsvd}, {offCQReserved2, CQSize}} {
		if off, ok := nonZero(b[r[0]:r[1]]); ok {
			return CQ{}, fmt.Errorf("devstruct: device CQ reserved byte at offset %d is not zero", r[0]+off)
		}
	}
	var c CQ
	getMembers(b, c.members())
	return c, nil
}

func nonZero(b []byte) (int, bool) {
	for i, v := range b {
		if v != 0 {
			return i, true
		}
	}
	return 0, false
}
