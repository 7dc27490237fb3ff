/*
 * Shared by the family corpus (the .cu files of cuda/test/corpus): kernels written the way each DOCA GPUNetIO
 * family's users write them, compiled by scripts/headers-check.sh (nvcc, every include style,
 * with and without GDAKI_DOCA_FAMILY_SDK), by NVRTC in the GPU suite, and as host C++ by
 * internal/devhost, which runs their thread-scope functions on the emulator.
 *
 * CORPUS_INCLUDE_STYLE as GPUNETIO_INCLUDE_STYLE of api_compile.cu: 1 flat bare names (the SDK's
 * and the DOCA examples' way), 2 the umbrella header, 3 sub-directory paths. Each file's default is
 * its family's own style.
 *
 * CORPUS_KERNEL marks a __global__ entry point: only nvcc and NVRTC see those.
 */
#ifndef GDAKI_CORPUS_H
#define GDAKI_CORPUS_H
#if defined(__CUDACC__)
#define CORPUS_KERNEL extern "C" __global__ void
#endif
#endif
