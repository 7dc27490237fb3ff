package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/doctor"
	"github.com/gdaki/gpunetio/doctor/doctortest"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

const treeDir = "../../doctor/testdata/"

// fakeDeps answers from a fake machine: the doctor reads the tree given with
// --root and the probes answer from its facts.json.
func fakeDeps(t *testing.T, f doctortest.Facts) deps {
	return deps{
		listRDMA: func() ([]verbs.DeviceInfo, error) { return nil, errors.New("no RDMA in this test") },
		openRDMA: func(string) (rdmaHandle, error) { return nil, errors.New("no RDMA in this test") },
		gpus:     f.Env("").GPUs,
		newEnv: func(root string) doctor.Env {
			facts, err := doctortest.LoadFacts(root)
			require.NoError(t, err)
			return facts.Env(root)
		},
	}
}

type doctorJSON struct {
	Checks []struct {
		Name    string `json:"name"`
		Subject string `json:"subject"`
		Verdict string `json:"verdict"`
		Value   string `json:"value"`
		Fix     string `json:"fix"`
	} `json:"checks"`
	Failed bool `json:"failed"`
}

func TestDoctorOverTrees(t *testing.T) {
	tests := []struct {
		tree   string
		args   []string
		code   int
		verdic map[string]string // check name (first result) -> verdict
	}{
		{tree: "good", code: exitOK, verdic: map[string]string{"topology": "PASS", "acs": "PASS", "gpu-mem-registration": "PASS", "doorbell-map": "PASS"}},
		{tree: "node", code: exitOK, verdic: map[string]string{"topology": "WARN"}},
		{tree: "acs", code: exitFail, verdic: map[string]string{"acs": "FAIL", "topology": "PASS"}},
		{tree: "closed", code: exitFail, verdic: map[string]string{"nvidia-module": "WARN", "gpu-mem-registration": "FAIL", "bar1": "FAIL"}},
		{tree: "closed", args: []string{"--bar1-mib", "4"}, code: exitFail, verdic: map[string]string{"bar1": "PASS"}},
		{tree: "nonic", code: exitFail, verdic: map[string]string{"nic": "FAIL", "gpu": "PASS"}},
		{tree: "nonic", args: []string{"-d", "emu0"}, code: exitOK, verdic: map[string]string{"nic": "WARN", "doorbell-map": "PASS", "topology": "SKIP"}},
		{tree: "nogpu", code: exitFail, verdic: map[string]string{"gpu": "FAIL", "topology": "SKIP"}},
		{tree: "good", args: []string{"-g", "5"}, code: exitFail, verdic: map[string]string{"gpu": "FAIL"}},
	}
	for _, tc := range tests {
		t.Run(tc.tree+strings.Join(tc.args, "_"), func(t *testing.T) {
			root := doctortest.Tree(t, treeDir+tc.tree+".tree")
			facts, err := doctortest.LoadFacts(root)
			require.NoError(t, err)
			d := fakeDeps(t, facts)

			var out, errOut bytes.Buffer
			args := append([]string{"doctor", "--json", "--root", root}, tc.args...)
			code := run(args, d, &out, &errOut)
			assert.Equal(t, tc.code, code, "stderr: %s", errOut.String())
			var rep doctorJSON
			require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
			assert.Equal(t, tc.code == exitFail, rep.Failed)
			got := map[string]string{}
			for _, c := range rep.Checks {
				if _, seen := got[c.Name]; !seen {
					got[c.Name] = c.Verdict
				}
				assert.Contains(t, []string{"PASS", "WARN", "FAIL", "SKIP"}, c.Verdict)
				assert.NotEmpty(t, c.Value)
				if c.Verdict == "WARN" || c.Verdict == "FAIL" {
					assert.NotEmpty(t, c.Fix, c.Name)
				}
			}
			for name, v := range tc.verdic {
				assert.Equal(t, v, got[name], name)
			}

			// The text form has the same verdicts, a fix section exactly
			// when something is not PASS/SKIP, and the same exit code.
			out.Reset()
			code = run(append([]string{"doctor", "--root", root}, tc.args...), d, &out, &errOut)
			assert.Equal(t, tc.code, code)
			text := out.String()
			nFail := 0
			for _, c := range rep.Checks {
				subj := c.Subject
				if subj == "" {
					subj = "-"
				}
				assert.Regexp(t, `(?m)^`+regexp.QuoteMeta(c.Name)+` +`+regexp.QuoteMeta(subj)+` +`+c.Verdict+` `, text)
				if c.Verdict == "FAIL" {
					nFail++
				}
			}
			hasFix := false
			for _, c := range rep.Checks {
				hasFix = hasFix || c.Fix != ""
			}
			assert.Equal(t, hasFix, strings.Contains(text, "\nFixes\n"))
			assert.Contains(t, text, fmt.Sprintf(", %d FAIL, ", nFail))
		})
	}
}

