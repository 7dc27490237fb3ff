#!/usr/bin/env bash
# make demo: builds the kernels and the examples, then runs the put_bw server
# (emu0) and client (emu1) as two processes on one GPU over the emulated NICs
# and prints the client's bandwidth table and the server's validation line.
#
# Environment: DEMO_ITERS (default 512), DEMO_SCOPE (-e, default 0),
# DEMO_HANDLER (-p, default 0), DEMO_GPU (-g, default CUDA device 0),
# DEMO_PORT (OOB port, default 2000), DEMO_TIMEOUT (default 120s).
set -u
cd "$(dirname "$0")/.."

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

# examples_build: kernels (make kernels when nvcc exists) and programs
# (go build into build/bin when Go exists). Fails when something needed is
# neither built nor buildable.
examples_build() {
  local nvcc k stale=0
  nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
  for k in put_bw write_bw write_lat; do
    [ "build/kernels/${k}_kernel.fatbin" -nt "examples/$k/kernel.cu" ] || stale=1
  done
  if [ "$stale" -eq 1 ] && [ -n "$nvcc" ]; then
    if command -v make >/dev/null 2>&1; then
      make --no-print-directory kernels NVCC="$nvcc" || return 1
    else
      bash scripts/build-kernels.sh "$nvcc" "-O3 -std=c++17 -Werror all-warnings -Icuda/include -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90" || return 1
    fi
  fi
  for k in put_bw write_bw write_lat; do
    if [ ! -f "build/kernels/${k}_kernel.fatbin" ]; then
      echo "missing build/kernels/${k}_kernel.fatbin: install the CUDA toolkit (nvcc) and run make kernels" >&2
      return 1
    fi
  done
  mkdir -p build/bin
  if command -v go >/dev/null 2>&1; then
    go build -o build/bin/ ./examples/put_bw ./examples/write_bw ./examples/write_lat || return 1
  fi
  for k in put_bw write_bw write_lat; do
    if [ ! -x "build/bin/$k" ]; then
      echo "missing build/bin/$k: install Go and run go build -o build/bin/ ./examples/..." >&2
      return 1
    fi
  done
}

if ! have_gpu; then
  cat <<'MSG'
make demo needs an NVIDIA GPU with the CUDA driver (nvidia-smi and libcuda.so.1), and nvcc to build
the kernels. No GPU was found on this machine, so the demo does not run here.
Run `make test` instead: the whole Go suite runs without a GPU on the emulated NICs (emu0, emu1).
MSG
  exit 0
fi

examples_build || { echo "demo: build failed" >&2; exit 1; }
# shellcheck source=scripts/mps.sh
. "$(dirname "$0")/mps.sh"
mps_start
trap mps_stop EXIT


iters=${DEMO_ITERS:-512}
port=${DEMO_PORT:-2000}
tmo=${DEMO_TIMEOUT:-120s}
gpu=()
[ -n "${DEMO_GPU:-}" ] && gpu=(-g "$DEMO_GPU")
tmp=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  rm -rf "$tmp"
  mps_stop
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "put_bw server: build/bin/put_bw -d emu0 -n -port $port ${gpu[*]}"
build/bin/put_bw -d emu0 -n -port "$port" -timeout "$tmo" "${gpu[@]}" >"$tmp/server.out" 2>"$tmp/server.err" &
server_pid=$!
echo "put_bw client: build/bin/put_bw -d emu1 -c 127.0.0.1 -port $port -i $iters -e ${DEMO_SCOPE:-0} -p ${DEMO_HANDLER:-0} ${gpu[*]}"
echo
client_rc=0
build/bin/put_bw -d emu1 -c 127.0.0.1 -port "$port" -i "$iters" -e "${DEMO_SCOPE:-0}" -p "${DEMO_HANDLER:-0}" \
  -timeout "$tmo" "${gpu[@]}" 2>"$tmp/client.err" || client_rc=$?
server_rc=0
wait "$server_pid" || server_rc=$?
server_pid=
echo
cat "$tmp/server.out"
if [ "$client_rc" -ne 0 ] || [ "$server_rc" -ne 0 ]; then
  echo
  echo "demo failed (client exit $client_rc, server exit $server_rc)"
  echo "--- client stderr"; cat "$tmp/client.err"
  echo "--- server stderr"; cat "$tmp/server.err"
  exit 1
fi
grep -q "Data received correctly from client" "$tmp/server.out" || { echo "demo: no validation line from the server"; exit 1; }
