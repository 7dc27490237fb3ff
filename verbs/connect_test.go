package verbs

import (
	"encoding/binary"
	"errors"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5/emu"
)

// exchange passes the local endpoints through the DOCA encoding, as two
// processes would over TCP.
func exchangeDOCA(t *testing.T, a, b LocalEndpoint) (forA, forB Endpoint) {
	t.Helper()
	ab, err := a.MarshalDOCA()
	require.NoError(t, err)
	bb, err := b.MarshalDOCA()
	require.NoError(t, err)
	forB, err = UnmarshalEndpointDOCA(ab, len(a.Regions))
	require.NoError(t, err)
	forA, err = UnmarshalEndpointDOCA(bb, len(b.Regions))
	require.NoError(t, err)
	return forA, forB
}

func localEP(t *testing.T, e *end) LocalEndpoint {
	t.Helper()
	l, err := e.qp.LocalEndpoint(1, 0)
	require.NoError(t, err)
	l.Regions = []Region{e.mr.Region()}
	return l
}

// Two QPs connected with the defaults move data with the host data path:
// WRITE, READ and an IB-spec fetch-and-add into the regions the peer sent.
func TestConnectRCDefaults(t *testing.T) {
	o := defaultPairOpts()
	a, b := newEnd(t, "emu0", o), newEnd(t, "emu1", o)
	la, lb := localEP(t, a), localEP(t, b)
	assert.Equal(t, LocalEndpoint{
		Endpoint: Endpoint{GID: a.gid, QPN: a.qp.QPN(), MTU: 4096, Regions: []Region{{Addr: a.addr(0), Length: uint64(len(a.buf)), RKey: a.mr.RKey()}}},
		Port:     1, LinkLayer: LinkLayerEthernet,
	}, la)
	ra, rb := exchangeDOCA(t, la, lb)
	require.NoError(t, a.qp.ConnectRC(la, ra, nil))
	require.NoError(t, b.qp.ConnectRC(lb, rb, nil))

	attr, _, err := a.qp.Query()
	require.NoError(t, err)
	assert.Equal(t, QPStateRTS, attr.CurrentState)
	assert.Equal(t, MTU4096, attr.PathMTU)
	assert.Equal(t, b.qp.QPN(), attr.DestQPNum)
	assert.Zero(t, attr.RQPSN)
	assert.Zero(t, attr.SQPSN)
	assert.Equal(t, uint16(1), attr.PortNum)
	assert.Equal(t, uint8(14), attr.AckTimeout)
	assert.Equal(t, uint8(7), attr.RetryCnt)
	assert.Equal(t, uint8(7), attr.RNRRetry, "RNR retry forever by default")
	assert.Equal(t, uint8(1), attr.MinRNRTimer)
	assert.True(t, attr.AllowRemoteWrite)
	assert.True(t, attr.AllowRemoteRead)
	assert.Zero(t, attr.PKeyIndex)
	assert.Equal(t, b.gid, attr.AH.GID)
	assert.Equal(t, AddrTypeIPv4, attr.AH.AddrType)
	assert.Equal(t, uint8(255), attr.AH.HopLimit)
	assert.Zero(t, attr.AH.SGIDIndex)

	dst := ra.Regions[0]
	for i := 0; i < 512; i++ {
		a.buf[i] = byte(i*3 + 1)
	}
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 1, Opcode: WRRDMAWrite, Signaled: true,
		SGL: []SGE{{Addr: a.addr(0), Length: 512, LKey: a.mr.LKey()}}, RemoteAddr: dst.Addr + 1024, RKey: dst.RKey}))
	wc := waitWC(t, a.cq, 1)[0]
	require.NoError(t, wc.Err())
	assert.Equal(t, a.buf[:512], b.buf[1024:1536])

	require.NoError(t, a.qp.PostSend(SendWR{WRID: 2, Opcode: WRRDMARead, Signaled: true,
		SGL: []SGE{{Addr: a.addr(4096), Length: 512, LKey: a.mr.LKey()}}, RemoteAddr: dst.Addr + 1024, RKey: dst.RKey}))
	require.NoError(t, waitWC(t, a.cq, 1)[0].Err())
	assert.Equal(t, a.buf[:512], a.buf[4096:4608])

	binary.LittleEndian.PutUint64(b.buf[8192:], 100)
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 3, Opcode: WRAtomicFetchAdd, Signaled: true, Compare: 5,
		SGL: []SGE{{Addr: a.addr(8192), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: dst.Addr + 8192, RKey: dst.RKey}))
	require.NoError(t, waitWC(t, a.cq, 1)[0].Err())
	assert.Equal(t, uint64(105), binary.LittleEndian.Uint64(b.buf[8192:]))

	// b writes back to a through the region a sent.
	require.NoError(t, b.qp.PostSend(SendWR{WRID: 4, Opcode: WRRDMAWrite, Signaled: true, InlineData: []byte("pong"),
		RemoteAddr: rb.Regions[0].Addr + 100, RKey: rb.Regions[0].RKey}))
	require.NoError(t, waitWC(t, b.cq, 1)[0].Err())
	assert.Equal(t, "pong", string(a.buf[100:104]))
}

