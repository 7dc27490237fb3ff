package mlx5

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAddressPathRoundTrip(t *testing.T) {
	roundTrip(t, ADSLen, (*AddressPath).bindings, AddressPath.Encode, DecodeAddressPath)
}

func TestQPContextRoundTrip(t *testing.T) {
	roundTrip(t, QPCLen, (*QPContext).bindings, QPContext.Encode, DecodeQPContext)
}

// Positions inside the CREATE/MODIFY/QUERY mailbox from the "absolute"
// column of the PRM qpc and ads tables, spot-checked for fields the golden
// dumps leave zero.
func TestQPCMailboxPositions(t *testing.T) {
	cases := []struct {
		name string
		set  func(*QPContext)
		dw   int    // absolute byte of the dword
		want uint32 // dword value
	}{
		{"state", func(c *QPContext) { c.State = QPStateERR }, 24, 0x60000000},
		{"send_dbr_mode", func(c *QPContext) { c.SendDBRMode = SendDBRNoDBRExt }, 40, 0x40000000},
		{"user_index", func(c *QPContext) { c.UserIndex = 0xabcdef }, 40, 0x00abcdef},
		{"cd_master", func(c *QPContext) { c.CDMaster = true }, 168, 0x00000001},
		{"cd_slave_send", func(c *QPContext) { c.CDSlaveSend = true }, 168, 0x00000002},
		{"hw_sq_wqebb_counter", func(c *QPContext) { c.HWSQWQEBBCounter = 0x1234 }, 204, 0x12340000},
		{"sw_sq_wqebb_counter", func(c *QPContext) { c.SWSQWQEBBCounter = 0x5678 }, 204, 0x00005678},
		{"last_acked_psn", func(c *QPContext) { c.LastAckedPSN = 0x111111 }, 160, 0x00111111},
		{"cur_retry_count", func(c *QPContext) { c.CurRetryCount = 7 }, 136, 0x000000e0},
		{"pap.pkey_index", func(c *QPContext) { c.PrimaryAddressPath.PKeyIndex = 0xffff }, 48, 0x0000ffff},
		{"pap.rlid", func(c *QPContext) { c.PrimaryAddressPath.RLID = 0xbeef }, 52, 0x0000beef},
		{"pap.sl", func(c *QPContext) { c.PrimaryAddressPath.SL = 0xf }, 84, 0x0f000000},
		{"pap.eth_prio", func(c *QPContext) { c.PrimaryAddressPath.EthPrio = 7 }, 84, 0x70000000},
		{"sap.vhca_port_num", func(c *QPContext) { c.SecondaryAddressPath.VHCAPortNum = 2 }, 92 + 36, 0x00020000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := ModifyQPIn{CmdHeader: CmdHeader{Opcode: OpINIT2RTR}}
			c.set(&in.QPC)
			b, err := in.Marshal()
			require.NoError(t, err)
			require.Equal(t, c.want, Get32(b, F(uint32(c.dw*8), 32)))
		})
	}
}

func TestCopyFields(t *testing.T) {
	src := QPContext{MTU: MTU4096, RemoteQPN: 0x3c4d, RRE: true}
	src.PrimaryAddressPath.RMAC = [6]byte{1, 2, 3, 4, 5, 6}
	src.PrimaryAddressPath.AckTimeout = 14
	dst := QPContext{PD: 0x15, MTU: MTU1024}
	require.NoError(t, dst.CopyFields(&src, []string{"mtu", "primary_address_path.rmac", "rre"}))
	want := QPContext{PD: 0x15, MTU: MTU4096, RRE: true}
	want.PrimaryAddressPath.RMAC = [6]byte{1, 2, 3, 4, 5, 6}
	require.Equal(t, want, dst)
	// The copy is by value: changing src later does not leak into dst.
	src.PrimaryAddressPath.RMAC[0] = 9
	require.Equal(t, byte(1), dst.PrimaryAddressPath.RMAC[0])

	before := dst
	err := dst.CopyFields(&src, []string{"mtu", "no_such_field"})
	require.ErrorIs(t, err, ErrInvalid)
	require.Contains(t, err.Error(), "no_such_field")
	require.Equal(t, before, dst, "a failed copy changes nothing")

	names := QPCFieldNames()
	require.Contains(t, names, "primary_address_path.udp_sport")
	require.Contains(t, names, "secondary_address_path.rgid_rip")
	require.Contains(t, names, "send_dbr_mode")
	seen := map[string]bool{}
	for _, n := range names {
		require.False(t, seen[n], "duplicate %s", n)
		seen[n] = true
	}
}

