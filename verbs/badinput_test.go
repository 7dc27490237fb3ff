package verbs

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixture is one opened emulated device with a PD, a CQ, an RST QP and a
// registered host buffer, for tests that feed calls bad input.
type fixture struct {
	ctx  *Context
	pd   *PD
	cq   *CQ
	qp   *QP
	attr *DeviceAttr
	buf  []byte
}

func (f *fixture) addr() uintptr { return uintptr(unsafe.Pointer(&f.buf[0])) }

func newFixture(t testing.TB, dev string) *fixture {
	t.Helper()
	f := &fixture{}
	var err error
	f.ctx, err = OpenDevice(dev)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, f.ctx.Close()) })
	f.attr, err = QueryDevice(f.ctx)
	require.NoError(t, err)
	f.pd, err = f.ctx.AllocPD()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, f.pd.Close()) })
	f.cq, err = NewCQ(f.ctx, CQConfig{Size: 64})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, f.cq.Close()) })
	f.qp, err = NewQP(f.ctx, QPConfig{PD: f.pd, SendCQ: f.cq, RecvCQ: f.cq, SQWR: 16, RQWR: 16, SendMaxSGE: 1, RecvMaxSGE: 1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, f.qp.Close()) })
	f.buf, err = syscall.Mmap(-1, 0, 1<<16, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, syscall.Munmap(f.buf)) })
	return f
}

// umem registers the fixture's buffer; closed at cleanup.
func (f *fixture) umem(t testing.TB) *UMem {
	t.Helper()
	u, err := NewUMem(f.ctx, f.addr(), uint64(len(f.buf)), AccessLocalWrite, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, u.Close()) })
	return u
}

// badCase is one call with bad input: the DOCA code it must fail with, and
// the words its message must contain (the operation is always checked).
type badCase struct {
	name string
	call func(t *testing.T, f *fixture) error
	code Code
	op   string
	want []string
}

func checkBad(t *testing.T, cases []badCase) {
	t.Helper()
	f := newFixture(t, "emu0")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call(t, f)
			require.Error(t, err)
			assert.True(t, errors.Is(err, c.code), "want %v, got %v", c.code.Name(), err)
			var e *Error
			require.True(t, errors.As(err, &e), "%T is not a *verbs.Error", err)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, c.op+": "), "message %q does not start with the operation %s", msg, c.op)
			for _, w := range c.want {
				assert.Contains(t, msg, w)
			}
		})
	}
}

// createErr returns the error of a create call and closes what it made
// when it succeeded.
func createErr[T interface{ Close() error }](x T, err error) error {
	if err == nil {
		x.Close()
	}
	return err
}

func newQPErr(f *fixture, cfg QPConfig) error   { return createErr(NewQP(f.ctx, cfg)) }
func newCQErr(c *Context, cfg CQConfig) error   { return createErr(NewCQ(c, cfg)) }
func newSRQErr(c *Context, cfg SRQConfig) error { return createErr(NewSRQ(c, cfg)) }

