/*
 * GPUNetIO verbs device helpers: feature macros, timer, lane id, byte swaps, MMIO stores, fences,
 * relaxed loads, atomics, locks and copies (device-api.md sections 2.4 and 4.2).
 *
 * Portability layer: when this header is compiled by a host C++ compiler (no __CUDACC__), the
 * device qualifiers become plain inline functions, atomics map to the GCC __atomic builtins,
 * fences to std::atomic_thread_fence plus a compiler barrier, the lane id is 0 and MMIO stores are
 * single volatile 8-byte stores followed by a compiler barrier. This lets the thread-scope API run
 * against host memory with CPU threads (tests, emulation). Warp-scope paths are GPU-only.
 *
 * Every inline-asm fence, MMIO store and ordered load/store carries a "memory" clobber, so the
 * compiler cannot move plain stores (WQE bytes) across it.
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_COMMON_H
#define DOCA_GPUNETIO_DEV_VERBS_COMMON_H

#include "../common/doca_gpunetio_verbs_dev.h"
#if defined(__CUDACC_RTC__)
/* NVRTC: no system or toolkit headers; doca_gpunetio_verbs_prim.h declared what is needed. */
#elif defined(__CUDACC__)
/* The includes of the DOCA header: kernels may rely on what they make visible. */
#include <stdio.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <cuda.h>
#include <cuda/atomic>
#include <math.h>
#else
#include <stdio.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <math.h>
#include <atomic>
#include <sched.h>
#include <time.h>
#endif

/* The descriptor structs are packed but 8-byte aligned with naturally aligned fields. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waddress-of-packed-member"
#endif

/* ---- Host-compile portability layer ------------------------------------------------------- */
#if !defined(__CUDACC__)
#define DOCA_GPUNETIO_VERBS_HOST_COMPILE 1
#ifndef __device__
#define __device__
#endif
#ifndef __host__
#define __host__
#endif
#ifndef __forceinline__
#define __forceinline__ inline __attribute__((always_inline))
#endif
#ifndef __noinline__
#define __noinline__ __attribute__((noinline))
#endif
#endif

/* ---- Feature macros (conditions exactly as in the reference) ------------------------------ */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
#define DOCA_GPUNETIO_VERBS_HAS_ASYNC_STORE_RELEASE 1
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define DOCA_GPUNETIO_VERBS_HAS_TMA_COPY 1
#endif

/* Internal: the toolkit version the feature tests compare with. CUDA_VERSION comes from <cuda.h>;
 * NVRTC has no <cuda.h>, and the PTX it emits is that of its own version. */
#if defined(CUDA_VERSION)
#define DOCA_PRIV_GPU_DEV_VERBS_CUDA_VERSION CUDA_VERSION
#elif defined(__CUDACC_RTC__)
#define DOCA_PRIV_GPU_DEV_VERBS_CUDA_VERSION (__CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10)
#endif

#if defined(DOCA_PRIV_GPU_DEV_VERBS_CUDA_VERSION) && DOCA_PRIV_GPU_DEV_VERBS_CUDA_VERSION >= 12020
#define DOCA_GPUNETIO_VERBS_HAS_STORE_RELAXED_MMIO 1
#elif defined(__CUDACC__) && !defined(DOCA_GPUNETIO_VERBS_NO_MMIO_WARNING)
#warning "CUDA >= 12.2 is needed for st.mmio.relaxed.sys doorbell stores; using system-scope relaxed stores instead (define DOCA_GPUNETIO_VERBS_NO_MMIO_WARNING to silence)"
#endif

#if defined(DOCA_PRIV_GPU_DEV_VERBS_CUDA_VERSION) && DOCA_PRIV_GPU_DEV_VERBS_CUDA_VERSION >= 12080 && \
	defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define DOCA_GPUNETIO_VERBS_HAS_FENCE_ACQUIRE_RELEASE_PTX 1
#endif

