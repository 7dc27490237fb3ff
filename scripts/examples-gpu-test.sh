#!/usr/bin/env bash
# The examples part of make gpu-test. First the quickstart, twice: with its
# kernel built by nvcc (build/kernels/quickstart_kernel.fatbin, -image) and
# compiled at run time by NVRTC; each must exit 0 and print its "all bytes
# arrived" line naming how the kernel was built. Then every benchmark example
# in every supported exec scope and NIC handler, each run as two processes
# (server on emu0, client on emu1) on one GPU. Checks the exit statuses, the
# server's validation line (put_bw, write_bw, twosided_bw, twosided_lat), that
# every row of the table is present with the right message sizes and iteration
# count, and that its numbers are positive and consistent with each other (and
# with the -o JSON file). Prints a summary.
#
# Environment: BW_ITERS (default 512), LAT_ITERS (default 256), EX_GPU (-g),
# EX_PORT_BASE (default 21000), EX_TIMEOUT (per wait, default 120s),
# EX_CASES (a grep -E filter on the case names), EX_EXTRA_LAT (extra write_lat
# flag sets, ";"-separated, e.g. "-p 0 -r 2" where GDRCopy exists).
set -u
cd "$(dirname "$0")/.."

# shellcheck source=scripts/examples-lib.sh
. "$(dirname "$0")/examples-lib.sh"

if ! have_gpu; then
  echo "examples-gpu-test: no GPU (nvidia-smi / libcuda.so.1 / /dev/nvidia*): the examples need one. Run 'make test' for the CPU suite."
  exit 2
fi
examples_start examples-gpu-test "${EX_GPU:-}"
BW_ITERS=${BW_ITERS:-512}
LAT_ITERS=${LAT_ITERS:-256}
TMO=${EX_TIMEOUT:-120s}
port=${EX_PORT_BASE:-21000}
LOG=${OUT:-$PWD/build}/examples-logs
mkdir -p "$LOG"

BW_SIZES="1 64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576"
LAT_SIZES="1 64 128 256 512 1024 2048 4096 8192 16384"

# check_rows KIND FILE ITERS: the rows of a bw (16, BW_SIZES) or lat (10,
# LAT_SIZES) table, in order, each with ITERS iterations, its values positive
# and consistent with each other.
check_rows() {
  local sizes=$BW_SIZES
  [ "$1" = lat ] && sizes=$LAT_SIZES
  awk -v kind="$1" -v sizes="$sizes" -v iters="$3" '
    BEGIN { n = split(sizes, want, " "); i = 0; bad = 0 }
    /^ [0-9]+ / {
      i++
      if ($1 != want[i]) { printf "row %d: %s bytes, want %s\n", i, $1, want[i]; bad = 1 }
      if ($2 != iters) { printf "row %d: %s iterations, want %s\n", i, $2, iters; bad = 1 }
      if (kind == "bw") {
        # BW may print as 0.000000 only when it is below the format resolution.
        if (!($3 >= 0 && $4 > 0 && $5 > 0)) { printf "row %d: non-positive value: %s\n", i, $0; bad = 1; next }
        bw = $1 * $2 * 8 / ($5 * 1e6); mr = $2 / ($5 * 1e3)
        if ((bw - $3) > 0.01 * bw + 1e-6 || ($3 - bw) > 0.01 * bw + 1e-6) { printf "row %d: BW %s != %g\n", i, $3, bw; bad = 1 }
        if ((mr - $4) > 0.01 * mr + 1e-6 || ($4 - mr) > 0.01 * mr + 1e-6) { printf "row %d: rate %s != %g\n", i, $4, mr; bad = 1 }
      } else {
        if (!($3 > 0 && $4 > 0 && $5 > 0)) { printf "row %d: non-positive value: %s\n", i, $0; bad = 1; next }
        d = $4 - 2 * $3; if (d < 0) d = -d
        if (d > 0.02) { printf "row %d: round trip %s != 2 x %s\n", i, $4, $3; bad = 1 }
        rt = $5 / iters; d = rt - $4; if (d < 0) d = -d
        if (d > 0.01 + 0.01 * rt) { printf "row %d: kernel %s / %d != %s\n", i, $5, iters, $4; bad = 1 }
      }
    }
    END { if (i != n) { printf "%d rows, want %d\n", i, n; bad = 1 } exit bad }' "$2"
}

