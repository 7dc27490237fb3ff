package main

import (
	"os"
	"testing"

	"github.com/gdaki/gpunetio/gpunetio/leaktest"
	"github.com/gdaki/gpunetio/verbs"
)

// TestMain records where every verbs, gpunetio and CUDA object is made and
// fails the package when a test leaves one open, naming each and its stack.
func TestMain(m *testing.M) {
	os.Unsetenv(verbs.EnvSDKLibPath) // the tests expect open mode
	leaktest.Main(m)
}
