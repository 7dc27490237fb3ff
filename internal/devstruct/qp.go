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
	// QP's cq_sq carries CQFlagInQP.
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
	CQ            CQ
	NICHandler    uint32
	MemType       uint32
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

// Put writes the image of q to b[:QPSize], reserved bytes zeroed. b must be
// at least QPSize bytes.
func (q *QP) Put(b []byte) {
	b = b[:QPSize]
	clear(b)
	le.PutUint64(b[offSQRsvdIndex:], q.SQRsvdIndex)
	le.PutUint64(b[offSQReadyIndex:], q.SQReadyIndex)
	le.PutUint64(b[offSQWQEPI:], q.SQWQEPI)
	le.PutUint32(b[offSQNum:], q.SQNum)
	le.PutUint32(b[offSQNumShift8:], q.SQNumShift8)
	for k, off := range beOffsets {
		le.PutUint32(b[off:], q.SQNumShift8BE[k])
	}
	le.PutUint32(b[offSQLock:], uint32(q.SQLock))
	le.PutUint16(b[offSQWQENum:], q.SQWQENum)
	le.PutUint16(b[offSQWQEMask:], q.SQWQEMask)
	le.PutUint64(b[offSQWQEDAddr:], q.SQWQEDAddr)
	le.PutUint64(b[offSQDBRec:], q.SQDBRec)
	le.PutUint64(b[offSQDB:], q.SQDB)
	q.Error.Put(b[offExt+offExtError : offExt+offExtError+QPErrorSize])
	le.PutUint64(b[offExt+offExtPollTimeout:], q.PollTimeout)
	q.CQ.Put(b[offCQSQ : offCQSQ+CQSize])
	le.PutUint32(b[offNICHandler:], q.NICHandler)
	le.PutUint32(b[offQPMemType:], q.MemType)
}

// Put writes the image of e to b[:QPErrorSize], the reserved word zeroed.
func (e *QPError) Put(b []byte) {
	b = b[:QPErrorSize]
	clear(b)
	le.PutUint32(b[offErrStatus:], e.Status)
	b[offErrSyndrome] = e.Syndrome
	b[offErrVendor] = e.VendorSyndrome
	b[offErrHW] = e.HWSyndrome
	b[offErrHWType] = e.HWSyndromeType
	b[offErrCQEOpcode] = e.CQEOpcode
	b[offErrWQEOpcode] = e.WQEOpcode
	le.PutUint16(b[offErrWQECounter:], e.WQECounter)
	le.PutUint64(b[offErrWQEIndex:], e.WQEIndex)
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
	e := QPError{
		Status:         le.Uint32(b[offErrStatus:]),
		Syndrome:       b[offErrSyndrome],
		VendorSyndrome: b[offErrVendor],
		HWSyndrome:     b[offErrHW],
		HWSyndromeType: b[offErrHWType],
		CQEOpcode:      b[offErrCQEOpcode],
		WQEOpcode:      b[offErrWQEOpcode],
		WQECounter:     le.Uint16(b[offErrWQECounter:]),
		WQEIndex:       le.Uint64(b[offErrWQEIndex:]),
	}
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
	for _, r := range [][2]int{{offQPReserved1, offQPReserved2}, {offExt + offExtReserved, offExt + extSize}, {offQPReserved3, offNICHandler}} {
		if off, ok := nonZero(b[r[0]:r[1]]); ok {
			return QP{}, fmt.Errorf("devstruct: device QP reserved byte at offset %d is not zero", r[0]+off)
		}
	}
	var q QP
	q.SQRsvdIndex = le.Uint64(b[offSQRsvdIndex:])
	q.SQReadyIndex = le.Uint64(b[offSQReadyIndex:])
	q.SQWQEPI = le.Uint64(b[offSQWQEPI:])
	q.SQNum = le.Uint32(b[offSQNum:])
	q.SQNumShift8 = le.Uint32(b[offSQNumShift8:])
	for k, off := range beOffsets {
		q.SQNumShift8BE[k] = le.Uint32(b[off:])
	}
	q.SQLock = int32(le.Uint32(b[offSQLock:]))
	q.SQWQENum = le.Uint16(b[offSQWQENum:])
	q.SQWQEMask = le.Uint16(b[offSQWQEMask:])
	q.SQWQEDAddr = le.Uint64(b[offSQWQEDAddr:])
	q.SQDBRec = le.Uint64(b[offSQDBRec:])
	q.SQDB = le.Uint64(b[offSQDB:])
	cq, err := DecodeCQ(b[offCQSQ : offCQSQ+CQSize])
	if err != nil {
		return QP{}, err
	}
	q.CQ = cq
	q.NICHandler = le.Uint32(b[offNICHandler:])
	q.MemType = le.Uint32(b[offQPMemType:])
	q.PollTimeout = le.Uint64(b[offExt+offExtPollTimeout:])
	if q.Error, err = DecodeQPError(b[offExt+offExtError:]); err != nil {
		return QP{}, err
	}
	return q, nil
}

// Put writes the image of c to b[:CQSize], reserved bytes zeroed.
func (c *CQ) Put(b []byte) {
	b = b[:CQSize]
	clear(b)
	le.PutUint64(b[offCQEDAddr:], c.CQEDAddr)
	le.PutUint32(b[offCQNum:], c.CQNum)
	le.PutUint32(b[offCQENum:], c.CQENum)
	le.PutUint64(b[offCQDBRec:], c.DBRec)
	le.PutUint64(b[offCQECI:], c.CQECI)
	le.PutUint32(b[offCQEMask:], c.CQEMask)
	b[offCQESize] = c.CQESize
	b[offCQFlags] = c.Flags
	le.PutUint64(b[offCQERsvd:], c.CQERsvd)
	le.PutUint32(b[offCQMemType:], c.MemType)
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
	return CQ{
		CQEDAddr: le.Uint64(b[offCQEDAddr:]),
		CQNum:    le.Uint32(b[offCQNum:]),
		CQENum:   le.Uint32(b[offCQENum:]),
		DBRec:    le.Uint64(b[offCQDBRec:]),
		CQECI:    le.Uint64(b[offCQECI:]),
		CQEMask:  le.Uint32(b[offCQEMask:]),
		CQESize:  b[offCQESize],
		Flags:    b[offCQFlags],
		CQERsvd:  le.Uint64(b[offCQERsvd:]),
		MemType:  le.Uint32(b[offCQMemType:]),
	}, nil
}

func nonZero(b []byte) (int, bool) {
	for i, v := range b {
		if v != 0 {
			return i, true
		}
	}
	return 0, false
}
