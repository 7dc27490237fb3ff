package doctor

import (
	"errors"
	"fmt"
	"strings"
)

// Minimum versions of the dmabuf path: ibv_reg_dmabuf_mr for memory regions
// over GPU memory, and DevX UMEM registration over a dmabuf file descriptor
// for rings in GPU memory.
const (
	dmabufKernelMajor = 6
	dmabufKernelMinor = 2
	rdmaCoreDmabufMR  = 34 // ibv_reg_dmabuf_mr (IBVERBS_1.12)
	rdmaCoreDmabufUM  = 43 // MLX5DV_UMEM_MASK_DMABUF honoured by mlx5dv_devx_umem_reg_ex
)

func (r *runner) checkKernel() {
	rel, err := r.fs.readString("/proc/sys/kernel/osrelease")
	if err != nil {
		r.dmabufWhyNot = append(r.dmabufWhyNot, "kernel version unknown")
		r.add(Result{Name: "kernel", Verdict: Warn, Value: err.Error(), Fix: "Could not read the kernel release; dmabuf needs Linux >= 6.2."})
		return
	}
	major, minor, err := parseKernelRelease(rel)
	if err != nil {
		r.dmabufWhyNot = append(r.dmabufWhyNot, "kernel version unknown")
		r.add(Result{Name: "kernel", Verdict: Warn, Value: err.Error(), Fix: "Could not parse the kernel release; dmabuf needs Linux >= 6.2."})
		return
	}
	if major < dmabufKernelMajor || (major == dmabufKernelMajor && minor < dmabufKernelMinor) {
		r.dmabufWhyNot = append(r.dmabufWhyNot, "kernel "+rel+" < 6.2")
		r.add(Result{Name: "kernel", Verdict: Warn, Value: rel + " (dmabuf for GPU memory needs >= 6.2)",
			Fix: "Upgrade to Linux 6.2 or newer for dmabuf registration of GPU memory; until then nvidia-peermem is needed."})
		return
	}
	r.add(Result{Name: "kernel", Verdict: Pass, Value: rel})
}

const fixNvidiaOpen = "Install the NVIDIA driver's open kernel modules (nvidia-open / nvidia-driver-<ver>-open) and load them (modprobe nvidia)."

func (r *runner) checkNvidiaModule() {
	ver, verr := r.fs.readString("/proc/driver/nvidia/version")
	sysVer, _ := r.fs.readString("/sys/module/nvidia/version")
	loaded := r.fs.exists("/sys/module/nvidia") || verr == nil
	if !loaded {
		r.dmabufWhyNot = append(r.dmabufWhyNot, "nvidia module not loaded")
		r.add(Result{Name: "nvidia-module", Verdict: Fail, Value: "nvidia kernel module not loaded", Fix: fixNvidiaOpen})
		return
	}
	r.nvidiaLoaded = true
	if verr != nil {
		r.dmabufWhyNot = append(r.dmabufWhyNot, "nvidia module flavour unknown")
		r.add(Result{Name: "nvidia-module", Verdict: Warn, Value: fmt.Sprintf("loaded (version %s); flavour unknown: %v", orUnknown(sysVer), verr),
			Fix: "Could not tell open from proprietary: dmabuf needs the open kernel modules."})
		return
	}
	m, err := parseNvidiaVersion(ver)
	if err != nil {
		r.dmabufWhyNot = append(r.dmabufWhyNot, "nvidia module flavour unknown")
		r.add(Result{Name: "nvidia-module", Verdict: Warn, Value: fmt.Sprintf("loaded (version %s); %v", orUnknown(sysVer), err),
			Fix: "Could not tell open from proprietary: dmabuf needs the open kernel modules."})
		return
	}
	if !m.Open {
		r.dmabufWhyNot = append(r.dmabufWhyNot, "proprietary nvidia module")
		r.add(Result{Name: "nvidia-module", Verdict: Warn, Value: m.Version + " proprietary kernel module (dmabuf export needs the open one)", Fix: fixNvidiaOpen})
		return
	}
	v := m.Version + " open kernel module"
	// The user-space driver (NVML, libcuda) must match the kernel module.
	if r.env.GPUs != nil {
		if uv, err := r.env.GPUs.DriverVersion(); err == nil && uv != "" {
			if uv != m.Version {
				r.add(Result{Name: "nvidia-module", Verdict: Warn, Value: fmt.Sprintf("%s, but user-space driver (NVML) is %s", v, uv),
					Fix: "The kernel module and the user-space driver differ (a driver upgrade without reboot): reload the nvidia modules or reboot."})
				return
			}
			v += ", user space " + uv
		}
	}
	r.add(Result{Name: "nvidia-module", Verdict: Pass, Value: v})
}

