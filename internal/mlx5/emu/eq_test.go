package emu

import (
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// The emulated kernel makes its EQs with CREATE_EQ at NIC creation: one
// per completion vector, at the EQNs QueryEQN returns, and the
// asynchronous one; firmware checks CREATE_EQ and DESTROY_EQ as it checks
// every command, and DevX cannot create an EQ.
func TestKernelEQs(t *testing.T) {
	n := newNIC(t, Config{Name: "emuEQ"})
	dev, err := n.Open()
	require.NoError(t, err)
	defer dev.Close()
	for v := uint32(0); v < numCompVectors; v++ {
		eqn, err := dev.QueryEQN(v)
		require.NoError(t, err)
		q := n.eqByNum(eqn)
		require.NotNil(t, q, "vector %d", v)
		assert.Equal(t, mlx5.EventMask(mlx5.EventComp), q.mask)
		assert.Equal(t, uint8(eqLogSize), q.log)
	}
	a := n.eqByNum(asyncEQN)
	require.NotNil(t, a)
	assert.Equal(t, mlx5.EventMask(asyncEvents...), a.mask)

	ring, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer syscall.Munmap(ring)
	pa := n.givePage(ring)
	defer func() { n.pagesMu.Lock(); delete(n.pages, pa); n.pagesMu.Unlock() }()
	for _, tc := range []struct {
		name string
		in   mlx5.CreateEQIn
		syn  uint32
	}{
		{"status set", mlx5.CreateEQIn{EQC: mlx5.EQContext{Status: 1, LogEQSize: 4}, PAS: pa}, SynReserved},
		{"log_eq_size too big", mlx5.CreateEQIn{EQC: mlx5.EQContext{LogEQSize: eqMaxLog + 1}, PAS: pa}, SynEQSize},
		{"ring larger than the page", mlx5.CreateEQIn{EQC: mlx5.EQContext{LogEQSize: 7}, PAS: pa}, SynEQPAS},
		{"PAS of no page", mlx5.CreateEQIn{EQC: mlx5.EQContext{LogEQSize: 4}, PAS: 0x1000}, SynEQPAS},
		{"no free EQ", mlx5.CreateEQIn{EQC: mlx5.EQContext{LogEQSize: 4}, PAS: pa}, SynLimit},
	} {
		in, err := tc.in.Marshal()
		require.NoError(t, err)
		err = n.kernelCmd(in, make([]byte, mlx5.CmdShortLen))
		ce, ok := mlx5.AsCmdError(err)
		require.True(t, ok, "%s: %v", tc.name, err)
		assert.Equal(t, tc.syn, ce.Syndrome, tc.name)
	}
	in, _ := mlx5.DestroyEQIn(0x7f).Marshal()
	ce, ok := mlx5.AsCmdError(n.kernelCmd(in, make([]byte, mlx5.CmdShortLen)))
	require.True(t, ok)
	assert.Equal(t, SynNoEQ, ce.Syndrome)

	in, _ = mlx5.CreateEQIn{EQC: mlx5.EQContext{LogEQSize: 4}, PAS: pa}.Marshal()
	_, err = dev.CreateObj(in, make([]byte, 16))
	assert.ErrorIs(t, err, syscall.EINVAL, "DevX does not create EQs here")
}

// eventChannel opens an event channel on e's device.
func openChannel(t *testing.T, dev mlx5.Device) mlx5.EventChannel {
	t.Helper()
	ch, err := dev.CreateEventChannel()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, ch.Close()) })
	return ch
}

// nextEvent waits for the channel's next event.
func nextEvent(t *testing.T, ch mlx5.EventChannel) mlx5.ChannelEvent {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ev, err := ch.GetEvent()
		if err == nil {
			return ev
		}
		require.ErrorIs(t, err, syscall.EAGAIN)
		require.True(t, time.Now().Before(deadline), "no event")
		time.Sleep(50 * time.Microsecond)
	}
}

func noChannelEvent(t *testing.T, ch mlx5.EventChannel) {
	t.Helper()
	ev, err := ch.GetEvent()
	require.ErrorIs(t, err, syscall.EAGAIN, "unexpected %+v", ev)
}

