package verbs

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mmio"
)

// The host-side data path: what DOCA's "bridge" post and poll do. Code that
// posts from the CPU (and this project's tests) builds WQEs with the same
// PRM encoders the emulator parses, rings the doorbell with one 64-bit MMIO
// store, and polls CQEs by owner bit. It requires the rings to be in host
// memory: QPs, CQs and SRQs created without external UMEMs, or with UMEMs over
// host memory. Rings in GPU memory are posted to by CUDA kernels instead.

// WROpcode is the operation of a send work request.
type WROpcode uint8

const (
	WRRDMAWrite WROpcode = iota
	WRRDMAWriteImm
	WRSend
	WRSendImm
	WRRDMARead
	WRAtomicCmpSwp
	WRAtomicFetchAdd
	WRMaskedCmpSwp   // masked ("extended") compare-and-swap of 4 or 8 bytes
	WRMaskedFetchAdd // masked fetch-and-add of 4 or 8 bytes
	WRNop
	// WRWaitCQ stalls the send queue until a CQ produced a CQE (a WAIT WQE;
	// build it with SetWaitCQPIWR).
	WRWaitCQ
)

// SGE is one scatter/gather entry: a range of a registered region.
type SGE struct {
	Addr   uint64 // iova inside the MR
	Length uint32
	LKey   uint32
}

// SendWR is a send work request.
type SendWR struct {
	WRID   uint64
	Opcode WROpcode
	// SGL is the gather list (WRITE, SEND), the scatter list (READ), or the
	// one 8- (or 4-) byte buffer that receives an atomic's original value.
	SGL []SGE
	// InlineData, when not nil, is copied into the WQE instead of SGL (WRITE
	// and SEND only), up to the QP's MaxInlineData.
	InlineData []byte
	RemoteAddr uint64
	RKey       uint32
	// Imm is the immediate of *_IMM operations; it travels big-endian and is
	// reported as the same number in the receiver's WC.
	Imm uint32
	// Compare/Swap for compare-and-swap, Add (in Compare) for fetch-and-add.
	Compare, Swap uint64
	// Masked atomics: the masks (CS) or the field boundary (FA, in SwapMask),
	// and the operand size, 4 or 8 bytes.
	CompareMask, SwapMask uint64
	AtomicSize            int
	// WaitCQ and WaitIndex are the CQ and CQE index a WRWaitCQ work
	// request waits for (SetWaitCQPIWR sets them).
	WaitCQ    *CQ
	WaitIndex uint32
	Signaled  bool // ask for a CQE (errors always make one)
	Fence     bool // wait for earlier READs/atomics of this QP
	Solicited bool
}

// RecvWR is a receive work request.
type RecvWR struct {
	WRID uint64
	SGL  []SGE
}

// poster is a QP's host-side send state.
type poster struct {
	mu     sync.Mutex
	qp     *QP
	ring   []byte
	pi     uint32   // producer index, WQEBBs, free running (16 bits meaningful)
	ci     uint32   // consumer index learnt from CQEs
	wrid   []uint64 // per WQEBB slot: the WRID of the WQE starting there
	nbb    []uint8  // per slot: WQEBBs of the WQE starting there
	bfHalf uintptr  // BlueFlame half toggle

	rq receiver
}

func (p *poster) init(q *QP) {
	p.qp = q
	if q.sq.wqebbs > 0 {
		p.ring = mem(q.sqAddr, int(q.sq.wqebbs*wqebb))
		p.wrid = make([]uint64, q.sq.wqebbs)
		p.nbb = make([]uint8, q.sq.wqebbs)
	}
	if q.hasRQ {
		p.rq.init(q.wq, uint32(q.rq.entries), uint32(q.rq.wqeSize), q.dbr+mlx5.QPDBRRecvOffset, false)
	}
}

