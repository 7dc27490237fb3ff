package wire

import "net/netip"

// GID is a 16-byte global identifier in network order, the same bytes as
// mlx5.GID (convert with wire.GID(g) / mlx5.GID(g)). This package uses its own
// type so that it depends on nothing but the standard library.
type GID [16]byte

// GIDFromIPv4 is the RoCE v2 IPv4-mapped GID ::ffff:a.b.c.d of an IPv4
// address (a RoCE v2 GID of an IPv4 address). It panics if a is not IPv4.
func GIDFromIPv4(a netip.Addr) GID {
	if !a.Is4() {
		panic("wire: GIDFromIPv4 of a non-IPv4 address " + a.String())
	}
	return GID(a.As16())
}

// IPv4 returns the IPv4 address of an IPv4-mapped GID; ok is false for any
// other GID.
func (g GID) IPv4() (a netip.Addr, ok bool) {
	a = netip.AddrFrom16(g)
	if !a.Is4In6() {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// String formats the GID as an IPv6 address (::ffff:a.b.c.d for an
// IPv4-mapped GID).
func (g GID) String() string {
	if a, ok := g.IPv4(); ok {
		return "::ffff:" + a.String()
	}
	return netip.AddrFrom16(g).String()
}
