package common

import (
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/verbs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRCTransitions(t *testing.T) {
	remote := sampleEndpoint(0, 0x4242)
	for _, ib := range []bool{false, true} {
		tr := RCTransitions(LocalPort{InfiniBand: ib, GIDIndex: 3}, remote)
		require.Len(t, tr, 3)
		assert.Equal(t, []verbs.QPState{verbs.QPStateINIT, verbs.QPStateRTR, verbs.QPStateRTS},
			[]verbs.QPState{tr[0].Attr.NextState, tr[1].Attr.NextState, tr[2].Attr.NextState})
		assert.Equal(t, verbs.QPAttrNextState|verbs.QPAttrAllowRemoteWrite|verbs.QPAttrAllowRemoteRead|verbs.QPAttrPKeyIndex|verbs.QPAttrPortNum, tr[0].Mask)
		assert.Equal(t, verbs.QPAttrNextState|verbs.QPAttrRQPSN|verbs.QPAttrDestQPNum|verbs.QPAttrPathMTU|verbs.QPAttrAHAttr|verbs.QPAttrMinRNRTimer, tr[1].Mask)
		assert.Equal(t, verbs.QPAttrNextState|verbs.QPAttrSQPSN|verbs.QPAttrAckTimeout|verbs.QPAttrRetryCnt|verbs.QPAttrRNRRetry, tr[2].Mask)
		a := tr[1].Attr
		assert.Equal(t, verbs.MTU4096, a.PathMTU)
		assert.Equal(t, uint32(0x4242), a.DestQPNum)
		assert.Zero(t, a.RQPSN)
		assert.Zero(t, a.SQPSN)
		assert.Equal(t, uint16(1), a.PortNum)
		assert.Equal(t, uint8(14), a.AckTimeout)
		assert.Equal(t, uint8(7), a.RetryCnt)
		assert.Equal(t, uint8(1), a.RNRRetry)
		assert.Equal(t, uint8(1), a.MinRNRTimer)
		assert.True(t, a.AllowRemoteWrite && a.AllowRemoteRead)
		assert.Equal(t, verbs.AtomicIBSpec, a.RemoteAtomic)
		require.NotNil(t, a.AH)
		assert.Equal(t, verbs.GID(remote.GID), a.AH.GID)
		assert.Equal(t, uint8(3), a.AH.SGIDIndex)
		assert.Equal(t, uint8(255), a.AH.HopLimit)
		if ib {
			assert.Equal(t, verbs.AddrTypeIBNoGRH, a.AH.AddrType)
			assert.Equal(t, uint32(0x1234), a.AH.DLID)
		} else {
			assert.Equal(t, verbs.AddrTypeIPv4, a.AH.AddrType)
			assert.Zero(t, a.AH.DLID)
		}
	}
}

// TestConnectRCEmulated connects two QPs on the emulated NICs emu0 and emu1
// through the same helpers the examples use and moves data with a host-side
// RDMA write.
func TestConnectRCEmulated(t *testing.T) {
	type side struct {
		ctx   *verbs.Context
		pd    *verbs.PD
		cq    *verbs.CQ
		qp    *verbs.QP
		local LocalPort
	}
	open := func(name string) *side {
		c, err := verbs.OpenDevicePrefix(name)
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, c.Close()) })
		pd, err := c.AllocPD()
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, pd.Close()) })
		cq, err := verbs.NewCQ(c, verbs.CQConfig{Size: 64})
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, cq.Close()) })
		qp, err := verbs.NewQP(c, verbs.QPConfig{PD: pd, SendCQ: cq, RecvCQ: cq, SQWR: 64, RQWR: 64, SendMaxSGE: 1, RecvMaxSGE: 1})
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, qp.Close()) })
		local, err := QueryLocal(c, 0)
		require.NoError(t, err)
		return &side{c, pd, cq, qp, local}
	}
	a, b := open("emu0"), open("emu1")
	epA := Endpoint{QPN: a.qp.QPN(), GID: a.local.GID, LID: a.local.LID}
	epB := Endpoint{QPN: b.qp.QPN(), GID: b.local.GID, LID: b.local.LID}
	require.NoError(t, ConnectRC(a.qp, a.local, epB))
	require.NoError(t, ConnectRC(b.qp, b.local, epA))
	assert.Equal(t, verbs.QPStateRTS, a.qp.State())
	assert.Equal(t, verbs.QPStateRTS, b.qp.State())

	// A host-side RDMA write from emu0 to emu1 over the connection, with the
	// buffers in mmap'd memory (the NIC never touches the Go heap).
	bufA, bufB := mmapBuf(t, 4096), mmapBuf(t, 4096)
	for i := range bufA {
		bufA[i] = byte(i*5 + 1)
	}
	mrA, err := a.pd.RegMR(addrOf(bufA), 4096, verbs.AccessLocalWrite)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, mrA.Close()) })
	mrB, err := b.pd.RegMR(addrOf(bufB), 4096, verbs.AccessLocalWrite|verbs.AccessRemoteWrite)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, mrB.Close()) })
	require.NoError(t, a.qp.PostSend(verbs.SendWR{WRID: 9, Opcode: verbs.WRRDMAWrite, Signaled: true,
		SGL:        []verbs.SGE{{Addr: mrA.IOVA(), Length: 4096, LKey: mrA.LKey()}},
		RemoteAddr: mrB.IOVA(), RKey: mrB.RKey()}))
	wcs := make([]verbs.WC, 1)
	n, err := a.cq.PollWait(wcs, 1, 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	assert.Equal(t, verbs.WCSuccess, wcs[0].Status)
	assert.Equal(t, bufA, bufB)

	err = ConnectRC(a.qp, a.local, epB) // RTS -> INIT is not a transition
	require.Error(t, err)
	assert.Contains(t, err.Error(), "modify to INIT")

	_, err = QueryLocal(a.ctx, 4096)
	assert.Error(t, err)
}

func mmapBuf(t *testing.T, n int) []byte {
	t.Helper()
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, syscall.Munmap(b)) })
	return b
}

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
