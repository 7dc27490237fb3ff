package apicheck

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"strings"
)

// Packages verbs and gpunetio each keep a map from the C functions of the
// DOCA headers they mirror to their Go names (DOCAFunctions). The helpers
// below are the one check of such a map, run by each package's test.

// GoNames returns the names declared in the non-test Go files of directory
// dir: functions, types, methods as "Type.Method" and struct fields as
// "Type.Field".
func GoNames(dir string) (map[string]bool, error) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", dir, err)
	}
	names := map[string]bool{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				declNames(d, names)
			}
		}
	}
	return names, nil
}

func declNames(d ast.Decl, names map[string]bool) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			names[d.Name.Name] = true
			return
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
			if st, ok := ts.Type.(*ast.StructType); ok {
				for _, fld := range st.Fields.List {
					for _, n := range fld.Names {
						names[ts.Name.Name+"."+n.Name] = true
					}
				}
			}
		}
	}
}

// ReadNames reads a list of names, one per line; blank lines and lines
// starting with '#' are skipped.
func ReadNames(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if c := strings.TrimSpace(sc.Text()); c != "" && !strings.HasPrefix(c, "#") {
			names = append(names, c)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return names, nil
}

// FuncMapProblems checks a map from C functions to Go names (m, pairs of C
// and Go name) against want, the C functions of the API it mirrors, and
// names, the Go names that exist (GoNames). It returns one line per
// problem: a C function mapped twice, one not in want, one of want not
// mapped, a Go name that does not exist.
func FuncMapProblems(m []struct{ C, Go string }, want []string, names map[string]bool) []string {
	var out []string
	inList := map[string]bool{}
	for _, c := range want {
		inList[c] = true
	}
	mapped := map[string]bool{}
	for _, e := range m {
		if mapped[e.C] {
			out = append(out, e.C+" mapped twice")
		}
		mapped[e.C] = true
		if !inList[e.C] {
			out = append(out, e.C+" is not a function of the API")
		}
		if !names[e.Go] {
			out = append(out, e.C+" maps to "+e.Go+", which does not exist")
		}
	}
	for _, c := range want {
		if !mapped[c] {
			out = append(out, "C function "+c+" has no Go counterpart")
		}
	}
	return out
}
