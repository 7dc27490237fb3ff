# Sourced by the example scripts. Client and server of an example run as two
# processes on ONE GPU; without CUDA MPS the GPU time-slices between their
# contexts, and a ping-pong (write_lat) then waits about a millisecond per leg
# for a context switch (measured on an H100: 2240 us one-way without MPS,
# 103 us with it). mps_start starts a private MPS daemon for the run when the
# control program exists and none is running; EX_NO_MPS=1 turns that off.
# mps_stop stops only a daemon that mps_start started.
MPS_STARTED=0
mps_start() {
  [ "${EX_NO_MPS:-0}" = 1 ] && return 0
  command -v nvidia-cuda-mps-control >/dev/null 2>&1 || return 0
  [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] && return 0 # the caller manages MPS
  local dir
  dir=$(mktemp -d /tmp/gdaki-mps.XXXXXX)
  export CUDA_MPS_PIPE_DIRECTORY=$dir/pipe CUDA_MPS_LOG_DIRECTORY=$dir/log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d 2>/dev/null; then
    MPS_STARTED=1
    echo "note: started a private CUDA MPS daemon (EX_NO_MPS=1 to run without)"
  else
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  fi
}
mps_stop() {
  if [ "$MPS_STARTED" = 1 ]; then
    echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 || true
    MPS_STARTED=0
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  fi
}
# mps_restart replaces a daemon that mps_start started with a fresh one. A
# client killed while its kernel still ran can leave the daemon refusing
# every later client (context creation fails with CUDA_ERROR_LAUNCH_FAILED or
# CUDA_ERROR_UNKNOWN, seen on an H100 after a hung example was stopped): a
# script restarts it after a failed case so that one hang does not fail the
# cases after it.
mps_restart() {
  if [ "$MPS_STARTED" = 1 ]; then
    mps_stop
    sleep 1
    mps_start
  fi
}