// reset forgets all queue state after a transition to RST: the NIC's
// counters restart at 0, so ours do too. The rings and the DBR are cleared
// only when this package allocated them: external UMEMs belong to their
// owner, who resets them (gpunetio's ResetTrackingAndMemory does), and may
// be GPU memory that the host cannot store to.
func (p *poster) reset() {
	owned := p.qp.buf != nil
	p.mu.Lock()
	p.pi, p.ci, p.bfHalf = 0, 0, 0
	if owned {
		clear(p.ring)
	}
	p.mu.Unlock()
	p.rq.reset(owned)
	if owned {
		clear(mem(p.qp.dbr, 8))
	}
}

func dataSegs(sgl []SGE) []mlx5.DataSeg {
	ds := make([]mlx5.DataSeg, 0, len(sgl))
	for _, s := range sgl {
		ds = append(ds, mlx5.DataSeg{ByteCount: s.Length, LKey: s.LKey, Addr: s.Addr})
	}
	return ds
}

// buildWQE turns a work request into a WQE at index.
func (q *QP) buildWQE(wr *SendWR, index uint16) (mlx5.WQE, error) {
	const op = "doca_verbs_post_send"
	fm := mlx5.FenceNone
	if wr.Fence {
		fm = mlx5.Fence
	}
	ce := mlx5.CompletionOnError
	if wr.Signaled || q.cfg.SQSigAll {
		ce = mlx5.CompletionAlways
	}
	h := mlx5.WQEHead{Index: index, QPN: q.qpn, Flags: mlx5.MakeCtrlFlags(fm, ce, wr.Solicited)}
	r := mlx5.RAddrSeg{Addr: wr.RemoteAddr, RKey: wr.RKey}
	if err := q.checkWR(op, wr); err != nil {
		return mlx5.WQE{}, err
	}
	inl := wr.InlineData
	switch wr.Opcode {
	case WRRDMAWrite:
		if inl != nil {
			return mlx5.NewRDMAWriteInline(h, r, inl), nil
		}
		return mlx5.NewRDMAWrite(h, r, dataSegs(wr.SGL)...), nil
	case WRRDMAWriteImm:
		if inl != nil {
			return mlx5.NewRDMAWriteImmInline(h, wr.Imm, r, inl), nil
		}
		return mlx5.NewRDMAWriteImm(h, wr.Imm, r, dataSegs(wr.SGL)...), nil
	case WRSend:
		if inl != nil {
			return mlx5.NewSendInline(h, inl), nil
		}
		return mlx5.NewSend(h, dataSegs(wr.SGL)...), nil
	case WRSendImm:
		if inl != nil {
			return mlx5.NewSendImmInline(h, wr.Imm, inl), nil
		}
		return mlx5.NewSendImm(h, wr.Imm, dataSegs(wr.SGL)...), nil
	case WRRDMARead:
		return mlx5.NewRDMARead(h, r, dataSegs(wr.SGL)...), nil
	case WRAtomicCmpSwp, WRAtomicFetchAdd, WRMaskedCmpSwp, WRMaskedFetchAdd:
		return atomicWQE(op, wr, h, r)
	case WRNop:
		return mlx5.NewNOP(h), nil
	case WRWaitCQ:
		return q.waitWQE(op, wr, h)
	}
	return mlx5.WQE{}, newErr(op, ErrInvalidValue, "unknown opcode %v", wr.Opcode)
}

// checkWR checks a work request's inline data or SGL against the QP.
func (q *QP) checkWR(op string, wr *SendWR) error {
	if wr.InlineData != nil {
		switch wr.Opcode {
		case WRRDMAWrite, WRRDMAWriteImm, WRSend, WRSendImm:
		default:
			return newErr(op, ErrInvalidValue, "inline data with %v", wr.Opcode)
		}
		if uint32(len(wr.InlineData)) > q.Config().MaxInlineData {
			return newErr(op, ErrInvalidValue, "%d inline bytes exceed the QP's %d", len(wr.InlineData), q.Config().MaxInlineData)
		}
	} else if uint32(len(wr.SGL)) > q.cfg.SendMaxSGE {
		return newErr(op, ErrInvalidValue, "%d SGEs exceed the QP's %d", len(wr.SGL), q.cfg.SendMaxSGE)
	}
	return nil
}

