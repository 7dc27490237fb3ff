package verbs

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	assert.Equal(t, uint32(0), optParams(QPStateRST, QPStateINIT, all))
	assert.Equal(t, uint32(optRRE|optRAE|optRWE|optPKeyIndex|optPriPort), optParams(QPStateINIT, QPStateINIT, all))
	assert.Equal(t, uint32(optRRE|optRAE|optRWE|optPKeyIndex), optParams(QPStateINIT, QPStateRTR, all))
	assert.Equal(t, uint32(optRAE|optRWE|optRNRTimer), optParams(QPStateRTR, QPStateRTS, all))
	assert.Equal(t, uint32(optRRE|optRAE|optRWE|optRNRTimer|optDSCP|optSGIDIndex), optParams(QPStateRTS, QPStateRTS, all))
	// DOCA 3.0: the RAE bit (1<<2) follows ATOMIC_MODE alone, in the four
	// transitions after RST -> INIT, which writes no optional mask.
	assert.Equal(t, uint32(1<<2), uint32(optRAE))
	for _, tr := range [][2]QPState{{QPStateINIT, QPStateINIT}, {QPStateINIT, QPStateRTR}, {QPStateRTR, QPStateRTS}, {QPStateRTS, QPStateRTS}} {
		assert.Equal(t, uint32(optRAE), optParams(tr[0], tr[1], QPAttrAtomicMode), "%v -> %v", tr[0], tr[1])
	}
	assert.Zero(t, optParams(QPStateRST, QPStateINIT, QPAttrAtomicMode))
	assert.Equal(t, uint32(0), optParams(QPStateRTR, QPStateRTS, QPAttrSQPSN))
}
