package verbs

import (
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// end is one side of a connected pair on an emulated device.
type end struct {
	ctx *Context
	pd  *PD
	cq  *CQ
	qp  *QP
	buf []byte // mmap'd data buffer
	mr  *MR
	gid GID
	ch  *CompChannel // the CQ's completion channel (pairOpts.compChannel)
}

func (e *end) addr(off int) uint64 { return uint64(uintptr(unsafe.Pointer(&e.buf[off]))) }

type pairOpts struct {
	dev        [2]string
	qp         QPConfig // template (PD/CQs filled in)
	access     AccessFlags
	atomic     AtomicMode
	rr, rw     bool
	bufSize    int
	cqSize     uint32
	retry      uint8
	ackTimeout uint8
	// compChannel gives each end's CQ a completion channel (end.ch).
	compChannel bool
}

func defaultPairOpts() pairOpts {
	return pairOpts{
		dev:     [2]string{"emu0", "emu1"},
		qp:      QPConfig{SQWR: 64, RQWR: 64, SendMaxSGE: 2, RecvMaxSGE: 2, MaxInlineData: 60},
		access:  AccessLocalWrite | AccessRemoteWrite | AccessRemoteRead | AccessRemoteAtomic,
		atomic:  AtomicUpTo8Bytes,
		rr:      true,
		rw:      true,
		bufSize: 1 << 16,
		cqSize:  256,
		retry:   7, ackTimeout: 10,
	}
}

// openPD opens dev and allocates a PD on it; both are closed at cleanup
// (a test may close them first: a second Close is a no-op).
func openPD(t testing.TB, dev string) (*Context, *PD) {
	t.Helper()
	ctx, err := OpenDevice(dev)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, ctx.Close()) })
	pd, err := ctx.AllocPD()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, pd.Close()) })
	return ctx, pd
}

func newEnd(t testing.TB, dev string, o pairOpts) *end {
	t.Helper()
	e := &end{}
	var err error
	e.ctx, e.pd = openPD(t, dev)
	if o.compChannel {
		e.ch, err = e.ctx.NewCompChannel()
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, e.ch.Close()) })
	}
	e.cq, err = NewCQ(e.ctx, CQConfig{Size: o.cqSize, CompChannel: e.ch})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.cq.Close()) })
	cfg := o.qp
	cfg.PD, cfg.SendCQ, cfg.RecvCQ = e.pd, e.cq, e.cq
	e.qp, err = NewQP(e.ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.qp.Close()) })
	e.buf, err = syscall.Mmap(-1, 0, o.bufSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Munmap(e.buf) })
	e.mr, err = e.pd.RegMR(uintptr(unsafe.Pointer(&e.buf[0])), uint64(o.bufSize), o.access)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.mr.Close()) })
	g, err := e.ctx.QueryGID(1, 0)
	require.NoError(t, err)
	e.gid = g.GID
	return e
}

// connect moves a QP RST -> INIT -> RTR -> RTS towards the peer.
func connect(t testing.TB, e, peer *end, o pairOpts) {
	t.Helper()
	connectTo(t, e.qp, peer.qp.QPN(), peer.gid, o)
}

// connectTo connects qp to the QP numbered qpn on the device with GID gid
// (in this process or another) with ConnectRC and the pair's options.
func connectTo(t testing.TB, qp *QP, qpn uint32, gid GID, o pairOpts) {
	t.Helper()
	local, err := qp.LocalEndpoint(1, 0)
	require.NoError(t, err)
	local.PSN = 0x123
	require.NoError(t, qp.ConnectRC(local, Endpoint{QPN: qpn, GID: gid, PSN: 0x123}, &ConnectOptions{
		PathMTU: Ptr(MTU4096), AllowRemoteWrite: &o.rw, AllowRemoteRead: &o.rr, RemoteAtomic: &o.atomic,
		AckTimeout: &o.ackTimeout, RetryCnt: &o.retry, RNRRetry: Ptr[uint8](7), HopLimit: Ptr[uint8](64),
		MaxRDAtomic: 16, MaxDestRDAtomic: 16}))
}

func newPair(t testing.TB, o pairOpts) (*end, *end) {
	a := newEnd(t, o.dev[0], o)
	b := newEnd(t, o.dev[1], o)
	connect(t, a, b, o)
	connect(t, b, a, o)
	return a, b
}

func waitWC(t testing.TB, cq *CQ, n int) []WC {
	t.Helper()
	wcs := make([]WC, n)
	got, err := cq.PollWait(wcs, n, 5*time.Second)
	require.NoError(t, err, "got %d of %d: %+v", got, n, wcs[:got])
	return wcs[:got]
}