/* Internal: the TMA bulk-copy PTX needs a CUDA 12 assembler as well as sm_90. */
#if defined(DOCA_GPUNETIO_VERBS_HAS_TMA_COPY) && defined(DOCA_PRIV_GPU_DEV_VERBS_CUDA_VERSION) && \
	DOCA_PRIV_GPU_DEV_VERBS_CUDA_VERSION >= 12000
#define DOCA_GPUNETIO_VERBS_PRIV_TMA_PTX 1
#endif

/* Internal: device code (either nvcc pass) versus the host-compile layer. */
#if defined(__CUDA_ARCH__)
#define DOCA_GPUNETIO_VERBS_PRIV_DEVICE_PASS 1
#endif

/* Host-compile store hook: an emulator (or a test) may define DOCA_GPUNETIO_VERBS_HOST_STORE_HOOK
 * as a function (void *addr, uint64_t value, int bytes) before including the headers; it is called
 * after every doorbell, doorbell-record and proxy-mailbox store. Device code never calls it. */
#if defined(DOCA_GPUNETIO_VERBS_HOST_COMPILE) && defined(DOCA_GPUNETIO_VERBS_HOST_STORE_HOOK)
#define DOCA_PRIV_GPU_DEV_VERBS_HOST_HOOK(ptr, val, bytes) \
	DOCA_GPUNETIO_VERBS_HOST_STORE_HOOK((void *)(ptr), (uint64_t)(val), (bytes))
#else
#define DOCA_PRIV_GPU_DEV_VERBS_HOST_HOOK(ptr, val, bytes) \
	do {                                               \
	} while (0)
#endif

/* ---- Internal helpers ------------------------------------------------------------------------ */

/* Called in every spin-wait iteration. On the GPU it does nothing; in a host compile CPU threads
 * may outnumber cores, so a spinning thread gives its core to the one it waits for. */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_spin_hint()
{
#if !defined(__CUDACC__)
	sched_yield();
#endif
}

/* A compiler barrier: no memory access moves across it. */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_compiler_barrier()
{
	asm volatile("" ::: "memory");
}

/* Internal: v is computed here, in program order: the compiler may not sink the loads it depends
 * on below the next ordered access (no instruction is emitted). */
template <typename T>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_keep(T &v)
{
	static_assert(sizeof(T) == 4 || sizeof(T) == 8, "keep takes a 4- or 8-byte value");
#if defined(__CUDACC__)
	if constexpr (sizeof(T) == 8)
		asm volatile("" : "+l"(v));
	else
		asm volatile("" : "+r"(v));
#else
	asm volatile("" : "+r"(v));
#endif
}

/* Read-only-path load of a field that is immutable while kernels run. */
template <typename T>
__device__ static __forceinline__ T doca_priv_gpu_dev_verbs_ldg(const T *ptr)
{
#if defined(__CUDACC__)
	return __ldg(ptr);
#else
	return *ptr;
#endif
}

/* __ldg has no overloads for enums or pointers to non-arithmetic types. */
__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_ldg_int(const int *ptr)
{
	return doca_priv_gpu_dev_verbs_ldg(ptr);
}

template <typename T>
__device__ static __forceinline__ T *doca_priv_gpu_dev_verbs_ldg_ptr(T *const *ptr)
{
#if defined(__CUDACC__)
	return (T *)__ldg((const unsigned long long *)ptr);
#else
	return *ptr;
#endif
}

/* Internal: the clock that poll bounds count: %clock64 (SM clock cycles) on the GPU,
 * CLOCK_MONOTONIC nanoseconds in a host compile. Only differences of two reads are meaningful. */
