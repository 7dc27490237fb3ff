package cuda

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/peerproc"
)

// zeroChildEnv marks the child process of TestZeroValuesWithoutCUDA.
const zeroChildEnv = "GPUNETIO_CUDA_TEST_ZERO_CHILD"

// unregisteredContext is a Context as newContext makes it, without a driver
// handle and not registered as live: no driver call is ever made on it in
// these tests (every path under test stops before one).
func unregisteredContext() *Context {
	return &Context{
		dev:        Device{valid: true},
		devAllocs:  map[DevPtr]allocation{},
		hostAllocs: map[unsafe.Pointer]allocation{},
		registered: map[unsafe.Pointer]allocation{},
		modules:    map[*Module]struct{}{},
		streams:    map[*Stream]struct{}{},
		events:     map[*Event]struct{}{},
	}
}

// releasedContext is an unregistered Context already released.
func releasedContext() *Context {
	c := unregisteredContext()
	c.released = true
	return c
}

// loadAttempted reports whether anything in this process tried to load the
// driver library (successfully or not).
func loadAttempted() bool { return isLoaded() || loadErr != nil }

// TestZeroValuesWithoutCUDA runs TestZeroValueChild in a child process that
// has not loaded or initialised CUDA (this process's other tests may have),
// so a method that reached the driver without checking its receiver would
// call an unresolved entry point or load the library, and the child fails.
func TestZeroValuesWithoutCUDA(t *testing.T) {
	if os.Getenv(zeroChildEnv) != "" {
		t.Skip("already the child process")
	}
	peerproc.RunTests(t, []string{zeroChildEnv + "=1"}, "TestZeroValueChild")
}

// objCase is one receiver whose every exported method must refuse with
// want (except the close methods listed in noop, which return nil).
type objCase struct {
	name string
	typ  string // the type name the error must carry
	recv any
	want error
	noop []string // idempotent close methods: nil on an already closed object
}

func zeroCases() []objCase {
	return []objCase{
		{name: "zero Context", typ: "Context", recv: &Context{}, want: ErrZeroValue},
		{name: "zero Stream", typ: "Stream", recv: &Stream{}, want: ErrZeroValue},
		{name: "zero Event", typ: "Event", recv: &Event{}, want: ErrZeroValue},
		{name: "zero Module", typ: "Module", recv: &Module{}, want: ErrZeroValue},
		{name: "zero Function", typ: "Function", recv: &Function{}, want: ErrZeroValue},
		{name: "zero Buffer", typ: "Buffer", recv: &Buffer[uint32]{}, want: ErrZeroValue},
		{name: "zero Device", typ: "Device", recv: Device{}, want: ErrZeroValue},
		{name: "zero Compiled", typ: "Compiled", recv: &Compiled{}, want: ErrZeroValue},
	}
}

func closedCases() []objCase {
	live := unregisteredContext()
	deadModule := &Module{ctx: live, dead: true}
	return []objCase{
		{name: "released Context", typ: "Context", recv: releasedContext(), want: ErrReleased, noop: []string{"Release"}},
		{name: "destroyed Stream", typ: "Stream", recv: &Stream{ctx: live, dead: true}, want: ErrReleased, noop: []string{"Destroy"}},
		{name: "Stream of a released Context", typ: "Stream", recv: &Stream{ctx: releasedContext()}, want: ErrReleased},
		{name: "destroyed Event", typ: "Event", recv: &Event{ctx: live, dead: true}, want: ErrReleased, noop: []string{"Destroy"}},
		{name: "Event of a released Context", typ: "Event", recv: &Event{ctx: releasedContext()}, want: ErrReleased},
		{name: "unloaded Module", typ: "Module", recv: deadModule, want: ErrReleased, noop: []string{"Unload"}},
		{name: "Module of a released Context", typ: "Module", recv: &Module{ctx: releasedContext()}, want: ErrReleased},
		{name: "Function of an unloaded Module", typ: "Function", recv: &Function{mod: deadModule, name: "k"}, want: ErrReleased},
		{name: "freed Buffer", typ: "Buffer", recv: freedBuffer(live), want: ErrReleased, noop: []string{"Free"}},
		{name: "Buffer of a released Context", typ: "Buffer", recv: &Buffer[uint32]{ctx: releasedContext(), p: 0x1000, n: 4}, want: ErrReleased},
	}
}

func freedBuffer(c *Context) *Buffer[uint32] {
	b := &Buffer[uint32]{ctx: c, p: 0x1000, n: 4}
	b.freed.Store(true)
	return b
}

