#!/usr/bin/env bash
# Builds every examples/*/*.cu and every cuda/test/*.cu into build/kernels/<name>.fatbin.
# Usage: scripts/build-kernels.sh NVCC "NVCC_FLAGS"
# The four include directories of the reference examples are added (-Icuda/include{,/host,/common,/device}).
set -euo pipefail
NVCC="${1:-nvcc}"
FLAGS="${2:--O3 -std=c++17 -Werror all-warnings -Icuda/include}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
OUT="build/kernels"
mkdir -p "$OUT"

extra=(-Icuda/include -Icuda/include/host -Icuda/include/common -Icuda/include/device)
ver="$("$NVCC" --version | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')"
read -r vmaj vmin <<<"$ver"
if [ "${vmaj:-0}" -lt 12 ] || { [ "${vmaj:-0}" -eq 12 ] && [ "${vmin:-0}" -lt 2 ]; }; then
	# No st.mmio before CUDA 12.2: the header's #warning would be fatal under -Werror.
	extra+=(-DDOCA_GPUNETIO_VERBS_NO_MMIO_WARNING)
fi
if [ ! -e /usr/include/infiniband/mlx5dv.h ]; then
	extra+=(-DGPUNETIO_NO_MLX5DV)
fi

shopt -s nullglob
srcs=(examples/*/*.cu cuda/test/*.cu)
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
	"$NVCC" $FLAGS "${extra[@]}" -fatbin "$src" -o "$out"
	n=$((n + 1))
done
echo "build-kernels: $n built into $OUT"
