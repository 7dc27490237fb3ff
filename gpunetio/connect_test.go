package gpunetio

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/verbs"
)

// A high-level QP connects in one call (to a plain verbs QP on the other
// emulated device, both with the DOCA defaults, endpoints passed through
// the DOCA encoding) and a WQE posted as a kernel posts it, rung through the
// CPU proxy, lands in the peer's region.
func TestQPHLConnectRC(t *testing.T) {
	g, _ := hostGPU(t)
	a, b := newSide(t, "emu0"), newSide(t, "emu1")
	hl, err := NewQPHL(QPHLConfig{GPU: g, PD: a.pd, SQWQEs: 8, NICHandler: NICHandlerCPUProxy})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, hl.Close()) })
	peerCQ, err := b.dev.NewCQ(verbs.CQConfig{Size: 16})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, peerCQ.Close()) })
	peer, err := b.dev.NewQP(verbs.QPConfig{SendCQ: peerCQ, RecvCQ: peerCQ, SQWR: 8, RQWR: 8, SendMaxSGE: 1, RecvMaxSGE: 1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, peer.Close()) })

	la, err := hl.LocalEndpoint(1, 0)
	require.NoError(t, err)
	assert.Equal(t, hl.QP().QPN(), la.QPN)
	lb, err := peer.LocalEndpoint(1, 0)
	require.NoError(t, err)
	lb.Regions = []verbs.Region{b.mr.Region()}
	wa, err := la.MarshalDOCA()
	require.NoError(t, err)
	wb, err := lb.MarshalDOCA()
	require.NoError(t, err)
	forPeer, err := verbs.UnmarshalEndpointDOCA(wa, 0)
	require.NoError(t, err)
	forHL, err := verbs.UnmarshalEndpointDOCA(wb, 1)
	require.NoError(t, err)

	// A failed connect leaves the QP in RST; the next one succeeds.
	bad := forHL
	bad.QPN = 0
	assert.ErrorIs(t, hl.ConnectRC(la, bad, nil), ErrInvalidValue)
	assert.Equal(t, verbs.QPStateRST, hl.QP().State())

	require.NoError(t, hl.ConnectRC(la, forHL, nil))
	require.NoError(t, peer.ConnectRC(lb, forPeer, nil))
	attr, _, err := hl.QP().Query()
	require.NoError(t, err)
	assert.Equal(t, verbs.QPStateRTS, attr.CurrentState)
	assert.Equal(t, peer.QPN(), attr.DestQPNum)
	assert.Equal(t, uint8(14), attr.AckTimeout)
	assert.ErrorIs(t, hl.ConnectRC(la, forHL, nil), ErrBadState, "already connected")

	p := &hlPair{g: g, a: a, b: b, hl: hl, peerCQ: peerCQ, peerQP: peer}
	copy(a.buf[64:], "through ConnectRC")
	p.postWrite(t, 0, 64, 512, 17, forHL.Regions[0].RKey)
	q := hl.GPUQP()
	storeMailbox(q, 1)
	_, err = q.ProgressProxy()
	require.NoError(t, err)
	c := p.waitCQE(t, 0, nil)
	assert.False(t, c.Opcode.IsError(), "opcode %v syndrome %v", c.Opcode, c.Syndrome)
	assert.Equal(t, "through ConnectRC", string(b.buf[512:529]))
}

func TestQPHLConnectRCClosed(t *testing.T) {
	g, _ := hostGPU(t)
	a := newSide(t, "emu0")
	hl, err := NewQPHL(QPHLConfig{GPU: g, PD: a.pd, SQWQEs: 8, NICHandler: NICHandlerCPUProxy})
	require.NoError(t, err)
	la, err := hl.LocalEndpoint(1, 0)
	require.NoError(t, err)
	require.NoError(t, hl.Close())
	_, err = hl.LocalEndpoint(1, 0)
	assert.ErrorIs(t, err, ErrBadState)
	assert.ErrorIs(t, hl.ConnectRC(la, verbs.Endpoint{QPN: 1}, nil), ErrBadState)
	var nilHL *QPHL
	assert.ErrorIs(t, nilHL.ConnectRC(la, verbs.Endpoint{QPN: 1}, nil), ErrInvalidValue)
	_, err = nilHL.LocalEndpoint(1, 0)
	assert.ErrorIs(t, err, ErrInvalidValue)
}
