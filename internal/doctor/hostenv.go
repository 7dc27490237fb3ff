package doctor

// NewHostEnv returns the Env of this host with the probes that need no other
// package: NVML for GPU facts and dlopen for libraries. root is the
// filesystem root ("" for /). The CUDA and doorbell probes need the CUDA
// binding and an RDMA driver; the caller sets Env.CUDA and Env.UAR (checks
// that need a nil probe are skipped, not failed), and Env.Emulated.
func NewHostEnv(root string) Env {
	return Env{Root: root, GPUs: NVML{}, Libs: DLProbe{}}
}