// Every option reaches the QP: connect, query, back to RST, next option.
func TestConnectRCOverrides(t *testing.T) {
	o := defaultPairOpts()
	a, b := newEnd(t, "emu0", o), newEnd(t, "emu1", o)
	la := localEP(t, a)
	remote := localEP(t, b).Endpoint
	remote.LID = 0x1234
	cases := []struct {
		name   string
		local  func(*LocalEndpoint)
		remote func(*Endpoint)
		opts   ConnectOptions
		check  func(t *testing.T, a QPAttr)
	}{
		{name: "endpoint PSNs", local: func(l *LocalEndpoint) { l.PSN = 0x111 }, remote: func(r *Endpoint) { r.PSN = 0x222 },
			check: func(t *testing.T, a QPAttr) {
				assert.Equal(t, uint32(0x111), a.SQPSN)
				assert.Equal(t, uint32(0x222), a.RQPSN)
			}},
		{name: "PSN overrides", local: func(l *LocalEndpoint) { l.PSN = 0x111 },
			opts: ConnectOptions{SQPSN: Ptr[uint32](0xabcdef), RQPSN: Ptr[uint32](0)},
			check: func(t *testing.T, a QPAttr) {
				assert.Equal(t, uint32(0xabcdef), a.SQPSN)
				assert.Equal(t, uint32(0), a.RQPSN)
			}},
		{name: "smaller endpoint MTU", remote: func(r *Endpoint) { r.MTU = 2048 },
			check: func(t *testing.T, a QPAttr) { assert.Equal(t, MTU2048, a.PathMTU) }},
		{name: "local MTU", local: func(l *LocalEndpoint) { l.MTU = 512 },
			check: func(t *testing.T, a QPAttr) { assert.Equal(t, MTU512, a.PathMTU) }},
		{name: "path MTU", opts: ConnectOptions{PathMTU: Ptr(MTU1024)},
			check: func(t *testing.T, a QPAttr) { assert.Equal(t, MTU1024, a.PathMTU) }},
		{name: "zero timers and retries", opts: ConnectOptions{AckTimeout: Ptr[uint8](0), RetryCnt: Ptr[uint8](0),
			RNRRetry: Ptr[uint8](0), MinRNRTimer: Ptr[uint8](0)},
			check: func(t *testing.T, a QPAttr) {
				assert.Zero(t, a.AckTimeout)
				assert.Zero(t, a.RetryCnt)
				assert.Zero(t, a.RNRRetry)
				assert.Zero(t, a.MinRNRTimer)
			}},
		{name: "timers and retries", opts: ConnectOptions{AckTimeout: Ptr[uint8](20), RetryCnt: Ptr[uint8](3),
			RNRRetry: Ptr[uint8](7), MinRNRTimer: Ptr[uint8](12)},
			check: func(t *testing.T, a QPAttr) {
				assert.Equal(t, uint8(20), a.AckTimeout)
				assert.Equal(t, uint8(3), a.RetryCnt)
				assert.Equal(t, uint8(7), a.RNRRetry)
				assert.Equal(t, uint8(12), a.MinRNRTimer)
			}},
		{name: "no remote write", opts: ConnectOptions{AllowRemoteWrite: Ptr(false)},
			check: func(t *testing.T, a QPAttr) {
				assert.False(t, a.AllowRemoteWrite)
				assert.True(t, a.AllowRemoteRead)
			}},
		{name: "no remote read", opts: ConnectOptions{AllowRemoteRead: Ptr(false)},
			check: func(t *testing.T, a QPAttr) {
				assert.True(t, a.AllowRemoteWrite)
				assert.False(t, a.AllowRemoteRead)
			}},
		{name: "P_Key index", opts: ConnectOptions{PKeyIndex: 7},
			check: func(t *testing.T, a QPAttr) { assert.Equal(t, uint16(7), a.PKeyIndex) }},
		{name: "hop limit and static rate", opts: ConnectOptions{HopLimit: Ptr[uint8](64), StaticRate: 3},
			check: func(t *testing.T, a QPAttr) {
				assert.Equal(t, uint8(64), a.AH.HopLimit)
				assert.Equal(t, uint8(3), a.AH.StaticRate)
			}},
		{name: "RD atomics", opts: ConnectOptions{MaxRDAtomic: 4, MaxDestRDAtomic: 8},
			check: func(t *testing.T, a QPAttr) {
				assert.Equal(t, uint8(4), a.MaxRDAtomic)
				assert.Equal(t, uint8(8), a.MaxDestRDAtomic)
			}},
		{name: "IPv6 address type", opts: ConnectOptions{AddrType: Ptr(AddrTypeIPv6)},
			check: func(t *testing.T, a QPAttr) { assert.Equal(t, AddrTypeIPv6, a.AH.AddrType) }},
		{name: "IB with GRH: DLID, SL, traffic class", opts: ConnectOptions{AddrType: Ptr(AddrTypeIBGRH), SL: 2, TrafficClass: 0x40},
			check: func(t *testing.T, a QPAttr) {
				assert.Equal(t, AddrTypeIBGRH, a.AH.AddrType)
				assert.Equal(t, uint32(0x1234), a.AH.DLID)
				assert.Equal(t, uint8(2), a.AH.SL)
				assert.Equal(t, uint8(0x40), a.AH.TrafficClass)
				assert.Equal(t, remote.GID, a.AH.GID)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, r := la, remote
			if tc.local != nil {
				tc.local(&l)
			}
			if tc.remote != nil {
				tc.remote(&r)
			}
			opts := tc.opts
			require.NoError(t, a.qp.ConnectRC(l, r, &opts))
			attr, _, err := a.qp.Query()
			require.NoError(t, err)
			assert.Equal(t, QPStateRTS, attr.CurrentState)
			assert.Equal(t, r.QPN, attr.DestQPNum)
			tc.check(t, attr)
			require.NoError(t, a.qp.Modify(&QPAttr{NextState: QPStateRST}, QPAttrNextState))
		})
	}
}

