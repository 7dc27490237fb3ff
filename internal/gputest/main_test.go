package gputest

import (
	"fmt"
	"os"
	"testing"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/gpunetio/leaktest"
)

// emuModelEnv is the emulator's NIC model variable (internal/mlx5/emu.EnvModel).
const emuModelEnv = "GDAKI_EMU_MODEL"

// TestMain records where every verbs, gpunetio and CUDA object is made and
// fails the package when a test leaves one open, naming each and its stack;
// not after a kernel was abandoned (a timed-out kernel may still use the
// shared environment, which is then left to the process exit).
func TestMain(m *testing.M) {
	if os.Getenv(emuModelEnv) == "" {
		// Before any emulated NIC is opened: cx8 adds the no-DBR SQ mode and
		// behaves as cx7 otherwise.
		os.Setenv(emuModelEnv, "cx8")
	}
	gpunetio.RecordStacks(true) // and verbs', and cuda's
	code := m.Run()
	if err := closeShared(); err != nil {
		fmt.Fprintf(os.Stderr, "gputest: release the shared GPU environment: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	if !sharedAbandoned() {
		code = leaktest.Check(code, os.Stderr)
	}
	os.Exit(code)
}
