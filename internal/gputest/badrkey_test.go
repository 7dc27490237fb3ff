package gputest

import (
	"fmt"
	"testing"
)

// TestGPUBadRKey: a put with a wrong rkey completes with an error CQE, which
// the kernel's bounded poll must report (code 1) instead of spinning; the
// target buffer stays untouched and the QP records the error. Each handler
// gets fresh QPs, since the error leaves them in ERR.
func TestGPUBadRKey(t *testing.T) {
	e := getEnv(t)
	for _, hc := range handlerCases {
		t.Run(hc.name, func(t *testing.T) {
			hc.skipUnsupported(t)
			f := e.errFixture(t, hc, false)
			init := newImages(nextSeed())
			e.load(t, init)
			a := e.baseArgs()
			a.qps, a.nqps = uint64(f.qps.Dev), 2
			a.op, a.size, a.iters = opPut, 64, 1
			a.rkey ^= 0x01000000 // flip a bit of the (big-endian) rkey
			kernel := fmt.Sprintf("gt_onesided_excl_thread_%s", hc.kernel)
			st := e.run(t, launch{kernel: kernel, grid: 1, block: 1, args: a})
			what := fmt.Sprintf("put with a bad rkey [handler %s, excl, thread scope]", hc.name)
			if st.failures == 0 || st.code != 1 {
				t.Errorf("%s: kernel %s reported %v, want an error CQE on the main QP (code 1)", what, kernel, st)
			}
			e.verify(t, what, layout{size: 64, iters: 1}, expectation{want: init})
			info, err := f.pairs[0].loc.GPUQP().LastError()
			if err != nil {
				t.Fatalf("%s: QP LastError: %v", what, err)
			}
			if !info.HasError {
				t.Errorf("%s: the QP does not record an error after the error CQE (%+v)", what, info)
			}
		})
	}
}
