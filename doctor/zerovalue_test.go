package doctor

import (
	"errors"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every exported method of the package's types, on a zero value and a nil
// pointer where the method takes one, returns a value or a named error;
// none panics or calls into a library that is not loaded. NVML's methods
// load libnvidia-ml themselves: without it they fail with an *NVMLError
// naming the call.
func TestZeroValueMethods(t *testing.T) {
	errType := reflect.TypeFor[error]()
	for _, recv := range []any{NVML{}, Report{}, ACS{}, new(Verdict), Verdict(0), &NVMLError{}} {
		v := reflect.ValueOf(recv)
		for i := 0; i < v.NumMethod(); i++ {
			m := v.Type().Method(i)
			mt := v.Method(i).Type()
			args := make([]reflect.Value, mt.NumIn())
			for j := range args {
				args[j] = reflect.Zero(mt.In(j))
			}
			var out []reflect.Value
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("%T.%s panicked: %v", recv, m.Name, r)
					}
				}()
				out = v.Method(i).Call(args)
			}()
			n := mt.NumOut()
			if n == 0 || mt.Out(n-1) != errType || out[n-1].IsNil() {
				continue
			}
			err := out[n-1].Interface().(error)
			if _, isNVML := recv.(NVML); isNVML {
				var ne *NVMLError
				require.True(t, errors.As(err, &ne), "NVML.%s: %T %v", m.Name, err, err)
				assert.NotEmpty(t, ne.Op, "NVML.%s names the call", m.Name)
			}
			assert.NotEmpty(t, err.Error(), "%T.%s", recv, m.Name)
		}
	}
}
