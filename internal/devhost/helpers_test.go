package devhost

import (
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

const testQPN = 0x1a2b

func newHostQP(t *testing.T, cfg HostConfig) *HostQP {
	t.Helper()
	if cfg.QPN == 0 {
		cfg.QPN = testQPN
	}
	if cfg.CQN == 0 {
		cfg.CQN = 0x400
	}
	if cfg.SQWQEs == 0 {
		cfg.SQWQEs = 64
	}
	if cfg.CQEs == 0 {
		cfg.CQEs = uint32(cfg.SQWQEs)
	}
	if cfg.Handler == HandlerAuto {
		cfg.Handler = HandlerGPUSMDB
	}
	h, err := NewHostQP(cfg)
	require.NoError(t, err)
	t.Cleanup(h.Close)
	return h
}

// wqeBytes builds an expected slot: start from fill, then apply big-endian/verbatim writes.
type wqeBytes [64]byte

func filled(b byte) *wqeBytes {
	var w wqeBytes
	for i := range w {
		w[i] = b
	}
	return &w
}

func (w *wqeBytes) zero(from, to int) *wqeBytes {
	for i := from; i < to; i++ {
		w[i] = 0
	}
	return w
}

func (w *wqeBytes) be32(off int, v uint32) *wqeBytes {
	binary.BigEndian.PutUint32(w[off:], v)
	return w
}

func (w *wqeBytes) be64(off int, v uint64) *wqeBytes {
	binary.BigEndian.PutUint64(w[off:], v)
	return w
}

// raw32 stores v as the GPU would store a native uint32 (little-endian memory image).
func (w *wqeBytes) raw32(off int, v uint32) *wqeBytes {
	binary.LittleEndian.PutUint32(w[off:], v)
	return w
}

func (w *wqeBytes) raw64(off int, v uint64) *wqeBytes {
	binary.LittleEndian.PutUint64(w[off:], v)
	return w
}

func (w *wqeBytes) bytes(off int, b []byte) *wqeBytes {
	copy(w[off:], b)
	return w
}

// parseRows parses "offset: dw0 dw1 dw2 dw3" rows (the PRM's WQE dumps); missing rows are zero.
func parseRows(t *testing.T, rows string) [64]byte {
	t.Helper()
	var out [64]byte
	for _, line := range strings.Split(strings.TrimSpace(rows), "\n") {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 2)
		require.Len(t, parts, 2, line)
		off, err := hex.DecodeString(parts[0])
		require.NoError(t, err)
		b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(parts[1]), " ", ""))
		require.NoError(t, err)
		copy(out[int(off[0])<<8|int(off[1]):], b)
	}
	return out
}

// key returns the verbatim key a caller passes so that the WQE holds BE32(k).
func key(k uint32) uint32 { return bits.ReverseBytes32(k) }

// cBytes copies data into C memory freed at the end of the test.
func cBytes(t *testing.T, data []byte) unsafe.Pointer {
	t.Helper()
	b := NewCBuffer(data)
	t.Cleanup(b.Free)
	return b.Pointer()
}

// cqRsvd reads cq_sq.cqe_rsvd.
func (h *HostQP) cqRsvd() uint64 { return *h.u64(offCQRsvd) }

// clearCQFlags clears cq_sq.gdaki_flags, as in a QP image a host filled
// without the extension.
func (h *HostQP) clearCQFlags() {
	*(*byte)(unsafe.Add(unsafe.Pointer(h.p), offCQFlags)) = 0
}
