#!/usr/bin/env bash
# Prints a short digest of the device headers (cuda/include) and the family
# corpus internal/devhost compiles (cuda/test/corpus). Go's build cache
# does not see C headers outside a package's own directory, so a cgo package
# that includes cuda/include (internal/devhost, internal/devstruct,
# internal/hdrcheck) would keep a stale build after a header edit. The
# Makefile and gpu-build.sh put this digest in CGO_CPPFLAGS, which is part of
# every cgo build's cache key.
set -euo pipefail
cd "$(dirname "$0")/.."
find cuda/include cuda/test/corpus -type f -print0 | LC_ALL=C sort -z | xargs -0 cat | sha256sum | cut -c1-16
