package integration

import (
	"bytes"
	"fmt"
	"math/bits"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/internal/devhost"
	"github.com/gdaki/gpunetio/verbs"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if r := verbs.LeakReport(); r != "" {
			fmt.Fprintln(os.Stderr, r)
			code = 1
		}
	}
	os.Exit(code)
}

// side is one emulated NIC with a high-level QP and a data buffer.
type side struct {
	ctx *verbs.Context
	pd  *verbs.PD
	hl  *gpunetio.QPHL
	buf []byte
	mr  *verbs.MR
	gid verbs.GID
}

func be32(v uint32) uint32 { return bits.ReverseBytes32(v) } // keys are handed to device code big-endian

func (s *side) addr(off int) devhost.Addr {
	return devhost.Addr{Addr: uint64(uintptr(unsafe.Pointer(&s.buf[off]))), Key: be32(s.mr.RKey())}
}

func (s *side) laddr(off int) devhost.Addr {
	return devhost.Addr{Addr: uint64(uintptr(unsafe.Pointer(&s.buf[off]))), Key: be32(s.mr.LKey())}
}

func newSide(t *testing.T, g *gpunetio.GPU, dev string, h gpunetio.NICHandler, ext gpunetio.SendDBRModeExt) *side {
	t.Helper()
	s := &side{}
	var err error
	s.ctx, err = verbs.OpenDevice(dev)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.ctx.Close()) })
	s.pd, err = s.ctx.AllocPD()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.pd.Close()) })
	s.hl, err = gpunetio.NewQPHL(gpunetio.QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 256, NICHandler: h, SendDBRModeExt: ext})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.hl.Close()) })
	s.buf, err = syscall.Mmap(-1, 0, 1<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Munmap(s.buf) })
	s.mr, err = s.pd.RegMR(uintptr(unsafe.Pointer(&s.buf[0])), uint64(len(s.buf)),
		verbs.AccessLocalWrite|verbs.AccessRemoteWrite|verbs.AccessRemoteRead|verbs.AccessRemoteAtomic)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.mr.Close()) })
	e, err := s.ctx.QueryGID(1, 0)
	require.NoError(t, err)
	s.gid = e.GID
	return s
}

func connect(t *testing.T, s, peer *side) {
	t.Helper()
	qp := s.hl.QP()
	require.NoError(t, qp.Modify(&verbs.QPAttr{NextState: verbs.QPStateINIT, PortNum: 1, AllowRemoteWrite: true, AllowRemoteRead: true, RemoteAtomic: verbs.AtomicUpTo8Bytes},
		verbs.QPAttrNextState|verbs.QPAttrPKeyIndex|verbs.QPAttrPortNum|verbs.QPAttrAllowRemoteWrite|verbs.QPAttrAllowRemoteRead))
	require.NoError(t, qp.Modify(&verbs.QPAttr{NextState: verbs.QPStateRTR, PathMTU: verbs.MTU4096, DestQPNum: peer.hl.QP().QPN(),
		AH: &verbs.AHAttr{GID: peer.gid, AddrType: verbs.AddrTypeIPv4, HopLimit: 255}, MinRNRTimer: 1, MaxDestRDAtomic: 16},
		verbs.QPAttrNextState|verbs.QPAttrPathMTU|verbs.QPAttrRQPSN|verbs.QPAttrDestQPNum|verbs.QPAttrAHAttr|verbs.QPAttrMinRNRTimer|verbs.QPAttrMaxDestRDAtomic))
	require.NoError(t, qp.Modify(&verbs.QPAttr{NextState: verbs.QPStateRTS, AckTimeout: 14, RetryCnt: 7, RNRRetry: 1, MaxRDAtomic: 16},
		verbs.QPAttrNextState|verbs.QPAttrSQPSN|verbs.QPAttrAckTimeout|verbs.QPAttrRetryCnt|verbs.QPAttrRNRRetry|verbs.QPAttrMaxQPRDAtomic))
}

func devQP(t *testing.T, s *side) *devhost.QP {
	t.Helper()
	p, err := s.hl.GPUQP().DeviceQP()
	require.NoError(t, err)
	q, err := devhost.FromPointer(*(*unsafe.Pointer)(unsafe.Pointer(&p))) // host memory: never moves
	require.NoError(t, err)
	return q
}

var handlers = []struct {
	name string
	h    gpunetio.NICHandler
	ext  gpunetio.SendDBRModeExt
	dev  devhost.Handler
}{
	{"GPU_SM_DB", gpunetio.NICHandlerGPUSMDB, gpunetio.SendDBRValid, devhost.HandlerGPUSMDB},
	{"CPU_PROXY", gpunetio.NICHandlerCPUProxy, gpunetio.SendDBRValid, devhost.HandlerCPUProxy},
	{"AUTO", gpunetio.NICHandlerAuto, gpunetio.SendDBRValid, devhost.HandlerAuto},
}

