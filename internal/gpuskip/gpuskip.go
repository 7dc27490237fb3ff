// Package gpuskip is how a GPU test gives up on a machine without what it
// needs (a GPU, the CUDA driver, a CUDA device, libnvrtc, the built
// kernels). Such a test calls Skip or Skipf instead of t.Skip: in CI they
// skip with the test's message, as t.Skip does; on the GPU machine, where
// scripts/gpu-test.sh sets GDAKI_GPU_STRICT=1, the same call fails the test,
// so a GPU suite cannot turn green because its tests quietly skipped (a
// driver that stopped loading, a kernel image that was not built).
//
// Skips for other reasons (a feature the device lacks, a test that only
// runs as a child process) keep using t.Skip: strict mode is about the GPU
// environment being there, not about every optional path.
//
// The packages whose tests use it carry a GPU_TESTS marker file, which
// scripts/gpu-build.sh reads to build their test binaries for the GPU
// suite; the package's test checks that no such package lacks the marker.
package gpuskip

import (
	"fmt"
	"os"
	"testing"
)

// Env is the environment variable that turns GPU skips into failures when
// set to 1.
const Env = "GDAKI_GPU_STRICT"

// Strict reports whether GPU skips fail the test (GDAKI_GPU_STRICT=1).
func Strict() bool { return os.Getenv(Env) == "1" }

// Skip skips t with the message made of args (as t.Skip formats them), or,
// in strict mode, fails it with that message.
func Skip(t testing.TB, args ...any) {
	t.Helper()
	msg := fmt.Sprint(args...)
	if Strict() {
		t.Fatalf("%s=1 and this GPU test would skip: %s", Env, msg)
		return
	}
	t.Skip(msg)
}

// Skipf is Skip with a format.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	Skip(t, fmt.Sprintf(format, args...))
}
