package verbs

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

type closer interface{ Close() error }

// TestCloseWithLiveChildren: every parent type refuses to close while an
// object made on it is open (ErrInUse, naming the parent and the count),
// stays usable, and closes once the child is gone. Every Close is
// idempotent.
func TestCloseWithLiveChildren(t *testing.T) {
	type made struct {
		parent, child closer
		op            string // the parent's destroy call
		kind          string
		refs          int // references the child (and what it made) holds on the parent
	}
	mmapBuf := func(t *testing.T) uintptr {
		b, err := syscall.Mmap(-1, 0, 1<<16, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		require.NoError(t, err)
		t.Cleanup(func() { syscall.Munmap(b) })
		mlx5.InitCQEs(b[:4096]) // a CQ ring may start here: its owner initialises it
		return uintptr(unsafe.Pointer(&b[0]))
	}
	// Each builder opens its own device; objects it needs besides the
	// parent and the child are closed at cleanup, after the test closed
	// those two.
	open := func(t *testing.T) *Context {
		c, err := OpenDevice("emu0")
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, c.Close()) })
		return c
	}
	keep := func(t *testing.T, c closer) { t.Cleanup(func() { require.NoError(t, c.Close()) }) }
	// A PD and a CQ for a QP, closed at cleanup.
	pdCQ := func(t *testing.T, c *Context) (*PD, *CQ) {
		pd, err := c.AllocPD()
		require.NoError(t, err)
		keep(t, pd)
		cq, err := NewCQ(c, CQConfig{Size: 16})
		require.NoError(t, err)
		keep(t, cq)
		return pd, cq
	}
	cases := []struct {
		name  string
		build func(t *testing.T) made
	}{
		{"Context with a PD", func(t *testing.T) made {
			c, err := OpenDevice("emu0")
			require.NoError(t, err)
			pd, err := c.AllocPD()
			require.NoError(t, err)
			return made{c, pd, "ibv_close_device", "Context", 1}
		}},
		{"Context with a CQ", func(t *testing.T) made {
			c, err := OpenDevice("emu0")
			require.NoError(t, err)
			cq, err := NewCQ(c, CQConfig{Size: 16})
			require.NoError(t, err)
			return made{c, cq, "ibv_close_device", "Context", 3}
		}},
		{"Context with a UAR", func(t *testing.T) made {
			c, err := OpenDevice("emu0")
			require.NoError(t, err)
			u, err := NewUAR(c, UARNonCacheDedicated)
			require.NoError(t, err)
			return made{c, u, "ibv_close_device", "Context", 1}
		}},
		{"Context with a UMem", func(t *testing.T) made {
			c, err := OpenDevice("emu0")
			require.NoError(t, err)
			u, err := NewUMem(c, mmapBuf(t), 1<<16, AccessLocalWrite, nil)
			require.NoError(t, err)
			return made{c, u, "ibv_close_device", "Context", 1}
		}},
		{"PD with an MR", func(t *testing.T) made {
			c := open(t)
			pd, err := c.AllocPD()
			require.NoError(t, err)
			mr, err := pd.RegMR(mmapBuf(t), 4096, AccessLocalWrite)
			require.NoError(t, err)
			return made{pd, mr, "ibv_dealloc_pd", "PD", 1}
		}},
		{"PD with a QP", func(t *testing.T) made {
			c := open(t)
			cq, err := NewCQ(c, CQConfig{Size: 16})
			require.NoError(t, err)
			keep(t, cq)
			pd, err := c.AllocPD()
			require.NoError(t, err)
			qp, err := NewQP(c, QPConfig{PD: pd, SendCQ: cq, SQWR: 4, SendMaxSGE: 1})
			require.NoError(t, err)
			return made{pd, qp, "ibv_dealloc_pd", "PD", 1}
		}},
		{"CQ with a QP", func(t *testing.T) made {
			c := open(t)
			pd, err := c.AllocPD()
			require.NoError(t, err)
			keep(t, pd)
			cq, err := NewCQ(c, CQConfig{Size: 16})
			require.NoError(t, err)
			qp, err := NewQP(c, QPConfig{PD: pd, SendCQ: cq, RecvCQ: cq, SQWR: 4, SendMaxSGE: 1, RQWR: 4, RecvMaxSGE: 1})
			require.NoError(t, err)
			return made{cq, qp, "doca_verbs_cq_destroy", "CQ", 2}
		}},
		{"UMem with a CQ", func(t *testing.T) made {
			c := open(t)
			u, err := NewUMem(c, mmapBuf(t), 1<<16, AccessLocalWrite, nil)
			require.NoError(t, err)
			cq, err := NewCQ(c, CQConfig{Size: 16, UMem: u, DBRUMem: u, DBRUMemOffset: 4096})
			require.NoError(t, err)
			return made{u, cq, "doca_verbs_umem_destroy", "UMem", 2}
		}},
		{"UMem with a QP", func(t *testing.T) made {
			c := open(t)
			pd, cq := pdCQ(t, c)
			u, err := NewUMem(c, mmapBuf(t), 1<<16, AccessLocalWrite, nil)
			require.NoError(t, err)
			qp, err := NewQP(c, QPConfig{PD: pd, SendCQ: cq, SQWR: 4, SendMaxSGE: 1, UMem: u, DBRUMem: u, DBRUMemOffset: 8192})
			require.NoError(t, err)
			return made{u, qp, "doca_verbs_umem_destroy", "UMem", 2}
		}},
		{"UAR with a CQ", func(t *testing.T) made {
			c := open(t)
			u, err := NewUAR(c, UARNonCacheDedicated)
			require.NoError(t, err)
			cq, err := NewCQ(c, CQConfig{Size: 16, UAR: u})
			require.NoError(t, err)
			return made{u, cq, "doca_verbs_uar_destroy", "UAR", 1}
		}},
		{"UAR with a QP", func(t *testing.T) made {
			c := open(t)
			pd, cq := pdCQ(t, c)
			u, err := NewUAR(c, UARBlueFlame)
			require.NoError(t, err)
			qp, err := NewQP(c, QPConfig{PD: pd, SendCQ: cq, SQWR: 4, SendMaxSGE: 1, UAR: u})
			require.NoError(t, err)
			return made{u, qp, "doca_verbs_uar_destroy", "UAR", 1}
		}},
		{"SRQ with a QP", func(t *testing.T) made {
			c := open(t)
			pd, cq := pdCQ(t, c)
			s := newSRQ(t, c, SRQConfig{PD: pd, WR: 8, MaxRecvSGE: 1})
			qp, err := NewQP(c, QPConfig{PD: pd, SendCQ: cq, RecvCQ: cq, SRQ: s, SQWR: 4, SendMaxSGE: 1})
			require.NoError(t, err)
			return made{s, qp, "doca_verbs_srq_destroy", "SRQ", 1}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.build(t)
			before := LiveObjects()[m.kind]
			parent := m.parent.(interface{ userName() string }).userName()
			child := m.child.(interface{ userName() string }).userName()
			require.True(t, strings.HasPrefix(parent, m.kind+" "), "%q names a %s", parent, m.kind)
			for i := 0; i < 2; i++ { // refusing changes nothing, so it refuses again
				err := m.parent.Close()
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrInUse), "%v", err)
				msg := err.Error()
				assert.True(t, strings.HasPrefix(msg, fmt.Sprintf("%s: DOCA_ERROR_IN_USE: %s is still referenced %d time(s), by ", m.op, parent, m.refs)), msg)
				assert.Contains(t, msg, child, "the error names the user")
				assert.True(t, strings.HasSuffix(msg, "; close or release them first"), msg)
			}
			assert.Equal(t, before, LiveObjects()[m.kind], "the refused parent is still open")
			require.NoError(t, m.child.Close())
			require.NoError(t, m.child.Close(), "a second Close is a no-op")
			require.NoError(t, m.parent.Close())
			require.NoError(t, m.parent.Close(), "a second Close is a no-op")
			assert.Equal(t, before-1, LiveObjects()[m.kind])
		})
	}
}

