// Package gpurun is the GPU half of the example programs: it opens the GPU
// (package gpunetio plus the CUDA driver context for modules, launches and
// timing), the RDMA device, the protection domain and the high-level QP,
// loads the example's kernel image, allocates and registers data buffers and
// times kernel launches with CUDA events.
//
// Every function needs a GPU and the CUDA driver at run time (the package
// builds and vets anywhere: the driver is loaded with dlopen). Without a GPU
// Open fails with an error matching ErrNoGPU that says so and points to
// `make test`.
//
// # Lifetime
//
// Env.Close releases everything in the reverse order of creation, after
// waiting for the kernels: CPU-proxy service, buffers (MRs, then memory), the
// high-level QP, the kernel module, the CUDA context, the GPU, the PD and the
// RDMA device. It is safe to call on a partly opened Env and twice.
//
// # Threading
//
// An Env is used by one goroutine (the program's main flow); the CPU-proxy
// service runs on its own goroutine inside package gpunetio.
package gpurun