// RemoteAtomic reaches the responder: with AtomicNone, a peer's atomic fails.
func TestConnectRCRemoteAtomicNone(t *testing.T) {
	o := defaultPairOpts()
	a, b := newEnd(t, "emu0", o), newEnd(t, "emu1", o)
	la, lb := localEP(t, a), localEP(t, b)
	ra, rb := exchangeDOCA(t, la, lb)
	require.NoError(t, a.qp.ConnectRC(la, ra, nil))
	require.NoError(t, b.qp.ConnectRC(lb, rb, &ConnectOptions{RemoteAtomic: Ptr(AtomicNone)}))
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 9, Opcode: WRAtomicFetchAdd, Signaled: true, Compare: 1,
		SGL: []SGE{{Addr: a.addr(0), Length: 8, LKey: a.mr.LKey()}}, RemoteAddr: ra.Regions[0].Addr, RKey: ra.Regions[0].RKey}))
	err := waitWC(t, a.cq, 1)[0].Err()
	var ce *CompletionError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, uint64(9), ce.WRID)
	assert.NotEqual(t, WCSuccess, ce.Status)
}

func TestConnectRCFailures(t *testing.T) {
	o := defaultPairOpts()
	a, b := newEnd(t, "emu0", o), newEnd(t, "emu1", o)
	la := localEP(t, a)
	good := localEP(t, b).Endpoint
	expectRST := func(t *testing.T) {
		t.Helper()
		assert.Equal(t, QPStateRST, a.qp.State())
		attr, _, err := a.qp.Query()
		require.NoError(t, err)
		assert.Equal(t, QPStateRST, attr.CurrentState)
	}
	for _, tc := range []struct {
		name   string
		local  func(*LocalEndpoint)
		remote func(*Endpoint)
		opts   *ConnectOptions
		code   Code
		msg    string
	}{
		{name: "remote QPN 0", remote: func(r *Endpoint) { r.QPN = 0 }, code: ErrInvalidValue, msg: "remote endpoint: QPN 0x0"},
		{name: "remote QPN over 24 bits", remote: func(r *Endpoint) { r.QPN = 1 << 24 }, code: ErrInvalidValue, msg: "remote endpoint: QPN 0x1000000"},
		{name: "remote MTU too large", remote: func(r *Endpoint) { r.MTU = 8192 }, code: ErrInvalidValue, msg: "remote endpoint: MTU 8192"},
		{name: "remote LID", remote: func(r *Endpoint) { r.LID = 1 << 16 }, code: ErrInvalidValue, msg: "remote endpoint: LID"},
		{name: "remote PSN", remote: func(r *Endpoint) { r.PSN = 1 << 24 }, code: ErrInvalidValue, msg: "remote endpoint: PSN"},
		{name: "path MTU too large", opts: &ConnectOptions{PathMTU: Ptr(MTURawEthernet)}, code: ErrInvalidValue, msg: "path MTU RAW_ETHERNET"},
		{name: "ack timeout", opts: &ConnectOptions{AckTimeout: Ptr[uint8](32)}, code: ErrInvalidValue, msg: "ack timeout 32 exceeds 31"},
		{name: "retry count", opts: &ConnectOptions{RetryCnt: Ptr[uint8](8)}, code: ErrInvalidValue, msg: "retry count 8"},
		{name: "RNR retry", opts: &ConnectOptions{RNRRetry: Ptr[uint8](8)}, code: ErrInvalidValue, msg: "RNR retry 8"},
		{name: "min RNR timer", opts: &ConnectOptions{MinRNRTimer: Ptr[uint8](40)}, code: ErrInvalidValue, msg: "min RNR timer 40"},
		{name: "atomic mode", opts: &ConnectOptions{RemoteAtomic: Ptr(AtomicMode(9))}, code: ErrInvalidValue, msg: "remote atomic mode"},
		{name: "address type", opts: &ConnectOptions{AddrType: Ptr(AddrType(7))}, code: ErrInvalidValue, msg: "address type"},
		{name: "PSN override", opts: &ConnectOptions{SQPSN: Ptr[uint32](1 << 24)}, code: ErrInvalidValue, msg: "must fit 24 bits"},
		{name: "another QP's endpoint", local: func(l *LocalEndpoint) { l.QPN++ }, code: ErrInvalidValue, msg: "local endpoint describes QP"},
		{name: "port 2", local: func(l *LocalEndpoint) { l.Port = 2 }, code: ErrInvalidValue, msg: "RST -> INIT failed"},
		{name: "RD atomics above the device limit", opts: &ConnectOptions{MaxDestRDAtomic: 128}, code: ErrInvalidValue,
			msg: "INIT -> RTR failed (QP moved back to RST)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, r := la, good
			if tc.local != nil {
				tc.local(&l)
			}
			if tc.remote != nil {
				tc.remote(&r)
			}
			err := a.qp.ConnectRC(l, r, tc.opts)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.code)
			assert.ErrorContains(t, err, "QP.ConnectRC")
			assert.ErrorContains(t, err, tc.msg)
			expectRST(t)
		})
	}

	// The device refuses INIT -> RTR (the emulated firmware routes IPv4-mapped
	// GIDs only): the error names the transition and carries the firmware
	// status and syndrome; the QP is back in RST and connects afterwards.
	bad := good
	bad.GID = GID{0x20, 0x01, 0x0d, 0xb8, 15: 1}
	err := a.qp.ConnectRC(la, bad, nil)
	require.Error(t, err)
	assert.ErrorContains(t, err, "INIT -> RTR failed (QP moved back to RST)")
	assert.ErrorIs(t, err, ErrDriver)
	assert.ErrorIs(t, err, syscall.EREMOTEIO)
	var fe *FirmwareError
	require.True(t, errors.As(err, &fe), "%v", err)
	assert.Equal(t, "INIT2RTR_QP", fe.Command)
	assert.Equal(t, FirmwareStatusBadParam, fe.Status)
	assert.Equal(t, emu.SynQPRemoteGID, fe.Syndrome)
	expectRST(t)
	require.NoError(t, a.qp.ConnectRC(la, good, nil))

	// Not in RST: refused, the connection is left alone.
	err = a.qp.ConnectRC(la, good, nil)
	assert.ErrorIs(t, err, ErrBadState)
	assert.ErrorContains(t, err, "is in RTS")
	assert.Equal(t, QPStateRTS, a.qp.State())

	var nilQP *QP
	assert.ErrorIs(t, nilQP.ConnectRC(la, good, nil), ErrInvalidValue)
	_, err = nilQP.LocalEndpoint(1, 0)
	assert.ErrorIs(t, err, ErrInvalidValue)
}

