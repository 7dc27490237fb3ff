package apicheck

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// CallMethods calls every exported method of the pointer type of ptr with zero
// arguments, on a nil pointer (methods declared on the pointer only) and on
// a pointer to a zero value, each in a subtest, and hands each call's
// results to check (when not nil). A panic fails the test with the
// method's name. The nil-and-zero-receiver tests of the public packages
// run it on every object type.
func CallMethods(t *testing.T, ptr any, check func(t *testing.T, recv string, m reflect.Method, out []reflect.Value)) {
	pt := reflect.TypeOf(ptr)
	vt := pt.Elem()
	for i := 0; i < pt.NumMethod(); i++ {
		m := pt.Method(i)
		_, valueMethod := vt.MethodByName(m.Name)
		for _, recv := range []string{"nil", "zero"} {
			if recv == "nil" && valueMethod {
				continue // Go itself dereferences nil for value methods
			}
			rv := reflect.Zero(pt)
			if recv == "zero" {
				rv = reflect.New(vt)
			}
			args := []reflect.Value{rv}
			for j := 1; j < m.Type.NumIn(); j++ {
				args = append(args, reflect.Zero(m.Type.In(j)))
			}
			t.Run(fmt.Sprintf("%s.%s/%s", vt.Name(), m.Name, recv), func(t *testing.T) {
				var out []reflect.Value
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("(%s %s).%s panicked: %v", recv, pt, m.Name, r)
						}
					}()
					if m.Type.IsVariadic() {
						out = m.Func.CallSlice(args)
					} else {
						out = m.Func.Call(args)
					}
				}()
				if check != nil {
					check(t, recv, m, out)
				}
			})
		}
	}
}

// Outcome describes what a call returned in terms two implementations of
// one API can share (the SDK-mode and open-mode comparisons of verbs and
// gpunetio): "ok " and detail, or "error " and the code (as code names it)
// of each E in err's chain, outermost first, joined by "/".
func Outcome[E error](err error, detail string, code func(E) string) string {
	if err == nil {
		return "ok " + detail
	}
	var codes []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		if x, ok := e.(E); ok {
			codes = append(codes, code(x))
		}
	}
	return "error " + strings.Join(codes, "/")
}
