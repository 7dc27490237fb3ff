package verbs

import (
	"fmt"
	"strings"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// QPType is the transport service type (DOCA_VERBS_QP_TYPE_*).
type QPType uint32

const (
	QPTypeRC QPType = 0x0 // reliable connection (DOCA_VERBS_QP_TYPE_RC)
	QPTypeUC QPType = 0x1 // unreliable connection (an extension: DOCA Verbs creates RC only)
)

func (t QPType) String() string {
	switch t {
	case QPTypeRC:
		return "RC"
	case QPTypeUC:
		return "UC"
	}
	return fmt.Sprintf("QPType(%d)", uint32(t))
}

// QPState is a QP state as DOCA Verbs numbers them (enum doca_verbs_qp_state).
// The PRM numbers ERR differently (6); conversions are internal.
type QPState uint32

const (
	QPStateRST  QPState = 0x0
	QPStateINIT QPState = 0x1
	QPStateRTR  QPState = 0x2
	QPStateRTS  QPState = 0x3
	QPStateERR  QPState = 0x4
)

func (s QPState) String() string {
	switch s {
	case QPStateRST:
		return "RST"
	case QPStateINIT:
		return "INIT"
	case QPStateRTR:
		return "RTR"
	case QPStateRTS:
		return "RTS"
	case QPStateERR:
		return "ERR"
	}
	return fmt.Sprintf("QPState(%d)", uint32(s))
}

func (s QPState) valid() bool { return s <= QPStateERR }

// AddrType is the address type of an AH (enum doca_verbs_addr_type).
type AddrType uint32

const (
	AddrTypeIPv4    AddrType = 0 // RoCE with an IPv4(-mapped) GID
	AddrTypeIPv6    AddrType = 1 // RoCE with an IPv6 GID
	AddrTypeIBGRH   AddrType = 2 // InfiniBand with a GRH
	AddrTypeIBNoGRH AddrType = 3 // InfiniBand, LID routed
)

func (a AddrType) String() string {
	switch a {
	case AddrTypeIPv4:
		return "IPv4"
	case AddrTypeIPv6:
		return "IPv6"
	case AddrTypeIBGRH:
		return "IB_GRH"
	case AddrTypeIBNoGRH:
		return "IB_NO_GRH"
	}
	return fmt.Sprintf("AddrType(%d)", uint32(a))
}

func (a AddrType) roce() bool { return a == AddrTypeIPv4 || a == AddrTypeIPv6 }

// MTU is a path MTU (enum doca_verbs_mtu_size). The PRM encoding is one more.
type MTU uint32

const (
	MTU256         MTU = 0x0
	MTU512         MTU = 0x1
	MTU1024        MTU = 0x2
	MTU2048        MTU = 0x3
	MTU4096        MTU = 0x4
	MTURawEthernet MTU = 0x5 // reserved; rejected by Modify
)

// Bytes returns the MTU in bytes (0 for MTURawEthernet or unknown values).
func (m MTU) Bytes() int {
	if m <= MTU4096 {
		return 256 << m
	}
	return 0
}

func (m MTU) String() string {
	if b := m.Bytes(); b > 0 {
		return fmt.Sprintf("%d", b)
	}
	if m == MTURawEthernet {
		return "RAW_ETHERNET"
	}
	return fmt.Sprintf("MTU(%d)", uint32(m))
}

// MTUFromBytes maps 256..4096 to an MTU.
func MTUFromBytes(n int) (MTU, error) {
	for m := MTU256; m <= MTU4096; m++ {
		if m.Bytes() == n {
			return m, nil
		}
	}
	return 0, newErr("MTUFromBytes", ErrInvalidValue, "%d is not a path MTU (256, 512, 1024, 2048 or 4096)", n)
}

// UARAllocType selects how a UAR page is mapped (enum doca_verbs_uar_allocation_type).
type UARAllocType uint32

const (
	UARBlueFlame         UARAllocType = 0 // write-combining, BlueFlame capable
	UARNonCache          UARAllocType = 1 // the context's shared non-cached page
	UARNonCacheDedicated UARAllocType = 2 // a private non-cached page
)

func (t UARAllocType) String() string {
	switch t {
	case UARBlueFlame:
		return "BLUEFLAME"
	case UARNonCache:
		return "NONCACHE"
	case UARNonCacheDedicated:
		return "NONCACHE_DEDICATED"
	}
	return fmt.Sprintf("UARAllocType(%d)", uint32(t))
}

func (t UARAllocType) driverType() (mlx5.UARType, bool) {
	switch t {
	case UARBlueFlame:
		return mlx5.UARTypeBF, true
	case UARNonCache:
		return mlx5.UARTypeNC, true
	case UARNonCacheDedicated:
		return mlx5.UARTypeNCDedicated, true
	}
	return 0, false
}

// SRQType is the receive WQE layout of an SRQ (enum doca_verbs_srq_type).
type SRQType uint32

const (
	SRQLinkedList SRQType = 0
	SRQContiguous SRQType = 1
)

func (t SRQType) String() string {
	switch t {
	case SRQLinkedList:
		return "LINKED_LIST"
	case SRQContiguous:
		return "CONTIGUOUS"
	}
	return fmt.Sprintf("SRQType(%d)", uint32(t))
}

// AtomicMode is what remote atomics a QP accepts as responder (enum
// doca_verbs_qp_atomic_mode, DOCA GPUNetIO 3.0); the value is written
// verbatim into the 4-bit qpc.atomic_mode. Modify applies it only with
// QPAttrAtomicMode in the mask (3.0), together with the remote-atomic
// enable bit (qpc.rae) when it is not AtomicNone; a QP without it answers
// every atomic with a remote access error (NAK), which the requester sees as
// a WCRemAccessErr completion.
type AtomicMode uint32

// The atomic modes. IB_SPEC is 8-byte compare-swap and fetch-add as the
// InfiniBand specification defines them; the UP_TO_* modes also accept the
// masked (extended) atomics of up to that many bytes.
const (
	AtomicNone         AtomicMode = 0x0
	AtomicIBSpec       AtomicMode = 0x1 // 8-byte compare-swap and fetch-add
	AtomicOnly8Bytes   AtomicMode = 0x2
	AtomicUpTo8Bytes   AtomicMode = 0x3 // also masked (extended) atomics of 4 and 8 bytes
	AtomicUpTo16Bytes  AtomicMode = 0x4
	AtomicUpTo32Bytes  AtomicMode = 0x5
	AtomicUpTo64Bytes  AtomicMode = 0x6
	AtomicUpTo128Bytes AtomicMode = 0x7
	AtomicUpTo256Bytes AtomicMode = 0x8
)

func (a AtomicMode) String() string {
	switch a {
	case AtomicNone:
		return "NONE"
	case AtomicIBSpec:
		return "IB_SPEC"
	case AtomicOnly8Bytes:
		return "ONLY_8BYTES"
	case AtomicUpTo8Bytes:
		return "UP_TO_8BYTES"
	case AtomicUpTo16Bytes:
		return "UP_TO_16BYTES"
	case AtomicUpTo32Bytes:
		return "UP_TO_32BYTES"
	case AtomicUpTo64Bytes:
		return "UP_TO_64BYTES"
	case AtomicUpTo128Bytes:
		return "UP_TO_128BYTES"
	case AtomicUpTo256Bytes:
		return "UP_TO_256BYTES"
	}
	return fmt.Sprintf("AtomicMode(%d)", uint32(a))
}

func (a AtomicMode) valid() bool { return a <= AtomicUpTo256Bytes }

// OrderingSemantic is the ordering a QP guarantees for what it places in
// memory (enum doca_verbs_qp_ordering_semantic, DOCA GPUNetIO 3.0). Only SDK
// mode supports anything but the default: QPConfig.OrderingSemantic other
// than OrderingIBTA fails with ErrNotSupported in open mode.
type OrderingSemantic uint32

// The ordering semantics. Leaving IBTA does not guarantee it: the SDK and
// the NICs may negotiate another (ECE).
const (
	OrderingIBTA   OrderingSemantic = 0x0 // in-order placement, the InfiniBand default
	OrderingOOORW  OrderingSemantic = 0x1 // out-of-order placement of RDMA read and write data
	OrderingOOOAll OrderingSemantic = 0x2 // out-of-order placement for every operation
)

func (o OrderingSemantic) String() string {
	switch o {
	case OrderingIBTA:
		return "IBTA"
	case OrderingOOORW:
		return "OOO_RW"
	case OrderingOOOAll:
		return "OOO_ALL"
	}
	return fmt.Sprintf("OrderingSemantic(%d)", uint32(o))
}

// SendDBRMode is how the NIC learns the SQ producer index (enum doca_verbs_qp_send_dbr_mode).
type SendDBRMode uint32

const (
	SendDBRValid SendDBRMode = 0x0 // doorbell record + doorbell
	SendNoDBRExt SendDBRMode = 0x1 // doorbell only, at UAR base + 0x600 (ConnectX-8 class)
)

func (m SendDBRMode) String() string {
	switch m {
	case SendDBRValid:
		return "DBR_VALID"
	case SendNoDBRExt:
		return "NO_DBR_EXT"
	}
	return fmt.Sprintf("SendDBRMode(%d)", uint32(m))
}

// QPAttrMask selects the QPAttr fields Modify applies (DOCA_VERBS_QP_ATTR_*),
// with DOCA's bit values, so a mask passes to the DOCA SDK unchanged.
type QPAttrMask uint32

const (
	QPAttrAllowRemoteWrite QPAttrMask = 1 << 0
	QPAttrAllowRemoteRead  QPAttrMask = 1 << 1
	QPAttrPKeyIndex        QPAttrMask = 1 << 2
	QPAttrMinRNRTimer      QPAttrMask = 1 << 3
	QPAttrPortNum          QPAttrMask = 1 << 4
	QPAttrNextState        QPAttrMask = 1 << 5
	QPAttrCurrentState     QPAttrMask = 1 << 6
	QPAttrPathMTU          QPAttrMask = 1 << 7
	QPAttrRQPSN            QPAttrMask = 1 << 8
	QPAttrSQPSN            QPAttrMask = 1 << 9
	QPAttrDestQPNum        QPAttrMask = 1 << 10
	QPAttrAckTimeout       QPAttrMask = 1 << 11
	QPAttrRetryCnt         QPAttrMask = 1 << 12
	QPAttrRNRRetry         QPAttrMask = 1 << 13
	QPAttrAHAttr           QPAttrMask = 1 << 14
	// QPAttrAtomicMode applies QPAttr.RemoteAtomic (DOCA GPUNetIO 3.0:
	// without it the atomic mode is not programmed).
	QPAttrAtomicMode      QPAttrMask = 1 << 15
	QPAttrMaxQPRDAtomic   QPAttrMask = 1 << 16
	QPAttrMaxDestRDAtomic QPAttrMask = 1 << 17
)

var qpAttrMaskNames = []struct {
	m    QPAttrMask
	name string
}{
	{QPAttrAllowRemoteWrite, "ALLOW_REMOTE_WRITE"},
	{QPAttrAllowRemoteRead, "ALLOW_REMOTE_READ"},
	{QPAttrPKeyIndex, "PKEY_INDEX"},
	{QPAttrMinRNRTimer, "MIN_RNR_TIMER"},
	{QPAttrPortNum, "PORT_NUM"},
	{QPAttrNextState, "NEXT_STATE"},
	{QPAttrCurrentState, "CURRENT_STATE"},
	{QPAttrPathMTU, "PATH_MTU"},
	{QPAttrRQPSN, "RQ_PSN"},
	{QPAttrSQPSN, "SQ_PSN"},
	{QPAttrDestQPNum, "DEST_QP_NUM"},
	{QPAttrAckTimeout, "ACK_TIMEOUT"},
	{QPAttrRetryCnt, "RETRY_CNT"},
	{QPAttrRNRRetry, "RNR_RETRY"},
	{QPAttrAHAttr, "AH_ATTR"},
	{QPAttrAtomicMode, "ATOMIC_MODE"},
	{QPAttrMaxQPRDAtomic, "MAX_QP_RD_ATOMIC"},
	{QPAttrMaxDestRDAtomic, "MAX_DEST_RD_ATOMIC"},
}

func (m QPAttrMask) String() string {
	var parts []string
	for _, n := range qpAttrMaskNames {
		if m&n.m != 0 {
			parts = append(parts, n.name)
			m &^= n.m
		}
	}
	if m != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", uint32(m)))
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, "|")
}

