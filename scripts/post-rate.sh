#!/usr/bin/env bash
# Builds and runs the posting-rate benchmark (bench/postrate/post_rate.cu) on the local GPU.
# Usage: scripts/post-rate.sh [post_rate args...]   (NVCC, ARCH may be set in the environment)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
OUT="$ROOT/build/bench"
mkdir -p "$OUT"
flags=(-O3 -std=c++17 -Werror all-warnings -Xcompiler -Wall -I"$ROOT/cuda/include")
ver="$("$NVCC" --version | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')"
read -r vmaj vmin <<<"$ver"
if [ "${vmaj:-0}" -lt 12 ] || { [ "${vmaj:-0}" -eq 12 ] && [ "${vmin:-0}" -lt 2 ]; }; then
	flags+=(-DDOCA_GPUNETIO_VERBS_NO_MMIO_WARNING)
fi
ARCH="${ARCH:-sm_90a}"
if ! "$NVCC" "${flags[@]}" -arch="$ARCH" "$ROOT/bench/postrate/post_rate.cu" -o "$OUT/post_rate" 2>"$OUT/build.log"; then
	if [ "$ARCH" = sm_90a ]; then
		echo "note: -arch=sm_90a not accepted, using sm_90" >&2
		"$NVCC" "${flags[@]}" -arch=sm_90 "$ROOT/bench/postrate/post_rate.cu" -o "$OUT/post_rate"
	else
		cat "$OUT/build.log" >&2
		exit 1
	fi
fi
exec "$OUT/post_rate" "$@"
