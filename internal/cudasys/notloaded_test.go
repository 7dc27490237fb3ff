package cudasys

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWrappersWithoutDriver calls every driver wrapper while no driver
// library is bound (this package's tests never bind a real one): each
// returns NotLoaded instead of calling through a NULL entry point.
func TestWrappersWithoutDriver(t *testing.T) {
	var (
		c  Ctx
		s  Stream
		e  Event
		m  Module
		f  Function
		rc int32
	)
	calls := map[string]func() int32{
		"Init":          func() int32 { return Init(0) },
		"DriverVersion": func() int32 { _, rc = DriverVersion(); return rc },
		"DeviceCount":   func() int32 { _, rc = DeviceCount(); return rc },
		"DeviceGet":     func() int32 { _, rc = DeviceGet(0); return rc },
		"DeviceByPCIBusID": func() int32 {
			_, rc = DeviceByPCIBusID("0000:00:00.0")
			return rc
		},
		"DevicePCIBusID":    func() int32 { _, rc = DevicePCIBusID(0); return rc },
		"DeviceName":        func() int32 { _, rc = DeviceName(0); return rc },
		"DeviceTotalMem":    func() int32 { _, rc = DeviceTotalMem(0); return rc },
		"DeviceAttribute":   func() int32 { _, rc = DeviceAttribute(0, 1); return rc },
		"PrimaryCtxRetain":  func() int32 { _, rc = PrimaryCtxRetain(0); return rc },
		"PrimaryCtxRelease": func() int32 { return PrimaryCtxRelease(0) },
		"CtxPush":           func() int32 { return CtxPush(c) },
		"CtxPop":            func() int32 { return CtxPop() },
		"CtxSynchronize":    func() int32 { return CtxSynchronize(c) },
		"MemGetInfo":        func() int32 { _, _, rc = MemGetInfo(c); return rc },
		"MemAlloc":          func() int32 { _, rc = MemAlloc(c, 1); return rc },
		"MemFree":           func() int32 { return MemFree(c, 1) },
		"MemHostAlloc":      func() int32 { _, rc = MemHostAlloc(c, 1, 0); return rc },
		"MemFreeHost":       func() int32 { return MemFreeHost(c, nil) },
		"HostGetDevicePointer": func() int32 {
			_, rc = HostGetDevicePointer(c, nil)
			return rc
		},
		"MemHostRegister":   func() int32 { return MemHostRegister(c, nil, 1, 0) },
		"MemHostUnregister": func() int32 { return MemHostUnregister(c, nil) },
		"MemcpyHtoD":        func() int32 { return MemcpyHtoD(c, 1, nil, 1) },
		"MemcpyDtoH":        func() int32 { return MemcpyDtoH(c, nil, 1, 1) },
		"MemcpyDtoD":        func() int32 { return MemcpyDtoD(c, 1, 2, 1) },
		"MemcpyHtoDAsync":   func() int32 { return MemcpyHtoDAsync(c, 1, nil, 1, s) },
		"MemcpyDtoHAsync":   func() int32 { return MemcpyDtoHAsync(c, nil, 1, 1, s) },
		"MemcpyDtoDAsync":   func() int32 { return MemcpyDtoDAsync(c, 1, 2, 1, s) },
		"MemsetD8":          func() int32 { return MemsetD8(c, 1, 0, 1) },
		"MemsetD32":         func() int32 { return MemsetD32(c, 1, 0, 1) },
		"MemsetD8Async":     func() int32 { return MemsetD8Async(c, 1, 0, 1, s) },
		"MemsetD32Async":    func() int32 { return MemsetD32Async(c, 1, 0, 1, s) },
		"PointerGetAttribute": func() int32 {
			_, rc = PointerGetAttribute(c, 2, 1)
			return rc
		},
		"PointerSetAttributeU32": func() int32 { return PointerSetAttributeU32(c, 6, 1, 1) },
		"MemGetAddressRange": func() int32 {
			_, _, rc = MemGetAddressRange(c, 1)
			return rc
		},
		"ModuleLoadData": func() int32 {
			_, _, rc = ModuleLoadData(c, []byte("x"), 64)
			return rc
		},
		"ModuleUnload": func() int32 { return ModuleUnload(c, m) },
		"ModuleGetFunction": func() int32 {
			_, rc = ModuleGetFunction(c, m, "k")
			return rc
		},
		"ModuleGetGlobal": func() int32 {
			_, _, rc = ModuleGetGlobal(c, m, "g")
			return rc
		},
		"LaunchKernel": func() int32 {
			return LaunchKernel(c, f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, []byte{1, 0, 0, 0}, []int{0})
		},
		"StreamCreate":      func() int32 { _, rc = StreamCreate(c, 0); return rc },
		"StreamDestroy":     func() int32 { return StreamDestroy(c, s) },
		"StreamSynchronize": func() int32 { return StreamSynchronize(c, s) },
		"StreamQuery":       func() int32 { return StreamQuery(c, s) },
		"EventCreate":       func() int32 { _, rc = EventCreate(c, 0); return rc },
		"EventDestroy":      func() int32 { return EventDestroy(c, e) },
		"EventRecord":       func() int32 { return EventRecord(c, e, s) },
		"EventSynchronize":  func() int32 { return EventSynchronize(c, e) },
		"EventQuery":        func() int32 { return EventQuery(c, e) },
		"EventElapsedTime": func() int32 {
			_, rc = EventElapsedTime(c, e, e)
			return rc
		},
	}
	for name, call := range calls {
		require.Equal(t, int32(NotLoaded), call(), "%s without a driver", name)
	}
	require.False(t, HasDmabuf())
	_, rc = MemGetDmabufFD(c, 0, 4096)
	require.Equal(t, int32(resultNotSupported), rc, "the optional entry point is reported missing first")
	_, rc = ErrorName(0)
	require.Equal(t, int32(3), rc, "the error-name calls answer CUDA_ERROR_NOT_INITIALIZED")
}

// TestNVRTCWithoutLibrary calls the NVRTC forwarding functions while no
// NVRTC is bound: each returns NVRTCNotLoaded.
func TestNVRTCWithoutLibrary(t *testing.T) {
	if nvrtc != nil {
		t.Skip("an NVRTC library was loaded by an earlier test of this process")
	}
	_, _, rc := NVRTCVersion()
	require.Equal(t, int32(NVRTCNotLoaded), rc)
	_, ok, _ := NVRTCSupportedArchs()
	require.False(t, ok, "the optional entry points are reported missing")
	out := NVRTCCompile(&NVRTCInput{Source: "x", Name: "x.cu", Options: []string{"-G"}})
	require.Equal(t, "nvrtcCreateProgram", out.Op)
	require.Equal(t, int32(NVRTCNotLoaded), out.Result)
}
