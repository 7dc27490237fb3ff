package gpunetio

import (
	"encoding/binary"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mmio"
	"github.com/gdaki/gpunetio/verbs"
)

// hostGPU returns a host-memory GPU that must be leak-free at cleanup.
func hostGPU(t testing.TB) (*GPU, *hostBackend) {
	t.Helper()
	g, b := newHostGPU()
	t.Cleanup(func() {
		require.Equal(t, 0, g.Live(), "GPU allocations leaked")
		require.NoError(t, g.Close())
		a, r := b.live()
		require.Zero(t, a+r, "backend allocations/registrations leaked")
	})
	return g, b
}

// proxyHL makes a CPU-proxy QPHL of sqWQEs WQEs on a new emu0 side with a
// host-memory GPU; it is closed at cleanup (a test may close it first).
func proxyHL(t testing.TB, sqWQEs uint16) (*QPHL, *GPU, *side) {
	t.Helper()
	g, _ := hostGPU(t)
	s := newSide(t, "emu0")
	q, err := NewQPHL(QPHLConfig{GPU: g, PD: s.pd, SQWQEs: sqWQEs, NICHandler: NICHandlerCPUProxy})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, q.Close()) })
	return q, g, s
}

// side is one emulated device with a PD, its device object (DOCA 3.0) and
// a registered data buffer.
type side struct {
	ctx *verbs.Context
	pd  *verbs.PD
	dev *verbs.Dev
	buf []byte
	mr  *verbs.MR
	gid verbs.GID
}

func (s *side) addr(off int) uint64 { return uint64(uintptr(unsafe.Pointer(&s.buf[off]))) }

func newSide(t testing.TB, dev string) *side {
	t.Helper()
	s := &side{}
	var err error
	s.ctx, err = verbs.OpenDevice(dev)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.ctx.Close()) })
	s.pd, err = s.ctx.AllocPD()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.pd.Close()) })
	s.dev, err = verbs.OpenDev(s.pd)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.dev.Close()) })
	s.buf, err = syscall.Mmap(-1, 0, 1<<16, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Munmap(s.buf) })
	s.mr, err = s.pd.RegMR(uintptr(unsafe.Pointer(&s.buf[0])), 1<<16, verbs.AccessLocalWrite|verbs.AccessRemoteWrite|verbs.AccessRemoteRead)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.mr.Close()) })
	g, err := s.ctx.QueryGID(1, 0)
	require.NoError(t, err)
	s.gid = g.GID
	return s
}

// connectQP connects qp to the peer QPN with verbs.QP.ConnectRC: no
// remote atomics, one outstanding READ each way, ack timeout 10, RNR retry 7.
func connectQP(t testing.TB, qp *verbs.QP, peerQPN uint32, peerGID verbs.GID) {
	t.Helper()
	local, err := qp.LocalEndpoint(1, 0)
	require.NoError(t, err)
	local.PSN = 0x10
	require.NoError(t, qp.ConnectRC(local, verbs.Endpoint{QPN: peerQPN, GID: peerGID, PSN: 0x10}, &verbs.ConnectOptions{
		PathMTU: verbs.Ptr(verbs.MTU4096), RemoteAtomic: verbs.Ptr(verbs.AtomicNone), AckTimeout: verbs.Ptr[uint8](10),
		RNRRetry: verbs.Ptr[uint8](7), HopLimit: verbs.Ptr[uint8](64), MaxRDAtomic: 1, MaxDestRDAtomic: 1}))
}

// hlPair is a high-level QP on emu0 connected to a plain receiver QP on emu1.
type hlPair struct {
	g      *GPU
	a, b   *side
	hl     *QPHL
	peerCQ *verbs.CQ
	peerQP *verbs.QP
}

// hostPair is newHLPair on a new host-memory GPU, with the pair's GPU QP.
func hostPair(t testing.TB, cfg QPHLConfig) (*hlPair, *QP) {
	t.Helper()
	g, _ := hostGPU(t)
	p := newHLPair(t, g, cfg)
	return p, p.hl.GPUQP()
}

