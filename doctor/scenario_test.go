package doctor_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/doctor"
	"github.com/gdaki/gpunetio/doctor/doctortest"
)

// want is the expected verdict of one check; Subject "" matches the check's
// only result (the test fails when there are several).
type want struct {
	Name, Subject string
	Verdict       doctor.Verdict
	// Value and Fix, when set, must appear in the result's text.
	Value, Fix string
}

// allGood lists what the good machine reports; other scenarios override.
var allGood = []want{
	{Name: "nic", Subject: "mlx5_0", Verdict: doctor.Pass, Value: "0000:8b:00.0"},
	{Name: "gpu", Verdict: doctor.Pass, Value: "NVIDIA H100"},
	{Name: "topology", Subject: "mlx5_0", Verdict: doctor.Pass, Value: "PIX"},
	{Name: "acs", Subject: "mlx5_0", Verdict: doctor.Pass, Value: "0000:82:00.0 ACSCtl=0x0000"},
	{Name: "iommu", Verdict: doctor.Pass, Value: "pass-through"},
	{Name: "kernel", Verdict: doctor.Pass, Value: "6.8.0"},
	{Name: "nvidia-module", Verdict: doctor.Pass, Value: "550.54.15 open"},
	{Name: "rdma-core", Verdict: doctor.Pass, Value: "rdma-core 50"},
	{Name: "cuda-dmabuf", Verdict: doctor.Pass},
	{Name: "nvidia-peermem", Verdict: doctor.Skip},
	{Name: "gpu-mem-registration", Verdict: doctor.Pass, Value: "dmabuf"},
	{Name: "peer-mapping-override", Verdict: doctor.Pass, Value: "PeerMappingOverride=1"},
	{Name: "persistence-mode", Verdict: doctor.Pass},
	{Name: "bar1", Verdict: doctor.Pass, Value: "total 131072 MiB"},
	{Name: "gdrcopy", Verdict: doctor.Pass, Value: "gdrdrv 2.4"},
	{Name: "doorbell-map", Subject: "mlx5_0", Verdict: doctor.Pass},
	{Name: "mlx5-driver", Verdict: doctor.Pass},
	{Name: "firmware", Subject: "mlx5_0", Verdict: doctor.Pass, Value: "28.39.1002"},
	{Name: "port", Subject: "mlx5_0 port 1", Verdict: doctor.Pass, Value: "ACTIVE"},
}

// with returns allGood with some entries replaced (same Name and Subject)
// and others removed (Verdict -1).
func with(over ...want) []want {
	out := append([]want(nil), allGood...)
	for _, o := range over {
		found := false
		for i := range out {
			if out[i].Name == o.Name && out[i].Subject == o.Subject {
				out[i], found = o, true
			}
		}
		if !found {
			out = append(out, o)
		}
	}
	kept := out[:0]
	for _, w := range out {
		if w.Verdict >= 0 {
			kept = append(kept, w)
		}
	}
	return kept
}

const gone = doctor.Verdict(-1)

