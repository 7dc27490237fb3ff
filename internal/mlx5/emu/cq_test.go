package emu

import (
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Class 7: a CQ never loses or invents completions silently.

// queryCQ returns the live CQ context.
func (e *endpoint) queryCQ() mlx5.CQContext {
	e.t.Helper()
	in, err := mlx5.QueryCQIn(e.cqn).Marshal()
	must(e.t, err)
	out := make([]byte, mlx5.QueryCQOutLen)
	must(e.t, e.cq.Query(in, out))
	o, err := mlx5.UnmarshalQueryCQOut(out)
	must(e.t, err)
	return o.CQC
}

// TestCQOverrunReported: 16 signaled WRITEs on a 4-entry CQ that software
// does not consume (oi = 0). The CQ takes 4 CQEs and goes to error with
// QUERY_CQ status overflow; every QP that completes to it (here a second
// one too) is in ERR per QUERY_QP; WQEs posted later are consumed (the SQ
// counter moves) without a CQE; nothing is written past the 4 entries.
func TestCQOverrunReported(t *testing.T) {
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{logCQ: 2}, qpOpts{})
	// A second QP of x's context completing to the same CQ, in INIT.
	q2in := mlx5.CreateQPIn{QPC: mlx5.QPContext{ST: mlx5.STRC, PMState: mlx5.PMStateMigrated, PD: x.pd.PDN(), UARPage: x.uar.PageID(),
		CQNSnd: x.cqn, CQNRcv: x.cqn, LogSQSize: 4, RQType: mlx5.RQTypeZeroSize, TSFormat: mlx5.TSDefault,
		DBRUMEMValid: true, DBRUMEMID: x.um.ID(), DBRAddr: offQPDBR + 256},
		WQUMEMID: x.um.ID(), WQUMEMValid: true, WQUMEMOffset: 2 << 20}
	q2, err := x.dev.CreateObj(mb(q2in.Marshal()), make([]byte, 16))
	must(t, err)
	defer q2.Destroy()
	r2i := mlx5.NewModifyQPIn(mlx5.OpRST2INIT, q2.ID())
	r2i.QPC.PrimaryAddressPath.VHCAPortNum, r2i.QPC.PMState = 1, mlx5.PMStateMigrated
	must(t, q2.Modify(mb(r2i.Marshal()), make([]byte, 16)))

	for i := 0; i < 16; i++ {
		x.post(mlx5.NewRDMAWrite(signaled, y.raddr(8*i), x.sge(0, 8)))
	}
	deadline := time.Now().Add(5 * time.Second)
	for x.queryQP().State != mlx5.QPStateERR {
		if time.Now().After(deadline) {
			t.Fatal("QP did not go to ERR on CQ overrun")
		}
		time.Sleep(time.Millisecond)
	}
	c := x.queryCQ()
	if c.Status != cqStatusOverflow || c.ProducerCounter != 4 {
		t.Fatalf("QUERY_CQ status 0x%x producer %d; want overflow (0x9) after 4 CQEs", c.Status, c.ProducerCounter)
	}
	out := make([]byte, mlx5.QueryQPOutLen)
	must(t, q2.Query(mb(mlx5.QueryQPIn(q2.ID()).Marshal()), out))
	o, err := mlx5.UnmarshalQueryQPOut(out)
	must(t, err)
	if o.QPC.State != mlx5.QPStateERR {
		t.Fatalf("the other QP on the CQ is in %v, want ERR", o.QPC.State)
	}
	// A WQE posted now is consumed but gets no CQE (the CQ is in error).
	x.post(mlx5.NewNOP(signaled))
	for x.queryQP().HWSQWQEBBCounter != 17 {
		if time.Now().After(deadline) {
			t.Fatalf("the SQ stopped at %d of 17", x.queryQP().HWSQWQEBBCounter)
		}
		time.Sleep(time.Millisecond)
	}
	for i := 0; i < 4; i++ {
		if cqe := x.mustPoll(); cqe.Opcode != mlx5.CQEReq || cqe.WQECounter != uint16(i) {
			t.Fatalf("CQE %d: %v %v counter %d", i, cqe.Opcode, cqe.Syndrome, cqe.WQECounter)
		}
	}
	if cqe, err := x.poll(20 * time.Millisecond); err == nil {
		t.Fatalf("a CQE beyond the overrun: %v counter %d", cqe.Opcode, cqe.WQECounter)
	}
	if c := x.queryCQ(); c.ProducerCounter != 4 {
		t.Fatalf("producer counter %d after the overrun", c.ProducerCounter)
	}
}

// TestCQRingMustStartOwnedByHardware: CREATE_CQ refuses a ring in which an
// entry looks like a completion for the first pass (a zeroed ring would be
// read as 2^n successful completions); 0xF1 and rdma-core's 0xF0 are taken;
// a collapsed CQ needs only its entry 0 initialised. The same holds for a
// ring in GPU memory.
func TestCQRingMustStartOwnedByHardware(t *testing.T) {
	for _, gpu := range []bool{false, true} {
		name := "host"
		if gpu {
			name = "gpu"
		}
		t.Run(name, func(t *testing.T) {
			fx := newCmdFixture(t, ModelCX7)
			mem := hostMem(t, 1<<16)
			var g *fakeGPU
			addr := addrOf(mem)
			if gpu {
				g = newFakeGPU()
				SetGPUMemory(g)
				defer SetGPUMemory(nil)
				mem = g.alloc(t, 1<<16)
				addr = g.va(mem)
			}
			um, err := fx.dev.RegUMEM(addr, 1<<16, mlx5.AccessLocalWrite)
			must(t, err)
			defer um.Dereg()
			var out []byte
			create := func(log uint8, cc bool) (mlx5.Obj, error) {
				in := fx.cqIn()
				in.CQUMEMID, in.CQUMEMOffset = um.ID(), 0
				in.CQC.LogCQSize, in.CQC.CC = log, cc
				out = make([]byte, 16)
				o, err := fx.dev.CreateObj(mb(in.Marshal()), out)
				if o != nil {
					must(t, o.Destroy())
				}
				return o, err
			}
			set := func(b byte) {
				for i := 63; i < len(mem); i += 64 {
					mem[i] = b
				}
			}
			set(0)
			_, err = create(4, false)
			wantFW(t, err, out, SynCQRingOwned)
			for _, ok := range []byte{0xf1, 0xf0, 0x01, 0xff} {
				set(ok)
				if _, err := create(4, false); err != nil {
					t.Fatalf("ring of op_own 0x%02x refused: %v", ok, err)
				}
			}
			set(0xf1)
			mem[5*64+63] = 0x00 // one entry in the middle
			_, err = create(4, false)
			wantFW(t, err, out, SynCQRingOwned)
			mem[5*64+63] = 0x20 // RESP_SEND, owner 0
			_, err = create(4, false)
			wantFW(t, err, out, SynCQRingOwned)
			// Collapsed: only entry 0 matters.
			set(0)
			mem[63] = 0xf1
			if _, err := create(4, true); err != nil {
				t.Fatalf("collapsed CQ with entry 0 initialised refused: %v", err)
			}
			mem[63] = 0
			_, err = create(4, true)
			wantFW(t, err, out, SynCQRingOwned)
		})
	}
}
