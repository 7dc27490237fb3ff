package apicheck

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every kind of problem is found, and a correct map has none.
func TestFuncMapProblems(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\ntype T struct{ F, g int }\n\nfunc (*T) M() {}\nfunc (T) N() {}\nfunc G() {}\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc H() {}\n"), 0o644))
	names, err := GoNames(dir)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"T": true, "T.F": true, "T.g": true, "T.M": true, "T.N": true, "G": true}, names)

	list := filepath.Join(dir, "list.txt")
	require.NoError(t, os.WriteFile(list, []byte("# C functions\nc_g\n\n  c_m  \nc_f\n"), 0o644))
	want, err := ReadNames(list)
	require.NoError(t, err)
	assert.Equal(t, []string{"c_g", "c_m", "c_f"}, want)

	good := []struct{ C, Go string }{{"c_g", "G"}, {"c_m", "T.M"}, {"c_f", "T.F"}}
	assert.Empty(t, FuncMapProblems(good, want, names))
	bad := []struct{ C, Go string }{{"c_g", "G"}, {"c_g", "G"}, {"c_x", "T.M"}, {"c_m", "T.Nope"}}
	assert.Equal(t, []string{
		"c_g mapped twice",
		"c_x is not a function of the API",
		"c_m maps to T.Nope, which does not exist",
		"C function c_f has no Go counterpart",
	}, FuncMapProblems(bad, want, names))

	_, err = ReadNames(filepath.Join(dir, "missing.txt"))
	assert.Error(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.go"), []byte("package p\nfunc (\n"), 0o644))
	_, err = GoNames(dir)
	assert.ErrorContains(t, err, "parse")
}

type codeErr struct {
	code string
	err  error
}

func (e *codeErr) Error() string { return e.code }
func (e *codeErr) Unwrap() error { return e.err }

// Outcome names the codes of every error of the type asked for, outermost
// first, and skips the others.
func TestOutcome(t *testing.T) {
	name := func(e *codeErr) string { return e.code }
	assert.Equal(t, "ok 3 QPs", Outcome(nil, "3 QPs", name))
	inner := &codeErr{code: "DOCA_ERROR_DRIVER", err: os.ErrNotExist}
	outer := &codeErr{code: "DOCA_ERROR_INITIALIZATION", err: fmt.Errorf("wrapped: %w", inner)}
	assert.Equal(t, "error DOCA_ERROR_INITIALIZATION/DOCA_ERROR_DRIVER", Outcome(outer, "x", name))
	assert.Equal(t, "error ", Outcome(os.ErrNotExist, "x", name))
}
