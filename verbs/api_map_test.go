package verbs

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goNames collects the exported functions, types, methods (Type.Method) and
// struct fields (Type.Field) declared in this package's non-test sources.
func goNames(t *testing.T) map[string]bool {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						names[d.Name.Name] = true
						continue
					}
					rt := d.Recv.List[0].Type
					if s, ok := rt.(*ast.StarExpr); ok {
						rt = s.X
					}
					if id, ok := rt.(*ast.Ident); ok {
						names[id.Name+"."+d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						ts, ok := s.(*ast.TypeSpec)
						if !ok {
							continue
						}
						names[ts.Name.Name] = true
						st, ok := ts.Type.(*ast.StructType)
						if !ok {
							continue
						}
						for _, fld := range st.Fields.List {
							for _, n := range fld.Names {
								names[ts.Name.Name+"."+n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return names
}

func TestDOCAFunctionMapCoversTheAPI(t *testing.T) {
	f, err := os.Open("testdata/doca_verbs_functions.txt")
	require.NoError(t, err)
	defer f.Close()
	mapped := map[string]string{}
	for _, e := range DOCAFunctions {
		_, dup := mapped[e.C]
		assert.False(t, dup, "%s mapped twice", e.C)
		mapped[e.C] = e.Go
	}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		c := strings.TrimSpace(sc.Text())
		if c == "" {
			continue
		}
		n++
		_, ok := mapped[c]
		assert.True(t, ok, "DOCA function %s has no Go counterpart in DOCAFunctions", c)
	}
	require.NoError(t, sc.Err())
	assert.Greater(t, n, 150, "the DOCA function list looks truncated")

	names := goNames(t)
	for _, e := range DOCAFunctions {
		assert.True(t, names[e.Go], "%s maps to %s, which does not exist", e.C, e.Go)
	}
}