// TestBadSizes: non-power-of-two and over-capability sizes of CQs, QPs and
// SRQs.
func TestBadSizes(t *testing.T) {
	const cqOp, qpOp, srqOp = "doca_verbs_cq_create", "doca_verbs_qp_create", "doca_verbs_srq_create"
	qp := func(mod func(*QPConfig)) func(t *testing.T, f *fixture) error {
		return func(t *testing.T, f *fixture) error {
			cfg := QPConfig{PD: f.pd, SendCQ: f.cq, RecvCQ: f.cq, SQWR: 16, RQWR: 16, SendMaxSGE: 1, RecvMaxSGE: 1}
			mod(&cfg)
			return newQPErr(f, cfg)
		}
	}
	srq := func(mod func(*SRQConfig)) func(t *testing.T, f *fixture) error {
		return func(t *testing.T, f *fixture) error {
			cfg := SRQConfig{PD: f.pd, WR: 16, MaxRecvSGE: 1}
			mod(&cfg)
			return newSRQErr(f.ctx, cfg)
		}
	}
	checkBad(t, []badCase{
		{"cq size not a power of two", func(t *testing.T, f *fixture) error { return newCQErr(f.ctx, CQConfig{Size: 100}) },
			ErrInvalidValue, cqOp, []string{"size 100", "power of two"}},
		{"cq size zero", func(t *testing.T, f *fixture) error { return newCQErr(f.ctx, CQConfig{}) },
			ErrInvalidValue, cqOp, []string{"size 0", "power of two"}},
		{"cq size over max_cqe", func(t *testing.T, f *fixture) error {
			return newCQErr(f.ctx, CQConfig{Size: 2 * (f.attr.MaxCQE + 1)})
		}, ErrInvalidValue, cqOp, []string{"size", "max CQE"}},
		{"cq ring umem without room for the doorbell record", func(t *testing.T, f *fixture) error {
			// DOCA 3.0: the record follows the CQEs in the ring's UMEM.
			return newCQErr(f.ctx, CQConfig{Size: uint32(len(f.buf) / 64), UMem: f.umem(t)})
		}, ErrInvalidValue, cqOp, []string{"doorbell record need", "UMEM has"}},
		{"cq dbr umem without ring umem", func(t *testing.T, f *fixture) error {
			return newCQErr(f.ctx, CQConfig{Size: 64, DBRUMem: f.umem(t)})
		}, ErrInvalidValue, cqOp, []string{"DBR UMEM without a ring UMEM"}},
		{"cq ring offset", func(t *testing.T, f *fixture) error {
			u := f.umem(t)
			return newCQErr(f.ctx, CQConfig{Size: 64, UMem: u, UMemOffset: 64, DBRUMem: u})
		}, ErrInvalidValue, cqOp, []string{"ring UMEM offset 64"}},
		{"cq ring larger than umem", func(t *testing.T, f *fixture) error {
			u := f.umem(t)
			return newCQErr(f.ctx, CQConfig{Size: 4096, UMem: u, DBRUMem: u})
		}, ErrInvalidValue, cqOp, []string{"4096 CQEs", "UMEM has"}},
		{"cq dbr offset unaligned", func(t *testing.T, f *fixture) error {
			u := f.umem(t)
			return newCQErr(f.ctx, CQConfig{Size: 64, UMem: u, DBRUMem: u, DBRUMemOffset: 4097})
		}, ErrInvalidValue, cqOp, []string{"DBR offset 4097"}},
		{"sq_wr over capability", qp(func(c *QPConfig) { c.SQWR = 1 << 20 }), ErrInvalidValue, qpOp, []string{"sq_wr 1048576", "device max"}},
		{"rq_wr over max_qp_wr", qp(func(c *QPConfig) { c.RQWR = 1<<15 + 1 }), ErrInvalidValue, qpOp, []string{"rq_wr 32769"}},
		{"send_max_sges zero", qp(func(c *QPConfig) { c.SendMaxSGE = 0 }), ErrInvalidValue, qpOp, []string{"send_max_sges is 0"}},
		{"send_max_sges over WQE size", qp(func(c *QPConfig) { c.SendMaxSGE = 64 }), ErrInvalidValue, qpOp, []string{"send_max_sges 64", "device max"}},
		{"receive_max_sges zero", qp(func(c *QPConfig) { c.RecvMaxSGE = 0 }), ErrInvalidValue, qpOp, []string{"receive_max_sges is 0"}},
		{"receive_max_sges over WQE size", qp(func(c *QPConfig) { c.RecvMaxSGE = 33 }), ErrInvalidValue, qpOp, []string{"receive_max_sges 33 (rounded up to 64)", "device max"}},
		{"max_inline_data over WQE size", qp(func(c *QPConfig) { c.MaxInlineData = 4096 }), ErrInvalidValue, qpOp, []string{"max_inline_data 4096"}},
		{"scatter-to-CQE without a receive queue", qp(func(c *QPConfig) { c.RQWR, c.RecvCQ, c.CQEInline = 0, nil, ScatterToCQE32B }), ErrInvalidValue, qpOp, []string{"scatter-to-CQE", "needs a receive queue"}},
		{"scatter-to-CQE unknown", qp(func(c *QPConfig) { c.CQEInline = 9 }), ErrInvalidValue, qpOp, []string{"unknown scatter-to-CQE mode"}},
		{"user index over 24 bits", qp(func(c *QPConfig) { c.UserIndex = 1 << 24 }), ErrInvalidValue, qpOp, []string{"user index 0x1000000"}},
		{"qp wq umem offset", func(t *testing.T, f *fixture) error {
			u := f.umem(t)
			return newQPErr(f, QPConfig{PD: f.pd, SendCQ: f.cq, SQWR: 4, SendMaxSGE: 1, UMem: u, UMemOffset: 4096, DBRUMem: u})
		}, ErrInvalidValue, qpOp, []string{"WQ UMEM offset 4096"}},
		{"qp work queue larger than umem", func(t *testing.T, f *fixture) error {
			u := f.umem(t)
			return newQPErr(f, QPConfig{PD: f.pd, SendCQ: f.cq, SQWR: 4096, SendMaxSGE: 1, UMem: u, DBRUMem: u})
		}, ErrInvalidValue, qpOp, []string{"work queue needs", "UMEM has"}},
		{"srq_wr zero", srq(func(c *SRQConfig) { c.WR = 0 }), ErrInvalidValue, srqOp, []string{"srq_wr is 0"}},
		{"srq_wr over capability", srq(func(c *SRQConfig) { c.WR = 1<<15 + 1 }), ErrNotSupported, srqOp, []string{"srq_wr 32769"}},
		{"srq sges zero", srq(func(c *SRQConfig) { c.MaxRecvSGE = 0 }), ErrInvalidValue, srqOp, []string{"receive_max_sges is 0"}},
		{"srq sges over capability", srq(func(c *SRQConfig) { c.MaxRecvSGE = 32 }), ErrNotSupported, srqOp, []string{"receive_max_sges 32"}},
		{"srq type", srq(func(c *SRQConfig) { c.Type = 7 }), ErrInvalidValue, srqOp, []string{"SRQ type SRQType(7)"}},
		{"srq larger than umem", func(t *testing.T, f *fixture) error {
			return newSRQErr(f.ctx, SRQConfig{PD: f.pd, WR: 4096, MaxRecvSGE: 1, UMem: f.umem(t)})
		}, ErrInvalidValue, srqOp, []string{"UMEM has"}},
		{"mr length zero", func(t *testing.T, f *fixture) error {
			_, err := f.pd.RegMR(f.addr(), 0, AccessLocalWrite)
			return err
		}, ErrInvalidValue, "ibv_reg_mr", []string{"length is 0"}},
		{"mr address zero", func(t *testing.T, f *fixture) error {
			_, err := f.pd.RegMR(0, 64, AccessLocalWrite)
			return err
		}, ErrInvalidValue, "ibv_reg_mr", []string{"address is 0"}},
		{"mr remote write without local write", func(t *testing.T, f *fixture) error {
			_, err := f.pd.RegMR(f.addr(), 64, AccessRemoteWrite)
			return err
		}, ErrInvalidValue, "ibv_reg_mr", []string{"REMOTE_WRITE", "LOCAL_WRITE"}},
		{"mr dmabuf fd", func(t *testing.T, f *fixture) error {
			_, err := f.pd.RegDmabufMR(Dmabuf{FD: -1}, 64, 0, f.addr(), AccessLocalWrite)
			return err
		}, ErrInvalidValue, "ibv_reg_dmabuf_mr", []string{"dma-buf fd -1"}},
		{"umem size zero", func(t *testing.T, f *fixture) error {
			_, err := NewUMem(f.ctx, f.addr(), 0, 0, nil)
			return err
		}, ErrInvalidValue, "doca_verbs_umem_create", []string{"size 0"}},
		{"umem address zero", func(t *testing.T, f *fixture) error {
			_, err := NewUMem(f.ctx, 0, 64, 0, nil)
			return err
		}, ErrInvalidValue, "doca_verbs_umem_create", []string{"address 0x0"}},
		{"uar type", func(t *testing.T, f *fixture) error {
			_, err := NewUAR(f.ctx, 9)
			return err
		}, ErrInvalidValue, "doca_verbs_uar_create", []string{"allocation type UARAllocType(9)"}},
		{"poll wait more than room", func(t *testing.T, f *fixture) error {
			_, err := f.cq.PollWait(make([]WC, 1), 2, 0)
			return err
		}, ErrInvalidValue, "doca_verbs_poll_cq", []string{"2 completions with room for 1"}},
		{"path MTU from bytes", func(t *testing.T, f *fixture) error {
			_, err := MTUFromBytes(1500)
			return err
		}, ErrInvalidValue, "MTUFromBytes", []string{"1500"}},
		{"GID text", func(t *testing.T, f *fixture) error {
			_, err := ParseGID("fe80::zz")
			return err
		}, ErrInvalidValue, "ParseGID", []string{"fe80::zz"}},
	})
}

