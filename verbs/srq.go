package verbs

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// SRQConfig describes a shared receive queue (doca_verbs_srq_init_attr).
type SRQConfig struct {
	PD         *PD
	Type       SRQType
	WR         uint32 // receive work requests, > 0
	MaxRecvSGE uint32 // > 0
	// UMem holds the receive ring and, after it, the doorbell record, at
	// UMemOffset; without it the SRQ allocates host memory.
	UMem       *UMem
	UMemOffset uint64
}

// SRQ is a shared receive queue (doca_verbs_srq), implemented as a PRM
// receive memory pool (RMP).
type SRQ struct {
	node
	ctx  *Context
	cfg  SRQConfig
	pd   *PD
	obj  mlx5.Obj
	srqn uint32
	geo  srqGeometry
	ring uintptr
	dbr  uintptr
	buf  *hostBuf
	umem *UMem
	held []*node // the PD and external UMem

	recv receiver // host-side receive posting

	asyncPending atomic.Int64 // asynchronous events received and not acknowledged
}

// NewSRQ creates a shared receive queue (doca_verbs_srq_create). The PD and
// UMem must belong to device c (ErrInvalidValue otherwise).
func NewSRQ(c *Context, cfg SRQConfig) (_ *SRQ, err error) {
	const op = "doca_verbs_srq_create"
	if err := checkSRQConfig(op, c, cfg); err != nil {
		return nil, err
	}
	s := &SRQ{ctx: c, cfg: cfg, pd: cfg.PD}
	if err := cfg.PD.acquire(op, "PD", &s.node); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			if terr := s.teardown(); terr != nil {
				err = errors.Join(err, terr)
			}
			s.releaseHeld()
		}
	}()
	s.held = append(s.held, &cfg.PD.node)
	attr, err := c.caps()
	if err != nil {
		return nil, wrapErr(op, codeOf(err), err, "device query")
	}
	if cfg.WR > attr.MaxSRQWR {
		return nil, newErr(op, ErrNotSupported, "srq_wr %d exceeds the device's %d", cfg.WR, attr.MaxSRQWR)
	}
	if cfg.MaxRecvSGE > attr.MaxSRQSGE {
		return nil, newErr(op, ErrNotSupported, "receive_max_sges %d exceeds the device's %d", cfg.MaxRecvSGE, attr.MaxSRQSGE)
	}
	s.geo = sizeSRQ(cfg.Type, cfg.WR, cfg.MaxRecvSGE)
	u, off, err := s.allocRing(op)
	if err != nil {
		return nil, err
	}
	in, err := createRMPIn(cfg, s.geo, u, off).Marshal()
	if err != nil {
		return nil, wrapErr(op, ErrInvalidValue, err, "build CREATE_RMP")
	}
	s.obj, err = c.dev.CreateObj(in, make([]byte, prmCreateOutLen))
	if err != nil {
		return nil, driverErr(op, err, "CREATE_RMP")
	}
	s.srqn = s.obj.ID()
	c.subscribeAsync(s.obj, cookieSRQ|uint64(s.srqn), s, mlx5.EventSRQRQLimit)
	s.recv.init(s.ring, uint32(s.geo.entries), uint32(s.geo.wqeSize), s.dbr, cfg.Type == SRQLinkedList)
	s.init("SRQ", fmt.Sprintf("SRQ 0x%x on %s", s.srqn, c.name))
	return s, nil
}

// checkSRQConfig checks an SRQ configuration before anything is referenced.
func checkSRQConfig(op string, c *Context, cfg SRQConfig) error {
	if err := c.check(op); err != nil {
		return err
	}
	if cfg.Type != SRQLinkedList && cfg.Type != SRQContiguous {
		return newErr(op, ErrInvalidValue, "SRQ type %v", cfg.Type)
	}
	if err := c.checkPD(op, cfg.PD); err != nil {
		return err
	}
	if cfg.UMem != nil {
		if err := cfg.UMem.sameDevice(op, c, "UMEM"); err != nil {
			return err
		}
	}
	if cfg.WR == 0 {
		return newErr(op, ErrInvalidValue, "srq_wr is 0")
	}
	if cfg.MaxRecvSGE == 0 {
		return newErr(op, ErrInvalidValue, "receive_max_sges is 0")
	}
	return nil
}