const fixRDMACore = "Install rdma-core user space (Debian/Ubuntu: apt install libibverbs1 ibverbs-providers; RHEL: dnf install rdma-core libibverbs)."

func (r *runner) checkRDMACore() {
	if r.env.Libs == nil {
		r.dmabufWhyNot = append(r.dmabufWhyNot, "rdma-core not checked")
		r.add(Result{Name: "rdma-core", Verdict: Skip, Value: "no library probe in this build"})
		return
	}
	verbs, err := r.env.Libs.Probe("libibverbs.so.1", "ibv_reg_dmabuf_mr")
	if err != nil {
		r.dmabufWhyNot = append(r.dmabufWhyNot, "no libibverbs")
		r.add(Result{Name: "rdma-core", Verdict: Fail, Value: err.Error(), Fix: fixRDMACore})
		return
	}
	release := "release unknown"
	rel, relErr := rdmaCoreRelease(verbs.Path)
	if relErr == nil {
		release = fmt.Sprintf("rdma-core %d", rel)
	}
	mlx5, err := r.env.Libs.Probe("libmlx5.so.1", "mlx5dv_devx_umem_reg_ex")
	if err != nil {
		r.dmabufWhyNot = append(r.dmabufWhyNot, "no libmlx5")
		r.add(Result{Name: "rdma-core", Verdict: Fail, Value: fmt.Sprintf("%s (%s); %v", release, verbs.Path, err), Fix: fixRDMACore})
		return
	}
	v := fmt.Sprintf("%s (%s, %s)", release, verbs.Path, mlx5.Path)
	switch {
	case !verbs.Symbols["ibv_reg_dmabuf_mr"]:
		r.dmabufWhyNot = append(r.dmabufWhyNot, "libibverbs without ibv_reg_dmabuf_mr")
		r.add(Result{Name: "rdma-core", Verdict: Warn, Value: v + "; no ibv_reg_dmabuf_mr",
			Fix: fmt.Sprintf("Upgrade rdma-core to v%d or newer (v%d+ for DevX UMEM over dmabuf).", rdmaCoreDmabufMR, rdmaCoreDmabufUM)})
	case !mlx5.Symbols["mlx5dv_devx_umem_reg_ex"] || (relErr == nil && rel < rdmaCoreDmabufUM):
		r.dmabufWhyNot = append(r.dmabufWhyNot, "rdma-core too old for DevX UMEM over dmabuf")
		r.add(Result{Name: "rdma-core", Verdict: Warn, Value: v + "; ibv_reg_dmabuf_mr present, DevX UMEM over dmabuf unsupported",
			Fix: fmt.Sprintf("Upgrade rdma-core to v%d or newer for queue memory registered through dmabuf.", rdmaCoreDmabufUM)})
	default:
		r.add(Result{Name: "rdma-core", Verdict: Pass, Value: v + "; ibv_reg_dmabuf_mr and mlx5dv_devx_umem_reg_ex present"})
	}
}

