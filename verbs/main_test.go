package verbs

import (
	"fmt"
	"os"
	"testing"

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
	code := m.Run()
	if r := LeakReport(); r != "" {
		fmt.Fprintln(os.Stderr, r)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