var errorType = reflect.TypeFor[error]()

// callAll calls every exported method of tc.recv with zero arguments (a
// function argument that fails the test if called) and checks each error
// result; methods without an error result must not panic and, on a zero
// value, return zero values. It returns the number of methods with an
// error result.
func callAll(t *testing.T, tc objCase) int {
	t.Helper()
	v := reflect.ValueOf(tc.recv)
	withErr := 0
	for i := 0; i < v.NumMethod(); i++ {
		m := v.Type().Method(i)
		mv := v.Method(i)
		mt := mv.Type()
		args := make([]reflect.Value, mt.NumIn())
		for j := range args {
			in := mt.In(j)
			if in.Kind() == reflect.Func {
				args[j] = reflect.MakeFunc(in, func([]reflect.Value) []reflect.Value {
					t.Errorf("%s: %s called its function argument", tc.name, m.Name)
					out := make([]reflect.Value, in.NumOut())
					for k := range out {
						out[k] = reflect.Zero(in.Out(k))
					}
					return out
				})
				continue
			}
			args[j] = reflect.Zero(in)
		}
		var out []reflect.Value
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%s: %s panicked: %v", tc.name, m.Name, r)
				}
			}()
			if mt.IsVariadic() {
				out = mv.CallSlice(args)
			} else {
				out = mv.Call(args)
			}
		}()
		if n := mt.NumOut(); n > 0 && mt.Out(n-1) == errorType {
			withErr++
			err, _ := out[n-1].Interface().(error)
			if contains(tc.noop, m.Name) {
				require.NoError(t, err, "%s: %s is idempotent", tc.name, m.Name)
				continue
			}
			require.ErrorIs(t, err, tc.want, "%s: %s", tc.name, m.Name)
			var ue *UsageError
			require.True(t, errors.As(err, &ue), "%s: %s: %T %v", tc.name, m.Name, err, err)
			require.Contains(t, err.Error(), "."+m.Name+": ", "%s: the error names the method", tc.name)
			require.Contains(t, err.Error(), tc.typ, "%s: the error names the type", tc.name)
			continue
		}
		if tc.want == ErrZeroValue {
			for k, o := range out {
				require.True(t, o.IsZero(), "%s: %s result %d of a zero value: %v", tc.name, m.Name, k, o)
			}
		}
	}
	return withErr
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestZeroValueChild calls every exported method of every object type of
// the package on a zero value and on a closed or released object, and
// checks the named error (ErrZeroValue or ErrReleased, with the type and
// the method in its text) and that the driver library was never loaded.
// It runs only as the child of TestZeroValuesWithoutCUDA.
func TestZeroValueChild(t *testing.T) {
	if os.Getenv(zeroChildEnv) == "" {
		t.Skip("runs in the child process of TestZeroValuesWithoutCUDA")
	}
	require.False(t, loadAttempted(), "the child starts without CUDA")
	counts := map[string]int{}
	for _, tc := range append(zeroCases(), closedCases()...) {
		counts[tc.name] = callAll(t, tc)
	}
	for _, name := range []string{"zero Context", "zero Stream", "zero Event", "zero Module", "zero Buffer", "zero Device",
		"released Context", "destroyed Stream", "freed Buffer"} {
		require.Positive(t, counts[name], "%s: methods with an error result were called", name)
	}
	t.Logf("methods with an error result called per case: %v", counts)

	// Package functions taking objects.
	_, err := ElapsedTime(&Event{}, &Event{})
	require.ErrorIs(t, err, ErrZeroValue)
	require.Contains(t, err.Error(), "ElapsedTime: start event")
	live := unregisteredContext()
	_, err = ElapsedTime(&Event{ctx: live}, &Event{ctx: live, dead: true})
	require.ErrorIs(t, err, ErrReleased)
	require.Contains(t, err.Error(), "ElapsedTime: end event")
	require.ErrorIs(t, CopyToDevice(&Context{}, 0x1000, []uint32{1}), ErrZeroValue)
	require.ErrorIs(t, CopyFromDevice(releasedContext(), make([]uint32, 1), 0x1000), ErrReleased)
	_, err = Alloc[uint32](&Context{}, 4)
	require.ErrorIs(t, err, ErrZeroValue)

	// Zero and closed objects as arguments of a usable Context.
	c := unregisteredContext()
	zeroStream, deadStream := &Stream{}, &Stream{ctx: c, dead: true}
	for _, s := range []struct {
		s    *Stream
		want error
	}{{zeroStream, ErrZeroValue}, {deadStream, ErrReleased}} {
		for name, err := range map[string]error{
			"MemcpyHtoDAsync": c.MemcpyHtoDAsync(0x1000, nil, 1, s.s),
			"MemcpyDtoHAsync": c.MemcpyDtoHAsync(nil, 0x1000, 1, s.s),
			"MemcpyDtoDAsync": c.MemcpyDtoDAsync(0x1000, 0x2000, 1, s.s),
			"MemsetD8Async":   c.MemsetD8Async(0x1000, 1, 1, s.s),
			"MemsetD32Async":  c.MemsetD32Async(0x1000, 1, 1, s.s),
			"LaunchKernel":    c.LaunchKernel(&Function{mod: &Module{ctx: c}, name: "k"}, Dim3{X: 1}, Dim3{X: 1}, 0, s.s, uint32(1)),
		} {
			require.ErrorIs(t, err, s.want, name)
			require.Contains(t, err.Error(), "Context."+name+": stream argument: ")
		}
		require.ErrorIs(t, (&Event{ctx: c}).Record(s.s), s.want, "Event.Record")
	}
	err = c.LaunchKernel(&Function{}, Dim3{X: 1}, Dim3{X: 1}, 0, nil)
	require.ErrorIs(t, err, ErrZeroValue)
	require.Contains(t, err.Error(), "Context.LaunchKernel: function argument: ")
	err = c.LaunchKernel(&Function{mod: &Module{ctx: c, dead: true}, name: "k"}, Dim3{X: 1}, Dim3{X: 1}, 0, nil)
	require.ErrorIs(t, err, ErrReleased)
	require.Contains(t, err.Error(), "module of kernel k")

	// Checks a usable Context makes before any driver call.
	_, err = c.MemGetHandleForAddressRange(0x200001, 4096)
	require.ErrorIs(t, err, ErrorInvalidValue, "misaligned dmabuf range")
	_, err = c.ModuleLoadData(nil)
	require.ErrorIs(t, err, ErrorInvalidImage, "an empty image")
	_, err = c.ModuleLoadFile("testdata/no-such-file.ptx")
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorIs(t, c.Do(nil), ErrInvalidInput, "a nil function")
	require.NoError(t, c.MemFree(0x1000), "not an allocation of c")
	f := &Function{mod: &Module{ctx: c}, name: "k"}
	require.ErrorIs(t, c.LaunchKernel(f, Dim3{}, Dim3{X: 1}, 0, nil), ErrorInvalidValue, "an empty grid")
	m := &Module{ctx: c}
	_, err = m.Function("k\x00j")
	require.ErrorIs(t, err, ErrInvalidInput)
	require.Contains(t, err.Error(), "kernel name: NUL byte")
	_, _, err = m.Global("\x00")
	require.ErrorIs(t, err, ErrInvalidInput)

	require.False(t, loadAttempted(), "no method loaded the driver")
}

