package emu

import (
	"errors"
	"syscall"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// cmdFixture holds a context with the resources commands refer to, and a
// second context whose resources must not be usable from the first.
type cmdFixture struct {
	nic          *NIC
	dev, other   mlx5.Device
	pd, otherPD  mlx5.PD
	uar, otherUA mlx5.UAR
	um, otherUM  mlx5.UMEM
	eqn          uint32
}

func newCmdFixture(t testing.TB, model Model) *cmdFixture {
	f := &cmdFixture{nic: newNIC(t, Config{Name: "emuC", Model: model})}
	var err error
	f.dev, err = f.nic.Open()
	must(t, err)
	f.other, err = f.nic.Open()
	must(t, err)
	f.pd, _ = f.dev.AllocPD()
	f.otherPD, _ = f.other.AllocPD()
	f.uar, err = f.dev.AllocUAR(mlx5.UARTypeNCDedicated)
	must(t, err)
	f.otherUA, _ = f.other.AllocUAR(mlx5.UARTypeNCDedicated)
	m := hostMem(t, memSize)
	mlx5.InitCQEs(m) // any 64-byte entry may become a CQ ring: hand them all to the NIC
	f.um, err = f.dev.RegUMEM(addrOf(m), memSize, mlx5.AccessLocalWrite)
	must(t, err)
	f.otherUM, err = f.other.RegUMEM(addrOf(m), memSize, mlx5.AccessLocalWrite)
	must(t, err)
	f.eqn, _ = f.dev.QueryEQN(0)
	t.Cleanup(func() {
		f.um.Dereg()
		f.otherUM.Dereg()
		f.uar.Free()
		f.otherUA.Free()
		f.pd.Dealloc()
		f.otherPD.Dealloc()
		must(t, f.dev.Close())
		must(t, f.other.Close())
	})
	return f
}

func (f *cmdFixture) cqIn() mlx5.CreateCQIn {
	return mlx5.CreateCQIn{CQC: mlx5.CQContext{LogCQSize: 4, UARPage: f.uar.PageID(), CEQN: uint8(f.eqn),
		DBRUMEMID: f.um.ID(), DBRUMEMValid: true, DBRAddr: offCQDBR, OI: true},
		CQUMEMID: f.um.ID(), CQUMEMOffset: offCQ, CQUMEMValid: true}
}

func (f *cmdFixture) qpIn(cqn uint32) mlx5.CreateQPIn {
	return mlx5.CreateQPIn{QPC: mlx5.QPContext{ST: mlx5.STRC, PMState: mlx5.PMStateMigrated, PD: f.pd.PDN(),
		UARPage: f.uar.PageID(), CQNSnd: cqn, CQNRcv: cqn, LogSQSize: 6, RQType: mlx5.RQTypeZeroSize,
		TSFormat: mlx5.TSDefault, DBRUMEMValid: true, DBRUMEMID: f.um.ID(), DBRAddr: offQPDBR},
		WQUMEMID: f.um.ID(), WQUMEMValid: true}
}

// mb returns a marshalled mailbox; the builders never fail on the inputs
// these tests give them.
func mb(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// wantFW checks that err is a firmware rejection with the given syndrome
// (and the status the table assigns it), with the output mailbox filled.
func wantFW(t *testing.T, err error, out []byte, syn uint32) {
	t.Helper()
	st, _, ok := SyndromeInfo(syn)
	if !ok {
		t.Fatalf("syndrome 0x%x is not in the table", syn)
	}
	ce, isCmd := mlx5.AsCmdError(err)
	if !isCmd || ce.Status != st || ce.Syndrome != syn || !errors.Is(err, syscall.EREMOTEIO) {
		t.Fatalf("got %v; want status %v syndrome 0x%x (EREMOTEIO)", err, st, syn)
	}
	if s, sy := mlx5.OutStatus(out); s != st || sy != syn {
		t.Fatalf("out mailbox status %v syndrome 0x%x", s, sy)
	}
}

func TestCreateCQRejects(t *testing.T) {
	f := newCmdFixture(t, ModelCX7)
	cases := []struct {
		name   string
		mut    func(in *mlx5.CreateCQIn)
		raw    func(b []byte) []byte
		outLen int
		syn    uint32
	}{
		{name: "short_input", raw: func(b []byte) []byte { return b[:100] }, syn: SynBadInLen},
		{name: "short_output", outLen: 8, syn: SynBadOutLen},
		{name: "op_mod", raw: func(b []byte) []byte { b[7] = 1; return b }, syn: SynBadOpMod},
		{name: "cqe_128", mut: func(in *mlx5.CreateCQIn) { in.CQC.CQESz = 1 }, syn: SynCQESize},
		{name: "compression", mut: func(in *mlx5.CreateCQIn) { in.CQC.CQECompEn = true }, syn: SynCQCompression},
		{name: "too_large", mut: func(in *mlx5.CreateCQIn) { in.CQC.LogCQSize = capLogMaxCQSz + 1 }, syn: SynCQSize},
		{name: "bad_uar", mut: func(in *mlx5.CreateCQIn) { in.CQC.UARPage = 0x7777 }, syn: SynCQUAR},
		{name: "other_context_uar", mut: func(in *mlx5.CreateCQIn) { in.CQC.UARPage = f.otherUA.PageID() }, syn: SynCQUAR},
		{name: "bad_eqn", mut: func(in *mlx5.CreateCQIn) { in.CQC.CEQN = 0 }, syn: SynCQEQN},
		{name: "bad_umem", mut: func(in *mlx5.CreateCQIn) { in.CQUMEMID = 999 }, syn: SynCQUMEM},
		{name: "other_context_umem", mut: func(in *mlx5.CreateCQIn) { in.CQUMEMID = f.otherUM.ID() }, syn: SynCQUMEM},
		{name: "ring_outside_umem", mut: func(in *mlx5.CreateCQIn) { in.CQUMEMOffset = memSize - 512 }, syn: SynCQUMEMRange},
		{name: "ring_unaligned", mut: func(in *mlx5.CreateCQIn) { in.CQUMEMOffset = offCQ + 64 }, syn: SynCQUMEMRange},
		{name: "bad_dbr_umem", mut: func(in *mlx5.CreateCQIn) { in.CQC.DBRUMEMID = 999 }, syn: SynCQDBRUMEM},
		{name: "dbr_unaligned", mut: func(in *mlx5.CreateCQIn) { in.CQC.DBRAddr = offCQDBR + 4 }, syn: SynCQDBRRange},
		{name: "dbr_outside", mut: func(in *mlx5.CreateCQIn) { in.CQC.DBRAddr = memSize }, syn: SynCQDBRRange},
		{name: "read_only_status", mut: func(in *mlx5.CreateCQIn) { in.CQC.Status = 9 }, syn: SynReserved},
		{name: "page_offset", mut: func(in *mlx5.CreateCQIn) { in.CQC.PageOffset = 1 }, syn: SynCQPageOffset},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := f.cqIn()
			if tc.mut != nil {
				tc.mut(&in)
			}
			b := mb(in.Marshal())
			if tc.raw != nil {
				b = tc.raw(b)
			}
			n := 16
			if tc.outLen != 0 {
				n = tc.outLen
			}
			out := make([]byte, n)
			obj, err := f.dev.CreateObj(b, out)
			if obj != nil {
				t.Fatal("an object was created")
			}
			wantFW(t, err, out, tc.syn)
		})
	}
}

