package verbs

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/apicheck"
	"github.com/gdaki/gpunetio/internal/mlx5"
)

// A Hold keeps an object open: Close fails with ErrInUse naming the holder
// until the hold is released; a closed object cannot be held.
func TestHoldRefusesClose(t *testing.T) {
	f := newFixture(t, "emu0")
	qp, err := NewQP(f.ctx, QPConfig{PD: f.pd, SendCQ: f.cq, SQWR: 4, SendMaxSGE: 1})
	require.NoError(t, err)
	h, err := qp.Hold("gpunetio test export")
	require.NoError(t, err)
	assert.Equal(t, "gpunetio test export", h.Holder())

	err = qp.Close()
	require.ErrorIs(t, err, ErrInUse)
	assert.Contains(t, err.Error(), `by hold "gpunetio test export"`)
	var found bool
	for _, o := range OpenObjects() {
		if o.Kind == "Hold" && strings.Contains(o.What, `"gpunetio test export" on QP 0x`) {
			found = true
			assert.Contains(t, o.Stack, "verbs.TestHoldRefusesClose", "the hold's stack is recorded")
		}
	}
	assert.True(t, found, "OpenObjects lists the hold")
	_, _, err = qp.Query()
	require.NoError(t, err, "a held QP stays usable")

	h.Release()
	h.Release() // idempotent
	require.NoError(t, qp.Close())
	_, err = qp.Hold("late")
	assert.ErrorIs(t, err, ErrBadState, "a closed QP cannot be held")
	_, err = f.cq.Hold("")
	assert.ErrorIs(t, err, ErrInvalidValue)

	// Every object kind can be held.
	u := f.umem(t)
	uar, err := NewUAR(f.ctx, UARNonCacheDedicated)
	require.NoError(t, err)
	mr, err := f.pd.RegMR(f.addr(), 4096, AccessLocalWrite)
	require.NoError(t, err)
	for _, c := range []struct {
		obj  closer
		hold func() (*Hold, error)
	}{
		{f.cq, func() (*Hold, error) { return f.cq.Hold("h") }},
		{u, func() (*Hold, error) { return u.Hold("h") }},
		{uar, func() (*Hold, error) { return uar.Hold("h") }},
		{mr, func() (*Hold, error) { return mr.Hold("h") }},
		{f.pd, func() (*Hold, error) { return f.pd.Hold("h") }},
		{f.ctx, func() (*Hold, error) { return f.ctx.Hold("h") }},
	} {
		h, err := c.hold()
		require.NoError(t, err)
		assert.ErrorIs(t, c.obj.Close(), ErrInUse)
		h.Release()
	}
	require.NoError(t, mr.Close())
	require.NoError(t, uar.Close())
}

// The UAR a QP allocated for itself is referenced by the QP: closing it
// through QP.UAR would unmap the page the QP rings.
func TestInternalUARIsReferenced(t *testing.T) {
	f := newFixture(t, "emu0")
	err := f.qp.UAR().Close()
	require.ErrorIs(t, err, ErrInUse)
	assert.Contains(t, err.Error(), f.qp.userName())
	err = f.cq.UAR().Close()
	require.ErrorIs(t, err, ErrInUse)
}