// arm rings e's CQ arm doorbell and waits until the engine took it.
func (e *endpoint) arm(sn uint8, cmd mlx5.CQArmCmd) {
	e.t.Helper()
	w := mlx5.CQArmWord(sn, cmd, e.ci)
	mlx5.PutCQDBRArm(e.cqDBR, w)
	p := ptr64(e.uar.BaseAddr() + mlx5.UAROffsetCQArm)
	atomic.StoreUint64(p, mlx5.CQArmDoorbell(w, e.cqn).Uint64())
	deadline := time.Now().Add(10 * time.Second)
	for atomic.LoadUint64(p) != 0 {
		require.True(e.t, time.Now().Before(deadline), "the arm doorbell was never taken")
		time.Sleep(50 * time.Microsecond)
	}
}

func (e *endpoint) armState() mlx5.CQArmState {
	in, _ := mlx5.QueryCQIn(e.cqn).Marshal()
	out := make([]byte, mlx5.QueryCQOutLen)
	must(e.t, e.cq.Query(in, out))
	o, err := mlx5.UnmarshalQueryCQOut(out)
	must(e.t, err)
	return mlx5.CQArmState(o.CQC.ST)
}

// One COMP event per arm: none without an arm, one for an arm however many
// completions follow, none for an arm repeating the sequence number of the
// arm that fired, one at once for an arm behind completions not consumed.
// QUERY_CQ reports the arm state. The endpoint's CQEs are written by its
// NIC's engine in order, and a CQE's event is on the channel before the
// next CQE is written.
func TestCQEventPerArm(t *testing.T) {
	a := newNIC(t, Config{Name: "emuArmA"})
	b := newNIC(t, Config{Name: "emuArmB"})
	x, y := pair(t, a, b, qpOpts{}, qpOpts{})
	ch := openChannel(t, x.dev)
	require.NoError(t, ch.Subscribe(x.cq, []mlx5.EventType{mlx5.EventComp}, 77))
	write := func() {
		x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 8)))
		x.mustPoll()
	}
	write()
	write()
	noChannelEvent(t, ch)
	assert.Equal(t, mlx5.CQNotArmed, x.armState())

	x.arm(0, mlx5.CQArmNext)
	assert.Equal(t, mlx5.CQArmed, x.armState())
	write()
	write()
	ev := nextEvent(t, ch)
	assert.Equal(t, uint64(77), ev.Cookie)
	assert.Equal(t, mlx5.EventComp, ev.EQE.Type)
	assert.Equal(t, x.cqn, ev.EQE.CQN())
	noChannelEvent(t, ch)
	assert.Equal(t, mlx5.CQFired, x.armState())

	x.arm(0, mlx5.CQArmNext) // the sn of the arm that fired: a repeat
	assert.Equal(t, mlx5.CQFired, x.armState())
	write()
	write()
	noChannelEvent(t, ch)

	x.arm(1, mlx5.CQArmNext)
	write()
	write()
	nextEvent(t, ch)
	noChannelEvent(t, ch)

	// Behind a completion written and not consumed: fires at once.
	x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 8)))
	deadline := time.Now().Add(10 * time.Second)
	for x.nic.cqByNum(x.cqn).produced() == x.ci {
		require.True(t, time.Now().Before(deadline))
		time.Sleep(50 * time.Microsecond)
	}
	x.arm(2, mlx5.CQArmNext)
	nextEvent(t, ch)
	x.mustPoll()

	// Solicited only: a requester completion does not fire it.
	x.arm(3, mlx5.CQArmSolicited)
	assert.Equal(t, mlx5.CQSolicitedArmed, x.armState())
	write()
	write()
	noChannelEvent(t, ch)
}

