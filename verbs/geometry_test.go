package verbs

import (
	"errors"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

func TestSizeSQ(t *testing.T) {
	cases := []struct {
		name                string
		wr, sges, inline    uint32
		wantWQE, wantWQEBBs uint64
		wantCap, wantInline uint32
		wantErr             bool
	}{
		// The high-level path: one SGE, no inline: 48 -> 64 bytes, one WQEBB per WR.
		{name: "hl 1 sge", wr: 100, sges: 1, wantWQE: 64, wantWQEBBs: 128, wantCap: 128},
		{name: "power of two", wr: 256, sges: 1, wantWQE: 64, wantWQEBBs: 256, wantCap: 256},
		// 3 SGEs: 16+16+48 = 80 -> 128 bytes, 2 WQEBBs per WR.
		{name: "3 sges", wr: 10, sges: 3, wantWQE: 128, wantWQEBBs: 32, wantCap: 16},
		// inline 60: 32 + align16(64) = 96 -> 128; capacity rewritten to 128-36.
		{name: "inline 60", wr: 4, sges: 1, inline: 60, wantWQE: 128, wantWQEBBs: 8, wantCap: 4, wantInline: 92},
		{name: "no sges", wr: 4, sges: 0, wantErr: true},
		{name: "wqe too big", wr: 4, sges: 63, wantErr: true}, // 16+16+63*16 = 1040 > 1024,
		{name: "inline too big", wr: 4, sges: 1, inline: 2000, wantErr: true},
		{name: "ring too big", wr: 1 << 16, sges: 1, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := sizeSQ("test", c.wr, c.sges, c.inline, 1024, 1<<15)
			if c.wantErr {
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrInvalidValue))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.wantWQE, g.wqeSize)
			assert.Equal(t, c.wantWQEBBs, g.wqebbs)
			assert.Equal(t, log2(c.wantWQEBBs), g.logSize)
			assert.Equal(t, c.wantCap, g.wrCap)
			assert.Equal(t, c.wantInline, g.maxInline)
		})
	}
}

func TestSizeRQ(t *testing.T) {
	g, err := sizeRQ("test", 3, 3, 1<<15, 512)
	require.NoError(t, err)
	assert.Equal(t, uint32(4), g.sges)
	assert.Equal(t, uint64(64), g.wqeSize)
	assert.Equal(t, uint32(2), g.logStride)
	assert.Equal(t, uint64(256), g.bytes)
	assert.Equal(t, uint64(4), g.entries)
	// Tiny queues are at least 64 bytes.
	g, err = sizeRQ("test", 1, 1, 1<<15, 512)
	require.NoError(t, err)
	assert.Equal(t, uint64(64), g.bytes)
	assert.Equal(t, uint64(4), g.entries)
	_, err = sizeRQ("test", 1<<16, 1, 1<<15, 512)
	assert.ErrorIs(t, err, ErrInvalidValue)
	_, err = sizeRQ("test", 4, 64, 1<<15, 512)
	assert.ErrorIs(t, err, ErrInvalidValue)
}

func TestSizeSRQ(t *testing.T) {
	g := sizeSRQ(SRQLinkedList, 100, 1)
	assert.Equal(t, uint64(32), g.wqeSize) // 16 + 16 next segment
	assert.Equal(t, uint32(1), g.sges)
	assert.Equal(t, uint64(128), g.entries)
	assert.Equal(t, uint64(128*32), g.dbrOff)
	g = sizeSRQ(SRQContiguous, 10, 3)
	assert.Equal(t, uint64(64), g.wqeSize)
	assert.Equal(t, uint32(4), g.sges)
	assert.Equal(t, uint64(16), g.entries)
}

func TestTransitions(t *testing.T) {
	legal := map[[2]QPState]bool{}
	for _, from := range []QPState{QPStateRST, QPStateINIT, QPStateRTR, QPStateRTS, QPStateERR} {
		for _, to := range []QPState{QPStateRST, QPStateINIT, QPStateRTR, QPStateRTS, QPStateERR} {
			legal[[2]QPState{from, to}] = findTransition(from, to) != nil
		}
	}
	for k, ok := range legal {
		// The PRM's 2ERR_QP moves a QP to ERR from any state, ERR included.
		want := k[1] == QPStateRST || k[1] == QPStateERR ||
			k == [2]QPState{QPStateRST, QPStateINIT} || k == [2]QPState{QPStateINIT, QPStateINIT} ||
			k == [2]QPState{QPStateINIT, QPStateRTR} || k == [2]QPState{QPStateRTR, QPStateRTS} ||
			k == [2]QPState{QPStateRTS, QPStateRTS}
		assert.Equal(t, want, ok, "%v -> %v", k[0], k[1])
	}
	tr := findTransition(QPStateINIT, QPStateRTR)
	missing, extra := tr.checkMask(QPAttrRQPSN | QPAttrPathMTU | QPAttrSQPSN)
	assert.Equal(t, QPAttrDestQPNum|QPAttrAHAttr|QPAttrMinRNRTimer, missing)
	assert.Equal(t, QPAttrSQPSN, extra)
	assert.Equal(t, "MIN_RNR_TIMER|DEST_QP_NUM|AH_ATTR", missing.String())
}