// TestMissingObjects: QPs and SRQs without the PD, CQ or device they need,
// or with objects of another device or PD.
func TestMissingObjects(t *testing.T) {
	const qpOp = "doca_verbs_qp_create"
	other := func(t *testing.T) *fixture { return newFixture(t, "emu1") }
	checkBad(t, []badCase{
		{"qp without PD", func(t *testing.T, f *fixture) error {
			return newQPErr(f, QPConfig{SendCQ: f.cq, SQWR: 4, SendMaxSGE: 1})
		}, ErrInvalidValue, qpOp, []string{"no PD"}},
		{"qp without context", func(t *testing.T, f *fixture) error {
			_, err := NewQP(nil, QPConfig{PD: f.pd})
			return err
		}, ErrInvalidValue, qpOp, []string{"nil context"}},
		{"qp without send CQ", func(t *testing.T, f *fixture) error {
			return newQPErr(f, QPConfig{PD: f.pd, SQWR: 4, SendMaxSGE: 1})
		}, ErrInvalidValue, qpOp, []string{"sq_wr 4", "send CQ"}},
		{"qp without receive CQ", func(t *testing.T, f *fixture) error {
			return newQPErr(f, QPConfig{PD: f.pd, SendCQ: f.cq, SQWR: 4, SendMaxSGE: 1, RQWR: 4, RecvMaxSGE: 1})
		}, ErrInvalidValue, qpOp, []string{"receive CQ"}},
		// The two SRQ checks run before the SRQ is used, so an SRQ value
		// that was never created stands in for one (the emulator may lack
		// CREATE_RMP; see TestSRQSharedByTwoQPs).
		{"qp with SRQ without receive CQ", func(t *testing.T, f *fixture) error {
			return newQPErr(f, QPConfig{PD: f.pd, SendCQ: f.cq, SQWR: 4, SendMaxSGE: 1, SRQ: &SRQ{pd: f.pd}})
		}, ErrInvalidValue, qpOp, []string{"SRQ needs a receive CQ"}},
		{"qp with PD of another device", func(t *testing.T, f *fixture) error {
			g := other(t)
			return newQPErr(f, QPConfig{PD: g.pd, SendCQ: f.cq, SQWR: 4, SendMaxSGE: 1})
		}, ErrInvalidValue, qpOp, []string{"PD belongs to device emu1"}},
		{"qp with CQ of another device", func(t *testing.T, f *fixture) error {
			g := other(t)
			return newQPErr(f, QPConfig{PD: f.pd, SendCQ: g.cq, SQWR: 4, SendMaxSGE: 1})
		}, ErrInvalidValue, qpOp, []string{"belongs to another device"}},
		{"qp with SRQ of another PD", func(t *testing.T, f *fixture) error {
			pd2, err := f.ctx.AllocPD()
			require.NoError(t, err)
			defer pd2.Close()
			return newQPErr(f, QPConfig{PD: f.pd, RecvCQ: f.cq, SRQ: &SRQ{pd: pd2, srqn: 0x77}})
		}, ErrInvalidValue, qpOp, []string{"SRQ 119 is on another PD"}},
		{"qp type", func(t *testing.T, f *fixture) error {
			return newQPErr(f, QPConfig{PD: f.pd, Type: 5})
		}, ErrInvalidValue, qpOp, []string{"QP type QPType(5)"}},
		{"qp NO_DBR_EXT on a cx7", func(t *testing.T, f *fixture) error {
			return newQPErr(f, QPConfig{PD: f.pd, SendCQ: f.cq, SQWR: 4, SendMaxSGE: 1, SendDBRMode: SendNoDBRExt})
		}, ErrNotSupported, qpOp, []string{"NO_DBR_EXT"}},
		{"qp send DBR mode", func(t *testing.T, f *fixture) error {
			return newQPErr(f, QPConfig{PD: f.pd, SendDBRMode: 3})
		}, ErrInvalidValue, qpOp, []string{"send DBR mode SendDBRMode(3)"}},
		{"qp wq umem without dbr umem", func(t *testing.T, f *fixture) error {
			return newQPErr(f, QPConfig{PD: f.pd, UMem: f.umem(t)})
		}, ErrInvalidValue, qpOp, []string{"DBR UMEM"}},
		{"srq without PD", func(t *testing.T, f *fixture) error {
			return newSRQErr(f.ctx, SRQConfig{WR: 4, MaxRecvSGE: 1})
		}, ErrInvalidValue, "doca_verbs_srq_create", []string{"no PD"}},
		{"cq without context", func(t *testing.T, f *fixture) error { return newCQErr(nil, CQConfig{Size: 64}) },
			ErrInvalidValue, "doca_verbs_cq_create", []string{"nil context"}},
		{"srq without context", func(t *testing.T, f *fixture) error { return newSRQErr(nil, SRQConfig{PD: f.pd}) },
			ErrInvalidValue, "doca_verbs_srq_create", []string{"nil context"}},
		{"umem without context", func(t *testing.T, f *fixture) error {
			_, err := NewUMem(nil, f.addr(), 64, 0, nil)
			return err
		}, ErrInvalidValue, "doca_verbs_umem_create", []string{"nil context"}},
		{"uar without context", func(t *testing.T, f *fixture) error {
			_, err := NewUAR(nil, UARNonCache)
			return err
		}, ErrInvalidValue, "doca_verbs_uar_create", []string{"nil context"}},
		{"query device without context", func(t *testing.T, f *fixture) error {
			_, err := QueryDevice(nil)
			return err
		}, ErrInvalidValue, "doca_verbs_query_device", []string{"nil context"}},
		{"post send without send queue", func(t *testing.T, f *fixture) error {
			q, err := NewQP(f.ctx, QPConfig{PD: f.pd, RecvCQ: f.cq, RQWR: 4, RecvMaxSGE: 1})
			require.NoError(t, err)
			defer q.Close()
			return q.PostSend(SendWR{Opcode: WRNop})
		}, ErrNotSupported, "doca_verbs_post_send", []string{"has no send queue"}},
		{"post send before RTS", func(t *testing.T, f *fixture) error {
			return f.qp.PostSend(SendWR{Opcode: WRNop})
		}, ErrBadState, "doca_verbs_post_send", []string{"is RST", "post in RTS"}},
		{"post recv in RST", func(t *testing.T, f *fixture) error {
			return f.qp.PostRecv(RecvWR{})
		}, ErrBadState, "doca_verbs_post_recv", []string{"in RST"}},
	})
}