// TestHeadersPutOnEmulator drives the device headers' thread-scope put, p,
// get and put_signal (compiled as host C++) from many CPU threads sharing one
// exported QP (GPU sharing mode) on emu0, in every NIC handler the emulated
// ConnectX-7 supports, and checks every byte at emu1.
func TestHeadersPutOnEmulator(t *testing.T) {
	for _, hc := range handlers {
		t.Run(hc.name, func(t *testing.T) {
			g := gpunetio.NewHostGPU()
			t.Cleanup(func() { require.NoError(t, g.Close()) }) // first registered: runs last
			a := newSide(t, g, "emu0", hc.h, hc.ext)
			b := newSide(t, g, "emu1", hc.h, hc.ext)
			connect(t, a, b)
			connect(t, b, a)
			if a.hl.GPUQP().CPUAssisted() {
				svc, err := gpunetio.NewService()
				require.NoError(t, err)
				require.NoError(t, svc.Monitor(a.hl.GPUQP()))
				t.Cleanup(func() { require.NoError(t, svc.Close()) })
			}
			q := devQP(t, a)
			mode := devhost.Mode{Sharing: devhost.SharingGPU, Handler: hc.dev}
			const threads, perThread, size = 8, 64, 96
			for i := 0; i < threads*perThread*size; i++ {
				a.buf[i] = byte(i*31 + 7)
			}
			var wg sync.WaitGroup
			errs := make(chan error, threads)
			for th := 0; th < threads; th++ {
				wg.Add(1)
				go func(th int) {
					defer wg.Done()
					for k := 0; k < perThread; k++ {
						off := (th*perThread + k) * size
						if _, err := q.Put(b.addr(off), a.laddr(off), size, mode); err != nil {
							errs <- err
							return
						}
					}
				}(th)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.NoError(t, q.WaitAll(devhost.SharingGPU, 10*time.Second))
			n := threads * perThread * size
			assert.True(t, bytes.Equal(a.buf[:n], b.buf[:n]), "every byte written by put arrives")

			// p (inline 8-byte value), put_signal (data then fetch-add on a counter), get.
			tk, err := q.P(b.addr(200000), 0x1122334455667788, 8, mode)
			require.NoError(t, err)
			require.NoError(t, q.Wait(tk, devhost.SharingGPU, 5*time.Second))
			assert.Equal(t, []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}, b.buf[200000:200008])

			copy(a.buf[300000:], "signalled payload")
			tk, err = q.PutSignal(b.addr(300000), a.laddr(300000), 17, b.addr(400000), a.laddr(400008), 5, mode)
			require.NoError(t, err)
			require.NoError(t, q.Wait(tk, devhost.SharingGPU, 5*time.Second))
			assert.Equal(t, "signalled payload", string(b.buf[300000:300017]))
			assert.Equal(t, byte(5), b.buf[400000], "signal added 5 to the counter")

			copy(b.buf[500000:], "read me back")
			tk, err = q.Get(b.addr(500000), a.laddr(600000), 12, a.laddr(700000), false, mode)
			require.NoError(t, err)
			require.NoError(t, q.Wait(tk, devhost.SharingGPU, 5*time.Second))
			assert.Equal(t, "read me back", string(a.buf[600000:600012]))
		})
	}
}

// TestHeadersErrorCQE: a put with a bad rkey completes with an error CQE that
// the device code returns to its caller instead of spinning.
func TestHeadersErrorCQE(t *testing.T) {
	g := gpunetio.NewHostGPU()
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	a := newSide(t, g, "emu0", gpunetio.NICHandlerGPUSMDB, gpunetio.SendDBRValid)
	b := newSide(t, g, "emu1", gpunetio.NICHandlerGPUSMDB, gpunetio.SendDBRValid)
	connect(t, a, b)
	connect(t, b, a)
	q := devQP(t, a)
	bad := b.addr(0)
	bad.Key ^= 0x01000000 // flip a bit of the big-endian rkey
	tk, err := q.Put(bad, a.laddr(0), 64, devhost.Mode{Sharing: devhost.SharingExclusive, Handler: devhost.HandlerGPUSMDB})
	require.NoError(t, err)
	err = q.Wait(tk, devhost.SharingExclusive, 5*time.Second)
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.EIO, "error CQE reported: %v", err)
	info, err := a.hl.GPUQP().LastError()
	require.NoError(t, err)
	assert.True(t, info.HasError, "the QP went to ERR")
}
