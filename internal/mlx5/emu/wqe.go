package emu

import (
	"encoding/binary"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// This file reads send WQEs out of the SQ ring. The encoders and the
// validating parser of the WQE layouts live in internal/mlx5; the emulator
// needs a reader that works in place on ring bytes (segments may wrap at the
// ring end, 0-length byte counts mean 2 GiB as on hardware) and reports the
// completion syndrome a ConnectX would, so it keeps its own small one.

const (
	wqebb       = 64
	dsSize      = 16
	inlineFlag  = 0x80000000
	invalidLKey = 0x100
)

// sge is one gather/scatter entry of a WQE.
type sge struct {
	lkey uint32
	addr uint64
	len  uint64
}

// wqe is a decoded send WQE.
type wqe struct {
	idx    uint16
	opcode uint8
	opmod  uint8
	qpn    uint32
	ds     int
	bbs    int // WQEBBs the WQE occupies
	fm     uint8
	ce     uint8
	se     bool
	imm    [4]byte

	raddr uint64
	rkey  uint32

	sges   [maxSGEPerWQE]sge
	nsge   int
	inline []byte
	isInl  bool
	length uint64 // message length

	// atomics
	swapAdd, compare, swapMask, compareMask, boundary uint64
	size                                              int
	masked                                            bool

	// WAIT
	waitIndex, waitCQN uint32
}

// readWQE copies the WQE that starts at SQ index idx into buf (handling the
// ring wrap) and decodes it. A non-zero syndrome is the error the WQE
// completes with (LOCAL_QP_OP_ERR for a malformed WQE); w.bbs is always
// set (at least 1) so the SQ can move past a bad WQE.
func (q *qp) readWQE(idx uint16, buf *[1024]byte, w *wqe) mlx5.Syndrome {
	size := uint64(1) << q.sqLog
	slot := uint64(idx) & (size - 1)
	mem := q.wq.mem
	if err := mem.read(buf[:wqebb], q.sqOff+slot*wqebb); err != nil {
		w.bbs = 1
		return mlx5.SyndromeLocalProtErr
	}
	*w = wqe{}
	dw0 := binary.BigEndian.Uint32(buf[0:4])
	dw1 := binary.BigEndian.Uint32(buf[4:8])
	w.opmod = uint8(dw0 >> 24)
	w.idx = uint16(dw0 >> 8)
	w.opcode = uint8(dw0)
	w.qpn = dw1 >> 8
	w.ds = int(dw1 & 0x3f)
	w.bbs = (w.ds + 3) / 4
	if w.bbs == 0 {
		w.bbs = 1
	}
	if uint64(w.bbs) > size {
		w.bbs = 1
		return mlx5.SyndromeLocalQPOpErr
	}
	fmce := buf[11]
	w.fm = fmce >> 5
	w.ce = fmce >> 2 & 3
	w.se = fmce&2 != 0
	copy(w.imm[:], buf[12:16])
	// The rest of the WQE, continuing at slot 0 past the ring end.
	for i := 1; i < w.bbs; i++ {
		s := (slot + uint64(i)) & (size - 1)
		if err := mem.read(buf[i*wqebb:(i+1)*wqebb], q.sqOff+s*wqebb); err != nil {
			return mlx5.SyndromeLocalProtErr
		}
	}
	if w.qpn != q.qpn || w.idx != idx || w.ds == 0 || w.ds*dsSize > capMaxWQESzSQ {
		return mlx5.SyndromeLocalQPOpErr
	}
	segs := buf[dsSize : w.ds*dsSize]
	op := mlx5.WQEOpcode(w.opcode)
	if q.uc {
		switch op {
		case mlx5.WQEOpNop, mlx5.WQEOpRDMAWrite, mlx5.WQEOpRDMAWriteImm, mlx5.WQEOpSend, mlx5.WQEOpSendImm:
		default:
			return mlx5.SyndromeLocalQPOpErr
		}
	}
	switch op {
	case mlx5.WQEOpNop:
		return 0
	case mlx5.WQEOpRDMAWrite, mlx5.WQEOpRDMAWriteImm:
		if len(segs) < dsSize {
			return mlx5.SyndromeLocalQPOpErr
		}
		w.raddr = binary.BigEndian.Uint64(segs[0:8])
		w.rkey = binary.BigEndian.Uint32(segs[8:12])
		return w.data(segs[dsSize:], true)
	case mlx5.WQEOpSend, mlx5.WQEOpSendImm, mlx5.WQEOpSendInval:
		return w.data(segs, true)
	case mlx5.WQEOpRDMARead:
		if len(segs) < dsSize {
			return mlx5.SyndromeLocalQPOpErr
		}
		w.raddr = binary.BigEndian.Uint64(segs[0:8])
		w.rkey = binary.BigEndian.Uint32(segs[8:12])
		return w.data(segs[dsSize:], false)
	case mlx5.WQEOpAtomicCS, mlx5.WQEOpAtomicFA:
		if w.ds != 4 || w.opmod != 0 {
			return mlx5.SyndromeLocalQPOpErr
		}
		w.raddr = binary.BigEndian.Uint64(segs[0:8])
		w.rkey = binary.BigEndian.Uint32(segs[8:12])
		w.swapAdd = binary.BigEndian.Uint64(segs[16:24])
		w.compare = binary.BigEndian.Uint64(segs[24:32])
		w.size = 8
		return w.atomicData(segs[32:48])
	case mlx5.WQEOpAtomicMaskedCS, mlx5.WQEOpAtomicMaskedFA:
		w.masked = true
		switch w.opmod {
		case mlx5.OpModMaskedAtomic4:
			w.size = 4
		case mlx5.OpModMaskedAtomic8:
			w.size = 8
		default:
			return mlx5.SyndromeLocalQPOpErr
		}
		want := 4
		if op == mlx5.WQEOpAtomicMaskedCS && w.size == 8 {
			want = 5
		}
		if w.ds != want {
			return mlx5.SyndromeLocalQPOpErr
		}
		w.raddr = binary.BigEndian.Uint64(segs[0:8])
		w.rkey = binary.BigEndian.Uint32(segs[8:12])
		a := segs[16:]
		switch {
		case w.size == 4 && op == mlx5.WQEOpAtomicMaskedCS:
			w.swapAdd = uint64(binary.BigEndian.Uint32(a[0:]))
			w.compare = uint64(binary.BigEndian.Uint32(a[4:]))
			w.swapMask = uint64(binary.BigEndian.Uint32(a[8:]))
			w.compareMask = uint64(binary.BigEndian.Uint32(a[12:]))
		case w.size == 4:
			w.swapAdd = uint64(binary.BigEndian.Uint32(a[0:]))
			w.boundary = uint64(binary.BigEndian.Uint32(a[4:]))
		case op == mlx5.WQEOpAtomicMaskedCS:
			w.swapAdd = binary.BigEndian.Uint64(a[0:])
			w.compare = binary.BigEndian.Uint64(a[8:])
			w.swapMask = binary.BigEndian.Uint64(a[16:])
			w.compareMask = binary.BigEndian.Uint64(a[24:])
			a = a[16:]
		default:
			w.swapAdd = binary.BigEndian.Uint64(a[0:])
			w.boundary = binary.BigEndian.Uint64(a[8:])
		}
		return w.atomicData(a[16:32])
	case mlx5.WQEOpWait:
		if w.ds < 2 || w.opmod != 0 {
			return mlx5.SyndromeLocalQPOpErr
		}
		w.waitIndex = binary.BigEndian.Uint32(segs[8:12])
		w.waitCQN = binary.BigEndian.Uint32(segs[12:16])
		return 0
	case mlx5.WQEOpDump:
		return w.data(segs, false)
	}
	return mlx5.SyndromeLocalQPOpErr
}

// data decodes the pointer or inline segments of a WQE.
func (w *wqe) data(b []byte, inlineOK bool) mlx5.Syndrome {
	if len(b) >= 4 && binary.BigEndian.Uint32(b[0:4])&inlineFlag != 0 {
		if !inlineOK {
			return mlx5.SyndromeLocalQPOpErr
		}
		n := int(binary.BigEndian.Uint32(b[0:4]) &^ inlineFlag)
		if 4+n > len(b) {
			return mlx5.SyndromeLocalQPOpErr
		}
		w.isInl = true
		w.inline = b[4 : 4+n]
		w.length = uint64(n)
		return 0
	}
	for ; len(b) >= dsSize; b = b[dsSize:] {
		bc := binary.BigEndian.Uint32(b[0:4])
		if bc&inlineFlag != 0 {
			return mlx5.SyndromeLocalQPOpErr
		}
		s := sge{len: uint64(bc), lkey: binary.BigEndian.Uint32(b[4:8]), addr: binary.BigEndian.Uint64(b[8:16])}
		if s.len == 0 {
			s.len = 1 << 31 // hardware reads a zero byte count as 2 GiB
		}
		w.sges[w.nsge] = s
		w.nsge++
		w.length += s.len
	}
	return 0
}

// atomicData decodes the single data segment that receives the original
// value of an atomic.
func (w *wqe) atomicData(b []byte) mlx5.Syndrome {
	bc := binary.BigEndian.Uint32(b[0:4])
	if bc != uint32(w.size) {
		return mlx5.SyndromeLocalQPOpErr
	}
	w.sges[0] = sge{len: uint64(bc), lkey: binary.BigEndian.Uint32(b[4:8]), addr: binary.BigEndian.Uint64(b[8:16])}
	w.nsge = 1
	w.length = uint64(bc)
	return 0
}
