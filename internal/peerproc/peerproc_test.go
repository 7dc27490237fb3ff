package peerproc

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

const childEnv = "PEERPROC_TEST_CHILD"

// TestChildSide echoes what the parent sends, upper-cased, and ignores
// lines of another tag; it runs only as the child of TestParentSide.
func TestChildSide(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		t.Skip("runs only as the peer process of TestParentSide")
	}
	Say("PP", "HELLO %d", 7)
	Serve("PP", func(word string, args []string) {
		Say("PP", "%s %s", word, strings.ToUpper(strings.Join(args, " ")))
	})
}

// The parent sees the child's lines in order, with the words after the
// first; the child stops on QUIT at cleanup and exits 0.
func TestParentSide(t *testing.T) {
	p := Start(t, "PP", "TestChildSide", childEnv+"=1")
	assert.Equal(t, []string{"7"}, p.Expect(t, "HELLO"))
	p.Send("OTHER x")
	assert.Equal(t, []string{"X"}, p.Expect(t, "OTHER"))
	p.Send("ECHO a b")
	assert.Equal(t, []string{"A", "B"}, p.Expect(t, "ECHO"))
}