// atomicWQE builds the WQE of an atomic work request.
func atomicWQE(op string, wr *SendWR, h mlx5.WQEHead, r mlx5.RAddrSeg) (mlx5.WQE, error) {
	size := uint32(8)
	masked := wr.Opcode == WRMaskedCmpSwp || wr.Opcode == WRMaskedFetchAdd
	if masked {
		if wr.AtomicSize != 4 && wr.AtomicSize != 8 {
			return mlx5.WQE{}, newErr(op, ErrInvalidValue, "masked atomic size %d: must be 4 or 8", wr.AtomicSize)
		}
		size = uint32(wr.AtomicSize)
	}
	// The result buffer: exactly one SGE of exactly the operand size (the
	// device writes that many bytes; a longer buffer would be read as
	// holding more than the atomic returns).
	if len(wr.SGL) != 1 {
		return mlx5.WQE{}, newErr(op, ErrInvalidValue, "%v needs exactly one SGE for the result, got %d", wr.Opcode, len(wr.SGL))
	}
	if l := wr.SGL[0].Length; l != size {
		return mlx5.WQE{}, newErr(op, ErrInvalidValue, "%v result buffer of %d bytes: the atomic returns %d bytes", wr.Opcode, l, size)
	}
	d := dataSegs(wr.SGL)[0]
	switch wr.Opcode {
	case WRAtomicCmpSwp:
		return mlx5.NewAtomicCS(h, r, wr.Swap, wr.Compare, d), nil
	case WRAtomicFetchAdd:
		return mlx5.NewAtomicFA(h, r, wr.Compare, d), nil
	case WRMaskedCmpSwp:
		s := mlx5.MaskedCSSeg{Swap: wr.Swap, Compare: wr.Compare, SwapMask: wr.SwapMask, CompareMask: wr.CompareMask}
		return mlx5.NewMaskedCS(h, wr.AtomicSize, r, s, d), nil
	}
	return mlx5.NewMaskedFA(h, wr.AtomicSize, r, mlx5.MaskedFASeg{Add: wr.Compare, FieldBoundary: wr.SwapMask}, d), nil
}

// PostSend writes the work requests to the send queue and rings the
// doorbell once (doca_verbs_bridge post_send). It returns ErrFull, posting
// nothing, when the queue lacks room for all of them. On a QP in ERR the
// device flushes what is posted (WCWRFlushErr completions); when the send
// CQ is in error, which no completion could then reach, PostSend refuses
// with ErrIOFailed wrapping the *CQError. As on hardware, the error is
// known once something observed it (Poll, CQ.Err, QP.State, or this check
// on a QP in ERR): work posted between the failure and that moment is lost
// with the rest of the QP's outstanding work, and Poll reports the CQ
// error.
func (q *QP) PostSend(wrs ...SendWR) error {
	const op = "doca_verbs_post_send"
	if err := q.enterQP(op); err != nil {
		return err
	}
	defer q.leave()
	if q.sdk != nil {
		return openOnly(op, "the host data path (QP.PostSend)")
	}
	p := &q.post
	if p.ring == nil {
		return newErr(op, ErrNotSupported, "QP 0x%x has no send queue", q.qpn)
	}
	st := q.cachedState()
	if st != QPStateRTS && st != QPStateERR {
		return newErr(op, ErrBadState, "QP 0x%x is %v; post in RTS", q.qpn, st)
	}
	if err := q.cqAccepts(op, q.cfg.SendCQ, st); err != nil {
		return err
	}
	if len(wrs) == 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	size := uint32(len(p.ring) / wqebb)
	pi := p.pi
	var last mlx5.CtrlSeg
	for i := range wrs {
		w, err := q.buildWQE(&wrs[i], uint16(pi))
		if err != nil {
			return err
		}
		ds, err := w.DS()
		if err != nil {
			return wrapErr(op, ErrInvalidValue, err, "work request %d (%v)", i, wrs[i].Opcode)
		}
		n := uint32(mlx5.WQEBBs(ds))
		if pi+n-p.ci > size {
			return newErr(op, ErrFull, "send queue of QP 0x%x has %d free WQEBBs, work request %d needs %d", q.qpn, size-(pi-p.ci), i, n)
		}
		if _, err := w.Encode(p.ring); err != nil {
			return wrapErr(op, ErrInvalidValue, err, "work request %d (%v)", i, wrs[i].Opcode)
		}
		slot := pi & (size - 1)
		p.wrid[slot], p.nbb[slot] = wrs[i].WRID, uint8(n)
		w.Ctrl.DS = ds
		last = w.Ctrl
		pi += n
	}
	p.pi = pi
	q.ringSQ(last, pi)
	return nil
}

