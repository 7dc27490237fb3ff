package verbs

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/doclog"
	"github.com/gdaki/gpunetio/internal/mlx5"
)

// The PRM bytes of each transition: rae and atomic_mode are written only
// with the ATOMIC_MODE mask bit (DOCA 3.0), and the optional-parameter bit
// RAE goes with it after RST -> INIT.
func TestModifyAtomicModePRM(t *testing.T) {
	for _, tc := range []struct {
		from, to  QPState
		setAtomic bool
		mode      AtomicMode
		rae       bool
	}{
		{QPStateRST, QPStateINIT, false, AtomicIBSpec, false},
		{QPStateRST, QPStateINIT, true, AtomicIBSpec, true},
		{QPStateRST, QPStateINIT, true, AtomicNone, false},
		{QPStateINIT, QPStateRTR, false, AtomicUpTo8Bytes, false},
		{QPStateINIT, QPStateRTR, true, AtomicUpTo256Bytes, true},
		{QPStateRTR, QPStateRTS, true, AtomicOnly8Bytes, true},
		{QPStateRTS, QPStateRTS, true, AtomicUpTo16Bytes, true},
		{QPStateINIT, QPStateINIT, true, AtomicUpTo64Bytes, true},
	} {
		p := modifyParams{qpn: 0x42, from: tc.from, to: tc.to, setAccess: true, atomic: tc.mode, setAtomic: tc.setAtomic,
			mtu: MTU4096, rtr: tc.to == QPStateRTR && tc.from == QPStateINIT}
		var mask QPAttrMask
		if tc.setAtomic {
			mask = QPAttrAtomicMode
		}
		p.optMask = optParams(tc.from, tc.to, mask)
		b, _, err := prmModifyQP(p)
		require.NoError(t, err)
		in, err := mlx5.UnmarshalModifyQPIn(b)
		require.NoError(t, err)
		assert.Equal(t, tc.rae, in.QPC.RAE, "%v -> %v, bit %v, mode %v: rae", tc.from, tc.to, tc.setAtomic, tc.mode)
		wantMode := mlx5.AtomicMode(0)
		if tc.rae {
			wantMode = mlx5.AtomicMode(tc.mode)
		}
		assert.Equal(t, wantMode, in.QPC.AtomicMode, "%v -> %v: atomic_mode written verbatim with the bit", tc.from, tc.to)
		wantOpt := uint32(0)
		if tc.setAtomic && tc.from != QPStateRST {
			wantOpt = optRAE
		}
		assert.Equal(t, wantOpt, uint32(in.OptParamMask), "%v -> %v: opt_param_mask", tc.from, tc.to)
	}
}

// logCapture collects what the shared logger prints at level 4 and below.
type logCapture struct {
	mu    sync.Mutex
	lines []string
}

func (c *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (c *logCapture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	c.lines = append(c.lines, r.Message)
	c.mu.Unlock()
	return nil
}
func (c *logCapture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *logCapture) WithGroup(string) slog.Handler      { return c }

func (c *logCapture) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

// captureLog sends the shared logger's messages of level <= lvl to a
// capture until the test ends.
func captureLog(t *testing.T, lvl int32) *logCapture {
	c := &logCapture{}
	old := doclog.Level()
	doclog.SetLevel(lvl)
	doclog.SetLogger(slog.New(c))
	t.Cleanup(func() {
		doclog.SetLevel(old)
		doclog.SetLogger(slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
	})
	return c
}

// connect2x moves qp to RTS the DOCA 2.0 way: RemoteAtomic set but no
// ATOMIC_MODE bit in any mask.
func connect2x(t *testing.T, qp *QP, peerQPN uint32, peerGID GID) {
	t.Helper()
	a := QPAttr{NextState: QPStateINIT, PortNum: 1, AllowRemoteWrite: true, AllowRemoteRead: true, RemoteAtomic: AtomicIBSpec,
		PathMTU: MTU4096, DestQPNum: peerQPN, MinRNRTimer: 1, AckTimeout: 14, RetryCnt: 7, RNRRetry: 7, RQPSN: 0x123, SQPSN: 0x123,
		AH: &AHAttr{GID: peerGID, AddrType: AddrTypeIPv4, HopLimit: 64}}
	require.NoError(t, qp.Modify(&a, QPAttrNextState|QPAttrPKeyIndex|QPAttrPortNum|QPAttrAllowRemoteWrite|QPAttrAllowRemoteRead))
	a.NextState = QPStateRTR
	require.NoError(t, qp.Modify(&a, QPAttrNextState|QPAttrPathMTU|QPAttrRQPSN|QPAttrDestQPNum|QPAttrAHAttr|QPAttrMinRNRTimer))
	a.NextState = QPStateRTS
	require.NoError(t, qp.Modify(&a, QPAttrNextState|QPAttrSQPSN|QPAttrAckTimeout|QPAttrRetryCnt|QPAttrRNRRetry))
}

func fetchAdd(t *testing.T, a, b *end) error {
	t.Helper()
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 7, Opcode: WRAtomicFetchAdd, Signaled: true, Compare: 1,
		SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(64), RKey: b.mr.RKey()}))
	return waitWC(t, a.cq, 1)[0].Err()
}

