// Package gpurun is the GPU half of the example programs, written with the
// public packages only: it opens the GPU (gpunetio.NewGPU and its CUDA
// context, for modules, launches and timing), the RDMA device, the
// protection domain and the high-level QP, describes and connects the QP
// (verbs.LocalEndpoint, QPHL.ConnectRC), loads the example's kernel image,
// allocates and registers data buffers (gpunetio.Mem.RegMR) and times
// kernel launches with CUDA events.
//
// Open needs a GPU and the CUDA driver at run time (the package builds and
// vets anywhere: the driver is loaded with dlopen). Without a GPU it fails
// with an error matching ErrNoGPU that says so and points to `make test`.
//
// # Lifetime
//
// Open creates, in the order of DOCA GPUNetIO 3.0's examples, the GPU, the
// RDMA device, the PD, the device object (verbs.OpenDev) and the high-level
// QP on it. Env.Close releases everything after waiting for the kernels:
// CPU-proxy service, counters, buffers (MRs, then memory), the kernel
// module, then in 3.0's order the high-level QP, the GPU (after its CUDA
// context), the device object, the PD and the RDMA device. It is safe to
// call on a partly opened Env and twice.
//
// # Threading
//
// An Env is used by one goroutine (the program's main flow); the CPU-proxy
// service runs on its own goroutine inside package gpunetio.
package gpurun
