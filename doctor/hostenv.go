package doctor

import "github.com/gdaki/gpunetio/verbs"

// NewHostEnv returns the Env of this host: NVML for GPU facts, dlopen for
// libraries, the CUDA driver for the dmabuf attribute and the doorbell
// mapping, and package verbs for the RDMA devices, with Env.Emulated set to
// the emulated devices verbs lists (emu0, emu1, ...). root is the filesystem
// root ("" for /); only the files come from it, the probes always ask this
// host.
func NewHostEnv(root string) Env {
	return Env{Root: root, GPUs: NVML{}, Libs: DLProbe{}, CUDA: CUDA{}, UAR: Doorbell{}, Emulated: emulatedDevices(), SDK: SDKModeOfProcess{}}
}

// SDKModeOfProcess is the SDKModeProbe of this process: verbs.SDKMode.
type SDKModeOfProcess struct{}

// SDKMode returns verbs.SDKMode().
func (SDKModeOfProcess) SDKMode() verbs.ModeInfo { return verbs.SDKMode() }

// emulatedDevices names the emulated RDMA devices (driver "emu"); nil when
// verbs lists no device at all.
func emulatedDevices() []string {
	ds, _ := verbs.Devices()
	var out []string
	for _, d := range ds {
		if d.Driver == "emu" {
			out = append(out, d.Name)
		}
	}
	return out
}
