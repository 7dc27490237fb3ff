#!/usr/bin/env bash
# The emulated NIC's speed on a GPU machine (bandwidth and one-way latency of
# the examples over emu0 <-> emu1, against this GPU's own cuMemcpy), in one run:
#   1. one process (build/bin/emubench): cuMemcpy references on this GPU
#      (DtoH/HtoD/DtoD at 1 MiB, a 64-byte copy's latency), then put_bw
#      64 B / 1 MiB, write_bw 1 MiB and write_lat 8 / 64 B with the
#      examples' kernels on emu0 <-> emu1 of that process, and the stage
#      breakdown of write_lat's one-way latency;
#   2. two processes, as make gpu-test runs the examples (server on emu0,
#      client on emu1, one GPU, MPS): put_bw and write_bw (64 B and 1 MiB
#      rows) and write_lat (1 and 64 B rows); put_bw once more with the
#      examples' default of 2048 messages per size (its 64 B row);
#      twosided_bw (SEND/receive, both sides' kernels: 64 B and 1 MiB rows)
#      and twosided_lat (SEND/receive ping-pong: 1 and 64 B rows);
#   3. a summary: every figure beside its target, bandwidths also as a
#      fraction of the cuMemcpy DtoH bandwidth measured in step 1.
# Runs from prebuilt binaries (make gpu-build: build/bin/emubench and the
# examples); builds what is missing when Go is there, and the kernels with
# nvcc when they are stale. Takes about a minute on an H100. Logs go to
# $OUT/emu-bench (default build/). BENCH_BW_ITERS (512), BENCH_LAT_ITERS
# (256 for the examples; emubench uses 1000), EX_GPU (-g), EX_PORT_BASE
# (default 23000).
set -u
cd "$(dirname "$0")/.."
# shellcheck source=scripts/examples-lib.sh
. scripts/examples-lib.sh
if ! have_gpu; then
  echo "emu-bench: no GPU (nvidia-smi / libcuda.so.1 / /dev/nvidia*): this benchmark needs one."
  exit 2
fi
examples_build || { echo "emu-bench: build failed" >&2; exit 1; }
if [ ! -x build/bin/emubench ]; then
  if command -v go >/dev/null 2>&1; then
    go build -o build/bin/emubench ./internal/emubench || exit 1
  else
    echo "emu-bench: missing build/bin/emubench: run make gpu-build on a machine with Go" >&2
    exit 1
  fi
fi
# shellcheck source=scripts/mps.sh
. scripts/mps.sh
mps_start
trap mps_stop EXIT

LOG=${OUT:-$PWD/build}/emu-bench
mkdir -p "$LOG"
BW_ITERS=${BENCH_BW_ITERS:-512}
LAT_ITERS=${BENCH_LAT_ITERS:-256}
port=${EX_PORT_BASE:-23000}
gpu=()
[ -n "${EX_GPU:-}" ] && gpu=(-g "$EX_GPU")
fail=0

echo "=== one process (build/bin/emubench)"
if ! timeout 300 build/bin/emubench -k build/kernels "${gpu[@]}" >"$LOG/inproc.txt" 2>"$LOG/inproc.err"; then
  echo "emubench failed:"; tail -20 "$LOG/inproc.err"; fail=1
fi
cat "$LOG/inproc.txt"

# pair NAME PROG SERVER_FLAGS -- CLIENT_FLAGS: one example as two processes.
pair() {
  local name=$1 prog=$2; shift 2
  local sflags=() cflags=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do sflags+=("$1"); shift; done
  shift
  cflags=("$@")
  port=$((port + 1))
  local d="$LOG/$name"
  mkdir -p "$d"
  "build/bin/$prog" -d emu0 -n -port "$port" -timeout 60s "${gpu[@]}" "${sflags[@]}" >"$d/server.out" 2>"$d/server.err" &
  local spid=$!
  if ! timeout 300 "build/bin/$prog" -d emu1 -c 127.0.0.1 -port "$port" -timeout 60s "${gpu[@]}" "${cflags[@]}" \
    >"$d/client.out" 2>"$d/client.err"; then
    echo "$name: client failed:"; tail -5 "$d/client.err"; fail=1
  fi
  local w=0
  while kill -0 "$spid" 2>/dev/null && [ $w -lt 60 ]; do sleep 1; w=$((w + 1)); done
  kill "$spid" 2>/dev/null
  wait "$spid" 2>/dev/null
  cat "$d/client.out"
}

echo "=== two processes (the examples, MPS)"
pair put_bw put_bw -- -i "$BW_ITERS" -e 0 -p 0
# The examples' own default, 2048 messages per size: four rounds of the
# kernel's 512 threads in one launch, so the launch and the first round's
# read-ahead weigh a quarter as much as in the 512-message launch above.
pair put_bw_2048 put_bw -- -i 2048 -e 0 -p 0
pair write_bw write_bw -- -i "$BW_ITERS" -p 0
pair twosided_bw twosided_bw -i "$BW_ITERS" -e 0 -p 0 -- -i "$BW_ITERS" -e 0 -p 0
pair write_lat write_lat -p 0 -i "$LAT_ITERS" -- -p 0 -i "$LAT_ITERS"
pair twosided_lat twosided_lat -p 0 -i "$LAT_ITERS" -- -p 0 -i "$LAT_ITERS"

# col FILE BYTES COLUMN: a column of a table row.
col() { awk -v b="$2" -v c="$3" '/^ [0-9]+ / && $1 == b { print $c; exit }' "$1" 2>/dev/null; }
# ref KEY: a value from emubench's output.
val() { awk -v k="$1" '$1 == k { print $2; exit }' "$LOG/inproc.txt" 2>/dev/null; }

