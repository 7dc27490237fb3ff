package apicheck

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docRef matches references to documents that are not in the repository:
// the design notes and reference sheets this project was built from live
// elsewhere, and a comment that points at them points a reader nowhere.
// Every fact the code relies on is written down here, in the code or in
// docs/.
var docRef = regexp.MustCompile(`(?i:\b(mlx5-prm|device-api|host-api|v3-changes|post-rate-anchor)\.md\b)` +
	`|\.\./shared\b|\bshared/reference\b|\bSTYLE\.md\b` +
	`|(?i:\bdecision )[DH][0-9]{1,2}\b|\([DH][0-9]{1,2}\)|\b[DH][0-9]{1,2}:|§` +
	`|(?i:\bfact sheet\b)`)

// TestNoReferencesOutsideRepository is the guard for that rule over every
// source, script and document of the repository.
func TestNoReferencesOutsideRepository(t *testing.T) {
	root := moduleRoot(t, goCommand(t))
	var bad []string
	files := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") && name != ".ci" || name == "build" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(name) {
		case ".go", ".c", ".h", ".cu", ".cuh", ".sh", ".md", ".txt", ".py":
		default:
			if name != "Makefile" && name != "run" {
				return nil
			}
		}
		files++
		if name == "docrefs_test.go" {
			return nil // the guard's own patterns and cases
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			if m := docRef.FindString(sc.Text()); m != "" {
				rel, _ := filepath.Rel(root, path)
				bad = append(bad, rel+":"+itoa(n)+": "+m)
			}
		}
		return sc.Err()
	})
	require.NoError(t, err)
	require.Greater(t, files, 100, "the walk must see the repository's sources")
	if len(bad) > 0 {
		t.Errorf("%d references to documents outside the repository (write the fact here instead):\n\t%s", len(bad), strings.Join(bad, "\n\t"))
	}
}

// TestDocRefPattern: the guard catches what it is meant to and lets plain
// text through.
func TestDocRefPattern(t *testing.T) {
	for _, s := range []string{"see mlx5-prm.md", "as ../shared/ARCHITECTURE.md says", "Decision D3", "(D5)", "H4: wait", "§3.2", "the PRM fact sheet"} {
		if !docRef.MatchString(s) {
			t.Errorf("%q is not caught", s)
		}
	}
	for _, s := range []string{"an H100 GPU", "cuMemcpyDtoD", "D2H copies", "docs/ARCHITECTURE.md", "the H200: one chip"} {
		if docRef.MatchString(s) {
			t.Errorf("%q is caught but is fine", s)
		}
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
