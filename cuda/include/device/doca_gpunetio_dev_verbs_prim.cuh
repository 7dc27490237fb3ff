/*
 * The primitives layer of the GPUNetIO device headers (ours; DOCA has no such file): every inline
 * PTX instruction the headers emit and every shim of the host compile is here, and nowhere else.
 * The DOCA helpers of doca_gpunetio_dev_verbs_common.cuh and the rest of the API are written in
 * terms of these functions.
 *
 * Three builds: nvcc (device pass and host pass), NVRTC (__CUDACC_RTC__: no system or toolkit
 * headers), and a host C++17 compiler (no __CUDACC__): the device qualifiers become plain inline
 * functions, atomics the GCC __atomic builtins, fences std::atomic_thread_fence wrapped in compiler
 * barriers, MMIO stores single volatile 8-byte stores, the lane id 0, the timers CLOCK_MONOTONIC,
 * and spin waits yield the core. That lets the thread-scope API run on CPU threads against host
 * memory (internal/devhost); warp-scope paths abort there.
 *
 * Every fence, MMIO store and ordered load or store carries a "memory" clobber, so the compiler
 * cannot move a plain store (a WQE byte) across it.
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_PRIM_CUH
#define DOCA_GPUNETIO_DEV_VERBS_PRIM_CUH

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
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <atomic>
#include <sched.h>
#include <time.h>
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

/* ---- Feature macros (DOCA's, with DOCA's conditions) -------------------------------------- */
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

/* The descriptor structs are packed but 8-byte aligned with naturally aligned fields. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waddress-of-packed-member"
#endif

/* ---- Compiler and scheduling ---------------------------------------------------------------- */

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

/* v is computed here, in program order: the compiler may not sink the loads it depends on below
 * the next ordered access (no instruction is emitted). */
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

/* ---- Plain, read-only and volatile accesses --------------------------------------------------- */

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

/* One access of *ptr that the compiler neither merges, splits, repeats nor omits (the headers'
 * own READ_ONCE / WRITE_ONCE, which a user may define differently). */
template <typename T>
__device__ static __forceinline__ T doca_priv_gpu_dev_verbs_read_once(const T *ptr)
{
	return *(const volatile T *)ptr;
}

template <typename T>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_write_once(T *ptr, T val)
{
	*(volatile T *)ptr = val;
}

/* A read of a word other threads write: a volatile load on the GPU, a relaxed atomic load on the
 * host (where the compiler would otherwise see a data race). */
template <typename T>
__device__ static __forceinline__ T doca_priv_gpu_dev_verbs_read_shared(T *ptr)
{
#if defined(__CUDACC__)
	return doca_priv_gpu_dev_verbs_read_once(ptr);
#else
	return __atomic_load_n(ptr, __ATOMIC_RELAXED);
#endif
}

/* ---- Clocks, lane id, byte permutation ------------------------------------------------------ */

/* The clock that poll bounds count: %clock64 (SM clock cycles) on the GPU, CLOCK_MONOTONIC
 * nanoseconds in a host compile. Only differences of two reads are meaningful. */
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

/* %globaltimer (nanoseconds); CLOCK_MONOTONIC in a host compile. */
__device__ static __forceinline__ uint64_t doca_priv_gpu_dev_verbs_globaltimer()
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

__device__ static __forceinline__ unsigned int doca_priv_gpu_dev_verbs_laneid()
{
#if defined(__CUDACC__)
	unsigned int lane;
	asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
	return lane;
#else
	return 0;
#endif
}

__device__ static __forceinline__ uint32_t doca_priv_gpu_dev_verbs_bswap32(uint32_t x)
{
#if defined(__CUDACC__)
	return __byte_perm(x, 0, 0x0123);
#else
	return __builtin_bswap32(x);
#endif
}

/* ---- Stores that the NIC or the host observes ----------------------------------------------- */

#ifdef DOCA_GPUNETIO_VERBS_HAS_STORE_RELAXED_MMIO
/* One relaxed system-scope MMIO store of 8 bytes: never merged, split or repeated. */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_st_mmio64(uint64_t *ptr, uint64_t val)
{
	asm volatile("st.mmio.relaxed.sys.global.b64 [%0], %1;" ::"l"(ptr), "l"(val) : "memory");
}
#endif

