package verbs

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/docasdk"
	"github.com/gdaki/gpunetio/internal/mlx5"
)

// CQConfig describes a completion queue (doca_verbs_cq_attr). The zero value
// matches a fresh DOCA attribute object, except that Size has no default and
// must be set.
type CQConfig struct {
	// Size is the number of CQEs: a power of two, at most DeviceAttr.MaxCQE.
	Size uint32
	// UserContext is stored and returned by UserContext(); never interpreted.
	UserContext uintptr
	// UMem holds the CQE ring and, as in DOCA GPUNetIO 3.0, the 8-byte
	// doorbell record right after it: Size*64 bytes of CQEs at UMemOffset,
	// then the record (consumer-index word, arm word) at Size*64, so the
	// UMEM must cover Size*64+8 bytes. Without UMem the CQ allocates host
	// memory for both. UMemOffset must be 0, as in DOCA (whose firmware
	// command carries no ring offset). The UMEM must belong to the CQ's
	// device (and, for Dev.NewCQ, to its Dev).
	//
	// The owner of an external ring initialises it before NewCQ, as for any
	// mlx5 CQ: every CQE invalid and hardware-owned (op_own byte 0xF1, or
	// rdma-core's 0xF0), which gpunetio's high-level QPs do for their GPU
	// rings. This package cannot write a ring that may be GPU memory, so it
	// does not; a zeroed ring reads as valid completions of QP 0, and Poll
	// refuses those with ErrUnexpected instead of returning them.
	UMem       *UMem
	UMemOffset uint64
	// DBRUMem and DBRUMemOffset put the doorbell record in a UMEM of its
	// own (doca_verbs_cq_attr_set_external_dbr_umem of DOCA 2.0), together
	// with UMem.
	//
	// Deprecated: DOCA GPUNetIO 3.0 removed the separate CQ doorbell-record
	// UMEM; leave DBRUMem nil and size UMem for the ring and the record.
	// Accepted in open mode only.
	DBRUMem       *UMem
	DBRUMemOffset uint64
	// UAR is the doorbell page for arming, of the CQ's device; without it
	// the CQ allocates one: a dedicated non-cached page, else (rdma-core
	// before v45 answers EOPNOTSUPP) the context's shared non-cached page,
	// else BlueFlame.
	UAR *UAR
	// Overrun sets overrun-ignore: the NIC never checks the consumer index
	// (GPU-polled CQs).
	Overrun bool
	// Collapsed makes the NIC write every CQE to entry 0.
	Collapsed bool
	// CompChannel, when not nil, receives the CQ's events
	// (doca_verbs_cq_attr_set_comp_channel): one per arm (CQ.ReqNotify).
	// It must be made on the CQ's Context, and outlives the CQ. Open mode
	// only.
	CompChannel *CompChannel
}

// CQ is a completion queue (doca_verbs_cq).
type CQ struct {
	node
	ctx     *Context
	dev     *Dev // nil when made on a Context
	sdk     *sdkCQ
	cfg     CQConfig
	obj     mlx5.Obj
	cqn     uint32
	ring    uintptr
	entries uint32
	dbr     uintptr
	uar     *UAR
	ownUAR  bool
	buf     *hostBuf // internal ring + DBR
	umem    *UMem    // internal UMEM over buf
	held    []*node  // external UMEMs and UAR this CQ references
	// consumer state of the host-side poller (Poll)
	pollMu  sync.Mutex
	ci      uint32
	checkCI uint32    // ci at the last firmware status check
	checkAt time.Time // time of the last firmware status check
	failed  atomic.Pointer[CQError]
	qps     cqQPs // QPs that complete on this CQ, by number
	chn     *CompChannel
	ev      cqEvents
	// asynchronous events received and not acknowledged
	asyncPending atomic.Int64
}

