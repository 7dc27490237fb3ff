package cuda

import (
	"os"
	"testing"
)

// testLibraryEnv, when set, replaces the driver library name before any
// test runs; the no-driver test re-executes the test binary with it pointing
// at a file that does not exist.
const testLibraryEnv = "GPUNETIO_CUDA_TEST_LIBRARY"

func TestMain(m *testing.M) {
	if lib := os.Getenv(testLibraryEnv); lib != "" {
		libraryName = lib
	}
	os.Exit(m.Run())
}
