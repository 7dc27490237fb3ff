// Command gpunetio lists the devices GPU-initiated RDMA uses and checks a
// host for it.
//
//	gpunetio devices [--json]
//	gpunetio doctor [-d DEV] [-g GPU] [--json] [--bar1-mib N] [--root DIR]
//	gpunetio version
//
// devices lists the RDMA devices that package verbs opens (real mlx5 devices
// through rdma-core, and the emulated emu0, emu1, ...) with port state, link
// layer, MTU and GID table, and the GPUs (NVML, through package doctor) with
// PCIe address, name, memory, BAR1 size and use, and persistence mode.
//
// doctor runs every check of package doctor and prints PASS / WARN / FAIL /
// SKIP with the measured value and, for anything not PASS, the fix. --root
// reads /sys and /proc below another directory (a saved or fake tree); GPU
// facts still come from this host's NVML.
//
// The command uses public packages only, as a user's program would.
//
// Exit status: 0 on success (for doctor: nothing FAILed), 1 when doctor
// found a FAIL or devices could enumerate nothing at all, 2 on a usage error.
package main
