# gdaki/gpunetio build entry points. See README.md.
SHELL := /bin/bash
GO ?= go
# nvcc and its flags (architectures, dialect, include directories, the
# toolkit's defines) come from scripts/cuda-env.sh; set NVCC, NVCC_ARCH or
# NVCC_FLAGS on the command line or in the environment to override them.
NVCC ?= $(shell bash scripts/cuda-env.sh nvcc)
export NVCC NVCC_ARCH NVCC_FLAGS
STATICCHECK_VERSION ?= v0.6.1
FUZZTIME ?= 10s
# Rebuild the cgo packages that include cuda/include whenever a header changes
# (Go's cache does not track headers outside a package; see scripts/headers-sum.sh).
export CGO_CPPFLAGS := $(CGO_CPPFLAGS) -DGDAKI_HEADERS_SUM=0x$(shell bash scripts/headers-sum.sh)

# $(call with_nvcc,SCRIPT,WHAT): runs SCRIPT where nvcc exists, else a note
# that says WHAT did not happen.
with_nvcc = $(if $(NVCC),bash $(1),echo "note: nvcc not found: $(2)")

.PHONY: all build kernels test test-short lint fuzz gpu-build gpu-test demo headers-check clean

all: build kernels

build:
	$(GO) build ./...

# CUDA kernels (examples/*/kernel.cu, the quickstart's included, and the GPU
# tests' cuda/test/*.cu) are built only where nvcc exists.
kernels:
	@$(call with_nvcc,scripts/build-kernels.sh,CUDA kernels not built (Go packages and commands are). Install the CUDA toolkit to build them.)

# The CI suite: every Go test with the race detector, on the emulated devices
# (go vet runs in lint).
test:
	$(GO) test -race -vet=off -count=1 -timeout 25m ./...

test-short:
	$(GO) test -count=1 -short ./...

# Compile every device header and kernel with nvcc (no GPU needed).
headers-check:
	@$(call with_nvcc,scripts/headers-check.sh,header compile check skipped)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# Run every fuzz target for FUZZTIME each.
fuzz:
	@bash scripts/fuzz.sh $(FUZZTIME)

# Test binaries and programs for the GPU suite, built where Go is.
gpu-build:
	@bash scripts/gpu-build.sh

# The GPU suite: needs a GPU, nvcc and the CUDA driver (and Go, or a build/
# made by gpu-build).
gpu-test:
	@bash scripts/gpu-test.sh

# The put_bw exchange over the emulated NICs emu0 and emu1: server and client
# on one GPU when there is one; otherwise (or with DEMO_CPU=1) the CPU-driven
# run, CPU threads posting through the device API compiled as host C++
# (internal/cpudemo). Non-zero exit on failure. See scripts/demo.sh.
demo:
	@bash scripts/demo.sh

clean:
	rm -rf build