// allocRing references the external UMEM or allocates and registers host
// memory for the ring and its doorbell record; it returns the UMEM and the
// ring's offset in it and sets the SRQ's addresses.
func (s *SRQ) allocRing(op string) (u *UMem, off uint64, err error) {
	cfg, g := s.cfg, s.geo
	if cfg.UMem != nil {
		if cfg.UMemOffset > cfg.UMem.Size() || cfg.UMem.Size()-cfg.UMemOffset < g.dbrOff+8 {
			return nil, 0, newErr(op, ErrInvalidValue, "SRQ needs %d bytes at offset %d, UMEM has %d", g.dbrOff+8, cfg.UMemOffset, cfg.UMem.Size())
		}
		if err := cfg.UMem.acquire(op, "UMem", &s.node); err != nil {
			return nil, 0, err
		}
		s.held = append(s.held, &cfg.UMem.node)
		u, off = cfg.UMem, cfg.UMemOffset
	} else {
		if s.buf, err = allocHost(op, g.dbrOff+dbrArea); err != nil {
			return nil, 0, err
		}
		if s.umem, err = newUMem(op, s.ctx, nil, s.buf.addr(), uint64(len(s.buf.b)), 0, nil); err != nil {
			return nil, 0, err
		}
		if err := s.umem.acquire(op, "UMem", &s.node); err != nil {
			return nil, 0, err
		}
		u = s.umem
	}
	s.ring = u.Addr() + uintptr(off)
	s.dbr = s.ring + uintptr(g.dbrOff)
	return u, off, nil
}

// createRMPIn is the CREATE_RMP command of an SRQ of cfg: a ready RMP whose
// ring (cyclic or linked list) and doorbell record are at off in u.
func createRMPIn(cfg SRQConfig, g srqGeometry, u *UMem, off uint64) mlx5.CreateRMPIn {
	wqType, cyclic := mlx5.WQTypeCyclic, true
	if cfg.Type == SRQLinkedList {
		wqType, cyclic = mlx5.WQTypeLinkedList, false
	}
	return mlx5.CreateRMPIn{
		CmdHeader: mlx5.CmdHeader{Opcode: mlx5.OpCreateRMP},
		RMPC: mlx5.RMPContext{
			State: mlx5.RMPStateRDY, BasicCyclicRcvWQE: cyclic,
			WQ: mlx5.WQContext{
				WQType: wqType, EndPaddingMode: 1, PD: cfg.PD.PDN(), DBRAddr: off + g.dbrOff,
				LogWQStride: uint8(g.logWQESz), LogWQSz: uint8(g.logSize),
				DBRUMEMValid: true, WQUMEMValid: true, DBRUMEMID: u.ID(), WQUMEMID: u.ID(),
				WQUMEMOffset: off,
			},
		},
	}
}

func (s *SRQ) releaseHeld() {
	for _, n := range s.held {
		n.release(&s.node)
	}
	s.held = nil
}

func (s *SRQ) teardown() error {
	const op = "doca_verbs_srq_destroy"
	if err := destroyObj(op, &s.obj, "srqn 0x%x", s.srqn); err != nil {
		return err
	}
	s.ctx.unsubscribeAsync(cookieSRQ | uint64(s.srqn))
	if s.umem != nil {
		if err := s.closeOwned(op, "UMem", &s.umem.node, s.umem.Close); err != nil {
			return err
		}
		s.umem = nil
	}
	return freeRing(op, &s.buf, "SRQ ring")
}

// Hold takes a reference that keeps the SRQ and its ring alive (Close
// fails with ErrInUse naming holder) until Hold.Release; ErrBadState if it
// is closed.
func (s *SRQ) Hold(holder string) (*Hold, error) {
	const op = "SRQ.Hold"
	if s == nil {
		return nil, newErr(op, ErrInvalidValue, "nil SRQ")
	}
	return s.hold(op, "SRQ", holder)
}

