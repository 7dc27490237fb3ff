package common

import (
	"fmt"

	"github.com/gdaki/gpunetio/verbs"
)

// PortNum is the port the examples use.
const PortNum = 1

// LocalPort is this side's address: what goes into the endpoint record and
// how the AH is built.
type LocalPort struct {
	GID        verbs.GID
	LID        uint16
	InfiniBand bool // link layer InfiniBand (AH without GRH, LID routed); else RoCE
	GIDIndex   uint32
}

// QueryLocal reads the GID at gidIndex and the LID and link layer of port 1.
func QueryLocal(c *verbs.Context, gidIndex uint32) (LocalPort, error) {
	g, err := c.QueryGID(PortNum, gidIndex)
	if err != nil {
		return LocalPort{}, fmt.Errorf("query GID %d of %s port %d: %w", gidIndex, c.Name(), PortNum, err)
	}
	p, err := c.QueryPort(PortNum)
	if err != nil {
		return LocalPort{}, fmt.Errorf("query port %d of %s: %w", PortNum, c.Name(), err)
	}
	return LocalPort{GID: g.GID, LID: p.LID, InfiniBand: p.LinkLayer == verbs.LinkLayerInfiniBand, GIDIndex: gidIndex}, nil
}

// Transition is one QP state change of the RC connection.
type Transition struct {
	Attr verbs.QPAttr
	Mask verbs.QPAttrMask
}

// RCTransitions returns the RST->INIT, INIT->RTR and RTR->RTS steps of the
// reference's connect (host-api.md 9.1): path MTU 4096, PSNs 0, port 1, ack
// timeout 14, retry count 7, RNR retry 1, min RNR timer 1, remote read and
// write allowed, IB-spec atomics, P_Key index 0.
func RCTransitions(local LocalPort, remote Endpoint) []Transition {
	ah := &verbs.AHAttr{
		GID:       verbs.GID(remote.GID),
		AddrType:  verbs.AddrTypeIPv4,
		SGIDIndex: uint8(local.GIDIndex),
		HopLimit:  HopLimit,
	}
	if local.InfiniBand {
		ah.AddrType = verbs.AddrTypeIBNoGRH
		ah.DLID = uint32(remote.LID)
	}
	base := verbs.QPAttr{
		PathMTU:          verbs.MTU4096,
		PortNum:          PortNum,
		AckTimeout:       14,
		RetryCnt:         7,
		RNRRetry:         1,
		MinRNRTimer:      1,
		AllowRemoteWrite: true,
		AllowRemoteRead:  true,
		RemoteAtomic:     verbs.AtomicIBSpec,
		AH:               ah,
		DestQPNum:        remote.QPN,
	}
	toInit, rtr, rts := base, base, base
	toInit.NextState = verbs.QPStateINIT
	rtr.NextState = verbs.QPStateRTR
	rts.NextState = verbs.QPStateRTS
	return []Transition{
		{toInit, verbs.QPAttrNextState | verbs.QPAttrAllowRemoteWrite | verbs.QPAttrAllowRemoteRead | verbs.QPAttrPKeyIndex | verbs.QPAttrPortNum},
		{rtr, verbs.QPAttrNextState | verbs.QPAttrRQPSN | verbs.QPAttrDestQPNum | verbs.QPAttrPathMTU | verbs.QPAttrAHAttr | verbs.QPAttrMinRNRTimer},
		{rts, verbs.QPAttrNextState | verbs.QPAttrSQPSN | verbs.QPAttrAckTimeout | verbs.QPAttrRetryCnt | verbs.QPAttrRNRRetry},
	}
}

// ConnectRC moves qp from RST to RTS towards the remote endpoint.
func ConnectRC(qp *verbs.QP, local LocalPort, remote Endpoint) error {
	for _, t := range RCTransitions(local, remote) {
		if err := qp.Modify(&t.Attr, t.Mask); err != nil {
			return fmt.Errorf("connect QP 0x%x to QP 0x%x: modify to %s: %w", qp.QPN(), remote.QPN, t.Attr.NextState, err)
		}
	}
	return nil
}
