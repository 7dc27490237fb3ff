package gpunetio

import (
	"bytes"
	"fmt"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/docasdk"
	"github.com/gdaki/gpunetio/verbs"
)

// writePair is a plain verbs QP on emu0 connected to one on emu1, both with
// host rings, so the host data path can write into memory registered on
// emu1.
type writePair struct {
	a, b *side
	cq   *verbs.CQ
	qp   *verbs.QP
}

func newWritePair(t *testing.T) *writePair {
	t.Helper()
	p := &writePair{a: newSide(t, "emu0"), b: newSide(t, "emu1")}
	mk := func(s *side) (*verbs.CQ, *verbs.QP) {
		cq, err := s.dev.NewCQ(verbs.CQConfig{Size: 16})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, cq.Close()) })
		qp, err := s.dev.NewQP(verbs.QPConfig{SendCQ: cq, RecvCQ: cq, SQWR: 8, RQWR: 8, SendMaxSGE: 1, RecvMaxSGE: 1})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, qp.Close()) })
		return cq, qp
	}
	var peer *verbs.QP
	p.cq, p.qp = mk(p.a)
	_, peer = mk(p.b)
	connectQP(t, p.qp, peer.QPN(), p.b.gid)
	connectQP(t, peer, p.qp.QPN(), p.a.gid)
	return p
}

// write RDMA-writes n bytes of a's buffer at src to region r at off.
func (p *writePair) write(t *testing.T, src, n int, r verbs.Region, off uint64) verbs.WC {
	t.Helper()
	require.NoError(t, p.qp.PostSend(verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWrite, Signaled: true,
		SGL:        []verbs.SGE{{Addr: p.a.addr(src), Length: uint32(n), LKey: p.a.mr.LKey()}},
		RemoteAddr: r.Addr + off, RKey: r.RKey}))
	wcs := make([]verbs.WC, 1)
	_, err := p.qp.SendCQ().PollWait(wcs, 1, 10*time.Second)
	require.NoError(t, err)
	return wcs[0]
}

// RegMR registers every memory type so that a peer's RDMA WRITE lands in it
// at the device address, on the fallback path (no dma-buf) and by address.
func TestMemRegMRWrite(t *testing.T) {
	for _, tc := range []struct {
		mt  MemType
		how MemRegType
	}{
		{MemGPU, MemRegDefault}, {MemGPU, MemRegCUDAPeermem},
		{MemGPUCPU, MemRegDefault}, {MemCPUGPU, MemRegDefault}, {MemCPUGPU, MemRegCUDAPeermem},
	} {
		t.Run(fmt.Sprintf("%v/%v", tc.mt, tc.how), func(t *testing.T) {
			g, _ := hostGPU(t)
			p := newWritePair(t)
			m, err := g.MemAlloc(8192, 0, tc.mt)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, m.Free()) })
			mr, err := m.RegMR(p.b.pd, verbs.AccessLocalWrite|verbs.AccessRemoteWrite, tc.how)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, mr.Close()) })
			r := mr.Region()
			assert.Equal(t, uint64(m.Dev), r.Addr, "the region is named by the device address")
			assert.Equal(t, uint64(8192), r.Length)

			copy(p.a.buf[100:], "lands in GPU memory")
			wc := p.write(t, 100, 19, r, 4000)
			require.NoError(t, wc.Err())
			got := hostSlice(uintptr(m.Dev), m.Size)
			assert.Equal(t, "lands in GPU memory", string(got[4000:4019]))
			if tc.mt == MemCPUGPU {
				hb, err := m.HostBytes()
				require.NoError(t, err)
				assert.True(t, bytes.Equal(got, hb))
			}

			// Without remote write the peer's write fails at the responder.
			ro, err := m.RegMR(p.b.pd, verbs.AccessLocalWrite, tc.how)
			require.NoError(t, err)
			defer func() { require.NoError(t, ro.Close()) }()
			wc = p.write(t, 100, 8, ro.Region(), 0)
			assert.ErrorIs(t, wc.Err(), verbs.WCRemAccessErr)
		})
	}
}

