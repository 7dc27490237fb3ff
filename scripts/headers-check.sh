#!/usr/bin/env bash
# Compile checks for the GPUNetIO device headers (no GPU needed).
#   nvcc: cuda/test/api_compile.cu (every API signature plus example usage) in
#         the three include styles, for each SM of NVCC_SMS (scripts/cuda-env.sh: 80 and 90), with
#         DOCA_GPUNETIO_VERBS_ENABLE_DEBUG 0 and 1,
#         -Werror all-warnings.
#   g++ : cuda/test/host_compile.cpp (thread-scope API through the host portability layer) in the
#         three include styles, -std=c++17 -Wall -Wextra -Werror; both .h files as C11 with gcc.
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

pass=0
fail=0
failed=()

run() {
	local name="$1"
	shift
	if "$@" >"$TMP/log" 2>&1; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed+=("$name")
		echo "FAIL: $name"
		sed 's/^/    /' "$TMP/log" | head -40
	fi
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
	printf '#include "%s"\nint gpunetio_c_check;\n' "$h" >"$TMP/c.c"
	run "gcc -std=c11 $h" "$CC" -std=c11 -Wall -Wextra -Werror -I"$INC" -c "$TMP/c.c" -o "$TMP/c.o"
done

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
else
	echo "note: nvcc not found: nvcc checks skipped"
fi

echo "headers-check: $pass passed, $fail failed"
if [ "$fail" -ne 0 ]; then
	printf '  failed: %s\n' "${failed[@]}"
	exit 1
fi