// QP.Close racing with PostSend, PostRecv, Modify, Query and CQ.Poll never
// touches freed rings or doorbells: every call either completes before
// Close or fails with ErrBadState after it.
func TestCloseRacesDataPath(t *testing.T) {
	o := defaultPairOpts()
	for round := 0; round < 20; round++ {
		ctx, err := OpenDevice("emu0")
		require.NoError(t, err)
		pd, err := ctx.AllocPD()
		require.NoError(t, err)
		cq, err := NewCQ(ctx, CQConfig{Size: 256})
		require.NoError(t, err)
		cfg := o.qp
		cfg.PD, cfg.SendCQ, cfg.RecvCQ = pd, cq, cq
		qp, err := NewQP(ctx, cfg)
		require.NoError(t, err)
		// To RTS towards a QP number that does not exist on this device:
		// the WQEs fail (retry exceeded), which is fine here.
		g, err := ctx.QueryGID(1, 0)
		require.NoError(t, err)
		connectTo(t, qp, 0xfffff0, g.GID, pairOpts{rw: true, rr: true, atomic: AtomicIBSpec, retry: 0, ackTimeout: 1})
		buf, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		require.NoError(t, err)
		mr, err := pd.RegMR(uintptr(unsafe.Pointer(&buf[0])), 4096, AccessLocalWrite)
		require.NoError(t, err)
		sge := []SGE{{Addr: mr.IOVA(), Length: 8, LKey: mr.LKey()}}

		var wg sync.WaitGroup
		stop := make(chan struct{})
		errs := make(chan error, 64)
		loop := func(name string, call func() error) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := call(); err != nil && !errors.Is(err, ErrBadState) && !errors.Is(err, ErrFull) {
					errs <- fmt.Errorf("%s: %w", name, err)
					return
				}
			}
		}
		wg.Add(5)
		go loop("PostSend", func() error {
			return qp.PostSend(SendWR{Opcode: WRRDMAWrite, SGL: sge, RemoteAddr: 0x1000, RKey: 1})
		})
		go loop("PostRecv", func() error { return qp.PostRecv(RecvWR{SGL: sge}) })
		go loop("Query", func() error { _, _, err := qp.Query(); return err })
		go loop("State", func() error { qp.State(); return nil })
		go loop("Poll", func() error {
			_, err := cq.Poll(make([]WC, 8))
			if errors.Is(err, ErrIOFailed) { // the CQ may overrun: nobody consumes fast enough
				return nil
			}
			return err
		})
		time.Sleep(time.Millisecond)
		require.NoError(t, qp.Close())
		err = qp.PostSend(SendWR{Opcode: WRNop})
		assert.ErrorIs(t, err, ErrBadState)
		close(stop)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		require.NoError(t, mr.Close())
		require.NoError(t, syscall.Munmap(buf))
		// A CQ without QPs closes while a poller runs.
		var pw sync.WaitGroup
		pw.Add(1)
		go func() {
			defer pw.Done()
			for {
				if _, err := cq.Poll(make([]WC, 4)); err != nil {
					if !errors.Is(err, ErrBadState) && !errors.Is(err, ErrIOFailed) {
						t.Errorf("Poll after close: %v", err)
					}
					if errors.Is(err, ErrBadState) {
						return
					}
				}
			}
		}()
		time.Sleep(100 * time.Microsecond)
		require.NoError(t, cq.Close())
		pw.Wait()
		require.NoError(t, pd.Close())
		require.NoError(t, ctx.Close())
	}
}

// objectTypes are the exported types with pointer-receiver methods whose
// nil and zero values must be refused by every method with a named error.
var objectTypes = []any{(*Context)(nil), (*PD)(nil), (*MR)(nil), (*UMem)(nil), (*UAR)(nil),
	(*CQ)(nil), (*SRQ)(nil), (*QP)(nil)}

// valueTypes have pointer-receiver methods too; on nil and zero values they
// must not panic (their errors are not checked).
var valueTypes = []any{(*Hold)(nil), (*DeviceAttr)(nil), (*Endpoint)(nil), (*Error)(nil),
	(*FirmwareError)(nil), (*CompletionError)(nil), (*CQError)(nil)}

var errType = reflect.TypeOf((*error)(nil)).Elem()

// Every exported method of every verbs object, on a nil pointer and on a
// zero value, returns a named error (ErrInvalidValue, naming the call) or
// a zero value; none panics.
func TestNilAndZeroReceivers(t *testing.T) {
	for _, p := range objectTypes {
		apicheck.CallMethods(t, p, func(t *testing.T, recv string, m reflect.Method, out []reflect.Value) {
			for _, o := range out {
				if o.Type() != errType {
					continue
				}
				err, _ := o.Interface().(error)
				require.Error(t, err, "a %s receiver must be refused", recv)
				assert.ErrorIs(t, err, ErrInvalidValue)
				var e *Error
				require.True(t, errors.As(err, &e), "%T", err)
				assert.NotEmpty(t, e.Op)
				assert.Regexp(t, `nil |zero value`, e.Msg)
			}
		})
	}
	for _, p := range valueTypes {
		apicheck.CallMethods(t, p, nil)
	}
}

