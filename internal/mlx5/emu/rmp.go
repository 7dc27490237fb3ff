package emu

import (
	"sync"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

var wqf = mlx5.WQCFields

const (
	rmpcByte = mlx5.RMPCMailboxBit / 8 // rmpc in CREATE_RMP in and QUERY_RMP out
	rmpWQBit = mlx5.RMPCWQBit          // wq context inside the rmpc
)

func wqField(f mlx5.Field) mlx5.Field { return f.At(rmpWQBit) }

// rmp is a shared receive queue (SRQ) made with CREATE_RMP. Its receive
// WQEs live in a UMEM; the DBR's first word is the software counter of
// posted WQEs, of which only the low 16 bits count (mlx5.DBRCounterMask). A cyclic RMP consumes WQEs in index order; a linked-list RMP
// follows each WQE's next segment (bytes 2..3, mlx5.SRQNextIndex), starting
// at index 0.
type rmp struct {
	ctx    *devCtx
	rmpn   uint32
	pd     *pd
	wq     *umem
	woff   uint64
	dbr    *umem
	doff   uint64
	log    uint8 // 2^log WQEs
	stride uint8 // log2 of the WQE size in bytes
	linked bool
	rmpc   [mlx5.RMPCLen]byte
	refs   int // QPs using it; n.mu

	mu   sync.Mutex // taken inside a QP's rmu
	hw   uint32     // WQEs consumed
	head uint16     // linked list: next WQE to consume
	lwm  uint16     // limit watermark: SRQ_RQ_LIMIT armed while not 0
}

// createRMP executes CREATE_RMP; n.mu held. The mailbox is decoded by
// mlx5.UnmarshalCreateRMPIn (firmware reads no further than its bytes).
func (c *devCtx) createRMP(in, out []byte) fwError {
	n := c.nic
	cmd, err := mlx5.UnmarshalCreateRMPIn(in[:mlx5.CreateRMPInLen])
	if err != nil {
		return fwError(SynBadInLen) // not reached: checkLen ran
	}
	x, w := &cmd.RMPC, &cmd.RMPC.WQ
	if x.State != mlx5.RMPStateRDY {
		return fwError(SynRMPType)
	}
	if w.WQType != mlx5.WQTypeLinkedList && w.WQType != mlx5.WQTypeCyclic {
		return fwError(SynRMPType)
	}
	if w.HWCounter != 0 || w.SWCounter != 0 {
		return fwError(SynReserved)
	}
	p := n.pds[w.PD]
	if p == nil || p.ctx != c {
		return fwError(SynRMPPD)
	}
	log, stride := w.LogWQSz, w.LogWQStride
	if log > capLogMaxSRQSz || stride < 4 || 1<<stride > capMaxWQESzRQ {
		return fwError(SynRMPSize)
	}
	wq := c.umemOf(w.WQUMEMID)
	woff := w.WQUMEMOffset
	if wq == nil || !wq.fits(woff, uint64(1)<<(log+stride), 1) {
		return fwError(SynRMPUMEM)
	}
	dbr := c.umemOf(w.DBRUMEMID)
	doff := w.DBRAddr
	if dbr == nil || !dbr.fits(doff, 4, 4) {
		return fwError(SynRMPUMEM)
	}
	rmpn, _, ok := n.ids.rmp.alloc(func(i uint32) bool { return n.rmps[i] != nil })
	if !ok {
		return fwError(SynLimitRMP)
	}
	r := &rmp{ctx: c, rmpn: rmpn, pd: p, wq: wq, woff: woff, dbr: dbr, doff: doff, log: log, stride: stride,
		linked: w.WQType == mlx5.WQTypeLinkedList && !x.BasicCyclicRcvWQE}
	copy(r.rmpc[:], in[rmpcByte:rmpcByte+mlx5.RMPCLen]) // reserved bits included, for QUERY_RMP
	n.rmps[r.rmpn] = r
	p.refs++
	wq.refs++
	dbr.refs++
	c.live++
	mlx5.Set(out, mlx5.ObjIDField, uint64(r.rmpn))
	return 0
}

// destroyRMP executes DESTROY_RMP; n.mu held.
func (c *devCtx) destroyRMP(r *rmp) fwError {
	if r.refs > 0 {
		return fwError(SynRMPBusy)
	}
	delete(c.nic.rmps, r.rmpn)
	r.pd.refs--
	r.wq.refs--
	r.dbr.refs--
	c.live--
	return 0
}

// query fills QUERY_RMP's output (out holds QueryRMPOutLen bytes: checkLen
// ran): the context as created, reserved bits included, with the live
// counters.
func (r *rmp) query(out []byte) {
	r.mu.Lock()
	c, _ := mlx5.DecodeRMPContext(r.rmpc[:])
	rmpc := r.rmpc // lwm changes under r.mu
	c.WQ.HWCounter = r.hw
	r.mu.Unlock()
	if v, err := r.dbr.mem.load32(r.doff); err == nil {
		c.WQ.SWCounter = v
	}
	c.WQ.DBRUMEMValid, c.WQ.WQUMEMValid = true, true
	copy(out[rmpcByte:], rmpc[:]) // the bits no member names
	_ = mlx5.QueryRMPOut{RMPC: c}.MarshalTo(out)
}

// take consumes the next posted receive WQE, reading it into buf (one
// stride), and returns its index and its scatter list (after the next
// segment of a linked-list WQE); ok is false when none is posted.
func (r *rmp) take(buf []byte) (idx uint32, sg []byte, ok bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sw, err := r.dbr.mem.load32(r.doff)
	if err != nil || sw&mlx5.DBRCounterMask == r.hw&mlx5.DBRCounterMask {
		return 0, nil, false, err
	}
	slot := r.hw & (1<<r.log - 1)
	if r.linked {
		slot = uint32(r.head) & (1<<r.log - 1)
	}
	if err := r.wq.mem.read(buf, r.woff+uint64(slot)<<r.stride); err != nil {
		return 0, nil, false, err
	}
	sg = buf
	if r.linked {
		r.head = mlx5.SRQNextIndex(buf)
		sg = buf[mlx5.SRQNextSegSize:]
	}
	r.hw++
	if posted := (sw - r.hw) & mlx5.DBRCounterMask; r.lwm != 0 && posted < uint32(r.lwm) {
		r.lwm = 0
		mlx5.Set(r.rmpc[:], wqField(wqf.LWM), 0)
		r.ctx.nic.raiseAsync(mlx5.SRQEventEQE(mlx5.EventSRQRQLimit, r.rmpn))
	}
	return slot, sg, true, nil
}

// lwmBitmask is MODIFY_RMP's bitmask dword, of which only lwm (its last
// bit) is a field the emulated firmware changes.
var lwmBitmask = mlx5.F(0x80, 64)

// modify executes MODIFY_RMP; n.mu held (read). Only the limit watermark
// may change (bitmask lwm; every other bitmask bit zero), of an RMP in
// RDY, to at most its number of WQEs. A watermark arms the SRQ_RQ_LIMIT
// event: it is raised when a receive leaves fewer than lwm WQEs posted
// (not at once when fewer are posted already), and disarms the
// watermark. 0 disarms it.
func (r *rmp) modify(in []byte) fwError {
	cmd, err := mlx5.UnmarshalModifyRMPIn(in[:mlx5.ModifyRMPInLen])
	if err != nil {
		return fwError(SynBadInLen)
	}
	if cmd.OpMod != 0 {
		return fwError(SynBadOpMod)
	}
	if cmd.RMPState != mlx5.RMPStateRDY {
		return fwError(SynRMPType)
	}
	lwm := cmd.RMPC.WQ.LWM
	if mlx5.Get(in, lwmBitmask) != 1 || uint32(lwm) > 1<<r.log {
		return fwError(SynRMPModify)
	}
	r.mu.Lock()
	r.lwm = lwm
	mlx5.Set(r.rmpc[:], wqField(wqf.LWM), uint64(lwm))
	r.mu.Unlock()
	return 0
}
