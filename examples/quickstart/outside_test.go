package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutsideModuleBuild proves that a user's own module can build the
// quickstart: it copies the program (main.go and kernel.cu, not the tests)
// into a new module in a temporary directory, which requires this library
// through a replace directive pointing at this checkout, and builds it
// offline (GOFLAGS=-mod=mod, GOPROXY=off: the module cache only). Go refuses
// a use of an internal package from another module, so this fails if the
// quickstart needs anything that is not public. The binary it builds must
// start and print its usage.
func TestOutsideModuleBuild(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not on PATH: %v", err)
	}
	mod, err := exec.Command(goTool, "list", "-m", "-f", "{{.Dir}}\t{{.Path}}").Output()
	require.NoError(t, err, "go list -m: this library's directory and module path")
	root, modPath, ok := strings.Cut(strings.TrimSpace(string(mod)), "\t")
	require.True(t, ok, "go list -m printed %q", mod)
	dir := t.TempDir()
	for _, name := range []string{"main.go", "kernel.cu"} {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	goMod := "module example.com/gdakiuser\n\ngo 1.22\n\nrequire " + modPath + " v0.0.0\n\nreplace " + modPath + " => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644))
	// The library's checksums cover every module the user's build needs.
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644))

	bin := filepath.Join(dir, "quickstart")
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if m := regexp.MustCompile(`(\S+@\S+): module lookup disabled by GOPROXY=off`).FindSubmatch(out); m != nil {
			t.Skipf("module %s is not in the module cache (the build is offline)", m[1])
		}
		t.Fatalf("the quickstart does not build in a module of its own: %v\n%s", err, out)
	}
	assert.NotContains(t, string(out), "internal", "no warning about internal packages")

	usage, err := exec.Command(bin, "-h").CombinedOutput()
	require.NoError(t, err, "%s", usage)
	for _, flag := range []string{"-g", "-a", "-b", "-image"} {
		assert.Contains(t, string(usage), "  "+flag+" ", "usage lists %s", flag)
	}
}
