// Package leakcheck is the TestMain of the packages whose tests make verbs,
// gpunetio or CUDA objects (packages verbs and gpunetio have their own,
// which cannot import this one): it records where every object is made and
// fails the test binary when one is left open, naming each and its stack,
// the habit of cilium/ebpf's fd leak checks.
package leakcheck

import (
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

// Main runs the tests with stack recording on and exits: with the tests'
// status, or 1 when they passed but an object is still open.
//
//	func TestMain(m *testing.M) { leakcheck.Main(m) }
func Main(m *testing.M) {
	gpunetio.RecordStacks(true) // and verbs', and cuda's
	os.Exit(check(m.Run(), os.Stderr))
}

// check prints every leak report to w and returns the exit status.
func check(code int, w io.Writer) int {
	for _, r := range Reports() {
		fmt.Fprintln(w, r)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Reports returns the non-empty leak reports of packages gpunetio, verbs
// and cuda.
func Reports() []string {
	var out []string
	for _, r := range []string{gpunetio.LeakReport(), verbs.LeakReport(), cuda.LeakReport()} {
		if r != "" {
			out = append(out, r)
		}
	}
	return out
}