func TestLocalEndpointFailures(t *testing.T) {
	o := defaultPairOpts()
	a := newEnd(t, "emu0", o)
	_, err := a.qp.LocalEndpoint(0, 0)
	assert.ErrorIs(t, err, ErrInvalidValue)
	_, err = a.qp.LocalEndpoint(1, 256)
	assert.ErrorIs(t, err, ErrInvalidValue)
	_, err = a.qp.LocalEndpoint(1, 1) // emu0 fills GID index 0 only
	assert.ErrorIs(t, err, syscall.ENODATA)
	assert.ErrorContains(t, err, "QP.LocalEndpoint")
	assert.ErrorContains(t, err, "GID 1 of emu0 port 1")
	_, err = a.qp.LocalEndpoint(2, 0) // emu0 has one port
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorContains(t, err, "port 2: device emu0 has ports 1..1")

	ctx, err := OpenDevice("emu1")
	require.NoError(t, err)
	defer ctx.Close()
	pd, err := ctx.AllocPD()
	require.NoError(t, err)
	defer pd.Close()
	cq, err := NewCQ(ctx, CQConfig{Size: 8})
	require.NoError(t, err)
	defer cq.Close()
	qp, err := NewQP(ctx, QPConfig{PD: pd, SendCQ: cq, SQWR: 4, SendMaxSGE: 1})
	require.NoError(t, err)
	l, err := qp.LocalEndpoint(1, 0)
	require.NoError(t, err)
	require.NoError(t, qp.Close())
	_, err = qp.LocalEndpoint(1, 0)
	assert.ErrorIs(t, err, ErrBadState)
	assert.ErrorIs(t, qp.ConnectRC(l, Endpoint{QPN: 1}, nil), ErrBadState)
}

