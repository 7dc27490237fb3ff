#!/usr/bin/env bash
# Builds, on a machine with Go, everything the GPU suite runs on a machine
# without Go: test binaries of the packages that have GPU tests (into
# build/tests/, named after the package path) and the example programs, the
# quickstart among them (into build/bin/). Carry build/ to the GPU machine and
# run scripts/gpu-test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/tests build/bin
export CGO_CPPFLAGS="${CGO_CPPFLAGS:-} -DGDAKI_HEADERS_SUM=0x$(bash scripts/headers-sum.sh)"
pkgs=(./cuda ./internal/emugpu ./gpunetio ./internal/gputest ./internal/integration ./internal/devhost ./internal/mlx5/emu ./verbs)
for p in "${pkgs[@]}"; do
  [ -d "$p" ] || continue
  name=$(echo "${p#./}" | tr / _)
  go test -c -ldflags="-s -w" -o "build/tests/$name.test" "$p"
done
for d in examples/*/; do
  [ -f "$d/main.go" ] || continue
  go build -ldflags="-s -w" -o "build/bin/$(basename "$d")" "./$d"
done
go build -ldflags="-s -w" -o build/bin/gpunetio ./cmd/gpunetio
go build -ldflags="-s -w" -o build/bin/emubench ./internal/emubench
echo "gpu-build: $(ls build/tests | wc -l) test binaries, $(ls build/bin | wc -l) programs"
