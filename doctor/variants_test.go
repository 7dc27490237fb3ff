package doctor_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/doctor"
	"github.com/gdaki/gpunetio/doctor/doctortest"
)

// machine is an extracted tree and its facts, changed by a variant.
type machine struct {
	t     *testing.T
	root  string
	facts doctortest.Facts
}

func (m *machine) write(p, content string) {
	full := filepath.Join(m.root, p)
	require.NoError(m.t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(m.t, os.WriteFile(full, []byte(content), 0o644))
}

func (m *machine) link(p, to string) {
	full := filepath.Join(m.root, p)
	require.NoError(m.t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(m.t, os.Symlink(to, full))
}

func (m *machine) remove(p string) { require.NoError(m.t, os.RemoveAll(filepath.Join(m.root, p))) }

// A probe that fails outright (not "unavailable").
type brokenCUDA struct{}

func (brokenCUDA) DmabufSupported(string) (bool, error) {
	return false, errors.New("cuda: cuDeviceGetAttribute: CUDA_ERROR_INVALID_DEVICE (101)")
}

// TestVariants changes one thing on a scenario machine and checks the
// verdict of the check that must notice. Together with TestScenarios it
// reaches every verdict of every check.
func TestVariants(t *testing.T) {
	const ib = "sys/class/infiniband/mlx5_0"
	tests := []struct {
		name    string
		tree    string
		opt     doctor.Options
		change  func(m *machine)
		env     func(e *doctor.Env)
		check   string
		subject string
		verdict doctor.Verdict
		value   string
	}{
		{name: "software RDMA device", tree: "good", check: "nic", subject: "rxe0", verdict: doctor.Warn, value: "not a PCI device",
			change: func(m *machine) {
				m.write("sys/devices/virtual/infiniband/rxe0/fw_ver", "0.0.0\n")
				m.link("sys/class/infiniband/rxe0", "../../devices/virtual/infiniband/rxe0")
			}},
		{name: "non-mlx5 PCI RDMA device", tree: "good", check: "nic", subject: "bnxt_re0", verdict: doctor.Warn, value: "not an mlx5 device",
			change: func(m *machine) {
				m.link("sys/class/infiniband/bnxt_re0", "../../devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:01.0/0000:8b:00.0/infiniband/bnxt_re0")
				m.link("sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:01.0/0000:8b:00.0/infiniband/bnxt_re0/device", "../../../0000:8b:00.0")
				m.remove("sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:01.0/0000:8b:00.0/driver")
				m.link("sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:01.0/0000:8b:00.0/driver", "../../../../../../bus/pci/drivers/bnxt_en")
				m.write("sys/bus/pci/drivers/bnxt_en/.keep", "")
			}},
		{name: "GPU missing from sysfs", tree: "good", check: "gpu", verdict: doctor.Warn, value: "not found in sysfs",
			change: func(m *machine) { m.remove("sys/bus/pci/devices/0000:8a:00.0") }},
		{name: "GPU missing from sysfs skips topology", tree: "good", check: "topology", subject: "mlx5_0", verdict: doctor.Skip, value: "GPU not in sysfs",
			change: func(m *machine) { m.remove("sys/bus/pci/devices/0000:8a:00.0") }},
		{name: "closest of two GPUs is chosen", tree: "node", check: "topology", subject: "mlx5_0", verdict: doctor.Pass, value: "PIX: 0000:a2:00.0",
			change: func(m *machine) {
				m.write("sys/devices/pci0000:a0/0000:a0:01.0/0000:a2:00.0/numa_node", "0\n")
				m.link("sys/bus/pci/devices/0000:a2:00.0", "../../../devices/pci0000:a0/0000:a0:01.0/0000:a2:00.0")
				second := m.facts.GPUs[0]
				second.Index, second.BusID = 1, "0000:a2:00.0"
				m.facts.GPUs = append(m.facts.GPUs, second)
			}},
		{name: "explicit GPU wins over the closest", tree: "node", opt: doctor.Options{GPU: "0"}, check: "topology", subject: "mlx5_0", verdict: doctor.Warn, value: "NODE",
			change: func(m *machine) {
				second := m.facts.GPUs[0]
				second.Index, second.BusID = 1, "0000:a2:00.0"
				m.facts.GPUs = append(m.facts.GPUs, second)
			}},
		{name: "two sockets", tree: "node", check: "topology", subject: "mlx5_0", verdict: doctor.Warn, value: "SYS",
			change: func(m *machine) {
				m.write("sys/devices/pci0000:a0/0000:a0:01.0/0000:a1:00.0/numa_node", "1\n")
			}},
		{name: "IOMMU pass-through from the command line only", tree: "good", check: "iommu", verdict: doctor.Pass, value: "pass-through",
			change: func(m *machine) {
				m.remove("sys/kernel/iommu_groups/12/type")
				m.remove("sys/kernel/iommu_groups/13/type")
			}},
		{name: "IOMMU translating, no group types", tree: "closed", check: "iommu", verdict: doctor.Warn, value: "DMA translated",
			change: func(m *machine) {
				m.remove("sys/kernel/iommu_groups/12/type")
				m.remove("sys/kernel/iommu_groups/13/type")
			}},
		{name: "kernel release unreadable", tree: "good", check: "kernel", verdict: doctor.Warn, value: "osrelease",
			change: func(m *machine) { m.remove("proc/sys/kernel/osrelease") }},
		{name: "kernel release garbage", tree: "good", check: "kernel", verdict: doctor.Warn, value: "unrecognised",
			change: func(m *machine) { m.write("proc/sys/kernel/osrelease", "unknown\n") }},
		{name: "nvidia version file unreadable", tree: "good", check: "nvidia-module", verdict: doctor.Warn, value: "flavour unknown",
			change: func(m *machine) { m.remove("proc/driver/nvidia/version") }},
		{name: "nvidia version file garbage", tree: "good", check: "nvidia-module", verdict: doctor.Warn, value: "unrecognised",
			change: func(m *machine) { m.write("proc/driver/nvidia/version", "hello\n") }},
		{name: "user-space driver differs from the module", tree: "good", check: "nvidia-module", verdict: doctor.Warn, value: "user-space driver (NVML) is 555.42.02",
			change: func(m *machine) { m.facts.DriverVersion = "555.42.02" }},
		{name: "no libibverbs", tree: "good", check: "rdma-core", verdict: doctor.Fail, value: "libibverbs.so.1",
			change: func(m *machine) { delete(m.facts.Libs, "libibverbs.so.1") }},
		{name: "no libmlx5", tree: "good", check: "rdma-core", verdict: doctor.Fail, value: "libmlx5.so.1",
			change: func(m *machine) { delete(m.facts.Libs, "libmlx5.so.1") }},
		{name: "rdma-core with dmabuf MR but no dmabuf UMEM", tree: "good", check: "rdma-core", verdict: doctor.Warn, value: "DevX UMEM over dmabuf unsupported",
			change: func(m *machine) {
				m.facts.Libs["libibverbs.so.1"] = doctortest.FakeLib{Path: "/usr/lib64/libibverbs.so.1.14.39.0", Symbols: []string{"ibv_reg_dmabuf_mr"}}
				m.facts.Libs["libmlx5.so.1"] = doctortest.FakeLib{Path: "/usr/lib64/libmlx5.so.1.24.39.0", Symbols: []string{"mlx5dv_devx_umem_reg_ex"}}
			}},
		{name: "rdma-core too old makes dmabuf unavailable", tree: "good", check: "gpu-mem-registration", verdict: doctor.Fail, value: "rdma-core too old",
			change: func(m *machine) {
				m.facts.Libs["libmlx5.so.1"] = doctortest.FakeLib{Path: "/usr/lib64/libmlx5.so.1.24.39.0"}
			}},
		{name: "no library probe", tree: "good", check: "rdma-core", verdict: doctor.Skip,
			env: func(e *doctor.Env) { e.Libs = nil }},
		{name: "CUDA probe unavailable", tree: "good", check: "cuda-dmabuf", verdict: doctor.Skip, value: "not checked",
			change: func(m *machine) { m.facts.CUDADmabuf = nil }},
		{name: "CUDA probe unavailable leaves dmabuf unverified", tree: "good", check: "gpu-mem-registration", verdict: doctor.Warn, value: "CUDA attribute not checked",
			change: func(m *machine) { m.facts.CUDADmabuf = nil }},
		{name: "CUDA probe unavailable, peermem loaded", tree: "good", check: "gpu-mem-registration", verdict: doctor.Pass, value: "nvidia-peermem (dmabuf prerequisites met",
			change: func(m *machine) {
				m.facts.CUDADmabuf = nil
				m.write("sys/module/nvidia_peermem/version", "550.54.15\n")
			}},
		{name: "CUDA probe broken", tree: "good", check: "cuda-dmabuf", verdict: doctor.Warn, value: "CUDA_ERROR_INVALID_DEVICE",
			env: func(e *doctor.Env) { e.CUDA = brokenCUDA{} }},
		{name: "no CUDA probe", tree: "good", check: "cuda-dmabuf", verdict: doctor.Skip, value: "no CUDA probe",
			env: func(e *doctor.Env) { e.CUDA = nil }},
		{name: "closed driver with nvidia-peermem", tree: "closed", check: "gpu-mem-registration", verdict: doctor.Pass, value: "nvidia-peermem (legacy; dmabuf unavailable: kernel 5.15.0-91-generic < 6.2",
			change: func(m *machine) { m.write("sys/module/nvidia_peermem/version", "550.54.15\n") }},
		{name: "peermem loaded", tree: "closed", check: "nvidia-peermem", verdict: doctor.Pass, value: "loaded 550.54.15",
			change: func(m *machine) { m.write("sys/module/nvidia_peermem/version", "550.54.15\n") }},
		{name: "PeerMappingOverride=0", tree: "good", check: "peer-mapping-override", verdict: doctor.Warn, value: "PeerMappingOverride=0",
			change: func(m *machine) { m.write("proc/driver/nvidia/params", "RegistryDwords: \"PeerMappingOverride=0\"\n") }},
		{name: "params unreadable", tree: "good", check: "peer-mapping-override", verdict: doctor.Warn, value: "params",
			change: func(m *machine) { m.remove("proc/driver/nvidia/params") }},
		{name: "BAR1 size unknown", tree: "good", check: "bar1", verdict: doctor.Warn, value: "unknown",
			change: func(m *machine) { m.facts.GPUs[0].BAR1Total, m.facts.GPUs[0].BAR1Free = 0, 0 }},
		{name: "GDRCopy library incomplete", tree: "good", check: "gdrcopy", verdict: doctor.Warn, value: "lacks [gdr_copy_to_mapping",
			change: func(m *machine) {
				l := m.facts.Libs["libgdrapi.so.2"]
				l.Symbols = l.Symbols[:7]
				m.facts.Libs["libgdrapi.so.2"] = l
			}},
		{name: "GDRCopy module only", tree: "good", check: "gdrcopy", verdict: doctor.Warn, value: "gdrdrv 2.4; dlopen libgdrapi.so.2",
			change: func(m *machine) { delete(m.facts.Libs, "libgdrapi.so.2") }},
		{name: "doorbell mapping refused", tree: "good", check: "doorbell-map", subject: "mlx5_0", verdict: doctor.Fail, value: "CUDA_ERROR_NOT_PERMITTED",
			change: func(m *machine) {
				m.facts.Doorbell["mlx5_0"] = "doorbell probe: register UAR page: cuda: cuMemHostRegister_v2: CUDA_ERROR_NOT_PERMITTED (800)"
			}},
		{name: "doorbell probe unavailable", tree: "good", check: "doorbell-map", subject: "mlx5_0", verdict: doctor.Skip, value: "not checked",
			change: func(m *machine) { delete(m.facts.Doorbell, "mlx5_0") }},
		{name: "no doorbell probe", tree: "good", check: "doorbell-map", subject: "mlx5_0", verdict: doctor.Skip, value: "no doorbell probe",
			env: func(e *doctor.Env) { e.UAR = nil }},
		{name: "OFED mlx5_core", tree: "good", check: "mlx5-driver", verdict: doctor.Pass, value: "mlx5_core 24.04-0.6.6 (OFED)",
			change: func(m *machine) { m.write("sys/module/mlx5_core/version", "24.04-0.6.6\n") }},
		{name: "mlx5_ib missing", tree: "good", check: "mlx5-driver", verdict: doctor.Warn, value: "mlx5_ib not loaded",
			change: func(m *machine) { m.remove("sys/module/mlx5_ib") }},
		{name: "mlx5_core missing with a NIC", tree: "good", check: "mlx5-driver", verdict: doctor.Warn, value: "mlx5_core not loaded",
			change: func(m *machine) { m.remove("sys/module/mlx5_core") }},
		{name: "firmware version unreadable", tree: "good", check: "firmware", subject: "mlx5_0", verdict: doctor.Warn, value: "fw_ver unreadable",
			change: func(m *machine) { m.remove(ib + "/fw_ver") }},
		{name: "no ports", tree: "good", check: "port", subject: "mlx5_0", verdict: doctor.Warn, value: "no ports",
			change: func(m *machine) { m.remove(ib + "/ports") }},
		{name: "port state garbage", tree: "good", check: "port", subject: "mlx5_0 port 1", verdict: doctor.Warn, value: "unrecognised",
			change: func(m *machine) { m.write(ib+"/ports/1/state", "ACTIVE\n") }},
		{name: "second port down", tree: "good", check: "port", subject: "mlx5_0 port 2", verdict: doctor.Warn, value: "DOWN",
			change: func(m *machine) { m.write(ib+"/ports/2/state", "1: DOWN\n") }},
		{name: "no GPU source", tree: "good", check: "gpu", verdict: doctor.Fail, value: "no GPU source",
			env: func(e *doctor.Env) { e.GPUs = nil }},
		{name: "NVML lists no GPU", tree: "good", check: "gpu", verdict: doctor.Fail, value: "NVML lists none",
			change: func(m *machine) { m.facts.GPUs = nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := doctortest.Tree(t, "testdata/"+tc.tree+".tree")
			facts, err := doctortest.LoadFacts(root)
			require.NoError(t, err)
			m := &machine{t: t, root: root, facts: facts}
			if tc.change != nil {
				tc.change(m)
			}
			env := m.facts.Env(root)
			if tc.env != nil {
				tc.env(&env)
			}
			rep := doctor.Run(env, tc.opt)
			res := findOne(t, rep, tc.check, tc.subject)
			if res == nil {
				return
			}
			assert.Equal(t, tc.verdict, res.Verdict, "%+v", *res)
			assert.Contains(t, res.Value, tc.value)
			if tc.verdict == doctor.Warn || tc.verdict == doctor.Fail {
				assert.NotEmpty(t, res.Fix)
			}
		})
	}
}