/* An 8-byte store to a NIC register (doorbell, BlueFlame window). MMIO store where the toolkit has
 * it, else a relaxed system-scope store; on the host a single volatile 8-byte store between
 * compiler barriers, then the store hook. */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_store_db64(uint64_t *ptr, uint64_t val)
{
#if defined(DOCA_GPUNETIO_VERBS_HAS_STORE_RELAXED_MMIO)
	doca_priv_gpu_dev_verbs_st_mmio64(ptr, val);
#elif defined(__CUDACC__)
	asm volatile("st.relaxed.sys.global.b64 [%0], %1;" ::"l"(ptr), "l"(val) : "memory");
#else
	doca_priv_gpu_dev_verbs_compiler_barrier();
	*(volatile uint64_t *)ptr = val;
	doca_priv_gpu_dev_verbs_compiler_barrier();
	DOCA_PRIV_GPU_DEV_VERBS_HOST_HOOK(ptr, val, 8);
#endif
}

/* Relaxed system-scope 32-bit store (doorbell records). */
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

/* Relaxed system-scope 64-bit store (proxy mailbox). */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_store_relaxed_sys64(uint64_t *ptr, uint64_t val)
{
#if defined(__CUDACC__)
	asm volatile("st.relaxed.sys.global.b64 [%0], %1;" ::"l"(ptr), "l"(val) : "memory");
#else
	__atomic_store_n(ptr, val, __ATOMIC_RELAXED);
	doca_priv_gpu_dev_verbs_compiler_barrier();
#endif
}

/* 32-bit system-scope release store (publishes a record the host or other SMs read). */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_store_release_sys32(uint32_t *ptr, uint32_t val)
{
#if defined(__CUDACC__)
	asm volatile("st.release.sys.global.b32 [%0], %1;" ::"l"(ptr), "r"(val) : "memory");
#else
	__atomic_store_n(ptr, val, __ATOMIC_RELEASE);
#endif
}

/* 32-bit GPU-scope release store that does not allocate in L1 (the CQ doorbell record). */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_store_release_gpu32_na(uint32_t *ptr, uint32_t val)
{
#if defined(__CUDACC__)
	asm volatile("st.release.gpu.global.L1::no_allocate.b32 [%0], %1;" ::"l"(ptr), "r"(val) : "memory");
#else
	__atomic_store_n(ptr, val, __ATOMIC_RELEASE);
#endif
}

