package mlx5

import "encoding/binary"

// Event queues. Firmware writes an EQE to an EQ for each event: a CQ armed
// for a completion completed (COMP, on the CQ's c_eqn), or an asynchronous
// event (CQ error, QP and SRQ events, port changes, a fatal error) on the
// EQ that asked for its type in CREATE_EQ's event bitmask. The driver that
// owns the EQ (the kernel) reads the EQEs by their owner bit, as CQEs are
// read, and hands each event to the DevX event channels subscribed to it
// (mlx5dv_devx_subscribe_devx_event), which read the whole 64-byte EQE.

// EQ doorbell offsets in the EQ's UAR page (MLX5_EQ_DOORBEL_OFFSET): the
// 32-bit value {eqn << 24 | consumer counter}, written at
// UAROffsetEQArm to update the consumer counter and arm the EQ's
// interrupt, at UAROffsetEQUpdateCI to update it only.
const (
	UAROffsetEQArm      = 0x40
	UAROffsetEQUpdateCI = 0x48
)

// EQEOwnerInit is the owner byte software writes into every EQE of a new
// ring: hardware-owned on the first pass.
const EQEOwnerInit = 1

// EQDoorbell builds the EQ doorbell value for eqn and consumer counter cc.
func EQDoorbell(eqn uint8, cc uint32) uint32 { return uint32(eqn)<<24 | cc&cqIndexMask }

// DestroyEQIn is DESTROY_EQ (0x302) naming eq_number.
func DestroyEQIn(eqn uint8) ObjCmdIn {
	return ObjCmdIn{CmdHeader: CmdHeader{Opcode: OpDestroyEQ}, ID: uint32(eqn)}
}

// EventMask returns the CREATE_EQ event bitmask asking for types.
func EventMask(types ...EventType) uint64 {
	var m uint64
	for _, t := range types {
		if t < 64 {
			m |= 1 << t
		}
	}
	return m
}

// EQEOwned reports whether an EQE whose last byte is owner belongs to
// software at free-running consumer counter cc of an EQ of 2^logSize
// entries: firmware writes owner 0 on the first pass, 1 on the second, ...
func EQEOwned(owner byte, cc uint32, logSize uint) bool {
	return owner&1 == uint8(cc>>logSize)&1
}

// EQEOwnerBit is the owner bit firmware writes with producer counter pc.
func EQEOwnerBit(pc uint32, logSize uint) uint8 { return uint8(pc>>logSize) & 1 }

// The event data of an EQE (bytes 32..59), per event type. Offsets are
// into EQE.Data.
const (
	eqeCompCQN      = 24 // COMP: cqn (struct mlx5_eqe_comp)
	eqeCQErrCQN     = 0  // CQ_ERROR: cqn (struct mlx5_eqe_cq_err)
	eqeCQErrSynd    = 11 // CQ_ERROR: syndrome
	eqeQPSRQType    = 20 // QP/SRQ events: resource type (struct mlx5_eqe_qp_srq)
	eqeQPSRQNum     = 24 // QP/SRQ events: qpn or srqn
	eqePortNum      = 8  // PORT_CHANGE: port number in bits [7:4] (struct mlx5_eqe_port_state)
	eqeNumMask      = 0xffffff
	eqeResTypeQP    = 0 // MLX5_EVENT_QUEUE_TYPE_QP
	eqeResTypeRQ    = 1 // MLX5_EVENT_QUEUE_TYPE_RQ (an RMP)
	eqeDataNumBytes = 4
)

func (e *EQE) put24(off int, v uint32) {
	binary.BigEndian.PutUint32(e.Data[off:off+eqeDataNumBytes], v&eqeNumMask)
}

func (e *EQE) get24(off int) uint32 {
	return binary.BigEndian.Uint32(e.Data[off:off+eqeDataNumBytes]) & eqeNumMask
}

// CompEQE is the COMP event of CQ cqn.
func CompEQE(cqn uint32) EQE {
	e := EQE{Type: EventComp}
	e.put24(eqeCompCQN, cqn)
	return e
}

// CQErrorEQE is the CQ_ERROR event of CQ cqn.
func CQErrorEQE(cqn uint32, s CQErrorSyndrome) EQE {
	e := EQE{Type: EventCQError}
	e.put24(eqeCQErrCQN, cqn)
	e.Data[eqeCQErrSynd] = uint8(s)
	return e
}

// QPEventEQE is a QP event (WQ_CATAS_ERROR, WQ_INVAL_REQ_ERROR,
// WQ_ACCESS_ERROR, SRQ_LAST_WQE, COMM_EST, ...) of QP qpn.
func QPEventEQE(t EventType, qpn uint32) EQE {
	e := EQE{Type: t}
	e.Data[eqeQPSRQType] = eqeResTypeQP
	e.put24(eqeQPSRQNum, qpn)
	return e
}

// SRQEventEQE is an SRQ event (SRQ_RQ_LIMIT, SRQ_CATAS_ERROR) of the SRQ
// (RMP) srqn.
func SRQEventEQE(t EventType, srqn uint32) EQE {
	e := EQE{Type: t}
	e.Data[eqeQPSRQType] = eqeResTypeRQ
	e.put24(eqeQPSRQNum, srqn)
	return e
}

// PortChangeEQE is the PORT_CHANGE event of port (1-based) with sub_type s.
func PortChangeEQE(port uint8, s PortChange) EQE {
	e := EQE{Type: EventPortChange, SubType: uint8(s)}
	e.Data[eqePortNum] = port << 4
	return e
}

// InternalErrorEQE is the INTERNAL_ERROR event of a failed device.
func InternalErrorEQE() EQE { return EQE{Type: EventInternalError} }

// CQN is the CQ of a COMP or CQ_ERROR event, 0 for other types.
func (e *EQE) CQN() uint32 {
	switch e.Type {
	case EventComp:
		return e.get24(eqeCompCQN)
	case EventCQError:
		return e.get24(eqeCQErrCQN)
	}
	return 0
}

// CQErrorSyndrome is the syndrome of a CQ_ERROR event.
func (e *EQE) CQErrorSyndrome() CQErrorSyndrome { return CQErrorSyndrome(e.Data[eqeCQErrSynd]) }

// ObjNum is the number of the QP or SRQ a QP/SRQ event names, 0 for other
// types.
func (e *EQE) ObjNum() uint32 {
	switch e.Type {
	case EventWQCatasError, EventWQInvalReqError, EventWQAccessError, EventSRQLastWQE,
		EventSRQRQLimit, EventSRQCatasError, EventCommEst, EventSQDrained, EventPathMig, EventPathMigFailed:
		return e.get24(eqeQPSRQNum)
	}
	return 0
}

// Port is the port (1-based) of a PORT_CHANGE event, 0 for other types.
func (e *EQE) Port() uint8 {
	if e.Type != EventPortChange {
		return 0
	}
	return e.Data[eqePortNum] >> 4
}

// AffiliatedObj is the number of the object an event is delivered for
// (the CQ of COMP and CQ_ERROR, the QP or SRQ of their events), and false
// for the device's unaffiliated events (PORT_CHANGE, INTERNAL_ERROR).
func (e *EQE) AffiliatedObj() (uint32, bool) {
	switch e.Type {
	case EventComp, EventCQError:
		return e.CQN(), true
	case EventPortChange, EventInternalError:
		return 0, false
	}
	return e.ObjNum(), true
}
