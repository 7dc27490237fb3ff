package emu

import "math/bits"

// qpTable is the NIC's QPs by QPN as the data path looks them up (every
// request a wire reader hands over, every doorbell, every response): an
// open-addressed table, built once per change of the QP set and never
// written after (refreshQPs publishes a new one), at most half full. A
// lookup is a multiplication and, nearly always, one or two compares of
// adjacent keys, where a Go map lookup hashed the key and scanned a group
// (about a tenth of a request's CPU in BenchmarkRespondWrite64).
type qpTable struct {
	shift uint     // 32 - log2(len(keys))
	keys  []uint32 // 0 marks a free slot: QPN 0 is never handed out
	qps   []*qp
}

// newQPTable builds the table of m (whose keys are QPNs, none zero).
func newQPTable(m map[uint32]*qp) *qpTable {
	size := 8
	for size < 2*len(m) {
		size <<= 1
	}
	t := &qpTable{shift: uint(32 - bits.TrailingZeros(uint(size))), keys: make([]uint32, size), qps: make([]*qp, size)}
	mask := uint32(size - 1)
	for k, q := range m {
		if k == 0 {
			continue // not a QPN (ids.qp starts at 2)
		}
		i := t.slot(k)
		for t.keys[i] != 0 {
			i = (i + 1) & mask
		}
		t.keys[i], t.qps[i] = k, q
	}
	return t
}

// slot is where the search for qpn starts (Fibonacci hashing: QPNs are
// handed out in sequence, and the multiplication spreads them).
func (t *qpTable) slot(qpn uint32) uint32 { return qpn * 0x9e3779b1 >> t.shift }

// get returns the QP of qpn, or nil.
func (t *qpTable) get(qpn uint32) *qp {
	if qpn == 0 {
		return nil
	}
	mask := uint32(len(t.keys) - 1)
	for i := t.slot(qpn); ; i = (i + 1) & mask {
		switch t.keys[i] {
		case qpn:
			return t.qps[i]
		case 0:
			return nil
		}
	}
}