// ringSQ publishes the WQEs up to pi: store barrier, DBR (unless the QP has
// none), store barrier, one 64-bit doorbell store carrying the last WQE's
// first control bytes (rdma-core's encoding).
func (q *QP) ringSQ(last mlx5.CtrlSeg, pi uint32) {
	mmio.WriteBarrier()
	if q.cfg.SendDBRMode == SendDBRValid {
		mmio.Store32(ptr(q.dbr+mlx5.QPDBRSendOffset), mlx5.BE32Native(mlx5.QPDBRWord(pi)))
		mmio.WriteBarrier()
	}
	db := q.db
	if q.uar.AllocType() == UARBlueFlame && q.cfg.SendDBRMode == SendDBRValid {
		db += q.post.bfHalf
		q.post.bfHalf ^= mlx5.UARBFHalf
	}
	mmio.Store64(ptr(db), mlx5.SQDoorbell(last).Uint64())
	mmio.WriteBarrier()
}

// complete records that the send queue consumed up to the WQE at counter
// and returns that WQE's WRID.
func (p *poster) complete(counter uint16) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	size := uint32(len(p.wrid))
	if size == 0 {
		return 0
	}
	slot := uint32(counter) & (size - 1)
	// Rebuild the 32-bit position of counter near ci (16-bit wrap).
	pos := p.ci + uint32(uint16(uint32(counter)-p.ci))
	if end := pos + uint32(p.nbb[slot]); end-p.ci <= p.pi-p.ci {
		p.ci = end
	}
	return p.wrid[slot]
}

// receiver is the host-side posting state of a receive queue (a QP's RQ or
// an SRQ).
type receiver struct {
	mu      sync.Mutex
	ring    []byte
	entries uint32
	stride  uint32
	dbr     uintptr
	ll      bool // linked-list SRQ: each WQE starts with a "next" segment
	head    uint32
	tail    uint32
	wrid    []uint64
}

func (r *receiver) init(ring uintptr, entries, stride uint32, dbr uintptr, linkedList bool) {
	r.ring = mem(ring, int(entries*stride))
	r.entries, r.stride, r.dbr, r.ll = entries, stride, dbr, linkedList
	r.wrid = make([]uint64, entries)
}

func (r *receiver) reset(clearRing bool) {
	r.mu.Lock()
	r.head, r.tail = 0, 0
	if clearRing {
		clear(r.ring)
	}
	r.mu.Unlock()
}

// post writes receive WQEs and publishes the new head in DBR word 0.
func (r *receiver) post(op string, maxSGE uint32, wrs []RecvWR) error {
	if r.entries == 0 {
		return newErr(op, ErrNotSupported, "no receive queue")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.head+uint32(len(wrs))-r.tail > r.entries {
		return newErr(op, ErrFull, "receive queue has %d free entries, %d requested", r.entries-(r.head-r.tail), len(wrs))
	}
	first := uint32(0)
	if r.ll {
		first = mlx5.SRQNextSegSize
	}
	room := (r.stride - first) / octoword
	if maxSGE > room {
		maxSGE = room
	}
	for i, wr := range wrs {
		if uint32(len(wr.SGL)) > maxSGE {
			return newErr(op, ErrInvalidValue, "receive work request %d has %d SGEs, the queue takes %d", i, len(wr.SGL), maxSGE)
		}
	}
	for _, wr := range wrs {
		slot := r.head & (r.entries - 1)
		w := r.ring[slot*r.stride : (slot+1)*r.stride]
		clear(w)
		if r.ll {
			mlx5.PutSRQNextIndex(w, uint16(r.head+1))
		}
		off := first
		for _, s := range wr.SGL {
			mlx5.DataSeg{ByteCount: s.Length, LKey: s.LKey, Addr: s.Addr}.Put(w[off : off+octoword])
			off += octoword
		}
		if off < r.stride {
			mlx5.RecvTerminator.Put(w[off : off+octoword])
		}
		r.wrid[slot] = wr.WRID
		r.head++
	}
	mmio.WriteBarrier()
	mmio.Store32(ptr(r.dbr), mlx5.BE32Native(r.head&mlx5.DBRCounterMask))
	return nil
}

// complete returns the WRID of the receive WQE at counter and frees it.
func (r *receiver) complete(counter uint16) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entries == 0 {
		return 0
	}
	id := r.wrid[uint32(counter)&(r.entries-1)]
	r.tail++
	return id
}

