package verbs

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/peerproc"
)

// zeroChildEnv marks the child process of TestMisuseWithoutCUDA.
const zeroChildEnv = "GPUNETIO_VERBS_TEST_ZERO_CHILD"

// TestMisuseWithoutCUDA runs the nil, zero-value and closed-object tables
// in a child process that runs nothing else, so no other test has loaded
// or initialised CUDA (or any driver) first: every refusal must come from
// the package's own checks.
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

// closedObjects makes one object of every type on an emulated device and
// closes them all, children first.
func closedObjects(t *testing.T) []any {
	o := defaultPairOpts()
	e := newEnd(t, "emu0", o)
	dev, err := OpenDev(e.pd)
	require.NoError(t, err)
	buf, err := syscall.Mmap(-1, 0, 1<<16, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Munmap(buf) })
	um, err := NewUMem(e.ctx, uintptr(unsafe.Pointer(&buf[0])), uint64(len(buf)), AccessLocalWrite, nil)
	require.NoError(t, err)
	uar, err := NewUAR(e.ctx, UARNonCacheDedicated)
	require.NoError(t, err)
	srq, err := NewSRQ(e.ctx, SRQConfig{PD: e.pd, WR: 16, MaxRecvSGE: 1})
	require.NoError(t, err)
	for _, c := range []interface{ Close() error }{e.qp, srq, e.cq, e.mr, um, uar, dev, e.pd, e.ctx} {
		require.NoError(t, c.Close())
	}
	return []any{e.ctx, e.pd, e.mr, um, uar, e.cq, srq, e.qp, dev}
}

// TestClosedObjectsRefused calls every exported method of every closed
// object with zero arguments: none panics, every error result is a named
// *Error (the call and the reason), and every method with an error result
// refuses, except Close, whose second call is a no-op.
func TestClosedObjectsRefused(t *testing.T) {
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
			err, _ := out[n-1].Interface().(error)
			counts[typ]++
			if m.Name == "Close" {
				assert.NoError(t, err, "a second %s.Close is a no-op", typ)
				continue
			}
			if !assert.Error(t, err, "closed %s.%s must be refused", typ, m.Name) {
				continue
			}
			var e *Error
			if assert.True(t, errors.As(err, &e), "closed %s.%s: %T %v", typ, m.Name, err, err) {
				assert.NotEmpty(t, e.Op, "closed %s.%s names the call", typ, m.Name)
				assert.True(t, errors.Is(err, ErrBadState) || errors.Is(err, ErrInvalidValue),
					"closed %s.%s: %v", typ, m.Name, err)
			}
			assert.False(t, strings.HasPrefix(err.Error(), ":"), "%v", err)
		}
	}
	for _, typ := range []string{"Context", "PD", "MR", "UMem", "UAR", "CQ", "SRQ", "QP", "Dev"} {
		assert.Positive(t, counts[typ], "%s: methods with an error result were called", typ)
	}
	t.Logf("methods with an error result called per closed type: %v", counts)
}