// Sizes no device registers are refused before the driver sees them, and
// nothing stays referenced: the fixture's PD and device close at cleanup.
func TestHugeSizes(t *testing.T) {
	const mrOp, umemOp = "ibv_reg_mr", "doca_verbs_umem_create"
	checkBad(t, []badCase{
		{"mr 2^62 bytes", func(t *testing.T, f *fixture) error {
			_, err := f.pd.RegMR(f.addr(), 1<<62, AccessLocalWrite)
			return err
		}, ErrInvalidValue, mrOp, []string{"is not a range of this process's address space"}},
		{"mr wraps the address space", func(t *testing.T, f *fixture) error {
			_, err := f.pd.RegMR(f.addr(), ^uint64(0)-4095, AccessLocalWrite)
			return err
		}, ErrInvalidValue, mrOp, []string{"address range"}},
		{"mr beyond max_mr_size", func(t *testing.T, f *fixture) error {
			_, err := f.pd.RegMR(4096, f.attr.MaxMRSize+4096, AccessLocalWrite)
			return err
		}, ErrInvalidValue, mrOp, []string{"exceeds the device's max_mr_size"}},
		{"mr iova wraps", func(t *testing.T, f *fixture) error {
			_, err := f.pd.RegMRIOVA(f.addr(), 4096, ^uint64(0)-10, AccessLocalWrite)
			return err
		}, ErrInvalidValue, "ibv_reg_mr_iova2", []string{"iova", "wraps around"}},
		{"dmabuf offset wraps", func(t *testing.T, f *fixture) error {
			_, err := f.pd.RegDmabufMR(Dmabuf{FD: 3, Offset: ^uint64(0) - 10}, 4096, 0x1000, 0, AccessLocalWrite)
			return err
		}, ErrInvalidValue, "ibv_reg_dmabuf_mr", []string{"dma-buf offset", "wraps around"}},
		{"umem 2^62 bytes", func(t *testing.T, f *fixture) error {
			_, err := NewUMem(f.ctx, f.addr(), 1<<62, 0, nil)
			return err
		}, ErrInvalidValue, umemOp, []string{"is not a range of this process's address space"}},
		{"umem beyond max_mr_size", func(t *testing.T, f *fixture) error {
			_, err := NewUMem(f.ctx, 4096, f.attr.MaxMRSize+4096, 0, nil)
			return err
		}, ErrInvalidValue, umemOp, []string{"exceeds the device's max_mr_size"}},
	})
}

// Objects of another device are refused with ErrInvalidValue by the call
// that would combine them, before the device sees them.
func TestForeignDeviceObjects(t *testing.T) {
	const cqOp, qpOp = "doca_verbs_cq_create", "doca_verbs_qp_create"
	other := func(t *testing.T) *fixture { return newFixture(t, "emu1") }
	checkBad(t, []badCase{
		{"cq with another device's UAR", func(t *testing.T, f *fixture) error {
			return newCQErr(f.ctx, CQConfig{Size: 16, UAR: other(t).cq.UAR()})
		}, ErrInvalidValue, cqOp, []string{"belongs to device emu1, not emu0"}},
		{"cq with another device's ring UMEM", func(t *testing.T, f *fixture) error {
			u := other(t).umem(t)
			return newCQErr(f.ctx, CQConfig{Size: 16, UMem: u, DBRUMem: u, DBRUMemOffset: 4096})
		}, ErrInvalidValue, cqOp, []string{"ring UMEM", "belongs to device emu1"}},
		{"cq with another device's DBR UMEM", func(t *testing.T, f *fixture) error {
			return newCQErr(f.ctx, CQConfig{Size: 16, UMem: f.umem(t), DBRUMem: other(t).umem(t), DBRUMemOffset: 4096})
		}, ErrInvalidValue, cqOp, []string{"DBR UMEM", "belongs to device emu1"}},
		{"qp with another device's UAR", func(t *testing.T, f *fixture) error {
			return newQPErr(f, QPConfig{PD: f.pd, SendCQ: f.cq, SQWR: 4, SendMaxSGE: 1, UAR: other(t).qp.UAR()})
		}, ErrInvalidValue, qpOp, []string{"UAR", "belongs to device emu1"}},
		{"qp with another device's UMEMs", func(t *testing.T, f *fixture) error {
			u := other(t).umem(t)
			return newQPErr(f, QPConfig{PD: f.pd, SendCQ: f.cq, SQWR: 4, SendMaxSGE: 1, UMem: u, DBRUMem: u, DBRUMemOffset: 8192})
		}, ErrInvalidValue, qpOp, []string{"WQ UMEM", "belongs to device emu1"}},
		{"srq with another device's PD", func(t *testing.T, f *fixture) error {
			return newSRQErr(f.ctx, SRQConfig{PD: other(t).pd, WR: 4, MaxRecvSGE: 1})
		}, ErrInvalidValue, "doca_verbs_srq_create", []string{"PD belongs to device emu1, not emu0"}},
		{"srq with another device's UMEM", func(t *testing.T, f *fixture) error {
			return newSRQErr(f.ctx, SRQConfig{PD: f.pd, WR: 4, MaxRecvSGE: 1, UMem: other(t).umem(t)})
		}, ErrInvalidValue, "doca_verbs_srq_create", []string{"UMEM", "belongs to device emu1"}},
	})
}

