package gputest

import (
	"fmt"
	"testing"
)

// Operations of gt_lowlevel_* (GT_LL_* in the kernel file).
const (
	llRW    = 0 // WRITE, NOP, READ, ATOMIC_FA built by hand on one QP
	llMulti = 1 // one WRITE on each of two QPs, one submit_multi_qps
)

// TestGPULowLevel drives reserve_wq_slots, get_wqe_ptr, wqe_prepare_write /
// nop / read / atomic, mark_wqes_ready and submit (and submit_multi_qps on
// two QPs) for every NIC handler in EXCLUSIVE mode (one thread) and GPU
// mode (64 threads on one QP).
func TestGPULowLevel(t *testing.T) {
	e := getEnv(t)
	llShapes := []shape{
		{rsm: "excl", scope: "thread", grid: 1, block: 1, iters: 4, nqps: 2},
		{rsm: "gpu", scope: "thread", grid: 2, block: 32, iters: 2, nqps: 2},
	}
	cases := []struct {
		name string
		op   uint32
		size uint32
	}{
		{"write_nop_read_atomic_96B", llRW, 96},
		{"multi_qp_write_200B", llMulti, 200},
	}
	for _, hc := range handlerCases {
		t.Run(hc.name, func(t *testing.T) {
			f := handlerFixture(t, e, hc)
			for _, s := range llShapes {
				for _, c := range cases {
					t.Run(s.rsm+"/"+c.name, func(t *testing.T) {
						threads := s.grid * s.block
						n := threads * s.iters
						init := newImages(nextSeed())
						e.load(t, init)
						a := e.baseArgs()
						a.qps, a.nqps = uint64(f.qps.Dev), s.nqps
						a.op, a.size, a.iters = c.op, c.size, s.iters
						kernel := fmt.Sprintf("gt_lowlevel_%s_%s", s.rsm, hc.kernel)
						st := e.run(t, launch{kernel: kernel, grid: s.grid, block: s.block, args: a})
						what := fmt.Sprintf("low-level %s [handler %s, %s, %d threads x %d ops of %d bytes]", c.name, hc.name, s.rsm, threads, s.iters, c.size)
						if st.failures != 0 {
							t.Fatalf("%s: kernel %s reported %v", what, kernel, st)
						}
						x := expectation{want: init.clone()}
						adds := make([]uint64, n)
						var total uint64
						for idx := uint32(0); idx < n; idx++ {
							off := int(dataOff + idx*c.size)
							copy(x.want.rem[off:off+int(c.size)], init.loc[off:off+int(c.size)])
							if c.op == llRW {
								copy(x.want.loc[llHalf+off:llHalf+off+int(c.size)], init.rem[llHalf+off:llHalf+off+int(c.size)])
								adds[idx] = uint64(idx/s.iters + 1)
								total += adds[idx]
							}
						}
						if c.op == llRW {
							putU64(x.want.rem, sigOff, total)
							x.fetchChain(sigOff, adds, sigOff)
						}
						e.verify(t, what, layout{size: c.size, iters: s.iters}, x)
					})
				}
			}
		})
	}
}