func TestCreateQPRejects(t *testing.T) {
	f := newCmdFixture(t, ModelCX7)
	cq, err := f.dev.CreateObj(mb(f.cqIn().Marshal()), make([]byte, 16))
	must(t, err)
	defer cq.Destroy()
	cases := []struct {
		name string
		mut  func(in *mlx5.CreateQPIn)
		raw  func(b []byte)
		syn  uint32
	}{
		{name: "ud", mut: func(in *mlx5.CreateQPIn) { in.QPC.ST = mlx5.STUD }, syn: SynQPServiceType},
		{name: "bad_pd", mut: func(in *mlx5.CreateQPIn) { in.QPC.PD = 0xabcd }, syn: SynQPPD},
		{name: "other_context_pd", mut: func(in *mlx5.CreateQPIn) { in.QPC.PD = f.otherPD.PDN() }, syn: SynQPPD},
		{name: "bad_uar", mut: func(in *mlx5.CreateQPIn) { in.QPC.UARPage = 3 }, syn: SynQPUAR},
		{name: "bad_cqn_snd", mut: func(in *mlx5.CreateQPIn) { in.QPC.CQNSnd = 0x12345 }, syn: SynQPCQSnd},
		{name: "bad_cqn_rcv", mut: func(in *mlx5.CreateQPIn) { in.QPC.CQNRcv = 0x12345 }, syn: SynQPCQRcv},
		{name: "crq", mut: func(in *mlx5.CreateQPIn) { in.QPC.RQType = mlx5.RQTypeCRQ }, syn: SynQPRQType},
		{name: "srq_without_rmp", mut: func(in *mlx5.CreateQPIn) { in.QPC.RQType = mlx5.RQTypeSRQ }, syn: SynQPSRQ},
		{name: "no_dbr_on_cx7", mut: func(in *mlx5.CreateQPIn) { in.QPC.SendDBRMode = mlx5.SendDBRNoDBRExt }, syn: SynQPDBRMode},
		{name: "cd_slave", mut: func(in *mlx5.CreateQPIn) { in.QPC.CDSlaveSend = true }, syn: SynQPCDSlave},
		{name: "cs_res_64", mut: func(in *mlx5.CreateQPIn) { in.QPC.CSRes = mlx5.ResScatData64CQE }, syn: SynQPScatterCQE},
		{name: "cs_req", mut: func(in *mlx5.CreateQPIn) { in.QPC.CSReq = 0x11 }, syn: SynQPScatterCQE},
		{name: "ts_format", raw: func(b []byte) { mlx5.Set(b[qpcByte:], qf.TSFormat, 3) }, syn: SynQPTSFormat},
		{name: "bad_wq_umem", mut: func(in *mlx5.CreateQPIn) { in.WQUMEMID = 77 }, syn: SynQPWQUMEM},
		{name: "wq_outside", mut: func(in *mlx5.CreateQPIn) { in.WQUMEMOffset = memSize }, syn: SynQPWQRange},
		{name: "bad_dbr_umem", mut: func(in *mlx5.CreateQPIn) { in.QPC.DBRUMEMID = 77 }, syn: SynQPDBRUMEM},
		{name: "dbr_unaligned", mut: func(in *mlx5.CreateQPIn) { in.QPC.DBRAddr = offQPDBR + 2 }, syn: SynQPDBRRange},
		{name: "state_not_rst", raw: func(b []byte) { mlx5.Set(b[qpcByte:], qf.State, 3) }, syn: SynReserved},
		{name: "opt_mask", raw: func(b []byte) { mlx5.Set(b, fQPOptMask, 2) }, syn: SynReserved},
		{name: "rq_stride_too_large", mut: func(in *mlx5.CreateQPIn) {
			in.QPC.RQType, in.QPC.LogRQSize, in.QPC.LogRQStride = mlx5.RQTypeRegular, 2, 7
		}, syn: SynQPRQSize},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := f.qpIn(cq.ID())
			if tc.mut != nil {
				tc.mut(&in)
			}
			b := mb(in.Marshal())
			if tc.raw != nil {
				tc.raw(b)
			}
			out := make([]byte, 16)
			obj, err := f.dev.CreateObj(b, out)
			if obj != nil {
				obj.Destroy()
			}
			wantFW(t, err, out, tc.syn)
		})
	}
	t.Run("cq_busy", func(t *testing.T) {
		qp, err := f.dev.CreateObj(mb(f.qpIn(cq.ID()).Marshal()), make([]byte, 16))
		must(t, err)
		err = cq.Destroy()
		if ce, ok := mlx5.AsCmdError(err); !ok || ce.Status != mlx5.StatusResBusy || ce.Syndrome != SynCQBusy {
			t.Fatalf("destroy CQ in use: %v", err)
		}
		must(t, qp.Destroy())
	})
}

