package gputest

import (
	"fmt"
	"testing"
)

// Operations of gt_counter_* (GT_CNT_* in the kernel file).
const (
	cntPut       = 0
	cntP         = 1
	cntPutSignal = 2
	cntSignal    = 3
	cntGet       = 4
)

// TestGPUCounter runs put_counter, p_counter, put_signal_counter,
// signal_counter and get_counter (which end in submit_multi_qps on the main
// and companion QPs) for every NIC handler, in EXCLUSIVE mode (one thread)
// and GPU mode (32 threads sharing the group), and checks the data, the
// signal words and the counter: one add of 1 per operation, executed by the
// companion after the main QP's completion.
func TestGPUCounter(t *testing.T) {
	e := getEnv(t)
	cShapes := []shape{
		{rsm: "excl", scope: "thread", grid: 1, block: 1, iters: 4, nqps: 1},
		{rsm: "gpu", scope: "thread", grid: 1, block: 32, iters: 2, nqps: 1},
	}
	cases := []struct {
		name string
		op   uint32
		size uint32
	}{
		{"put_counter_100B", cntPut, 100},
		{"p_counter_u64", cntP, 8},
		{"put_signal_counter_64B", cntPutSignal, 64},
		{"signal_counter", cntSignal, 8},
		{"get_counter_100B", cntGet, 100},
	}
	for _, hc := range handlerCases {
		t.Run(hc.name, func(t *testing.T) {
			f := handlerFixture(t, e, hc)
			e.groupQPs(t, f)
			for _, s := range cShapes {
				for _, c := range cases {
					t.Run(s.rsm+"/"+c.name, func(t *testing.T) {
						threads := s.grid * s.block
						init := newImages(nextSeed())
						e.load(t, init)
						a := e.baseArgs()
						a.qps, a.cqps, a.nqps = uint64(f.main.Dev), uint64(f.comp.Dev), 1
						a.op, a.size, a.iters = c.op, c.size, s.iters
						kernel := fmt.Sprintf("gt_counter_%s_%s", s.rsm, hc.kernel)
						st := e.run(t, launch{kernel: kernel, grid: s.grid, block: s.block, args: a})
						what := fmt.Sprintf("counter %s [handler %s, %s, %d threads x %d ops of %d bytes]", c.name, hc.name, s.rsm, threads, s.iters, c.size)
						if st.failures != 0 {
							t.Fatalf("%s: kernel %s reported %v", what, kernel, st)
						}
						x := expectCounter(c.op, c.size, threads, s.iters, init)
						e.verify(t, what, layout{size: c.size, iters: s.iters}, x)
					})
				}
			}
		})
	}
}

// expectCounter models a counter kernel run.
func expectCounter(op, size, threads, iters uint32, init images) expectation {
	x := expectation{want: init.clone()}
	n := threads * iters
	ones := make([]uint64, n)
	sigAdds := make([]uint64, n)
	var sigTotal uint64
	for idx := uint32(0); idx < n; idx++ {
		g, k := idx/iters, idx%iters
		off := int(dataOff + idx*size)
		ones[idx] = 1
		switch op {
		case cntPut, cntPutSignal:
			copy(x.want.rem[off:off+int(size)], init.loc[off:off+int(size)])
		case cntGet:
			copy(x.want.loc[off:off+int(size)], init.rem[off:off+int(size)])
		case cntP:
			putU64(x.want.rem, int(dataOff+8*idx), pValue(idx, 8))
		}
		if op == cntPutSignal {
			putU64(x.want.rem, sigOff+8*int(1+g), uint64(iters))
			putU64(x.want.loc, sigOff+8*int(idx), uint64(k))
		}
		sigAdds[idx] = uint64(g + 1)
		sigTotal += sigAdds[idx]
	}
	if op == cntSignal {
		putU64(x.want.rem, sigOff, sigTotal)
		x.fetchChain(sigOff, sigAdds, sigOff)
	}
	putU64(x.want.rem, cntOff, uint64(n))
	x.fetchChain(cntOff, ones, cntOff)
	return x
}
