package verbs

import (
	"os"
	"testing"

	"github.com/gdaki/gpunetio/internal/callstack"

	"github.com/gdaki/gpunetio/internal/docasdk"
)

// TestMain records where every object is created and fails the package
// when a test leaves an object open or a Hold unreleased, naming each one
// and the stack that made it. Run as a child of TestSDKMode (sdkChildEnv
// set), the binary runs in SDK mode on the stand-in SDK, on emulated
// devices (stand-in PDs).
func TestMain(m *testing.M) {
	RecordStacks(true)
	if os.Getenv(sdkChildEnv) != "" {
		docasdk.SetStandInPDs(true)
	} else {
		// Everything else runs in open mode, whatever the environment says.
		os.Unsetenv(docasdk.EnvLibPath)
	}
	os.Exit(callstack.FailOnLeaks(m.Run(), os.Stderr, LeakReport()))
}
