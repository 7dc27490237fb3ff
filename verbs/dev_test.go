package verbs

import (
	"encoding/binary"
	"errors"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// devFixture is a Context, PD and Dev on an emulated device, closed in the
// DOCA 3.0 order at cleanup.
type devFixture struct {
	ctx *Context
	pd  *PD
	dev *Dev
}

func newDevFixture(t *testing.T, name string) *devFixture {
	t.Helper()
	f := &devFixture{}
	var err error
	f.ctx, err = OpenDevice(name)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, f.ctx.Close()) })
	f.pd, err = f.ctx.AllocPD()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, f.pd.Close()) })
	f.dev, err = OpenDev(f.pd)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, f.dev.Close()) })
	return f
}

func mmapT(t *testing.T, n int) []byte {
	t.Helper()
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Munmap(b) })
	return b
}

// The Dev outlives everything made with it, and its PD outlives it: each
// close out of order is refused with ErrInUse naming the user.
func TestDevLifetime(t *testing.T) {
	f := newDevFixture(t, "emu0")
	assert.Equal(t, ModeOpen, f.dev.Mode())
	assert.Same(t, f.pd, f.dev.PD())
	assert.Same(t, f.ctx, f.dev.Context())

	err := f.pd.Close()
	assert.ErrorIs(t, err, ErrInUse)
	assert.ErrorContains(t, err, "Dev of PD")

	buf := mmapT(t, 1<<16)
	for i := 0; i < 64; i++ {
		buf[i*64+63] = cqeInvalidOwned // the ring's owner initialises it
	}
	u, err := f.dev.NewUMem(uintptr(unsafe.Pointer(&buf[0])), 1<<16, AccessLocalWrite, nil)
	require.NoError(t, err)
	uar, err := f.dev.NewUAR(UARNonCache)
	require.NoError(t, err)
	cq, err := f.dev.NewCQ(CQConfig{Size: 64, UMem: u, UAR: uar})
	require.NoError(t, err)
	qp, err := f.dev.NewQP(QPConfig{SendCQ: cq, RecvCQ: cq, SQWR: 8, RQWR: 8, SendMaxSGE: 1, RecvMaxSGE: 1})
	require.NoError(t, err)
	assert.Same(t, f.pd, qp.PD(), "the QP's PD is the Dev's")

	for _, x := range []struct {
		name  string
		close func() error
	}{{"UMem", u.Close}, {"UAR", uar.Close}, {"CQ", cq.Close}} {
		assert.ErrorIs(t, x.close(), ErrInUse, x.name)
	}
	err = f.dev.Close()
	require.ErrorIs(t, err, ErrInUse)
	assert.ErrorContains(t, err, "QP 0x")

	for _, c := range []func() error{qp.Close, cq.Close, uar.Close, u.Close} {
		require.NoError(t, c())
	}
	h, err := f.dev.Hold("test")
	require.NoError(t, err)
	assert.ErrorContains(t, f.dev.Close(), `hold "test"`)
	h.Release()
}

// Closed, nil and zero Devs are refused by name.
func TestDevMisuse(t *testing.T) {
	_, err := OpenDev(nil)
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorContains(t, err, "doca_verbs_dev_open")
	var nilDev *Dev
	for _, call := range []func() error{
		func() error { _, err := nilDev.NewUAR(UARNonCache); return err },
		func() error { _, err := nilDev.NewCQ(CQConfig{Size: 8}); return err },
		func() error { _, err := nilDev.NewQP(QPConfig{}); return err },
		func() error { _, err := nilDev.NewUMem(1, 1, 0, nil); return err },
		nilDev.Close,
		func() error { _, err := (&Dev{}).NewCQ(CQConfig{Size: 8}); return err },
	} {
		err := call()
		assert.ErrorIs(t, err, ErrInvalidValue)
		assert.False(t, errors.Is(err, ErrInitialization), "a nil Dev is not a construction failure: %v", err)
	}

	_, pd := openPD(t, "emu0")
	d, err := OpenDev(pd)
	require.NoError(t, err)
	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "a second Close returns nil")
	_, err = d.NewCQ(CQConfig{Size: 8})
	assert.ErrorIs(t, err, ErrBadState)
	require.NoError(t, pd.Close())
	_, err = OpenDev(pd)
	assert.ErrorIs(t, err, ErrBadState)
}