// TestBadModify: transitions that do not exist, transitions missing
// required attributes or given ones they do not take, and out-of-range
// values. The QP stays in RST; CURRENT_STATE claims other states so the
// checks of every transition are reached without touching the device.
func TestBadModify(t *testing.T) {
	const op = "doca_verbs_qp_modify"
	ah := &AHAttr{AddrType: AddrTypeIPv4}
	rtr := QPAttrRQPSN | QPAttrDestQPNum | QPAttrPathMTU | QPAttrAHAttr | QPAttrMinRNRTimer
	rts := QPAttrSQPSN | QPAttrAckTimeout | QPAttrRetryCnt | QPAttrRNRRetry
	init := QPAttrPKeyIndex | QPAttrPortNum | QPAttrAllowRemoteWrite | QPAttrAllowRemoteRead
	mod := func(a QPAttr, m QPAttrMask) func(t *testing.T, f *fixture) error {
		return func(t *testing.T, f *fixture) error {
			err := f.qp.Modify(&a, m)
			assert.Equal(t, QPStateRST, f.qp.State(), "a refused Modify leaves the state")
			return err
		}
	}
	from := func(s QPState, to QPState, a QPAttr, m QPAttrMask) func(t *testing.T, f *fixture) error {
		a.CurrentState, a.NextState = s, to
		return mod(a, m|QPAttrCurrentState|QPAttrNextState)
	}
	checkBad(t, []badCase{
		{"nil attributes", func(t *testing.T, f *fixture) error { return f.qp.Modify(nil, 0) },
			ErrInvalidValue, op, []string{"nil attributes"}},
		// Transitions that do not exist.
		{"RST to RTR", from(QPStateRST, QPStateRTR, QPAttr{AH: ah}, rtr), ErrInvalidValue, op, []string{"no transition RST -> RTR"}},
		{"RST to RTS", from(QPStateRST, QPStateRTS, QPAttr{}, rts), ErrInvalidValue, op, []string{"no transition RST -> RTS"}},
		{"INIT to RTS", from(QPStateINIT, QPStateRTS, QPAttr{}, rts), ErrInvalidValue, op, []string{"no transition INIT -> RTS"}},
		{"RTR to INIT", from(QPStateRTR, QPStateINIT, QPAttr{PortNum: 1}, init), ErrInvalidValue, op, []string{"no transition RTR -> INIT"}},
		{"RTS to RTR", from(QPStateRTS, QPStateRTR, QPAttr{AH: ah}, rtr), ErrInvalidValue, op, []string{"no transition RTS -> RTR"}},
		{"ERR to RTS", from(QPStateERR, QPStateRTS, QPAttr{}, rts), ErrInvalidValue, op, []string{"no transition ERR -> RTS"}},
		{"ERR to INIT", from(QPStateERR, QPStateINIT, QPAttr{PortNum: 1}, init), ErrInvalidValue, op, []string{"no transition ERR -> INIT"}},
		// Missing required attributes.
		{"RST to INIT without port", from(QPStateRST, QPStateINIT, QPAttr{}, init&^QPAttrPortNum), ErrInvalidValue, op, []string{"RST -> INIT needs PORT_NUM"}},
		{"RST to INIT without access", from(QPStateRST, QPStateINIT, QPAttr{PortNum: 1}, QPAttrPKeyIndex|QPAttrPortNum), ErrInvalidValue, op,
			[]string{"needs ALLOW_REMOTE_WRITE|ALLOW_REMOTE_READ"}},
		{"INIT to RTR without AH", from(QPStateINIT, QPStateRTR, QPAttr{}, rtr&^QPAttrAHAttr), ErrInvalidValue, op, []string{"INIT -> RTR needs AH_ATTR"}},
		{"INIT to RTR without PSN and QPN", from(QPStateINIT, QPStateRTR, QPAttr{AH: ah}, rtr&^(QPAttrRQPSN|QPAttrDestQPNum)), ErrInvalidValue, op,
			[]string{"needs RQ_PSN|DEST_QP_NUM"}},
		{"INIT to RTR without MTU", from(QPStateINIT, QPStateRTR, QPAttr{AH: ah}, rtr&^QPAttrPathMTU), ErrInvalidValue, op, []string{"needs PATH_MTU"}},
		{"RTR to RTS without SQ PSN", from(QPStateRTR, QPStateRTS, QPAttr{}, rts&^QPAttrSQPSN), ErrInvalidValue, op, []string{"RTR -> RTS needs SQ_PSN"}},
		{"RTR to RTS without retries", from(QPStateRTR, QPStateRTS, QPAttr{}, QPAttrSQPSN|QPAttrAckTimeout), ErrInvalidValue, op,
			[]string{"needs RETRY_CNT|RNR_RETRY"}},
		// Attributes a transition does not take.
		{"RST to INIT with MTU", from(QPStateRST, QPStateINIT, QPAttr{PortNum: 1}, init|QPAttrPathMTU), ErrInvalidValue, op,
			[]string{"RST -> INIT does not take PATH_MTU"}},
		{"INIT to RTR with SQ PSN", from(QPStateINIT, QPStateRTR, QPAttr{AH: ah}, rtr|QPAttrSQPSN), ErrInvalidValue, op, []string{"does not take SQ_PSN"}},
		{"RTR to RTS with remote read", from(QPStateRTR, QPStateRTS, QPAttr{}, rts|QPAttrAllowRemoteRead), ErrInvalidValue, op,
			[]string{"does not take ALLOW_REMOTE_READ"}},
		{"to ERR with port", from(QPStateRTS, QPStateERR, QPAttr{PortNum: 1}, QPAttrPortNum), ErrInvalidValue, op, []string{"RTS -> ERR does not take PORT_NUM"}},
		{"RTS to RTS with dest QPN", from(QPStateRTS, QPStateRTS, QPAttr{}, QPAttrDestQPNum), ErrInvalidValue, op, []string{"does not take DEST_QP_NUM"}},
		// Out-of-range values.
		{"next state", mod(QPAttr{NextState: 9}, QPAttrNextState), ErrInvalidValue, op, []string{"next state QPState(9)"}},
		{"current state", mod(QPAttr{CurrentState: 5}, QPAttrCurrentState), ErrInvalidValue, op, []string{"current state QPState(5)"}},
		{"MTU raw ethernet", from(QPStateINIT, QPStateRTR, QPAttr{AH: ah, PathMTU: MTURawEthernet}, rtr), ErrInvalidValue, op,
			[]string{"path MTU RAW_ETHERNET", "256..4096"}},
		{"MTU unknown", from(QPStateINIT, QPStateRTR, QPAttr{AH: ah, PathMTU: 17}, rtr), ErrInvalidValue, op, []string{"path MTU MTU(17)"}},
		{"ack timeout 32", from(QPStateRTR, QPStateRTS, QPAttr{AckTimeout: 32}, rts), ErrInvalidValue, op, []string{"ack timeout 32 exceeds 31"}},
		{"retry count 8", from(QPStateRTR, QPStateRTS, QPAttr{RetryCnt: 8}, rts), ErrInvalidValue, op, []string{"retry count 8 exceeds 7"}},
		{"RNR retry 8", from(QPStateRTR, QPStateRTS, QPAttr{RNRRetry: 8}, rts), ErrInvalidValue, op, []string{"RNR retry 8 exceeds 7"}},
		{"min RNR timer 32", from(QPStateINIT, QPStateRTR, QPAttr{AH: ah, MinRNRTimer: 32}, rtr), ErrInvalidValue, op,
			[]string{"min RNR timer 32 exceeds 31"}},
		{"port 0", from(QPStateRST, QPStateINIT, QPAttr{PortNum: 0}, init), ErrInvalidValue, op, []string{"port 0", "ports 1..1"}},
		{"port 2", from(QPStateRST, QPStateINIT, QPAttr{PortNum: 2}, init), ErrInvalidValue, op, []string{"port 2"}},
		{"pkey index", from(QPStateRST, QPStateINIT, QPAttr{PortNum: 1, PKeyIndex: 129}, init), ErrInvalidValue, op, []string{"pkey index 129 exceeds 128"}},
		{"AH missing", from(QPStateINIT, QPStateRTR, QPAttr{}, rtr), ErrInvalidValue, op, []string{"AH_ATTR in the mask but no AH"}},
		{"AH address type", from(QPStateINIT, QPStateRTR, QPAttr{AH: &AHAttr{AddrType: 4}}, rtr), ErrInvalidValue, op,
			[]string{"address type AddrType(4)"}},
		{"AH sgid index", func(t *testing.T, f *fixture) error {
			a := QPAttr{CurrentState: QPStateINIT, NextState: QPStateRTR, AH: &AHAttr{SGIDIndex: uint8(f.attr.GIDTableSize)}}
			return f.qp.Modify(&a, rtr|QPAttrCurrentState|QPAttrNextState)
		}, ErrInvalidValue, op, []string{"sgid index", "GID table has"}},
		{"max_rd_atomic not a power of two", from(QPStateRTR, QPStateRTS, QPAttr{MaxRDAtomic: 3}, rts|QPAttrMaxQPRDAtomic), ErrInvalidValue, op,
			[]string{"max_rd_atomic 3", "power of two"}},
		{"max_rd_atomic over the device", from(QPStateRTR, QPStateRTS, QPAttr{MaxRDAtomic: 32}, rts|QPAttrMaxQPRDAtomic), ErrInvalidValue, op,
			[]string{"max_rd_atomic 32", "up to 16"}},
		{"max_dest_rd_atomic not a power of two", from(QPStateINIT, QPStateRTR, QPAttr{AH: ah, MaxDestRDAtomic: 3}, rtr|QPAttrMaxDestRDAtomic), ErrInvalidValue, op,
			[]string{"max_dest_rd_atomic 3", "0 or a power of two"}},
		{"remote atomic mode", from(QPStateRST, QPStateINIT, QPAttr{PortNum: 1, RemoteAtomic: 9}, init|QPAttrAtomicMode), ErrInvalidValue, op,
			[]string{"remote atomic mode AtomicMode(9)"}},
		{"atomic mode to RST", from(QPStateINIT, QPStateRST, QPAttr{RemoteAtomic: AtomicIBSpec}, QPAttrAtomicMode), ErrInvalidValue, op,
			[]string{"INIT -> RST does not take ATOMIC_MODE"}},
	})
}

