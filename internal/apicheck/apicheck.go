// Package apicheck finds exported identifiers of public packages whose types
// reach into an internal package: a user can call such a function but cannot
// name, store or inspect what it returns, so the public API leaks an
// implementation detail. The module's test (apicheck_test.go) runs the check
// on every non-internal, non-main package of the module.
//
// The check reads compiler export data (go list -export), so it sees exactly
// what a user's compiler sees, cgo packages included, and needs no network.
// For each exported constant, variable, function and type it walks the
// declared type: parameters and results, struct fields (exported ones, and
// those promoted from unexported embedded fields), interface methods, the
// method sets of T and *T (promoted methods included), element, key and
// pointer types, type arguments and type-parameter constraints, and the
// targets of aliases. Unexported named types of the package itself are walked
// too, since an exported function can hand one out and its exported fields
// and methods are then usable. Exported types of other packages are not
// walked: each public package is checked on its own.
package apicheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// Violation is one place where an exported identifier's type comes from an
// internal package.
type Violation struct {
	Pkg      string // import path of the public package
	Ident    string // the exported identifier, e.g. "PortAttr" or "(*QP).Template"
	Where    string // where in its type, e.g. "field State", "result 0"
	Internal string // the internal type, package-qualified
}

func (v Violation) String() string {
	s := v.Pkg + "." + v.Ident
	if v.Where != "" {
		s += " " + v.Where
	}
	return s + ": " + v.Internal
}

// IsInternal reports whether an import path has an "internal" element, the
// rule the go command uses to restrict imports.
func IsInternal(path string) bool {
	return path == "internal" || strings.HasPrefix(path, "internal/") ||
		strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal")
}

// Check returns the violations of pkg, sorted.
func Check(pkg *types.Package) []Violation {
	c := &checker{pkg: pkg, seen: map[types.Type]bool{}}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		c.object(obj)
	}
	sort.Slice(c.out, func(i, j int) bool { return c.out[i].String() < c.out[j].String() })
	return dedup(c.out)
}

func dedup(vs []Violation) []Violation {
	var out []Violation
	for i, v := range vs {
		if i > 0 && v == vs[i-1] {
			continue
		}
		out = append(out, v)
	}
	return out
}

type checker struct {
	pkg   *types.Package
	out   []Violation
	seen  map[types.Type]bool // unexported local types being walked (cycles)
	ident string
}

func (c *checker) object(obj types.Object) {
	c.ident = obj.Name()
	switch o := obj.(type) {
	case *types.Const, *types.Var:
		c.typ(o.Type(), "type")
	case *types.Func:
		c.typ(o.Type(), "")
	case *types.TypeName:
		if o.IsAlias() {
			c.aliasTarget(o.Type(), "alias of")
			return
		}
		named, ok := o.Type().(*types.Named)
		if !ok {
			return
		}
		c.namedBody(named)
	}
}

// namedBody walks the definition of a named type of the checked package and
// the exported methods of *T (which include those of T and the promoted
// ones).
func (c *checker) namedBody(named *types.Named) {
	base := c.ident
	if tps := named.TypeParams(); tps != nil {
		for i := 0; i < tps.Len(); i++ {
			c.typ(tps.At(i).Constraint(), "type parameter "+tps.At(i).Obj().Name())
		}
	}
	c.underlying(named.Underlying(), "")
	ms := types.NewMethodSet(types.NewPointer(named))
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i).Obj()
		if !m.Exported() {
			continue
		}
		c.ident = base + "." + m.Name()
		c.typ(m.Type(), "")
	}
	c.ident = base
}

// underlying walks a type literal (the definition of a named type).
func (c *checker) underlying(t types.Type, where string) {
	switch u := t.(type) {
	case *types.Struct:
		c.structFields(u, where, 0)
	case *types.Interface:
		for i := 0; i < u.NumMethods(); i++ {
			m := u.Method(i)
			if m.Exported() {
				c.typ(m.Type(), join(where, "method "+m.Name()))
			}
		}
	default:
		c.typ(t, where)
	}
}

// structFields walks the exported fields of st and the exported fields
// promoted from its unexported embedded fields.
func (c *checker) structFields(st *types.Struct, where string, depth int) {
	if depth > 8 {
		return
	}
	for i := 0; i < st.NumFields(); i++ {
		f := st.Field(i)
		fw := join(where, "field "+f.Name())
		if f.Exported() {
			c.typ(f.Type(), fw)
			continue
		}
		if !f.Embedded() {
			continue
		}
		// Promoted fields of an unexported embedded type are usable.
		et := f.Type()
		if p, ok := et.(*types.Pointer); ok {
			et = p.Elem()
		}
		if c.internalNamed(et, fw) {
			continue
		}
		if s, ok := types.Unalias(et).Underlying().(*types.Struct); ok {
			if c.seen[et] {
				continue
			}
			c.seen[et] = true
			c.structFields(s, fw, depth+1)
			delete(c.seen, et)
		}
	}
}

// internalNamed reports (and records) a named or alias type declared in an
// internal package.
func (c *checker) internalNamed(t types.Type, where string) bool {
	var obj *types.TypeName
	switch n := t.(type) {
	case *types.Named:
		obj = n.Obj()
	case *types.Alias:
		obj = n.Obj()
	default:
		return false
	}
	if obj.Pkg() == nil || !IsInternal(obj.Pkg().Path()) {
		return false
	}
	c.out = append(c.out, Violation{Pkg: c.pkg.Path(), Ident: c.ident, Where: where,
		Internal: obj.Pkg().Path() + "." + obj.Name()})
	return true
}