func newHLPair(t testing.TB, g *GPU, cfg QPHLConfig) *hlPair {
	t.Helper()
	p := &hlPair{g: g, a: newSide(t, "emu0"), b: newSide(t, "emu1")}
	cfg.GPU, cfg.PD = g, p.a.pd
	var err error
	p.hl, err = NewQPHL(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.hl.Close()) })
	p.peerCQ, err = p.b.dev.NewCQ(verbs.CQConfig{Size: 64})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.peerCQ.Close()) })
	p.peerQP, err = p.b.dev.NewQP(verbs.QPConfig{SendCQ: p.peerCQ, RecvCQ: p.peerCQ, SQWR: 16, RQWR: 16, SendMaxSGE: 1, RecvMaxSGE: 1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.peerQP.Close()) })
	connectQP(t, p.hl.QP(), p.peerQP.QPN(), p.b.gid)
	connectQP(t, p.peerQP, p.hl.QP().QPN(), p.a.gid)
	return p
}

// postWrite writes, as a kernel would, one signaled RDMA WRITE WQE at SQ
// index idx of the high-level QP (ring memory is host memory with the host
// GPU). It does not ring anything.
func (p *hlPair) postWrite(t testing.TB, idx uint16, src, dst, n int, rkey uint32) {
	t.Helper()
	ring := hostSlice(uintptr(p.hl.SQRing().Dev), uintptr(p.hl.SQWQEs())*64)
	w := mlx5.NewRDMAWrite(mlx5.WQEHead{Index: idx, QPN: p.hl.QP().QPN(), Flags: mlx5.CtrlCQUpdate},
		mlx5.RAddrSeg{Addr: p.b.addr(dst), RKey: rkey},
		mlx5.DataSeg{ByteCount: uint32(n), LKey: p.a.mr.LKey(), Addr: p.a.addr(src)})
	nbb, err := w.Encode(ring)
	require.NoError(t, err)
	require.Equal(t, 1, nbb)
	mmio.WriteBarrier()
}

// storeMailbox stores pi to the proxy mailbox the way a kernel does.
func storeMailbox(q *QP, pi uint64) {
	mmio.Store64(hostPtr(q.ProxyMailbox()), pi)
}

// waitCQE waits for the CQE of WQE index i (first pass) in the high-level
// QP's CQ ring, in host memory, and returns it.
func (p *hlPair) waitCQE(t testing.TB, i uint32, progress func()) mlx5.CQE {
	t.Helper()
	ring := hostSlice(uintptr(p.hl.CQRing().Dev), uintptr(p.hl.SQWQEs())*64)
	return p.pollCQE(t, i, progress, func(off uintptr) []byte { return ring[off : off+64] })
}

// pollCQE waits up to 10 s for the CQE of WQE index i (first pass) in the
// high-level QP's CQ ring: it runs progress (when set), then reads the
// 64-byte slot at offset off of the ring through slot, until the CQE is
// software-owned.
func (p *hlPair) pollCQE(t testing.TB, i uint32, progress func(), slot func(off uintptr) []byte) mlx5.CQE {
	t.Helper()
	n := p.hl.SQWQEs()
	log := uint(0)
	for 1<<log < n {
		log++
	}
	off := uintptr(i&(n-1)) * 64
	deadline := time.Now().Add(10 * time.Second)
	for {
		if progress != nil {
			progress()
		}
		b := slot(off)
		if mlx5.CQEOwned(b[63], i, log) {
			mmio.ReadBarrier()
			c, err := mlx5.DecodeCQE(b)
			require.NoError(t, err)
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("no CQE for WQE %d (op_own %#x)", i, b[63])
		}
		time.Sleep(20 * time.Microsecond)
	}
}

func be32At(b []byte) uint32 { return binary.BigEndian.Uint32(b) }
