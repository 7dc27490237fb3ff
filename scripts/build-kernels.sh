#!/usr/bin/env bash
# Builds every examples/*/*.cu, every cuda/test/*.cu and the DOCA-family corpus
# (cuda/test/corpus/all.cu, as corpus_all) into build/kernels/<name>.fatbin.
# Usage: scripts/build-kernels.sh
# nvcc and its flags come from scripts/cuda-env.sh (override NVCC, NVCC_ARCH or
# NVCC_FLAGS in the environment).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/cuda-env.sh
. scripts/cuda-env.sh
cuda_require_nvcc build-kernels
OUT="build/kernels"
mkdir -p "$OUT"

shopt -s nullglob
srcs=(examples/*/*.cu cuda/test/*.cu cuda/test/corpus/all.cu)
if [ "${#srcs[@]}" -eq 0 ]; then
	echo "build-kernels: no kernel sources"
	exit 0
fi
# One nvcc per processor (BUILD_KERNELS_JOBS); any failure fails the build.
jobs="${BUILD_KERNELS_JOBS:-$(nproc 2>/dev/null || echo 2)}"
for src in "${srcs[@]}"; do
	printf '%s\n%s\n' "$src" "$OUT/$(basename "$(dirname "$src")")_$(basename "$src" .cu).fatbin"
done | NVCC="$NVCC" NVCC_FLAGS="$NVCC_FLAGS" xargs -d '\n' -P "$jobs" -n 2 sh -c \
	'echo "nvcc $0 -> $1"; $NVCC $NVCC_FLAGS -fatbin "$0" -o "$1"'
echo "build-kernels: ${#srcs[@]} built into $OUT"