// The small ones: ports that do not exist, receive SGE lengths the NIC
// cannot take, atomic result buffers of the wrong size, unknown access bits.
func TestSmallMisuses(t *testing.T) {
	checkBad(t, []badCase{
		{"query port 2", func(t *testing.T, f *fixture) error {
			_, err := f.ctx.QueryPort(2)
			return err
		}, ErrInvalidValue, "ibv_query_port", []string{"port 2: device emu0 has ports 1..1"}},
		{"query port 0", func(t *testing.T, f *fixture) error {
			_, err := f.ctx.QueryPort(0)
			return err
		}, ErrInvalidValue, "ibv_query_port", []string{"port numbers start at 1"}},
		{"query GID of port 2", func(t *testing.T, f *fixture) error {
			_, err := f.ctx.QueryGID(2, 0)
			return err
		}, ErrInvalidValue, "ibv_query_gid_ex", []string{"port 2"}},
		{"query GID beyond the table", func(t *testing.T, f *fixture) error {
			_, err := f.ctx.QueryGID(1, 1<<20)
			return err
		}, ErrInvalidValue, "ibv_query_gid_ex", []string{"GID index 1048576", "entries"}},
		{"umem unknown access bits", func(t *testing.T, f *fixture) error {
			_, err := NewUMem(f.ctx, f.addr(), 4096, AccessLocalWrite|1<<10, nil)
			return err
		}, ErrInvalidValue, "doca_verbs_umem_create", []string{"unknown access bits 0x400"}},
		{"mr unknown access bits", func(t *testing.T, f *fixture) error {
			_, err := f.pd.RegMR(f.addr(), 4096, AccessLocalWrite|1<<12)
			return err
		}, ErrInvalidValue, "ibv_reg_mr", []string{"unknown access bits 0x1000"}},
		{"post recv SGE of 0 bytes", func(t *testing.T, f *fixture) error {
			return initQP(t, f).PostRecv(RecvWR{SGL: []SGE{{Addr: uint64(f.addr()), Length: 0, LKey: 1}}})
		}, ErrInvalidValue, "doca_verbs_post_recv", []string{"SGE 0: length 0"}},
		{"post recv SGE of 2^31 bytes", func(t *testing.T, f *fixture) error {
			return initQP(t, f).PostRecv(RecvWR{SGL: []SGE{{Addr: uint64(f.addr()), Length: 1 << 31, LKey: 1}}})
		}, ErrInvalidValue, "doca_verbs_post_recv", []string{"length 2147483648"}},
	})
}

// initQP moves the fixture's QP to INIT, where receives may be posted.
func initQP(t *testing.T, f *fixture) *QP {
	if f.qp.State() == QPStateRST {
		require.NoError(t, f.qp.Modify(&QPAttr{NextState: QPStateINIT, PortNum: 1},
			QPAttrNextState|QPAttrPKeyIndex|QPAttrPortNum|QPAttrAllowRemoteWrite|QPAttrAllowRemoteRead))
	}
	return f.qp
}

