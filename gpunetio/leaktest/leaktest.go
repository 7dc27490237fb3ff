// Package leaktest fails a test binary that leaves a verbs, gpunetio or
// CUDA object open, naming each object and the stack that made it (the
// habit of cilium/ebpf's file-descriptor leak checks). A package whose
// tests make such objects uses it as its TestMain:
//
//	func TestMain(m *testing.M) { leaktest.Main(m) }
package leaktest

import (
	"io"
	"os"
	"testing"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/internal/callstack"
	"github.com/gdaki/gpunetio/verbs"
)

// Main turns on stack recording (gpunetio.RecordStacks, which covers verbs
// and cuda too), runs the tests and exits: with the tests' status, or 1
// when they passed but an object is still open, after printing the leak
// reports to standard error.
func Main(m *testing.M) {
	gpunetio.RecordStacks(true)
	os.Exit(Check(m.Run(), os.Stderr))
}

// Check prints every non-empty leak report to w and returns code, or 1 when
// code is 0 and an object is still open. A TestMain that does more than
// Main (releases shared fixtures first, say) ends with
// os.Exit(leaktest.Check(code, os.Stderr)).
func Check(code int, w io.Writer) int {
	return callstack.FailOnLeaks(code, w, Reports()...)
}

// Reports returns the non-empty leak reports of packages gpunetio, verbs
// and cuda (gpunetio.LeakReport, verbs.LeakReport, cuda.LeakReport), in
// that order.
func Reports() []string {
	var out []string
	for _, r := range []string{gpunetio.LeakReport(), verbs.LeakReport(), cuda.LeakReport()} {
		if r != "" {
			out = append(out, r)
		}
	}
	return out
}