// NewCQ creates a completion queue on the Dev's device
// (doca_verbs_cq_create). Its UMEM and UAR, when given, must be made on the
// same Dev (ErrInvalidValue otherwise). A nil Dev is ErrInvalidValue; any
// other failure is ErrInitialization (DOCA 3.0) wrapping the cause (a bad
// configuration is ErrInvalidValue, a capability the device lacks
// ErrNotSupported, a driver failure ErrDriver).
//
// In SDK mode the CQ is the SDK's (doca_verbs_cq_create on the Dev's
// imported context, with an external UMEM flagged as driven outside the SDK,
// set_external_datapath_en); its ring, doorbell record and number come from
// the SDK's getters. The host data path (Poll) does not run on SDK CQs.
func (d *Dev) NewCQ(cfg CQConfig) (*CQ, error) {
	const op = "doca_verbs_cq_create"
	if err := d.check(op); err != nil {
		return nil, err
	}
	logUse(docasdk.ObjCQ, d.mode)
	for _, x := range []struct {
		u    *UMem
		what string
	}{{cfg.UMem, "ring UMEM"}, {cfg.DBRUMem, "DBR UMEM"}} {
		if x.u != nil && x.u.dev != d {
			return nil, initFailed(op, docasdk.ObjCQ, newErr(op, ErrInvalidValue, "%s %s was not made on this Dev", x.what, x.u.userName()))
		}
	}
	if cfg.UAR != nil && cfg.UAR.dev != d {
		return nil, initFailed(op, docasdk.ObjCQ, newErr(op, ErrInvalidValue, "UAR %s was not made on this Dev", cfg.UAR.userName()))
	}
	if d.mode == ModeSDK {
		if cfg.CompChannel != nil {
			return nil, initFailed(op, docasdk.ObjCQ, openOnly(op, "a CQ with a completion channel"))
		}
		q, err := d.newCQSDK(op, cfg)
		return q, initFailed(op, docasdk.ObjCQ, err)
	}
	q, err := newCQ(op, d.ctx, d, cfg)
	if err != nil {
		return nil, initFailed(op, docasdk.ObjCQ, err)
	}
	logCreated(docasdk.ObjCQ, unsafe.Pointer(q))
	return q, nil
}

// NewCQ creates a completion queue on device c, as Dev.NewCQ does in open
// mode.
//
// Deprecated: DOCA GPUNetIO 3.0 makes CQs on a device object: use OpenDev
// and Dev.NewCQ. This form runs in open mode only; in SDK mode it fails
// with ErrNotSupported.
func NewCQ(c *Context, cfg CQConfig) (*CQ, error) {
	const op = "doca_verbs_cq_create"
	if currentMode() == ModeSDK {
		return nil, openOnly(op, "NewCQ on a Context (use Dev.NewCQ)")
	}
	if c == nil {
		return nil, newErr(op, ErrInvalidValue, "nil context")
	}
	q, err := newCQ(op, c, nil, cfg)
	if err != nil {
		return nil, initFailed(op, docasdk.ObjCQ, err)
	}
	return q, nil
}

// newCQ is the open implementation; the CQ references d when it is not nil.
func newCQ(op string, c *Context, d *Dev, cfg CQConfig) (cq *CQ, err error) {
	if c == nil {
		return nil, newErr(op, ErrInvalidValue, "nil context")
	}
	if cfg.UMem == nil && cfg.DBRUMem != nil {
		return nil, newErr(op, ErrInvalidValue, "a DBR UMEM without a ring UMEM")
	}
	if !isPow2(uint64(cfg.Size)) {
		return nil, newErr(op, ErrInvalidValue, "size %d is not a power of two", cfg.Size)
	}
	if ch := cfg.CompChannel; ch != nil && ch.ctx != c {
		return nil, newErr(op, ErrInvalidValue, "completion channel %s was not made on %s", ch.userName(), c.name)
	}
	q := &CQ{ctx: c, dev: d, cfg: cfg, entries: cfg.Size}
	if err := c.acquire(op, "Context", &q.node); err != nil {
		return nil, err
	}
	devHeld := false
	defer func() {
		if err != nil {
			if terr := q.teardown(); terr != nil {
				err = errors.Join(err, terr)
			}
			if devHeld {
				q.releaseParents(c, d)
			} else {
				c.release(&q.node)
			}
		}
	}()
	if d != nil {
		if err := d.acquire(op, "Dev", &q.node); err != nil {
			return nil, err
		}
		devHeld = true
	}
	if err := q.checkCaps(op); err != nil {
		return nil, err
	}
	ring, dbr, dbrOff, err := q.allocRing(op)
	if err != nil {
		return nil, err
	}
	if err := q.attachUAR(op); err != nil {
		return nil, err
	}
	eqn, err := c.dev.QueryEQN(0)
	if err != nil {
		return nil, driverErr(op, err, "mlx5dv_devx_query_eqn vector 0")
	}
	in, err := createCQIn(cfg, q.uar, eqn, ring, dbr, dbrOff).Marshal()
	if err != nil {
		return nil, wrapErr(op, ErrInvalidValue, err, "build CREATE_CQ")
	}
	q.obj, err = c.dev.CreateObj(in, make([]byte, prmCreateOutLen))
	if err != nil {
		return nil, driverErr(op, err, "CREATE_CQ of %d entries", cfg.Size)
	}
	q.cqn = q.obj.ID()
	if ch := cfg.CompChannel; ch != nil {
		if err := ch.attach(op, q); err != nil {
			return nil, err
		}
	}
	c.subscribeAsync(q.obj, cookieCQ|uint64(q.cqn), q, mlx5.EventCQError)
	q.init("CQ", fmt.Sprintf("CQ 0x%x on %s", q.cqn, c.name))
	return q, nil
}