// aliasTarget follows an alias declared in the checked package.
func (c *checker) aliasTarget(t types.Type, where string) {
	a, ok := t.(*types.Alias)
	if !ok {
		c.typ(t, where)
		return
	}
	if c.internalNamed(a, where) {
		return
	}
	c.typ(types.Unalias(a), where)
}

// typ walks a type used by an exported identifier.
func (c *checker) typ(t types.Type, where string) {
	switch u := t.(type) {
	case nil, *types.Basic:
	case *types.Alias:
		if c.internalNamed(u, where) {
			return
		}
		if u.Obj().Pkg() == c.pkg {
			// A local alias: what it stands for (type arguments included).
			c.typ(types.Unalias(u), where)
		}
	case *types.Named:
		if c.internalNamed(u, where) {
			return
		}
		if args := u.TypeArgs(); args != nil {
			for i := 0; i < args.Len(); i++ {
				c.typ(args.At(i), join(where, fmt.Sprintf("type argument %d", i)))
			}
		}
		obj := u.Obj()
		if obj.Pkg() == c.pkg && !obj.Exported() && !c.seen[u] {
			// An unexported local type handed out by an exported
			// identifier: its exported fields and methods are reachable.
			c.seen[u] = true
			base := c.ident
			c.ident = base + " [" + join(where, "unexported "+obj.Name()) + "]"
			c.namedBody(u.Origin())
			c.ident = base
			delete(c.seen, u)
		}
	case *types.Pointer:
		c.typ(u.Elem(), where)
	case *types.Slice:
		c.typ(u.Elem(), where)
	case *types.Array:
		c.typ(u.Elem(), where)
	case *types.Map:
		c.typ(u.Key(), join(where, "map key"))
		c.typ(u.Elem(), where)
	case *types.Chan:
		c.typ(u.Elem(), where)
	case *types.Signature:
		if tps := u.TypeParams(); tps != nil {
			for i := 0; i < tps.Len(); i++ {
				c.typ(tps.At(i).Constraint(), join(where, "type parameter "+tps.At(i).Obj().Name()))
			}
		}
		for i := 0; i < u.Params().Len(); i++ {
			c.typ(u.Params().At(i).Type(), join(where, fmt.Sprintf("parameter %d", i)))
		}
		for i := 0; i < u.Results().Len(); i++ {
			c.typ(u.Results().At(i).Type(), join(where, fmt.Sprintf("result %d", i)))
		}
	case *types.Struct:
		c.structFields(u, where, 0)
	case *types.Interface:
		for i := 0; i < u.NumEmbeddeds(); i++ {
			c.typ(u.EmbeddedType(i), join(where, "embedded"))
		}
		for i := 0; i < u.NumExplicitMethods(); i++ {
			m := u.ExplicitMethod(i)
			if m.Exported() {
				c.typ(m.Type(), join(where, "method "+m.Name()))
			}
		}
	case *types.Union:
		for i := 0; i < u.Len(); i++ {
			c.typ(u.Term(i).Type(), where)
		}
	case *types.TypeParam:
		// Its constraint is walked where it is declared.
	case *types.Tuple:
		for i := 0; i < u.Len(); i++ {
			c.typ(u.At(i).Type(), where)
		}
	}
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

// listed is the part of `go list -json` output the loader reads.
type listed struct {
	ImportPath string
	Name       string
	Export     string
	Standard   bool
	DepOnly    bool
	Module     *struct{ Path string }
	Error      *struct{ Err string }
}

// goList runs the go command in dir and decodes its stream of JSON packages.
func goList(goCmd, dir string, args ...string) ([]listed, error) {
	cmd := exec.Command(goCmd, append([]string{"list"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w: %s", strings.Join(args, " "), err, stderr.Bytes())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list %s: decode: %w", strings.Join(args, " "), err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// Load type-checks, from export data, every non-internal, non-main package
// of the module rooted at dir, using the go command goCmd. The packages come
// back sorted by import path.
func Load(goCmd, dir string) ([]*types.Package, error) {
	all, err := goList(goCmd, dir, "-e", "-json=ImportPath,Name,Module,Error", "./...")
	if err != nil {
		return nil, err
	}
	var public []string
	for _, p := range all {
		if p.Error != nil {
			return nil, fmt.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
		}
		if p.Name == "main" || IsInternal(p.ImportPath) {
			continue
		}
		public = append(public, p.ImportPath)
	}
	if len(public) == 0 {
		return nil, fmt.Errorf("no public package under %s", dir)
	}
	deps, err := goList(goCmd, dir, append([]string{"-e", "-export", "-deps", "-json=ImportPath,Export,Error"}, public...)...)
	if err != nil {
		return nil, err
	}
	exports := map[string]string{}
	for _, p := range deps {
		if p.Error != nil {
			return nil, fmt.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	sort.Strings(public)
	out := make([]*types.Package, 0, len(public))
	for _, path := range public {
		pkg, err := imp.Import(path)
		if err != nil {
			return nil, fmt.Errorf("import %s from export data: %w", path, err)
		}
		out = append(out, pkg)
	}
	return out, nil
}
