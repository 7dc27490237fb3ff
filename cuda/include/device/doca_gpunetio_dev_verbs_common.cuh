/*
 * GPUNetIO verbs device helpers: feature macros, timer, lane id, byte swaps, MMIO stores, fences,
 * relaxed loads, atomics, locks and copies, with DOCA's names and signatures. Every instruction
 * they emit comes from the primitives layer (doca_gpunetio_dev_verbs_prim.cuh), which also holds
 * the host-compile shims and the feature macros.
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_COMMON_H
#define DOCA_GPUNETIO_DEV_VERBS_COMMON_H

#include "../common/doca_gpunetio_verbs_dev.h"
#include "doca_gpunetio_dev_verbs_prim.cuh"

/* The descriptor structs are packed but 8-byte aligned with naturally aligned fields. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waddress-of-packed-member"
#endif

/* ---- Timer, lane id, byte swaps --------------------------------------------------------------- */

__device__ static __forceinline__ uint64_t doca_gpu_dev_verbs_query_globaltimer()
{
	return doca_priv_gpu_dev_verbs_globaltimer();
}

__device__ static __forceinline__ unsigned int doca_gpu_dev_verbs_get_lane_id()
{
	return doca_priv_gpu_dev_verbs_laneid();
}

__device__ static __forceinline__ uint32_t doca_gpu_dev_verbs_bswap32(uint32_t x)
{
	return doca_priv_gpu_dev_verbs_bswap32(x);
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
	doca_priv_gpu_dev_verbs_st_mmio64(ptr, val);
}
#endif

template <enum doca_gpu_dev_verbs_sync_scope sync_scope>
__device__ static __forceinline__ void doca_gpu_dev_verbs_fence_acquire()
{
	doca_priv_gpu_dev_verbs_fence<sync_scope, DOCA_PRIV_GPU_DEV_VERBS_ACQUIRE>();
}

template <enum doca_gpu_dev_verbs_sync_scope sync_scope>
__device__ static __forceinline__ void doca_gpu_dev_verbs_fence_release()
{
	doca_priv_gpu_dev_verbs_fence<sync_scope, DOCA_PRIV_GPU_DEV_VERBS_RELEASE>();
}

#ifdef DOCA_GPUNETIO_VERBS_HAS_ASYNC_STORE_RELEASE
__device__ static __forceinline__ void doca_gpu_dev_verbs_async_store_release(uint32_t *ptr, uint32_t val)
{
	doca_priv_gpu_dev_verbs_st_async_release32(ptr, val);
}

__device__ static __forceinline__ void doca_gpu_dev_verbs_async_store_release(uint64_t *ptr, uint64_t val)
{
	doca_priv_gpu_dev_verbs_st_async_mmio_release64(ptr, val);
}

/* SDK form: the scope as a template parameter. The store is always a system-scope release (the
 * NIC observes it), which also orders at GPU scope. */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope>
__device__ static __forceinline__ void doca_gpu_dev_verbs_async_store_release(uint32_t *ptr, uint32_t val)
{
	doca_priv_gpu_dev_verbs_st_async_release32(ptr, val);
}

template <enum doca_gpu_dev_verbs_sync_scope sync_scope>
__device__ static __forceinline__ void doca_gpu_dev_verbs_async_store_release(uint64_t *ptr, uint64_t val)
{
	doca_priv_gpu_dev_verbs_st_async_mmio_release64(ptr, val);
}
#endif

/* ---- Alignment and copies ------------------------------------------------------------------- */

__device__ static __forceinline__ bool doca_gpu_dev_verbs_isaligned(void *ptr, size_t alignment)
{
	return ((uintptr_t)ptr & (alignment - 1)) == 0;
}

/* The SDK's name of the same test. */
__device__ static __forceinline__ bool doca_gpu_dev_isaligned(void *ptr, size_t alignment)
{
	return doca_gpu_dev_verbs_isaligned(ptr, alignment);
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

/* A real copy of bytes (a multiple of sizeof(T)) in sizeof(T) units (DOCA's copies nothing). */
template <typename T>
__device__ static __forceinline__ void doca_gpu_dev_verbs_memcpy_inl_aligned_data(T *dst, T *src, size_t bytes)
{
	size_t n = bytes / sizeof(T);
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i];
}

/* ---- Atomics, locks, relaxed loads --------------------------------------------------------- */

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
		return (T)doca_priv_gpu_dev_verbs_atom_max64<resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA,
							     need_fence_acquire>((uint64_t *)ptr, (uint64_t)val);
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
		return doca_priv_gpu_dev_verbs_atom_add<resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA>(ptr,
															   val);
	}
}

template <typename T, enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __forceinline__ T doca_gpu_dev_verbs_atomic_read(T *ptr)
{
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		return *ptr;
	} else {
		return doca_priv_gpu_dev_verbs_read_shared(ptr);
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
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE)
		*lock = 0;
	else
		doca_priv_gpu_dev_verbs_st_release32<resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA>(lock,
															      0);
}

__device__ static __forceinline__ uint8_t doca_gpu_dev_verbs_load_relaxed_sys_global(uint8_t *ptr)
{
	return doca_priv_gpu_dev_verbs_ld_sys(ptr);
}

__device__ static __forceinline__ uint32_t doca_gpu_dev_verbs_load_relaxed_sys_global(uint32_t *ptr)
{
	return doca_priv_gpu_dev_verbs_ld_sys(ptr);
}

__device__ static __forceinline__ uint64_t doca_gpu_dev_verbs_load_relaxed_sys_global(uint64_t *ptr)
{
	return doca_priv_gpu_dev_verbs_ld_sys(ptr);
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static __forceinline__ uint64_t doca_gpu_dev_verbs_load_relaxed(uint64_t *ptr)
{
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE)
		return *ptr;
	else
		return doca_priv_gpu_dev_verbs_ld_relaxed64<resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA>(ptr);
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