func (r *runner) checkCUDADmabuf() {
	if r.gpu == nil {
		r.dmabufWhyNot = append(r.dmabufWhyNot, "no GPU")
		r.add(Result{Name: "cuda-dmabuf", Verdict: Skip, Value: "no GPU"})
		return
	}
	if r.env.CUDA == nil {
		r.add(Result{Name: "cuda-dmabuf", Subject: gpuSubject(r.gpu), Verdict: Skip, Value: "not checked: no CUDA probe in this build"})
		return
	}
	ok, err := r.env.CUDA.DmabufSupported(r.gpu.BusID)
	switch {
	case errors.Is(err, ErrProbeUnavailable):
		r.add(Result{Name: "cuda-dmabuf", Subject: gpuSubject(r.gpu), Verdict: Skip, Value: "not checked: " + err.Error()})
	case err != nil:
		r.dmabufWhyNot = append(r.dmabufWhyNot, "CUDA dmabuf attribute unreadable")
		r.add(Result{Name: "cuda-dmabuf", Subject: gpuSubject(r.gpu), Verdict: Warn, Value: err.Error(),
			Fix: "Check that the CUDA driver (libcuda.so.1) matches the kernel module (nvidia-smi)."})
	case !ok:
		r.cudaDmabuf = 0
		r.dmabufWhyNot = append(r.dmabufWhyNot, "CUDA reports no dmabuf support")
		r.add(Result{Name: "cuda-dmabuf", Subject: gpuSubject(r.gpu), Verdict: Warn, Value: "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0",
			Fix: "dmabuf export needs CUDA 11.7+ with the open kernel modules on a GPU that supports it."})
	default:
		r.cudaDmabuf = 1
		r.add(Result{Name: "cuda-dmabuf", Subject: gpuSubject(r.gpu), Verdict: Pass, Value: "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 1"})
	}
}

func (r *runner) peermemLoaded() bool { return r.fs.exists("/sys/module/nvidia_peermem") }

const fixPeermem = "modprobe nvidia-peermem (it ships with the NVIDIA driver and needs the MLNX_OFED / DOCA-OFED peer-memory support)."

func (r *runner) checkPeermem() {
	if r.peermemLoaded() {
		v, _ := r.fs.readString("/sys/module/nvidia_peermem/version")
		r.add(Result{Name: "nvidia-peermem", Verdict: Pass, Value: "loaded " + v})
		return
	}
	if len(r.dmabufWhyNot) == 0 {
		r.add(Result{Name: "nvidia-peermem", Verdict: Skip, Value: "not loaded (not needed: the dmabuf path is available)"})
		return
	}
	r.add(Result{Name: "nvidia-peermem", Verdict: Warn, Value: "not loaded", Fix: fixPeermem})
}

// checkRegistration decides how GPU memory can be registered with the NIC:
// dmabuf when every prerequisite holds, else nvidia-peermem, else not at all.
func (r *runner) checkRegistration() {
	peermem := r.peermemLoaded()
	why := strings.Join(r.dmabufWhyNot, ", ")
	switch {
	case len(r.dmabufWhyNot) == 0 && r.cudaDmabuf == 1:
		r.add(Result{Name: "gpu-mem-registration", Verdict: Pass, Value: "dmabuf"})
	case len(r.dmabufWhyNot) == 0 && peermem:
		r.add(Result{Name: "gpu-mem-registration", Verdict: Pass, Value: "nvidia-peermem (dmabuf prerequisites met, CUDA attribute not checked)"})
	case len(r.dmabufWhyNot) == 0:
		r.add(Result{Name: "gpu-mem-registration", Verdict: Warn, Value: "dmabuf prerequisites met; CUDA attribute not checked",
			Fix: "Confirm with a dmabuf export test on the GPU, or load nvidia-peermem as a fallback."})
	case peermem:
		r.add(Result{Name: "gpu-mem-registration", Verdict: Pass, Value: "nvidia-peermem (legacy; dmabuf unavailable: " + why + ")"})
	default:
		r.add(Result{Name: "gpu-mem-registration", Verdict: Fail, Value: "none: dmabuf unavailable (" + why + ") and nvidia-peermem not loaded",
			Fix: "Use Linux >= 6.2 + NVIDIA open kernel modules + rdma-core >= 43 for dmabuf; or " + fixPeermem})
	}
}

