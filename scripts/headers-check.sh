#!/usr/bin/env bash
# Compile checks for the GPUNetIO device headers (no GPU needed).
#   nvcc: cuda/test/api_compile.cu (every API signature plus example usage) in
#         the three include styles, for each SM of NVCC_SMS (scripts/cuda-env.sh: 80 and 90), with
#         DOCA_GPUNETIO_VERBS_ENABLE_DEBUG 0 and 1,
#         -Werror all-warnings.
#   g++ : cuda/test/host_compile.cpp (thread-scope API through the host portability layer) in the
#         three include styles, -std=c++17 -Wall -Wextra -Werror; both .h files as C11 with gcc,
#         with and without <infiniband/mlx5dv.h> (GDAKI_DOCA_NO_MLX5DV).
#   corpus: cuda/test/corpus/*.cu, kernels in each DOCA family's style (SDK 3.2, 3.3, 3.4, the
#         open-source headers, NCCL's copy): each file in its own include style, for each SM,
#         with and without GDAKI_DOCA_FAMILY_SDK; all of them in one unit in every include style;
#         g++ for all of them; refuse_*.cu must fail with a message naming what is refused.
# Usage: scripts/headers-check.sh [NVCC]   (exit status non-zero on any failure)
# nvcc, its dialect and warning flags and the toolkit's defines come from scripts/cuda-env.sh.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
[ -n "${1:-}" ] && export NVCC="$1"
# shellcheck source=scripts/cuda-env.sh
. scripts/cuda-env.sh
CXX="${CXX:-g++}"
CC="${CC:-gcc}"
INC="$ROOT/cuda/include"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# Every check runs as a background job (HEADERS_CHECK_JOBS at a time, default
# the number of processors) with its own object file and log; the results are
# gathered in the order the checks were started.
JOBS="${HEADERS_CHECK_JOBS:-$(nproc 2>/dev/null || echo 2)}"
njob=0

# job NAME KIND CMD...: starts CMD, where KIND is "ok" (it must compile) or
# "refused:WANT" (it must fail, naming WANT). The arguments $TMP/k.o, $TMP/h.o
# and $TMP/c.o become an object file of the job's own.
job() {
	local name="$1" kind="$2"
	shift 2
	njob=$((njob + 1))
	local id=$njob a args=()
	for a in "$@"; do
		case "$a" in
		"$TMP/k.o" | "$TMP/h.o" | "$TMP/c.o") args+=("$TMP/obj.$id.o") ;;
		*) args+=("$a") ;;
		esac
	done
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n 2>/dev/null || true
	done
	(
		printf '%s\n' "$name" >"$TMP/name.$id"
		if "${args[@]}" >"$TMP/log.$id" 2>&1; then rc=0; else rc=1; fi
		case "$kind" in
		ok) [ $rc -eq 0 ] && echo pass || echo fail ;;
		refused:*)
			if [ $rc -eq 0 ]; then
				echo compiled
			elif grep -q "${kind#refused:}" "$TMP/log.$id"; then
				echo pass
			else
				echo "message ${kind#refused:}"
			fi
			;;
		esac >"$TMP/res.$id"
		rm -f "$TMP/obj.$id.o"
	) &
}

run() {
	local name="$1"
	shift
	job "$name" ok "$@"
}

# refused: the build must stop, and say what it refused.
refused() {
	local name="$1" want="$2"
	shift 2
	job "$name" "refused:$want" "$@"
}

style_flags() {
	if [ "$1" = 1 ]; then
		echo "-I$INC -I$INC/host -I$INC/common -I$INC/device"
	else
		echo "-I$INC"
	fi
}

# C cleanliness of the two shared .h files (cgo includes them with the C compiler).
for h in common/doca_gpunetio_verbs_prim.h common/doca_gpunetio_verbs_def.h common/doca_gpunetio_verbs_dev.h host/doca_error.h doca_gpunetio_config.h doca_gpunetio_host.h; do
	c="$TMP/c_$(basename "$h" .h).c"
	printf '#include "%s"\nint gpunetio_c_check;\n' "$h" >"$c"
	run "gcc -std=c11 $h" "$CC" -std=c11 -Wall -Wextra -Werror -I"$INC" -c "$c" -o "$TMP/c.o"
	run "gcc -std=c11 $h (no mlx5dv)" "$CC" -std=c11 -Wall -Wextra -Werror -DGDAKI_DOCA_NO_MLX5DV -I"$INC" -c "$c" -o "$TMP/c.o"
done