// checkCaps checks the configuration against the device and the external
// objects against the CQ's device.
func (q *CQ) checkCaps(op string) error {
	c, cfg := q.ctx, q.cfg
	attr, err := c.caps()
	if err != nil {
		return wrapErr(op, codeOf(err), err, "device query")
	}
	if cfg.Size > attr.MaxCQE+1 {
		// ibv reports max_cqe as 2^log_max_cq_sz - 1; the PRM size is the power of two.
		return newErr(op, ErrInvalidValue, "size %d exceeds the device's max CQE %d", cfg.Size, attr.MaxCQE)
	}
	if cfg.UMem != nil {
		if err := cfg.UMem.sameDevice(op, c, "ring UMEM"); err != nil {
			return err
		}
		if cfg.DBRUMem != nil {
			if err := cfg.DBRUMem.sameDevice(op, c, "DBR UMEM"); err != nil {
				return err
			}
		}
		if err := checkCQUMem(op, cfg); err != nil {
			return err
		}
	}
	if cfg.UAR != nil {
		if err := cfg.UAR.sameDevice(op, c); err != nil {
			return err
		}
	}
	return nil
}

// allocRing references the external ring (and DBR) UMEMs, or allocates
// and registers host memory with the doorbell record after the CQEs; it
// returns the UMEMs and the DBR offset and sets the CQ's addresses.
func (q *CQ) allocRing(op string) (ring, dbr *UMem, dbrOff uint64, err error) {
	cfg := q.cfg
	switch {
	case cfg.DBRUMem != nil: // DOCA 2.0: a UMEM of its own
		ring, dbr, dbrOff = cfg.UMem, cfg.DBRUMem, cfg.DBRUMemOffset
		for _, u := range []*UMem{ring, dbr} {
			if err := u.acquire(op, "UMem", &q.node); err != nil {
				return nil, nil, 0, err
			}
			q.held = append(q.held, &u.node)
		}
	case cfg.UMem != nil: // DOCA 3.0: the record follows the CQEs
		ring, dbr, dbrOff = cfg.UMem, cfg.UMem, uint64(cfg.Size)*cqeSize
		if err := ring.acquire(op, "UMem", &q.node); err != nil {
			return nil, nil, 0, err
		}
		q.held = append(q.held, &ring.node)
	default:
		dbrOff = alignUp(uint64(cfg.Size)*cqeSize, dbrArea)
		if q.buf, err = allocHost(op, dbrOff+dbrArea); err != nil {
			return nil, nil, 0, err
		}
		// DOCA leaves internal rings zeroed; we mark every CQE invalid
		// (opcode 15, owner 1) so owner-bit pollers work from the start.
		for i := uint32(0); i < cfg.Size; i++ {
			q.buf.b[uint64(i)*cqeSize+63] = cqeInvalidOwned
		}
		if q.umem, err = newUMem(op, q.ctx, nil, q.buf.addr(), uint64(len(q.buf.b)), 0, nil); err != nil {
			return nil, nil, 0, err
		}
		if err := q.umem.acquire(op, "UMem", &q.node); err != nil {
			return nil, nil, 0, err
		}
		ring, dbr = q.umem, q.umem
	}
	q.ring = ring.Addr()
	q.dbr = dbr.Addr() + uintptr(dbrOff)
	return ring, dbr, dbrOff, nil
}

