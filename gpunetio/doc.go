// Package gpunetio is the DOCA GPUNetIO host API in idiomatic Go: GPU handles
// and memory, export of verbs QPs, CQs and UARs to CUDA kernels, the CPU
// proxy and its service, and the high-level QP helpers.
package gpunetio