func TestScenarios(t *testing.T) {
	tests := []struct {
		name     string
		tree     string
		opt      doctor.Options
		want     []want
		failed   bool
		absent   []string // checks that must not appear at all
		nResults int      // exact number of results
	}{
		{name: "good machine", tree: "good", want: allGood, nResults: len(allGood)},
		{name: "good machine, GPU by bus id", tree: "good", opt: doctor.Options{GPU: "00000000:8A:00.0"}, want: allGood, nResults: len(allGood)},
		{name: "good machine, device by name", tree: "good", opt: doctor.Options{Device: "mlx5_0", GPU: "0"}, want: allGood, nResults: len(allGood)},
		{
			name: "NODE topology", tree: "node",
			want: with(
				want{Name: "topology", Subject: "mlx5_0", Verdict: doctor.Warn, Value: "NODE", Fix: "different root complexes"},
				want{Name: "acs", Subject: "mlx5_0", Verdict: doctor.Pass, Value: "0000:a0:01.0 ACSCtl=0x0000"},
				want{Name: "nic", Subject: "mlx5_0", Verdict: doctor.Pass, Value: "0000:a1:00.0"},
			),
			nResults: len(allGood),
		},
		{
			name: "ACS on", tree: "acs",
			want: with(want{Name: "acs", Subject: "mlx5_0", Verdict: doctor.Fail,
				Value: "0000:82:00.0 ACSCtl=0x001d (SrcValid,ReqRedir,CmpltRedir,UpstreamFwd)",
				Fix:   "setpci -s 0000:82:00.0 ECAP_ACS+0x6.w=0000; setpci -s 0000:82:01.0 ECAP_ACS+0x6.w=0000"}),
			failed: true, nResults: len(allGood),
		},
		{
			name: "closed driver", tree: "closed",
			want: with(
				want{Name: "iommu", Verdict: doctor.Warn, Value: "DMA-FQ", Fix: "iommu=pt"},
				want{Name: "kernel", Verdict: doctor.Warn, Value: "5.15.0-91-generic"},
				want{Name: "nvidia-module", Verdict: doctor.Warn, Value: "proprietary", Fix: "open kernel modules"},
				want{Name: "rdma-core", Verdict: doctor.Warn, Value: "rdma-core 28", Fix: "v34"},
				want{Name: "cuda-dmabuf", Verdict: doctor.Warn, Value: "= 0"},
				want{Name: "nvidia-peermem", Verdict: doctor.Warn, Value: "not loaded", Fix: "modprobe nvidia-peermem"},
				want{Name: "gpu-mem-registration", Verdict: doctor.Fail, Value: "proprietary nvidia module", Fix: "modprobe nvidia-peermem"},
				want{Name: "peer-mapping-override", Verdict: doctor.Warn, Value: "not set", Fix: "PeerMappingOverride=1"},
				want{Name: "persistence-mode", Verdict: doctor.Warn, Value: "disabled", Fix: "nvidia-smi -i 0 -pm 1"},
				want{Name: "bar1", Verdict: doctor.Fail, Value: "free 8 MiB", Fix: "--bar1-mib"},
				want{Name: "gdrcopy", Verdict: doctor.Warn, Value: "optional", Fix: "modprobe gdrdrv"},
				want{Name: "port", Subject: "mlx5_0 port 1", Verdict: doctor.Warn, Value: "DOWN", Fix: "ip link set"},
			),
			failed: true, nResults: len(allGood),
		},
		{
			name: "closed driver, small BAR1 request", tree: "closed", opt: doctor.Options{BAR1MiB: 4},
			want:   []want{{Name: "bar1", Verdict: doctor.Pass, Value: "requested 4 MiB"}, {Name: "gpu-mem-registration", Verdict: doctor.Fail}},
			failed: true, nResults: len(allGood),
		},
		{
			name: "good machine, BAR1 request larger than BAR1", tree: "good", opt: doctor.Options{BAR1MiB: 200000},
			want:   with(want{Name: "bar1", Verdict: doctor.Fail, Value: "larger than BAR1", Fix: "Resizable BAR"}),
			failed: true, nResults: len(allGood),
		},
		{
			name: "no NIC", tree: "nonic",
			want: with(
				want{Name: "nic", Subject: "mlx5_0", Verdict: gone},
				want{Name: "nic", Verdict: doctor.Fail, Value: "no RDMA device in /sys/class/infiniband (emulated: emu0, emu1)", Fix: "modprobe mlx5_core mlx5_ib"},
				want{Name: "topology", Subject: "mlx5_0", Verdict: gone},
				want{Name: "acs", Subject: "mlx5_0", Verdict: gone},
				want{Name: "doorbell-map", Subject: "mlx5_0", Verdict: gone},
				want{Name: "firmware", Subject: "mlx5_0", Verdict: gone},
				want{Name: "port", Subject: "mlx5_0 port 1", Verdict: gone},
				want{Name: "iommu", Verdict: doctor.Pass, Value: "off"},
				want{Name: "mlx5-driver", Verdict: doctor.Skip},
			),
			failed: true, absent: []string{"topology", "acs", "doorbell-map", "firmware", "port"}, nResults: 14,
		},
		{
			name: "no NIC, emulated device selected", tree: "nonic", opt: doctor.Options{Device: "emu0"},
			want: with(
				want{Name: "nic", Subject: "mlx5_0", Verdict: gone},
				want{Name: "nic", Subject: "emu0", Verdict: doctor.Warn, Value: "emulated"},
				want{Name: "topology", Subject: "mlx5_0", Verdict: gone},
				want{Name: "topology", Subject: "emu0", Verdict: doctor.Skip},
				want{Name: "acs", Subject: "mlx5_0", Verdict: gone},
				want{Name: "acs", Subject: "emu0", Verdict: doctor.Skip},
				want{Name: "doorbell-map", Subject: "mlx5_0", Verdict: gone},
				want{Name: "doorbell-map", Subject: "emu0", Verdict: doctor.Pass},
				want{Name: "firmware", Subject: "mlx5_0", Verdict: gone},
				want{Name: "firmware", Subject: "emu0", Verdict: doctor.Skip},
				want{Name: "port", Subject: "mlx5_0 port 1", Verdict: gone},
				want{Name: "port", Subject: "emu0", Verdict: doctor.Skip},
				want{Name: "iommu", Verdict: doctor.Pass, Value: "off"},
				want{Name: "mlx5-driver", Verdict: doctor.Skip},
			),
			nResults: len(allGood),
		},
		{
			name: "unknown device", tree: "good", opt: doctor.Options{Device: "mlx5_9"},
			want: []want{
				{Name: "nic", Subject: "mlx5_9", Verdict: doctor.Fail, Value: `"mlx5_9" not found (real: mlx5_0; emulated: emu0, emu1)`, Fix: "gpunetio devices"},
				{Name: "gpu", Verdict: doctor.Pass},
			},
			failed: true, absent: []string{"topology", "acs", "doorbell-map", "firmware", "port"},
		},
		{
			name: "unknown GPU", tree: "good", opt: doctor.Options{GPU: "3"},
			want: []want{
				{Name: "gpu", Subject: "3", Verdict: doctor.Fail, Value: "have 0=0000:8a:00.0"},
				{Name: "topology", Subject: "mlx5_0", Verdict: doctor.Skip, Value: "no GPU"},
				{Name: "bar1", Verdict: doctor.Skip},
			},
			failed: true,
		},
		{
			name: "no GPU", tree: "nogpu",
			want: with(
				want{Name: "gpu", Verdict: doctor.Fail, Value: "NVIDIA driver not available", Fix: "Install the NVIDIA driver"},
				want{Name: "topology", Subject: "mlx5_0", Verdict: doctor.Skip, Value: "no GPU"},
				want{Name: "acs", Subject: "mlx5_0", Verdict: doctor.Skip, Value: "no GPU"},
				want{Name: "nvidia-module", Verdict: doctor.Fail, Value: "not loaded"},
				want{Name: "cuda-dmabuf", Verdict: doctor.Skip},
				want{Name: "nvidia-peermem", Verdict: doctor.Warn},
				want{Name: "gpu-mem-registration", Verdict: doctor.Fail, Value: "no GPU"},
				want{Name: "peer-mapping-override", Verdict: doctor.Skip},
				want{Name: "persistence-mode", Verdict: doctor.Skip},
				want{Name: "bar1", Verdict: doctor.Skip},
				want{Name: "gdrcopy", Verdict: doctor.Warn, Value: "gdrdrv not loaded"},
				want{Name: "doorbell-map", Subject: "mlx5_0", Verdict: doctor.Skip},
			),
			failed: true, nResults: len(allGood),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := doctortest.Scenario(t, "testdata/"+tc.tree+".tree")
			rep := doctor.Run(env, tc.opt)
			for _, w := range tc.want {
				res := findOne(t, rep, w.Name, w.Subject)
				if res == nil {
					continue
				}
				assert.Equal(t, w.Verdict, res.Verdict, "%s %s: %+v", w.Name, w.Subject, *res)
				assert.Contains(t, res.Value, w.Value, "%s value", w.Name)
				assert.Contains(t, res.Fix, w.Fix, "%s fix", w.Name)
				if res.Verdict == doctor.Pass {
					assert.Empty(t, res.Fix, "%s: a PASS carries no fix", w.Name)
				} else if res.Verdict != doctor.Skip {
					assert.NotEmpty(t, res.Fix, "%s: a %s needs a fix", w.Name, res.Verdict)
				}
			}
			for _, a := range tc.absent {
				assert.Empty(t, rep.Find(a), "check %s must not run", a)
			}
			if tc.nResults > 0 {
				assert.Len(t, rep.Results, tc.nResults, "results: %+v", rep.Results)
			}
			assert.Equal(t, tc.failed, rep.Failed())
			assert.Equal(t, tc.failed, rep.Count(doctor.Fail) > 0)
		})
	}
}