func TestTransitionRejects(t *testing.T) {
	f := newCmdFixture(t, ModelCX7)
	cq, err := f.dev.CreateObj(mb(f.cqIn().Marshal()), make([]byte, 16))
	must(t, err)
	defer cq.Destroy()
	newQP := func(t *testing.T) mlx5.Obj {
		qp, err := f.dev.CreateObj(mb(f.qpIn(cq.ID()).Marshal()), make([]byte, 16))
		must(t, err)
		t.Cleanup(func() { qp.Destroy() })
		return qp
	}
	rst2init := func(qpn uint32) mlx5.ModifyQPIn {
		in := mlx5.NewModifyQPIn(mlx5.OpRST2INIT, qpn)
		in.QPC.PrimaryAddressPath.VHCAPortNum, in.QPC.PMState = 1, mlx5.PMStateMigrated
		return in
	}
	init2rtr := func(qpn uint32) mlx5.ModifyQPIn {
		in := mlx5.NewModifyQPIn(mlx5.OpINIT2RTR, qpn)
		in.QPC.MTU, in.QPC.LogMsgMax, in.QPC.RemoteQPN = mlx5.MTU4096, 30, 0x123
		in.QPC.PrimaryAddressPath.RGID = f.nic.GID()
		in.QPC.PrimaryAddressPath.VHCAPortNum = 1
		return in
	}
	apply := func(t *testing.T, qp mlx5.Obj, in mlx5.ModifyQPIn) ([]byte, error) {
		out := make([]byte, 16)
		return out, qp.Modify(mb(in.Marshal()), out)
	}
	cases := []struct {
		name  string
		steps int // transitions applied successfully first (RST2INIT, INIT2RTR)
		in    func(qpn uint32) mlx5.ModifyQPIn
		syn   uint32
	}{
		{"rtr_from_rst", 0, init2rtr, SynQPBadTransition},
		{"rts_from_init", 1, func(q uint32) mlx5.ModifyQPIn { return mlx5.NewModifyQPIn(mlx5.OpRTR2RTS, q) }, SynQPBadTransition},
		{"sqerr2rts", 0, func(q uint32) mlx5.ModifyQPIn { return mlx5.NewModifyQPIn(mlx5.OpSQERR2RTS, q) }, SynQPBadTransition},
		{"rst2init_opt_mask", 0, func(q uint32) mlx5.ModifyQPIn { in := rst2init(q); in.OptParamMask = mlx5.OptRRE; return in }, SynQPOptMask},
		{"rst2init_port", 0, func(q uint32) mlx5.ModifyQPIn {
			in := rst2init(q)
			in.QPC.PrimaryAddressPath.VHCAPortNum = 2
			return in
		}, SynQPPort},
		{"rst2init_atomic_without_rae", 0, func(q uint32) mlx5.ModifyQPIn {
			in := rst2init(q)
			in.QPC.AtomicMode = mlx5.AtomicMode8B
			return in
		}, SynQPAtomicMode},
		{"rst2init_pm_state", 0, func(q uint32) mlx5.ModifyQPIn { in := rst2init(q); in.QPC.PMState = mlx5.PMStateRearm; return in }, SynQPPMState},
		{"init2rtr_mtu", 1, func(q uint32) mlx5.ModifyQPIn { in := init2rtr(q); in.QPC.MTU = mlx5.MTU8192; return in }, SynQPMTU},
		{"init2rtr_msg_max", 1, func(q uint32) mlx5.ModifyQPIn { in := init2rtr(q); in.QPC.LogMsgMax = 31; return in }, SynQPMsgMax},
		{"init2rtr_rra_max", 1, func(q uint32) mlx5.ModifyQPIn { in := init2rtr(q); in.QPC.LogRRAMax = 5; return in }, SynQPRRAMax},
		{"init2rtr_gid_index", 1, func(q uint32) mlx5.ModifyQPIn {
			in := init2rtr(q)
			in.QPC.PrimaryAddressPath.SrcAddrIndex = 1
			return in
		}, SynQPSrcGID},
		{"init2rtr_remote_gid_family", 1, func(q uint32) mlx5.ModifyQPIn {
			in := init2rtr(q)
			in.QPC.PrimaryAddressPath.RGID = [16]byte{0xfe, 0x80, 15: 1}
			return in
		}, SynQPRemoteGID},
		{"init2rtr_remote_qpn", 1, func(q uint32) mlx5.ModifyQPIn { in := init2rtr(q); in.QPC.RemoteQPN = 0; return in }, SynQPRemoteQPN},
		{"init2rtr_udp_sport", 1, func(q uint32) mlx5.ModifyQPIn {
			in := init2rtr(q)
			in.QPC.PrimaryAddressPath.UDPSport = 0x1234
			return in
		}, SynQPUDPSport},
		{"init2rtr_disallowed_opt", 1, func(q uint32) mlx5.ModifyQPIn {
			in := init2rtr(q)
			in.OptParamMask = mlx5.OptRNRTimeout
			return in
		}, SynQPOptMask},
		{"rtr2rts_sra_max", 2, func(q uint32) mlx5.ModifyQPIn {
			in := mlx5.NewModifyQPIn(mlx5.OpRTR2RTS, q)
			in.QPC.LogSRAMax = 5
			return in
		}, SynQPSRAMax},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			qp := newQP(t)
			steps := []mlx5.ModifyQPIn{rst2init(qp.ID()), init2rtr(qp.ID())}
			for _, s := range steps[:tc.steps] {
				if _, err := apply(t, qp, s); err != nil {
					t.Fatalf("setup: %v", err)
				}
			}
			out, err := apply(t, qp, tc.in(qp.ID()))
			wantFW(t, err, out, tc.syn)
		})
	}
	t.Run("full_cycle_and_query", func(t *testing.T) {
		qp := newQP(t)
		for _, in := range []mlx5.ModifyQPIn{rst2init(qp.ID()), init2rtr(qp.ID())} {
			if _, err := apply(t, qp, in); err != nil {
				t.Fatal(err)
			}
		}
		rts := mlx5.NewModifyQPIn(mlx5.OpRTR2RTS, qp.ID())
		rts.QPC.NextSendPSN, rts.QPC.RetryCount = 0x4242, 7
		if _, err := apply(t, qp, rts); err != nil {
			t.Fatal(err)
		}
		qin := mb(mlx5.QueryQPIn(qp.ID()).Marshal())
		out := make([]byte, mlx5.QueryQPOutLen)
		must(t, qp.Query(qin, out))
		o, err := mlx5.UnmarshalQueryQPOut(out)
		must(t, err)
		if o.QPC.State != mlx5.QPStateRTS || o.QPC.NextSendPSN != 0x4242 || o.QPC.RetryCount != 7 || o.QPC.MTU != mlx5.MTU4096 || o.QPC.RemoteQPN != 0x123 {
			t.Fatalf("QUERY_QP: %+v", o.QPC)
		}
		for _, op := range []mlx5.Opcode{mlx5.Op2ERR, mlx5.Op2RST} {
			if _, err := apply(t, qp, mlx5.NewModifyQPIn(op, qp.ID())); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestKernelChecks covers what the kernel rejects before firmware sees it:
// errno only, output untouched.
func TestKernelChecks(t *testing.T) {
	f := newCmdFixture(t, ModelCX7)
	cq, err := f.dev.CreateObj(mb(f.cqIn().Marshal()), make([]byte, 16))
	must(t, err)
	defer cq.Destroy()
	wantErrno := func(t *testing.T, err error, out []byte) {
		t.Helper()
		ce, ok := mlx5.AsCmdError(err)
		if !ok || ce.Errno != syscall.EINVAL || ce.Status != mlx5.StatusOK || !errors.Is(err, syscall.EINVAL) {
			t.Fatalf("got %v, want a kernel EINVAL", err)
		}
		for _, c := range out {
			if c != 0xee {
				t.Fatal("output mailbox was written")
			}
		}
	}
	poison := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = 0xee
		}
		return b
	}
	t.Run("vhca_tunnel_id", func(t *testing.T) {
		b := mb(f.cqIn().Marshal())
		b[4] = 1
		out := poison(16)
		_, err := f.dev.CreateObj(b, out)
		wantErrno(t, err, out)
	})
	t.Run("create_with_query_opcode", func(t *testing.T) {
		out := poison(272)
		_, err := f.dev.CreateObj(mb(mlx5.QueryCQIn(cq.ID()).Marshal()), out)
		wantErrno(t, err, out)
	})
	t.Run("general_not_whitelisted", func(t *testing.T) {
		out := poison(16)
		wantErrno(t, f.dev.GeneralCmd(mb(f.cqIn().Marshal()), out), out)
	})
	t.Run("query_wrong_id", func(t *testing.T) {
		out := poison(272)
		wantErrno(t, cq.Query(mb(mlx5.QueryCQIn(cq.ID()+1).Marshal()), out), out)
	})
	t.Run("modify_cq", func(t *testing.T) {
		out := poison(16)
		wantErrno(t, cq.Modify(mb(mlx5.NewModifyQPIn(mlx5.Op2ERR, cq.ID()).Marshal()), out), out)
	})
}

func TestGeneralCommands(t *testing.T) {
	for _, model := range []Model{ModelCX7, ModelCX8} {
		t.Run(model.String(), func(t *testing.T) {
			f := newCmdFixture(t, model)
			query := func(tp mlx5.CapType) mlx5.QueryHCACapOut {
				in := mb(mlx5.NewQueryHCACapIn(tp, true).Marshal())
				out := make([]byte, mlx5.QueryHCACapOutLen)
				must(t, f.dev.GeneralCmd(in, out))
				o, err := mlx5.UnmarshalQueryHCACapOut(out)
				must(t, err)
				return o
			}
			g, err := query(mlx5.CapGeneral).General()
			must(t, err)
			if !g.RC || !g.UC || !g.CD || !g.CQOI || !g.RoCE || !g.Atomic || g.PortType != mlx5.PortTypeETH || g.LogMaxQPSz != capLogMaxQPSz || g.LogMaxMsg != capLogMaxMsg {
				t.Fatalf("general caps: %+v", g)
			}
			r, err := query(mlx5.CapRoCE).RoCE()
			must(t, err)
			if r.RoCEVersion&4 == 0 || r.RRoCEDestUDPPort != 4791 || r.RRoCEMinSrcUDPPort != capSportMin {
				t.Fatalf("roce caps: %+v", r)
			}
			a, err := query(mlx5.CapAtomic).Atomic()
			must(t, err)
			if a.AtomicReq8BEndiannessMode != mlx5.AtomicEndiannessHostMode || a.AtomicOperations != 0xf || a.AtomicSizeQP != 0xc {
				t.Fatalf("atomic caps: %+v", a)
			}
			g2, err := query(mlx5.CapGeneral2).General2()
			must(t, err)
			if g2.SendDBRModeNoDBRExt != (model == ModelCX8) {
				t.Fatalf("caps2 no-DBR %v on %v", g2.SendDBRModeNoDBRExt, model)
			}
			out := make([]byte, mlx5.QueryHCACapOutLen)
			in := mb(mlx5.NewQueryHCACapIn(mlx5.CapGeneral, true).Marshal())
			in[7] = 0x0e // type 7, flow table: not emulated
			wantFW(t, f.dev.GeneralCmd(in, out), out, SynCapType)
			in[7] = 1
			in[8] = 0x80 // other_function
			wantFW(t, f.dev.GeneralCmd(in, out), out, SynOtherFunction)
			nop := make([]byte, 16)
			nop[0], nop[1] = 0x08, 0x0d
			must(t, f.dev.GeneralCmd(nop, make([]byte, 16)))
			nop[7] = 1
			out16 := make([]byte, 16)
			wantFW(t, f.dev.GeneralCmd(nop, out16), out16, SynBadOpMod)
			ra := make([]byte, 16)
			ra[0], ra[1] = 0x07, 0x60
			out48 := make([]byte, 48)
			must(t, f.dev.GeneralCmd(ra, out48))
			if g := f.nic.GID(); string(out48[16:32]) != string(g[:]) || out48[43] != 2 {
				t.Fatalf("QUERY_ROCE_ADDRESS: % x", out48)
			}
			ra[9] = 1
			wantFW(t, f.dev.GeneralCmd(ra, out48), out48, SynGIDIndex)
		})
	}
}

// TestSyndromeTable checks that every syndrome is unique, documented and
// reported with a failing status.
func TestSyndromeTable(t *testing.T) {
	seen := map[string]uint32{}
	for syn, info := range syndromeTable {
		if info.status == mlx5.StatusOK || info.what == "" {
			t.Errorf("syndrome 0x%x: status %v, meaning %q", syn, info.status, info.what)
		}
		if prev, dup := seen[info.what]; dup {
			t.Errorf("syndromes 0x%x and 0x%x share the meaning %q", prev, syn, info.what)
		}
		seen[info.what] = syn
	}
	if _, _, ok := SyndromeInfo(0); ok {
		t.Error("syndrome 0 must not be in the table")
	}
}

func (f *cmdFixture) rmpIn() mlx5.CreateRMPIn {
	return mlx5.CreateRMPIn{RMPC: mlx5.RMPContext{State: mlx5.RMPStateRDY, WQ: mlx5.WQContext{
		WQType: mlx5.WQTypeCyclic, PD: f.pd.PDN(), LogWQStride: 6, LogWQSz: 4,
		DBRUMEMID: f.um.ID(), DBRAddr: offQPDBR + 128, WQUMEMID: f.um.ID(), WQUMEMOffset: 2 << 20}}}
}

// Every check of CREATE_RMP answers its own syndrome, and the fixture's
// input is accepted.
func TestCreateRMPRejects(t *testing.T) {
	f := newCmdFixture(t, ModelCX7)
	obj, err := f.dev.CreateObj(mb(f.rmpIn().Marshal()), make([]byte, 16))
	must(t, err)
	must(t, obj.Destroy())
	cases := []struct {
		name string
		mut  func(in *mlx5.CreateRMPIn)
		raw  func(b []byte) []byte
		syn  uint32
	}{
		{name: "short_input", raw: func(b []byte) []byte { return b[:mlx5.CreateRMPInLen-1] }, syn: SynBadInLen},
		{name: "op_mod", raw: func(b []byte) []byte { b[7] = 1; return b }, syn: SynBadOpMod},
		{name: "state_rst", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.State = 0 }, syn: SynRMPType},
		{name: "wq_type", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.WQ.WQType = 2 }, syn: SynRMPType},
		{name: "hw_counter", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.WQ.HWCounter = 1 }, syn: SynReserved},
		{name: "sw_counter", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.WQ.SWCounter = 1 }, syn: SynReserved},
		{name: "bad_pd", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.WQ.PD = 0xabcd }, syn: SynRMPPD},
		{name: "other_context_pd", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.WQ.PD = f.otherPD.PDN() }, syn: SynRMPPD},
		{name: "too_large", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.WQ.LogWQSz = capLogMaxSRQSz + 1 }, syn: SynRMPSize},
		{name: "stride_small", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.WQ.LogWQStride = 3 }, syn: SynRMPSize},
		{name: "stride_large", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.WQ.LogWQStride = 15 }, syn: SynRMPSize},
		{name: "bad_wq_umem", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.WQ.WQUMEMID = 999 }, syn: SynRMPUMEM},
		{name: "other_context_umem", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.WQ.WQUMEMID = f.otherUM.ID() }, syn: SynRMPUMEM},
		{name: "ring_outside", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.WQ.WQUMEMOffset = memSize - 512 }, syn: SynRMPUMEM},
		{name: "bad_dbr_umem", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.WQ.DBRUMEMID = 999 }, syn: SynRMPUMEM},
		{name: "dbr_unaligned", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.WQ.DBRAddr = offQPDBR + 130 }, syn: SynRMPUMEM},
		{name: "dbr_outside", mut: func(in *mlx5.CreateRMPIn) { in.RMPC.WQ.DBRAddr = memSize }, syn: SynRMPUMEM},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := f.rmpIn()
			if tc.mut != nil {
				tc.mut(&in)
			}
			b := mb(in.Marshal())
			if tc.raw != nil {
				b = tc.raw(b)
			}
			out := make([]byte, 16)
			obj, err := f.dev.CreateObj(b, out)
			if obj != nil {
				t.Fatal("an object was created")
			}
			wantFW(t, err, out, tc.syn)
		})
	}
}

