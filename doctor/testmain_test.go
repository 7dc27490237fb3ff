package doctor

import (
	"testing"

	"github.com/gdaki/gpunetio/gpunetio/leaktest"
)

// TestMain fails the package when a test (the host probe opens emulated
// devices) leaves a verbs, gpunetio or CUDA object open.
func TestMain(m *testing.M) { leaktest.Main(m) }
