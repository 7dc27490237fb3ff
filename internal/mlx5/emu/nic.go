package emu

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// Config configures one emulated NIC.
type Config struct {
	// Name is the device name ("emu0"); empty gives "emu-test".
	Name  string
	Model Model
	// Wire configures the NIC's port on the emulated wire (address, TCP
	// port, ForceTCP); the handler is the NIC's own.
	Wire wire.Config
	// clock is the time of the NIC's timers; nil is the wall clock
	// (clock.go). Tests set it.
	clock clock
}

// NIC is one emulated ConnectX: its firmware object tables, its port on the
// wire and its engine goroutine (doorbell watcher + requester). Every Open
// is a new DevX context on it.
type NIC struct {
	cfg    Config
	manual bool // no engine goroutine: the caller drives round with its own clock
	caps   *capSet
	port   *wire.Port
	gid    mlx5.GID

	mu     sync.RWMutex
	closed bool
	ctxs   map[uint16]*devCtx
	pds    map[uint32]*pd
	mrs    map[uint32]*mr // by mkey index (key >> 8)
	umems  map[uint32]*umem
	uars   map[uint32]*uar
	cqs    map[uint32]*cq
	qps    map[uint32]*qp
	rmps   map[uint32]*rmp
	ids    nicIDs

	// Read on every request and every engine round, written rarely: kept
	// off the cache lines the engine writes every round (the pads), so
	// that a wire reader's request does not miss them each time the
	// engine has taken a lock (a miss crosses cores, or sockets).
	_ [64]byte
	// Snapshots the data path reads without n.mu (republished under n.mu
	// on every change), so no engine or responder path ever waits for the
	// command lock.
	qpSnap atomic.Pointer[[]*qp]
	qpTab  atomic.Pointer[qpTable]
	mrMap  atomic.Pointer[map[uint32]*mr]
	cqMap  atomic.Pointer[map[uint32]*cq]
	uarMap atomic.Pointer[[]*uar]
	devQPs atomic.Int32 // QPs whose SQ ring or DBR is in device memory (engine pacing)
	// flushing is whether toFlush holds a CQ (written under flushMu): the
	// engine and the wire's readers call flushCQs after every step and
	// every request, and while nothing waits they only read it, where a
	// lock would move its cache line between their processors each time.
	flushing atomic.Bool
	// queued is whether inbox holds a response (written under inboxMu):
	// the engine looks at it every round, and takes inboxMu only then.
	queued atomic.Bool
	_      [64]byte

	uarPollMu sync.Mutex // held by the engine while it reads UAR pages

	flushMu sync.Mutex
	toFlush []*cq // CQs in device memory with CQEs waiting for their batch

	inboxMu  sync.Mutex
	inbox    []response
	spare    []response // the engine's drained batch, reused
	wake     chan struct{}
	sleeping atomic.Bool // the engine is (about to be) blocked on wake
	stop     chan struct{}
	done     chan struct{}

	stats nicCounters

	// Event queues and the driver's event dispatch (eq.go).
	pagesMu sync.Mutex
	pages   map[uint64][]byte // pages the driver gave the device, by PAS
	eqMu    sync.Mutex
	eqs     [numEQs]*eq
	subMu   sync.RWMutex
	subs    map[subKey]map[*eventChannel]uint64

	portDown atomic.Bool // SetPortState: port 1 is DOWN
}

// Stats are a NIC's data-path counters since NewNIC.
type Stats struct {
	// Wire is the NIC's port's counters.
	Wire wire.Stats
	// RequestsDropped counts request packets dropped at the responder: no
	// such QP, a QP not in RTR/RTS, or not from the QP's remote QPN and GID.
	RequestsDropped uint64
	// ResponsesDropped counts responses (ACK, NAK, READ response, ATOMIC
	// ACK) dropped at the requester: no such QP, a QP not in RTS, not from
	// the QP's remote QPN and GID, or a PSN outside the outstanding window.
	ResponsesDropped uint64
}

type nicCounters struct {
	requestsDropped, responsesDropped atomic.Uint64
}

// Stats returns the NIC's counters.
func (n *NIC) Stats() Stats {
	return Stats{Wire: n.port.Stats(), RequestsDropped: n.stats.requestsDropped.Load(), ResponsesDropped: n.stats.responsesDropped.Load()}
}

// NewNIC creates an emulated NIC with an explicit configuration (tests use
// it; the provider creates emu0.. with NewNIC from the environment). Close
// it when done.
func NewNIC(cfg Config) (*NIC, error) { return makeNIC(cfg, false) }