// attachUAR references the configured UAR or allocates the CQ's own.
func (q *CQ) attachUAR(op string) error {
	if u := q.cfg.UAR; u != nil {
		if err := u.acquire(op, "UAR", &q.node); err != nil {
			return err
		}
		q.held = append(q.held, &u.node)
		q.uar = u
		return nil
	}
	u, err := newUARFallback(q.ctx, op, UARNonCacheDedicated, UARNonCache, UARBlueFlame)
	if err != nil {
		return err
	}
	q.uar, q.ownUAR = u, true
	return u.acquire(op, "UAR", &q.node)
}

// createCQIn is the CREATE_CQ command of a CQ of cfg: 64-byte CQEs on EQ
// eqn, ringing UAR page uar, its ring and doorbell record in the UMEMs.
func createCQIn(cfg CQConfig, uar *UAR, eqn uint32, ring, dbr *UMem, dbrOff uint64) mlx5.CreateCQIn {
	return mlx5.CreateCQIn{
		CmdHeader: mlx5.CmdHeader{Opcode: mlx5.OpCreateCQ},
		CQC: mlx5.CQContext{
			DBRUMEMValid: true, CC: cfg.Collapsed, OI: cfg.Overrun,
			LogCQSize: uint8(log2(uint64(cfg.Size))), UARPage: uar.ID(), CEQN: uint8(eqn),
			DBRUMEMID: dbr.ID(), DBRAddr: dbrOff,
		},
		CQUMEMID: ring.ID(), CQUMEMValid: true,
	}
}

// checkCQUMem checks the external UMEMs of cfg (cfg.UMem is set).
func checkCQUMem(op string, cfg CQConfig) error {
	if cfg.UMemOffset != 0 {
		return newErr(op, ErrInvalidValue, "ring UMEM offset %d: must be 0 (the ring starts at the UMEM)", cfg.UMemOffset)
	}
	ring := uint64(cfg.Size) * cqeSize
	if cfg.DBRUMem == nil {
		if ring+8 > cfg.UMem.Size() {
			return newErr(op, ErrInvalidValue, "ring of %d CQEs and its doorbell record need %d bytes, UMEM has %d", cfg.Size, ring+8, cfg.UMem.Size())
		}
		return nil
	}
	if ring > cfg.UMem.Size() {
		return newErr(op, ErrInvalidValue, "ring of %d CQEs needs %d bytes, UMEM has %d", cfg.Size, ring, cfg.UMem.Size())
	}
	if cfg.DBRUMemOffset%8 != 0 || cfg.DBRUMemOffset > cfg.DBRUMem.Size() || cfg.DBRUMem.Size()-cfg.DBRUMemOffset < 8 {
		return newErr(op, ErrInvalidValue, "DBR offset %d is not an 8-byte aligned offset inside the %d-byte UMEM", cfg.DBRUMemOffset, cfg.DBRUMem.Size())
	}
	return nil
}

const cqeInvalidOwned = 0xf1 // op_own: opcode INVALID (15), owner 1

// newUARFallback allocates a UAR of the first type that the device grants,
// trying the types in order: an older rdma-core refuses NC_DEDICATED with
// EOPNOTSUPP, and a device may run out of one kind of page. When every type
// fails, the error names each attempt.
func newUARFallback(c *Context, op string, types ...UARAllocType) (*UAR, error) {
	var errs []error
	for _, t := range types {
		u, err := newUAR(op, c, nil, t)
		if err == nil {
			return u, nil
		}
		errs = append(errs, err)
	}
	return nil, wrapErr(op, ErrDriver, errors.Join(errs...), "no internal UAR of types %v could be allocated", types)
}

// teardown releases what NewCQ acquired, in reverse order; used on a failed
// create and by Close. It can be called again after a failure.
func (q *CQ) teardown() error {
	const op = "doca_verbs_cq_destroy"
	if err := destroyObj(op, &q.obj, "cqn 0x%x", q.cqn); err != nil {
		return err
	}
	q.ctx.unsubscribeAsync(cookieCQ | uint64(q.cqn))
	if q.chn != nil {
		q.chn.detach(q)
		q.chn = nil
	}
	if q.ownUAR && q.uar != nil {
		if err := q.closeOwned(op, "UAR", &q.uar.node, q.uar.Close); err != nil {
			return err
		}
		q.uar = nil
	}
	if q.umem != nil {
		if err := q.closeOwned(op, "UMem", &q.umem.node, q.umem.Close); err != nil {
			return err
		}
		q.umem = nil
	}
	for _, n := range q.held {
		n.release(&q.node)
	}
	q.held = nil
	return freeRing(op, &q.buf, "CQ ring")
}