// The kernel checks a subscription: a live object of the channel's
// context, and event types that object raises (unaffiliated ones without
// an object). Destroying an object ends its subscriptions; a closed
// channel reads EBADF; the context cannot close under an open channel.
func TestEventChannelSubscribe(t *testing.T) {
	a := newNIC(t, Config{Name: "emuSubA"})
	b := newNIC(t, Config{Name: "emuSubB"})
	x, _ := pair(t, a, b, qpOpts{}, qpOpts{})
	ch := openChannel(t, x.dev)
	for _, tc := range []struct {
		name  string
		obj   mlx5.Obj
		types []mlx5.EventType
	}{
		{"COMP without an object", nil, []mlx5.EventType{mlx5.EventComp}},
		{"a QP event on a CQ", x.cq, []mlx5.EventType{mlx5.EventWQCatasError}},
		{"COMP on a QP", x.qp, []mlx5.EventType{mlx5.EventComp}},
		{"PORT_CHANGE on a QP", x.qp, []mlx5.EventType{mlx5.EventPortChange}},
		{"no types", x.qp, nil},
	} {
		assert.ErrorIs(t, ch.Subscribe(tc.obj, tc.types, 1), syscall.EINVAL, tc.name)
	}
	other, err := a.Open()
	require.NoError(t, err)
	ch2 := openChannel(t, other)
	assert.ErrorIs(t, ch2.Subscribe(x.cq, []mlx5.EventType{mlx5.EventComp}, 1), syscall.EINVAL, "another context's object")
	assert.ErrorIs(t, other.Close(), syscall.EBUSY, "its channel is open")
	require.NoError(t, ch2.Close())
	require.NoError(t, ch2.Close(), "a second Close")
	_, err = ch2.GetEvent()
	assert.ErrorIs(t, err, syscall.EBADF)
	assert.Equal(t, -1, ch2.FD())
	require.NoError(t, other.Close())

	require.NoError(t, ch.Subscribe(x.qp, []mlx5.EventType{mlx5.EventWQCatasError}, 5))
	require.NoError(t, x.qp.Destroy())
	a.subMu.RLock()
	for k := range a.subs {
		assert.False(t, k.kind == objQP && k.num == x.qpn, "the destroyed QP's subscription is gone")
	}
	a.subMu.RUnlock()
	x.qp = noopObj{}
}

// noopObj stands in for an object a test destroyed itself.
type noopObj struct{ mlx5.Obj }

func (noopObj) Destroy() error { return nil }

// More events than an EQ holds go round its ring: the owner bit flips
// each pass, and every event reaches the channel in order.
func TestEQWraps(t *testing.T) {
	n := newNIC(t, Config{Name: "emuWrap"})
	dev, err := n.Open()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, dev.Close()) }) // after the channel's
	ch := openChannel(t, dev)
	require.NoError(t, ch.Subscribe(nil, []mlx5.EventType{mlx5.EventPortChange}, 9))
	const events = 3<<eqLogSize + 5
	for i := 0; i < events; i++ {
		n.SetPortState(i%2 == 1)
		n.SetPortState(i%2 == 1) // no change, no event
	}
	for i := 0; i < events; i++ {
		ev, err := ch.GetEvent()
		require.NoError(t, err, "event %d", i)
		want := mlx5.PortChangeDown
		if i%2 == 1 {
			want = mlx5.PortChangeActive
		}
		require.Equal(t, uint8(want), ev.EQE.SubType, "event %d", i)
		require.Equal(t, uint8(1), ev.EQE.Port())
	}
	noChannelEvent(t, ch)
	q := n.eqByNum(asyncEQN)
	q.mu.Lock()
	assert.Equal(t, uint32(events), q.pc)
	assert.Equal(t, q.pc, q.cc, "the driver consumed every EQE")
	assert.Zero(t, q.lost)
	last := q.ring[((events-1)&(1<<eqLogSize-1))*mlx5.EQESize+mlx5.EQESize-1]
	q.mu.Unlock()
	assert.Equal(t, mlx5.EQEOwnerBit(events-1, eqLogSize), last&1, "the owner bit of the fourth pass")
	p, err := dev.QueryPort(1)
	require.NoError(t, err)
	assert.Equal(t, mlx5.PortDown, p.State, "the last change: down")
	n.SetPortState(true)
	assert.Equal(t, mlx5.EventPortChange, nextEvent(t, ch).EQE.Type)
	assert.True(t, errors.Is(SetPortState("emuNone", true), syscall.ENODEV))
}

// A CQ whose ring is in device memory raises its COMP event after the
// flush that writes the CQE: once the event is on the channel, the
// completion is there to poll.
func TestCQEventAfterDeviceFlush(t *testing.T) {
	g := useGPU(t, newFakeGPU())
	a := newNIC(t, Config{Name: "emuArmGA"})
	b := newNIC(t, Config{Name: "emuArmGB"})
	x, y := pair(t, a, b, qpOpts{gpu: g}, qpOpts{})
	ch := openChannel(t, x.dev)
	require.NoError(t, ch.Subscribe(x.cq, []mlx5.EventType{mlx5.EventComp}, 1))
	for i := uint8(0); i < 4; i++ {
		x.arm(i, mlx5.CQArmNext)
		x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 8)))
		nextEvent(t, ch)
		_, ok := x.tryPoll()
		require.True(t, ok, "round %d: the event came before its completion", i)
	}
	noChannelEvent(t, ch)
}
