package cuda

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/peerproc"
)

// wantNoDriverEnv tells TestEntryPointsFailCleanly that the library was
// replaced by a missing one, so every error must match ErrNoDriver.
const wantNoDriverEnv = "GPUNETIO_CUDA_TEST_WANT_NODRIVER"

// TestNoDriver re-runs TestEntryPointsFailCleanly in a child process whose
// driver library does not exist, proving every entry point reports
// ErrNoDriver (naming the library) instead of panicking.
func TestNoDriver(t *testing.T) {
	if os.Getenv(wantNoDriverEnv) != "" {
		t.Skip("already the child process")
	}
	peerproc.RunTests(t, []string{testLibraryEnv + "=libcuda-gpunetio-test-absent.so.1", wantNoDriverEnv + "=1"},
		"TestEntryPointsFailCleanly")
}

// TestEntryPointsFailCleanly calls every entry point that needs a usable
// driver and checks each returns an error (no panic) of the expected kind.
// With a GPU present it skips: the GPU tests cover that case.
func TestEntryPointsFailCleanly(t *testing.T) {
	wantNoDriver := os.Getenv(wantNoDriverEnv) != ""
	initErr := Init()
	if initErr == nil {
		require.False(t, wantNoDriver, "the absent library loaded")
		t.Skip("a CUDA driver with a device is present; the GPU tests cover it")
	}
	if wantNoDriver {
		require.ErrorIs(t, initErr, ErrNoDriver)
		require.Contains(t, initErr.Error(), "libcuda-gpunetio-test-absent.so.1")
	} else {
		require.True(t, errors.Is(initErr, ErrNoDriver) || errors.Is(initErr, ErrNoDevice), "Init: %v", initErr)
	}
	expect := func(name string, err error) {
		t.Helper()
		require.Error(t, err, name)
		if wantNoDriver {
			require.ErrorIs(t, err, ErrNoDriver, name)
		} else {
			require.True(t, errors.Is(err, ErrNoDriver) || errors.Is(err, ErrNoDevice), "%s: %v", name, err)
		}
	}
	_, err := DriverVersion()
	if wantNoDriver {
		expect("DriverVersion", err)
	}
	_, err = DeviceCount()
	expect("DeviceCount", err)
	_, err = DeviceGet(0)
	expect("DeviceGet", err)
	_, err = DeviceByPCIBusID("0000:8a:00.0")
	expect("DeviceByPCIBusID", err)
	_, err = Devices()
	expect("Devices", err)
	_, err = GetErrorName(ErrorOutOfMemory)
	if wantNoDriver {
		expect("GetErrorName", err)
		_, err = GetErrorString(ErrorOutOfMemory)
		expect("GetErrorString", err)
	}

	// A device value as DeviceGet would have made it: what is missing is
	// the driver. (A zero Device fails with ErrZeroValue before loading the
	// driver: TestZeroValues.)
	d := Device{valid: true}
	_, err = d.Name()
	expect("Device.Name", err)
	_, err = d.TotalMem()
	expect("Device.TotalMem", err)
	_, err = d.Attribute(AttrDMABufSupported)
	expect("Device.Attribute", err)
	_, _, err = d.ComputeCapability()
	expect("Device.ComputeCapability", err)
	_, err = d.DMABufSupported()
	expect("Device.DMABufSupported", err)
	_, err = d.PCIAddress()
	expect("Device.PCIAddress", err)
	_, err = d.PCIBusID()
	expect("Device.PCIBusID", err)
	_, err = d.PrimaryContext()
	expect("Device.PrimaryContext", err)
	_, err = d.Info()
	expect("Device.Info", err)
	_, err = d.NUMANode()
	expect("Device.NUMANode", err)
	_, err = Compile("", "x.cu", &CompileOptions{Device: &d})
	if err != nil && !errors.Is(err, ErrNoNVRTC) {
		expect("Compile for a device", err)
	}
	require.Empty(t, LiveObjects(), "nothing was created")
}

