package emu

import (
	"encoding/binary"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// srq is a test RMP in an endpoint's memory: ring at 2 MiB, DBR after the
// QP and CQ DBRs.
type srq struct {
	e      *endpoint
	obj    mlx5.Obj
	ring   []byte
	dbr    []byte
	log    uint8
	linked bool
	n      uint32
}

const (
	offSRQ    = 2 << 20
	offSRQDBR = offQPDBR + 128
	srqStride = 6 // 64-byte WQEs
)

func newSRQ(t *testing.T, e *endpoint, log uint8, linked bool) *srq {
	s := &srq{e: e, log: log, linked: linked, ring: e.mem[offSRQ : offSRQ+64<<log], dbr: e.mem[offSRQDBR : offSRQDBR+4]}
	wt := mlx5.WQTypeCyclic
	if linked {
		wt = mlx5.WQTypeLinkedList
		for i := 0; i < 1<<log; i++ { // free list 0 -> 1 -> 2 ...
			binary.BigEndian.PutUint16(s.ring[i*64+2:], uint16(i+1)&(1<<log-1))
		}
	}
	in := mlx5.CreateRMPIn{RMPC: mlx5.RMPContext{State: mlx5.RMPStateRDY, BasicCyclicRcvWQE: !linked, WQ: mlx5.WQContext{
		WQType: wt, PD: e.pd.PDN(), DBRAddr: offSRQDBR, LogWQStride: srqStride, LogWQSz: log,
		DBRUMEMValid: true, WQUMEMValid: true, DBRUMEMID: e.um.ID(), WQUMEMID: e.um.ID(), WQUMEMOffset: offSRQ}}}
	obj, err := e.dev.CreateObj(mb(in.Marshal()), make([]byte, 16))
	must(t, err)
	s.obj = obj
	t.Cleanup(func() { // runs after the QPs made later are destroyed
		if err := obj.Destroy(); err != nil {
			t.Errorf("destroy RMP: %v", err)
		}
	})
	return s
}

// post adds a receive WQE for [addr, addr+n) of the endpoint's MR.
func (s *srq) post(addr uint64, n uint32) {
	slot := s.ring[int(s.n&(1<<s.log-1))*64:][:64]
	sg := slot
	if s.linked {
		sg = slot[mlx5.SRQNextSegSize:]
	}
	mlx5.DataSeg{ByteCount: n, LKey: s.e.mr.LKey(), Addr: addr}.Put(sg)
	mlx5.RecvTerminator.Put(sg[16:])
	s.n++
	// The DBR holds the counter's low 16 bits, as verbs and rdma-core
	// write it.
	binary.BigEndian.PutUint32(s.dbr, s.n&mlx5.DBRCounterMask)
}

// The SRQ doorbell record carries a 16-bit counter: the RMP must compare
// only those bits with its own count of WQEs consumed, across the wrap at
// 65536 WQEs. (It compared 32 bits: past the wrap it took WQEs nobody had
// posted.)
func TestSRQCounterWraps(t *testing.T) {
	a, b := twoNICs(t)
	owner := newEndpoint(t, b, qpOpts{})
	s := newSRQ(t, owner, 3, false)
	y := newEndpoint(t, b, qpOpts{share: owner, srqn: s.obj.ID()})
	x := newEndpoint(t, a, qpOpts{rnrRetry: 7, minRNR: 1})
	x.connect(y, 1, 1)
	y.connect(x, 1, 1)
	// Start 2 WQEs before the wrap, as if 65534 had been consumed.
	b.mu.RLock()
	r := b.rmps[s.obj.ID()]
	b.mu.RUnlock()
	r.mu.Lock()
	r.hw = 0xfffe
	r.mu.Unlock()
	s.n = 0xfffe
	binary.BigEndian.PutUint32(s.dbr, s.n)
	for i := 0; i < 3; i++ { // DBR 0xffff, 0x0000, 0x0001
		s.post(owner.va(1000*i), 100)
	}
	for i, m := range []string{"one", "two", "six"} {
		x.post(mlx5.NewSendInline(signaled, []byte(m)))
		if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
			t.Fatalf("send %d: %v %v", i, c.Opcode, c.Syndrome)
		}
		if c := y.mustPoll(); c.Opcode != mlx5.CQERespSend || string(owner.data[1000*i:1000*i+3]) != m {
			t.Fatalf("receive %d: %v %q", i, c.Opcode, owner.data[1000*i:1000*i+3])
		}
	}
	// Every posted WQE is consumed: the next SEND waits on RNR.
	x.post(mlx5.NewSendInline(signaled, []byte("late")))
	if c, err := x.poll(20e6); err == nil {
		t.Fatalf("SEND completed (%v %v) with no WQE posted after the wrap", c.Opcode, c.Syndrome)
	}
	s.post(owner.va(5000), 100)
	if c := x.mustPoll(); c.Opcode != mlx5.CQEReq || string(owner.data[5000:5004]) != "late" {
		t.Fatalf("after posting: %v %q", c.Opcode, owner.data[5000:5004])
	}
}