// cqAccepts refuses a post when the CQ that would report it is in error:
// the device would flush the work request without a completion, so it
// would be lost. The CQ's state is known once Poll, CQ.Err or QP.State saw
// it; a QP already in ERR asks the device (QUERY_CQ) before accepting, as
// its work requests are only flushed. q is entered (it references cq, so
// cq cannot close).
func (q *QP) cqAccepts(op string, cq *CQ, st QPState) error {
	if cq == nil {
		return nil
	}
	e := cq.failed.Load()
	if e == nil && st == QPStateERR {
		var err error
		if e, err = cq.queryStatus(op); err != nil {
			return err
		}
	}
	if e != nil {
		return &Error{Op: op, Code: ErrIOFailed, Msg: fmt.Sprintf("QP 0x%x completes to %s, which is in error: the work request would be lost", q.qpn, cq.userName()), Err: e}
	}
	return nil
}

// checkRecvSGEs refuses the scatter entries the NIC cannot take: length 0
// (read by the NIC as 2 GiB) and 2^31 or more (bit 31 marks inline data),
// as PostSend refuses them.
func checkRecvSGEs(op string, wrs []RecvWR) error {
	for i := range wrs {
		for j, s := range wrs[i].SGL {
			if s.Length == 0 || s.Length&mlx5.InlineFlag != 0 {
				return newErr(op, ErrInvalidValue, "receive work request %d, SGE %d: length %d (want 1..2^31-1)", i, j, s.Length)
			}
		}
	}
	return nil
}

// PostRecv posts receive work requests to the QP's receive queue.
func (q *QP) PostRecv(wrs ...RecvWR) error {
	const op = "doca_verbs_post_recv"
	if err := q.enterQP(op); err != nil {
		return err
	}
	defer q.leave()
	if q.sdk != nil {
		return openOnly(op, "the host data path (QP.PostRecv)")
	}
	if q.cfg.SRQ != nil {
		return newErr(op, ErrInvalidValue, "QP 0x%x receives through SRQ 0x%x: post to the SRQ", q.qpn, q.cfg.SRQ.srqn)
	}
	st := q.cachedState()
	if st == QPStateRST {
		return newErr(op, ErrBadState, "QP 0x%x is in RST", q.qpn)
	}
	if err := q.cqAccepts(op, q.cfg.RecvCQ, st); err != nil {
		return err
	}
	if err := checkRecvSGEs(op, wrs); err != nil {
		return err
	}
	return q.post.rq.post(op, q.rq.sges, wrs)
}

// PostRecv posts receive work requests to the SRQ.
func (s *SRQ) PostRecv(wrs ...RecvWR) error {
	const op = "doca_verbs_srq_post_recv"
	if s == nil {
		return newErr(op, ErrInvalidValue, "nil SRQ")
	}
	if err := s.enter(op, "SRQ"); err != nil {
		return err
	}
	defer s.leave()
	if err := checkRecvSGEs(op, wrs); err != nil {
		return err
	}
	return s.recv.post(op, s.geo.sges, wrs)
}

var _ = unsafe.Pointer(nil)
