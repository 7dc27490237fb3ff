// Package doctor checks a host for GPU-initiated RDMA: the GPU-NIC PCIe
// topology, ACS on the bridges between them, the IOMMU, the GPU memory
// registration path (dmabuf or nvidia-peermem), driver settings, BAR1 space,
// GDRCopy, and whether the GPU can map a NIC doorbell page.
//
// # What a check reads
//
// Every fact that lives in a file is read through Env.Root, a directory that
// stands for "/": the checks read <Root>/sys/... and <Root>/proc/... and
// resolve sysfs symbolic links inside Root, never outside it. Tests point
// Root at a fake tree under testdata (one tree per scenario). Facts that no
// file holds come from small interfaces: GPUSource (NVML), LibProbe (dlopen of
// rdma-core and GDRCopy), CUDAProbe (the dmabuf device attribute) and
// DoorbellProbe (host-registering a UAR page for the GPU). NewHostEnv wires
// the real implementations; a missing library or driver gives a "no GPU" or
// "not found" verdict, never a crash.
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
// call; library probes dlclose what they dlopen). Concurrent Runs are safe
// when the Env's probes are.
package doctor
