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
n=0
for src in "${srcs[@]}"; do
	name="$(basename "$(dirname "$src")")_$(basename "$src" .cu)"
	out="$OUT/$name.fatbin"
	echo "nvcc $src -> $out"
	# shellcheck disable=SC2086
	"$NVCC" $NVCC_FLAGS -fatbin "$src" -o "$out"
	n=$((n + 1))
done
echo "build-kernels: $n built into $OUT"
