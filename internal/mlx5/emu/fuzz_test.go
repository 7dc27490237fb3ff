package emu

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// FuzzCommand feeds arbitrary mailboxes to every command entry point
// (CreateObj, GeneralCmd, and Query/Modify of a live CQ and QP). Any input
// must give a result or an error, never a panic; objects it manages to
// create are destroyed again.
func FuzzCommand(f *testing.F) {
	fx := newCmdFixture(f, ModelCX8)
	cq, err := fx.dev.CreateObj(mb(fx.cqIn().Marshal()), make([]byte, 16))
	must(f, err)
	qp, err := fx.dev.CreateObj(mb(fx.qpIn(cq.ID()).Marshal()), make([]byte, 16))
	must(f, err)
	f.Cleanup(func() { qp.Destroy(); cq.Destroy() })

	f.Add(uint8(0), uint16(16), mb(fx.cqIn().Marshal()))
	f.Add(uint8(0), uint16(16), mb(fx.qpIn(cq.ID()).Marshal()))
	f.Add(uint8(1), uint16(mlx5.QueryHCACapOutLen), mb(mlx5.NewQueryHCACapIn(mlx5.CapGeneral, true).Marshal()))
	f.Add(uint8(1), uint16(mlx5.QueryHCACapOutLen), mb(mlx5.NewQueryHCACapIn(mlx5.CapGeneral2, true).Marshal()))
	f.Add(uint8(2), uint16(272), mb(mlx5.QueryCQIn(cq.ID()).Marshal()))
	f.Add(uint8(3), uint16(272), mb(mlx5.QueryQPIn(qp.ID()).Marshal()))
	r2i := mlx5.NewModifyQPIn(mlx5.OpRST2INIT, qp.ID())
	r2i.QPC.PrimaryAddressPath.VHCAPortNum = 1
	f.Add(uint8(7), uint16(16), mb(r2i.Marshal()))
	f.Add(uint8(7), uint16(16), mb(mlx5.NewModifyQPIn(mlx5.Op2RST, qp.ID()).Marshal()))
	rmpIn := mlx5.CreateRMPIn{RMPC: mlx5.RMPContext{State: mlx5.RMPStateRDY, WQ: mlx5.WQContext{WQType: mlx5.WQTypeCyclic,
		PD: fx.pd.PDN(), DBRAddr: offQPDBR + 128, LogWQStride: 6, LogWQSz: 4, DBRUMEMID: fx.um.ID(), WQUMEMID: fx.um.ID(), WQUMEMOffset: 2 << 20}}}
	f.Add(uint8(0), uint16(16), mb(rmpIn.Marshal()))

	f.Fuzz(func(t *testing.T, entry uint8, outLen uint16, in []byte) {
		out := make([]byte, int(outLen)%5000)
		var err error
		switch entry % 4 {
		case 0:
			var obj mlx5.Obj
			obj, err = fx.dev.CreateObj(in, out)
			if obj != nil {
				if err != nil {
					t.Fatalf("object and error: %v", err)
				}
				if derr := obj.Destroy(); derr != nil {
					t.Fatalf("destroy a fuzz-created object: %v", derr)
				}
			}
		case 1:
			err = fx.dev.GeneralCmd(in, out)
		case 2:
			if entry&4 != 0 {
				err = cq.Modify(in, out)
			} else {
				err = cq.Query(in, out)
			}
		case 3:
			if entry&4 != 0 {
				err = qp.Modify(in, out)
			} else {
				err = qp.Query(in, out)
			}
		}
		if ce, ok := mlx5.AsCmdError(err); ok && ce.Status != mlx5.StatusOK {
			if st, syn := mlx5.OutStatus(out); st != ce.Status || syn != ce.Syndrome {
				t.Fatalf("error %v but out mailbox says %v/0x%x", err, st, syn)
			}
			if _, _, known := SyndromeInfo(ce.Syndrome); !known {
				t.Fatalf("undocumented syndrome in %v", err)
			}
		} else if err != nil && !ok {
			t.Fatalf("error of an unexpected type: %v", err)
		}
	})
}

// Placeholder words FuzzWQE replaces with live keys before it writes the
// ring, so seeds (and mutations of them) can name the real MRs.
const (
	fuzzLKey = 0x4c4b4559 // "LKEY": the requester's data MR
	fuzzRKey = 0x524b4559 // "RKEY": the responder's data MR
	fuzzIOVA = 0x10000000 // both data MRs are registered at this iova
)

// FuzzWQE executes arbitrary ring bytes on an RTS QP: the first byte is the
// number of WQEBBs posted (of a 16-WQEBB ring), the rest the ring. Each
// posted WQE gets its ctrl qpn and wqe_index fixed up (walking by its own
// ds) so the fuzzer reaches the segment decoders. The SQ must drain, with
// CQEs or error CQEs, within the deadline: never a panic or a hang.
func FuzzWQE(f *testing.F) {
	na := newNIC(f, Config{Name: "emuF"})
	nb := newNIC(f, Config{Name: "emuG"})
	for _, w := range fuzzSeeds() {
		f.Add(w)
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzWQE(t, na, nb, data) })
}