// The getters return values fixed at creation, and zero values for a nil
// or zero CQ.

// CQN is the CQ number.
func (q *CQ) CQN() uint32 {
	if q == nil {
		return 0
	}
	return q.cqn
}

// Ring returns the CQE ring: its address, the number of entries and the entry
// size (64) (doca_verbs_cq_get_wq).
func (q *CQ) Ring() (addr uintptr, entries uint32, entrySize uint8) {
	if q == nil {
		return 0, 0, cqeSize
	}
	if q.sdk != nil {
		return q.ring, q.entries, q.sdk.entrySize
	}
	return q.ring, q.entries, cqeSize
}

// Doorbells returns the UAR doorbell register, the consumer-index doorbell
// record word and the arm word (doca_verbs_cq_get_dbr_addr).
func (q *CQ) Doorbells() (uarDB, ciDBR, armDBR uintptr) {
	if q == nil || q.dbr == 0 {
		return 0, 0, 0
	}
	if q.sdk != nil {
		return q.sdk.uarDB, q.sdk.ciDBR, q.sdk.armDBR
	}
	return q.uar.RegAddr(), q.dbr, q.dbr + 4
}

// Mode is the implementation behind the CQ.
func (q *CQ) Mode() Mode {
	if q == nil || q.sdk == nil {
		return ModeOpen
	}
	return ModeSDK
}

// DBRAddr is the address of the 8-byte CQ doorbell record.
func (q *CQ) DBRAddr() uintptr {
	if q == nil {
		return 0
	}
	return q.dbr
}

// UAR is the doorbell page of the CQ.
func (q *CQ) UAR() *UAR {
	if q == nil {
		return nil
	}
	return q.uar
}

// Config returns the configuration the CQ was created with.
func (q *CQ) Config() CQConfig {
	if q == nil {
		return CQConfig{}
	}
	return q.cfg
}

// UserContext returns CQConfig.UserContext.
func (q *CQ) UserContext() uintptr {
	if q == nil {
		return 0
	}
	return q.cfg.UserContext
}

// Context returns the device of the CQ.
func (q *CQ) Context() *Context {
	if q == nil {
		return nil
	}
	return q.ctx
}

// Hold takes a reference that keeps the CQ, its ring and doorbell page
// alive (Close fails with ErrInUse naming holder) until Hold.Release;
// ErrBadState if it is closed. Package gpunetio holds the CQ of every QP it
// exports.
func (q *CQ) Hold(holder string) (*Hold, error) {
	const op = "CQ.Hold"
	if q == nil {
		return nil, newErr(op, ErrInvalidValue, "nil CQ")
	}
	return q.hold(op, "CQ", holder)
}

// Close destroys the CQ (doca_verbs_cq_destroy); ErrInUse while a QP uses it
// or a Hold is taken on it, and ErrInUse wrapping ErrUnackedEvents while
// events received from its completion channel are not acknowledged
// (CQ.AckEvents). It waits for Poll calls in progress.
func (q *CQ) Close() error {
	const op = "doca_verbs_cq_destroy"
	if q == nil {
		logPrint(logErr, "Failed to destroy cq: parameter cq is NULL")
		return newErr(op, ErrInvalidValue, "nil CQ")
	}
	if q.use(op, "CQ") == nil {
		if err := q.checkAcked(op); err != nil {
			return err
		}
		if err := checkAsyncAcked(op, q.userName(), &q.asyncPending); err != nil {
			return err
		}
	}
	done, err := q.beginClose(op, "CQ")
	if done || err != nil {
		return err
	}
	if q.sdk != nil {
		err = q.closeSDK(op)
		q.endClose(nil)
		return err
	}
	err = q.teardown()
	if err == nil {
		q.releaseParents(q.ctx, q.dev)
	}
	q.endClose(err)
	return err
}
