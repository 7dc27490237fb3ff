# shellcheck shell=bash
# The one place that finds nvcc and spells the nvcc flags. Every script that
# runs nvcc sources it; the Makefile asks it for the values:
#
#   . scripts/cuda-env.sh            (from bash: sets the variables below)
#   bash scripts/cuda-env.sh nvcc    (prints the nvcc path, empty when none)
#   bash scripts/cuda-env.sh flags   (prints NVCC_FLAGS)
#   bash scripts/cuda-env.sh version (prints "MAJOR.MINOR" of nvcc)
#
# Variables (each may be set in the environment to override):
#   NVCC          nvcc to use: $NVCC, else nvcc on PATH, else
#                 $CUDA_HOME/bin/nvcc, else /usr/local/cuda/bin/nvcc; empty
#                 when none is found.
#   NVCC_SMS      the GPUs every build targets, as SM numbers, lowest first:
#                 "80 90" (A100, H100). The one architecture list: NVCC_ARCH,
#                 headers-check.sh's compile matrix and sass-snapshot.sh's
#                 dumps all come from it.
#   NVCC_PTX_SM   the virtual architecture whose PTX is embedded for GPUs
#                 newer than the list (default: the last of NVCC_SMS).
#   NVCC_ARCH     the GPU code to build: real code for each of NVCC_SMS,
#                 plus PTX of NVCC_PTX_SM. Set directly, it overrides the
#                 build flags only (the two scripts above keep NVCC_SMS).
#   NVCC_STD      the C++ dialect and warning policy every nvcc build uses.
#   NVCC_INCLUDES the include directories of the device headers, in the four
#                 spellings the reference examples use, relative to the
#                 repository root (the scripts run nvcc from there).
#   NVCC_DEFINES  what the toolkit and the machine need: the MMIO macro for
#                 nvcc older than 12.2 (no st.mmio; the header's #warning would
#                 be fatal under -Werror), GPUNETIO_NO_MLX5DV where rdma-core's
#                 mlx5dv.h is missing.
#   NVCC_FLAGS    NVCC_STD NVCC_INCLUDES NVCC_DEFINES NVCC_ARCH.
#
# cuda_version prints nvcc's "MAJOR MINOR" (nothing without nvcc).
# cuda_require_nvcc WHO exits 1, naming WHO, when no nvcc was found.

cuda_find_nvcc() {
	local c
	for c in "${NVCC:-}" "$(command -v nvcc 2>/dev/null)" "${CUDA_HOME:+$CUDA_HOME/bin/nvcc}" /usr/local/cuda/bin/nvcc; do
		if [ -n "$c" ] && [ -x "$(command -v "$c" 2>/dev/null)" ]; then
			command -v "$c"
			return 0
		fi
	done
	return 1
}

cuda_version() {
	[ -n "${NVCC:-}" ] || return 0
	"$NVCC" --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1 \2/p'
}

cuda_require_nvcc() {
	if [ -z "${NVCC:-}" ]; then
		echo "$1: nvcc not found (set NVCC or install the CUDA toolkit)" >&2
		exit 1
	fi
}

# cuda_arch_flags prints the -gencode flags of NVCC_SMS and NVCC_PTX_SM.
cuda_arch_flags() {
	local sm flags=()
	for sm in $NVCC_SMS; do
		flags+=(-gencode "arch=compute_$sm,code=sm_$sm")
	done
	flags+=(-gencode "arch=compute_$NVCC_PTX_SM,code=compute_$NVCC_PTX_SM")
	echo "${flags[*]}"
}

cuda_defines() {
	local maj min defs=()
	read -r maj min <<<"$(cuda_version)"
	if [ -n "${maj:-}" ] && { [ "$maj" -lt 12 ] || { [ "$maj" -eq 12 ] && [ "${min:-0}" -lt 2 ]; }; }; then
		defs+=(-DDOCA_GPUNETIO_VERBS_NO_MMIO_WARNING)
	fi
	if [ ! -e /usr/include/infiniband/mlx5dv.h ]; then
		defs+=(-DGPUNETIO_NO_MLX5DV)
	fi
	echo "${defs[*]}"
}

NVCC="$(cuda_find_nvcc || true)"
: "${NVCC_SMS:=80 90}"
: "${NVCC_PTX_SM:=${NVCC_SMS##* }}"
: "${NVCC_ARCH:=$(cuda_arch_flags)}"
: "${NVCC_STD:=-O3 -std=c++17 -Werror all-warnings}"
: "${NVCC_INCLUDES:=-Icuda/include -Icuda/include/host -Icuda/include/common -Icuda/include/device}"
: "${NVCC_DEFINES:=$(cuda_defines)}"
: "${NVCC_FLAGS:=$NVCC_STD $NVCC_INCLUDES $NVCC_DEFINES $NVCC_ARCH}"
export NVCC NVCC_SMS NVCC_PTX_SM NVCC_ARCH NVCC_STD NVCC_INCLUDES NVCC_DEFINES NVCC_FLAGS

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case "${1:-}" in
	nvcc) echo "$NVCC" ;;
	flags) echo "$NVCC_FLAGS" ;;
	version) read -r maj min <<<"$(cuda_version)" && [ -n "${maj:-}" ] && echo "$maj.$min" ;;
	*)
		echo "usage: $0 nvcc|flags|version" >&2
		exit 2
		;;
	esac
fi
