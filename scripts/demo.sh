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

# shellcheck source=scripts/examples-lib.sh
. "$(dirname "$0")/examples-lib.sh"

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