func fuzzWQE(t *testing.T, na, nb *NIC, data []byte) {
	{
		if len(data) == 0 {
			return
		}
		o := qpOpts{logSQ: 4, logCQ: 6, iova: fuzzIOVA, retry: 1, ackTO: 8, rnrRetry: 1, minRNR: 1, dataLen: 1 << 16}
		x, y := pair(t, na, nb, o, qpOpts{iova: fuzzIOVA, rq: true, logRQ: 2, minRNR: 1, dataLen: 1 << 16})
		y.postRecv(y.va(0), 4096)
		n := int(data[0]) % 17
		ring := x.sq
		copy(ring, data[1:])
		for i := 0; i+4 <= len(ring); i += 4 {
			switch binary.BigEndian.Uint32(ring[i:]) {
			case fuzzLKey:
				binary.BigEndian.PutUint32(ring[i:], x.mr.LKey())
			case fuzzRKey:
				binary.BigEndian.PutUint32(ring[i:], y.mr.RKey())
			}
		}
		for i := 0; i < n; {
			c := ring[i*64:]
			binary.BigEndian.PutUint32(c[0:], uint32(c[0])<<24|uint32(i)<<8|uint32(c[3]))
			binary.BigEndian.PutUint32(c[4:], x.qpn<<8|uint32(c[7]&0x3f))
			bbs := (int(c[7]&0x3f) + 3) / 4
			if bbs == 0 {
				bbs = 1
			}
			i += bbs
		}
		x.pi = uint16(n)
		x.ring(mlx5.CtrlSeg{})
		deadline := time.Now().Add(5 * time.Second)
		for {
			q := x.queryQP()
			if q.HWSQWQEBBCounter == uint16(n) || (q.State == mlx5.QPStateERR && q.HWSQWQEBBCounter >= uint16(n)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("SQ did not drain: hw counter %d of %d, state %v", q.HWSQWQEBBCounter, n, q.State)
			}
			time.Sleep(200 * time.Microsecond)
		}
		for {
			c, err := x.poll(0)
			if err != nil {
				break
			}
			if c.Opcode != mlx5.CQEReq && c.Opcode != mlx5.CQEReqErr {
				t.Fatalf("requester CQE with opcode %v", c.Opcode)
			}
		}
	}
}

// fuzzSeeds encodes one WQE of every kind with the placeholder keys.
func fuzzSeeds() [][]byte {
	ring := make([]byte, 16*64)
	h := mlx5.WQEHead{Flags: mlx5.MakeCtrlFlags(mlx5.FenceNone, mlx5.CompletionAlways, false)}
	l := func(off uint64, n uint32) mlx5.DataSeg {
		return mlx5.DataSeg{ByteCount: n, LKey: fuzzLKey, Addr: fuzzIOVA + off}
	}
	r := func(off uint64) mlx5.RAddrSeg { return mlx5.RAddrSeg{Addr: fuzzIOVA + off, RKey: fuzzRKey} }
	ws := []mlx5.WQE{
		mlx5.NewNOP(h),
		mlx5.NewRDMAWrite(h, r(0), l(0, 8)),
		mlx5.NewRDMAWriteInline(h, r(64), []byte("0123456789abcdefghijklmnopqrstuvwxyz")),
		mlx5.NewRDMAWriteImm(h, 7, r(0), l(0, 100)),
		mlx5.NewRDMARead(h, r(128), l(256, 64)),
		mlx5.NewSend(h, l(0, 16)),
		mlx5.NewAtomicFA(h, r(8), 1, l(16, 8)),
		mlx5.NewAtomicCS(h, r(8), 1, 0, l(16, 8)),
		mlx5.NewMaskedCS(h, 8, r(16), mlx5.MaskedCSSeg{Swap: 1, SwapMask: 1}, l(24, 8)),
		mlx5.NewMaskedFA(h, 4, r(32), mlx5.MaskedFASeg{Add: 1}, l(40, 4)),
		mlx5.NewWait(h, 0x400, 3),
		mlx5.NewDump(h, l(0, 64)),
	}
	var seeds [][]byte
	for _, w := range ws {
		clear(ring)
		n, err := w.Encode(ring)
		if err != nil {
			panic(err)
		}
		seeds = append(seeds, append([]byte{byte(n)}, ring[:n*64]...))
	}
	// Several WQEs in a row, wrapping.
	clear(ring)
	pi := uint16(14)
	for _, w := range ws[1:4] {
		w.Ctrl.WQEIndex = pi
		n, _ := w.Encode(ring)
		pi += uint16(n)
	}
	seeds = append(seeds, append([]byte{16}, ring...))
	return seeds
}
