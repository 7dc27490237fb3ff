package emu

import (
	"fmt"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// TestTransitionsFollowMLX5Table drives QPs of both service types into every
// state the emulator reaches and sends every transition, then every single
// opt_param_mask bit of every transition: the firmware's answers (a bad
// state, a refused mask, or anything else) are the ones mlx5's transition
// table gives. The emulator keeps no table of its own; this holds it to
// mlx5's.
func TestTransitionsFollowMLX5Table(t *testing.T) {
	f := newCmdFixture(t, ModelCX7)
	cq, err := f.dev.CreateObj(mb(f.cqIn().Marshal()), make([]byte, 16))
	must(t, err)
	defer cq.Destroy()

	// The commands that lead a QP to each state, with valid contents.
	steps := func(qpn uint32) map[mlx5.Opcode]mlx5.ModifyQPIn {
		rst2init := mlx5.NewModifyQPIn(mlx5.OpRST2INIT, qpn)
		rst2init.QPC.PrimaryAddressPath.VHCAPortNum, rst2init.QPC.PMState = 1, mlx5.PMStateMigrated
		init2rtr := mlx5.NewModifyQPIn(mlx5.OpINIT2RTR, qpn)
		init2rtr.QPC.MTU, init2rtr.QPC.LogMsgMax, init2rtr.QPC.RemoteQPN = mlx5.MTU4096, 30, 0x123
		init2rtr.QPC.PrimaryAddressPath.RGID = f.nic.GID()
		init2rtr.QPC.PrimaryAddressPath.VHCAPortNum = 1
		return map[mlx5.Opcode]mlx5.ModifyQPIn{
			mlx5.OpRST2INIT: rst2init, mlx5.OpINIT2RTR: init2rtr,
			mlx5.OpRTR2RTS: mlx5.NewModifyQPIn(mlx5.OpRTR2RTS, qpn), mlx5.Op2ERR: mlx5.NewModifyQPIn(mlx5.Op2ERR, qpn),
		}
	}
	paths := map[mlx5.QPState][]mlx5.Opcode{
		mlx5.QPStateRST:  nil,
		mlx5.QPStateINIT: {mlx5.OpRST2INIT},
		mlx5.QPStateRTR:  {mlx5.OpRST2INIT, mlx5.OpINIT2RTR},
		mlx5.QPStateRTS:  {mlx5.OpRST2INIT, mlx5.OpINIT2RTR, mlx5.OpRTR2RTS},
		mlx5.QPStateERR:  {mlx5.OpRST2INIT, mlx5.Op2ERR},
	}
	newQP := func(t *testing.T, st mlx5.ServiceType, state mlx5.QPState) mlx5.Obj {
		t.Helper()
		in := f.qpIn(cq.ID())
		in.QPC.ST = st
		qp, err := f.dev.CreateObj(mb(in.Marshal()), make([]byte, 16))
		must(t, err)
		t.Cleanup(func() { qp.Destroy() })
		s := steps(qp.ID())
		for _, op := range paths[state] {
			if err := qp.Modify(mb(s[op].Marshal()), make([]byte, 16)); err != nil {
				t.Fatalf("to %v: %v: %v", state, mlx5.OpcodeName(op), err)
			}
		}
		return qp
	}
	send := func(qp mlx5.Obj, in mlx5.ModifyQPIn) (uint32, error) {
		b, err := in.Marshal()
		if err != nil {
			return 0, err
		}
		out := make([]byte, 16)
		err = qp.Modify(b, out)
		_, syn := mlx5.OutStatus(out)
		return syn, err
	}

	for _, st := range []mlx5.ServiceType{mlx5.STRC, mlx5.STUC} {
		for state := range paths {
			for _, op := range mlx5.Transitions() {
				tr, _ := mlx5.TransitionFor(op)
				t.Run(fmt.Sprintf("%v/%v/%s", st, state, mlx5.OpcodeName(op)), func(t *testing.T) {
					qp := newQP(t, st, state)
					in := mlx5.NewModifyQPIn(op, qp.ID())
					if s, ok := steps(qp.ID())[op]; ok {
						in = s
					}
					syn, err := send(qp, in)
					if bad := syn == SynQPBadTransition; bad == tr.LegalFrom(state) {
						t.Fatalf("legal from %v per mlx5: %v; the emulator answered %v (syndrome 0x%x)", state, tr.LegalFrom(state), err, syn)
					}
				})
				if len(tr.From) == 0 || tr.Len == mlx5.ModifyQPInDropLen || !tr.LegalFrom(state) {
					continue
				}
				for bit := mlx5.OptParam(1); bit != 0 && bit <= mlx5.OptCounterSetID; bit <<= 1 {
					t.Run(fmt.Sprintf("%v/%v/%s/%v", st, state, mlx5.OpcodeName(op), bit), func(t *testing.T) {
						qp := newQP(t, st, state)
						in := mlx5.NewModifyQPIn(op, qp.ID())
						if s, ok := steps(qp.ID())[op]; ok {
							in = s
						}
						in.OptParamMask = bit
						syn, err := send(qp, in)
						allowed := bit&tr.Allowed(st) != 0
						if bit == mlx5.OptDSCP && !f.nic.caps.general.RTS2RTSQPDSCP {
							allowed = false // a capability the device may lack
						}
						if refused := syn == SynQPOptMask; refused == allowed {
							t.Fatalf("allowed per mlx5: %v; the emulator answered %v (syndrome 0x%x)", allowed, err, syn)
						}
					})
				}
			}
		}
	}
}
