package doctor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/doctor"
	"github.com/gdaki/gpunetio/doctor/doctortest"
	"github.com/gdaki/gpunetio/verbs"
)

type fixedSDK verbs.ModeInfo

func (f fixedSDK) SDKMode() verbs.ModeInfo { return verbs.ModeInfo(f) }

// The sdk-mode line: first, PASS in either mode, WARN when
// DOCA_SDK_LIB_PATH asked for an SDK that did not load; absent without a
// probe.
func TestSDKModeCheck(t *testing.T) {
	for _, tc := range []struct {
		name    string
		info    verbs.ModeInfo
		verdict doctor.Verdict
		value   string
		fix     string
	}{
		{"open, unset", verbs.ModeInfo{Mode: verbs.ModeOpen, Reason: "DOCA_SDK_LIB_PATH is not set"},
			doctor.Pass, "open (DOCA_SDK_LIB_PATH is not set)", ""},
		{"SDK", verbs.ModeInfo{Mode: verbs.ModeSDK, EnvSet: true, Env: "/opt/doca/lib", Dir: "/opt/doca/lib", SetOrderingSemantic: true, GetOrderingSemantic: true},
			doctor.Pass, "SDK (libraries from /opt/doca/lib)", ""},
		{"SDK without ordering semantic", verbs.ModeInfo{Mode: verbs.ModeSDK, EnvSet: true, Env: "/d", Dir: "/d"},
			doctor.Pass, "SDK (libraries from /d; no QP ordering semantic)", ""},
		{"fallback", verbs.ModeInfo{Mode: verbs.ModeOpen, EnvSet: true, Env: "/nowhere", Reason: "dlopen /nowhere/libdoca_common.so: not found"},
			doctor.Warn, "open (dlopen /nowhere/libdoca_common.so: not found)", "DOCA_SDK_LIB_PATH=/nowhere does not hold a usable DOCA SDK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := doctortest.Scenario(t, "testdata/good.tree")
			env.SDK = fixedSDK(tc.info)
			rep := doctor.Run(env, doctor.Options{})
			require.NotEmpty(t, rep.Results)
			r := rep.Results[0]
			assert.Equal(t, "sdk-mode", r.Name)
			assert.Equal(t, tc.verdict, r.Verdict)
			assert.Equal(t, tc.value, r.Value)
			if tc.fix == "" {
				assert.Empty(t, r.Fix)
			} else {
				assert.Contains(t, r.Fix, tc.fix)
			}
		})
	}
	rep := doctor.Run(doctortest.Scenario(t, "testdata/good.tree"), doctor.Options{})
	assert.Empty(t, rep.Find("sdk-mode"), "no probe, no line")
	assert.NotNil(t, doctor.NewHostEnv("").SDK, "the host environment reports the process's mode")
}
