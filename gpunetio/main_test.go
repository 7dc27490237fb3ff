package gpunetio

import (
	"os"
	"testing"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/callstack"
	"github.com/gdaki/gpunetio/internal/docasdk"
	"github.com/gdaki/gpunetio/internal/mlx5/emu"
	"github.com/gdaki/gpunetio/verbs"
)

// TestMain makes the emulated devices ConnectX-8 class (so NO_DBR_EXT QPs
// can be made; DBR_VALID QPs work as on ConnectX-7), records where every
// object is made, and fails the package when a test leaves an object of
// this package, of package verbs or of package cuda open, naming each one
// and the stack that made it.
func TestMain(m *testing.M) {
	if os.Getenv(emu.EnvModel) == "" {
		os.Setenv(emu.EnvModel, "cx8")
	}
	if os.Getenv(sdkChildEnv) != "" {
		// A child of TestSDKMode: SDK mode on the stand-in SDK, emulated
		// devices with stand-in PDs.
		docasdk.SetStandInPDs(true)
	} else {
		os.Unsetenv(docasdk.EnvLibPath)
	}
	RecordStacks(true)
	os.Exit(callstack.FailOnLeaks(m.Run(), os.Stderr, LeakReport(), verbs.LeakReport(), cuda.LeakReport()))
}