// TestNilObjects checks that every method of a nil Context, Stream, Event
// and Module fails with ErrReleased (or is a no-op for the idempotent
// frees) rather than panicking.
func TestNilObjects(t *testing.T) {
	var c *Context
	released := func(name string, err error) {
		t.Helper()
		require.ErrorIs(t, err, ErrReleased, name)
	}
	_, err := c.MemAlloc(4096)
	released("MemAlloc", err)
	require.NoError(t, c.MemFree(0x1000))
	_, err = c.MemAllocHost(4096, HostAllocPortable)
	released("MemAllocHost", err)
	require.NoError(t, c.MemFreeHost(nil))
	_, err = c.HostGetDevicePointer(nil)
	released("HostGetDevicePointer", err)
	released("MemHostRegister", c.MemHostRegister(nil, 4096, HostRegisterIOMemory))
	require.NoError(t, c.MemHostUnregister(nil))
	released("MemcpyHtoD", c.MemcpyHtoD(0x1000, []byte{1}))
	released("MemcpyDtoH", c.MemcpyDtoH(make([]byte, 1), 0x1000))
	released("MemcpyDtoD", c.MemcpyDtoD(0x1000, 0x2000, 1))
	released("MemcpyHtoDAsync", c.MemcpyHtoDAsync(0x1000, nil, 1, nil))
	released("MemcpyDtoHAsync", c.MemcpyDtoHAsync(nil, 0x1000, 1, nil))
	released("MemcpyDtoDAsync", c.MemcpyDtoDAsync(0x1000, 0x2000, 1, nil))
	released("MemsetD8", c.MemsetD8(0x1000, 1, 1))
	released("MemsetD32", c.MemsetD32(0x1000, 1, 1))
	released("MemsetD8Async", c.MemsetD8Async(0x1000, 1, 1, nil))
	released("MemsetD32Async", c.MemsetD32Async(0x1000, 1, 1, nil))
	_, err = c.PointerGetAttribute(PointerAttrMemoryType, 0x1000)
	released("PointerGetAttribute", err)
	_, _, err = c.PointerRange(0x1000)
	released("PointerRange", err)
	_, _, err = c.MemGetAddressRange(0x1000)
	released("MemGetAddressRange", err)
	require.False(t, c.IsDevicePointer(0x1000))
	released("PointerSetSyncMemops", c.PointerSetSyncMemops(0x1000, true))
	_, err = c.MemGetHandleForAddressRange(0x200001, 4096)
	released("MemGetHandleForAddressRange, misaligned", err)
	_, err = c.MemGetHandleForAddressRange(0x200000, 4096)
	released("MemGetHandleForAddressRange", err)
	_, err = c.ModuleLoadData([]byte("x"))
	released("ModuleLoadData", err)
	_, err = c.ModuleLoadData(nil)
	released("ModuleLoadData of an empty image", err)
	_, err = c.ModuleLoadFile("testdata/kernels.ptx")
	released("ModuleLoadFile", err)
	_, err = c.ModuleLoadFile("testdata/no-such-file.ptx")
	released("ModuleLoadFile of a missing file", err)
	_, err = c.NewStream(StreamDefault)
	released("NewStream", err)
	_, err = c.NewEvent(EventDefault)
	released("NewEvent", err)
	_, _, err = c.MemGetInfo()
	released("MemGetInfo", err)
	released("Synchronize", c.Synchronize())
	released("Do", c.Do(func() error { return nil }))
	require.Equal(t, Live{}, c.Live())
	require.NoError(t, c.Release())

	var s *Stream
	released("Stream.Synchronize", s.Synchronize())
	_, err = s.Query()
	released("Stream.Query", err)
	released("Stream.Wait", s.Wait(time.Millisecond))
	require.NoError(t, s.Destroy())

	var e *Event
	released("Event.Record", e.Record(nil))
	released("Event.Synchronize", e.Synchronize())
	_, err = e.Query()
	released("Event.Query", err)
	released("Event.Wait", e.Wait(time.Millisecond))
	_, err = ElapsedTime(e, e)
	released("ElapsedTime", err)
	require.NoError(t, e.Destroy())

	var m *Module
	_, err = m.Function("k")
	released("Module.Function", err)
	_, _, err = m.Global("g")
	released("Module.Global", err)
	require.NoError(t, m.Unload())

	released("LaunchKernel", c.LaunchKernel(nil, Dim3{X: 1}, Dim3{X: 1}, 0, nil))
	f := &Function{name: "k"}
	released("LaunchKernel with a nil context", c.LaunchKernel(f, Dim3{X: 1}, Dim3{X: 1}, 0, nil, uint32(1)))
	require.Equal(t, "", (*Function)(nil).Name())
	_, err = c.MemAlloc(1)
	require.True(t, strings.Contains(err.Error(), "Context.MemAlloc"), "error names the method: %v", err)
}