// dmabufBackend is the host backend with a dma-buf export: the read end of
// a pipe stands in for the dma-buf (the emulated NIC reaches the memory by
// address either way). It records the ranges asked for and keeps the write
// end of each pipe, through which a test sees whether the fd was closed.
type dmabufBackend struct {
	*hostBackend
	fail    error
	ranges  [][2]uintptr
	writers []int
}

func (b *dmabufBackend) dmabufSupported() bool { return true }

func (b *dmabufBackend) dmabufFD(p, size uintptr) (int, error) {
	b.ranges = append(b.ranges, [2]uintptr{p, size})
	if b.fail != nil {
		return -1, b.fail
	}
	var p2 [2]int
	if err := syscall.Pipe2(p2[:], syscall.O_CLOEXEC); err != nil {
		return -1, err
	}
	b.writers = append(b.writers, p2[1])
	return p2[0], nil
}

// readerClosed reports whether the read end of the pipe whose write end is w
// is closed: a write then fails with EPIPE.
func readerClosed(w int) bool {
	_, err := syscall.Write(w, []byte{0})
	return err == syscall.EPIPE
}

func dmabufGPU(t *testing.T) (*GPU, *dmabufBackend) {
	t.Helper()
	b := &dmabufBackend{hostBackend: newHostBackend()}
	g := newGPU(b, docasdk.GPU{})
	t.Cleanup(func() {
		require.Equal(t, 0, g.Live(), "GPU allocations leaked")
		require.NoError(t, g.Close())
		for _, w := range b.writers {
			syscall.Close(w)
		}
	})
	return g, b
}

// The dma-buf path asks for the page-rounded range at Dev, registers
// through it and closes the fd; the memory works as a target.
func TestMemRegMRDmabuf(t *testing.T) {
	g, b := dmabufGPU(t)
	p := newWritePair(t)
	m, err := g.MemAlloc(5000, 0, MemGPU)
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Free()) }()
	for _, how := range []MemRegType{MemRegDefault, MemRegCUDADmabuf} {
		mr, err := m.RegMR(p.b.pd, verbs.AccessLocalWrite|verbs.AccessRemoteWrite, how)
		require.NoError(t, err, "%v", how)
		require.NotEmpty(t, b.writers)
		assert.Equal(t, [2]uintptr{uintptr(m.Dev), alignUp(5000, hostPage)}, b.ranges[len(b.ranges)-1])
		assert.True(t, readerClosed(b.writers[len(b.writers)-1]), "the dma-buf fd is closed after the registration")
		copy(p.a.buf, "via dma-buf")
		require.NoError(t, p.write(t, 0, 11, mr.Region(), 4900).Err())
		assert.Equal(t, "via dma-buf", string(hostSlice(uintptr(m.Dev)+4900, 11)))
		require.NoError(t, mr.Close())
	}

	// Peermem never asks for a dma-buf.
	n := len(b.ranges)
	mr, err := m.RegMR(p.b.pd, verbs.AccessLocalWrite, MemRegCUDAPeermem)
	require.NoError(t, err)
	require.NoError(t, mr.Close())
	assert.Len(t, b.ranges, n)

	// A failing export: DEFAULT falls back to the address, DMABUF fails with
	// the cause.
	b.fail = fmt.Errorf("export refused: %w", syscall.EPERM)
	mr, err = m.RegMR(p.b.pd, verbs.AccessLocalWrite, MemRegDefault)
	require.NoError(t, err)
	require.NoError(t, mr.Close())
	_, err = m.RegMR(p.b.pd, verbs.AccessLocalWrite, MemRegCUDADmabuf)
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.EPERM)
	assert.ErrorContains(t, err, "Mem.RegMR")
	assert.ErrorContains(t, err, "through a dma-buf")
}

