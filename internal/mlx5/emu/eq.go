package emu

import (
	"encoding/binary"
	"fmt"
	"sync"
	"syscall"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Event queues, as a ConnectX and its kernel driver share them.
//
// Firmware side: CREATE_EQ makes an EQ of 2^log_eq_size EQEs in a ring the
// driver gave it (the PAS), asking for the event types of its event
// bitmask; firmware writes each event as an EQE at its producer counter
// with the pass's owner bit (0 on the first pass), the owner byte last, and
// raises the EQ's interrupt.
//
// Kernel side (the emulated mlx5_core and mlx5_ib): when a NIC is made, the
// driver creates one EQ per completion vector (COMP events, the EQNs
// QueryEQN returns) and one asynchronous EQ (every other event type) with
// CREATE_EQ commands built by package mlx5, in rings of host memory it
// maps. Its interrupt handler reads the EQEs by their owner bit, hands each
// one to the DevX event channels subscribed to its object (or to the
// device's unaffiliated events), and advances the EQ's consumer counter.
// The handler runs in the context of the firmware that raised the event,
// as an interrupt does on a CPU, so an event is on its channels when the
// code that raised it returns.

const (
	eqLogSize   = 10 // EQEs per kernel EQ: 1024
	eqMaxLog    = 16 // largest log_eq_size CREATE_EQ accepts
	numEQs      = numCompVectors + 1
	asyncEQN    = eqnBase + numCompVectors
	eqRingBytes = mlx5.EQESize << eqLogSize
)

// eq is one event queue.
type eq struct {
	nic  *NIC
	eqn  uint32
	log  uint8
	mask uint64
	ring []byte // the driver's pages

	mu   sync.Mutex // firmware's writes and the driver's handler
	pc   uint32     // producer counter (firmware)
	cc   uint32     // consumer counter (the driver's EQ doorbell)
	lost uint64     // events dropped on a full ring
	dead bool
}

// asyncEvents are the event types of the asynchronous EQ.
var asyncEvents = []mlx5.EventType{
	mlx5.EventCQError, mlx5.EventWQCatasError, mlx5.EventInternalError, mlx5.EventPortChange,
	mlx5.EventWQInvalReqError, mlx5.EventWQAccessError, mlx5.EventSRQCatasError,
	mlx5.EventSRQLastWQE, mlx5.EventSRQRQLimit, mlx5.EventCommEst, mlx5.EventSQDrained,
	mlx5.EventPathMig, mlx5.EventPathMigFailed,
}

// createKernelEQs creates the driver's EQs; n.mu need not be held (the
// NIC is not published yet).
func (n *NIC) createKernelEQs() error {
	for i := 0; i < numEQs; i++ {
		ring, err := syscall.Mmap(-1, 0, eqRingBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			return fmt.Errorf("emu: %s: EQ ring: mmap: %w", n.cfg.Name, err)
		}
		for j := mlx5.EQESize - 1; j < len(ring); j += mlx5.EQESize {
			ring[j] = mlx5.EQEOwnerInit
		}
		pa := n.givePage(ring)
		mask := mlx5.EventMask(mlx5.EventComp)
		if i == numCompVectors {
			mask = mlx5.EventMask(asyncEvents...)
		}
		in, err := mlx5.CreateEQIn{
			EQC:          mlx5.EQContext{LogEQSize: eqLogSize, Intr: uint16(i)},
			EventBitmask: mask, PAS: pa,
		}.Marshal()
		if err != nil {
			return fmt.Errorf("emu: %s: build CREATE_EQ: %w", n.cfg.Name, err)
		}
		out := make([]byte, mlx5.CmdShortLen)
		if err := n.kernelCmd(in, out); err != nil {
			return fmt.Errorf("emu: %s: %w", n.cfg.Name, err)
		}
		if got := mlx5.Get32(out, mlx5.ObjIDField); got != eqnBase+uint32(i) {
			return fmt.Errorf("emu: %s: CREATE_EQ gave EQ 0x%x, want 0x%x", n.cfg.Name, got, eqnBase+i)
		}
	}
	return nil
}

// destroyKernelEQs destroys the driver's EQs and unmaps their rings.
func (n *NIC) destroyKernelEQs() {
	for i := 0; i < numEQs; i++ {
		e := n.eqs[i]
		if e == nil {
			continue
		}
		in, _ := mlx5.DestroyEQIn(uint8(e.eqn)).Marshal()
		_ = n.kernelCmd(in, make([]byte, mlx5.CmdShortLen))
	}
}

// givePage records ring as memory the driver hands the device and returns
// the address CREATE_EQ's PAS names it by. The emulator has no physical
// addresses: the PAS carries the ring's virtual address, which firmware
// accepts only for pages the driver gave it this way.
func (n *NIC) givePage(ring []byte) uint64 {
	pa := uint64(uintptrOf(ring))
	n.pagesMu.Lock()
	n.pages[pa] = ring
	n.pagesMu.Unlock()
	return pa
}

// kernelCmd executes a command of the kernel driver's own command
// interface (not DevX): CREATE_EQ and DESTROY_EQ.
func (n *NIC) kernelCmd(in, out []byte) error {
	const op = "mlx5_cmd_exec"
	if len(in) < mlx5.CmdHeaderLen || len(out) < mlx5.CmdShortLen {
		return kernelErr(op, in, syscall.EINVAL)
	}
	clear(out)
	var e fwError
	switch code := uint16(mlx5.Get(in, fOpcode)); code {
	case mlx5.OpCreateEQ:
		e = n.createEQ(in, out)
	case mlx5.OpDestroyEQ:
		e = n.destroyEQ(in)
	default:
		e = fwError(SynBadOpcode)
	}
	return finish(op, in, out, e)
}

// createEQ executes CREATE_EQ.
func (n *NIC) createEQ(in, out []byte) fwError {
	if len(in) < mlx5.CreateEQInLen {
		return fwError(SynBadInLen)
	}
	cmd, err := mlx5.UnmarshalCreateEQIn(in[:mlx5.CreateEQInLen])
	if err != nil {
		return fwError(SynBadInLen)
	}
	if cmd.OpMod != 0 {
		return fwError(SynBadOpMod)
	}
	x := &cmd.EQC
	if x.Status != 0 || x.ST != 0 || x.ConsumerCounter != 0 || x.ProducerCounter != 0 || x.PageOffset != 0 {
		return fwError(SynReserved)
	}
	if x.LogEQSize > eqMaxLog {
		return fwError(SynEQSize)
	}
	n.pagesMu.Lock()
	ring := n.pages[cmd.PAS]
	n.pagesMu.Unlock()
	if ring == nil || len(ring) < mlx5.EQESize<<x.LogEQSize {
		return fwError(SynEQPAS)
	}
	n.eqMu.Lock()
	defer n.eqMu.Unlock()
	i := -1
	for j, e := range n.eqs {
		if e == nil {
			i = j
			break
		}
	}
	if i < 0 {
		return fwError(SynLimit)
	}
	n.eqs[i] = &eq{nic: n, eqn: eqnBase + uint32(i), log: x.LogEQSize, mask: cmd.EventBitmask, ring: ring}
	mlx5.Set(out, mlx5.ObjIDField, uint64(n.eqs[i].eqn))
	return 0
}

// destroyEQ executes DESTROY_EQ; the driver then takes its pages back.
func (n *NIC) destroyEQ(in []byte) fwError {
	cmd, err := mlx5.UnmarshalObjCmdIn(in, mlx5.OpDestroyEQ)
	if err != nil {
		return fwError(SynBadInLen)
	}
	n.eqMu.Lock()
	i := int(cmd.ID) - eqnBase
	if cmd.ID < eqnBase || i >= len(n.eqs) || n.eqs[i] == nil {
		n.eqMu.Unlock()
		return fwError(SynNoEQ)
	}
	e := n.eqs[i]
	n.eqs[i] = nil
	n.eqMu.Unlock()
	e.mu.Lock()
	e.dead = true
	e.mu.Unlock()
	n.pagesMu.Lock()
	delete(n.pages, uint64(uintptrOf(e.ring)))
	n.pagesMu.Unlock()
	syscall.Munmap(e.ring)
	return 0
}

// eqByNum returns EQ eqn, nil if there is none.
func (n *NIC) eqByNum(eqn uint32) *eq {
	n.eqMu.Lock()
	defer n.eqMu.Unlock()
	i := int(eqn) - eqnBase
	if eqn < eqnBase || i >= len(n.eqs) {
		return nil
	}
	return n.eqs[i]
}

// raise writes event ev to EQ eqn (the async EQ for every type but COMP)
// and runs the EQ's interrupt. A full EQ drops the event, as an EQ
// overrun does (the driver consumes each EQE in its interrupt, so a ring
// never fills).
func (n *NIC) raise(eqn uint32, ev mlx5.EQE) {
	q := n.eqByNum(eqn)
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dead || ev.Type >= 64 || q.mask&(1<<ev.Type) == 0 {
		return
	}
	size := uint32(1) << q.log
	if q.pc-q.cc >= size {
		q.lost++
		return
	}
	ev.Owner = mlx5.EQEOwnerBit(q.pc, uint(q.log))
	var b [mlx5.EQESize]byte
	_ = ev.Encode(b[:])
	slot := q.ring[(q.pc&(size-1))*mlx5.EQESize:][:mlx5.EQESize]
	copy(slot[:mlx5.EQESize-1], b[:mlx5.EQESize-1])
	slot[mlx5.EQESize-1] = b[mlx5.EQESize-1] // the owner byte last
	q.pc++
	q.interrupt()
}

// raiseAsync writes ev to the asynchronous EQ.
func (n *NIC) raiseAsync(ev mlx5.EQE) { n.raise(asyncEQN, ev) }

// interrupt is the driver's handler of the EQ's interrupt: it takes every
// EQE software owns, dispatches it, and moves the consumer counter (the
// EQ doorbell at UAROffsetEQUpdateCI). q.mu held.
func (q *eq) interrupt() {
	size := uint32(1) << q.log
	for {
		slot := q.ring[(q.cc&(size-1))*mlx5.EQESize:][:mlx5.EQESize]
		if !mlx5.EQEOwned(slot[mlx5.EQESize-1], q.cc, uint(q.log)) {
			break
		}
		ev, err := mlx5.DecodeEQE(slot)
		q.cc++
		if err == nil {
			q.nic.dispatch(ev)
		}
	}
}

// Subscriptions: which channels get the events of one object (or the
// device's unaffiliated events: kind objNone).

const objNone objKind = -1

type subKey struct {
	t    mlx5.EventType
	kind objKind
	num  uint32
}

// eventKind is the kind of object an event type is affiliated with.
func eventKind(t mlx5.EventType) objKind {
	switch t {
	case mlx5.EventComp, mlx5.EventCQError:
		return objCQ
	case mlx5.EventSRQRQLimit, mlx5.EventSRQCatasError:
		return objRMP
	case mlx5.EventPortChange, mlx5.EventInternalError:
		return objNone
	case mlx5.EventWQCatasError, mlx5.EventWQInvalReqError, mlx5.EventWQAccessError, mlx5.EventSRQLastWQE,
		mlx5.EventCommEst, mlx5.EventSQDrained, mlx5.EventPathMig, mlx5.EventPathMigFailed:
		return objQP
	}
	return objKind(-2) // no object raises it
}

// dispatch hands ev to every channel subscribed to it.
func (n *NIC) dispatch(ev mlx5.EQE) {
	k := subKey{t: ev.Type, kind: eventKind(ev.Type)}
	if num, ok := ev.AffiliatedObj(); ok {
		k.num = num
	}
	n.subMu.RLock()
	defer n.subMu.RUnlock()
	for ch, cookie := range n.subs[k] {
		ch.push(cookie, ev)
	}
}

// unsubscribeObj ends the subscriptions to an object being destroyed.
func (n *NIC) unsubscribeObj(kind objKind, num uint32) {
	n.subMu.Lock()
	defer n.subMu.Unlock()
	for k := range n.subs {
		if k.kind == kind && k.num == num {
			delete(n.subs, k)
		}
	}
}

// eventChannel is a DevX event channel: an eventfd in semaphore mode whose
// count is the number of pending events, so the fd is readable exactly
// while one is pending.
type eventChannel struct {
	ctx *devCtx

	mu     sync.Mutex
	fd     int
	closed bool
	q      []mlx5.ChannelEvent
	keys   []subKey
}

var _ mlx5.EventChannel = (*eventChannel)(nil)

// eventfd flags (linux/eventfd.h).
const (
	efdSemaphore = 1
	efdCloexec   = syscall.O_CLOEXEC
	efdNonblock  = syscall.O_NONBLOCK
)

// CreateEventChannel opens a DevX event channel.
func (c *devCtx) CreateEventChannel() (mlx5.EventChannel, error) {
	const op = "devx_create_event_channel"
	n := c.nic
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := c.checkOpen(op); err != nil {
		return nil, err
	}
	fd, _, errno := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, efdCloexec|efdNonblock|efdSemaphore, 0)
	if errno != 0 {
		return nil, fmt.Errorf("emu: %s: eventfd: %w", op, errno)
	}
	ch := &eventChannel{ctx: c, fd: int(fd)}
	c.live++
	track(ch, "event channel fd %d on %s", ch.fd, n.cfg.Name)
	return ch, nil
}

