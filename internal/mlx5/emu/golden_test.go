package emu

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/cmd_golden.txt from the emulator's outputs")

// TestCommandGolden runs one fixed sequence of every command the emulated
// firmware executes (the general queries, CREATE/QUERY of a CQ, QP and RMP,
// every QP transition with optional fields, and rejected commands) and
// compares each output mailbox, byte for byte, and each error with the
// recorded ones: the emulator's decoding and encoding may change, what it
// answers may not. Regenerate with -update-golden only for an intended
// change of behaviour.
func TestCommandGolden(t *testing.T) {
	var got []string
	var gid, mac []byte // per-process values, masked before hashing
	record := func(name string, out []byte, err error) {
		norm := bytes.ReplaceAll(out, gid, make([]byte, len(gid)))
		norm = bytes.ReplaceAll(norm, mac, make([]byte, len(mac)))
		sum := sha256.Sum256(norm)
		e := "ok"
		if err != nil {
			e = err.Error()
		}
		got = append(got, fmt.Sprintf("%s len=%d sha256=%s %s", name, len(out), hex.EncodeToString(sum[:8]), e))
	}
	for _, model := range []Model{ModelCX7, ModelCX8} {
		f := newCmdFixture(t, model)
		p := model.String() + " "
		g := f.nic.GID()
		gid, mac = g[:], f.nic.mac()
		general := func(name string, in []byte, outLen int) {
			out := make([]byte, outLen)
			record(p+name, out, f.dev.GeneralCmd(in, out))
		}
		for _, tp := range []mlx5.CapType{mlx5.CapGeneral, mlx5.CapAtomic, mlx5.CapRoCE, mlx5.CapGeneral2} {
			for _, cur := range []bool{false, true} {
				general(fmt.Sprintf("QUERY_HCA_CAP %v cur=%v", tp, cur), mb(mlx5.NewQueryHCACapIn(tp, cur).Marshal()), mlx5.QueryHCACapOutLen)
			}
		}
		short := func(op mlx5.Opcode, mod func(b []byte)) []byte {
			b := make([]byte, mlx5.CmdShortLen)
			mlx5.Set(b, mlx5.CmdHeaderFields.Opcode, uint64(op))
			if mod != nil {
				mod(b)
			}
			return b
		}
		general("NOP", short(mlx5.OpNOP, nil), 16)
		general("QUERY_ROCE_ADDRESS", short(mlx5.OpQueryRoCEAddress, nil), 48)
		general("QUERY_ROCE_ADDRESS port 2", short(mlx5.OpQueryRoCEAddress, func(b []byte) {
			mlx5.Set(b, mlx5.QueryRoCEAddressInFields.VHCAPortNum, 2)
		}), 48)
		general("QUERY_HCA_VPORT_CONTEXT", short(mlx5.OpQueryHCAVportContext, nil), 528)
		general("QUERY_HCA_VPORT_CONTEXT port 2", short(mlx5.OpQueryHCAVportContext, func(b []byte) {
			mlx5.Set(b, mlx5.QueryHCAVportContextInFields.PortNum, 2)
		}), 528)
		general("QUERY_NIC_VPORT_CONTEXT", short(mlx5.OpQueryNICVportContext, nil), 272)
		general("QUERY_NIC_VPORT_CONTEXT op_mod", short(mlx5.OpQueryNICVportContext, func(b []byte) {
			mlx5.Set(b, mlx5.CmdHeaderFields.OpMod, 1)
		}), 272)
		general("QUERY_NIC_VPORT_CONTEXT short out", short(mlx5.OpQueryNICVportContext, nil), 100)

		out := make([]byte, 16)
		cq, err := f.dev.CreateObj(mb(f.cqIn().Marshal()), out)
		record(p+"CREATE_CQ", out, err)
		if err != nil {
			t.Fatal(err)
		}
		query := func(name string, o mlx5.Obj, in mlx5.ObjCmdIn) {
			out := make([]byte, 272)
			record(p+name, out, o.Query(mb(in.Marshal()), out))
		}
		query("QUERY_CQ", cq, mlx5.QueryCQIn(cq.ID()))
		bad := f.cqIn()
		bad.CQC.CQESz = mlx5.CQESize128
		out = make([]byte, 16)
		_, err = f.dev.CreateObj(mb(bad.Marshal()), out)
		record(p+"CREATE_CQ cqe_sz 128", out, err)

		qin := f.qpIn(cq.ID())
		qin.QPC.UserIndex = 0x1234
		out = make([]byte, 16)
		qp, err := f.dev.CreateObj(mb(qin.Marshal()), out)
		record(p+"CREATE_QP", out, err)
		if err != nil {
			t.Fatal(err)
		}
		query("QUERY_QP new", qp, mlx5.QueryQPIn(qp.ID()))
		modify := func(name string, in mlx5.ModifyQPIn) {
			out := make([]byte, 16)
			record(p+name, out, qp.Modify(mb(in.Marshal()), out))
			query("QUERY_QP after "+name, qp, mlx5.QueryQPIn(qp.ID()))
		}
		in := mlx5.NewModifyQPIn(mlx5.OpRST2INIT, qp.ID())
		in.QPC.PrimaryAddressPath.VHCAPortNum, in.QPC.PMState = 1, mlx5.PMStateMigrated
		in.QPC.RRE, in.QPC.RWE, in.QPC.RAE, in.QPC.AtomicMode = true, true, true, mlx5.AtomicMode8B
		in.QPC.PrimaryAddressPath.PKeyIndex = 3
		in.QPC.LogRRAMax = 2 // not a RST2INIT field: ignored
		modify("RST2INIT", in)
		in = mlx5.NewModifyQPIn(mlx5.OpINIT2INIT, qp.ID())
		in.OptParamMask = mlx5.OptRWE | mlx5.OptPKeyIndex
		in.QPC.RWE, in.QPC.PrimaryAddressPath.PKeyIndex = false, 5
		in.QPC.RRE = false // RRE not in the mask: ignored
		modify("INIT2INIT", in)
		in = mlx5.NewModifyQPIn(mlx5.OpINIT2RTR, qp.ID())
		in.OptParamMask = mlx5.OptRWE | mlx5.OptAltAddrPath
		in.QPC.RWE = true
		in.QPC.MTU, in.QPC.LogMsgMax, in.QPC.RemoteQPN, in.QPC.NextRcvPSN = mlx5.MTU1024, 30, 0x321, 0x100
		in.QPC.MinRNRNak, in.QPC.LogRRAMax = 12, 3
		ap := &in.QPC.PrimaryAddressPath
		ap.RGID = f.nic.GID()
		ap.HopLimit, ap.UDPSport, ap.VHCAPortNum, ap.DSCP, ap.TClass, ap.FlowLabel = 64, 0xc123, 1, 26, 0x68, 0x12345
		copy(ap.RMAC[:], []byte{2, 0xe0, 1, 2, 3, 4})
		in.QPC.SecondaryAddressPath = *ap
		in.QPC.SecondaryAddressPath.UDPSport = 0xc999
		in.QPC.PrimaryAddressPath.AckTimeout = 9 // RTR2RTS's: ignored here
		modify("INIT2RTR", in)
		in = mlx5.NewModifyQPIn(mlx5.OpRTR2RTS, qp.ID())
		in.OptParamMask = mlx5.OptRNRTimeout | mlx5.OptPMState
		in.QPC.NextSendPSN, in.QPC.RetryCount, in.QPC.RNRRetry, in.QPC.LogSRAMax, in.QPC.LogAckReqFreq = 0x200, 7, 6, 3, 2
		in.QPC.PrimaryAddressPath.AckTimeout = 14
		in.QPC.MinRNRNak, in.QPC.PMState = 5, mlx5.PMStateMigrated
		modify("RTR2RTS", in)
		in = mlx5.NewModifyQPIn(mlx5.OpRTS2RTS, qp.ID())
		in.OptParamMask = mlx5.OptRRE | mlx5.OptSGIDIndex
		in.OptParamMask95_32 = mlx5.OptExtUDPSport
		in.QPC.PrimaryAddressPath.UDPSport = 0xd000
		modify("RTS2RTS", in)
		in = mlx5.NewModifyQPIn(mlx5.OpRTS2RTS, qp.ID())
		in.OptParamMask = mlx5.OptPriPort
		modify("RTS2RTS PRI_PORT (refused)", in)
		in = mlx5.NewModifyQPIn(mlx5.OpINIT2RTR, qp.ID())
		modify("INIT2RTR from RTS (refused)", in)
		modify("2ERR", mlx5.NewModifyQPIn(mlx5.Op2ERR, qp.ID()))
		modify("2ERR from ERR", mlx5.NewModifyQPIn(mlx5.Op2ERR, qp.ID()))
		modify("RTS2RTS from ERR (refused)", mlx5.NewModifyQPIn(mlx5.OpRTS2RTS, qp.ID()))
		modify("2RST", mlx5.NewModifyQPIn(mlx5.Op2RST, qp.ID()))
		modify("SQERR2RTS from RST (refused)", mlx5.NewModifyQPIn(mlx5.OpSQERR2RTS, qp.ID()))

		bq := f.qpIn(cq.ID())
		bq.QPC.ST = 3
		out = make([]byte, 16)
		_, err = f.dev.CreateObj(mb(bq.Marshal()), out)
		record(p+"CREATE_QP st 3", out, err)

		rin := mlx5.CreateRMPIn{RMPC: mlx5.RMPContext{State: 1, WQ: mlx5.WQContext{WQType: 1, PD: f.pd.PDN(),
			LogWQStride: 6, LogWQSz: 4, DBRUMEMID: f.um.ID(), DBRAddr: offQPDBR + 128, WQUMEMID: f.um.ID(), WQUMEMOffset: 2 << 20}}}
		out = make([]byte, 16)
		rmp, err := f.dev.CreateObj(mb(rin.Marshal()), out)
		record(p+"CREATE_RMP", out, err)
		if err == nil {
			query("QUERY_RMP", rmp, mlx5.QueryRMPIn(rmp.ID()))
			record(p+"DESTROY_RMP", nil, rmp.Destroy())
		}
		record(p+"DESTROY_QP", nil, qp.Destroy())
		record(p+"DESTROY_CQ", nil, cq.Destroy())
	}
	path := filepath.Join("testdata", "cmd_golden.txt")
	text := strings.Join(got, "\n") + "\n"
	if *updateGolden {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-golden to record)", err)
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(text, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Errorf("line %d:\n got  %s\n want %s", i+1, g, w)
		}
	}
}