func TestSRQ(t *testing.T) {
	for _, linked := range []bool{false, true} {
		name := map[bool]string{false: "cyclic", true: "linked_list"}[linked]
		t.Run(name, func(t *testing.T) {
			a, b := twoNICs(t)
			owner := newEndpoint(t, b, qpOpts{})
			s := newSRQ(t, owner, 3, linked)
			// Two QPs on b receive from the one SRQ.
			y1 := newEndpoint(t, b, qpOpts{share: owner, srqn: s.obj.ID()})
			y2 := newEndpoint(t, b, qpOpts{share: owner, srqn: s.obj.ID()})
			x1 := newEndpoint(t, a, qpOpts{rnrRetry: 7, minRNR: 1})
			x2 := newEndpoint(t, a, qpOpts{rnrRetry: 7, minRNR: 1})
			x1.connect(y1, 1, 1)
			y1.connect(x1, 1, 1)
			x2.connect(y2, 1, 1)
			y2.connect(x2, 1, 1)
			if err := s.obj.Destroy(); err == nil {
				t.Fatal("DESTROY_RMP succeeded while QPs use it")
			}
			for i := 0; i < 3; i++ {
				s.post(owner.va(1000*i), 100)
			}
			x1.post(mlx5.NewSendInline(signaled, []byte("one")))
			x2.post(mlx5.NewSendInline(signaled, []byte("two")))
			x1.post(mlx5.NewSendImmInline(signaled, 0x0a0b0c0d, []byte("three")))
			for _, x := range []*endpoint{x1, x2, x1} {
				if c := x.mustPoll(); c.Opcode != mlx5.CQEReq {
					t.Fatalf("sender: %v %v", c.Opcode, c.Syndrome)
				}
			}
			// y1 and y2 share owner's context but have their own CQs.
			c1, c2, c3 := y1.mustPoll(), y2.mustPoll(), y1.mustPoll()
			if c1.ByteCnt != 3 || c2.ByteCnt != 3 || c3.Opcode != mlx5.CQERespSendImm || c3.ImmInvalPKey != 0x0a0b0c0d {
				t.Fatalf("CQEs %+v %+v %+v", c1, c2, c3)
			}
			got := map[string]bool{}
			for i := 0; i < 3; i++ {
				got[string(owner.data[1000*i:1000*i+5])] = true
			}
			if !got["one\x00\x00"] || !got["two\x00\x00"] || !got["three"] {
				t.Fatalf("SRQ buffers: %v", got)
			}
			// An empty SRQ makes the sender retry on RNR until a WQE is posted.
			x2.post(mlx5.NewSendInline(signaled, []byte("late")))
			if _, err := x2.poll(20e6); err == nil {
				t.Fatal("SEND completed with an empty SRQ")
			}
			s.post(owner.va(5000), 100)
			if c := x2.mustPoll(); c.Opcode != mlx5.CQEReq || string(owner.data[5000:5004]) != "late" {
				t.Fatalf("after posting: %v %q", c.Opcode, owner.data[5000:5004])
			}
			y2.mustPoll()
			out := make([]byte, mlx5.QueryRMPOutLen)
			must(t, s.obj.Query(mb(mlx5.QueryRMPIn(s.obj.ID()).Marshal()), out))
			o, err := mlx5.UnmarshalQueryRMPOut(out)
			must(t, err)
			if o.RMPC.WQ.HWCounter != 4 || o.RMPC.WQ.SWCounter != 4 || o.RMPC.State != mlx5.RMPStateRDY {
				t.Fatalf("QUERY_RMP: %+v", o.RMPC)
			}
		})
	}
}
