#!/usr/bin/env bash
# Builds, on a machine with Go, everything the GPU suite runs on a machine
# without Go: the test binaries of the packages that have GPU tests (into
# build/tests/, named after the package path) and the example programs, the
# quickstart among them (into build/bin/). Carry build/ to the GPU machine and
# run scripts/gpu-test.sh.
#
# A package belongs to the GPU suite when its directory holds a GPU_TESTS
# marker file (internal/gpuskip's test checks that every package whose tests
# use gpuskip has one).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/tests build/bin
rm -f build/tests/*.test
export CGO_CPPFLAGS="${CGO_CPPFLAGS:-} -DGDAKI_HEADERS_SUM=0x$(bash scripts/headers-sum.sh)"
root=$PWD
pkgs=()
while read -r dir; do
	[ -f "$dir/GPU_TESTS" ] && pkgs+=("./${dir#"$root"/}")
done < <(go list -f '{{.Dir}}' ./...)
if [ "${#pkgs[@]}" -eq 0 ]; then
	echo "gpu-build: no package carries a GPU_TESTS marker" >&2
	exit 1
fi
for p in "${pkgs[@]}"; do
	name=$(echo "${p#./}" | tr / _)
	go test -c -ldflags="-s -w" -o "build/tests/$name.test" "$p"
done
for d in examples/*/; do
	[ -f "$d/main.go" ] || continue
	go build -ldflags="-s -w" -o "build/bin/$(basename "$d")" "./$d"
done
go build -ldflags="-s -w" -o build/bin/gpunetio ./cmd/gpunetio
go build -ldflags="-s -w" -o build/bin/emubench ./internal/emubench
echo "gpu-build: $(ls build/tests | wc -l) test binaries (${pkgs[*]}), $(ls build/bin | wc -l) programs"
