package wire

import (
	"net/netip"
	"os"
	"sync/atomic"
)

// loopbackSeq numbers the loopback addresses this process tries.
var loopbackSeq atomic.Uint32

// nextLoopback returns a loopback address 127.x.y.z for this process. The
// first 16 of a process are (pid mod 2^20) * 16 + n, so they differ between
// processes whose pids differ modulo 2^20; later ones are hashed. Listen
// skips one that is in use. 127.0.0.1 and addresses ending in .0 or .255
// are never returned.
func nextLoopback() netip.Addr {
	pid := uint32(os.Getpid())
	for {
		n := loopbackSeq.Add(1) - 1
		var v uint32
		if n < 16 {
			v = (pid&0xfffff)<<4 | n
		} else {
			v = (pid*0x9e3779b1 ^ n*0x85ebca6b) * 0xc2b2ae35
			v ^= v >> 15
		}
		v &= 0xffffff
		a := netip.AddrFrom4([4]byte{127, byte(v >> 16), byte(v >> 8), byte(v)})
		if z := byte(v); z == 0 || z == 255 || a == netip.AddrFrom4([4]byte{127, 0, 0, 1}) {
			continue
		}
		return a
	}
}