func (ch *eventChannel) FD() int {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return -1
	}
	return ch.fd
}

// Subscribe checks what the kernel checks: the object is the context's and
// alive, and every type is one its kind raises (unaffiliated types without
// an object).
func (ch *eventChannel) Subscribe(obj mlx5.Obj, types []mlx5.EventType, cookie uint64) error {
	const op = "devx_subscribe_devx_event"
	n := ch.ctx.nic
	if len(types) == 0 {
		return fmt.Errorf("emu: %s: no event types: %w", op, syscall.EINVAL)
	}
	kind, num := objNone, uint32(0)
	if obj != nil {
		o, ok := obj.(*object)
		n.mu.RLock()
		dead := !ok || o.dead || o.ctx != ch.ctx
		n.mu.RUnlock()
		if dead {
			return fmt.Errorf("emu: %s: %v is no live object of the channel's context: %w", op, obj, syscall.EINVAL)
		}
		kind, num = o.kind, o.id
	}
	keys := make([]subKey, 0, len(types))
	for _, t := range types {
		if eventKind(t) != kind {
			return fmt.Errorf("emu: %s: event %v is not raised by %s: %w", op, t, kindName(kind), syscall.EINVAL)
		}
		keys = append(keys, subKey{t: t, kind: kind, num: num})
	}
	// dispatch holds subMu, then a channel's mu: the same order here.
	n.subMu.Lock()
	defer n.subMu.Unlock()
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return fmt.Errorf("emu: %s: channel closed: %w", op, syscall.EBADF)
	}
	if n.subs == nil {
		n.subs = map[subKey]map[*eventChannel]uint64{}
	}
	for _, k := range keys {
		m := n.subs[k]
		if m == nil {
			m = map[*eventChannel]uint64{}
			n.subs[k] = m
		}
		m[ch] = cookie
	}
	ch.keys = append(ch.keys, keys...)
	return nil
}

