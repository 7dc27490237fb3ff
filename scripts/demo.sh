#!/usr/bin/env bash
# make demo: the put_bw exchange over the emulated NICs emu0 (server) and
# emu1 (client), with its bandwidth table and the server's validation line.
#
# With a GPU: builds the kernels and the examples, then runs the put_bw
# server and client as two processes on one GPU; GPU threads post the puts.
# Without one (or with DEMO_CPU=1): builds and runs internal/cpudemo, the same
# exchange posted by CPU threads through the device API compiled as host C++,
# in one process, clearly labelled CPU-driven. Exits non-zero when the demo
# fails (a build error, an error completion, a byte that did not arrive).
#
# Environment: DEMO_ITERS (default 512 on a GPU, 2048 on the CPU), DEMO_HANDLER (-p, default 0),
# DEMO_TIMEOUT (default 120s); GPU only: DEMO_SCOPE (-e, default 0), DEMO_GPU
# (-g, default CUDA device 0), DEMO_PORT (OOB port, default 2000); CPU only:
# DEMO_THREADS (CPU threads, default 8), DEMO_MAX_SIZE (largest message,
# default 65536: put_bw's 1 MiB needs 1 GiB of buffers per side).
set -u
cd "$(dirname "$0")/.."

# shellcheck source=scripts/examples-lib.sh
. "$(dirname "$0")/examples-lib.sh"

cpu_demo() {
  echo "$1: running the CPU-driven demo (CPU threads post through the device API compiled as host C++)."
  echo
  if ! command -v go >/dev/null 2>&1; then
    echo "demo: the CPU-driven demo is built from source and needs Go (and gcc/g++ for cgo)" >&2
    exit 1
  fi
  case "${CGO_CPPFLAGS:-}" in
  *GDAKI_HEADERS_SUM*) ;;
  *) export CGO_CPPFLAGS="${CGO_CPPFLAGS:-} -DGDAKI_HEADERS_SUM=0x$(bash scripts/headers-sum.sh)" ;;
  esac
  mkdir -p build/bin
  go build -o build/bin/cpudemo ./internal/cpudemo || { echo "demo: build of internal/cpudemo failed" >&2; exit 1; }
  build/bin/cpudemo -i "${DEMO_ITERS:-2048}" -p "${DEMO_HANDLER:-0}" -threads "${DEMO_THREADS:-8}" \
    -max-size "${DEMO_MAX_SIZE:-65536}" -timeout "${DEMO_TIMEOUT:-120s}" || exit 1
  exit 0
}

if [ "${DEMO_CPU:-0}" = 1 ]; then
  cpu_demo "DEMO_CPU=1"
fi
if ! have_gpu; then
  cpu_demo "No NVIDIA GPU with a CUDA driver here (the GPU demo needs nvidia-smi, libcuda.so.1 and nvcc)"
fi

examples_start demo "${DEMO_GPU:-}"
iters=${DEMO_ITERS:-512}
port=${DEMO_PORT:-2000}
tmo=${DEMO_TIMEOUT:-120s}
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