// AccessFlags are memory access rights (IBV_ACCESS_*).
type AccessFlags uint32

const (
	AccessLocalWrite   = AccessFlags(mlx5.AccessLocalWrite)
	AccessRemoteWrite  = AccessFlags(mlx5.AccessRemoteWrite)
	AccessRemoteRead   = AccessFlags(mlx5.AccessRemoteRead)
	AccessRemoteAtomic = AccessFlags(mlx5.AccessRemoteAtomic)
	AccessRelaxedOrder = AccessFlags(mlx5.AccessRelaxedOrdering)
)

func (a AccessFlags) String() string {
	names := []struct {
		f AccessFlags
		n string
	}{{AccessLocalWrite, "LOCAL_WRITE"}, {AccessRemoteWrite, "REMOTE_WRITE"}, {AccessRemoteRead, "REMOTE_READ"},
		{AccessRemoteAtomic, "REMOTE_ATOMIC"}, {AccessRelaxedOrder, "RELAXED_ORDERING"}}
	var parts []string
	for _, n := range names {
		if a&n.f != 0 {
			parts = append(parts, n.n)
			a &^= n.f
		}
	}
	if a != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", uint32(a)))
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, "|")
}

// PortState is the logical state of a port (enum ibv_port_state).
type PortState uint8