func TestEnumStrings(t *testing.T) {
	cases := []struct{ got, want string }{
		{QPStateRST.String(), "RST"}, {QPStateRTS.String(), "RTS"}, {QPStateERR.String(), "ERR"},
		{QPStateSQDraining.String(), "SQ_DRAINING"}, {QPState(8).String(), "QP_STATE_0x8"},
		{STRC.String(), "RC"}, {STRegUMR.String(), "REG_UMR"}, {ServiceType(4).String(), "ST_0x4"},
		{PMStateMigrated.String(), "MIGRATED"}, {PMState(2).String(), "PM_STATE_0x2"},
		{MTU4096.String(), "4096"}, {MTURawEth.String(), "RAW_ETH"}, {MTU(0).String(), "MTU_0x0"},
		{RQTypeZeroSize.String(), "ZERO_SIZE"}, {SendDBRNoDBRExt.String(), "NO_DBR_EXT"},
		{AtomicMode8B.String(), "8B"}, {AtomicModeIBComp.String(), "IB_COMP"},
		{TSDefault.String(), "DEFAULT"}, {TSRealTime.String(), "REAL_TIME"},
		{RoCEv2.String(), "RoCEv2"}, {RoCEL3IPv6.String(), "IPv6"},
		{WQTypeCyclic.String(), "CYCLIC"}, {RMPStateRDY.String(), "RDY"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, c.got)
	}
}

func TestMTU(t *testing.T) {
	for _, c := range []struct {
		m MTU
		n int
	}{{MTU256, 256}, {MTU512, 512}, {MTU1024, 1024}, {MTU2048, 2048}, {MTU4096, 4096}, {MTU8192, 8192}} {
		require.Equal(t, c.n, c.m.Bytes())
		m, ok := MTUFromBytes(c.n)
		require.True(t, ok)
		require.Equal(t, c.m, m)
	}
	require.Zero(t, MTURawEth.Bytes())
	require.Zero(t, MTU(0).Bytes())
	_, ok := MTUFromBytes(1500)
	require.False(t, ok)
}

// FuzzContexts feeds arbitrary bytes to every embedded-structure decoder
// (qpc, ads, cqc, rmpc, wq, roce_addr_layout, hca_vport_context).
func FuzzContexts(f *testing.F) {
	f.Add(parseDump(f, CreateQPInLen, goldenCreateQP)[qpcMailboxByte:])
	f.Add(parseDump(f, ModifyQPInLen, goldenINIT2RTR)[qpcMailboxByte:])
	f.Add(parseDump(f, CreateCQInLen, goldenCreateCQ)[cqcMailboxByte:])
	f.Add(make([]byte, HCAVportContextLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := DecodeQPContext(b); err == nil {
			remarshal(t, v, func(v QPContext) ([]byte, error) { o := make([]byte, QPCLen); return o, v.Encode(o) }, DecodeQPContext)
		}
		if v, err := DecodeAddressPath(b); err == nil {
			remarshal(t, v, func(v AddressPath) ([]byte, error) { o := make([]byte, ADSLen); return o, v.Encode(o) }, DecodeAddressPath)
		}
		if v, err := DecodeCQContext(b); err == nil {
			remarshal(t, v, func(v CQContext) ([]byte, error) { o := make([]byte, CQCLen); return o, v.Encode(o) }, DecodeCQContext)
		}
		if v, err := DecodeRMPContext(b); err == nil {
			remarshal(t, v, func(v RMPContext) ([]byte, error) { o := make([]byte, RMPCLen); return o, v.Encode(o) }, DecodeRMPContext)
		}
		if v, err := DecodeWQContext(b); err == nil {
			remarshal(t, v, func(v WQContext) ([]byte, error) { o := make([]byte, WQCLen); return o, v.Encode(o) }, DecodeWQContext)
		}
		if v, err := DecodeRoCEAddr(b); err == nil {
			remarshal(t, v, func(v RoCEAddr) ([]byte, error) { o := make([]byte, RoCEAddrLen); return o, v.Encode(o) }, DecodeRoCEAddr)
		}
		if v, err := DecodeHCAVportContext(b); err == nil {
			remarshal(t, v, func(v HCAVportContext) ([]byte, error) {
				o := make([]byte, HCAVportContextLen)
				return o, v.Encode(o)
			}, DecodeHCAVportContext)
		}
	})
}
