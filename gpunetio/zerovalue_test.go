package gpunetio

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/peerproc"
)

// zeroChildEnv marks the child process of TestMisuseWithoutCUDA.
const zeroChildEnv = "GPUNETIO_TEST_ZERO_CHILD"

// TestMisuseWithoutCUDA runs the nil, zero-value and closed-object tables
// in a child process that runs nothing else, so no other test has loaded
// or initialised CUDA first: every refusal must come from the package's
// own checks, and none may reach the driver.
func TestMisuseWithoutCUDA(t *testing.T) {
	if os.Getenv(zeroChildEnv) != "" {
		t.Skip("already the child process")
	}
	peerproc.RunTests(t, []string{zeroChildEnv + "=1"}, "TestNilAndZeroReceivers", "TestClosedObjectsRefused", "TestNoCUDAMapped")
}

// TestNoCUDAMapped, in the child of TestMisuseWithoutCUDA, checks after
// the tables ran that the CUDA driver library was never loaded.
func TestNoCUDAMapped(t *testing.T) {
	if os.Getenv(zeroChildEnv) == "" {
		t.Skip("runs in the child process of TestMisuseWithoutCUDA")
	}
	maps, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	require.NotContains(t, string(maps), "libcuda.so", "nothing loaded the CUDA driver")
}

// closedObjects makes one object of every type on a host-memory GPU and an
// emulated device, and closes them all, users first.
func closedObjects(t *testing.T) []any {
	hl, g, s := proxyHL(t, 8)
	arr, err := g.ExportQPs([]*QP{hl.GPUQP()})
	require.NoError(t, err)
	fl, err := NewQPFlatList([]*QPHL{hl})
	require.NoError(t, err)
	svc, err := NewService()
	require.NoError(t, err)
	grp, err := NewQPGroupHL(QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 8, NICHandler: NICHandlerCPUProxy})
	require.NoError(t, err)
	m, err := g.MemAlloc(4096, 4096, MemGPU)
	require.NoError(t, err)
	gone, _ := newHostGPU()

	qp := hl.GPUQP()
	for _, c := range []interface{ Close() error }{arr, fl, svc, grp, hl, gone} {
		require.NoError(t, c.Close())
	}
	require.NoError(t, m.Free())
	return []any{arr, fl, svc, grp, hl, qp, m, gone}
}

// closeNames are the methods whose second call is a no-op.
var closeNames = map[string]bool{"Close": true, "Free": true}

// TestClosedObjectsRefused calls every exported method of every closed
// gpunetio object with zero arguments: none panics, every error result is
// a named *Error (the call and the reason), and every method with an error
// result refuses, except Close and Free, whose second call is a no-op.
func TestClosedObjectsRefused(t *testing.T) {
	errType := reflect.TypeFor[error]()
	counts := map[string]int{}
	for _, obj := range closedObjects(t) {
		v := reflect.ValueOf(obj)
		typ := v.Type().Elem().Name()
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
						t.Fatalf("closed %s.%s panicked: %v", typ, m.Name, r)
					}
				}()
				if mt.IsVariadic() {
					out = v.Method(i).CallSlice(args)
				} else {
					out = v.Method(i).Call(args)
				}
			}()
			n := mt.NumOut()
			if n == 0 || mt.Out(n-1) != errType {
				continue
			}
			counts[typ]++
			err, _ := out[n-1].Interface().(error)
			if closeNames[m.Name] {
				assert.NoError(t, err, "a second %s.%s is a no-op", typ, m.Name)
				continue
			}
			if !assert.Error(t, err, "closed %s.%s must be refused", typ, m.Name) {
				continue
			}
			var e *Error
			if assert.True(t, errors.As(err, &e), "closed %s.%s: %T %v", typ, m.Name, err, err) {
				assert.NotEmpty(t, e.Op, "closed %s.%s names the call", typ, m.Name)
			}
			assert.False(t, strings.HasPrefix(err.Error(), ":"), "%v", err)
		}
	}
	for _, typ := range []string{"DevQPArray", "FlatList", "Service", "QPGroupHL", "QPHL", "QP", "Mem", "GPU"} {
		assert.Positive(t, counts[typ], "%s: methods with an error result were called", typ)
	}
	t.Logf("methods with an error result called per closed type: %v", counts)
}