func TestMemRegMRErrors(t *testing.T) {
	g, _ := hostGPU(t)
	s := newSide(t, "emu0")
	m, err := g.MemAlloc(4096, 0, MemGPU)
	require.NoError(t, err)
	h, err := g.MemAlloc(4096, 0, MemCPUGPU)
	require.NoError(t, err)
	defer func() { require.NoError(t, h.Free()) }()
	check := func(err error, code Code, msg string) {
		t.Helper()
		require.Error(t, err)
		assert.ErrorIs(t, err, code)
		assert.ErrorContains(t, err, "Mem.RegMR")
		assert.ErrorContains(t, err, msg)
	}
	var nilMem *Mem
	_, err = nilMem.RegMR(s.pd, verbs.AccessLocalWrite, MemRegDefault)
	check(err, ErrInvalidValue, "nil or zero Mem")
	_, err = (&Mem{}).RegMR(s.pd, verbs.AccessLocalWrite, MemRegDefault)
	check(err, ErrInvalidValue, "nil or zero Mem")
	_, err = m.RegMR(nil, verbs.AccessLocalWrite, MemRegDefault)
	check(err, ErrInvalidValue, "nil PD")
	_, err = m.RegMR(s.pd, verbs.AccessLocalWrite, MemRegType(7))
	check(err, ErrInvalidValue, "unknown memory registration type")
	_, err = h.RegMR(s.pd, verbs.AccessLocalWrite, MemRegCUDADmabuf)
	check(err, ErrInvalidValue, "no dma-buf")
	_, err = m.RegMR(s.pd, verbs.AccessLocalWrite, MemRegCUDADmabuf)
	check(err, ErrNotSupported, "through a dma-buf")
	assert.ErrorContains(t, err, "doca_gpu_get_dmabuf_fd", "the export's error is kept")

	// A verbs refusal keeps its code and cause.
	bad := verbs.AccessFlags(1 << 30)
	_, err = m.RegMR(s.pd, bad, MemRegDefault)
	require.Error(t, err)
	assert.ErrorContains(t, err, "Mem.RegMR")
	var ve *verbs.Error
	assert.ErrorAs(t, err, &ve)

	require.NoError(t, m.Free())
	_, err = m.RegMR(s.pd, verbs.AccessLocalWrite, MemRegDefault)
	check(err, ErrBadState, "is freed")
}

// Memory that does not start on a host page has no dma-buf: DMABUF is
// refused without asking the GPU, DEFAULT registers it by address.
func TestMemRegMRUnaligned(t *testing.T) {
	g, b := dmabufGPU(t)
	s := newSide(t, "emu0")
	m, err := g.MemAlloc(8192, 0, MemGPU)
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Free()) }()
	inner := &Mem{Dev: m.Dev + 64, Size: 100, Type: MemGPU, g: g} // as a sub-range of m
	_, err = inner.RegMR(s.pd, verbs.AccessLocalWrite, MemRegCUDADmabuf)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorContains(t, err, "not aligned to the")
	mr, err := inner.RegMR(s.pd, verbs.AccessLocalWrite, MemRegDefault)
	require.NoError(t, err)
	assert.Equal(t, uint64(100), mr.Len())
	assert.Equal(t, uint64(m.Dev+64), mr.IOVA())
	require.NoError(t, mr.Close())
	assert.Empty(t, b.ranges, "no dma-buf was asked for")
}

func TestDeviceKey(t *testing.T) {
	for _, tc := range []struct{ in, want uint32 }{{0x12345678, 0x78563412}, {0, 0}, {0xff, 0xff000000}, {0x00010203, 0x03020100}} {
		assert.Equal(t, tc.want, DeviceKey(tc.in))
		assert.Equal(t, tc.in, DeviceKey(DeviceKey(tc.in)))
	}
	// In memory the key reads big-endian, as the WQE's rkey/lkey fields do.
	k := DeviceKey(0xa1b2c3d4)
	b := (*[4]byte)(unsafe.Pointer(&k))
	assert.Equal(t, [4]byte{0xa1, 0xb2, 0xc3, 0xd4}, *b)
}