func findOne(t *testing.T, rep doctor.Report, name, subject string) *doctor.Result {
	t.Helper()
	var hits []doctor.Result
	for _, r := range rep.Find(name) {
		if subject == "" || r.Subject == subject {
			hits = append(hits, r)
		}
	}
	if !assert.Len(t, hits, 1, "results named %s/%q in %+v", name, subject, rep.Results) {
		return nil
	}
	return &hits[0]
}

func TestEveryNonPassHasFix(t *testing.T) {
	for _, tree := range []string{"good", "node", "acs", "closed", "nonic", "nogpu"} {
		env := doctortest.Scenario(t, "testdata/"+tree+".tree")
		for _, r := range doctor.Run(env, doctor.Options{}).Results {
			switch r.Verdict {
			case doctor.Warn, doctor.Fail:
				assert.NotEmpty(t, r.Fix, "%s: %s %s", tree, r.Name, r.Verdict)
				assert.LessOrEqual(t, strings.Count(r.Fix, "\n"), 1, "%s: %s fix is one or two lines", tree, r.Name)
			case doctor.Pass:
				assert.Empty(t, r.Fix)
			}
			assert.NotEmpty(t, r.Value, "%s: %s has a measured value", tree, r.Name)
		}
	}
}

func TestReportJSON(t *testing.T) {
	env := doctortest.Scenario(t, "testdata/acs.tree")
	rep := doctor.Run(env, doctor.Options{})
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	var raw struct {
		Checks []map[string]any `json:"checks"`
	}
	require.NoError(t, json.Unmarshal(b, &raw))
	require.Len(t, raw.Checks, len(rep.Results))
	for i, c := range raw.Checks {
		assert.Equal(t, rep.Results[i].Verdict.String(), c["verdict"])
		assert.Equal(t, rep.Results[i].Name, c["name"])
	}
	var back doctor.Report
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, rep, back)
}

// An unprivileged reader sees 64 bytes of config space: ACS cannot be
// judged, which is a WARN asking for root, not a PASS.
func TestACSUnreadableWarns(t *testing.T) {
	root := doctortest.Tree(t, "testdata/acs.tree")
	facts, err := doctortest.LoadFacts(root)
	require.NoError(t, err)
	for _, bdf := range []string{"0000:82:00.0", "0000:82:01.0"} {
		cfg := filepath.Join(root, "sys/bus/pci/devices", bdf, "config")
		require.NoError(t, os.Truncate(cfg, 64))
	}
	rep := doctor.Run(facts.Env(root), doctor.Options{})
	res := findOne(t, rep, "acs", "mlx5_0")
	require.NotNil(t, res)
	assert.Equal(t, doctor.Warn, res.Verdict, "%+v", *res)
	assert.Contains(t, res.Value, "0000:82:00.0 extended config unreadable")
	assert.Contains(t, res.Fix, "root")
	assert.Contains(t, res.Fix, "0000:82:01.0")
}
