package mlx5

import "fmt"

// RoCE: the RoCE capability structure and
// QUERY_ROCE_ADDRESS (0x760), which tells the RoCE version and
// L3 type of a GID index.

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

// RoCECapFields is the bit layout of RoCECaps, relative to the start of the structure.
var RoCECapFields = struct {
	RoCEAPM                Field // roce_apm
	SWRRoCESrcUDPPort      Field // sw_r_roce_src_udp_port
	FLRCQPWhenRoCEDisabled Field // fl_rc_qp_when_roce_disabled
	FLRCQPWhenRoCEEnabled  Field // fl_rc_qp_when_roce_enabled
	QPTSFormat             Field // qp_ts_format
	L3Type                 Field // l3_type
	RoCEVersion            Field // roce_version
	RRoCEDestUDPPort       Field // r_roce_dest_udp_port
	RRoCEMaxSrcUDPPort     Field // r_roce_max_src_udp_port
	RRoCEMinSrcUDPPort     Field // r_roce_min_src_udp_port
	RoCEAddressTableSize   Field // roce_address_table_size
}{
	RoCEAPM:                F(0x000, 1),
	SWRRoCESrcUDPPort:      F(0x004, 1),
	FLRCQPWhenRoCEDisabled: F(0x005, 1),
	FLRCQPWhenRoCEEnabled:  F(0x006, 1),
	QPTSFormat:             F(0x01e, 2),
	L3Type:                 F(0x08c, 4),
	RoCEVersion:            F(0x098, 8),
	RRoCEDestUDPPort:       F(0x0b0, 16),
	RRoCEMaxSrcUDPPort:     F(0x0c0, 16),
	RRoCEMinSrcUDPPort:     F(0x0d0, 16),
	RoCEAddressTableSize:   F(0x0f0, 16),
}

// RoCECaps is the RoCE capability structure (roce_cap, cap type 4).
// L3Type and RoCEVersion are bit masks (RoCEL3* and RoCEVersion*Bit).
type RoCECaps struct {
	RoCEAPM                bool   // roce_apm
	SWRRoCESrcUDPPort      bool   // sw_r_roce_src_udp_port
	FLRCQPWhenRoCEDisabled bool   // fl_rc_qp_when_roce_disabled
	FLRCQPWhenRoCEEnabled  bool   // fl_rc_qp_when_roce_enabled
	QPTSFormat             uint8  // qp_ts_format
	L3Type                 uint8  // l3_type
	RoCEVersion            uint8  // roce_version
	RRoCEDestUDPPort       uint16 // r_roce_dest_udp_port
	RRoCEMaxSrcUDPPort     uint16 // r_roce_max_src_udp_port
	RRoCEMinSrcUDPPort     uint16 // r_roce_min_src_udp_port
	RoCEAddressTableSize   uint16 // roce_address_table_size
}

func (x *RoCECaps) bindings() []binding {
	return []binding{
		bindBool("roce_apm", RoCECapFields.RoCEAPM, &x.RoCEAPM),
		bindBool("sw_r_roce_src_udp_port", RoCECapFields.SWRRoCESrcUDPPort, &x.SWRRoCESrcUDPPort),
		bindBool("fl_rc_qp_when_roce_disabled", RoCECapFields.FLRCQPWhenRoCEDisabled, &x.FLRCQPWhenRoCEDisabled),
		bindBool("fl_rc_qp_when_roce_enabled", RoCECapFields.FLRCQPWhenRoCEEnabled, &x.FLRCQPWhenRoCEEnabled),
		bindUint("qp_ts_format", RoCECapFields.QPTSFormat, &x.QPTSFormat),
		bindUint("l3_type", RoCECapFields.L3Type, &x.L3Type),
		bindUint("roce_version", RoCECapFields.RoCEVersion, &x.RoCEVersion),
		bindUint("r_roce_dest_udp_port", RoCECapFields.RRoCEDestUDPPort, &x.RRoCEDestUDPPort),
		bindUint("r_roce_max_src_udp_port", RoCECapFields.RRoCEMaxSrcUDPPort, &x.RRoCEMaxSrcUDPPort),
		bindUint("r_roce_min_src_udp_port", RoCECapFields.RRoCEMinSrcUDPPort, &x.RRoCEMinSrcUDPPort),
		bindUint("roce_address_table_size", RoCECapFields.RoCEAddressTableSize, &x.RoCEAddressTableSize),
	}
}