// A responder whose atomic mode was set without the ATOMIC_MODE bit, as a
// DOCA 2.0 program does, has no atomics enabled: the requester's atomic
// completes with a remote access error, as on a ConnectX (the responder
// NAKs it), and INIT -> RTR logged DOCA 3.0's warning about the missing
// bit.
func TestAtomicWithoutAtomicMode(t *testing.T) {
	logs := captureLog(t, doclog.Warning)
	o := defaultPairOpts()
	a, b := newEnd(t, "emu0", o), newEnd(t, "emu1", o)
	connect(t, a, b, o)
	connect2x(t, b.qp, a.qp.QPN(), a.gid)
	assert.Contains(t, logs.all(), "verbs_qp_attr atomic_mode is set but attr_mask flag DOCA_VERBS_QP_ATTR_ATOMIC_MODE is not set")

	err := fetchAdd(t, a, b)
	require.Error(t, err)
	assert.True(t, errors.Is(err, WCRemAccessErr), "want IBV_WC_REM_ACCESS_ERR, got %v", err)
	var ce *CompletionError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, uint64(7), ce.WRID)
	assert.Equal(t, QPStateERR, a.qp.State(), "the requester's QP is in error after it")
}

// The ATOMIC_MODE bit in a later transition (RTS -> RTS, optional
// parameter RAE) enables atomics on a QP connected without them.
func TestAtomicModeEnabledLater(t *testing.T) {
	o := defaultPairOpts()
	a, b := newEnd(t, "emu0", o), newEnd(t, "emu1", o)
	connect(t, a, b, o)
	connect2x(t, b.qp, a.qp.QPN(), a.gid)
	require.NoError(t, b.qp.Modify(&QPAttr{NextState: QPStateRTS, RemoteAtomic: AtomicIBSpec}, QPAttrNextState|QPAttrAtomicMode))
	require.NoError(t, fetchAdd(t, a, b))
	// ... and with the bit and AtomicNone, disables them again.
	require.NoError(t, b.qp.Modify(&QPAttr{NextState: QPStateRTS, RemoteAtomic: AtomicNone}, QPAttrNextState|QPAttrAtomicMode))
	assert.ErrorIs(t, fetchAdd(t, a, b), WCRemAccessErr)
}

// With the bit at RST -> INIT there is no warning, and atomics work (the
// harness connects this way); the nine 3.0 modes are accepted, a tenth is
// not.
func TestAtomicModeValues(t *testing.T) {
	logs := captureLog(t, doclog.Warning)
	o := defaultPairOpts()
	a, b := newPair(t, o)
	require.NoError(t, fetchAdd(t, a, b))
	assert.Empty(t, logs.all())
	for m := AtomicNone; m <= AtomicUpTo256Bytes; m++ {
		assert.True(t, m.valid(), "%v", m)
		assert.NotContains(t, m.String(), "AtomicMode(")
	}
	assert.False(t, AtomicMode(9).valid())
	assert.Equal(t, "ATOMIC_MODE", QPAttrAtomicMode.String())
	assert.Equal(t, QPAttrMask(1<<15), QPAttrAtomicMode)
}