// The plan for each link layer, with the masks of DOCA GPUNetIO 3.0's
// examples: ATOMIC_MODE at RST -> INIT, MAX_DEST_RD_ATOMIC at INIT -> RTR,
// MAX_QP_RD_ATOMIC at RTR -> RTS.
func TestRCTransitions(t *testing.T) {
	remote := Endpoint{QPN: 0x42, LID: 0x17, GID: GID{10: 0xff, 11: 0xff, 15: 9}, PSN: 5}
	base := QPAttrNextState
	for _, ib := range []bool{false, true} {
		local := LocalEndpoint{Endpoint: Endpoint{QPN: 0x7, PSN: 3}, GIDIndex: 2}
		if ib {
			local.LinkLayer = LinkLayerInfiniBand
		}
		steps, err := RCTransitions(local, remote, nil)
		require.NoError(t, err)
		require.Len(t, steps, 3)
		assert.Equal(t, base|QPAttrAllowRemoteWrite|QPAttrAllowRemoteRead|QPAttrPKeyIndex|QPAttrPortNum|QPAttrAtomicMode, steps[0].Mask)
		assert.Equal(t, base|QPAttrRQPSN|QPAttrDestQPNum|QPAttrPathMTU|QPAttrAHAttr|QPAttrMinRNRTimer|QPAttrMaxDestRDAtomic, steps[1].Mask)
		assert.Equal(t, base|QPAttrSQPSN|QPAttrAckTimeout|QPAttrRetryCnt|QPAttrRNRRetry|QPAttrMaxQPRDAtomic, steps[2].Mask)
		assert.Equal(t, uint32(0x8037), uint32(steps[0].Mask), "DOCA 3.0's RST -> INIT mask value")
		assert.Equal(t, uint32(0x245a8), uint32(steps[1].Mask), "DOCA 3.0's INIT -> RTR mask value")
		assert.Equal(t, uint32(0x13a20), uint32(steps[2].Mask), "DOCA 3.0's RTR -> RTS mask value")
		assert.Equal(t, AtomicIBSpec, steps[0].Attr.RemoteAtomic, "the atomic mode is applied at RST -> INIT")
		assert.Zero(t, steps[1].Attr.MaxDestRDAtomic, "unset, as in DOCA's examples: one outstanding request")
		assert.Zero(t, steps[2].Attr.MaxRDAtomic)
		for i, st := range []QPState{QPStateINIT, QPStateRTR, QPStateRTS} {
			assert.Equal(t, st, steps[i].Attr.NextState)
		}
		at := steps[1].Attr
		assert.Equal(t, uint16(1), at.PortNum, "port 0 reads as 1")
		assert.Equal(t, uint32(5), at.RQPSN)
		assert.Equal(t, uint32(3), at.SQPSN)
		assert.Equal(t, uint32(0x42), at.DestQPNum)
		assert.Equal(t, MTU4096, at.PathMTU)
		assert.Equal(t, uint8(2), at.AH.SGIDIndex)
		assert.Equal(t, uint8(255), at.AH.HopLimit)
		assert.Equal(t, remote.GID, at.AH.GID)
		if ib {
			assert.Equal(t, AddrTypeIBNoGRH, at.AH.AddrType)
			assert.Equal(t, uint32(0x17), at.AH.DLID)
		} else {
			assert.Equal(t, AddrTypeIPv4, at.AH.AddrType)
			assert.Zero(t, at.AH.DLID, "RoCE routes by GID")
		}
	}
	steps, err := RCTransitions(LocalEndpoint{Endpoint: Endpoint{QPN: 1}}, remote, &ConnectOptions{MaxRDAtomic: 16, MaxDestRDAtomic: 16})
	require.NoError(t, err)
	assert.NotZero(t, steps[1].Mask&QPAttrMaxDestRDAtomic)
	assert.NotZero(t, steps[2].Mask&QPAttrMaxQPRDAtomic)
	_, err = RCTransitions(LocalEndpoint{}, remote, nil)
	assert.ErrorContains(t, err, "RCTransitions: DOCA_ERROR_INVALID_VALUE: local endpoint: QPN 0x0")
}