// TestZeroValuesInProcess runs the same tables in this process, where other
// tests may have loaded and initialised the driver (on a GPU host they
// have): the refusals must not depend on it.
func TestZeroValuesInProcess(t *testing.T) {
	for _, tc := range append(zeroCases(), closedCases()...) {
		callAll(t, tc)
	}
}

// TestLaunchArgumentErrors checks that an argument LaunchKernel refuses is
// named by kernel, position and Go type, before any driver call.
func TestLaunchArgumentErrors(t *testing.T) {
	c := unregisteredContext()
	f := &Function{mod: &Module{ctx: c}, name: "put_kernel"}
	err := c.LaunchKernel(f, Dim3{X: 1}, Dim3{X: 1}, 0, nil, uint32(1), DevPtr(0), 7)
	require.ErrorIs(t, err, ErrBadArgument)
	var ae *ArgumentError
	require.True(t, errors.As(err, &ae))
	require.Equal(t, ArgumentError{Kernel: "put_kernel", Index: 2, GoType: "int", Reason: ae.Reason}, *ae)
	require.Equal(t, "cuda: cuLaunchKernel: kernel put_kernel: argument 2 (Go type int): int has no fixed C width: use int32/int64 or uint32/uint64", err.Error())
	require.NotContains(t, err.Error(), " :", "no stray space")

	type named struct{ P *uint32 }
	err = c.LaunchKernel(f, Dim3{X: 1}, Dim3{X: 1}, 0, nil, named{})
	require.ErrorIs(t, err, ErrBadArgument)
	require.True(t, strings.HasPrefix(err.Error(), "cuda: cuLaunchKernel: kernel put_kernel: argument 0 (Go type cuda.named): "), err.Error())
}
