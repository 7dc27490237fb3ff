package gpunetio

import "github.com/gdaki/gpunetio/verbs"

// Mode says which implementation runs the control path (enum
// doca_gpu_lib_type of DOCA GPUNetIO 3.0): ModeOpen, this module's, or
// ModeSDK, NVIDIA's DOCA SDK loaded at run time. It is verbs.Mode.
type Mode = verbs.Mode

// The modes.
const (
	ModeOpen = verbs.ModeOpen
	ModeSDK  = verbs.ModeSDK
)

// ModeInfo is the process's mode decision (verbs.ModeInfo).
type ModeInfo = verbs.ModeInfo

// SDKMode reports whether this process runs the control path through the
// DOCA SDK, deciding it on the first call: SDK mode when DOCA_SDK_LIB_PATH
// names a directory from which libdoca_common.so, libdoca_verbs.so and
// libdoca_gpunetio.so load with every entry point SDK mode needs, open mode
// otherwise. The decision is taken once per process (by the first object
// created, or the first call of this function or verbs.SDKMode) and never
// changes; ModeInfo says how it was taken, and String summarises it (what
// `gpunetio version` and the doctor print).
func SDKMode() ModeInfo { return verbs.SDKMode() }