// The port states.
const (
	PortNop         = PortState(mlx5.PortNop)
	PortDown        = PortState(mlx5.PortDown)
	PortInit        = PortState(mlx5.PortInit)
	PortArmed       = PortState(mlx5.PortArmed)
	PortActive      = PortState(mlx5.PortActive)
	PortActiveDefer = PortState(mlx5.PortActive + 1) // IBV_PORT_ACTIVE_DEFER: active, peer error being recovered
)

func (s PortState) String() string {
	switch s {
	case PortNop:
		return "NOP"
	case PortDown:
		return "DOWN"
	case PortInit:
		return "INIT"
	case PortArmed:
		return "ARMED"
	case PortActive:
		return "ACTIVE"
	case PortActiveDefer:
		return "ACTIVE_DEFER"
	}
	return fmt.Sprintf("PortState(%d)", uint8(s))
}

// LinkLayer is the link layer of a port (IBV_LINK_LAYER_*): InfiniBand
// routes by LID, Ethernet (RoCE) by GID.
type LinkLayer uint8

// The link layers.
const (
	LinkLayerUnspecified = LinkLayer(mlx5.LinkLayerUnspecified)
	LinkLayerInfiniBand  = LinkLayer(mlx5.LinkLayerInfiniBand)
	LinkLayerEthernet    = LinkLayer(mlx5.LinkLayerEthernet)
)

func (l LinkLayer) String() string {
	switch l {
	case LinkLayerUnspecified:
		return "Unspecified"
	case LinkLayerInfiniBand:
		return "InfiniBand"
	case LinkLayerEthernet:
		return "Ethernet"
	}
	return fmt.Sprintf("LinkLayer(%d)", uint8(l))
}

// GIDType is the type of a GID table entry (enum ibv_gid_type).
type GIDType uint32

// The GID types.
const (
	GIDTypeIB     = GIDType(mlx5.GIDTypeIB)
	GIDTypeRoCEv1 = GIDType(mlx5.GIDTypeRoCEv1)
	GIDTypeRoCEv2 = GIDType(mlx5.GIDTypeRoCEv2)
)

func (t GIDType) String() string {
	switch t {
	case GIDTypeIB:
		return "IB"
	case GIDTypeRoCEv1:
		return "RoCE v1"
	case GIDTypeRoCEv2:
		return "RoCE v2"
	}
	return fmt.Sprintf("GIDType(%d)", uint32(t))
}
