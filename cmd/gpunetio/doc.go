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
// SKIP with the measured value and, for anything not PASS, the fix, starting
// with the DOCA SDK mode of the process (sdk-mode). --root reads /sys and
// /proc below another directory (a saved or fake tree); GPU facts still come
// from this host's NVML.
//
// version prints the build, the DOCA GPUNetIO API level the library
// implements (3.0.0) with the device- and host-code versions it accepts,
// and the mode the control path runs in: "SDK (libraries from <dir>)" when
// DOCA_SDK_LIB_PATH names a DOCA SDK that loaded, else "open (<why>)".
//
// The command uses public packages only, as a user's program would.
//
// Exit status: 0 on success (for doctor: nothing FAILed), 1 when doctor
// found a FAIL or devices could enumerate nothing at all, 2 on a usage error.
package main
