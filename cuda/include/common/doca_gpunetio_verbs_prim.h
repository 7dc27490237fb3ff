/*
 * What the GPUNetIO headers take from the platform: fixed-width integers, the big-endian integer
 * types, INT_MAX, the errno values the polls return, printf, memcpy and memset.
 *
 * With nvcc and with a host compiler they come from the system headers, exactly as the DOCA
 * headers include them (kernels that rely on those transitive includes keep working). NVRTC
 * (__CUDACC_RTC__) has no system headers and no include path unless the caller passes one, so
 * there this file declares them itself:
 *
 *   - uint8_t ... uint64_t, int8_t ... int64_t, uintptr_t, intptr_t with the LP64 types glibc
 *     uses, so that a kernel sees the same types (and overloads) under NVRTC as under nvcc.
 *     A program that already declares these names with other types (for example with a
 *     long long based stdint replacement) defines DOCA_GPUNETIO_VERBS_RTC_HAVE_STDINT first;
 *   - __be16, __be32, __be64 (<linux/types.h>);
 *   - INT_MAX, EIO, EBUSY and ETIMEDOUT when not yet defined, spelled as glibc spells them, so that a
 *     later identical definition is not a redefinition;
 *   - printf, memcpy and memset are NVRTC built-ins and need no declaration.
 *
 * Valid C11 and C++ (the Go host code includes it through cgo); not part of the DOCA header set.
 */
#ifndef DOCA_GPUNETIO_VERBS_PRIM_H
#define DOCA_GPUNETIO_VERBS_PRIM_H

#if defined(__CUDACC_RTC__)

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "the GPUNetIO device headers need C++17: pass -std=c++17 to NVRTC (its default dialect is older)"
#endif

#if !defined(DOCA_GPUNETIO_VERBS_RTC_HAVE_STDINT)
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
#endif

typedef uint16_t __be16;
typedef uint32_t __be32;
typedef uint64_t __be64;

#ifndef INT_MAX
#define INT_MAX 2147483647
#endif
#ifndef EIO
#define EIO 5
#endif
#ifndef EBUSY
#define EBUSY 16
#endif
#ifndef ETIMEDOUT
#define ETIMEDOUT 110
#endif

static_assert(sizeof(uint64_t) == 8 && sizeof(uintptr_t) == sizeof(void *) && sizeof(uint16_t) == 2,
	      "NVRTC fixed-width types: an LP64 target is required");

#else /* nvcc and host compilers: the system headers, as the DOCA headers include them */

#include <stdio.h>
#include <stdint.h>
#include <limits.h>
#include <linux/types.h>
#if !defined(__cplusplus)
#include <stdbool.h> /* bool fields of the device structs (need_mcst) in C */
#endif

#endif /* __CUDACC_RTC__ */

/*
 * DOCA_GPUNETIO_PRIV_OFFSETOF(type, member): the offset of member in type.
 * DOCA_GPUNETIO_PRIV_CONST_OFFSETOF is 1 where that is a constant expression (usable in a
 * static_assert), 0 where it is only an ordinary expression the optimiser folds.
 * nvcc and host compilers have __builtin_offsetof. NVRTC has no <stddef.h>; NVRTC 11 lacks
 * __builtin_offsetof but folds the classic null-pointer form to a constant, and newer NVRTCs
 * refuse that form in constant expressions. Under an NVRTC that offers neither, the offset
 * checks below are skipped (the sizes are still checked, and nvcc, g++ and the cgo compiler
 * check every offset).
 */
#if !defined(__CUDACC_RTC__)
#define DOCA_GPUNETIO_PRIV_OFFSETOF(type, member) __builtin_offsetof(type, member)
#define DOCA_GPUNETIO_PRIV_CONST_OFFSETOF 1
#elif defined(__has_builtin) && __has_builtin(__builtin_offsetof)
#define DOCA_GPUNETIO_PRIV_OFFSETOF(type, member) __builtin_offsetof(type, member)
#define DOCA_GPUNETIO_PRIV_CONST_OFFSETOF 1
#else
#define DOCA_GPUNETIO_PRIV_OFFSETOF(type, member) ((size_t)&(((type *)0)->member))
#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ < 12
#define DOCA_GPUNETIO_PRIV_CONST_OFFSETOF 1
#else
#define DOCA_GPUNETIO_PRIV_CONST_OFFSETOF 0
#endif
#endif

/* DOCA_GPUNETIO_PRIV_STATIC_ASSERT(cond, msg): C11 _Static_assert or C++11 static_assert.
 * DOCA_GPUNETIO_PRIV_HAVE_STATIC_ASSERT is 0 for older dialects, which skip the checks. */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define DOCA_GPUNETIO_PRIV_HAVE_STATIC_ASSERT 1
#define DOCA_GPUNETIO_PRIV_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define DOCA_GPUNETIO_PRIV_HAVE_STATIC_ASSERT 1
#define DOCA_GPUNETIO_PRIV_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#else
#define DOCA_GPUNETIO_PRIV_HAVE_STATIC_ASSERT 0
#endif

/* DOCA_GPUNETIO_PRIV_ALIGNOF(type) for the same static_asserts. */
#if defined(__cplusplus)
#define DOCA_GPUNETIO_PRIV_ALIGNOF(type) alignof(type)
#else
#define DOCA_GPUNETIO_PRIV_ALIGNOF(type) _Alignof(type)
#endif

#endif /* DOCA_GPUNETIO_VERBS_PRIM_H */