dtoh=$(val ref.dtoh_1MiB)
frac() { awk -v x="$1" -v d="$dtoh" 'BEGIN { if (x != "" && d > 0) printf "%.2f", x / d; else print "-" }'; }
mmsg() { awk -v x="$1" 'BEGIN { if (x != "") printf "%.3f", x; else print "-" }'; }

p64=$(col "$LOG/put_bw/client.out" 64 4)
p64d=$(col "$LOG/put_bw_2048/client.out" 64 4)
p1m=$(col "$LOG/put_bw/client.out" 1048576 3)
w64=$(col "$LOG/write_bw/client.out" 64 4)
w1m=$(col "$LOG/write_bw/client.out" 1048576 3)
t64=$(col "$LOG/twosided_bw/client.out" 64 4)
t1m=$(col "$LOG/twosided_bw/client.out" 1048576 3)
l1=$(col "$LOG/write_lat/client.out" 1 3)
l64=$(col "$LOG/write_lat/client.out" 64 3)
s1=$(col "$LOG/twosided_lat/client.out" 1 3)
s64=$(col "$LOG/twosided_lat/client.out" 64 3)

{
  echo
  echo "emu-bench summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
  echo "  cuMemcpy references (one process, 1 MiB, pinned host): DtoH $(val ref.dtoh_1MiB) Gbps, HtoD $(val ref.htod_1MiB) Gbps, DtoD $(val ref.dtod_1MiB) Gbps"
  echo "  64-byte copy: DtoH async+sync $(val ref.dtoh_64B_async_sync) us, HtoD async+sync $(val ref.htod_64B_async_sync) us, DtoH sync $(val ref.dtoh_64B_sync) us"
  printf '  %-34s %14s %14s %10s\n' "figure" "two processes" "one process" "target"
  printf '  %-34s %14s %14s %10s\n' "write_lat one-way 1 B (us)" "${l1:--}" "-" "<= 15"
  printf '  %-34s %14s %14s %10s\n' "write_lat one-way 8 B (us)" "-" "$(val inproc.write_lat_8B_one_way)" "<= 15"
  printf '  %-34s %14s %14s %10s\n' "write_lat one-way 64 B (us)" "${l64:--}" "$(val inproc.write_lat_64B_one_way)" "<= 15"
  printf '  %-34s %14s %14s %10s\n' "twosided_lat one-way 1 B (us)" "${s1:--}" "-" ""
  printf '  %-34s %14s %14s %10s\n' "twosided_lat one-way 64 B (us)" "${s64:--}" "-" ""
  printf '  %-34s %14s %14s %10s\n' "put_bw 64 B (M msgs/s)" "$(mmsg "$p64")" "$(val inproc.put_bw_64B)" ">= 1"
  printf '  %-34s %14s %14s %10s\n' "  median of 15 launches (min-max)" "-" "$(val inproc.put_bw_64B_of15_median) ($(val inproc.put_bw_64B_of15_min)-$(val inproc.put_bw_64B_of15_max))" ""
  printf '  %-34s %14s %14s %10s\n' "  2048 per launch (examples' default)" "$(mmsg "$p64d")" "-" ""
  printf '  %-34s %14s %14s %10s\n' "write_bw 64 B (M msgs/s)" "$(mmsg "$w64")" "-" ""
  printf '  %-34s %14s %14s %10s\n' "twosided_bw 64 B (M msgs/s)" "$(mmsg "$t64")" "-" ""
  printf '  %-34s %14s %14s %10s\n' "  per round of 512 (us)" "$(awk -v r="$t64" 'BEGIN { if (r != "" && r > 0) printf "%.1f", 512 / r; else print "-" }')" "-" ""
  printf '  %-34s %14s %14s %10s\n' "twosided_bw 1 MiB (Gbps)" "${t1m:--}" "-" ""
  printf '  %-34s %14s %14s %10s\n' "put_bw 1 MiB (Gbps)" "${p1m:--}" "$(val inproc.put_bw_1MiB)" ">= 100"
  printf '  %-34s %14s %14s %10s\n' "  of cuMemcpy DtoH" "$(frac "$p1m")" "$(val inproc.put_bw_1MiB_of_dtoh)" ""
  printf '  %-34s %14s %14s %10s\n' "write_bw 1 MiB (Gbps)" "${w1m:--}" "$(val inproc.write_bw_1MiB)" ">= 100"
  printf '  %-34s %14s %14s %10s\n' "  of cuMemcpy DtoH" "$(frac "$w1m")" "$(val inproc.write_bw_1MiB_of_dtoh)" ""
  echo "  write_lat 8 B one-way in one process, by stage of the emulator (mean over $(val breakdown.messages) messages):"
  echo "    doorbell seen -> DBR and WQE read          $(val breakdown.doorbell_seen_to_wqe_read) us"
  echo "    WQE read -> payload read                   $(val breakdown.wqe_read_to_payload_read) us"
  echo "    payload read -> remote buffer written      $(val breakdown.payload_read_to_remote_written) us"
  echo "    (remote written -> CQE written, off path   $(val breakdown.remote_written_to_cqe_written) us)"
  echo "    doorbell seen -> remote buffer written     $(val breakdown.doorbell_seen_to_remote_written) us of $(val breakdown.write_lat_8B_one_way) us one-way"
  echo "    rest: GPU store -> doorbell seen, remote written -> peer kernel sees it: $(val breakdown.rest_gpu_side) us"
  echo "  method: scripts/emu-bench.sh and internal/emubench (kernel times between CUDA events, as the examples time them)"
} | tee "$LOG/summary.txt"
exit $fail
