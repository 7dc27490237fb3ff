package gputest

import (
	"fmt"
	"testing"
)

// Operations of gt_family (GT_FAM_* in the kernel file).
const (
	famSDK32Put     = 0
	famSDK34Put     = 1
	famOSPut        = 2
	famNCCLGet      = 3
	famSDK33PSignal = 4
)

// TestGPUFamilies runs the kernels of cuda/test/corpus, written in each DOCA
// family's style, on the GPU for every NIC handler: the SDK 3.2 put + wait by
// pointer, the SDK 3.4 put + NOP, the open-source put + wait by value,
// NCCL's get + mcst and the SDK 3.3 p_signal (execution scope as a template
// argument), one thread each, and checks every byte of both buffers.
func TestGPUFamilies(t *testing.T) {
	e := getEnv(t)
	const size = 4096
	cases := []struct {
		name string
		op   uint32
	}{
		{"sdk32_put_wait_ptr", famSDK32Put},
		{"sdk34_put_nop", famSDK34Put},
		{"os_put_wait_value", famOSPut},
		{"nccl_get_mcst", famNCCLGet},
		{"sdk33_p_signal_exec_scope", famSDK33PSignal},
	}
	for _, hc := range handlerCases {
		t.Run(hc.name, func(t *testing.T) {
			f := handlerFixture(t, e, hc)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					init := newImages(nextSeed())
					e.load(t, init)
					a := e.baseArgs()
					a.qps, a.nqps = uint64(f.qps.Dev), 1
					a.op, a.size, a.iters = c.op, size, 1
					st := e.run(t, launch{kernel: "gt_family", grid: 1, block: 1, args: a})
					what := fmt.Sprintf("family %s [handler %s]", c.name, hc.name)
					if st.failures != 0 {
						t.Fatalf("%s: kernel gt_family reported %v", what, st)
					}
					x := expectation{want: init.clone()}
					switch c.op {
					case famSDK32Put, famSDK34Put, famOSPut:
						copy(x.want.rem[dataOff:dataOff+size], init.loc[dataOff:dataOff+size])
					case famNCCLGet:
						copy(x.want.loc[dataOff:dataOff+size], init.rem[dataOff:dataOff+size])
					case famSDK33PSignal:
						putU64(x.want.rem, dataOff, pValue(0, 8))
						putU64(x.want.rem, sigOff, 1) // the signal word counts the one add
					}
					e.verify(t, what, layout{size: size, iters: 1}, x)
				})
			}
		})
	}
}
