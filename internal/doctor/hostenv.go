package doctor

// NewHostEnv returns the Env of this host: NVML for GPU facts, dlopen for
// libraries, package cuda for the dmabuf attribute and the doorbell
// mapping, and the registered mlx5 drivers for the RDMA devices (the caller
// imports the drivers it wants, and sets Env.Emulated). root is the
// filesystem root ("" for /).
func NewHostEnv(root string) Env {
	return Env{Root: root, GPUs: NVML{}, Libs: DLProbe{}, CUDA: CUDA{}, UAR: Doorbell{}}
}