// makeNIC creates a NIC; a manual one has no engine goroutine, and whoever
// drives it calls round (the fuzz targets do, to run each input to its end
// without the engine's scheduling in between).
func makeNIC(cfg Config, manual bool) (*NIC, error) {
	if cfg.Name == "" {
		cfg.Name = "emu-test"
	}
	diagnosticsFromEnv()
	if cfg.Model != ModelCX7 && cfg.Model != ModelCX8 {
		return nil, fmt.Errorf("emu: new NIC %s: model %v: want ModelCX7 or ModelCX8: %w", cfg.Name, cfg.Model, syscall.EINVAL)
	}
	n := &NIC{
		cfg:   cfg,
		caps:  newCaps(cfg.Model),
		ctxs:  map[uint16]*devCtx{},
		pds:   map[uint32]*pd{},
		mrs:   map[uint32]*mr{},
		umems: map[uint32]*umem{},
		uars:  map[uint32]*uar{},
		cqs:   map[uint32]*cq{},
		qps:   map[uint32]*qp{},
		rmps:  map[uint32]*rmp{},
		ids:   newNICIDs(),
		pages: map[uint64][]byte{},
		wake:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	wc := cfg.Wire
	wc.Handler = n.deliver
	if wc.MapHook == nil {
		wc.MapHook = pinHost // shared-memory rings: GPU payloads land in them by DMA
	}
	p, err := wire.Listen(wc)
	if err != nil {
		return nil, fmt.Errorf("emu: %s: open wire port: %w", cfg.Name, err)
	}
	if err := n.createKernelEQs(); err != nil {
		n.destroyKernelEQs()
		p.Close()
		return nil, err
	}
	n.port = p
	n.gid = mlx5.GID(p.GID())
	n.refreshQPs()
	n.refreshMRs()
	n.refreshCQs()
	n.refreshUARs()
	n.manual = manual
	if manual {
		close(n.done)
	} else {
		go n.engine()
	}
	track(n, "NIC %s", cfg.Name)
	return n, nil
}

// Name is the NIC's device name.
func (n *NIC) Name() string { return n.cfg.Name }

// GID is the NIC's GID index 0: the RoCE v2 IPv4-mapped GID of its wire
// address.
func (n *NIC) GID() mlx5.GID { return n.gid }

// Open opens a new DevX context on the NIC.
func (n *NIC) Open() (mlx5.Device, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, fmt.Errorf("emu: open %s: %w", n.cfg.Name, syscall.ENODEV)
	}
	uid, _, ok := n.ids.uid.alloc(func(u uint32) bool { return n.ctxs[uint16(u)] != nil })
	if !ok {
		return nil, fmt.Errorf("emu: open %s: all %d DevX uids in use: %w", n.cfg.Name, len(n.ctxs), syscall.ENOMEM)
	}
	c := &devCtx{nic: n, uid: uint16(uid)}
	n.ctxs[c.uid] = c
	track(c, "device context uid %d on %s", c.uid, n.cfg.Name)
	return c, nil
}

// Close stops the NIC: EBUSY while a context is still open.
func (n *NIC) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	if len(n.ctxs) > 0 {
		n.mu.Unlock()
		return fmt.Errorf("emu: close %s: %d contexts still open: %w", n.cfg.Name, len(n.ctxs), syscall.EBUSY)
	}
	n.closed = true
	n.mu.Unlock()
	close(n.stop)
	<-n.done
	n.destroyKernelEQs()
	untrack(n)
	return n.port.Close()
}

// refreshQPs republishes the QP list and map the engine reads; n.mu held.
func (n *NIC) refreshQPs() {
	l := make([]*qp, 0, len(n.qps))
	m := make(map[uint32]*qp, len(n.qps))
	for k, q := range n.qps {
		l = append(l, q)
		m[k] = q
	}
	n.qpSnap.Store(&l)
	n.qpTab.Store(newQPTable(m))
}

func (n *NIC) refreshMRs() {
	m := make(map[uint32]*mr, len(n.mrs))
	for k, v := range n.mrs {
		m[k] = v
	}
	n.mrMap.Store(&m)
}

func (n *NIC) refreshCQs() {
	m := make(map[uint32]*cq, len(n.cqs))
	for k, v := range n.cqs {
		m[k] = v
	}
	n.cqMap.Store(&m)
}

func (n *NIC) refreshUARs() {
	l := make([]*uar, 0, len(n.uars))
	for _, v := range n.uars {
		l = append(l, v)
	}
	n.uarMap.Store(&l)
}

func (n *NIC) qpByNum(qpn uint32) *qp { return n.qpTab.Load().get(qpn) }
func (n *NIC) cqByNum(cqn uint32) *cq { return (*n.cqMap.Load())[cqn] }

// queueFlush puts a CQ with pending CQEs on the list flushCQs writes; the
// CQ's mu is held (so flushMu is never held while taking a CQ's mu).
func (n *NIC) queueFlush(c *cq) {
	n.flushMu.Lock()
	n.toFlush = append(n.toFlush, c)
	n.flushing.Store(true)
	n.flushMu.Unlock()
}

// flushCQs writes the pending CQEs of every queued CQ, each CQ's with one
// batch of copies. The engine calls it after every step of a round, the
// responder after every request it executes. A caller that queued a CQ
// sees its own store of flushing; one that sees false while another
// queues returns as it would have found the list empty under the lock (the
// other's own call flushes it).
func (n *NIC) flushCQs() {
	if !n.flushing.Load() {
		return
	}
	n.flushMu.Lock()
	if len(n.toFlush) == 0 {
		n.flushMu.Unlock()
		return
	}
	l := n.toFlush
	n.toFlush = nil
	n.flushing.Store(false)
	n.flushMu.Unlock()
	for i, c := range l {
		c.flush()
		l[i] = nil
	}
	n.flushMu.Lock()
	if n.toFlush == nil {
		n.toFlush = l[:0]
	}
	n.flushMu.Unlock()
}

// kick wakes the engine goroutine if it sleeps.
func (n *NIC) kick() {
	if !n.sleeping.Load() {
		return
	}
	select {
	case n.wake <- struct{}{}:
	default:
	}
}
