package verbs

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newSRQ creates an SRQ, closed at cleanup; any failure fails the test (the
// emulator implements CREATE_RMP, so an SRQ test never skips).
func newSRQ(t testing.TB, c *Context, cfg SRQConfig) *SRQ {
	t.Helper()
	s, err := NewSRQ(c, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// TestSRQSharedByTwoQPs: two QPs of one device receive SENDs through one
// SRQ; each completion names the QP it arrived on and the receive it used.
func TestSRQSharedByTwoQPs(t *testing.T) {
	for _, typ := range []SRQType{SRQLinkedList, SRQContiguous} {
		t.Run(typ.String(), func(t *testing.T) {
			o := defaultPairOpts()
			o.qp.RQWR, o.qp.RecvMaxSGE = 0, 0
			// Senders: two QPs on emu0, each with its own CQ.
			a1 := newEnd(t, "emu0", o)
			a2 := newEnd(t, "emu0", o)
			// Receivers: two QPs on emu1 sharing one SRQ and one receive CQ.
			b := newEnd(t, "emu1", o) // context, PD, CQ, buffer, MR (its QP stays unused)
			srq := newSRQ(t, b.ctx, SRQConfig{PD: b.pd, Type: typ, WR: 16, MaxRecvSGE: 1})
			var rq [2]*QP
			for i := range rq {
				q, err := NewQP(b.ctx, QPConfig{PD: b.pd, SendCQ: b.cq, RecvCQ: b.cq, SRQ: srq, SQWR: 16, SendMaxSGE: 1})
				require.NoError(t, err)
				t.Cleanup(func() { require.NoError(t, q.Close()) })
				rq[i] = q
			}
			connectTo(t, a1.qp, rq[0].QPN(), b.gid, o)
			connectTo(t, rq[0], a1.qp.QPN(), a1.gid, o)
			connectTo(t, a2.qp, rq[1].QPN(), b.gid, o)
			connectTo(t, rq[1], a2.qp.QPN(), a2.gid, o)

			const n, slot = 8, 256
			for i := 0; i < n; i++ {
				require.NoError(t, srq.PostRecv(RecvWR{WRID: uint64(100 + i),
					SGL: []SGE{{Addr: b.addr(i * slot), Length: slot, LKey: b.mr.LKey()}}}))
			}
			require.Error(t, rq[0].PostRecv(RecvWR{}), "receives go to the SRQ, not the QP")
			senders := map[uint32]*end{rq[0].QPN(): a1, rq[1].QPN(): a2}
			for i := 0; i < n/2; i++ {
				for j, a := range []*end{a1, a2} {
					msg := fmt.Sprintf("sender %d message %d", j+1, i)
					copy(a.buf[i*slot:], msg)
					require.NoError(t, a.qp.PostSend(SendWR{WRID: uint64(i), Opcode: WRSend, Signaled: true,
						SGL: []SGE{{Addr: a.addr(i * slot), Length: uint32(len(msg)), LKey: a.mr.LKey()}}}))
				}
			}
			for _, a := range []*end{a1, a2} {
				for _, wc := range waitWC(t, a.cq, n/2) {
					assert.Equal(t, WCSuccess, wc.Status, "%v", wc.Status)
				}
			}
			used := map[uint64]bool{}
			perQP := map[uint32]int{}
			for _, wc := range waitWC(t, b.cq, n) {
				require.Equal(t, WCSuccess, wc.Status, "%v", wc.Status)
				require.Equal(t, WCRecv, wc.Opcode)
				a, ok := senders[wc.QPN]
				require.True(t, ok, "completion on QP 0x%x, which is not an SRQ user", wc.QPN)
				require.GreaterOrEqual(t, wc.WRID, uint64(100))
				require.Less(t, wc.WRID, uint64(100+n))
				assert.False(t, used[wc.WRID], "receive %d completed twice", wc.WRID)
				used[wc.WRID] = true
				k := perQP[wc.QPN] // SENDs of one QP consume receives in order
				perQP[wc.QPN]++
				want := fmt.Sprintf("sender %d message %d", map[*end]int{a1: 1, a2: 2}[a], k)
				s := int(wc.WRID - 100)
				assert.Equal(t, uint32(len(want)), wc.ByteLen)
				assert.Equal(t, want, string(b.buf[s*slot:s*slot+len(want)]))
			}
			assert.Equal(t, map[uint32]int{rq[0].QPN(): n / 2, rq[1].QPN(): n / 2}, perQP)
		})
	}
}

// TestUCQP: an unreliable-connection pair connects to RTS and moves data
// with RDMA WRITE and SEND (UC has no READ or atomics).
func TestUCQP(t *testing.T) {
	o := defaultPairOpts()
	o.qp.Type = QPTypeUC
	o.access = AccessLocalWrite | AccessRemoteWrite
	o.atomic, o.rr = AtomicNone, false
	a, b := newPair(t, o)
	attr, cfg, err := a.qp.Query()
	require.NoError(t, err)
	assert.Equal(t, QPStateRTS, attr.CurrentState)
	assert.Equal(t, QPTypeUC, cfg.Type)

	for i := 0; i < 4096; i++ {
		a.buf[i] = byte(i*3 + 1)
	}
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 1, Opcode: WRRDMAWrite, Signaled: true,
		SGL: []SGE{{Addr: a.addr(0), Length: 4096, LKey: a.mr.LKey()}}, RemoteAddr: b.addr(8192), RKey: b.mr.RKey()}))
	wc := waitWC(t, a.cq, 1)[0]
	assert.Equal(t, WCSuccess, wc.Status, "%v", wc.Status)
	assert.Equal(t, WCRDMAWrite, wc.Opcode)
	// UC completes at the requester when the packets leave; the data lands
	// right after (in-process delivery is synchronous on the emulator).
	assert.Equal(t, a.buf[:4096], b.buf[8192:8192+4096])

	require.NoError(t, b.qp.PostRecv(RecvWR{WRID: 9, SGL: []SGE{{Addr: b.addr(20000), Length: 64, LKey: b.mr.LKey()}}}))
	require.NoError(t, a.qp.PostSend(SendWR{WRID: 2, Opcode: WRSend, Signaled: true, InlineData: []byte("uc send")}))
	assert.Equal(t, WCSuccess, waitWC(t, a.cq, 1)[0].Status)
	rwc := waitWC(t, b.cq, 1)[0]
	assert.Equal(t, WCSuccess, rwc.Status)
	assert.Equal(t, uint64(9), rwc.WRID)
	assert.Equal(t, "uc send", string(b.buf[20000:20007]))
}

