package apicheck

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// narrative matches words that tell how and when the code was built
// rather than what it does: working sessions and their ordinals, helpers
// and their branches, "this change", work logs. The repository's texts
// (README, docs, comments, test names and messages) say what the code does
// and what was measured; the history is git's. The patterns stay narrow:
// "round" (an engine round, a round trip) and "helper" (a helper
// function) are plain technical words and are not caught on their own.
var narrative = regexp.MustCompile(`(?i:\bsessions?\b|\bsession's\b)` +
	`|(?i:\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|[0-9]+(st|nd|rd|th)) (round of work|working day)\b)` +
	`|(?i:\bhelpers? h[0-9]+\b|\bbranch h[0-9]+\b)` +
	`|(?i:\bthis (change|commit|session|PR|patch)\b)` +
	`|(?i:\bround of work\b|\bwork ?log\b|\bclosing note\b)` +
	`|\bI (saw|measured|ran|tried|found|think|believe)\b`)

// narrativeAllowed reports whether the match at line[i:j] is a technical
// use: an identifier (NVML's session function in doctor, called as
// session( or .session).
func narrativeAllowed(line string, i, j int) bool {
	m := strings.ToLower(line[i:j])
	if m != "session" {
		return false
	}
	return j < len(line) && line[j] == '(' || i > 0 && line[i-1] == '.'
}

// findNarrative returns each narrative phrase of text as "N: phrase".
func findNarrative(text []byte) []string {
	var hits []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		for _, loc := range narrative.FindAllStringIndex(line, -1) {
			if !narrativeAllowed(line, loc[0], loc[1]) {
				hits = append(hits, itoa(n)+": "+line[loc[0]:loc[1]])
			}
		}
	}
	return hits
}

// narrativeFile reports whether name is a text the guard reads.
func narrativeFile(name string) bool {
	switch filepath.Ext(name) {
	case ".go", ".c", ".h", ".cu", ".cuh", ".cpp", ".sh", ".md", ".txt", ".py", ".prm", ".s", ".mod":
		return true
	}
	base := filepath.Base(name)
	return base == "Makefile" || base == "run" || base == "GPU_TESTS"
}

// TestNoWorkNarrative is the guard over every tracked text of the
// repository (git ls-files).
func TestNoWorkNarrative(t *testing.T) {
	root := moduleRoot(t, goCommand(t))
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not on PATH: the guard lists the tracked files with git ls-files")
	}
	cmd := exec.Command(git, "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("git ls-files in %s: %v (not a git checkout)", root, err)
	}
	var bad []string
	files := 0
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if !narrativeFile(name) || filepath.Base(name) == "narrative_test.go" {
			continue
		}
		text, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			continue // listed but deleted in the working tree
		}
		files++
		for _, h := range findNarrative(text) {
			bad = append(bad, name+":"+h)
		}
	}
	require.Greater(t, files, 100, "git ls-files must list the repository's sources")
	if len(bad) > 0 {
		t.Errorf("%d phrases tell how the code was built, not what it does (say what the code does or what was measured; the history is git's):\n\t%s",
			len(bad), strings.Join(bad, "\n\t"))
	}
}

// TestNarrativePattern: the guard catches what it is meant to and lets
// technical uses of the same words through.
func TestNarrativePattern(t *testing.T) {
	for _, s := range []string{
		"the twelfth session's changes", "an earlier session saw no change", "Session of 2026-11-24",
		"(helper h25)", "merged from branch h25", "measured before this change", "the figures I saw",
		"a work log", "the closing note", "the third round of work",
	} {
		if len(findNarrative([]byte(s))) == 0 {
			t.Errorf("%q is not caught", s)
		}
	}
	for _, s := range []string{
		"func (NVML) session(f func() error) error {", "err := n.session(func() error {",
		"one round of the engine", "a second round trip", "the first round's doorbells",
		"a helper that grows a slice", "the ninth watch is refused", "an eighth of the cost",
		"the H100 host", "h25 := x", "I/O error", "index I",
	} {
		if h := findNarrative([]byte(s)); len(h) > 0 {
			t.Errorf("%q is caught (%v) but is fine", s, h)
		}
	}
	got := findNarrative([]byte("line one\nthe eleventh session ran it\n"))
	require.Equal(t, []string{"2: session"}, got, "the hit names its line and phrase")
}
