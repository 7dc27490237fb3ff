package emu

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// qpTable finds every QP it was built with and nothing else, for sets of
// QPNs in sequence (as handed out), scattered, and colliding in the
// table's low bits; lookups of absent QPNs end (the table is never full).
func TestQPTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 100, 1000} {
		for _, kind := range []string{"sequence", "scattered", "strided"} {
			m := make(map[uint32]*qp, n)
			for i := 0; len(m) < n; i++ {
				var k uint32
				switch kind {
				case "sequence":
					k = 0x100 + uint32(i)
				case "scattered":
					k = 2 + rng.Uint32N(mask24-1)
				default:
					k = 2 + uint32(i)<<12
				}
				m[k] = &qp{qpn: k}
			}
			tab := newQPTable(m)
			if len(tab.keys) < 2*n {
				t.Fatalf("%d QPs (%s): table of %d slots, more than half full", n, kind, len(tab.keys))
			}
			for k, q := range m {
				if got := tab.get(k); got != q {
					t.Fatalf("%d QPs (%s): get(0x%x) = %p, want %p", n, kind, k, got, q)
				}
			}
			for i := 0; i < 1000; i++ {
				k := rng.Uint32N(1 << 24)
				if i == 0 {
					k = 0
				}
				if _, ok := m[k]; !ok && tab.get(k) != nil {
					t.Fatalf("%d QPs (%s): get(0x%x) found a QP that is not there", n, kind, k)
				}
			}
		}
	}
}

// BenchmarkQPLookup: a lookup of a QP by QPN in qpTable against a Go map
// of the same QPs (what qpByNum used before), for a NIC with few QPs and
// one with many; the QPNs looked up cycle through all of them.
func BenchmarkQPLookup(b *testing.B) {
	for _, n := range []int{2, 64} {
		m := make(map[uint32]*qp, n)
		keys := make([]uint32, 0, n)
		for i := 0; i < n; i++ {
			k := uint32(0x100 + i)
			m[k] = &qp{qpn: k}
			keys = append(keys, k)
		}
		tab := newQPTable(m)
		var sink *qp
		b.Run(fmt.Sprintf("map/%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink = m[keys[i%n]]
			}
		})
		b.Run(fmt.Sprintf("table/%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink = tab.get(keys[i%n])
			}
		})
		if sink == nil {
			b.Fatal("a lookup found nothing")
		}
	}
}