func TestUsage(t *testing.T) {
	d := deps{newEnv: func(string) doctor.Env { t.Fatal("the doctor must not run on a usage error"); return doctor.Env{} }}
	tests := []struct {
		args []string
		code int
	}{
		{nil, exitUsage},
		{[]string{"frobnicate"}, exitUsage},
		{[]string{"doctor", "--no-such-flag"}, exitUsage},
		{[]string{"doctor", "extra"}, exitUsage},
		{[]string{"doctor", "--bar1-mib", "0"}, exitUsage},
		{[]string{"doctor", "--bar1-mib", "-3"}, exitUsage},
		{[]string{"devices", "x"}, exitUsage},
		{[]string{"version", "x"}, exitUsage},
		{[]string{"doctor", "-h"}, exitOK},
		{[]string{"help"}, exitOK},
	}
	for _, tc := range tests {
		var out, errOut bytes.Buffer
		assert.Equal(t, tc.code, run(tc.args, d, &out, &errOut), "%v: %s", tc.args, errOut.String())
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	assert.Equal(t, exitOK, run([]string{"version"}, deps{}, &out, &out))
	assert.Regexp(t, `^gpunetio \S+ go\S+ \w+/\w+\n`+
		`DOCA GPUNetIO API 3\.0\.0 \(0x030000\); device code 2\.0\.0\.\.3\.0\.0, host code 0\.2\.0\.\.3\.0\.0\n`+
		`mode: open \(DOCA_SDK_LIB_PATH is not set\)\n$`, out.String())

	// The mode line says what the decision was.
	for _, tc := range []struct {
		info gpunetio.ModeInfo
		want string
	}{
		{gpunetio.ModeInfo{Mode: gpunetio.ModeSDK, EnvSet: true, Env: "/opt/doca", Dir: "/opt/doca", SetOrderingSemantic: true, GetOrderingSemantic: true},
			"mode: SDK (libraries from /opt/doca)\n"},
		{gpunetio.ModeInfo{Mode: gpunetio.ModeOpen, EnvSet: true, Env: "/x", Reason: "dlopen /x/libdoca_common.so: no such file"},
			"mode: open (dlopen /x/libdoca_common.so: no such file)\n"},
	} {
		out.Reset()
		info := tc.info
		assert.Equal(t, exitOK, run([]string{"version"}, deps{sdkMode: func() gpunetio.ModeInfo { return info }}, &out, &out))
		assert.True(t, strings.HasSuffix(out.String(), tc.want), out.String())
	}
}

type fixedMode gpunetio.ModeInfo

func (f fixedMode) SDKMode() verbs.ModeInfo { return verbs.ModeInfo(f) }

// The doctor shows the SDK mode as its first line; a DOCA_SDK_LIB_PATH that
// does not hold an SDK is a WARN with a fix.
func TestDoctorSDKModeLine(t *testing.T) {
	root := doctortest.Tree(t, treeDir+"good.tree")
	facts, err := doctortest.LoadFacts(root)
	require.NoError(t, err)
	d := fakeDeps(t, facts)
	newEnv := d.newEnv
	d.newEnv = func(r string) doctor.Env {
		env := newEnv(r)
		env.SDK = fixedMode{Mode: gpunetio.ModeOpen, EnvSet: true, Env: "/opt/wrong", Reason: "dlopen /opt/wrong/libdoca_common.so: not found"}
		return env
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, exitOK, run([]string{"doctor", "--root", root}, d, &out, &errOut), errOut.String())
	text := out.String()
	assert.Regexp(t, `(?m)^CHECK .*\nsdk-mode +- +WARN +open \(dlopen /opt/wrong/libdoca_common.so: not found\)`, text)
	assert.Contains(t, text, "WARN sdk-mode: DOCA_SDK_LIB_PATH=/opt/wrong does not hold a usable DOCA SDK")
}
