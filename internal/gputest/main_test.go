package gputest

import (
	"fmt"
	"os"
	"testing"

	"github.com/gdaki/gpunetio/verbs"
)

// emuModelEnv is the emulator's NIC model variable (internal/mlx5/emu.EnvModel).
const emuModelEnv = "GDAKI_EMU_MODEL"

func TestMain(m *testing.M) {
	if os.Getenv(emuModelEnv) == "" {
		// Before any emulated NIC is opened: cx8 adds the no-DBR SQ mode and
		// behaves as cx7 otherwise.
		os.Setenv(emuModelEnv, "cx8")
	}
	code := m.Run()
	if err := closeShared(); err != nil {
		fmt.Fprintf(os.Stderr, "gputest: release the shared GPU environment: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	if code == 0 && !sharedAbandoned() {
		if r := verbs.LeakReport(); r != "" {
			fmt.Fprintln(os.Stderr, r)
			code = 1
		}
	}
	os.Exit(code)
}
