package doctor

import (
	"fmt"

	"github.com/gdaki/gpunetio/verbs"
)

// checkSDKMode reports which implementation runs the control path
// (sdk-mode): the DOCA SDK (DOCA_SDK_LIB_PATH) or the open one. Open mode
// is a PASS unless DOCA_SDK_LIB_PATH asked for the SDK and it did not load,
// which is a WARN saying why.
func (r *runner) checkSDKMode() {
	if r.env.SDK == nil {
		return
	}
	m := r.env.SDK.SDKMode()
	res := Result{Name: "sdk-mode", Verdict: Pass, Value: m.String()}
	if m.Mode == verbs.ModeOpen && m.EnvSet && m.Env != "" {
		res.Verdict = Warn
		res.Fix = fmt.Sprintf("%s=%s does not hold a usable DOCA SDK: point it at the SDK's library directory "+
			"(for example /opt/mellanox/doca/lib/x86_64-linux-gnu), or unset it to run in open mode on purpose.", verbs.EnvSDKLibPath, m.Env)
	}
	r.add(res)
}
