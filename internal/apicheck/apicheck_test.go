package apicheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModulePublicAPI is the guard: no exported identifier of any public
// package of this module may have a type from an internal package.
func TestModulePublicAPI(t *testing.T) {
	goCmd := goCommand(t)
	root := moduleRoot(t, goCmd)
	pkgs, err := Load(goCmd, root)
	require.NoError(t, err)
	var paths []string
	var all []string
	for _, p := range pkgs {
		paths = append(paths, p.Path())
		for _, v := range Check(p) {
			all = append(all, v.String())
		}
	}
	t.Logf("checked %d public packages: %s", len(paths), strings.Join(paths, ", "))
	for _, want := range []string{"github.com/gdaki/gpunetio/verbs", "github.com/gdaki/gpunetio/gpunetio"} {
		assert.Contains(t, paths, want, "the public packages must be checked")
	}
	if len(all) > 0 {
		t.Errorf("%d exported identifiers use internal types:\n\t%s", len(all), strings.Join(all, "\n\t"))
	}
}

func goCommand(t *testing.T) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(p); err != nil {
		t.Skip("the go command is not on PATH nor in GOROOT/bin: the check needs go list")
	}
	return p
}

func moduleRoot(t *testing.T, goCmd string) string {
	out, err := exec.Command(goCmd, "env", "GOMOD").Output()
	require.NoError(t, err)
	mod := strings.TrimSpace(string(out))
	require.NotEmpty(t, mod, "not inside a module")
	return filepath.Dir(mod)
}

// fakeInternal stands in for an internal package of a module.
const fakeInternal = `package x

type T int
type S struct{ A int }
type Iface interface{ N(); Leak() T }
type G[P any] struct{ V P }
func (S) Method() {}
`

// fakePublic uses the internal package in every way the checker must catch,
// and in ways it must accept.
const fakePublic = `package pub

import "example.com/m/internal/x"

// Caught.
func Result() x.T                        { return 0 }
func Param(x.T)                          {}
func Variadic(...x.T)                    {}
func PtrSliceMap() map[string][]*x.T    { return nil }
func MapKey() map[x.T]int                { return nil }
func Chan() chan x.S                     { return nil }
func FuncParam(func(x.T))                {}
var Var x.T
var VarArray [2]x.S
const Const x.T = 1
type Alias = x.T
type Struct struct {
	Field x.T
	x.S       // embedded: field S
	ok   x.T  // unexported: fine
}
type Iface interface {
	M() x.T
	x.Iface  // embedded: N is fine, Leak returns an internal type
}
type Named x.S            // a defined type: its fields come from x.S
type Promoted struct{ inner }
type inner struct{ Deep x.T }
type Generic[P interface{ ~string | x.T }] struct{}
type Inst struct{ F x.G[int] }
type UsesArg struct{ F []Wrap[x.T] }
type Wrap[P any] struct{}
func (Struct) Method() x.T               { return 0 }
func (*Struct) PtrMethod(x.S)            {}
type Embeds struct{ *hidden }
type hidden struct{}
func (*hidden) Promoted() x.T            { return 0 }
func Hands() *secret                     { return nil }
type secret struct{ Out x.T }
func (secret) M() x.S                    { return x.S{} }

// Accepted.
func Clean(int) string                   { return "" }
type CleanStruct struct{ a x.T; B int }
func (CleanStruct) unexported() x.T      { return 0 }
func unexportedFunc() x.T                { return 0 }
type local int
func Local() local                       { return 0 }
`

func TestCheckCatchesEveryUse(t *testing.T) {
	fset := token.NewFileSet()
	parse := func(name, src string) *ast.File {
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		return f
	}
	xpkg, err := (&types.Config{}).Check("example.com/m/internal/x", fset, []*ast.File{parse("x.go", fakeInternal)}, nil)
	require.NoError(t, err)
	conf := types.Config{Importer: importerFunc(func(path string) (*types.Package, error) {
		if path == xpkg.Path() {
			return xpkg, nil
		}
		return nil, fmt.Errorf("unknown import %q", path)
	})}
	pub, err := conf.Check("example.com/m/pub", fset, []*ast.File{parse("pub.go", fakePublic)}, nil)
	require.NoError(t, err)

	var got []string
	for _, v := range Check(pub) {
		got = append(got, strings.TrimPrefix(v.String(), "example.com/m/pub."))
	}
	const T, S, G = "example.com/m/internal/x.T", "example.com/m/internal/x.S", "example.com/m/internal/x.G"
	want := []string{
		"Alias alias of: " + T,
		"Chan result 0: " + S,
		"Const type: " + T,
		"Embeds.Promoted result 0: " + T,
		"FuncParam parameter 0, parameter 0: " + T,
		"Generic type parameter P, embedded: " + T,
		"Hands [result 0, unexported secret] field Out: " + T,
		"Hands [result 0, unexported secret].M result 0: " + S,
		"Iface method Leak, result 0: " + T,
		"Iface method M, result 0: " + T,
		"Inst field F: " + G,
		"MapKey result 0, map key: " + T,
		"Param parameter 0: " + T,
		"Promoted field inner, field Deep: " + T,
		"PtrSliceMap result 0: " + T,
		"Result result 0: " + T,
		"Struct field Field: " + T,
		"Struct field S: " + S,
		"Struct.Method result 0: " + T,
		"Struct.PtrMethod parameter 0: " + S,
		"UsesArg field F, type argument 0: " + T,
		"Var type: " + T,
		"VarArray type: " + S,
		"Variadic parameter 0: " + T,
	}
	assert.Equal(t, want, got)
}

// The loader reads real export data: a package of this module with a
// deliberate leak is reported (the guard can fail).
func TestLoadReportsALeak(t *testing.T) {
	goCmd := goCommand(t)
	dir := t.TempDir()
	write := func(name, src string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	write("go.mod", "module example.com/leak\n\ngo 1.22\n")
	write("internal/x/x.go", "package x\n\ntype Secret struct{ N int }\n")
	write("pub/pub.go", "package pub\n\nimport \"example.com/leak/internal/x\"\n\n// Leak returns an internal type.\nfunc Leak() x.Secret { return x.Secret{} }\n\n// Fine is clean.\nfunc Fine() int { return 0 }\n")
	write("cmd/tool/main.go", "package main\n\nimport \"example.com/leak/internal/x\"\n\nfunc main() { _ = x.Secret{} }\n")
	pkgs, err := Load(goCmd, dir)
	require.NoError(t, err)
	require.Len(t, pkgs, 1, "only the public, non-main package is loaded")
	assert.Equal(t, "example.com/leak/pub", pkgs[0].Path())
	vs := Check(pkgs[0])
	require.Len(t, vs, 1)
	assert.Equal(t, "example.com/leak/pub.Leak result 0: example.com/leak/internal/x.Secret", vs[0].String())
}

func TestIsInternal(t *testing.T) {
	for path, want := range map[string]bool{
		"internal":                    true,
		"internal/poll":               true,
		"example.com/m/internal":      true,
		"example.com/m/internal/x":    true,
		"example.com/m/x/internal/y":  true,
		"example.com/m/internals":     false,
		"example.com/m/myinternal/x":  false,
		"github.com/gdaki/gpunetio/v": false,
	} {
		assert.Equal(t, want, IsInternal(path), path)
	}
}

type importerFunc func(string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
