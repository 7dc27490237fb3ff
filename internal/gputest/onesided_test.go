package gputest

import (
	"fmt"
	"testing"
)

// Operations of gt_onesided_* (GT_OP_* in the kernel file).
const (
	opPut       = 0
	opP         = 1
	opPutSignal = 2
	opPSignal   = 3
	opSignal    = 4
	opGet       = 5
)

// shape is a sharing mode x execution scope and the launch that exercises
// it: in EXCLUSIVE mode each thread (or warp) owns one of the fixture's two
// QPs, in GPU mode all threads share the first.
type shape struct {
	rsm, scope  string // kernel name parts
	grid, block uint32
	iters, nqps uint32
}

func (s shape) name() string { return s.rsm + "_" + s.scope }

var shapes = []shape{
	{rsm: "excl", scope: "thread", grid: 1, block: 2, iters: 3, nqps: 2},
	{rsm: "excl", scope: "warp", grid: 1, block: 64, iters: 2, nqps: 2},
	{rsm: "gpu", scope: "thread", grid: 2, block: 32, iters: 2, nqps: 1},
	{rsm: "gpu", scope: "warp", grid: 2, block: 64, iters: 1, nqps: 1},
}

// opCase is one one-sided operation with a transfer size.
type opCase struct {
	name string
	op   uint32
	size uint32
	// only limits the case to the shapes it names (empty: every shape).
	only []string
}

var opCases = []opCase{
	{name: "put_100B", op: opPut, size: 100},
	{name: "put_0B_nop", op: opPut, size: 0, only: []string{"excl_thread", "excl_warp"}},
	{name: "put_80000B", op: opPut, size: 80000, only: []string{"excl_thread"}},
	{name: "p_u64", op: opP, size: 8},
	{name: "p_u8", op: opP, size: 1, only: []string{"excl_thread", "gpu_thread"}},
	{name: "p_u16", op: opP, size: 2, only: []string{"excl_thread"}},
	{name: "p_u32", op: opP, size: 4, only: []string{"excl_thread", "gpu_warp"}},
	{name: "put_signal_64B", op: opPutSignal, size: 64},
	{name: "p_signal_u64", op: opPSignal, size: 8, only: []string{"excl_thread", "gpu_thread"}}, // no warp form
	{name: "signal", op: opSignal, size: 8},
	{name: "get_100B", op: opGet, size: 100},
	{name: "get_0B_nop", op: opGet, size: 0, only: []string{"excl_thread"}},
}

func (c opCase) runsOn(s shape) bool {
	if len(c.only) == 0 {
		return true
	}
	for _, n := range c.only {
		if n == s.name() {
			return true
		}
	}
	return false
}

// expectation is what a run must leave in both buffers.
type expectation struct {
	want images
	// skipLoc are local ranges checked by extra instead of byte by byte.
	skipLoc [][2]int
	extra   []func(got images) string
}

// fetchChain makes x check the n fetch-add results at local offset at
// (skipping them byte by byte) against the word at remote offset word.
func (x *expectation) fetchChain(at int, adds []uint64, word int) {
	n := len(adds)
	x.skipLoc = append(x.skipLoc, [2]int{at, at + 8*n})
	x.extra = append(x.extra, func(got images) string {
		olds := make([]uint64, n)
		for i := range olds {
			olds[i] = getU64(got.loc, at+8*i)
		}
		if msg := checkFetchAdds(olds, adds, getU64(got.rem, word)); msg != "" {
			return fmt.Sprintf("fetch-adds on the target word at +0x%x (results at initiator +0x%x): %s", word, at, msg)
		}
		return ""
	})
}

// expectOneSided models op over threads x iters operations from init.
func expectOneSided(op, size, threads, iters uint32, init images) expectation {
	x := expectation{want: init.clone()}
	n := threads * iters
	for idx := uint32(0); idx < n; idx++ {
		g, k := idx/iters, idx%iters
		off := int(dataOff + idx*size)
		switch op {
		case opPut, opPutSignal:
			copy(x.want.rem[off:off+int(size)], init.loc[off:off+int(size)])
		case opGet:
			copy(x.want.loc[off:off+int(size)], init.rem[off:off+int(size)])
		case opP, opPSignal:
			v := pValue(idx, size)
			for b := uint32(0); b < size; b++ {
				x.want.rem[off+int(b)] = byte(v >> (8 * b))
			}
		}
		if op == opPutSignal || op == opPSignal {
			// per-thread word 1+g counts its adds of 1; op k fetched k.
			putU64(x.want.rem, sigOff+8*int(1+g), uint64(iters))
			putU64(x.want.loc, sigOff+8*int(idx), uint64(k))
		}
	}
	if op == opSignal {
		var total uint64
		adds := make([]uint64, n)
		for idx := uint32(0); idx < n; idx++ {
			adds[idx] = uint64(idx/iters + 1)
			total += adds[idx]
		}
		putU64(x.want.rem, sigOff, total)
		x.fetchChain(sigOff, adds, sigOff)
	}
	return x
}

// verify compares both buffers with x.
func (e *env) verify(t *testing.T, what string, l layout, x expectation) {
	t.Helper()
	got := e.read(t)
	compare(t, what, "target (emu1)", got.rem, x.want.rem, l, nil)
	compare(t, what, "initiator (emu0)", got.loc, x.want.loc, l, x.skipLoc)
	for _, check := range x.extra {
		if msg := check(got); msg != "" {
			t.Errorf("%s: %s", what, msg)
		}
	}
}

var caseSeed byte

func nextSeed() byte { caseSeed++; return caseSeed }

// TestGPUOneSided launches put, p, put_signal, p_signal, signal and get
// (each followed by fence, a bounded completion poll and wait/get_wait) for
// every NIC handler, sharing mode and execution scope, and checks every
// byte of both buffers, the signal words and the fetch-add results.
func TestGPUOneSided(t *testing.T) {
	e := getEnv(t)
	for _, hc := range handlerCases {
		t.Run(hc.name, func(t *testing.T) {
			f := handlerFixture(t, e, hc)
			for _, s := range shapes {
				t.Run(s.name(), func(t *testing.T) {
					for _, c := range opCases {
						if !c.runsOn(s) {
							continue
						}
						t.Run(c.name, func(t *testing.T) {
							e.runOneSided(t, f, s, c)
						})
					}
				})
			}
		})
	}
}

func (e *env) runOneSided(t *testing.T, f *fixture, s shape, c opCase) {
	t.Helper()
	threads := s.grid * s.block
	if int(threads*s.iters*c.size) > dataSize || int(8*(1+threads*s.iters)) > sigSize {
		t.Fatalf("case %s on %s does not fit the buffers", c.name, s.name())
	}
	init := newImages(nextSeed())
	e.load(t, init)
	a := e.baseArgs()
	a.qps, a.nqps = uint64(f.qps.Dev), s.nqps
	a.op, a.size, a.iters = c.op, c.size, s.iters
	kernel := fmt.Sprintf("gt_onesided_%s_%s_%s", s.rsm, s.scope, f.hc.kernel)
	st := e.run(t, launch{kernel: kernel, grid: s.grid, block: s.block, args: a})
	what := fmt.Sprintf("%s [handler %s, %s, %s scope, %d threads x %d ops of %d bytes]", c.name, f.hc.name, s.rsm, s.scope, threads, s.iters, c.size)
	if st.failures != 0 {
		t.Fatalf("%s: kernel %s reported %v", what, kernel, st)
	}
	e.verify(t, what, layout{size: c.size, iters: s.iters}, expectOneSided(c.op, c.size, threads, s.iters, init))
}
