package gputest

import (
	"fmt"
	"testing"
)

// Operations of gt_ext_* (GT_EXT_* in the kernel file).
const (
	extFetchAdd  = 0
	extCAS       = 1
	extSignalSet = 2
	extQuiet     = 3
	extFence     = 4
)

// TestGPUExtensions runs the extensions of the device headers from kernels
// for every NIC handler, in EXCLUSIVE mode (a QP per thread) and GPU mode
// (all threads on one QP): fetch-add and compare-swap with their old values
// (gdaki_dev_fetch_wait), put_signal and signal with the SET operation,
// gdaki_dev_quiet after unwaited puts, and the ordering fence between a get
// and a put of what it read. Every byte of both buffers is checked.
func TestGPUExtensions(t *testing.T) {
	e := getEnv(t)
	xShapes := []shape{
		{rsm: "excl", scope: "thread", grid: 1, block: 2, iters: 3, nqps: 2},
		{rsm: "gpu", scope: "thread", grid: 2, block: 32, iters: 2, nqps: 1},
	}
	cases := []struct {
		name string
		op   uint32
		size uint32
		once bool // one op per thread
	}{
		{"fetch_add", extFetchAdd, 8, false},
		{"compare_swap", extCAS, 8, true},
		{"put_signal_set_100B", extSignalSet, 100, false},
		{"quiet_after_puts_64B", extQuiet, 64, false},
		{"fence_get_then_put_48B", extFence, 48, false},
	}
	for _, hc := range handlerCases {
		t.Run(hc.name, func(t *testing.T) {
			f := handlerFixture(t, e, hc)
			for _, s := range xShapes {
				for _, c := range cases {
					t.Run(s.rsm+"/"+c.name, func(t *testing.T) {
						iters := s.iters
						if c.once {
							iters = 1
						}
						threads := s.grid * s.block
						init := newImages(nextSeed())
						e.load(t, init)
						a := e.baseArgs()
						a.qps, a.nqps = uint64(f.qps.Dev), s.nqps
						a.op, a.size, a.iters = c.op, c.size, iters
						kernel := fmt.Sprintf("gt_ext_%s_%s", s.rsm, hc.kernel)
						st := e.run(t, launch{kernel: kernel, grid: s.grid, block: s.block, args: a})
						what := fmt.Sprintf("%s [handler %s, %s, %d threads x %d ops]", c.name, hc.name, s.rsm, threads, iters)
						if st.failures != 0 {
							t.Fatalf("%s: kernel %s reported %v", what, kernel, st)
						}
						e.verifyExt(t, what, layout{size: c.size, iters: iters}, expectExt(c.op, c.size, threads, iters, init))
					})
				}
			}
		})
	}
}

// expectExt models gt_ext_* over threads x iters operations from init.
func expectExt(op, size, threads, iters uint32, init images) extExpectation {
	x := extExpectation{expectation: expectation{want: init.clone()}}
	n := int(threads * iters)
	switch op {
	case extFetchAdd, extCAS:
		// The old values land at lsig (by the NIC) and lcnt (by the kernel): checked by extra.
		x.skipLoc = append(x.skipLoc, [2]int{sigOff, sigOff + 8*n}, [2]int{cntOff, cntOff + 8*n})
		x.extra = append(x.extra, func(got images) string {
			olds := make([]uint64, n)
			for i := range olds {
				olds[i] = getU64(got.loc, cntOff+8*i)
				if nic := getU64(got.loc, sigOff+8*i); nic != olds[i] {
					return fmt.Sprintf("op %d: fetch_wait returned %d, the NIC wrote %d", i, olds[i], nic)
				}
			}
			word := getU64(got.rem, sigOff)
			if op == extFetchAdd {
				adds := make([]uint64, n)
				for i := range adds {
					adds[i] = uint64(i/int(iters) + 1)
				}
				return checkFetchAdds(olds, adds, word)
			}
			// compare_swap(0 -> gtid+1) once per thread: one winner, everyone else saw it.
			winner := -1
			for i, o := range olds {
				if o == 0 {
					if winner >= 0 {
						return fmt.Sprintf("threads %d and %d both swapped", winner, i)
					}
					winner = i
				}
			}
			if winner < 0 || word != uint64(winner+1) {
				return fmt.Sprintf("the word holds %d, the winner was thread %d", word, winner)
			}
			for i, o := range olds {
				if i != winner && o != word {
					return fmt.Sprintf("thread %d saw %d, not the winner's %d", i, o, word)
				}
			}
			return ""
		})
		if op == extFetchAdd {
			var sum uint64
			for i := 0; i < n; i++ {
				sum += uint64(i/int(iters) + 1)
			}
			putU64(x.want.rem, sigOff, sum)
		} else {
			x.skipRem = append(x.skipRem, [2]int{sigOff, sigOff + 8}) // the winner's value: checked by extra
		}
	case extSignalSet:
		for idx := 0; idx < n; idx++ {
			off := dataOff + idx*int(size)
			copy(x.want.rem[off:off+int(size)], init.loc[off:off+int(size)])
			putU64(x.want.rem, sigOff+8*(1+idx/int(iters)), pValue(uint32(idx), 8))
		}
	case extQuiet:
		for idx := 0; idx < n; idx++ {
			off := dataOff + idx*int(size)
			copy(x.want.rem[off:off+int(size)], init.loc[off:off+int(size)])
		}
	case extFence:
		for idx := 0; idx < n; idx++ {
			off := dataOff + idx*int(size)
			copy(x.want.loc[llHalf+off:llHalf+off+int(size)], init.rem[off:off+int(size)])
			copy(x.want.rem[llHalf+off:llHalf+off+int(size)], init.rem[off:off+int(size)])
		}
	}
	return x
}