// An atomic's result buffer must have the operand's size: a 16-byte buffer
// for an 8-byte compare-and-swap would read as 16 bytes returned.
func TestAtomicResultBufferSize(t *testing.T) {
	a, b := newPair(t, defaultPairOpts())
	for _, c := range []struct {
		wr   SendWR
		want string
	}{
		{SendWR{Opcode: WRAtomicCmpSwp, SGL: []SGE{{Addr: a.addr(0), Length: 16, LKey: a.mr.LKey()}}}, "ATOMIC_CMP_AND_SWP result buffer of 16 bytes: the atomic returns 8 bytes"},
		{SendWR{Opcode: WRAtomicFetchAdd, SGL: []SGE{{Addr: a.addr(0), Length: 4, LKey: a.mr.LKey()}}}, "returns 8 bytes"},
		{SendWR{Opcode: WRMaskedCmpSwp, AtomicSize: 4, SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}}, "result buffer of 8 bytes: the atomic returns 4 bytes"},
	} {
		c.wr.RemoteAddr, c.wr.RKey = b.addr(0), b.mr.RKey()
		err := a.qp.PostSend(c.wr)
		require.ErrorIs(t, err, ErrInvalidValue, "%v", c.wr.Opcode)
		assert.Contains(t, err.Error(), c.want)
	}
	// The right size works.
	require.NoError(t, a.qp.PostSend(SendWR{Opcode: WRAtomicFetchAdd, Compare: 5, Signaled: true, RemoteAddr: b.addr(0), RKey: b.mr.RKey(),
		SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}}))
	wc := waitWC(t, a.cq, 1)[0]
	require.NoError(t, wc.Err())
}

// CQ overrun (a 4-entry CQ, 16 signalled WRITEs nobody polls) is an error
// of the CQ: Poll returns the 4 completions that fitted, then a *CQError
// naming the CQ and CQ_OVERFLOW, every time; the QP reads ERR; later posts
// are refused instead of vanishing.
func TestCQOverrunSurfaces(t *testing.T) {
	o := defaultPairOpts()
	a := newEnd(t, "emu0", pairOpts{dev: o.dev, qp: o.qp, access: o.access, atomic: o.atomic, rr: true, rw: true,
		bufSize: o.bufSize, cqSize: 4, retry: 7, ackTimeout: 10})
	b := newEnd(t, "emu1", o)
	connect(t, a, b, o)
	connect(t, b, a, o)
	for i := 0; i < 16; i++ {
		require.NoError(t, a.qp.PostSend(SendWR{WRID: uint64(i), Opcode: WRRDMAWrite, Signaled: true,
			SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(0), RKey: b.mr.RKey()}))
	}
	// Let the emulator run into the full ring before anything is consumed.
	deadline := time.Now().Add(5 * time.Second)
	for a.cq.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	wcs := make([]WC, 16)
	n, err := a.cq.PollWait(wcs, 16, 5*time.Second)
	assert.Equal(t, 4, n, "the completions that fitted")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrIOFailed)
	assert.ErrorIs(t, err, CQStatusOverflow)
	var ce *CQError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, a.cq.CQN(), ce.CQN)
	assert.Equal(t, CQStatusOverflow, ce.Status)
	_, err = a.cq.Poll(wcs)
	assert.ErrorIs(t, err, CQStatusOverflow, "the CQ stays in error")
	assert.Equal(t, QPStateERR, a.qp.State())
	err = a.qp.PostSend(SendWR{Opcode: WRNop, Signaled: true})
	require.ErrorIs(t, err, ErrIOFailed, "a post whose completion would be lost is refused")
	assert.ErrorIs(t, err, CQStatusOverflow)
	assert.Contains(t, err.Error(), "the work request would be lost")
	assert.ErrorIs(t, a.cq.Err(), CQStatusOverflow)
}