CORPUS="$ROOT/cuda/test/corpus"
ALL_INC="$(style_flags 1)"
for f in sdk32 sdk33 sdk34 os nccl; do
	for s in 1 2 3; do
		for fam in "" -DGDAKI_DOCA_FAMILY_SDK; do
			# shellcheck disable=SC2086
			run "g++ corpus $f style $s $fam" "$CXX" -x c++ -std=c++17 -Wall -Wextra -Werror $fam -DCORPUS_INCLUDE_STYLE=$s \
				$ALL_INC -c "$CORPUS/$f.cu" -o "$TMP/h.o"
		done
	done
done

# shellcheck disable=SC2086
refused "g++ refuse_free_flow" CPU_PROXY_FREE_FLOW "$CXX" -x c++ -std=c++17 -D__global__= -I"$INC" -c "$CORPUS/refuse_free_flow.cu" -o "$TMP/h.o"

for s in 1 2 3; do
	# shellcheck disable=SC2046
	run "g++ host style $s" "$CXX" -std=c++17 -Wall -Wextra -Werror -DGPUNETIO_INCLUDE_STYLE=$s $(style_flags $s) \
		-c "$ROOT/cuda/test/host_compile.cpp" -o "$TMP/h.o"
done

if [ -n "$NVCC" ]; then
	if [[ " $NVCC_DEFINES " == *" -DDOCA_GPUNETIO_VERBS_NO_MMIO_WARNING "* ]]; then
		echo "note: nvcc $(bash scripts/cuda-env.sh version) < 12.2: doorbells use st.relaxed.sys (MMIO warning silenced)"
	fi
	for s in 1 2 3; do
		for arch in $NVCC_SMS; do
			for dbg in 0 1; do
				# shellcheck disable=SC2046,SC2086
				run "nvcc style $s sm_$arch debug=$dbg" "$NVCC" $NVCC_STD \
					-DGPUNETIO_INCLUDE_STYLE=$s -DDOCA_GPUNETIO_VERBS_ENABLE_DEBUG=$dbg $NVCC_DEFINES \
					$(style_flags $s) -gencode "arch=compute_$arch,code=sm_$arch" \
					-c "$ROOT/cuda/test/api_compile.cu" -o "$TMP/k.o"
			done
		done
	done
	for arch in $NVCC_SMS; do
		gen="arch=compute_$arch,code=sm_$arch"
		for f in sdk32 sdk33 sdk34 os nccl; do
			for fam in "" -DGDAKI_DOCA_FAMILY_SDK; do
				# shellcheck disable=SC2086
				run "nvcc corpus $f sm_$arch $fam" "$NVCC" $NVCC_STD $NVCC_DEFINES $fam $ALL_INC -gencode "$gen" \
					-c "$CORPUS/$f.cu" -o "$TMP/k.o"
			done
		done
		for s in 1 2 3; do
			# shellcheck disable=SC2046,SC2086
			run "nvcc corpus all style $s sm_$arch" "$NVCC" $NVCC_STD $NVCC_DEFINES -DCORPUS_INCLUDE_STYLE=$s \
				$(style_flags $s) -gencode "$gen" -c "$CORPUS/all.cu" -o "$TMP/k.o"
		done
		# shellcheck disable=SC2086
		refused "nvcc refuse_free_flow sm_$arch" CPU_PROXY_FREE_FLOW "$NVCC" $NVCC_STD $NVCC_DEFINES -I"$INC" \
			-gencode "$gen" -c "$CORPUS/refuse_free_flow.cu" -o "$TMP/k.o"
	done
else
	echo "note: nvcc not found: nvcc checks skipped"
fi

wait
pass=0
fail=0
failed=()
for ((id = 1; id <= njob; id++)); do
	name=$(cat "$TMP/name.$id" 2>/dev/null || echo "check $id")
	res=$(cat "$TMP/res.$id" 2>/dev/null || echo lost)
	case "$res" in
	pass) pass=$((pass + 1)) ;;
	compiled)
		fail=$((fail + 1))
		failed+=("$name (compiled)")
		echo "FAIL: $name compiled; it must be refused"
		;;
	message*)
		fail=$((fail + 1))
		failed+=("$name (message)")
		echo "FAIL: $name: the error does not name ${res#message }"
		sed 's/^/    /' "$TMP/log.$id" | head -20
		;;
	*)
		fail=$((fail + 1))
		failed+=("$name")
		echo "FAIL: $name"
		sed 's/^/    /' "$TMP/log.$id" 2>/dev/null | head -40
		;;
	esac
done
echo "headers-check: $pass passed, $fail failed"
if [ "$fail" -ne 0 ]; then
	printf '  failed: %s\n' "${failed[@]}"
	exit 1
fi