__device__ static __forceinline__ uint64_t doca_priv_gpu_dev_verbs_ticks()
{
#if defined(__CUDACC__)
	uint64_t t;
	asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
	return t;
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

/* Internal: 32-bit system-scope release store (publishes a record the host or other SMs read). */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_store_release_sys32(uint32_t *ptr, uint32_t val)
{
#if defined(__CUDACC__)
	asm volatile("st.release.sys.global.b32 [%0], %1;" ::"l"(ptr), "r"(val) : "memory");
#else
	__atomic_store_n(ptr, val, __ATOMIC_RELEASE);
#endif
}

/* ---- Timer, lane id, byte swaps --------------------------------------------------------------- */

__device__ static __forceinline__ uint64_t doca_gpu_dev_verbs_query_globaltimer()
{
#if defined(__CUDACC__)
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
	return t;
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

__device__ static __forceinline__ unsigned int doca_gpu_dev_verbs_get_lane_id()
{
#if defined(__CUDACC__)
	unsigned int lane;
	asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
	return lane;
#else
	return 0;
#endif
}

__device__ static __forceinline__ uint32_t doca_gpu_dev_verbs_bswap32(uint32_t x)
{
#if defined(__CUDACC__)
	return __byte_perm(x, 0, 0x0123);
#else
	return __builtin_bswap32(x);
#endif
}

__device__ static __forceinline__ uint64_t doca_gpu_dev_verbs_bswap64(uint64_t x)
{
	uint32_t lo = (uint32_t)x;
	uint32_t hi = (uint32_t)(x >> 32);
	return ((uint64_t)doca_gpu_dev_verbs_bswap32(lo) << 32) | (uint64_t)doca_gpu_dev_verbs_bswap32(hi);
}

__device__ static __forceinline__ uint16_t doca_gpu_dev_verbs_bswap16(uint16_t x)
{
	return (uint16_t)((uint16_t)(x << 8) | (uint16_t)(x >> 8));
}

/* ---- MMIO store, fences, async release stores ---------------------------------------------- */

#ifdef DOCA_GPUNETIO_VERBS_HAS_STORE_RELAXED_MMIO
/* One relaxed system-scope MMIO store of 8 bytes: never merged, split or repeated. */
__device__ static __forceinline__ void doca_gpu_dev_verbs_store_relaxed_mmio(uint64_t *ptr, uint64_t val)
{
	asm volatile("st.mmio.relaxed.sys.global.b64 [%0], %1;" ::"l"(ptr), "l"(val) : "memory");
}
#endif

/* Internal: 8-byte doorbell store. MMIO store where the toolkit has it, else a relaxed
 * system-scope store; on the host a single volatile 8-byte store plus a compiler barrier. */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_store_db64(uint64_t *ptr, uint64_t val)
{
#if defined(DOCA_GPUNETIO_VERBS_HAS_STORE_RELAXED_MMIO)
	doca_gpu_dev_verbs_store_relaxed_mmio(ptr, val);
#elif defined(__CUDACC__)
	asm volatile("st.relaxed.sys.global.b64 [%0], %1;" ::"l"(ptr), "l"(val) : "memory");
#else
	doca_priv_gpu_dev_verbs_compiler_barrier();
	*(volatile uint64_t *)ptr = val;
	doca_priv_gpu_dev_verbs_compiler_barrier();
	DOCA_PRIV_GPU_DEV_VERBS_HOST_HOOK(ptr, val, 8);
#endif
}

/* Internal: relaxed system-scope 32-bit store (doorbell records). */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_store_relaxed_sys32(uint32_t *ptr, uint32_t val)
{
#if defined(__CUDACC__)
	asm volatile("st.relaxed.sys.global.b32 [%0], %1;" ::"l"(ptr), "r"(val) : "memory");
#else
	__atomic_store_n(ptr, val, __ATOMIC_RELAXED);
	doca_priv_gpu_dev_verbs_compiler_barrier();
	DOCA_PRIV_GPU_DEV_VERBS_HOST_HOOK(ptr, val, 4);
#endif
}

/* Internal: relaxed system-scope 64-bit store (proxy mailbox). */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_store_relaxed_sys64(uint64_t *ptr, uint64_t val)
{
#if defined(__CUDACC__)
	asm volatile("st.relaxed.sys.global.b64 [%0], %1;" ::"l"(ptr), "l"(val) : "memory");
#else
	__atomic_store_n(ptr, val, __ATOMIC_RELAXED);
	doca_priv_gpu_dev_verbs_compiler_barrier();
#endif
}

/* What fence_acquire and fence_release both become where PTX has no fence.acquire/fence.release
 * (before CUDA 12.8 or sm_90): fence.acq_rel at the scope. A THREAD-scope fence is a no-op. */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_fence_acq_rel_fallback()
{
#if defined(__CUDACC__)
	if (sync_scope == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS)
		asm volatile("fence.acq_rel.sys;" ::: "memory");
	else if (sync_scope == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU)
		asm volatile("fence.acq_rel.gpu;" ::: "memory");
	else if (sync_scope == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA)
		asm volatile("fence.acq_rel.cta;" ::: "memory");
#endif
}

#if !defined(__CUDACC__)
/* Host builds: a fence of the given order wrapped in compiler barriers, so that no plain store
 * moves across it. */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope>
static inline void doca_priv_gpu_dev_verbs_host_fence(std::memory_order order)
{
	if (sync_scope != DOCA_GPUNETIO_VERBS_SYNC_SCOPE_THREAD) {
		doca_priv_gpu_dev_verbs_compiler_barrier();
		std::atomic_thread_fence(order);
		doca_priv_gpu_dev_verbs_compiler_barrier();
	}
}
#endif

template <enum doca_gpu_dev_verbs_sync_scope sync_scope>
__device__ static __forceinline__ void doca_gpu_dev_verbs_fence_acquire()
{
#if defined(__CUDACC__)
#if defined(DOCA_GPUNETIO_VERBS_HAS_FENCE_ACQUIRE_RELEASE_PTX)
	if (sync_scope == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS)
		asm volatile("fence.acquire.sys;" ::: "memory");
	else if (sync_scope == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU)
		asm volatile("fence.acquire.gpu;" ::: "memory");
	else if (sync_scope == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA)
		asm volatile("fence.acquire.cta;" ::: "memory");
#else
	doca_priv_gpu_dev_verbs_fence_acq_rel_fallback<sync_scope>();
#endif
#else
	doca_priv_gpu_dev_verbs_host_fence<sync_scope>(std::memory_order_acquire);
#endif
}

template <enum doca_gpu_dev_verbs_sync_scope sync_scope>
__device__ static __forceinline__ void doca_gpu_dev_verbs_fence_release()
{
#if defined(__CUDACC__)
#if defined(DOCA_GPUNETIO_VERBS_HAS_FENCE_ACQUIRE_RELEASE_PTX)
	if (sync_scope == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS)
		asm volatile("fence.release.sys;" ::: "memory");
	else if (sync_scope == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU)
		asm volatile("fence.release.gpu;" ::: "memory");
	else if (sync_scope == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA)
		asm volatile("fence.release.cta;" ::: "memory");
#else
	doca_priv_gpu_dev_verbs_fence_acq_rel_fallback<sync_scope>();
#endif
#else
	doca_priv_gpu_dev_verbs_host_fence<sync_scope>(std::memory_order_release);
#endif
}

#ifdef DOCA_GPUNETIO_VERBS_HAS_ASYNC_STORE_RELEASE
__device__ static __forceinline__ void doca_gpu_dev_verbs_async_store_release(uint32_t *ptr, uint32_t val)
{
	asm volatile("st.async.release.sys.global.b32 [%0], %1;" ::"l"(ptr), "r"(val) : "memory");
}

__device__ static __forceinline__ void doca_gpu_dev_verbs_async_store_release(uint64_t *ptr, uint64_t val)
{
	asm volatile("st.async.mmio.release.sys.global.b64 [%0], %1;" ::"l"(ptr), "l"(val) : "memory");
}
#endif

/* ---- Alignment and copies ------------------------------------------------------------------- */

__device__ static __forceinline__ bool doca_gpu_dev_verbs_isaligned(void *ptr, size_t alignment)
{
	return ((uintptr_t)ptr & (alignment - 1)) == 0;
}

/* Copies front to back in 4-byte, then 2-byte, then 1-byte pieces; pointers assumed aligned. */
__device__ static __forceinline__ void doca_gpu_dev_verbs_memcpy_aligned_data(void *dst, void *src, size_t bytes)
{
	uint8_t *d = (uint8_t *)dst;
	uint8_t *s = (uint8_t *)src;
	while (bytes >= 4) {
		*(uint32_t *)d = *(uint32_t *)s;
		d += 4;
		s += 4;
		bytes -= 4;
	}
	if (bytes >= 2) {
		*(uint16_t *)d = *(uint16_t *)s;
		d += 2;
		s += 2;
		bytes -= 2;
	}
	if (bytes >= 1)
		*d = *s;
}

/* Copies front to back, each step the widest of 8/4/2/1 bytes both pointers are aligned to. */
__device__ static __forceinline__ void doca_gpu_dev_verbs_memcpy_data(void *dst, void *src, size_t bytes)
{
	uint8_t *d = (uint8_t *)dst;
	uint8_t *s = (uint8_t *)src;
	while (bytes > 0) {
		uintptr_t both = (uintptr_t)d | (uintptr_t)s;
		if (bytes >= 8 && (both & 7) == 0) {
			*(uint64_t *)d = *(uint64_t *)s;
			d += 8;
			s += 8;
			bytes -= 8;
		} else if (bytes >= 4 && (both & 3) == 0) {
			*(uint32_t *)d = *(uint32_t *)s;
			d += 4;
			s += 4;
			bytes -= 4;
		} else if (bytes >= 2 && (both & 1) == 0) {
			*(uint16_t *)d = *(uint16_t *)s;
			d += 2;
			s += 2;
			bytes -= 2;
		} else {
			*d = *s;
			d += 1;
			s += 1;
			bytes -= 1;
		}
	}
}

/* Decision D1: a real copy of bytes (a multiple of sizeof(T)) in sizeof(T) units. */
template <typename T>
__device__ static __forceinline__ void doca_gpu_dev_verbs_memcpy_inl_aligned_data(T *dst, T *src, size_t bytes)
{
	size_t n = bytes / sizeof(T);
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i];
}

/* ---- Atomics ------------------------------------------------------------------------------------ */

/* Internal: 64-bit compare-and-swap at the scope of the sharing mode; returns the old value. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __forceinline__ uint64_t doca_priv_gpu_dev_verbs_cas64(uint64_t *ptr, uint64_t cmp, uint64_t val)
{
#if defined(__CUDACC__)
	if (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA)
		return (uint64_t)atomicCAS_block((unsigned long long *)ptr, (unsigned long long)cmp,
						 (unsigned long long)val);
	return (uint64_t)atomicCAS((unsigned long long *)ptr, (unsigned long long)cmp, (unsigned long long)val);
#else
	__atomic_compare_exchange_n(ptr, &cmp, val, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return cmp;
#endif
}

/* Internal: 32-bit compare-and-swap at the scope of the sharing mode; returns the old value. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __forceinline__ int doca_priv_gpu_dev_verbs_cas32(int *ptr, int cmp, int val)
{
#if defined(__CUDACC__)
	if (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA)
		return atomicCAS_block(ptr, cmp, val);
	return atomicCAS(ptr, cmp, val);
#else
	__atomic_compare_exchange_n(ptr, &cmp, val, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return cmp;
#endif
}

template <typename T, enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode,
	  bool need_fence_acquire = false>
__device__ static __forceinline__ T doca_gpu_dev_verbs_atomic_max(T *ptr, T val)
{
	static_assert(sizeof(T) == 8, "atomic_max is defined for 64-bit unsigned types");
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		T old = *ptr;
		*ptr = old > val ? old : val;
		return old;
	} else if constexpr (resource_sharing_mode != DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA &&
			     resource_sharing_mode != DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU) {
		return 0;
	} else {
#if defined(__CUDACC__)
	unsigned long long old;
	if (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA) {
		if (need_fence_acquire)
			asm volatile("atom.acquire.cta.global.max.u64 %0, [%1], %2;"
				     : "=l"(old)
				     : "l"(ptr), "l"((unsigned long long)val)
				     : "memory");
		else
			asm volatile("atom.relaxed.cta.global.max.u64 %0, [%1], %2;"
				     : "=l"(old)
				     : "l"(ptr), "l"((unsigned long long)val)
				     : "memory");
	} else {
		if (need_fence_acquire)
			asm volatile("atom.acquire.gpu.global.max.u64 %0, [%1], %2;"
				     : "=l"(old)
				     : "l"(ptr), "l"((unsigned long long)val)
				     : "memory");
		else
			asm volatile("atom.relaxed.gpu.global.max.u64 %0, [%1], %2;"
				     : "=l"(old)
				     : "l"(ptr), "l"((unsigned long long)val)
				     : "memory");
	}
	return (T)old;
#else
	T old = __atomic_load_n(ptr, __ATOMIC_RELAXED);
	while (old < val &&
	       !__atomic_compare_exchange_n(ptr, &old, val, true,
					    need_fence_acquire ? __ATOMIC_ACQ_REL : __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	if (need_fence_acquire)
		std::atomic_thread_fence(std::memory_order_acquire);
	return old;
#endif
	}
}

template <typename T, enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __forceinline__ T doca_gpu_dev_verbs_atomic_add(T *ptr, T val)
{
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		T old = *ptr;
		*ptr = old + val;
		return old;
	} else if constexpr (resource_sharing_mode != DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA &&
			     resource_sharing_mode != DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU) {
		return 0;
	} else {
#if defined(__CUDACC__)
		static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomic_add is defined for 4- and 8-byte types");
		constexpr bool cta = resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA;
		if constexpr ((T)0.5 != (T)0) { /* floating point */
			if constexpr (sizeof(T) == 8) {
				double old;
				if (cta)
					asm volatile("atom.relaxed.cta.global.add.f64 %0, [%1], %2;"
						     : "=d"(old)
						     : "l"(ptr), "d"((double)val)
						     : "memory");
				else
					asm volatile("atom.relaxed.gpu.global.add.f64 %0, [%1], %2;"
						     : "=d"(old)
						     : "l"(ptr), "d"((double)val)
						     : "memory");
				return (T)old;
			} else {
				float old;
				if (cta)
					asm volatile("atom.relaxed.cta.global.add.f32 %0, [%1], %2;"
						     : "=f"(old)
						     : "l"(ptr), "f"((float)val)
						     : "memory");
				else
					asm volatile("atom.relaxed.gpu.global.add.f32 %0, [%1], %2;"
						     : "=f"(old)
						     : "l"(ptr), "f"((float)val)
						     : "memory");
				return (T)old;
			}
		} else if constexpr (sizeof(T) == 8) {
			unsigned long long old;
			if (cta)
				asm volatile("atom.relaxed.cta.global.add.u64 %0, [%1], %2;"
					     : "=l"(old)
					     : "l"(ptr), "l"((unsigned long long)val)
					     : "memory");
			else
				asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], %2;"
					     : "=l"(old)
					     : "l"(ptr), "l"((unsigned long long)val)
					     : "memory");
			return (T)old;
		} else {
			unsigned int old;
			if (cta)
				asm volatile("atom.relaxed.cta.global.add.u32 %0, [%1], %2;"
					     : "=r"(old)
					     : "l"(ptr), "r"((unsigned int)val)
					     : "memory");
			else
				asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;"
					     : "=r"(old)
					     : "l"(ptr), "r"((unsigned int)val)
					     : "memory");
			return (T)old;
		}