// extExpectation is an expectation with target ranges that extra checks instead.
type extExpectation struct {
	expectation
	skipRem [][2]int
}

// verifyExt is verify with skipped target ranges.
func (e *env) verifyExt(t *testing.T, what string, l layout, x extExpectation) {
	t.Helper()
	got := e.read(t)
	compare(t, what, "target (emu1)", got.rem, x.want.rem, l, x.skipRem)
	compare(t, what, "initiator (emu0)", got.loc, x.want.loc, l, x.skipLoc)
	for _, check := range x.extra {
		if msg := check(got); msg != "" {
			t.Errorf("%s: %s", what, msg)
		}
	}
}

// TestExpectExt pins the model of gt_ext_* (runs without a GPU).
func TestExpectExt(t *testing.T) {
	init := newImages(3)
	x := expectExt(extFetchAdd, 8, 2, 3, init)
	if got := getU64(x.want.rem, sigOff); got != 1*3+2*3 {
		t.Fatalf("fetch_add word %d, want 9", got)
	}
	good := images{loc: x.want.loc, rem: x.want.rem}
	good.loc = append([]byte(nil), good.loc...)
	for i, old := range []uint64{0, 1, 2, 3, 5, 7} { // thread 0 adds 1 three times, thread 1 adds 2
		putU64(good.loc, cntOff+8*i, old)
		putU64(good.loc, sigOff+8*i, old)
	}
	if msg := x.extra[0](good); msg != "" {
		t.Fatalf("a valid fetch-add run rejected: %s", msg)
	}
	putU64(good.loc, sigOff, 4)
	if msg := x.extra[0](good); msg == "" {
		t.Fatal("a fetch_wait result that differs from the NIC's write was accepted")
	}

	c := expectExt(extCAS, 8, 3, 1, init)
	won := images{loc: append([]byte(nil), c.want.loc...), rem: append([]byte(nil), c.want.rem...)}
	putU64(won.rem, sigOff, 2) // thread 1 won
	for i, old := range []uint64{2, 0, 2} {
		putU64(won.loc, cntOff+8*i, old)
		putU64(won.loc, sigOff+8*i, old)
	}
	if msg := c.extra[0](won); msg != "" {
		t.Fatalf("a valid compare-swap run rejected: %s", msg)
	}
	putU64(won.loc, cntOff+16, 0)
	putU64(won.loc, sigOff+16, 0)
	if msg := c.extra[0](won); msg == "" {
		t.Fatal("two winners accepted")
	}

	f := expectExt(extFence, 10, 1, 2, init)
	if f.want.loc[llHalf+15] != init.rem[15] || f.want.rem[llHalf+15] != init.rem[15] || f.want.rem[15] != init.rem[15] {
		t.Fatal("fence model: the get's bytes must reach both second halves")
	}
	s := expectExt(extSignalSet, 4, 2, 2, init)
	if getU64(s.want.rem, sigOff+16) != pValue(3, 8) {
		t.Fatal("signal SET model: thread 1's word holds the value of its last op")
	}
}
