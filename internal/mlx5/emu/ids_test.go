package emu

import (
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Class 3: identifiers never alias live objects. The tests move an
// allocator next to the end of its range (the unexported id spaces) instead
// of allocating 2^24 objects.

func TestIDSpaceNextFit(t *testing.T) {
	live := map[uint32]bool{}
	inUse := func(i uint32) bool { return live[i] }
	s := newIDSpace(2, 6, 5)
	var got []uint32
	var passes []uint32
	for i := 0; i < 5; i++ {
		id, pass, ok := s.alloc(inUse)
		if !ok {
			t.Fatalf("alloc %d failed", i)
		}
		live[id] = true
		got, passes = append(got, id), append(passes, pass)
	}
	if want := []uint32{5, 6, 2, 3, 4}; !equalU32(got, want) {
		t.Fatalf("ids %v, want %v", got, want)
	}
	if want := []uint32{0, 0, 1, 1, 1}; !equalU32(passes, want) {
		t.Fatalf("passes %v, want %v", passes, want)
	}
	if _, _, ok := s.alloc(inUse); ok {
		t.Fatal("alloc succeeded with every id in use")
	}
	delete(live, 3)
	if id, _, ok := s.alloc(inUse); !ok || id != 3 {
		t.Fatalf("the one free id: got %d %v", id, ok)
	}
	delete(live, 2)
	delete(live, 6)
	// next-fit: after 3 comes 4 (live), 5 (live), 6 (free) before 2.
	if id, _, _ := s.alloc(inUse); id != 6 {
		t.Fatalf("next-fit gave %d, want 6", id)
	}
}

func equalU32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// setNext moves an id space's cursor (and pass) under the NIC lock.
func setNext(n *NIC, s *idSpace, next, pass uint32) {
	n.mu.Lock()
	s.next, s.pass = next, pass
	n.mu.Unlock()
}

// TestPDNumbersSkipLiveAtWrap: after the PD number space wraps, a new PD
// never gets the number of a live one.
func TestPDNumbersSkipLiveAtWrap(t *testing.T) {
	n := newNIC(t, Config{Name: "emuI"})
	dev, err := n.Open()
	must(t, err)
	defer dev.Close()
	first, err := dev.AllocPD()
	must(t, err)
	defer first.Dealloc()
	setNext(n, &n.ids.pd, mask24-1, 0)
	seen := map[uint32]bool{first.PDN(): true}
	for i := 0; i < 4; i++ {
		p, err := dev.AllocPD()
		must(t, err)
		defer p.Dealloc()
		if seen[p.PDN()] || p.PDN() == 0 || p.PDN() > mask24 {
			t.Fatalf("PD %d: pdn %d aliases a live PD or is out of range (live: %v)", i, p.PDN(), seen)
		}
		seen[p.PDN()] = true
	}
}

// TestMKeyVariantAdvances: an mkey index reused in a later pass gets a new
// variant, so the stale key of the old MR neither matches the new one nor
// reaches its memory; and a live index is skipped.
func TestMKeyVariantAdvances(t *testing.T) {
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{}, qpOpts{})
	mem := hostMem(t, 4096)
	acc := mlx5.AccessLocalWrite | mlx5.AccessRemoteWrite
	old, err := y.dev.RegMR(y.pd, addrOf(mem), 4096, 0x7000000, acc)
	must(t, err)
	stale := old.RKey()
	must(t, old.Dereg())
	// The next registration lands on the same index, one pass later.
	setNext(b, &b.ids.mkey, stale>>8, 1)
	m, err := y.dev.RegMR(y.pd, addrOf(mem), 4096, 0x7000000, acc)
	must(t, err)
	defer m.Dereg()
	if m.RKey()>>8 != stale>>8 {
		t.Fatalf("test setup: new key 0x%x does not reuse index 0x%x", m.RKey(), stale>>8)
	}
	if m.RKey() == stale {
		t.Fatalf("index 0x%x reused with the same key 0x%x", stale>>8, stale)
	}
	x.post(mlx5.NewRDMAWriteInline(signaled, mlx5.RAddrSeg{Addr: 0x7000000, RKey: stale}, []byte("stale")))
	if c := x.mustPoll(); c.Syndrome != mlx5.SyndromeRemoteAccessErr {
		t.Fatalf("WRITE with the stale rkey 0x%x: %v %v; want REMOTE_ACCESS_ERR", stale, c.Opcode, c.Syndrome)
	}
	if string(mem[:5]) == "stale" {
		t.Fatal("the stale rkey reached the new MR's memory")
	}

	// A live index is skipped at the wrap.
	setNext(b, &b.ids.mkey, mask24, 1)
	m1, err := y.dev.RegMR(y.pd, addrOf(mem), 4096, 0x7000000, acc)
	must(t, err)
	defer m1.Dereg()
	setNext(b, &b.ids.mkey, m.RKey()>>8, 2)
	m2, err := y.dev.RegMR(y.pd, addrOf(mem), 4096, 0x7000000, acc)
	must(t, err)
	defer m2.Dereg()
	if m2.RKey()>>8 == m.RKey()>>8 || m2.RKey() == m1.RKey() {
		t.Fatalf("keys 0x%x 0x%x 0x%x alias", m.RKey(), m1.RKey(), m2.RKey())
	}
	if m2.RKey() == mlx5.InvalidLKey || m1.RKey() == mlx5.InvalidLKey {
		t.Fatal("handed out MLX5_INVALID_LKEY")
	}
}

