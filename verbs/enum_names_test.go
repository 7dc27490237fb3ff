package verbs

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The generated String methods print what the hand-written ones printed.
func TestEnumStrings(t *testing.T) {
	for _, tc := range []struct {
		v    interface{ String() string }
		want string
	}{
		{QPStateRTS, "RTS"}, {QPStateERR, "ERR"}, {QPState(9), "QPState(9)"},
		{QPTypeUC, "UC"}, {AddrTypeIBNoGRH, "IB_NO_GRH"}, {AtomicUpTo256Bytes, "UP_TO_256BYTES"},
		{GIDTypeRoCEv2, "RoCE v2"}, {LinkLayerInfiniBand, "InfiniBand"}, {PortActiveDefer, "ACTIVE_DEFER"},
		{PortState(200), "PortState(200)"},
		{CQStatusOverflow, "CQ_OVERFLOW"}, {CQStatus(0x1f), "CQStatus(0x1f)"},
		{WCRecvRDMAWithImm, "RECV_RDMA_WITH_IMM"}, {WCOpcode(99), "WCOpcode(99)"},
		{WRMaskedFetchAdd, "MASKED_ATOMIC_FETCH_AND_ADD"}, {WRWaitCQ, "WAIT_CQ_PI"}, {WROpcode(11), "WROpcode(11)"},
		{WCWait, "DRIVER1"},
		{QPAttrMask(0), "0"}, {QPAttrNextState | QPAttrRQPSN, "NEXT_STATE|RQ_PSN"},
		{QPAttrMaxDestRDAtomic | 1<<20, "MAX_DEST_RD_ATOMIC|0x100000"},
		{AccessFlags(0), "0"}, {AccessLocalWrite | AccessRemoteAtomic, "LOCAL_WRITE|REMOTE_ATOMIC"},
		{SendNoDBRExt, "NO_DBR_EXT"}, {OrderingOOOAll, "OOO_ALL"}, {UARNonCacheDedicated, "NONCACHE_DEDICATED"},
		{SRQContiguous, "CONTIGUOUS"},
	} {
		assert.Equal(t, tc.want, tc.v.String())
	}
}