func kindName(k objKind) string {
	switch k {
	case objNone:
		return "the device (unaffiliated)"
	case objCQ:
		return "a CQ"
	case objQP:
		return "a QP"
	case objRMP:
		return "an RMP"
	}
	return "no object"
}

// push queues an event and counts it on the eventfd.
func (ch *eventChannel) push(cookie uint64, ev mlx5.EQE) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return
	}
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	if _, err := syscall.Write(ch.fd, one[:]); err != nil {
		return // the count is at its maximum: the event is lost, as on an overflowing channel
	}
	ch.q = append(ch.q, mlx5.ChannelEvent{Cookie: cookie, EQE: ev})
}

func (ch *eventChannel) GetEvent() (mlx5.ChannelEvent, error) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return mlx5.ChannelEvent{}, fmt.Errorf("emu: devx_get_event: channel closed: %w", syscall.EBADF)
	}
	if len(ch.q) == 0 {
		return mlx5.ChannelEvent{}, syscall.EAGAIN
	}
	var b [8]byte
	if _, err := syscall.Read(ch.fd, b[:]); err != nil {
		return mlx5.ChannelEvent{}, fmt.Errorf("emu: devx_get_event: read eventfd: %w", err)
	}
	ev := ch.q[0]
	ch.q[0] = mlx5.ChannelEvent{}
	ch.q = ch.q[1:]
	if len(ch.q) == 0 {
		ch.q = nil
	}
	return ev, nil
}

