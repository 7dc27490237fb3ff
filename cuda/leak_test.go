package cuda

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/cudasys"
)

// fakeContext builds a Context without a driver (no driver call is made on
// it) and registers it as live, as PrimaryContext does.
func fakeContext(ordinal int) *Context {
	var none cudasys.Ctx
	return newContext(Device{ordinal: ordinal, valid: true}, none, here())
}

// TestLeakReport checks that every kind of live object is listed with its
// device, address, size and the stack that created it, and that the report
// is empty once everything is gone.
func TestLeakReport(t *testing.T) {
	require.Empty(t, LeakReport(), "no leftovers from other tests")
	c := fakeContext(3)
	host := new(uint64)
	c.devAllocs[0x7000_0000] = allocation{size: 4096, at: here()}
	c.hostAllocs[unsafe.Pointer(host)] = allocation{size: 64}
	c.registered[unsafe.Pointer(host)] = allocation{size: 128, at: here()}
	c.modules[&Module{ctx: c, at: here()}] = struct{}{}
	c.streams[&Stream{ctx: c, at: here()}] = struct{}{}
	c.events[&Event{ctx: c}] = struct{}{}

	objs := LiveObjects()
	kinds := make([]string, len(objs))
	for i, o := range objs {
		kinds[i] = o.Kind
	}
	require.Equal(t, []string{"context", "device memory", "pinned host memory", "host registration", "module", "stream", "event"}, kinds)
	require.Equal(t, "primary context of device 3", objs[0].What)
	require.Equal(t, "device 3: 4096 bytes at 0x70000000", objs[1].What)
	require.Contains(t, objs[3].What, "128 bytes at 0x")
	for _, i := range []int{0, 1, 3, 4, 5} {
		require.Contains(t, objs[i].Stack, "cuda.TestLeakReport", "%s: the creating stack names the test", objs[i].Kind)
		require.Contains(t, objs[i].Stack, "leak_test.go:", "%s: with file and line", objs[i].Kind)
	}
	require.Empty(t, objs[2].Stack, "no stack recorded for that allocation")

	r := LeakReport()
	require.True(t, strings.HasPrefix(r, "cuda: 7 CUDA object(s) still live:"), r)
	require.Contains(t, r, "device memory: device 3: 4096 bytes at 0x70000000, created at:")
	require.NotContains(t, r, "RecordStacks(true)", "stacks are being recorded")

	// Released objects disappear; a released context with nothing left is
	// no longer listed.
	c.mu.Lock()
	c.devAllocs = map[DevPtr]allocation{}
	c.hostAllocs = map[unsafe.Pointer]allocation{}
	c.registered = map[unsafe.Pointer]allocation{}
	c.modules = map[*Module]struct{}{}
	c.streams = map[*Stream]struct{}{}
	c.events = map[*Event]struct{}{}
	c.mu.Unlock()
	require.Len(t, LiveObjects(), 1)
	removeLiveContext(c)
	require.Empty(t, LeakReport())
}

// TestStackRecordingOff checks that nothing is recorded while recording is
// off and that the report then says how to turn it on.
func TestStackRecordingOff(t *testing.T) {
	RecordStacks(false)
	defer RecordStacks(true)
	require.Nil(t, here())
	c := fakeContext(0)
	defer removeLiveContext(c)
	objs := LiveObjects()
	require.Len(t, objs, 1)
	require.Empty(t, objs[0].Stack)
	require.Contains(t, LeakReport(), StacksEnv+"=1")
}