// DOCA 3.0 fails creators with DOCA_ERROR_INITIALIZATION when the object
// cannot be built; the specific code stays in the chain.
func TestCreatorsFailWithInitialization(t *testing.T) {
	f := newDevFixture(t, "emu0")
	g := newDevFixture(t, "emu1")
	buf := mmapT(t, 1<<16)
	addr := uintptr(unsafe.Pointer(&buf[0]))
	other, err := g.dev.NewUAR(UARNonCache)
	require.NoError(t, err)
	defer other.Close()
	for _, tc := range []struct {
		name  string
		call  func() error
		inner Code
		msg   string
	}{
		{"CQ size", func() error { _, err := f.dev.NewCQ(CQConfig{Size: 3}); return err }, ErrInvalidValue, "not a power of two"},
		{"CQ UAR of another Dev", func() error { _, err := f.dev.NewCQ(CQConfig{Size: 8, UAR: other}); return err }, ErrInvalidValue, "not made on this Dev"},
		{"QP type", func() error { _, err := f.dev.NewQP(QPConfig{Type: 7}); return err }, ErrInvalidValue, "QP type"},
		{"QP send queue without CQ", func() error { _, err := f.dev.NewQP(QPConfig{SQWR: 4}); return err }, ErrInvalidValue, "needs a send CQ"},
		{"UMEM access", func() error { _, err := f.dev.NewUMem(addr, 4096, 1<<30, nil); return err }, ErrInvalidValue, "unknown access bits"},
		{"UAR type", func() error { _, err := f.dev.NewUAR(9); return err }, ErrInvalidValue, "unknown allocation type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var e *Error
			require.True(t, errors.As(err, &e), "%v", err)
			assert.Equal(t, ErrInitialization, e.Code)
			assert.ErrorIs(t, err, tc.inner)
			assert.ErrorContains(t, err, tc.msg)
		})
	}
	// Arguments DOCA checks before building stay ErrInvalidValue.
	_, err = f.dev.NewUMem(0, 4096, 0, nil)
	var e *Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, ErrInvalidValue, e.Code)
	_, err = f.dev.NewQP(QPConfig{PD: g.pd})
	require.True(t, errors.As(err, &e))
	assert.Equal(t, ErrInvalidValue, e.Code)
	assert.ErrorContains(t, err, "not the Dev's PD")
}

// The QP ordering semantic is SDK-only: in open mode anything but IBTA is
// refused with ErrNotSupported naming SDK mode, and IBTA is the default.
func TestOrderingSemanticOpenMode(t *testing.T) {
	f := newDevFixture(t, "emu0")
	cq, err := f.dev.NewCQ(CQConfig{Size: 8})
	require.NoError(t, err)
	defer cq.Close()
	for _, o := range []OrderingSemantic{OrderingOOORW, OrderingOOOAll} {
		_, err := f.dev.NewQP(QPConfig{SendCQ: cq, SQWR: 4, SendMaxSGE: 1, OrderingSemantic: o})
		require.ErrorIs(t, err, ErrNotSupported)
		assert.ErrorContains(t, err, "needs SDK mode")
		assert.ErrorContains(t, err, "DOCA_SDK_LIB_PATH")
		assert.ErrorContains(t, err, o.String())
	}
	qp, err := f.dev.NewQP(QPConfig{SendCQ: cq, SQWR: 4, SendMaxSGE: 1, OrderingSemantic: OrderingIBTA})
	require.NoError(t, err)
	assert.Equal(t, OrderingIBTA, qp.Config().OrderingSemantic)
	require.NoError(t, qp.Close())
	_, err = NewQP(f.ctx, QPConfig{PD: f.pd, SendCQ: cq, SQWR: 4, SendMaxSGE: 1, OrderingSemantic: OrderingOOORW})
	assert.ErrorIs(t, err, ErrNotSupported)
}

// DOCA 3.0 puts a CQ's doorbell record in its ring UMEM, right after the
// CQEs: a CQ on one external UMEM of Size*64+8 bytes (initialised as
// hardware-owned) completes and polls, and its doorbell record is at
// Size*64.
func TestCQDoorbellRecordInRingUMEM(t *testing.T) {
	const n = 64
	f := newDevFixture(t, "emu0")
	peer := newDevFixture(t, "emu1")
	ring := mmapT(t, 4096+4096)
	for i := 0; i < n; i++ {
		ring[i*64+63] = cqeInvalidOwned
	}
	u, err := f.dev.NewUMem(uintptr(unsafe.Pointer(&ring[0])), n*64+8, AccessLocalWrite, nil)
	require.NoError(t, err)
	defer u.Close()
	cq, err := f.dev.NewCQ(CQConfig{Size: n, UMem: u})
	require.NoError(t, err)
	defer cq.Close()
	assert.Equal(t, u.Addr()+n*64, cq.DBRAddr(), "the doorbell record follows the CQEs")
	_, ci, arm := cq.Doorbells()
	assert.Equal(t, cq.DBRAddr(), ci)
	assert.Equal(t, cq.DBRAddr()+4, arm)

	_, err = f.dev.NewCQ(CQConfig{Size: n, UMem: u, UMemOffset: 64})
	assert.ErrorIs(t, err, ErrInvalidValue)

	qp, err := f.dev.NewQP(QPConfig{SendCQ: cq, RecvCQ: cq, SQWR: 8, SendMaxSGE: 1})
	require.NoError(t, err)
	defer qp.Close()
	pcq, err := peer.dev.NewCQ(CQConfig{Size: 16})
	require.NoError(t, err)
	defer pcq.Close()
	pqp, err := peer.dev.NewQP(QPConfig{SendCQ: pcq, RecvCQ: pcq, SQWR: 8, SendMaxSGE: 1})
	require.NoError(t, err)
	defer pqp.Close()
	la, err := qp.LocalEndpoint(1, 0)
	require.NoError(t, err)
	lb, err := pqp.LocalEndpoint(1, 0)
	require.NoError(t, err)
	require.NoError(t, qp.ConnectRC(la, lb.Endpoint, nil))
	require.NoError(t, pqp.ConnectRC(lb, la.Endpoint, nil))
	for i := 0; i < 3; i++ {
		require.NoError(t, qp.PostSend(SendWR{WRID: uint64(i), Opcode: WRNop, Signaled: true}))
	}
	wcs := make([]WC, 3)
	got, err := cq.PollWait(wcs, 3, 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, 3, got)
	assert.Equal(t, uint32(3), binary.BigEndian.Uint32(ring[n*64:])&0xffffff, "Poll wrote the consumer index into the record in the ring's UMEM")
}
