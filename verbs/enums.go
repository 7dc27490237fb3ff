package verbs

//go:generate go run ../internal/enumgen

import (
	"fmt"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// QPType is the transport service type (DOCA_VERBS_QP_TYPE_*).
type QPType uint32

const (
	QPTypeRC QPType = 0x0 // reliable connection (DOCA_VERBS_QP_TYPE_RC)
	QPTypeUC QPType = 0x1 // unreliable connection (an extension: DOCA Verbs creates RC only)
)

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

func (s QPState) valid() bool { return s <= QPStateERR }

// AddrType is the address type of an AH (enum doca_verbs_addr_type).
type AddrType uint32

const (
	AddrTypeIPv4    AddrType = 0 // RoCE with an IPv4(-mapped) GID
	AddrTypeIPv6    AddrType = 1 // RoCE with an IPv6 GID
	AddrTypeIBGRH   AddrType = 2 // InfiniBand with a GRH
	AddrTypeIBNoGRH AddrType = 3 // InfiniBand, LID routed
)

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

// ScatterToCQE is a QP's responder scatter-to-CQE mode (enum
// doca_verbs_qp_scatter_to_cqe of the DOCA SDK): QPConfig.CQEInline.
type ScatterToCQE uint8

// The scatter-to-CQE modes.
const (
	ScatterToCQENone ScatterToCQE = 0 // receives land in their buffers
	ScatterToCQE32B  ScatterToCQE = 1 // receives of at most 32 bytes land in the CQE
)

// SendDBRMode is how the NIC learns the SQ producer index (enum doca_verbs_qp_send_dbr_mode).
type SendDBRMode uint32

const (
	SendDBRValid SendDBRMode = 0x0 // doorbell record + doorbell
	SendNoDBRExt SendDBRMode = 0x1 // doorbell only, at UAR base + 0x600 (ConnectX-8 class)
)

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

// AccessFlags are memory access rights (IBV_ACCESS_*).
type AccessFlags uint32

const (
	AccessLocalWrite   = AccessFlags(mlx5.AccessLocalWrite)
	AccessRemoteWrite  = AccessFlags(mlx5.AccessRemoteWrite)
	AccessRemoteRead   = AccessFlags(mlx5.AccessRemoteRead)
	AccessRemoteAtomic = AccessFlags(mlx5.AccessRemoteAtomic)
	AccessRelaxedOrder = AccessFlags(mlx5.AccessRelaxedOrdering)
)

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

// LinkLayer is the link layer of a port (IBV_LINK_LAYER_*): InfiniBand
// routes by LID, Ethernet (RoCE) by GID.
type LinkLayer uint8

// The link layers.
const (
	LinkLayerUnspecified = LinkLayer(mlx5.LinkLayerUnspecified)
	LinkLayerInfiniBand  = LinkLayer(mlx5.LinkLayerInfiniBand)
	LinkLayerEthernet    = LinkLayer(mlx5.LinkLayerEthernet)
)

// GIDType is the type of a GID table entry (enum ibv_gid_type).
type GIDType uint32

// The GID types.
const (
	GIDTypeIB     = GIDType(mlx5.GIDTypeIB)
	GIDTypeRoCEv1 = GIDType(mlx5.GIDTypeRoCEv1)
	GIDTypeRoCEv2 = GIDType(mlx5.GIDTypeRoCEv2)
)