func (r *runner) checkPeerMappingOverride() {
	if !r.nvidiaLoaded {
		r.add(Result{Name: "peer-mapping-override", Verdict: Skip, Value: "nvidia module not loaded"})
		return
	}
	params, err := r.fs.readString("/proc/driver/nvidia/params")
	if err != nil {
		r.add(Result{Name: "peer-mapping-override", Verdict: Warn, Value: err.Error(),
			Fix: "Could not read the NVIDIA module parameters; set PeerMappingOverride=1 to map NIC doorbells without root."})
		return
	}
	v, ok := parseRegistryDwords(params)["PeerMappingOverride"]
	if ok && registryTrue(v) {
		r.add(Result{Name: "peer-mapping-override", Verdict: Pass, Value: "PeerMappingOverride=" + v})
		return
	}
	val := "not set"
	if ok {
		val = "PeerMappingOverride=" + v
	}
	r.add(Result{Name: "peer-mapping-override", Verdict: Warn, Value: val + " (GPU mapping of NIC doorbells needs root)",
		Fix: `echo 'options nvidia NVreg_RegistryDwords="PeerMappingOverride=1;"' > /etc/modprobe.d/nvidia-gdaki.conf, then reload the nvidia module or reboot.`})
}

func (r *runner) checkPersistence() {
	if r.gpu == nil {
		r.add(Result{Name: "persistence-mode", Verdict: Skip, Value: "no GPU"})
		return
	}
	if r.gpu.Persistence {
		r.add(Result{Name: "persistence-mode", Subject: gpuSubject(r.gpu), Verdict: Pass, Value: "enabled"})
		return
	}
	r.add(Result{Name: "persistence-mode", Subject: gpuSubject(r.gpu), Verdict: Warn, Value: "disabled",
		Fix: fmt.Sprintf("nvidia-smi -i %d -pm 1 (or run nvidia-persistenced) so the driver state and mappings survive between runs.", r.gpu.Index)})
}

const mib = 1 << 20

func (r *runner) checkBAR1() {
	if r.gpu == nil {
		r.add(Result{Name: "bar1", Verdict: Skip, Value: "no GPU"})
		return
	}
	g := r.gpu
	need := r.opt.BAR1MiB * mib
	v := fmt.Sprintf("total %d MiB, used %d MiB, free %d MiB; requested %d MiB", g.BAR1Total/mib, g.BAR1Used/mib, g.BAR1Free/mib, r.opt.BAR1MiB)
	switch {
	case g.BAR1Total == 0:
		r.add(Result{Name: "bar1", Subject: gpuSubject(g), Verdict: Warn, Value: "BAR1 size unknown",
			Fix: "NVML did not report BAR1; check nvidia-smi -q -d MEMORY."})
	case g.BAR1Total < need:
		r.add(Result{Name: "bar1", Subject: gpuSubject(g), Verdict: Fail, Value: v + " (larger than BAR1)",
			Fix: "Enable Resizable BAR / large BAR1 in the BIOS, or map less GPU memory for the CPU (--bar1-mib)."})
	case g.BAR1Free < need:
		r.add(Result{Name: "bar1", Subject: gpuSubject(g), Verdict: Fail, Value: v + " (not enough free)",
			Fix: "Other processes hold BAR1 mappings (GDRCopy, cuMemHostRegister); free them or map less (--bar1-mib)."})
	default:
		r.add(Result{Name: "bar1", Subject: gpuSubject(g), Verdict: Pass, Value: v})
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