// TestBadDeviceName: names that open nothing.
func TestBadDeviceName(t *testing.T) {
	cases := []struct {
		name string
		open func() (*Context, error)
		code Code
		want string
	}{
		{"unknown name", func() (*Context, error) { return OpenDevice("mlx5_does_not_exist") }, ErrNotFound, `"mlx5_does_not_exist"`},
		{"emulated index out of range", func() (*Context, error) { return OpenDevice("emu99") }, ErrNotFound, `"emu99"`},
		{"prefix is not a name", func() (*Context, error) { return OpenDevice("emu") }, ErrNotFound, `"emu"`},
		{"empty name", func() (*Context, error) { return OpenDevice("") }, ErrInvalidValue, "empty device name"},
		{"prefix matching nothing", func() (*Context, error) { return OpenDevicePrefix("nonesuch") }, ErrNotFound, `"nonesuch"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, err := c.open()
			require.Error(t, err)
			assert.Nil(t, ctx)
			assert.True(t, errors.Is(err, c.code), "want %v: %v", c.code.Name(), err)
			assert.Contains(t, err.Error(), "ibv_open_device: ")
			assert.Contains(t, err.Error(), c.want)
		})
	}
	// The prefix match finds emu0 for "emu" (DOCA's -d behaviour).
	ctx, err := OpenDevicePrefix("emu")
	require.NoError(t, err)
	assert.Equal(t, "emu0", ctx.Name())
	assert.Equal(t, "emu", ctx.Driver())
	require.NoError(t, ctx.Close())
}

// Every code this package names reads as its DOCA enumerator; a value
// outside DOCA's range reads as its number.
func TestCodeNames(t *testing.T) {
	for c, name := range map[Code]string{
		codeSuccess: "DOCA_SUCCESS", ErrInUse: "DOCA_ERROR_IN_USE", ErrInvalidValue: "DOCA_ERROR_INVALID_VALUE",
		ErrBadState: "DOCA_ERROR_BAD_STATE", ErrDriver: "DOCA_ERROR_DRIVER", ErrUnexpected: "DOCA_ERROR_UNEXPECTED",
		ErrDeviceFatal: "DOCA_ERROR_DEVICE_FATAL_ERROR", ErrDeviceFatal + 1: "DOCA_ERROR_32", -1: "DOCA_ERROR_-1",
	} {
		assert.Equal(t, name, c.Name())
		assert.Equal(t, name, c.Error())
	}
}
