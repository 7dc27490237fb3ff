#!/usr/bin/env bash
# Builds and runs the posting-rate benchmark (bench/postrate/post_rate.cu) on the local GPU.
# Usage: scripts/post-rate.sh [post_rate args...]   (NVCC, ARCH may be set in the environment;
#        nvcc and the shared flags come from scripts/cuda-env.sh)
#        scripts/post-rate.sh --candidates [post_rate args...]
# Every row prints its absolute Mops/s; the rows with a target (a posting rate to reach: 0.95x of
# DOCA GPUNetIO 2.0.1's headers on an H100 for that variant and geometry, 1.5x for the shared-QP
# warp put; see post_rate.cu) add it and ok/MISS, and a TARGET line each closes every geometry's
# table. --probe adds the doorbell cost breakdown. The two-sided rows (send.*, recv.*: SEND and
# receive posting, thread and warp scope, on a shared QP and on a QP per thread or warp) print
# their absolute Mops/s beside put's; --only send.warp.gpu,recv.warp.gpu,put.warp.gpu picks them.
#
# --candidates builds one binary per build-time candidate of the submit core (see
# doca_gpunetio_dev_verbs_qp.cuh, GDAKI_DEV_CANDIDATE_*) in parallel and runs the variants that
# have targets, each build in turn, at the three target geometries, then prints every TARGET line
# side by side. Under 3 minutes on an H100.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/cuda-env.sh
. scripts/cuda-env.sh
cuda_require_nvcc post-rate
OUT="$ROOT/build/bench"
mkdir -p "$OUT"
# The shared dialect, includes and defines; not NVCC_SMS: the architecture is this benchmark's own
# choice (ARCH, default sm_90a). It measures posting on the Hopper GPU it runs on, so it builds
# real code for that GPU alone, with sm_90a's arch-specific features (sm_90 where nvcc refuses it).
# shellcheck disable=SC2206
flags=($NVCC_STD -Xcompiler -Wall $NVCC_INCLUDES $NVCC_DEFINES)
ARCH="${ARCH:-sm_90a}"

# build NAME [-Dmacro...]: compiles post_rate into $OUT/NAME, falling back from sm_90a to sm_90.
build() {
	local name=$1
	shift
	if ! "$NVCC" "${flags[@]}" "$@" -arch="$ARCH" "$ROOT/bench/postrate/post_rate.cu" -o "$OUT/$name" 2>"$OUT/$name.build.log"; then
		if [ "$ARCH" = sm_90a ] && "$NVCC" "${flags[@]}" "$@" -arch=sm_90 "$ROOT/bench/postrate/post_rate.cu" -o "$OUT/$name" 2>"$OUT/$name.build.log"; then
			echo "note: $name: -arch=sm_90a not accepted, built for sm_90" >&2
		else
			cat "$OUT/$name.build.log" >&2
			return 1
		fi
	fi
}

if [ "${1:-}" != --candidates ]; then
	build post_rate
	exec "$OUT/post_rate" "$@"
fi
shift

# name and macros of each candidate; "baseline" is the default build.
candidates=(
	"baseline:"
	"excl_fence_after_compare:-DGDAKI_DEV_CANDIDATE_EXCL_FENCE_AFTER_COMPARE"
	"shared_acquire_cas:-DGDAKI_DEV_CANDIDATE_SHARED_ACQUIRE_CAS"
)
pids=()
for c in "${candidates[@]}"; do
	name=${c%%:*}
	macros=${c#*:}
	# shellcheck disable=SC2086
	build "post_rate_$name" $macros &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p"
done
only="put.warp.gpu,ll.block,ll.thread.b32"
for c in "${candidates[@]}"; do
	name=${c%%:*}
	echo "=== candidate $name (${c#*:})"
	"$OUT/post_rate_$name" --label "$name" --only "$only" --geom 1x32 --geom 1x256 --geom 132x256 "$@" | tee "$OUT/candidate_$name.log"
done
echo
echo "=== summary: TARGET lines per candidate"
for c in "${candidates[@]}"; do
	name=${c%%:*}
	grep '^TARGET' "$OUT/candidate_$name.log" | sed "s/^/$(printf '%-26s' "$name") /"
done