// uarRefuser is an emulated device whose UAR allocation refuses some types
// the way an older rdma-core does (EOPNOTSUPP), to exercise the fallbacks.
type uarRefuser struct {
	mlx5.Device
	refuse map[mlx5.UARType]syscall.Errno
	asked  []mlx5.UARType
}

func (d *uarRefuser) AllocUAR(t mlx5.UARType) (mlx5.UAR, error) {
	d.asked = append(d.asked, t)
	if e, ok := d.refuse[t]; ok {
		return nil, fmt.Errorf("refuser: mlx5dv_devx_alloc_uar type %v: %w", t, e)
	}
	return d.Device.AllocUAR(t)
}

// TestCQUARFallback: a CQ without an external UAR takes a dedicated
// non-cached page, falls back to the shared non-cached page when the
// library refuses NC_DEDICATED, then to BlueFlame; when every type fails,
// the error carries each attempt's cause.
func TestCQUARFallback(t *testing.T) {
	cases := []struct {
		name   string
		refuse map[mlx5.UARType]syscall.Errno
		want   UARAllocType
		asked  []mlx5.UARType
		fail   bool
	}{
		{"dedicated granted", nil, UARNonCacheDedicated, []mlx5.UARType{mlx5.UARTypeNCDedicated}, false},
		{"rdma-core before v45", map[mlx5.UARType]syscall.Errno{mlx5.UARTypeNCDedicated: syscall.EOPNOTSUPP},
			UARNonCache, []mlx5.UARType{mlx5.UARTypeNCDedicated, mlx5.UARTypeNC}, false},
		{"no non-cached pages", map[mlx5.UARType]syscall.Errno{mlx5.UARTypeNCDedicated: syscall.EOPNOTSUPP, mlx5.UARTypeNC: syscall.ENOMEM},
			UARBlueFlame, []mlx5.UARType{mlx5.UARTypeNCDedicated, mlx5.UARTypeNC, mlx5.UARTypeBF}, false},
		{"nothing", map[mlx5.UARType]syscall.Errno{mlx5.UARTypeNCDedicated: syscall.EOPNOTSUPP, mlx5.UARTypeNC: syscall.ENOMEM, mlx5.UARTypeBF: syscall.ENOSPC},
			0, []mlx5.UARType{mlx5.UARTypeNCDedicated, mlx5.UARTypeNC, mlx5.UARTypeBF}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := mlx5.Open("emu0")
			require.NoError(t, err)
			r := &uarRefuser{Device: d, refuse: c.refuse}
			ctx := &Context{dev: r, name: "emu0"}
			ctx.init("Context", "Context emu0")
			defer func() { require.NoError(t, ctx.Close()) }()
			cq, err := NewCQ(ctx, CQConfig{Size: 16})
			assert.Equal(t, c.asked, r.asked)
			if c.fail {
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrDriver))
				for _, e := range []syscall.Errno{syscall.EOPNOTSUPP, syscall.ENOMEM, syscall.ENOSPC} {
					assert.True(t, errors.Is(err, e), "the error keeps %v: %v", e, err)
				}
				assert.Contains(t, err.Error(), "doca_verbs_cq_create: DOCA_ERROR_DRIVER")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, cq.UAR().AllocType())
			require.NoError(t, cq.Close())
		})
	}
}
