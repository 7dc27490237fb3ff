package verbs

import (
	"fmt"
	"os"
	"testing"
)

// TestMain fails the package when a test leaves verbs objects open.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if r := LeakReport(); r != "" {
			fmt.Fprintln(os.Stderr, r)
			code = 1
		}
	}
	os.Exit(code)
}
