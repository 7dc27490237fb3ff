# Sourced by scripts/demo.sh and scripts/examples-gpu-test.sh: the GPU check,
# the build of the example kernels and programs, and the start of a GPU run.

# shellcheck source=scripts/mps.sh
. "$(dirname "${BASH_SOURCE[0]}")/mps.sh"

# have_gpu: true when an NVIDIA GPU and the CUDA driver are visible.
have_gpu() {
  if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' && [ ! -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ] && [ ! -e /usr/lib64/libcuda.so.1 ]; then
    return 1
  fi
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && return 0
    return 1
  fi
  ls /dev/nvidia[0-9]* >/dev/null 2>&1
}

# The example programs with a kernel.cu (each built into
# build/kernels/<name>_kernel.fatbin and build/bin/<name>).
EXAMPLES="put_bw write_bw write_lat twosided_bw twosided_lat quickstart"

# examples_build: kernels (scripts/build-kernels.sh when nvcc exists) and programs
# (go build into build/bin when Go exists). Fails when something needed is
# neither built nor buildable.
examples_build() {
  local k stale=0
  # shellcheck source=scripts/cuda-env.sh
  . scripts/cuda-env.sh
  for k in $EXAMPLES; do
    [ "build/kernels/${k}_kernel.fatbin" -nt "examples/$k/kernel.cu" ] || stale=1
  done
  if [ "$stale" -eq 1 ] && [ -n "$NVCC" ]; then
    bash scripts/build-kernels.sh || return 1
  fi
  for k in $EXAMPLES; do
    if [ ! -f "build/kernels/${k}_kernel.fatbin" ]; then
      echo "missing build/kernels/${k}_kernel.fatbin: install the CUDA toolkit (nvcc) and run make kernels" >&2
      return 1
    fi
  done
  mkdir -p build/bin
  if command -v go >/dev/null 2>&1; then
    local pkgs=()
    for k in $EXAMPLES; do pkgs+=("./examples/$k"); done
    go build -o build/bin/ "${pkgs[@]}" || return 1
  fi
  for k in $EXAMPLES; do
    if [ ! -x "build/bin/$k" ]; then
      echo "missing build/bin/$k: install Go and run go build -o build/bin/ ./examples/..." >&2
      return 1
    fi
  done
}

# examples_start WHO [GPU]: builds the examples (exits 1, naming WHO, when that
# fails), starts MPS for the run (stopped on exit; a script that sets its own
# EXIT trap calls mps_stop there) and sets the array gpu to the programs' GPU
# flag (-g GPU, or nothing for the default device).
examples_start() {
  examples_build || { echo "$1: build failed" >&2; exit 1; }
  mps_start
  trap mps_stop EXIT
  gpu=()
  if [ -n "${2:-}" ]; then gpu=(-g "$2"); fi
}
