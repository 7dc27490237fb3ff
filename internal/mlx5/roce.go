package mlx5

import "fmt"

// RoCE: the RoCE capability structure and QUERY_ROCE_ADDRESS (0x760), which
// tells the RoCE version and L3 type of a GID index. The structures, the
// enums, QUERY_ROCE_ADDRESS in and out and the sizes are generated from
// prm/roce.prm (roce_gen.go).

// RoCECaps mask bits.
const (
	RoCEL3IPv4Bit     = 1 << 1 // l3_type: IPv4 supported
	RoCEL3IPv6Bit     = 1 << 2 // l3_type: IPv6 supported
	RoCEVersion1Bit   = 1 << 0 // roce_version: RoCE v1
	RoCEVersion1_5Bit = 1 << 1 // roce_version: RoCE v1.5
	RoCEVersion2Bit   = 1 << 2 // roce_version: RoCE v2
	// RoCEv2DestUDPPort is the IANA RoCE v2 port (r_roce_dest_udp_port).
	RoCEv2DestUDPPort = 4791
)

// CapType reports the capability type of the structure.
func (RoCECaps) CapType() CapType { return CapRoCE }

// String formats the entry for logs.
func (x RoCEAddr) String() string {
	return fmt.Sprintf("%v %v gid %x mac %x vlan %v/%d", x.RoCEVersion, x.RoCEL3Type,
		x.SourceL3Address, x.SourceMAC, x.VLANValid, x.VLANID)
}