# check_json FILE KEY ROWS: the -o file parses and has ROWS entries under KEY.
check_json() {
  if command -v python3 >/dev/null 2>&1; then
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rows = r.get(sys.argv[2]) or []
assert len(rows) == int(sys.argv[3]), f"{len(rows)} rows in {sys.argv[1]}"
assert all(x["bytes"] > 0 for x in rows)
PY
  else
    grep -q "\"$2\"" "$1"
  fi
}

pass=0; fail=0; summary=()

# run_case NAME PROG KIND SERVER_FLAGS -- CLIENT_FLAGS
run_case() {
  local name=$1 prog=$2 kind=$3; shift 3
  local sflags=() cflags=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do sflags+=("$1"); shift; done
  shift
  cflags=("$@")
  if [ -n "${EX_CASES:-}" ] && ! echo "$name" | grep -Eq "$EX_CASES"; then
    return
  fi
  port=$((port + 1))
  local d="$LOG/$(echo "$name" | tr ' /=' '___')"
  rm -rf "$d"; mkdir -p "$d"
  local t0=$SECONDS
  echo "=== $name"
  "build/bin/$prog" -d emu0 -n -port "$port" -timeout "$TMO" -o "$d/server.json" "${gpu[@]}" "${sflags[@]}" \
    >"$d/server.out" 2>"$d/server.err" &
  local spid=$!
  local crc=0 src=0
  timeout 900 "build/bin/$prog" -d emu1 -c 127.0.0.1 -port "$port" -timeout "$TMO" -o "$d/client.json" "${gpu[@]}" "${cflags[@]}" \
    >"$d/client.out" 2>"$d/client.err" || crc=$?
  # The server exits by itself (-n); give it the same bound, then stop it.
  local waited=0
  while kill -0 "$spid" 2>/dev/null && [ $waited -lt 300 ]; do sleep 1; waited=$((waited + 1)); done
  if kill -0 "$spid" 2>/dev/null; then
    kill "$spid" 2>/dev/null; sleep 1; kill -9 "$spid" 2>/dev/null
    echo "server did not exit" >>"$d/server.err"
  fi
  wait "$spid" || src=$?
  local why=()
  [ "$crc" -eq 0 ] || why+=("client exit $crc")
  [ "$src" -eq 0 ] || why+=("server exit $src")
  if [ "$kind" = bw ]; then
    grep -q "Data received correctly from client" "$d/server.out" || why+=("no validation line")
    check_rows bw "$d/client.out" "$BW_ITERS" >"$d/check.txt" 2>&1 || why+=("client table: $(head -3 "$d/check.txt" | tr '\n' ';')")
    [ "$crc" -ne 0 ] || check_json "$d/client.json" bandwidth 16 >>"$d/check.txt" 2>&1 || why+=("client JSON")
  else
    # twosided_lat's server checks every message it receives.
    if [ "$prog" = twosided_lat ]; then
      grep -q "Data received correctly from client" "$d/server.out" || why+=("no validation line")
    fi
    check_rows lat "$d/client.out" "$LAT_ITERS" >"$d/check.txt" 2>&1 || why+=("client table: $(head -3 "$d/check.txt" | tr '\n' ';')")
    check_rows lat "$d/server.out" "$LAT_ITERS" >>"$d/check.txt" 2>&1 || why+=("server table")
    [ "$crc" -ne 0 ] || check_json "$d/client.json" latency 10 >>"$d/check.txt" 2>&1 || why+=("client JSON")
  fi
  if [ ${#why[@]} -eq 0 ]; then
    pass=$((pass + 1)); summary+=("PASS  $name ($((SECONDS - t0))s)")
    cat "$d/client.out"
    [ "$kind" = bw ] && cat "$d/server.out"
  else
    fail=$((fail + 1)); summary+=("FAIL  $name ($((SECONDS - t0))s): ${why[*]} -- see $d")
    for f in client.out client.err server.out server.err check.txt; do
      echo "--- $f"; tail -20 "$d/$f"
    done
    mps_restart # a killed or failed pair can leave MPS refusing the next one
  fi
}

# run_quickstart NAME WANT ARGS...: one quickstart run (both QPs in one
# process, emu0 -> emu1); it must exit 0 and print the success line with WANT.
run_quickstart() {
  local name=$1 want=$2; shift 2
  if [ -n "${EX_CASES:-}" ] && ! echo "$name" | grep -Eq "$EX_CASES"; then
    return
  fi
  local d="$LOG/$(echo "$name" | tr ' /=()' '_____')"
  rm -rf "$d"; mkdir -p "$d"
  local t0=$SECONDS rc=0 why=()
  echo "=== $name"
  timeout 300 build/bin/quickstart "${gpu[@]}" "$@" >"$d/out" 2>"$d/err" || rc=$?
  [ "$rc" -eq 0 ] || why+=("exit $rc")
  grep -q "all bytes arrived" "$d/out" || why+=("no success line")
  grep -q "$want" "$d/out" || why+=("not '$want'")
  if [ ${#why[@]} -eq 0 ]; then
    pass=$((pass + 1)); summary+=("PASS  $name ($((SECONDS - t0))s)")
    cat "$d/out"
  else
    fail=$((fail + 1)); summary+=("FAIL  $name ($((SECONDS - t0))s): ${why[*]} -- see $d")
    for f in out err; do echo "--- $f"; tail -20 "$d/$f"; done
  fi
}

run_quickstart "quickstart (nvcc image)" "kernel nvcc-built" -image build/kernels/quickstart_kernel.fatbin
run_quickstart "quickstart (NVRTC)" "kernel compiled by NVRTC"
for scope in 0 1; do
  for h in 0 1 2; do
    run_case "put_bw -e $scope -p $h" put_bw bw -- -i "$BW_ITERS" -e "$scope" -p "$h"
  done
done
for h in 0 1 2; do
  run_case "write_bw -p $h" write_bw bw -- -i "$BW_ITERS" -p "$h"
done
# Two-sided: both sides run kernels (the server posts receives and waits for
# them), so the server gets the same -i, -e and -p.
for scope in 0 1; do
  for h in 0 1 2; do
    run_case "twosided_bw -e $scope -p $h" twosided_bw bw -i "$BW_ITERS" -e "$scope" -p "$h" -- -i "$BW_ITERS" -e "$scope" -p "$h"
  done
done
for h in 0 1 2 6; do
  run_case "write_lat -p $h" write_lat lat -p "$h" -i "$LAT_ITERS" -- -p "$h" -i "$LAT_ITERS"
done
# Two-sided ping-pong: both sides' kernels post receives and send, so both
# get -i and -p (twosided_bw's handlers: BlueFlame is a DB submit there).
for h in 0 1 2; do
  run_case "twosided_lat -p $h" twosided_lat lat -p "$h" -i "$LAT_ITERS" -- -p "$h" -i "$LAT_ITERS"
done
# ConnectX-8 model: hardware no-DBR (AUTO resolves to GPU_SM_NO_DBR).
GDAKI_EMU_MODEL=cx8 run_case "write_lat -p 0 -r 1 (cx8)" write_lat lat -p 0 -r 1 -i "$LAT_ITERS" -- -p 0 -r 1 -i "$LAT_ITERS"
IFS=';' read -r -a extra <<<"${EX_EXTRA_LAT:-}"
for x in "${extra[@]}"; do
  [ -n "$x" ] || continue
  # shellcheck disable=SC2086
  run_case "write_lat $x" write_lat lat $x -i "$LAT_ITERS" -- $x -i "$LAT_ITERS"
done

echo
echo "Examples summary:"
printf '  %s\n' "${summary[@]}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