// Encode writes the RoCE caps into b (at least CapLen bytes).
func (x RoCECaps) Encode(b []byte) error {
	return encodeFields("encode roce_cap", b, CapLen, x.bindings())
}

// DecodeRoCECaps reads RoCE caps from b (at least CapLen bytes).
func DecodeRoCECaps(b []byte) (RoCECaps, error) {
	var x RoCECaps
	err := decodeFields("decode roce_cap", b, CapLen, x.bindings())
	return x, err
}

// CapType reports the capability type of the structure.
func (RoCECaps) CapType() CapType { return CapRoCE }

// RoCEVersion is roce_addr_layout.roce_version of one GID entry.
type RoCEVersion uint8

const (
	RoCEv1   RoCEVersion = 0
	RoCEv1_5 RoCEVersion = 1
	RoCEv2   RoCEVersion = 2
)

var roceVersionNames = map[uint8]string{0: "RoCEv1", 1: "RoCEv1.5", 2: "RoCEv2"}

func (v RoCEVersion) String() string { return enumString(roceVersionNames, "ROCE_VERSION", uint8(v)) }

// RoCEL3Type is roce_addr_layout.roce_l3_type.
type RoCEL3Type uint8

const (
	RoCEL3IPv4 RoCEL3Type = 0
	RoCEL3IPv6 RoCEL3Type = 1
)

var roceL3Names = map[uint8]string{0: "IPv4", 1: "IPv6"}

func (t RoCEL3Type) String() string { return enumString(roceL3Names, "ROCE_L3_TYPE", uint8(t)) }

// Sizes and positions of the QUERY_ROCE_ADDRESS layouts.
const (
	QueryRoCEAddressInLen  = 16
	QueryRoCEAddressOutLen = 48
	RoCEAddrLen            = 32
	RoCEAddrMailboxBit     = 0x80
	roceAddrMailboxByte    = RoCEAddrMailboxBit / 8
)

// RoCEAddrFields is the layout of roce_addr_layout (one GID table entry).
// SourceMAC covers source_mac_47_32 and source_mac_31_0, which are
// contiguous in wire order.
var RoCEAddrFields = struct {
	SourceL3Address Field // source_l3_address (16 bytes)
	VLANValid       Field // vlan_valid
	VLANID          Field // vlan_id
	SourceMAC       Field // source_mac_47_32 + source_mac_31_0 (6 bytes)
	RoCEL3Type      Field // roce_l3_type
	RoCEVersion     Field // roce_version
}{
	SourceL3Address: F(0x00, 128),
	VLANValid:       F(0x83, 1),
	VLANID:          F(0x84, 12),
	SourceMAC:       F(0x90, 48),
	RoCEL3Type:      F(0xd4, 4),
	RoCEVersion:     F(0xd8, 8),
}

// RoCEAddr is one GID table entry as QUERY_ROCE_ADDRESS reports it.
type RoCEAddr struct {
	SourceL3Address [16]byte // the GID (IPv4 as ::ffff:a.b.c.d), network order
	VLANValid       bool
	VLANID          uint16
	SourceMAC       [6]byte
	RoCEL3Type      RoCEL3Type
	RoCEVersion     RoCEVersion
}

func (x *RoCEAddr) bindings() []binding {
	f := RoCEAddrFields
	return []binding{
		bindRaw("source_l3_address", f.SourceL3Address, x.SourceL3Address[:]),
		bindBool("vlan_valid", f.VLANValid, &x.VLANValid),
		bindUint("vlan_id", f.VLANID, &x.VLANID),
		bindRaw("source_mac", f.SourceMAC, x.SourceMAC[:]),
		bindUint("roce_l3_type", f.RoCEL3Type, &x.RoCEL3Type),
		bindUint("roce_version", f.RoCEVersion, &x.RoCEVersion),
	}
}

