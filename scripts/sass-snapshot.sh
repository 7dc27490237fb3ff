#!/usr/bin/env bash
# Dumps the SASS of every kernel built from the device headers, and the host
# objects built from them, so that a header refactor can prove it changed no
# generated code:
#
#   scripts/sass-snapshot.sh DIR        writes DIR/<config>.sass (and .host.s)
#   diff -r BEFORE AFTER                empty when the code is identical
#
# The configurations: bench/postrate/post_rate.cu (default build and each
# GDAKI_DEV_CANDIDATE_*), examples/*/kernel.cu, cuda/test/*.cu (api_compile.cu
# with DOCA_GPUNETIO_VERBS_ENABLE_DEBUG 0 and 1), each for SASS_ARCHS (default
# NVCC_SMS of scripts/cuda-env.sh, the SMs every build targets); with g++, cuda/test/host_compile.cpp and internal/devhost/devhost.cpp
# at -O2 (the thread-scope API compiled for the host); and the PTX that a CUDA
# 12.8 toolkit would get for post_rate.cu and api_compile.cu (see ptx below).
# Addresses stay in the dump: identical code has identical addresses. Two
# differences are expected across a change that moves lines: with
# DOCA_GPUNETIO_VERBS_ENABLE_DEBUG=1 the assert's line number (an immediate
# before the __assertfail call), and the host objects, where g++ lays out
# always_inline code as it sees fit. SASS_JOBS builds in parallel (default:
# the number of CPUs).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="${1:?usage: scripts/sass-snapshot.sh DIR}"
mkdir -p "$DEST"
DEST="$(cd "$DEST" && pwd)"
cd "$ROOT"
# shellcheck source=scripts/cuda-env.sh
. scripts/cuda-env.sh
cuda_require_nvcc sass-snapshot
CUOBJDUMP="${CUOBJDUMP:-$(dirname "$NVCC")/cuobjdump}"
CXX="${CXX:-g++}"
ARCHS="${SASS_ARCHS:-$NVCC_SMS}"
JOBS="${SASS_JOBS:-$(nproc)}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# one NAME SRC [nvcc flags...]: SASS of SRC for every arch into DEST/NAME.smXX.sass.
one() {
	local name=$1 src=$2 arch
	shift 2
	for arch in $ARCHS; do
		# shellcheck disable=SC2086
		"$NVCC" $NVCC_STD $NVCC_INCLUDES $NVCC_DEFINES "$@" -gencode "arch=compute_$arch,code=sm_$arch" \
			-cubin "$src" -o "$TMP/$name.sm$arch.cubin"
		"$CUOBJDUMP" -sass "$TMP/$name.sm$arch.cubin" | grep -v '^[[:space:]]*Fatbin\|code for sm_\|^$' >"$DEST/$name.sm$arch.sass"
	done
}

# ptx NAME SRC VERSION [nvcc flags...]: the PTX of SRC for compute_90 as a CUDA VERSION
# toolkit would see the headers (CUDA_VERSION forced, so the st.mmio, fence.acquire/release and
# TMA paths of newer toolkits are covered by an older nvcc; the PTX is not assembled).
ptx() {
	local name=$1 src=$2 ver=$3
	shift 3
	printf '#include <cuda.h>\n#undef CUDA_VERSION\n#define CUDA_VERSION %s\n' "$ver" >"$TMP/$name.force.h"
	# shellcheck disable=SC2086
	"$NVCC" $NVCC_STD $NVCC_INCLUDES "$@" -include "$TMP/$name.force.h" \
		-arch=compute_90 -ptx "$src" -o "$TMP/$name.ptx"
	# Comments carry the toolkit version; internal names carry a hash of the build path.
	grep -v '^//' "$TMP/$name.ptx" | sed 's/_INTERNAL_[0-9a-f]*_/_INTERNAL_/g' >"$DEST/$name.ptx"
}

# host NAME SRC [g++ flags...]: the disassembly of SRC compiled for the host.
host() {
	local name=$1 src=$2
	shift 2
	"$CXX" -std=c++17 -O2 -Icuda/include "$@" -c "$src" -o "$TMP/$name.o"
	objdump -d --no-show-raw-insn "$TMP/$name.o" | sed 1,3d >"$DEST/$name.host.s"
}

jobs_=()
add() { jobs_+=("$*"); }
add one post_rate bench/postrate/post_rate.cu
for m in $(grep -oh 'GDAKI_DEV_CANDIDATE_[A-Z_]*' cuda/include/device/*.cuh | sort -u); do
	add one "post_rate.$m" bench/postrate/post_rate.cu "-D$m"
done
for k in examples/*/kernel.cu; do
	add one "$(basename "$(dirname "$k")")_kernel" "$k"
done
add one device_api_test cuda/test/device_api_test.cu
add one api_compile.dbg0 cuda/test/api_compile.cu -DGPUNETIO_INCLUDE_STYLE=2 -DDOCA_GPUNETIO_VERBS_ENABLE_DEBUG=0
add one api_compile.dbg1 cuda/test/api_compile.cu -DGPUNETIO_INCLUDE_STYLE=2 -DDOCA_GPUNETIO_VERBS_ENABLE_DEBUG=1
add ptx post_rate.cuda12.8 bench/postrate/post_rate.cu 12080
add ptx api_compile.cuda12.8 cuda/test/api_compile.cu 12080 -DGPUNETIO_INCLUDE_STYLE=2 -DDOCA_GPUNETIO_VERBS_ENABLE_DEBUG=0
add host host_compile cuda/test/host_compile.cpp -DGPUNETIO_INCLUDE_STYLE=2
add host devhost internal/devhost/devhost.cpp

fail=0
running=0
for j in "${jobs_[@]}"; do
	# shellcheck disable=SC2086
	$j &
	running=$((running + 1))
	if [ "$running" -ge "$JOBS" ]; then
		wait -n || fail=1
		running=$((running - 1))
	fi
done
while [ "$running" -gt 0 ]; do
	wait -n || fail=1
	running=$((running - 1))
done
if [ "$fail" -ne 0 ]; then
	echo "sass-snapshot: a build failed" >&2
	exit 1
fi
echo "sass-snapshot: $(find "$DEST" -type f | wc -l) files in $DEST"
