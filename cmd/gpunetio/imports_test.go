package main

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// importRules says which of this module's internal packages the Go files of
// a directory tree may import: the commands and examples are written the way
// a user's program is, so they may use public packages only; the examples
// share their flags, tables and TCP transport through examples/internal,
// which itself uses public packages only. A file must obey every rule whose
// root contains it. Paths are slash-separated and relative to the module
// root; an allowed entry admits that package and the packages below it.
var importRules = []struct {
	root    string
	allowed []string
}{
	{root: "cmd"},
	{root: "examples", allowed: []string{"examples/internal"}},
	{root: "examples/internal", allowed: []string{"examples/internal"}},
}

// TestNoInternalImports fails when a Go file (tests included) under a rule's
// root imports an internal package of this module that the rule does not
// allow.
func TestNoInternalImports(t *testing.T) {
	modRoot, modPath := findModule(t)
	for _, r := range importRules {
		bad, n, err := internalImports(modRoot, modPath, r.root, r.allowed)
		require.NoError(t, err, r.root)
		assert.NotZero(t, n, "no Go file under %s: is the root right?", r.root)
		assert.Empty(t, bad, "files under %s import internal packages", r.root)
	}
}

// The check itself finds what it must, and only that.
func TestInternalImportsCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(p, src string) {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(src), 0o644))
	}
	const mod = "example.com/m"
	write("app/main.go", "package main\nimport (\n\t\"fmt\"\n\t\"example.com/m/verbs\"\n\tx \"example.com/m/internal/cuda\"\n)\n")
	write("app/sub/a_test.go", "package sub\nimport _ \"example.com/m/internal\"\n")
	write("app/ok.go", "package main\nimport \"example.com/m/app/internal/helper\"\n")
	write("app/internal/helper/h.go", "package helper\nimport \"example.com/m/internalish\"\n")
	write("app/other.go", "package main\nimport \"example.com/other/internal/x\"\n")  // another module's
	write("app/testdata/t.go", "package t\nimport \"example.com/m/internal/cuda\"\n") // not built by go
	write("app/.hidden/h.go", "package h\nimport \"example.com/m/internal/cuda\"\n")
	write("app/nogo.txt", "import \"example.com/m/internal/cuda\"\n")

	bad, n, err := internalImports(dir, mod, "app", []string{"app/internal"})
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	assert.Equal(t, []string{
		"app/main.go imports example.com/m/internal/cuda",
		"app/sub/a_test.go imports example.com/m/internal",
	}, bad)

	bad, _, err = internalImports(dir, mod, "app", nil)
	require.NoError(t, err)
	assert.Contains(t, bad, "app/ok.go imports example.com/m/app/internal/helper")

	// The examples' rules: their shared helpers may not reach into the
	// library's internals either.
	write("app/internal/helper/bad.go", "package helper\nimport \"example.com/m/internal/devhost\"\n")
	bad, _, err = internalImports(dir, mod, "app/internal", []string{"app/internal"})
	require.NoError(t, err)
	assert.Equal(t, []string{"app/internal/helper/bad.go imports example.com/m/internal/devhost"}, bad)
	require.NoError(t, os.Remove(filepath.Join(dir, "app", "internal", "helper", "bad.go")))

	write("app/broken.go", "package main\nimport (\n")
	_, _, err = internalImports(dir, mod, "app", nil)
	assert.ErrorContains(t, err, "broken.go")
	_, _, err = internalImports(dir, mod, "nope", nil)
	assert.Error(t, err)
}

// internalImports lists, as "FILE imports PATH", every import of an internal
// package of module modPath by a Go file under root that allowed does not
// admit, and counts the Go files it read. It skips what the go command
// skips: testdata and directories whose name starts with '.' or '_'.
func internalImports(modRoot, modPath, root string, allowed []string) (bad []string, files int, err error) {
	err = filepath.WalkDir(filepath.Join(modRoot, filepath.FromSlash(root)), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != filepath.Join(modRoot, filepath.FromSlash(root)) && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(modRoot, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return fmt.Errorf("parse %s: %w", rel, err)
		}
		files++
		for _, imp := range f.Imports {
			ip, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: import %s: %w", rel, imp.Path.Value, err)
			}
			if forbidden(modPath, ip, allowed) {
				bad = append(bad, rel+" imports "+ip)
			}
		}
		return nil
	})
	return bad, files, err
}

// forbidden reports whether ip is an internal package of module modPath that
// no entry of allowed admits.
func forbidden(modPath, ip string, allowed []string) bool {
	rel, ok := strings.CutPrefix(ip, modPath+"/")
	if !ok {
		return false
	}
	internal := false
	for _, e := range strings.Split(rel, "/") {
		internal = internal || e == "internal"
	}
	if !internal {
		return false
	}
	for _, a := range allowed {
		a = path.Clean(a)
		if rel == a || strings.HasPrefix(rel, a+"/") {
			return false
		}
	}
	return true
}

// findModule returns the directory holding go.mod (from the test's working
// directory up) and the module path it declares.
func findModule(t *testing.T) (dir, modPath string) {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
					return dir, strings.Trim(strings.TrimSpace(m), `"`)
				}
			}
			t.Fatalf("no module line in %s/go.mod", dir)
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "go.mod not found")
		dir = parent
	}
}
