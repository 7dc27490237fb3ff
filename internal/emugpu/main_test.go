package emugpu

import (
	"fmt"
	"os"
	"testing"

	"github.com/gdaki/gpunetio/cuda"
)

// TestMain fails the run when a CUDA context or anything made through one is
// left live, naming each object and the stack that created it.
func TestMain(m *testing.M) {
	cuda.RecordStacks(true)
	code := m.Run()
	if r := cuda.LeakReport(); r != "" {
		fmt.Fprintln(os.Stderr, r)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