// TestUseAfterClose: every call on a closed object fails with ErrBadState
// naming the call and the closed object, and so does making a child on a
// closed parent.
func TestUseAfterClose(t *testing.T) {
	f := newFixture(t, "emu0")
	dead, err := OpenDevice("emu0")
	require.NoError(t, err)
	require.NoError(t, dead.Close())
	deadPD, err := f.ctx.AllocPD()
	require.NoError(t, err)
	require.NoError(t, deadPD.Close())
	deadCQ, err := NewCQ(f.ctx, CQConfig{Size: 16})
	require.NoError(t, err)
	require.NoError(t, deadCQ.Close())
	deadQP, err := NewQP(f.ctx, QPConfig{PD: f.pd, SendCQ: f.cq, RecvCQ: f.cq, SQWR: 4, SendMaxSGE: 1, RQWR: 4, RecvMaxSGE: 1})
	require.NoError(t, err)
	require.NoError(t, deadQP.Close())
	deadUMem, err := NewUMem(f.ctx, f.addr(), uint64(len(f.buf)), AccessLocalWrite, nil)
	require.NoError(t, err)
	require.NoError(t, deadUMem.Close())
	deadUAR, err := NewUAR(f.ctx, UARNonCacheDedicated)
	require.NoError(t, err)
	require.NoError(t, deadUAR.Close())
	initAttr := &QPAttr{NextState: QPStateINIT, PortNum: 1}
	initMask := QPAttrNextState | QPAttrPKeyIndex | QPAttrPortNum | QPAttrAllowRemoteWrite | QPAttrAllowRemoteRead

	cases := []struct {
		name, op, kind string
		call           func() error
	}{
		{"Context.AllocPD", "ibv_alloc_pd", "Context", func() error { _, err := dead.AllocPD(); return err }},
		{"Context.QueryPort", "ibv_query_port", "Context", func() error { _, err := dead.QueryPort(1); return err }},
		{"Context.QueryGID", "ibv_query_gid_ex", "Context", func() error { _, err := dead.QueryGID(1, 0); return err }},
		{"QueryDevice", "doca_verbs_query_device", "Context", func() error { _, err := QueryDevice(dead); return err }},
		{"NewCQ on a closed context", "doca_verbs_cq_create", "Context", func() error { return newCQErr(dead, CQConfig{Size: 16}) }},
		{"NewQP on a closed context", "doca_verbs_qp_create", "Context", func() error { _, err := NewQP(dead, QPConfig{PD: f.pd}); return err }},
		{"NewSRQ on a closed context", "doca_verbs_srq_create", "Context", func() error { return newSRQErr(dead, SRQConfig{PD: f.pd}) }},
		{"NewUAR on a closed context", "doca_verbs_uar_create", "Context", func() error { _, err := NewUAR(dead, UARNonCache); return err }},
		{"NewUMem on a closed context", "doca_verbs_umem_create", "Context", func() error {
			_, err := NewUMem(dead, f.addr(), 4096, 0, nil)
			return err
		}},
		{"PD.RegMR", "ibv_reg_mr", "PD", func() error { _, err := deadPD.RegMR(f.addr(), 4096, AccessLocalWrite); return err }},
		{"NewQP on a closed PD", "doca_verbs_qp_create", "PD", func() error {
			return newQPErr(f, QPConfig{PD: deadPD, SendCQ: f.cq, SQWR: 4, SendMaxSGE: 1})
		}},
		{"NewSRQ on a closed PD", "doca_verbs_srq_create", "PD", func() error {
			return newSRQErr(f.ctx, SRQConfig{PD: deadPD, WR: 4, MaxRecvSGE: 1})
		}},
		{"CQ.Poll", "doca_verbs_poll_cq", "CQ", func() error { _, err := deadCQ.Poll(make([]WC, 1)); return err }},
		{"CQ.PollWait", "doca_verbs_poll_cq", "CQ", func() error { _, err := deadCQ.PollWait(make([]WC, 1), 1, 0); return err }},
		{"NewQP on a closed CQ", "doca_verbs_qp_create", "CQ", func() error {
			return newQPErr(f, QPConfig{PD: f.pd, SendCQ: deadCQ, SQWR: 4, SendMaxSGE: 1})
		}},
		{"QP.Modify", "doca_verbs_qp_modify", "QP", func() error { return deadQP.Modify(initAttr, initMask) }},
		{"QP.Query", "doca_verbs_qp_query", "QP", func() error { _, _, err := deadQP.Query(); return err }},
		{"QP.PostSend", "doca_verbs_post_send", "QP", func() error { return deadQP.PostSend(SendWR{Opcode: WRNop}) }},
		{"QP.PostRecv", "doca_verbs_post_recv", "QP", func() error { return deadQP.PostRecv(RecvWR{}) }},
		{"NewCQ on a closed UMem", "doca_verbs_cq_create", "UMem", func() error {
			return newCQErr(f.ctx, CQConfig{Size: 16, UMem: deadUMem, DBRUMem: deadUMem, DBRUMemOffset: 4096})
		}},
		{"NewQP on a closed UMem", "doca_verbs_qp_create", "UMem", func() error {
			return newQPErr(f, QPConfig{PD: f.pd, SendCQ: f.cq, SQWR: 4, SendMaxSGE: 1, UMem: deadUMem, DBRUMem: deadUMem, DBRUMemOffset: 8192})
		}},
		{"NewCQ on a closed UAR", "doca_verbs_cq_create", "UAR", func() error { return newCQErr(f.ctx, CQConfig{Size: 16, UAR: deadUAR}) }},
		{"NewQP on a closed UAR", "doca_verbs_qp_create", "UAR", func() error {
			return newQPErr(f, QPConfig{PD: f.pd, SendCQ: f.cq, SQWR: 4, SendMaxSGE: 1, UAR: deadUAR})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrBadState), "%v", err)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, c.op+": DOCA_ERROR_BAD_STATE: "+c.kind+" "), msg)
			assert.True(t, strings.HasSuffix(msg, " is closed"), msg)
		})
	}
}

