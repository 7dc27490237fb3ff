package gpurun

import (
	"testing"

	"github.com/gdaki/gpunetio/gpunetio/leaktest"
)

// TestMain records where every verbs, gpunetio and CUDA object is made and
// fails the package when a test leaves one open, naming each and its stack.
func TestMain(m *testing.M) { leaktest.Main(m) }
