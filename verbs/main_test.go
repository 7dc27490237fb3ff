package verbs

import (
	"fmt"
	"os"
	"testing"
)

// TestMain records where every object is created and fails the package
// when a test leaves an object open or a Hold unreleased, naming each one
// and the stack that made it.
func TestMain(m *testing.M) {
	RecordStacks(true)
	code := m.Run()
	if r := LeakReport(); r != "" {
		fmt.Fprintln(os.Stderr, r)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