// TestLeakReport: an open object shows in LiveObjects and LeakReport (which
// TestMain turns into a failure) until it is closed.
func TestLeakReport(t *testing.T) {
	base := LiveObjects()
	c, err := OpenDevice("emu1")
	require.NoError(t, err)
	pd, err := c.AllocPD()
	require.NoError(t, err)
	cq, err := NewCQ(c, CQConfig{Size: 16})
	require.NoError(t, err)
	live := LiveObjects()
	assert.Equal(t, base["Context"]+1, live["Context"])
	assert.Equal(t, base["PD"]+1, live["PD"])
	assert.Equal(t, base["CQ"]+1, live["CQ"])
	// The CQ's own ring registration and doorbell page count too.
	assert.Equal(t, base["UMem"]+1, live["UMem"])
	assert.Equal(t, base["UAR"]+1, live["UAR"])
	r := LeakReport()
	assert.Contains(t, r, "object(s) still open:")
	assert.Contains(t, r, "\n  CQ: "+cq.userName()+", created at:\n")
	assert.Contains(t, r, "\n  PD: "+pd.userName()+", created at:\n")
	assert.Contains(t, r, "Context: "+c.userName()+", referenced by ")
	assert.Regexp(t, `CQ: CQ 0x[0-9a-f]+ on emu1, created at:\n\s+github.com/gdaki/gpunetio/verbs.newCQ\n\s+\S+/verbs/cq.go:\d+\n\s+github.com/gdaki/gpunetio/verbs.NewCQ\n\s+\S+/verbs/cq.go:\d+\n\s+github.com/gdaki/gpunetio/verbs.TestLeakReport\n`, r,
		"the report names where the CQ was made")
	require.NoError(t, cq.Close())
	require.NoError(t, pd.Close())
	require.NoError(t, c.Close())
	assert.Equal(t, base, LiveObjects())
}