// Every check of the general commands answers its own syndrome; the
// unmodified inputs are accepted.
func TestGeneralCommandRejects(t *testing.T) {
	f := newCmdFixture(t, ModelCX7)
	short := func(op mlx5.Opcode) []byte {
		b := make([]byte, mlx5.CmdShortLen)
		mlx5.Set(b, mlx5.CmdHeaderFields.Opcode, uint64(op))
		return b
	}
	capIn := func() []byte { return mb(mlx5.NewQueryHCACapIn(mlx5.CapGeneral, true).Marshal()) }
	set := func(b []byte, fld mlx5.Field, v uint64) []byte { mlx5.Set(b, fld, v); return b }
	opMod := mlx5.CmdHeaderFields.OpMod
	vf := mlx5.QueryHCAVportContextInFields
	rf := mlx5.QueryRoCEAddressInFields
	cf := mlx5.QueryHCACapInFields
	cases := []struct {
		name   string
		in     []byte
		outLen int
		syn    uint32 // 0: accepted
	}{
		{"NOP", short(mlx5.OpNOP), 16, 0},
		{"NOP op_mod", set(short(mlx5.OpNOP), opMod, 1), 16, SynBadOpMod},
		{"NOP short out", short(mlx5.OpNOP), 8, SynBadOutLen},
		{"QUERY_HCA_CAP", capIn(), mlx5.QueryHCACapOutLen, 0},
		{"QUERY_HCA_CAP short in", capIn()[:mlx5.QueryHCACapInLen-1], mlx5.QueryHCACapOutLen, SynBadInLen},
		{"QUERY_HCA_CAP other_function", set(capIn(), cf.OtherFunction, 1), mlx5.QueryHCACapOutLen, SynOtherFunction},
		{"QUERY_HCA_CAP function_id", set(capIn(), cf.FunctionID, 1), mlx5.QueryHCACapOutLen, SynOtherFunction},
		{"QUERY_HCA_CAP type past 8 bits", set(capIn(), opMod, uint64(mlx5.CapGeneral)<<1|0x200), mlx5.QueryHCACapOutLen, SynCapType},
		{"QUERY_HCA_CAP type not emulated", set(capIn(), opMod, 7<<1), mlx5.QueryHCACapOutLen, SynCapType},
		{"QUERY_ROCE_ADDRESS", short(mlx5.OpQueryRoCEAddress), mlx5.QueryRoCEAddressOutLen, 0},
		{"QUERY_ROCE_ADDRESS op_mod", set(short(mlx5.OpQueryRoCEAddress), opMod, 1), mlx5.QueryRoCEAddressOutLen, SynBadOpMod},
		{"QUERY_ROCE_ADDRESS port 1", set(short(mlx5.OpQueryRoCEAddress), rf.VHCAPortNum, 1), mlx5.QueryRoCEAddressOutLen, 0},
		{"QUERY_ROCE_ADDRESS port 2", set(short(mlx5.OpQueryRoCEAddress), rf.VHCAPortNum, 2), mlx5.QueryRoCEAddressOutLen, SynBadPort},
		{"QUERY_ROCE_ADDRESS index", set(short(mlx5.OpQueryRoCEAddress), rf.RoCEAddressIndex, 0x100), mlx5.QueryRoCEAddressOutLen, SynGIDIndex},
		{"QUERY_HCA_VPORT_CONTEXT", short(mlx5.OpQueryHCAVportContext), mlx5.QueryHCAVportContextOutLen, 0},
		{"QUERY_HCA_VPORT_CONTEXT op_mod", set(short(mlx5.OpQueryHCAVportContext), opMod, 1), mlx5.QueryHCAVportContextOutLen, SynBadOpMod},
		{"QUERY_HCA_VPORT_CONTEXT other_vport", set(short(mlx5.OpQueryHCAVportContext), vf.OtherVport, 1), mlx5.QueryHCAVportContextOutLen, SynOtherFunction},
		{"QUERY_HCA_VPORT_CONTEXT vport_number", set(short(mlx5.OpQueryHCAVportContext), vf.VportNumber, 3), mlx5.QueryHCAVportContextOutLen, SynOtherFunction},
		{"QUERY_HCA_VPORT_CONTEXT port 2", set(short(mlx5.OpQueryHCAVportContext), vf.PortNum, 2), mlx5.QueryHCAVportContextOutLen, SynBadPort},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := make([]byte, tc.outLen)
			err := f.dev.GeneralCmd(tc.in, out)
			if tc.syn == 0 {
				must(t, err)
				if s, _ := mlx5.OutStatus(out); s != mlx5.StatusOK {
					t.Fatalf("status %v", s)
				}
				return
			}
			wantFW(t, err, out, tc.syn)
		})
	}
}