func (ch *eventChannel) Close() error {
	ch.mu.Lock()
	if ch.closed {
		ch.mu.Unlock()
		return nil
	}
	ch.closed = true
	fd, keys := ch.fd, ch.keys
	ch.fd, ch.keys, ch.q = -1, nil, nil
	ch.mu.Unlock()
	n := ch.ctx.nic
	n.subMu.Lock()
	for _, k := range keys {
		if m := n.subs[k]; m != nil {
			delete(m, ch)
			if len(m) == 0 {
				delete(n.subs, k)
			}
		}
	}
	n.subMu.Unlock()
	err := syscall.Close(fd)
	n.mu.Lock()
	ch.ctx.live--
	n.mu.Unlock()
	untrack(ch)
	if err != nil {
		return fmt.Errorf("emu: devx_destroy_event_channel: close: %w", err)
	}
	return nil
}

func (ch *eventChannel) String() string { return fmt.Sprintf("emu event channel %d", ch.fd) }

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

// Faults a test can cause on a NIC, and the events they raise.

// SetPortState sets port 1 of the NIC down (up false) or active, as a
// cable pulled or plugged back does: QUERY_PORT reports DOWN or ACTIVE,
// and a change raises PORT_CHANGE (sub_type PORT_DOWN or PORT_ACTIVE).
// Setting the state the port already has raises nothing. The emulated
// wire keeps carrying frames: only the state and the event are modelled.
func (n *NIC) SetPortState(up bool) {
	if n.portDown.Swap(!up) == !up {
		return
	}
	s := mlx5.PortChangeDown
	if up {
		s = mlx5.PortChangeActive
	}
	n.raiseAsync(mlx5.PortChangeEQE(1, s))
}

