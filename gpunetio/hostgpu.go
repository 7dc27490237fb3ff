package gpunetio

// NewHostGPU returns a GPU handle whose "GPU memory" is ordinary host memory:
// MemAlloc of every type returns mmap'd pages, device pointers equal host
// pointers, and copies are plain copies. Exports, the CPU proxy, the service
// and the high-level QPs behave exactly as on a GPU, so the device API
// compiled as host C++ (CPU threads standing in for GPU threads) can post to
// QPs on the emulated NIC, and everything can be tested without a GPU. It is
// not a way to run kernels.
func NewHostGPU() *GPU {
	g, _ := newHostGPU()
	return g
}
