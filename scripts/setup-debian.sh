#!/usr/bin/env bash
# Installs what building and testing gdaki/gpunetio needs on Debian 12 (as root,
# or with sudo): a C compiler for cgo, rdma-core's headers and libraries, and
# optionally (WITH_CUDA=1) Debian's CUDA 11.8 toolkit from non-free, to compile
# the device headers and kernels without a GPU. Go itself must already be on PATH.
set -euo pipefail
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
pkgs=(gcc g++ make pkg-config libibverbs-dev rdma-core ibverbs-providers iproute2)
if [ "${WITH_CUDA:-0}" = 1 ]; then
  src=/etc/apt/sources.list.d/debian.sources
  if [ -f "$src" ] && ! grep -q non-free "$src"; then
    $SUDO sed -i 's/^Components: main$/Components: main contrib non-free/' "$src"
  fi
  pkgs+=(nvidia-cuda-toolkit)
fi
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
command -v go >/dev/null || { echo "setup: Go is not on PATH; install Go >= 1.22" >&2; exit 1; }
echo "setup: ok ($(go version), $(gcc --version | head -1))"
