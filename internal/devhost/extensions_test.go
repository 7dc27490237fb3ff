package devhost

import (
	"encoding/binary"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/devstruct"
)

// wantSetWQE is the WQE of a SET signal: an inline 8-byte RDMA WRITE of the
// value's bytes to the signal word, one slot.
func wantSetWQE(idx uint16, sig Addr, val uint64) [64]byte {
	w := ctrl(&wqeBytes{}, idx, 0x08, testQPN<<8|3, 0x08, 0)
	raddrSeg(w, 16, sig.Addr, sig.Key)
	w.be32(32, 0x80000008).raw64(36, val)
	return *w
}

// TestSignalSetWQEs: every signalling call with the SET extension posts an
// inline write of the value where ADD posts a fetch-and-add; the other WQEs,
// the slot count and the tickets stay those of ADD.
func TestSignalSetWQEs(t *testing.T) {
	m := Mode{Sharing: SharingExclusive, Handler: HandlerGPUSMDB, Signal: SignalSet}
	r := Addr{Addr: 0x1000, Key: key(0x11)}
	l := Addr{Addr: 0x2000, Key: key(0x22)}
	sig := Addr{Addr: 0x3008, Key: key(0x33)}
	const val = 0x0102030405060708
	q := newHostQP(t, HostConfig{SQWQEs: 16})

	tk, err := q.PutSignal(r, l, 64, sig, l, val, m)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), tk, "the put, then the signal")
	_, op, _, _ := ctrlOf(q.WQE(0))
	assert.Equal(t, uint8(0x08), op)
	assert.Equal(t, wantSetWQE(1, sig, val), q.WQE(1))

	tk, err = q.PSignal(r, 9, sig, l, val+1, m)
	require.NoError(t, err)
	assert.Equal(t, uint64(3), tk)
	assert.Equal(t, wantSetWQE(3, sig, val+1), q.WQE(3))

	tk, err = q.Signal(sig, l, val+2, m)
	require.NoError(t, err)
	assert.Equal(t, uint64(4), tk)
	assert.Equal(t, wantSetWQE(4, sig, val+2), q.WQE(4))

	comp := newHostQP(t, HostConfig{QPN: 0x55, SQWQEs: 16})
	require.NoError(t, q.Counter(Counter{Kind: CounterSignal, SigRemote: sig, SigLocal: l, SigVal: val + 3, Companion: comp.QP,
		CounterRemote: r, CounterLocal: l, CounterVal: 1}, m))
	assert.Equal(t, wantSetWQE(5, sig, val+3), q.WQE(5), "signal_counter<SET>")
	_, op, _, _ = ctrlOf(comp.WQE(1))
	assert.Equal(t, uint8(0x12), op, "the counter itself still adds")

	_, err = q.Signal(sig, l, 1, Mode{Sharing: SharingExclusive, Handler: HandlerGPUSMDB, Signal: 7})
	assert.ErrorIs(t, err, syscall.EINVAL)
}

// TestFetchingAtomicWQEs: fetch_add and compare_swap post standard 8-byte
// atomics whose local segment is the result buffer.
func TestFetchingAtomicWQEs(t *testing.T) {
	m := Mode{Sharing: SharingGPU, Handler: HandlerGPUSMDB}
	q := newHostQP(t, HostConfig{SQWQEs: 16})
	r := Addr{Addr: 0x10008, Key: key(0x11)}
	l := Addr{Addr: 0x20010, Key: key(0x22)}
	tk, err := q.FetchAdd(r, l, 0x55, m)
	require.NoError(t, err)
	w := ctrl(&wqeBytes{}, 0, 0x12, testQPN<<8|4, 0x08, 0)
	raddrSeg(w, 16, r.Addr, r.Key).be64(32, 0x55).be64(40, 0x55)
	dataSeg(w, 48, 8, l.Key, l.Addr)
	assert.Equal(t, [64]byte(*w), q.WQE(tk))

	tk, err = q.CompareSwap(r, l, 7, 9, m)
	require.NoError(t, err)
	w = ctrl(&wqeBytes{}, 1, 0x11, testQPN<<8|4, 0x08, 0)
	raddrSeg(w, 16, r.Addr, r.Key).be64(32, 9).be64(40, 7)
	dataSeg(w, 48, 8, l.Key, l.Addr)
	assert.Equal(t, [64]byte(*w), q.WQE(tk), "swap in the first operand, compare in the second")
}

