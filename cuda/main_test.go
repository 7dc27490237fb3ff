package cuda

import (
	"os"
	"testing"

	"github.com/gdaki/gpunetio/internal/callstack"
)

// testLibraryEnv, when set, replaces the driver library name before any
// test runs; the no-driver test re-executes the test binary with it pointing
// at a file that does not exist.
const testLibraryEnv = "GPUNETIO_CUDA_TEST_LIBRARY"

// TestMain records the creating stack of every CUDA object and fails the run
// when any Context, or anything made through one, is still live at the end,
// naming each object and where it was created.
func TestMain(m *testing.M) {
	if lib := os.Getenv(testLibraryEnv); lib != "" {
		libraryName = lib
	}
	RecordStacks(true)
	os.Exit(callstack.FailOnLeaks(m.Run(), os.Stderr, LeakReport()))
}
