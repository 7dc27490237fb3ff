package emu

import (
	"encoding/binary"
	"errors"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// This file reads send WQEs out of the SQ ring with the PRM parser of
// internal/mlx5 (mlx5.WQE.Decode). The ring may be in GPU memory, so the
// WQE's WQEBBs are first copied (following the ring wrap) into a private
// 16-WQEBB ring at the same slots modulo 16; a WQE is at most 16 WQEBBs
// (63 DS), so the parser sees exactly the bytes it would see in the real
// ring. The checks that need the QP (its QPN, service type, the WQE size
// cap) are made here.

const (
	wqebb    = mlx5.WQEBB
	dsSize   = mlx5.DSSize
	localBBs = 16
)

// sge is one gather/scatter entry of a WQE.
type sge struct {
	lkey uint32
	addr uint64
	len  uint64
}

// wqe is a decoded send WQE in the form the engine uses.
type wqe struct {
	idx    uint16
	opcode uint8
	opmod  uint8
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

	swapAdd, compare, swapMask, compareMask, boundary uint64
	size                                              int
	masked                                            bool

	waitIndex, waitCQN uint32

	p mlx5.WQE // the parser's output, reused
}

// readWQE copies the WQE that starts at SQ index idx out of the ring and
// decodes it. A non-zero syndrome is the error the WQE completes with;
// w.bbs is always at least 1 so the SQ can move past a bad WQE. A ring in
// device memory is decoded from the requester's mirror (see requester),
// which one batch fills up to the producer index.
func (q *qp) readWQE(idx uint16, buf *[localBBs * wqebb]byte, w *wqe) mlx5.Syndrome {
	w.idx, w.bbs = idx, 1
	if q.wq.mem.gpu != nil {
		if syn := q.mirrorWQE(idx, w); syn != 0 {
			return syn
		}
		return q.decodeWQE(q.req.mirror, idx, w)
	}
	size := uint64(1) << q.sqLog
	slot := uint64(idx) & (size - 1)
	mem := q.wq.mem
	lbbs := uint64(localBBs)
	if size < lbbs {
		lbbs = size // the parser wraps at its ring's end: give it one of the real size
	}
	local := func(i int) []byte {
		s := (int(idx) + i) & int(lbbs-1)
		return buf[s*wqebb : (s+1)*wqebb]
	}
	first := local(0)
	if err := mem.read(first, q.sqOff+slot*wqebb); err != nil {
		return mlx5.SyndromeLocalProtErr
	}
	bbs := w.head(first)
	if uint64(bbs) > size {
		return mlx5.SyndromeLocalQPOpErr
	}
	w.bbs = bbs
	for i := 1; i < bbs; i++ {
		s := (slot + uint64(i)) & (size - 1)
		if err := mem.read(local(i), q.sqOff+s*wqebb); err != nil {
			return mlx5.SyndromeLocalProtErr
		}
	}
	return q.decodeWQE(buf[:lbbs*wqebb], idx, w)
}

// head reads the opcode and opmod of the WQE whose first WQEBB is b into
// w, before the WQE is parsed (so that an error CQE names them), and
// returns the number of WQEBBs the WQE spans: at least 1, so that the SQ
// moves past a WQE with ds 0.
func (w *wqe) head(b []byte) int {
	opmod, _, opcode, _, ds := mlx5.DecodeCtrlHead(b)
	w.opcode, w.opmod = uint8(opcode), opmod
	return max(mlx5.WQEBBs(ds), 1)
}

// mirrorWQE makes sure the mirror holds the WQE at idx: it reads every WQE
// published since the last read (up to the producer index) in one batch,
// and WQEBBs beyond the producer index (a WQE that software cut) one by
// one, without counting them as read.
func (q *qp) mirrorWQE(idx uint16, w *wqe) mlx5.Syndrome {
	r := &q.req
	size := 1 << q.sqLog
	held := func(k int) bool { d := dist(idx, r.mirEnd); return d >= k && d <= size }
	if !held(1) {
		if syn := q.fetchPublished(); syn != 0 {
			return syn
		}
	}
	first := r.mirror[q.slot(idx)*wqebb:][:wqebb]
	if !held(1) {
		if q.wq.mem.read(first, q.sqOff+uint64(q.slot(idx))*wqebb) != nil {
			return mlx5.SyndromeLocalProtErr
		}
	}
	bbs := w.head(first)
	if bbs > size {
		return mlx5.SyndromeLocalQPOpErr
	}
	w.bbs = bbs
	for i := 1; i < bbs; i++ {
		if held(i + 1) {
			continue
		}
		s := q.slot(idx + uint16(i))
		if q.wq.mem.read(r.mirror[s*wqebb:(s+1)*wqebb], q.sqOff+uint64(s)*wqebb) != nil {
			return mlx5.SyndromeLocalProtErr
		}
	}
	return 0
}

// fetchPublished reads the SQ slots from the last index read up to the
// producer index into the mirror, in one batch.
func (q *qp) fetchPublished() mlx5.Syndrome {
	r := &q.req
	if d := dist(r.mirEnd, r.pi); d == 0 || d > 1<<q.sqLog {
		if d > 1<<q.sqLog {
			r.mirEnd = r.ci // lost track (cannot happen): start again from the consumer index
			return q.fetchPublished()
		}
		return 0
	}
	q.readRing(&r.rb, r.mirEnd, r.pi)
	if r.rb.run() != nil {
		return mlx5.SyndromeLocalProtErr
	}
	r.mirEnd = r.pi
	return 0
}

// decodeWQE parses the WQE at idx of ring (the SQ ring's bytes, or a ring
// of at least its WQEBBs at the same slots) into w and checks what needs
// the QP.
func (q *qp) decodeWQE(ring []byte, idx uint16, w *wqe) mlx5.Syndrome {
	if err := w.p.Decode(ring, idx); err != nil {
		var we *mlx5.WQEError
		if errors.As(err, &we) {
			return we.Syndrome
		}
		return mlx5.SyndromeLocalQPOpErr
	}
	p := &w.p
	c := &p.Ctrl
	if c.QPN != q.qpn || int(c.DS)*dsSize > capMaxWQESzSQ {
		return mlx5.SyndromeLocalQPOpErr
	}
	switch c.Opcode {
	case mlx5.WQEOpSendEn:
		return mlx5.SyndromeLocalQPOpErr // cross-channel slaves are not emulated
	case mlx5.WQEOpNop, mlx5.WQEOpRDMAWrite, mlx5.WQEOpRDMAWriteImm, mlx5.WQEOpSend, mlx5.WQEOpSendImm:
	default:
		if q.uc {
			return mlx5.SyndromeLocalQPOpErr
		}
	}
	w.opcode, w.opmod = uint8(c.Opcode), c.OpMod
	w.fm, w.ce, w.se = uint8(c.Flags.Fence()), uint8(c.Flags.Completion()), c.Flags.Solicited()
	binary.BigEndian.PutUint32(w.imm[:], c.Imm)
	w.raddr, w.rkey = p.RAddr.Addr, p.RAddr.RKey
	w.isInl, w.inline, w.nsge, w.length = p.IsInline, p.Inline, 0, 0
	w.masked, w.size = false, 0
	if p.IsInline {
		w.length = uint64(len(p.Inline))
	}
	for _, s := range p.SGEs {
		if w.nsge == maxSGEPerWQE {
			return mlx5.SyndromeLocalQPOpErr
		}
		w.sges[w.nsge] = sge{lkey: s.LKey, addr: s.Addr, len: uint64(s.ByteCount)}
		w.nsge++
		w.length += uint64(s.ByteCount)
	}
	switch c.Opcode {
	case mlx5.WQEOpAtomicCS, mlx5.WQEOpAtomicFA:
		w.swapAdd, w.compare, w.size = p.Atomic.SwapAdd, p.Atomic.Compare, 8
	case mlx5.WQEOpAtomicMaskedCS:
		w.masked, w.size = true, p.OperandSize()
		w.swapAdd, w.compare, w.swapMask, w.compareMask = p.MaskedCS.Swap, p.MaskedCS.Compare, p.MaskedCS.SwapMask, p.MaskedCS.CompareMask
	case mlx5.WQEOpAtomicMaskedFA:
		w.masked, w.size = true, p.OperandSize()
		w.swapAdd, w.boundary = p.MaskedFA.Add, p.MaskedFA.FieldBoundary
	case mlx5.WQEOpWait:
		w.waitIndex, w.waitCQN = p.Wait.MaxIndex, p.Wait.QPNCQN
	}
	if w.masked && w.size != 4 && w.size != 8 {
		return mlx5.SyndromeLocalQPOpErr
	}
	return 0
}

// plainWQE decodes the WQE at idx into d straight from the mirror, without
// the PRM parser, when the mirror holds all its WQEBBs and it has a shape
// the read-ahead's walk keeps (see dwqe): a NOP, or a WRITE, WRITE_IMM,
// SEND, SEND_IMM or SEND_INVAL with at most dwqeSGEs pointer segments. It
// reports false, d's contents then undefined, for every other WQE, valid or
// not: readWQE decodes those as before, so that a bad WQE keeps its
// syndrome. What it accepts readWQE decodes with syndrome 0 to the same
// fields as keep records (FuzzPlainWQE compares the two). On put_bw's
// burst this is most of the walk's cost per WQE saved.
func (q *qp) plainWQE(idx uint16, d *dwqe) bool {
	r := &q.req
	held := dist(idx, r.mirEnd)
	if q.wq.mem.gpu == nil || held == 0 || held > 1<<q.sqLog {
		return false
	}
	ring := r.mirror
	mask := len(ring) - 1
	start := int(idx) * wqebb & mask
	c := ring[start : start+dsSize]
	q0 := binary.BigEndian.Uint64(c)
	ds := int(q0 & mlx5.MaxDS)
	bbs := mlx5.WQEBBs(uint8(ds))
	// The parser's and decodeWQE's checks; bbs <= held also keeps the WQE
	// inside the ring, which is held WQEBBs or more.
	if uint16(q0>>40) != idx || uint32(q0>>8)&mask24 != q.qpn || ds == 0 || bbs > held || ds*dsSize > capMaxWQESzSQ {
		return false
	}
	op := mlx5.WQEOpcode(q0 >> 32)
	k := 0 // the segments before the data segments, ctrl included
	switch op {
	case mlx5.WQEOpNop:
	case mlx5.WQEOpRDMAWrite, mlx5.WQEOpRDMAWriteImm:
		k = 2
	case mlx5.WQEOpSend, mlx5.WQEOpSendImm:
		k = 1
	case mlx5.WQEOpSendInval:
		if q.uc {
			return false // LOCAL_QP_OP_ERR on a UC QP
		}
		k = 1
	default:
		return false
	}
	d.raddr, d.rkey, d.length = 0, 0, 0
	n := 0
	if k > 0 {
		n = ds - k
		if n < 0 || n > dwqeSGEs {
			return false
		}
		if k == 2 {
			s := ring[(start+dsSize)&mask:][:dsSize]
			d.raddr, d.rkey = binary.BigEndian.Uint64(s), binary.BigEndian.Uint32(s[8:])
		}
		for j := 0; j < n; j++ {
			s := ring[(start+(k+j)*dsSize)&mask:][:dsSize]
			bc := binary.BigEndian.Uint32(s)
			if bc == 0 || bc&mlx5.InlineFlag != 0 {
				return false // LOCAL_LENGTH_ERR, or inline data (not kept)
			}
			d.sges[j] = sge{lkey: binary.BigEndian.Uint32(s[4:]), addr: binary.BigEndian.Uint64(s[8:]), len: uint64(bc)}
			d.length += uint64(bc)
		}
	}
	f := mlx5.CtrlFlags(c[11])
	d.idx, d.bbs, d.opcode, d.opmod = idx, uint16(bbs), uint8(op), uint8(q0>>56)
	d.fm, d.ce, d.se, d.nsge = uint8(f.Fence()), uint8(f.Completion()), f.Solicited(), uint8(n)
	d.imm = [4]byte(c[12:16])
	return true
}