// After an error completion the QP is in ERR, and State says so: at once
// when Poll returned the error completion, and from the device when no one
// polled.
func TestStateAfterErrorCompletion(t *testing.T) {
	for _, poll := range []bool{true, false} {
		t.Run(fmt.Sprintf("polled=%v", poll), func(t *testing.T) {
			a, b := newPair(t, defaultPairOpts())
			require.Equal(t, QPStateRTS, a.qp.State())
			require.NoError(t, a.qp.PostSend(SendWR{Opcode: WRRDMAWrite, Signaled: true,
				SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(0), RKey: b.mr.RKey() ^ 0x5a00}))
			if poll {
				wc := waitWC(t, a.cq, 1)[0]
				require.ErrorIs(t, wc.Err(), WCRemAccessErr)
				assert.Equal(t, QPStateERR, a.qp.cachedState(), "Poll recorded the error")
			} else {
				deadline := time.Now().Add(5 * time.Second)
				for a.qp.State() != QPStateERR && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
			}
			assert.Equal(t, QPStateERR, a.qp.State())
			attr, _, err := a.qp.Query()
			require.NoError(t, err)
			assert.Equal(t, QPStateERR, attr.CurrentState)
			// ERR -> RST -> ... works from the state State reports.
			require.NoError(t, a.qp.Modify(&QPAttr{NextState: QPStateRST}, QPAttrNextState))
			assert.Equal(t, QPStateRST, a.qp.State())
		})
	}
}

// A CQ ring holds no completions nobody posted: Poll refuses entries that
// name a QP that never completed to the CQ (what a ring of zeros reads as:
// QP 0, opcode REQ, owner 0) instead of returning them as successes. (The
// emulated firmware also refuses an uninitialised ring at CREATE_CQ; a
// ConnectX reads nothing there, so Poll checks again.)
func TestZeroedExternalRing(t *testing.T) {
	f := newFixture(t, "emu0")
	mlx5.InitCQEs(f.buf[:64*64])
	u := f.umem(t)
	cq, err := NewCQ(f.ctx, CQConfig{Size: 64, UMem: u, DBRUMem: u, DBRUMemOffset: 8192})
	require.NoError(t, err)
	defer func() { require.NoError(t, cq.Close()) }()
	wcs := make([]WC, 64)
	n, err := cq.Poll(wcs)
	require.NoError(t, err)
	require.Zero(t, n)
	clear(f.buf[:64*64]) // the ring as an uninitialised one reads
	n, err = cq.Poll(wcs)
	assert.Zero(t, n, "no completion was invented")
	require.ErrorIs(t, err, ErrUnexpected)
	assert.Contains(t, err.Error(), "names QP 0x0, which never completed to this CQ")
	assert.Contains(t, err.Error(), "initialised")
}

// RTS -> RTS applies the source GID index and traffic class of an AH; any
// other change of the address path is refused before the device sees it (a
// ConnectX changes an RTS QP's remote address only by path migration).
func TestRTS2RTSAddressPath(t *testing.T) {
	a, b := newPair(t, defaultPairOpts())
	for _, c := range []struct {
		mod   func(ah *AHAttr)
		field string
	}{
		{func(ah *AHAttr) { ah.GID[15]++ }, "remote GID"},
		{func(ah *AHAttr) { ah.HopLimit = 1 }, "hop limit"},
		{func(ah *AHAttr) { ah.AddrType = AddrTypeIPv6 }, "address type"},
		{func(ah *AHAttr) { ah.SL = 3 }, "service level"},
	} {
		ah := AHAttr{GID: b.gid, AddrType: AddrTypeIPv4, HopLimit: 64}
		c.mod(&ah)
		err := a.qp.Modify(&QPAttr{NextState: QPStateRTS, AH: &ah}, QPAttrNextState|QPAttrAHAttr)
		require.ErrorIs(t, err, ErrNotSupported, c.field)
		assert.Contains(t, err.Error(), "not its "+c.field)
		assert.Contains(t, err.Error(), "path migration")
	}
	attr, _, err := a.qp.Query()
	require.NoError(t, err)
	assert.Equal(t, b.gid, attr.AH.GID, "the path is unchanged")
	assert.Equal(t, QPStateRTS, a.qp.State())
}