// Encode writes the entry into b (at least 32 bytes).
func (x RoCEAddr) Encode(b []byte) error {
	return encodeFields("encode roce_addr_layout", b, RoCEAddrLen, x.bindings())
}

// DecodeRoCEAddr reads an entry from b (at least 32 bytes).
func DecodeRoCEAddr(b []byte) (RoCEAddr, error) {
	var x RoCEAddr
	err := decodeFields("decode roce_addr_layout", b, RoCEAddrLen, x.bindings())
	return x, err
}

// QueryRoCEAddressInFields is the input layout beyond the header.
var QueryRoCEAddressInFields = struct {
	RoCEAddressIndex Field // roce_address_index
	VHCAPortNum      Field // vhca_port_num
}{
	RoCEAddressIndex: F(0x40, 16),
	VHCAPortNum:      F(0x5c, 4),
}

// QueryRoCEAddressIn asks for GID table entry RoCEAddressIndex.
type QueryRoCEAddressIn struct {
	CmdHeader
	RoCEAddressIndex uint16
	VHCAPortNum      uint8
}

func (in *QueryRoCEAddressIn) bindings() []binding {
	f := QueryRoCEAddressInFields
	return []binding{
		bindUint("roce_address_index", f.RoCEAddressIndex, &in.RoCEAddressIndex),
		bindUint("vhca_port_num", f.VHCAPortNum, &in.VHCAPortNum),
	}
}

// Marshal builds the 16-byte mailbox.
func (in QueryRoCEAddressIn) Marshal() ([]byte, error) {
	const name = "QUERY_ROCE_ADDRESS in"
	b, err := marshalIn(name, in.CmdHeader, OpQueryRoCEAddress, QueryRoCEAddressInLen)
	if err != nil {
		return nil, err
	}
	if err := encodeFields("marshal "+name, b, QueryRoCEAddressInLen, in.bindings()); err != nil {
		return nil, err
	}
	return b, nil
}

// UnmarshalQueryRoCEAddressIn parses the input.
func UnmarshalQueryRoCEAddressIn(b []byte) (QueryRoCEAddressIn, error) {
	const name = "QUERY_ROCE_ADDRESS in"
	var in QueryRoCEAddressIn
	h, err := unmarshalIn(name, b, OpQueryRoCEAddress, QueryRoCEAddressInLen)
	if err != nil {
		return in, err
	}
	in.CmdHeader = h
	err = decodeFields("unmarshal "+name, b, QueryRoCEAddressInLen, in.bindings())
	return in, err
}

// QueryRoCEAddressOut is the 48-byte output.
type QueryRoCEAddressOut struct {
	OutHeader
	Addr RoCEAddr
}

// Marshal builds the 48-byte output mailbox.
func (o QueryRoCEAddressOut) Marshal() ([]byte, error) {
	b := make([]byte, QueryRoCEAddressOutLen)
	_ = o.OutHeader.Encode(b)
	if err := o.Addr.Encode(b[roceAddrMailboxByte:]); err != nil {
		return nil, err
	}
	return b, nil
}

// UnmarshalQueryRoCEAddressOut parses the output.
func UnmarshalQueryRoCEAddressOut(b []byte) (QueryRoCEAddressOut, error) {
	var o QueryRoCEAddressOut
	h, err := unmarshalOut("QUERY_ROCE_ADDRESS out", b, QueryRoCEAddressOutLen)
	if err != nil {
		return o, err
	}
	o.OutHeader = h
	o.Addr, err = DecodeRoCEAddr(b[roceAddrMailboxByte:])
	return o, err
}

// String formats the entry for logs.
func (x RoCEAddr) String() string {
	return fmt.Sprintf("%v %v gid %x mac %x vlan %v/%d", x.RoCEVersion, x.RoCEL3Type,
		x.SourceL3Address, x.SourceMAC, x.VLANValid, x.VLANID)
}
