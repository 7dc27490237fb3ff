package apicheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeSnippets holds README.md's code to the sources it shows: the
// host-side taste is verbs' runnable ExampleQP_PostSend, the kernel-side
// taste the quickstart's kernel. Each fenced block under those headings
// must appear, byte for byte, in its source file.
func TestReadmeSnippets(t *testing.T) {
	root := moduleRoot(t, goCommand(t))
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	for _, c := range []struct{ heading, fence, source string }{
		{"## A taste: the host side", "```go\n", "verbs/connect_example_test.go"},
		{"## A taste: the kernel side", "```cuda\n", "examples/quickstart/kernel.cu"},
	} {
		block := fenced(string(readme), c.heading, c.fence)
		require.NotEmpty(t, block, "README.md: no %s block under %q", strings.TrimSpace(c.fence), c.heading)
		src, err := os.ReadFile(filepath.Join(root, c.source))
		require.NoError(t, err)
		if !strings.Contains(string(src), block) {
			t.Errorf("README.md: the block under %q is not in %s any more: copy the code again", c.heading, c.source)
		}
	}
}

// fenced returns the first block opened by fence after heading in s, up to
// its closing fence, or "".
func fenced(s, heading, fence string) string {
	i := strings.Index(s, "\n"+heading+"\n")
	if i < 0 {
		return ""
	}
	s = s[i:]
	j := strings.Index(s, "\n"+fence)
	if j < 0 {
		return ""
	}
	s = s[j+1+len(fence):]
	k := strings.Index(s, "\n```\n")
	if k < 0 {
		return ""
	}
	return s[:k+1]
}
