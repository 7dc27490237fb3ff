package gpunetio

import (
	"fmt"
	"os"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5/emu"
	"github.com/gdaki/gpunetio/verbs"
)

// TestMain makes the emulated devices ConnectX-8 class (so NO_DBR_EXT QPs
// can be made; DBR_VALID QPs work as on ConnectX-7) and fails the package
// when a test leaves verbs objects open.
func TestMain(m *testing.M) {
	if os.Getenv(emu.EnvModel) == "" {
		os.Setenv(emu.EnvModel, "cx8")
	}
	code := m.Run()
	if code == 0 {
		if r := verbs.LeakReport(); r != "" {
			fmt.Fprintln(os.Stderr, r)
			code = 1
		}
	}
	os.Exit(code)
}
