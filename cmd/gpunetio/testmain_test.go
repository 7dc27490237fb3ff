package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

// TestMain records where every verbs, gpunetio and CUDA object is made and
// fails the package when a test leaves one open, naming each and its stack.
// (Written out rather than shared: this tree imports public packages only.)
func TestMain(m *testing.M) {
	gpunetio.RecordStacks(true)      // and verbs', and cuda's
	os.Unsetenv(verbs.EnvSDKLibPath) // the tests expect open mode
	code := m.Run()
	for _, r := range []string{gpunetio.LeakReport(), verbs.LeakReport(), cuda.LeakReport()} {
		if r != "" {
			fmt.Fprintln(os.Stderr, r)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}