// Close destroys the SRQ (doca_verbs_srq_destroy); ErrInUse while QPs use it.
// It waits for PostRecv calls in progress.
func (s *SRQ) Close() error {
	const op = "doca_verbs_srq_destroy"
	if s == nil {
		return newErr(op, ErrInvalidValue, "nil SRQ")
	}
	if s.use(op, "SRQ") == nil {
		if err := checkAsyncAcked(op, s.userName(), &s.asyncPending); err != nil {
			return err
		}
	}
	done, err := s.beginClose(op, "SRQ")
	if done || err != nil {
		return err
	}
	err = s.teardown()
	if err == nil {
		s.releaseHeld()
	}
	s.endClose(err)
	return err
}

// The getters return values fixed at creation, and zero values for a nil
// or zero SRQ.

// SRQN is the SRQ number.
func (s *SRQ) SRQN() uint32 {
	if s == nil {
		return 0
	}
	return s.srqn
}

// Ring returns the receive ring: address, entries and bytes per WQE.
func (s *SRQ) Ring() (addr uintptr, entries, wqeSize uint32) {
	if s == nil {
		return 0, 0, 0
	}
	return s.ring, uint32(s.geo.entries), uint32(s.geo.wqeSize)
}

// DBRAddr is the SRQ doorbell record.
func (s *SRQ) DBRAddr() uintptr {
	if s == nil {
		return 0
	}
	return s.dbr
}

// SRQState is the state of a shared receive queue as the device reports it
// (rmpc.state of QUERY_RMP).
type SRQState uint8

// The SRQ states.
const (
	SRQStateRST SRQState = SRQState(mlx5.RMPStateRST)
	SRQStateRDY SRQState = SRQState(mlx5.RMPStateRDY)
	SRQStateERR SRQState = SRQState(mlx5.RMPStateERR)
)

// SRQAttr is what SRQ.Query reports: the SRQ's attributes as created, with
// the sizes the device holds (WR and MaxRecvSGE after rounding up: the
// entries of the ring and the scatter entries a WQE has room for), and its
// state.
type SRQAttr struct {
	SRQConfig
	State SRQState
}

// Query asks the device for the SRQ's attributes (doca_verbs_srq_query,
// QUERY_RMP): the configuration it was created with, its WR count and
// scatter entries as the device holds them, and its state. The device's
// answer is checked against the SRQ: a ring, PD or WQE stride other than
// the ones created is ErrUnexpected.
func (s *SRQ) Query() (SRQAttr, error) {
	const op = "doca_verbs_srq_query"
	if s == nil {
		return SRQAttr{}, newErr(op, ErrInvalidValue, "nil SRQ")
	}
	if err := s.enter(op, "SRQ"); err != nil {
		return SRQAttr{}, err
	}
	defer s.leave()
	in, err := mlx5.QueryRMPIn(s.srqn).Marshal()
	if err != nil {
		return SRQAttr{}, wrapErr(op, ErrUnexpected, err, "build QUERY_RMP")
	}
	out := make([]byte, mlx5.QueryRMPOutLen)
	if err := s.obj.Query(in, out); err != nil {
		return SRQAttr{}, driverErr(op, err, "QUERY_RMP 0x%x", s.srqn)
	}
	o, err := mlx5.UnmarshalQueryRMPOut(out)
	if err != nil {
		return SRQAttr{}, wrapErr(op, ErrUnexpected, err, "QUERY_RMP 0x%x output", s.srqn)
	}
	wq := o.RMPC.WQ
	if wq.PD != s.pd.PDN() || uint32(wq.LogWQSz) != s.geo.logSize || uint32(wq.LogWQStride) != s.geo.logWQESz {
		return SRQAttr{}, newErr(op, ErrUnexpected, "QUERY_RMP 0x%x: pd 0x%x, log_wq_sz %d, log_wq_stride %d; the SRQ was created with pd 0x%x, %d, %d",
			s.srqn, wq.PD, wq.LogWQSz, wq.LogWQStride, s.pd.PDN(), s.geo.logSize, s.geo.logWQESz)
	}
	a := SRQAttr{SRQConfig: s.cfg, State: SRQState(o.RMPC.State)}
	a.WR, a.MaxRecvSGE = uint32(1)<<wq.LogWQSz, s.geo.sges
	return a, nil
}