#else
		return __atomic_fetch_add(ptr, val, __ATOMIC_RELAXED);
#endif
	}
}

template <typename T, enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __forceinline__ T doca_gpu_dev_verbs_atomic_read(T *ptr)
{
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		return *ptr;
	} else {
#if defined(__CUDACC__)
		return *(volatile T *)ptr;
#else
		return __atomic_load_n(ptr, __ATOMIC_RELAXED);
#endif
	}
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __forceinline__ void doca_gpu_dev_verbs_lock(int *lock)
{
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		*lock = 1;
	} else {
		while (doca_priv_gpu_dev_verbs_cas32<resource_sharing_mode>(lock, 0, 1) != 0)
			doca_priv_gpu_dev_verbs_spin_hint();
		if (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA)
			doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA>();
		else
			doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
	}
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __forceinline__ void doca_gpu_dev_verbs_unlock(int *lock)
{
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		*lock = 0;
	} else {
#if defined(__CUDACC__)
		if (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA)
			asm volatile("st.release.cta.global.b32 [%0], %1;" ::"l"(lock), "r"(0) : "memory");
		else
			asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(lock), "r"(0) : "memory");
#else
		__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
#endif
	}
}

/* ---- Relaxed loads ----------------------------------------------------------------------------- */

__device__ static __forceinline__ uint8_t doca_gpu_dev_verbs_load_relaxed_sys_global(uint8_t *ptr)
{
#if defined(__CUDACC__)
	uint16_t v;
	asm volatile("ld.relaxed.sys.global.L1::no_allocate.b8 %0, [%1];" : "=h"(v) : "l"(ptr) : "memory");
	return (uint8_t)v;
#else
	uint8_t v = __atomic_load_n(ptr, __ATOMIC_RELAXED);
	doca_priv_gpu_dev_verbs_compiler_barrier();
	return v;
#endif
}