// InjectFatal makes the NIC report a fatal error, as a ConnectX whose
// firmware failed does: INTERNAL_ERROR on the asynchronous EQ, and every
// QP moved to ERR (their work is flushed; a QP raises no event of its
// own). The emulated NIC keeps executing commands afterwards, so a test
// can tear its objects down; a ConnectX needs a reset.
func (n *NIC) InjectFatal() {
	n.raiseAsync(mlx5.InternalErrorEQE())
	for _, q := range *n.qpSnap.Load() {
		if q.state.Load() != stRST {
			q.state.Store(stERR)
			q.kick.Store(true)
		}
	}
	n.kick()
}

// SetPortState sets port 1 of the named emulated device (emu0, ...) down
// or active (NIC.SetPortState); the device must have been opened in this
// process.
func SetPortState(name string, up bool) error {
	n, err := openedNIC(name)
	if err != nil {
		return err
	}
	n.SetPortState(up)
	return nil
}

// InjectFatal makes the named emulated device report a fatal error
// (NIC.InjectFatal); the device must have been opened in this process.
func InjectFatal(name string) error {
	n, err := openedNIC(name)
	if err != nil {
		return err
	}
	n.InjectFatal()
	return nil
}

func openedNIC(name string) (*NIC, error) {
	namedMu.Lock()
	defer namedMu.Unlock()
	if n := namedNIC[name]; n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("emu: %s was not opened in this process: %w", name, syscall.ENODEV)
}