// TestFetchWait: the old value is read from the local buffer once the
// atomic's CQE is there; an error CQE is returned, not spun on.
func TestFetchWait(t *testing.T) {
	m := Mode{Sharing: SharingGPU, Handler: HandlerGPUSMDB}
	q := newHostQP(t, HostConfig{SQWQEs: 16})
	res := make([]byte, 16)
	binary.LittleEndian.PutUint64(res, 0x1122334455667788)
	buf := cBytes(t, res)
	l := Addr{Addr: uint64(uintptr(buf)), Key: 1}
	tk, err := q.FetchAdd(Addr{Addr: 0x1000, Key: 2}, l, 1, m)
	require.NoError(t, err)
	q.Complete(tk, CQEOpReq, 0)
	old, err := q.FetchWaitDirect(tk, l, SharingGPU)
	require.NoError(t, err)
	assert.Equal(t, uint64(0x1122334455667788), old)

	tk, err = q.CompareSwap(Addr{Addr: 0x1000, Key: 2}, l, 0, 1, m)
	require.NoError(t, err)
	errCQE(q, tk, CQEOpReqErr, 0x13, 0)
	var werr error
	returnsWithin(t, bound, "fetch_wait on an error CQE", func() { _, werr = q.FetchWaitDirect(tk, l, SharingGPU) })
	require.ErrorIs(t, werr, syscall.EIO)
}

// TestQuiet: quiet waits for every reserved WQE and reports the QP's failure.
func TestQuiet(t *testing.T) {
	m := Mode{Sharing: SharingGPU, Handler: HandlerGPUSMDB}
	q := newHostQP(t, HostConfig{SQWQEs: 16})
	require.NoError(t, q.QuietDirect(SharingGPU), "nothing posted")
	for i := 0; i < 5; i++ {
		_, err := q.Put(Addr{Addr: 0x1000, Key: 1}, Addr{Addr: 0x2000, Key: 2}, 8, m)
		require.NoError(t, err)
	}
	done := make(chan error, 1)
	go func() { done <- q.QuietDirect(SharingGPU) }()
	for i := uint64(0); i < 4; i++ {
		q.Complete(i, CQEOpReq, 0)
	}
	select {
	case err := <-done:
		t.Fatalf("quiet returned %v with WQE 4 outstanding", err)
	case <-time.After(20 * time.Millisecond):
	}
	q.Complete(4, CQEOpReq, 0)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(bound):
		t.Fatal("quiet did not return after the last completion")
	}

	// A failure is reported, by quiet itself and by every later quiet.
	_, err := q.Put(Addr{Addr: 0x1000, Key: 1}, Addr{Addr: 0x2000, Key: 2}, 8, m)
	require.NoError(t, err)
	errCQE(q, 5, CQEOpReqErr, 0x13, 0)
	require.ErrorIs(t, q.QuietDirect(SharingGPU), syscall.EIO)
	require.ErrorIs(t, q.QuietDirect(SharingGPU), syscall.EIO)

	// With a bound and a WQE that never completes: ETIMEDOUT.
	p := newHostQP(t, HostConfig{SQWQEs: 16})
	p.SetPollTimeout(uint64(10 * time.Millisecond))
	_, err = p.Put(Addr{Addr: 0x1000, Key: 1}, Addr{Addr: 0x2000, Key: 2}, 8, m)
	require.NoError(t, err)
	returnsWithin(t, bound, "quiet with a bound", func() { err = p.QuietDirect(SharingGPU) })
	require.ErrorIs(t, err, syscall.ETIMEDOUT)
	assert.Equal(t, devstruct.QPErrTimeout, p.Error().Status)
}

// TestFenceExt: gdaki_dev_fence posts a NOP carrying the mlx5 fence (fm 2)
// and a CQE request.
func TestFenceExt(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 16})
	tk, err := q.FenceExt(Mode{Sharing: SharingExclusive, Handler: HandlerGPUSMDB})
	require.NoError(t, err)
	want := ctrl(&wqeBytes{}, 0, 0x00, testQPN<<8|1, 0x48, 0)
	assert.Equal(t, [64]byte(*want), q.WQE(tk))
	_, _, pi := q.Indexes()
	assert.Equal(t, uint64(1), pi, "submitted like any operation")
}