__device__ static __forceinline__ uint32_t doca_gpu_dev_verbs_load_relaxed_sys_global(uint32_t *ptr)
{
#if defined(__CUDACC__)
	uint32_t v;
	asm volatile("ld.relaxed.sys.global.L1::no_allocate.b32 %0, [%1];" : "=r"(v) : "l"(ptr) : "memory");
	return v;
#else
	uint32_t v = __atomic_load_n(ptr, __ATOMIC_RELAXED);
	doca_priv_gpu_dev_verbs_compiler_barrier();
	return v;
#endif
}

__device__ static __forceinline__ uint64_t doca_gpu_dev_verbs_load_relaxed_sys_global(uint64_t *ptr)
{
#if defined(__CUDACC__)
	uint64_t v;
	asm volatile("ld.relaxed.sys.global.L1::no_allocate.b64 %0, [%1];" : "=l"(v) : "l"(ptr) : "memory");
	return v;
#else
	uint64_t v = __atomic_load_n(ptr, __ATOMIC_RELAXED);
	doca_priv_gpu_dev_verbs_compiler_barrier();
	return v;
#endif
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __forceinline__ uint64_t doca_gpu_dev_verbs_load_relaxed(uint64_t *ptr)
{
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		return *ptr;
	} else {
#if defined(__CUDACC__)
		uint64_t v;
		if (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA)
			asm volatile("ld.relaxed.cta.b64 %0, [%1];" : "=l"(v) : "l"(ptr) : "memory");
		else
			asm volatile("ld.relaxed.gpu.b64 %0, [%1];" : "=l"(v) : "l"(ptr) : "memory");
		return v;
#else
		return __atomic_load_n(ptr, __ATOMIC_RELAXED);
#endif
	}
}

/* ---- Arithmetic ---------------------------------------------------------------------------------- */

__device__ static __forceinline__ uint64_t doca_gpu_dev_verbs_div_ceil_aligned_pow2(uint64_t x,
										     unsigned int denominator_shift)
{
	uint64_t q = x >> denominator_shift;
	uint64_t rem = x & ((1ULL << denominator_shift) - 1);
	return q + (rem != 0 ? 1 : 0);
}

/* The result must fit in 32 bits; exact for denominator_shift < 32 (callers pass 30). */
__device__ static __forceinline__ uint32_t doca_gpu_dev_verbs_div_ceil_aligned_pow2_32bits(uint64_t x,
											   int denominator_shift)
{
	uint32_t q = (uint32_t)(x >> denominator_shift);
	uint32_t low = (uint32_t)x;
	uint32_t low_mask = (denominator_shift >= 32) ? 0xFFFFFFFFu : ((1u << denominator_shift) - 1u);
	return q + ((low & low_mask) != 0 ? 1u : 0u);
}

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif /* DOCA_GPUNETIO_DEV_VERBS_COMMON_H */