/* Fetch-max at system scope with no result (the proxy mailbox of a shared QP). */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_red_max_sys64(uint64_t *ptr, uint64_t val)
{
#if defined(__CUDACC__)
	asm volatile("red.relaxed.sys.global.max.u64 [%0], %1;" ::"l"(ptr), "l"((unsigned long long)val) : "memory");
#else
	uint64_t old = __atomic_load_n(ptr, __ATOMIC_RELAXED);
	while (old < val && !__atomic_compare_exchange_n(ptr, &old, val, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
#endif
}

#ifdef DOCA_GPUNETIO_VERBS_HAS_ASYNC_STORE_RELEASE
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_st_async_release32(uint32_t *ptr, uint32_t val)
{
	asm volatile("st.async.release.sys.global.b32 [%0], %1;" ::"l"(ptr), "r"(val) : "memory");
}

__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_st_async_mmio_release64(uint64_t *ptr, uint64_t val)
{
	asm volatile("st.async.mmio.release.sys.global.b64 [%0], %1;" ::"l"(ptr), "l"(val) : "memory");
}
#endif

/* ---- WQE stores and the BlueFlame bulk copy ------------------------------------------------- */

/* 16 bytes (val[0], val[1]) with one weak, cache-streaming vector store; ptr 16-byte aligned. */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_st_cs_v2(uint64_t *ptr, uint64_t v0, uint64_t v1)
{
#if defined(__CUDACC__)
	asm volatile("st.weak.cs.v2.b64 [%0], {%1, %2};" ::"l"(ptr), "l"(v0), "l"(v1) : "memory");
#else
	ptr[0] = v0;
	ptr[1] = v1;
#endif
}

#if defined(DOCA_GPUNETIO_VERBS_PRIV_TMA_PTX)
/* 64 bytes from shared memory to global (the BlueFlame window) with the bulk copy engine, then a
 * wait until the source was read, so the caller may reuse it. */
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_tma_copy64(uint64_t *dst, const void *smem_src)
{
	const uint32_t src = (uint32_t)__cvta_generic_to_shared(smem_src);
	asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 64;" ::"l"(dst), "r"(src) : "memory");
	asm volatile("cp.async.bulk.commit_group;" ::: "memory");
	asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
#endif

/* ---- Scoped instructions ---------------------------------------------------------------------- */

/* An instruction whose CTA and GPU forms differ only in the scope: pre and post are its text before
 * and after the scope, the rest its asm operands (starting with the colon). A macro: an asm
 * statement takes its text as one string literal, which a template cannot assemble. */
#define DOCA_PRIV_GPU_DEV_VERBS_ASM_CTA_GPU(cta, pre, post, ...)   \
	do {                                                       \
		if (cta)                                           \
			asm volatile(pre ".cta" post __VA_ARGS__); \
		else                                               \
			asm volatile(pre ".gpu" post __VA_ARGS__); \
	} while (0)

/* A fence instruction (text op, e.g. "fence.acq_rel") at sync_scope SYS, GPU or CTA; none at
 * THREAD scope. */
#define DOCA_PRIV_GPU_DEV_VERBS_FENCE_AT(sync_scope, op)                     \
	do {                                                                 \
		if ((sync_scope) == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS)      \
			asm volatile(op ".sys;" ::: "memory");               \
		else if ((sync_scope) == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU) \
			asm volatile(op ".gpu;" ::: "memory");               \
		else if ((sync_scope) == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA) \
			asm volatile(op ".cta;" ::: "memory");               \
	} while (0)

/* ---- Fences ------------------------------------------------------------------------------------ */

/* Memory orders of the fence primitive. */
enum doca_priv_gpu_dev_verbs_order {
	DOCA_PRIV_GPU_DEV_VERBS_ACQUIRE,
	DOCA_PRIV_GPU_DEV_VERBS_RELEASE,
	DOCA_PRIV_GPU_DEV_VERBS_ACQ_REL,
};

/* A fence of the given order at the given scope; THREAD scope is no fence. Acquire and release
 * fences are fence.acquire / fence.release where PTX has them (CUDA 12.8, sm_90), else
 * fence.acq_rel. Host: std::atomic_thread_fence between compiler barriers. */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope, enum doca_priv_gpu_dev_verbs_order order>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_fence()
{
#if defined(__CUDACC__)
#if defined(DOCA_GPUNETIO_VERBS_HAS_FENCE_ACQUIRE_RELEASE_PTX)
	constexpr bool one_way = order != DOCA_PRIV_GPU_DEV_VERBS_ACQ_REL;
#else
	constexpr bool one_way = false;
#endif
	if constexpr (one_way && order == DOCA_PRIV_GPU_DEV_VERBS_ACQUIRE)
		DOCA_PRIV_GPU_DEV_VERBS_FENCE_AT(sync_scope, "fence.acquire");
	else if constexpr (one_way && order == DOCA_PRIV_GPU_DEV_VERBS_RELEASE)
		DOCA_PRIV_GPU_DEV_VERBS_FENCE_AT(sync_scope, "fence.release");
	else
		DOCA_PRIV_GPU_DEV_VERBS_FENCE_AT(sync_scope, "fence.acq_rel");
#else
	if (sync_scope != DOCA_GPUNETIO_VERBS_SYNC_SCOPE_THREAD) {
		doca_priv_gpu_dev_verbs_compiler_barrier();
		std::atomic_thread_fence(order == DOCA_PRIV_GPU_DEV_VERBS_ACQUIRE   ? std::memory_order_acquire
					 : order == DOCA_PRIV_GPU_DEV_VERBS_RELEASE ? std::memory_order_release
										    : std::memory_order_acq_rel);
		doca_priv_gpu_dev_verbs_compiler_barrier();
	}
#endif
}

/* ---- Atomics, ordered loads and stores at a scope --------------------------------------------- */

/* 64-bit compare-and-swap, block scope for CTA sharing, device scope otherwise; returns the old value. */
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

/* 32-bit compare-and-swap at the scope of the sharing mode; returns the old value. */
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

/* Compare-and-swap with acquire semantics at CTA or GPU scope (4 or 8 bytes); returns the old
 * value. */
template <bool cta, typename T>
__device__ static __forceinline__ T doca_priv_gpu_dev_verbs_cas_acquire(T *ptr, T cmp, T val)
{
	static_assert(sizeof(T) == 4 || sizeof(T) == 8, "cas_acquire takes a 4- or 8-byte word");
#if defined(__CUDACC__)
	if constexpr (sizeof(T) == 8) {
		unsigned long long old;
		DOCA_PRIV_GPU_DEV_VERBS_ASM_CTA_GPU(cta, "atom.acquire", ".global.cas.b64 %0, [%1], %2, %3;", : "=l"(old)
						    : "l"(ptr), "l"((unsigned long long)cmp), "l"((unsigned long long)val)
						    : "memory");
		return (T)old;
	} else {
		unsigned int old;
		DOCA_PRIV_GPU_DEV_VERBS_ASM_CTA_GPU(cta, "atom.acquire", ".global.cas.b32 %0, [%1], %2, %3;", : "=r"(old)
						    : "l"(ptr), "r"((unsigned int)cmp), "r"((unsigned int)val)
						    : "memory");
		return (T)old;
	}
#else
	(void)cta;
	__atomic_compare_exchange_n(ptr, &cmp, val, false, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE);
	return cmp;
#endif
}

/* 64-bit fetch-max at CTA or GPU scope, relaxed or acquire; returns the old value. */
template <bool cta, bool acquire>
__device__ static __forceinline__ uint64_t doca_priv_gpu_dev_verbs_atom_max64(uint64_t *ptr, uint64_t val)
{
#if defined(__CUDACC__)
	unsigned long long old;
	if (acquire)
		DOCA_PRIV_GPU_DEV_VERBS_ASM_CTA_GPU(cta, "atom.acquire", ".global.max.u64 %0, [%1], %2;", : "=l"(old)
						    : "l"(ptr), "l"((unsigned long long)val)
						    : "memory");
	else
		DOCA_PRIV_GPU_DEV_VERBS_ASM_CTA_GPU(cta, "atom.relaxed", ".global.max.u64 %0, [%1], %2;", : "=l"(old)
						    : "l"(ptr), "l"((unsigned long long)val)
						    : "memory");
	return (uint64_t)old;
#else
	uint64_t old = __atomic_load_n(ptr, __ATOMIC_RELAXED);
	while (old < val &&
	       !__atomic_compare_exchange_n(ptr, &old, val, true, acquire ? __ATOMIC_ACQ_REL : __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
	if (acquire)
		std::atomic_thread_fence(std::memory_order_acquire);
	return old;
#endif
}

/* Relaxed fetch-add at CTA or GPU scope for 4- and 8-byte integers and floats. */
template <bool cta, typename T>
__device__ static __forceinline__ T doca_priv_gpu_dev_verbs_atom_add(T *ptr, T val)
{
	static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomic_add is defined for 4- and 8-byte types");
#if defined(__CUDACC__)
	if constexpr ((T)0.5 != (T)0) { /* floating point */
		if constexpr (sizeof(T) == 8) {
			double old;
			DOCA_PRIV_GPU_DEV_VERBS_ASM_CTA_GPU(cta, "atom.relaxed", ".global.add.f64 %0, [%1], %2;", : "=d"(old)
							    : "l"(ptr), "d"((double)val)
							    : "memory");
			return (T)old;
		} else {
			float old;
			DOCA_PRIV_GPU_DEV_VERBS_ASM_CTA_GPU(cta, "atom.relaxed", ".global.add.f32 %0, [%1], %2;", : "=f"(old)
							    : "l"(ptr), "f"((float)val)
							    : "memory");
			return (T)old;
		}
	} else if constexpr (sizeof(T) == 8) {
		unsigned long long old;
		DOCA_PRIV_GPU_DEV_VERBS_ASM_CTA_GPU(cta, "atom.relaxed", ".global.add.u64 %0, [%1], %2;", : "=l"(old)
						    : "l"(ptr), "l"((unsigned long long)val)
						    : "memory");
		return (T)old;
	} else {
		unsigned int old;
		DOCA_PRIV_GPU_DEV_VERBS_ASM_CTA_GPU(cta, "atom.relaxed", ".global.add.u32 %0, [%1], %2;", : "=r"(old)
						    : "l"(ptr), "r"((unsigned int)val)
						    : "memory");
		return (T)old;
	}
#else
	(void)cta;
	return __atomic_fetch_add(ptr, val, __ATOMIC_RELAXED);
#endif
}

/* Relaxed 64-bit load at CTA or GPU scope (sharing-mode counters). */
template <bool cta>
__device__ static __forceinline__ uint64_t doca_priv_gpu_dev_verbs_ld_relaxed64(uint64_t *ptr)
{
#if defined(__CUDACC__)
	uint64_t v;
	DOCA_PRIV_GPU_DEV_VERBS_ASM_CTA_GPU(cta, "ld.relaxed", ".b64 %0, [%1];", : "=l"(v) : "l"(ptr) : "memory");
	return v;
#else
	return __atomic_load_n(ptr, __ATOMIC_RELAXED);
#endif
}

/* Relaxed 64-bit store at CTA or GPU scope (the ready index). */
template <bool cta>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_st_relaxed64(uint64_t *ptr, uint64_t val)
{
#if defined(__CUDACC__)
	DOCA_PRIV_GPU_DEV_VERBS_ASM_CTA_GPU(cta, "st.relaxed", ".b64 [%0], %1;", ::"l"(ptr), "l"(val) : "memory");
#else
	__atomic_store_n(ptr, val, __ATOMIC_RELAXED);
#endif
}

/* 32-bit release store at CTA or GPU scope (unlock). */
template <bool cta>
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_st_release32(int *ptr, int val)
{
#if defined(__CUDACC__)
	DOCA_PRIV_GPU_DEV_VERBS_ASM_CTA_GPU(cta, "st.release", ".global.b32 [%0], %1;", ::"l"(ptr), "r"(val) : "memory");
#else
	__atomic_store_n(ptr, val, __ATOMIC_RELEASE);
#endif
}

/* System-scope relaxed load of 1, 4 or 8 bytes that bypasses L1 (what the NIC writes: CQEs). */
template <typename T>
__device__ static __forceinline__ T doca_priv_gpu_dev_verbs_ld_sys(T *ptr)
{
	static_assert(sizeof(T) == 1 || sizeof(T) == 4 || sizeof(T) == 8, "ld_sys loads 1, 4 or 8 bytes");
#if defined(__CUDACC__)
	if constexpr (sizeof(T) == 1) {
		uint16_t v;
		asm volatile("ld.relaxed.sys.global.L1::no_allocate.b8 %0, [%1];" : "=h"(v) : "l"(ptr) : "memory");
		return (T)v;
	} else if constexpr (sizeof(T) == 4) {
		uint32_t v;
		asm volatile("ld.relaxed.sys.global.L1::no_allocate.b32 %0, [%1];" : "=r"(v) : "l"(ptr) : "memory");
		return (T)v;
	} else {
		uint64_t v;
		asm volatile("ld.relaxed.sys.global.L1::no_allocate.b64 %0, [%1];" : "=l"(v) : "l"(ptr) : "memory");
		return (T)v;
	}
#else
	T v = __atomic_load_n(ptr, __ATOMIC_RELAXED);
	doca_priv_gpu_dev_verbs_compiler_barrier();
	return v;
#endif
}

/* ---- Warps ------------------------------------------------------------------------------------ */

/* Warp intrinsics of the warp-scope paths; a host compile has no warps, so they abort there
 * (before anything is reserved). */
#if defined(__CUDACC__)
#define DOCA_PRIV_GPU_DEV_VERBS_WARP_ONLY() \
	do {                                \
	} while (0)
#define DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP() __syncwarp()
#define DOCA_PRIV_GPU_DEV_VERBS_SHFL0(v) __shfl_sync(DOCA_GPUNETIO_VERBS_WARP_FULL_MASK, (v), 0)
#else
__device__ static __forceinline__ void doca_priv_gpu_dev_verbs_warp_unsupported()
{
	fprintf(stderr, "gpunetio: warp-scope operations are GPU-only (host-compiled headers)\n");
	abort();
}
#define DOCA_PRIV_GPU_DEV_VERBS_WARP_ONLY() doca_priv_gpu_dev_verbs_warp_unsupported()
#define DOCA_PRIV_GPU_DEV_VERBS_SYNCWARP() doca_priv_gpu_dev_verbs_warp_unsupported()
#define DOCA_PRIV_GPU_DEV_VERBS_SHFL0(v) (v)
#endif

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif /* DOCA_GPUNETIO_DEV_VERBS_PRIM_CUH */