// TestContextUIDsSkipLive: contexts opened after the uid space wraps never
// take the uid of an open one (which used to drop the open context from
// the NIC's table).
func TestContextUIDsSkipLive(t *testing.T) {
	n := newNIC(t, Config{Name: "emuU"})
	first, err := n.Open()
	must(t, err)
	setNext(n, &n.ids.uid, 0xfffe, 0)
	var devs []mlx5.Device
	uids := map[uint16]bool{first.(*devCtx).uid: true}
	for i := 0; i < 4; i++ {
		d, err := n.Open()
		must(t, err)
		devs = append(devs, d)
		u := d.(*devCtx).uid
		if uids[u] || u == 0 {
			t.Fatalf("context %d got uid %d, in use or zero (open: %v)", i, u, uids)
		}
		uids[u] = true
	}
	n.mu.RLock()
	open := len(n.ctxs)
	n.mu.RUnlock()
	if open != 5 {
		t.Fatalf("NIC knows %d open contexts, want 5", open)
	}
	for _, d := range devs {
		must(t, d.Close())
	}
	// The first context still works and is still known.
	p, err := first.AllocPD()
	must(t, err)
	must(t, p.Dealloc())
	must(t, first.Close())
}

// TestObjectNumbersSkipLiveAtWrap: CQNs, QPNs, RMP numbers, UAR indexes and
// UMEM ids wrap within their field widths and skip live objects.
func TestObjectNumbersSkipLiveAtWrap(t *testing.T) {
	fx := newCmdFixture(t, ModelCX7)
	n := fx.nic
	cq0, err := fx.dev.CreateObj(mb(fx.cqIn().Marshal()), make([]byte, 16))
	must(t, err)
	defer cq0.Destroy()
	qp0, err := fx.dev.CreateObj(mb(fx.qpIn(cq0.ID()).Marshal()), make([]byte, 16))
	must(t, err)
	defer qp0.Destroy()

	check := func(what string, live, got uint32, max uint32) {
		t.Helper()
		if got == live || got == 0 || got > max {
			t.Fatalf("%s: got %d (live %d, max %d)", what, got, live, max)
		}
	}
	for _, tc := range []struct {
		name string
		s    *idSpace
		live uint32
	}{{"CQ", &n.ids.cq, cq0.ID()}, {"QP", &n.ids.qp, qp0.ID()}} {
		var objs []mlx5.Obj
		setNext(n, tc.s, mask24, 0)
		for i := 0; i < 2; i++ {
			var in []byte
			if tc.name == "CQ" {
				in = mb(fx.cqIn().Marshal())
			} else {
				q := fx.qpIn(cq0.ID())
				q.QPC.DBRAddr = offQPDBR + 64
				in = mb(q.Marshal())
			}
			// Put the cursor on the live object for the second one.
			if i == 1 {
				setNext(n, tc.s, tc.live, 1)
			}
			o, err := fx.dev.CreateObj(in, make([]byte, 16))
			must(t, err)
			objs = append(objs, o)
			check(tc.name, tc.live, o.ID(), mask24)
		}
		if objs[0].ID() != mask24 {
			t.Fatalf("%s: first id %d, want the top of the range", tc.name, objs[0].ID())
		}
		for i := len(objs) - 1; i >= 0; i-- {
			must(t, objs[i].Destroy())
		}
	}

	setNext(n, &n.ids.uar, mask24, 0)
	u1, err := fx.dev.AllocUAR(mlx5.UARTypeNCDedicated)
	must(t, err)
	defer u1.Free()
	setNext(n, &n.ids.uar, fx.uar.PageID(), 1)
	u2, err := fx.dev.AllocUAR(mlx5.UARTypeNCDedicated)
	must(t, err)
	defer u2.Free()
	if u1.PageID() != mask24 {
		t.Fatalf("UAR index %d, want %d", u1.PageID(), mask24)
	}
	check("UAR", fx.uar.PageID(), u2.PageID(), mask24)

	setNext(n, &n.ids.umem, fx.um.ID(), 1)
	mem := hostMem(t, 4096)
	um, err := fx.dev.RegUMEM(addrOf(mem), 4096, mlx5.AccessLocalWrite)
	must(t, err)
	defer um.Dereg()
	check("UMEM", fx.um.ID(), um.ID(), 1<<32-1)
}