func TestOptParams(t *testing.T) {
	all := QPAttrMask(0x3ffff)
	opt := func(from, to QPState, mask QPAttrMask) mlx5.OptParam {
		tr := findTransition(from, to)
		require.NotNil(t, tr, "%v -> %v", from, to)
		return tr.optParams(mask)
	}
	assert.Equal(t, mlx5.OptParam(0), opt(QPStateRST, QPStateINIT, all))
	assert.Equal(t, mlx5.OptRRE|mlx5.OptRAE|mlx5.OptRWE|mlx5.OptPKeyIndex|mlx5.OptPriPort, opt(QPStateINIT, QPStateINIT, all))
	assert.Equal(t, mlx5.OptRRE|mlx5.OptRAE|mlx5.OptRWE|mlx5.OptPKeyIndex, opt(QPStateINIT, QPStateRTR, all))
	assert.Equal(t, mlx5.OptRAE|mlx5.OptRWE|mlx5.OptRNRTimeout, opt(QPStateRTR, QPStateRTS, all))
	assert.Equal(t, mlx5.OptRRE|mlx5.OptRAE|mlx5.OptRWE|mlx5.OptRNRTimeout|mlx5.OptDSCP|mlx5.OptSGIDIndex, opt(QPStateRTS, QPStateRTS, all))
	// DOCA 3.0: the RAE bit (1<<2) follows ATOMIC_MODE alone, in the four
	// transitions after RST -> INIT, which writes no optional mask.
	assert.Equal(t, uint32(1<<2), uint32(mlx5.OptRAE))
	for _, tr := range [][2]QPState{{QPStateINIT, QPStateINIT}, {QPStateINIT, QPStateRTR}, {QPStateRTR, QPStateRTS}, {QPStateRTS, QPStateRTS}} {
		assert.Equal(t, mlx5.OptRAE, opt(tr[0], tr[1], QPAttrAtomicMode), "%v -> %v", tr[0], tr[1])
	}
	assert.Zero(t, opt(QPStateRST, QPStateINIT, QPAttrAtomicMode))
	assert.Zero(t, opt(QPStateRTR, QPStateRTS, QPAttrSQPSN))
	assert.Zero(t, opt(QPStateRST, QPStateERR, all))
}

// The verbs-side mapping names only qpc fields the PRM layout has, so a
// renamed field cannot silently drop an attribute from the derived table.
func TestAttrFieldsNameQPCFields(t *testing.T) {
	known := map[string]bool{}
	for _, f := range mlx5.QPCFieldNames() {
		known[f] = true
	}
	for bit, a := range attrFields {
		require.NotEmpty(t, a.fields, "%v", bit)
		for _, f := range a.fields {
			assert.True(t, known[f], "%v: %q is not a qpc field", bit, f)
		}
		assert.Equal(t, 1, bits.OnesCount32(uint32(bit)), "%v", bit)
	}
}

// TestModifyERRToERR: 2ERR_QP moves a QP to ERR from any state, ERR
// included, and the device (here the emulated firmware) agrees; ERR is
// left for RST.
func TestModifyERRToERR(t *testing.T) {
	f := newFixture(t, "emu0")
	require.NoError(t, f.qp.Modify(&QPAttr{NextState: QPStateERR}, QPAttrNextState))
	assert.Equal(t, QPStateERR, f.qp.State())
	require.NoError(t, f.qp.Modify(&QPAttr{NextState: QPStateERR}, QPAttrNextState), "ERR -> ERR")
	assert.Equal(t, QPStateERR, f.qp.State())
	a, _, err := f.qp.Query()
	require.NoError(t, err)
	assert.Equal(t, QPStateERR, a.CurrentState, "the device's state")
	require.NoError(t, f.qp.Modify(&QPAttr{NextState: QPStateRST}, QPAttrNextState))
	assert.Equal(t, QPStateRST, f.qp.State())
}
