// Package doctor checks a host for GPU-initiated RDMA: the GPU-NIC PCIe
// topology, ACS on the bridges between them, the IOMMU, the GPU memory
// registration path (dmabuf or nvidia-peermem), driver settings, BAR1 space,
// GDRCopy, and whether the GPU can map a NIC doorbell page. The command
// gpunetio doctor prints its Report.
//
//	rep := doctor.Run(doctor.NewHostEnv(""), doctor.Options{Device: "mlx5_0"})
//	for _, r := range rep.Results {
//		fmt.Println(r.Name, r.Subject, r.Verdict, r.Value, r.Fix)
//	}
//
// # What a check reads
//
// Every fact that lives in a file is read through Env.Root, a directory that
// stands for "/": the checks read <Root>/sys/... and <Root>/proc/... and
// resolve sysfs symbolic links inside Root, never outside it. Facts that no
// file holds come from small interfaces in the Env: GPUSource (NVML),
// LibProbe (dlopen of rdma-core and GDRCopy), CUDAProbe (the dmabuf device
// attribute) and DoorbellProbe (host-registering a UAR page for the GPU).
// The checks, in the order Run reports them:
//
//   - sdk-mode: Env.SDK (package verbs' SDKMode on a real host): whether
//     the control path runs through NVIDIA's DOCA SDK (DOCA_SDK_LIB_PATH)
//     or the open implementation; a WARN when DOCA_SDK_LIB_PATH asked for
//     an SDK that did not load. Left out when Env.SDK is nil.
//   - nic: /sys/class/infiniband/<dev>, its device and device/driver links
//     (the PCI function and its driver) and the function's numa_node; a
//     device named in Env.Emulated (emu0, ...) is accepted with a WARN.
//   - gpu: GPUSource.GPUs, then /sys/bus/pci/devices/<bus id> of the chosen
//     GPU (the one given in Options.GPU, else the one closest to the first
//     NIC).
//   - topology (per NIC): the two resolved sysfs device paths (host bridge,
//     bridge chain) and NUMA nodes, classified as nvidia-smi topo -m does
//     (TopoClass).
//   - acs (per NIC): the binary config file of every bridge between GPU and
//     NIC, parsed with ParseACS; sysfs shows only 64 bytes of it to a user
//     other than root, which gives a WARN saying so.
//   - iommu: /proc/cmdline, /sys/class/iommu and the iommu_group/type of the
//     GPU and NICs.
//   - kernel: /proc/sys/kernel/osrelease (dmabuf needs Linux 6.2).
//   - nvidia-module: /proc/driver/nvidia/version (open or proprietary
//     module), /sys/module/nvidia, and GPUSource.DriverVersion (user space
//     must match the module).
//   - rdma-core: LibProbe of libibverbs.so.1 (ibv_reg_dmabuf_mr) and
//     libmlx5.so.1 (mlx5dv_devx_umem_reg_ex); the release comes from the
//     loaded file's name.
//   - cuda-dmabuf: CUDAProbe.DmabufSupported of the GPU.
//   - nvidia-peermem: /sys/module/nvidia_peermem.
//   - gpu-mem-registration: the verdict of the five checks above: dmabuf,
//     else nvidia-peermem, else FAIL.
//   - peer-mapping-override: the RegistryDwords line of
//     /proc/driver/nvidia/params.
//   - persistence-mode and bar1: the chosen GPU's fields (NVML); BAR1 is
//     checked against Options.BAR1MiB.
//   - gdrcopy: /sys/module/gdrdrv and LibProbe of libgdrapi.so.2.
//   - doorbell-map (per NIC): DoorbellProbe.MapDoorbell.
//   - mlx5-driver: /sys/module/mlx5_core (its version file means OFED) and
//     /sys/module/mlx5_ib.
//   - firmware and port (per NIC): fw_ver, board_id, hca_type and
//     ports/<n>/{state,link_layer,phys_state,rate} under
//     /sys/class/infiniband/<dev>.
//
// NewHostEnv wires the real implementations: NVML, dlopen, the CUDA driver
// (loaded at run time) and package verbs (devices and SDK mode). A missing library or driver gives
// a "no GPU", "not found" or "not checked" verdict, never a crash.
//
// # Faking a machine
//
// Any directory can stand for "/": point Env.Root at a copy of another
// machine's /sys and /proc (the command's --root flag does this), or at a
// tree written by a test, and give the Env fakes of the four probes. Package
// doctortest does both from one text archive per scenario (sysfs names hold
// ':' and the tree needs symbolic links, which a Go module cannot ship as
// files): doctortest.Scenario extracts an archive into a temporary directory
// and returns an Env whose probes answer from the facts.json inside it. The
// archives under this package's testdata describe a good machine and several
// broken ones.
//
// # Verdicts
//
// Each Result is PASS, WARN, FAIL or SKIP (not applicable, for example the
// topology when there is no NIC), with the measured value and, for anything
// but PASS, a one- or two-line fix. Report.Failed is true when any result is
// FAIL; the command exits non-zero exactly then.
//
// # Lifetime and threading
//
// Run is a pure function of its Env and Options: it holds nothing open after
// it returns (the NVML source initialises and shuts NVML down inside each
// call; library probes dlclose what they dlopen; the doorbell probe closes
// the device it opens). Concurrent Runs are safe when the Env's probes are.
package doctor
