package cuda

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// kernelsPTX holds three hand-written kernels (write_index, echo,
// wait_flag) in PTX ISA 7.0 for sm_80, which the driver JIT-compiles for any
// newer GPU. kernelsSM90 is the same file assembled by ptxas for sm_90.
//
//go:embed testdata/kernels.ptx
var kernelsPTX []byte

//go:embed testdata/kernels_sm90.cubin
var kernelsSM90 []byte

const gpuWait = 10 * time.Second

func TestGPUDevice(t *testing.T) {
	d := gpuDevice(t)
	n, err := DeviceCount()
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 1)
	name, err := d.Name()
	require.NoError(t, err)
	require.NotEmpty(t, name)
	mem, err := d.TotalMem()
	require.NoError(t, err)
	require.Greater(t, mem, uint64(1<<30))
	major, minor, err := d.ComputeCapability()
	require.NoError(t, err)
	require.GreaterOrEqual(t, major, 7)
	uva, err := d.UnifiedAddressing()
	require.NoError(t, err)
	require.True(t, uva, "64-bit Linux GPUs use unified addressing")
	dmabuf, err := d.DMABufSupported()
	require.NoError(t, err)
	rdma, err := d.GPUDirectRDMASupported()
	require.NoError(t, err)
	order, err := d.Attribute(AttrGPUDirectRDMAWritesOrdering)
	require.NoError(t, err)
	ver, err := DriverVersion()
	require.NoError(t, err)
	require.Greater(t, ver, 11000)

	busID, err := d.PCIBusID()
	require.NoError(t, err)
	addr, err := d.PCIAddress()
	require.NoError(t, err)
	require.Equal(t, busID, addr.String(), "cuDeviceGetPCIBusId agrees with the PCI attributes")
	t.Logf("%s sm_%d%d %d MiB bus %s driver %d dmabuf=%v gdr=%v rdma-writes-ordering=%d",
		name, major, minor, mem>>20, busID, ver, dmabuf, rdma, order)

	// The same device by bus id, in the other accepted spellings.
	forms := []string{busID, strings.ToUpper(busID)}
	if addr.Domain == 0 {
		forms = append(forms, strings.ToUpper(busID[len("0000:"):]), "0000"+strings.ToUpper(busID))
	}
	for _, f := range forms {
		got, err := DeviceByPCIBusID(f)
		require.NoError(t, err, f)
		require.Equal(t, d.Ordinal(), got.Ordinal(), f)
	}
	_, err = DeviceByPCIBusID("ffff:ff:1f.7")
	require.Error(t, err)
	var ce *Error
	require.True(t, errors.As(err, &ce), "a driver error: %v", err)

	_, err = DeviceGet(n)
	require.ErrorIs(t, err, ErrorInvalidDevice)

	nm, err := GetErrorName(ErrorOutOfMemory)
	require.NoError(t, err)
	require.Equal(t, "CUDA_ERROR_OUT_OF_MEMORY", nm)
	txt, err := GetErrorString(ErrorOutOfMemory)
	require.NoError(t, err)
	require.NotEmpty(t, txt)
	require.Contains(t, (&Error{Op: "x", Result: ErrorOutOfMemory}).Error(), txt, "errors carry the driver's text")
}

func TestGPUMemoryRoundTrip(t *testing.T) {
	c := newCtx(t)
	const n = 1 << 20
	p, err := c.MemAlloc(n)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.MemFree(p)) }()
	q, err := c.MemAlloc(n)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.MemFree(q)) }()
	require.Equal(t, 2, c.Live().DeviceAllocs)

	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i*7 + i>>8)
	}
	require.NoError(t, c.MemcpyHtoD(p, src))
	require.NoError(t, c.MemcpyDtoD(q, p, n))
	got := make([]byte, n)
	require.NoError(t, c.MemcpyDtoH(got, q))
	require.True(t, bytes.Equal(src, got), "HtoD, DtoD, DtoH round trip")

	// MemsetD32 on a sub-range, MemsetD8 on another.
	require.NoError(t, c.MemsetD32(q+256, 0xa5a5c3c3, 64))
	require.NoError(t, c.MemsetD8(q+1024, 0x5e, 100))
	require.NoError(t, c.MemcpyDtoH(got, q))
	for i := 0; i < 64; i++ {
		require.Equal(t, uint32(0xa5a5c3c3), binary.LittleEndian.Uint32(got[256+4*i:]), "word %d", i)
	}
	require.Equal(t, bytes.Repeat([]byte{0x5e}, 100), got[1024:1124])
	require.Equal(t, src[:256], got[:256], "bytes before the memset untouched")
	require.Equal(t, src[1124:], got[1124:], "bytes after the memset untouched")

	free, total, err := c.MemGetInfo()
	require.NoError(t, err)
	require.Less(t, free, total)

	// Free is idempotent.
	require.NoError(t, c.MemFree(q))
	require.NoError(t, c.MemFree(q))
	require.Equal(t, 1, c.Live().DeviceAllocs)

	_, err = c.MemAlloc(1 << 62)
	require.ErrorIs(t, err, ErrorOutOfMemory)
	require.Contains(t, err.Error(), "cuMemAlloc_v2")
}

func TestGPUPinnedMappedHost(t *testing.T) {
	c := newCtx(t)
	const n = 64 << 10
	h, err := c.MemAllocHost(n, HostAllocPortable|HostAllocDeviceMap)
	require.NoError(t, err)
	defer func() {
		require.NoError(t, c.MemFreeHost(h))
		require.NoError(t, c.MemFreeHost(h), "second free is a no-op")
	}()
	host := unsafe.Slice((*byte)(h), n)
	for i := range host {
		host[i] = byte(i)
	}
	dp, err := c.HostGetDevicePointer(h)
	require.NoError(t, err)
	require.NotZero(t, dp)
	typ, err := c.PointerMemoryType(DevPtr(uintptr(h)))
	require.NoError(t, err)
	require.Equal(t, MemoryTypeHost, typ)
	require.False(t, c.IsDevicePointer(uintptr(h)))

	// The GPU reads what the CPU wrote: copy device-side from the mapping
	// into device memory and back.
	d, err := c.MemAlloc(n)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.MemFree(d)) }()
	require.NoError(t, c.MemcpyDtoD(d, dp, n))
	got := make([]byte, n)
	require.NoError(t, c.MemcpyDtoH(got, d))
	require.Equal(t, host, got)

	// The CPU sees what the GPU wrote through the device address.
	require.NoError(t, c.MemsetD32(dp, 0x11223344, n/4))
	require.NoError(t, c.Synchronize())
	for i := 0; i < n/4; i += 1024 {
		require.Equal(t, uint32(0x11223344), *(*uint32)(unsafe.Add(h, 4*i)))
	}
}

// mmapPage returns one anonymous page outside the Go heap.
func mmapPage(t *testing.T) (unsafe.Pointer, uintptr) {
	t.Helper()
	size := os.Getpagesize()
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, syscall.Munmap(b)) })
	return unsafe.Pointer(&b[0]), uintptr(size)
}

func TestGPUHostRegister(t *testing.T) {
	c := newCtx(t)
	p, size := mmapPage(t)
	page := unsafe.Slice((*byte)(p), size)
	for i := range page {
		page[i] = byte(255 - i)
	}
	require.NoError(t, c.MemHostRegister(p, size, HostRegisterPortable|HostRegisterDeviceMap))
	require.Equal(t, 1, c.Live().HostRegistrations)
	err := c.MemHostRegister(p, size, HostRegisterPortable|HostRegisterDeviceMap)
	require.ErrorIs(t, err, ErrorHostMemoryAlreadyRegistered)
	dp, err := c.HostGetDevicePointer(p)
	require.NoError(t, err)
	d, err := c.MemAlloc(size)
	require.NoError(t, err)
	require.NoError(t, c.MemcpyDtoD(d, dp, size))
	got := make([]byte, size)
	require.NoError(t, c.MemcpyDtoH(got, d))
	require.Equal(t, page, got, "the GPU reads the registered page")
	require.NoError(t, c.MemFree(d))
	require.NoError(t, c.MemHostUnregister(p))
	require.NoError(t, c.MemHostUnregister(p), "second unregister is a no-op")

	// IOMEMORY on an ordinary RAM page: the flag is meant for PCIe BAR
	// mappings (a NIC doorbell page). Record what this driver does.
	err = c.MemHostRegister(p, size, HostRegisterPortable|HostRegisterDeviceMap|HostRegisterIOMemory)
	if err == nil {
		dp, gerr := c.HostGetDevicePointer(p)
		t.Logf("IOMEMORY registration of a RAM page succeeded; device pointer %#x (%v)", uintptr(dp), gerr)
		require.NoError(t, c.MemHostUnregister(p))
	} else {
		var e *Error
		require.True(t, errors.As(err, &e), "a CUDA error: %v", err)
		require.Equal(t, "cuMemHostRegister_v2", e.Op)
		t.Logf("IOMEMORY registration of a RAM page fails: %v", err)
		require.Equal(t, 0, c.Live().HostRegistrations, "a failed registration is not tracked")
	}
}

func TestGPUPointerAttributes(t *testing.T) {
	c := newCtx(t)
	const n = 2 << 20
	p, err := c.MemAlloc(n)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.MemFree(p)) }()

	typ, err := c.PointerMemoryType(p + 100)
	require.NoError(t, err)
	require.Equal(t, MemoryTypeDevice, typ)
	require.True(t, c.IsDevicePointer(uintptr(p+100)))
	dp, err := c.PointerGetAttribute(PointerAttrDevicePointer, p+100)
	require.NoError(t, err)
	require.Equal(t, uint64(p+100), dp)
	start, size, err := c.PointerRange(p + 4096)
	require.NoError(t, err)
	require.Equal(t, p, start)
	require.Equal(t, uintptr(n), size)
	base, size2, err := c.MemGetAddressRange(p + 4096)
	require.NoError(t, err)
	require.Equal(t, p, base)
	require.Equal(t, uintptr(n), size2)
	ord, err := c.PointerGetAttribute(PointerAttrDeviceOrdinal, p)
	require.NoError(t, err)
	require.Equal(t, uint64(c.Device().Ordinal()), ord)

	require.NoError(t, c.PointerSetSyncMemops(p, true))
	v, err := c.PointerGetAttribute(PointerAttrSyncMemops, p)
	require.NoError(t, err)
	require.Equal(t, uint64(1), v)

	var local uint64
	require.False(t, c.IsDevicePointer(uintptr(unsafe.Pointer(&local))), "Go memory is not device memory")
	if typ, err := c.PointerMemoryType(DevPtr(uintptr(unsafe.Pointer(&local)))); err == nil {
		require.NotEqual(t, MemoryTypeDevice, typ, "pageable Go memory")
	}
}

func TestGPUDMABuf(t *testing.T) {
	c := newCtx(t)
	ok, err := c.Device().DMABufSupported()
	require.NoError(t, err)
	const n = 2 << 20
	p, err := c.MemAlloc(n)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.MemFree(p)) }()

	_, err = c.MemGetHandleForAddressRange(p+1, n-4096)
	require.ErrorIs(t, err, ErrorInvalidValue, "misaligned range refused before the driver")
	if !ok {
		t.Skip("CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0 on this device/driver")
	}
	require.Zero(t, uintptr(p)%uintptr(os.Getpagesize()), "a 2 MiB allocation is page aligned")
	fd, err := c.MemGetHandleForAddressRange(p, n)
	require.NoError(t, err)
	require.GreaterOrEqual(t, fd, 0)
	var st syscall.Stat_t
	require.NoError(t, syscall.Fstat(fd, &st), "the fd is open")
	require.NoError(t, syscall.Close(fd))
}

func loadKernels(t *testing.T, c *Context) *Module {
	t.Helper()
	m, err := c.ModuleLoadData(kernelsPTX)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Unload()) })
	return m
}

func TestGPUModuleLaunch(t *testing.T) {
	c := newCtx(t)
	m := loadKernels(t, c)
	f, err := m.Function("write_index")
	require.NoError(t, err)
	require.Equal(t, "write_index", f.Name())
	const n = 1000
	out, err := c.MemAlloc(4 * 1024)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.MemFree(out)) }()
	require.NoError(t, c.MemsetD32(out, 0xffffffff, 1024))
	require.NoError(t, c.LaunchKernel(f, Dim3{X: 4}, Dim3{X: 256}, 0, nil, out, uint32(5000), uint32(n)))
	require.NoError(t, c.Synchronize())
	got := make([]byte, 4*1024)
	require.NoError(t, c.MemcpyDtoH(got, out))
	for i := 0; i < 1024; i++ {
		want := uint32(0xffffffff)
		if i < n {
			want = uint32(5000 + i)
		}
		require.Equal(t, want, binary.LittleEndian.Uint32(got[4*i:]), "element %d", i)
	}

	_, err = m.Function("no_such_kernel")
	require.ErrorIs(t, err, ErrorNotFound)

	_, err = c.ModuleLoadData([]byte(".version 7.0\n.target sm_80\n.address_size 64\nthis is not ptx\n"))
	require.ErrorIs(t, err, ErrorInvalidPTX)
	var e *Error
	require.True(t, errors.As(err, &e))
	require.NotEmpty(t, e.Detail, "the JIT log explains the failure")
	t.Logf("bad PTX: %v", err)

	require.ErrorIs(t, c.LaunchKernel(f, Dim3{X: 1}, Dim3{X: 1}, 0, nil, out, 1, uint32(1)), ErrBadArgument)
}

func TestGPUCubin(t *testing.T) {
	c := newCtx(t)
	major, minor, err := c.Device().ComputeCapability()
	require.NoError(t, err)
	if major != 9 || minor != 0 {
		t.Skipf("the embedded cubin is sm_90; device is sm_%d%d", major, minor)
	}
	m, err := c.ModuleLoadData(kernelsSM90)
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Unload()) }()
	f, err := m.Function("write_index")
	require.NoError(t, err)
	out, err := c.MemAlloc(4)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.MemFree(out)) }()
	require.NoError(t, c.LaunchKernel(f, Dim3{X: 1}, Dim3{X: 32}, 0, nil, out, uint32(77), uint32(1)))
	got := make([]byte, 4)
	require.NoError(t, c.MemcpyDtoH(got, out))
	require.Equal(t, uint32(77), binary.LittleEndian.Uint32(got))
}

// TestGPULaunchArgumentTypes proves the marshalling of every argument type
// against a kernel that stores its parameters back.
func TestGPULaunchArgumentTypes(t *testing.T) {
	c := newCtx(t)
	m := loadKernels(t, c)
	f, err := m.Function("echo")
	require.NoError(t, err)
	out, err := c.MemAlloc(48)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.MemFree(out)) }()
	require.NoError(t, c.MemsetD8(out, 0, 48))
	st := make([]byte, 16)
	binary.LittleEndian.PutUint32(st[0:], 0x01020304)
	binary.LittleEndian.PutUint32(st[4:], 0xa0b0c0d0)
	binary.LittleEndian.PutUint64(st[8:], 0x1122334455667788)
	require.NoError(t, c.LaunchKernel(f, Dim3{X: 1}, Dim3{X: 1}, 0, nil,
		out, uint8(0xab), uint16(0xbeef), uint32(0xdeadbeef), uint64(0x0102030405060708),
		float32(3.25), float64(-1e300), st))
	require.NoError(t, c.Synchronize())
	got := make([]byte, 48)
	require.NoError(t, c.MemcpyDtoH(got, out))
	le := binary.LittleEndian
	require.Equal(t, uint32(0xab), le.Uint32(got[0:]))
	require.Equal(t, uint32(0xbeef), le.Uint32(got[4:]))
	require.Equal(t, uint32(0xdeadbeef), le.Uint32(got[8:]))
	require.Equal(t, float32(3.25), math.Float32frombits(le.Uint32(got[12:])))
	require.Equal(t, uint64(0x0102030405060708), le.Uint64(got[16:]))
	require.Equal(t, -1e300, math.Float64frombits(le.Uint64(got[24:])))
	require.Equal(t, st, got[32:48])
}

func TestGPUStreamsEvents(t *testing.T) {
	c := newCtx(t)
	s, err := c.NewStream(StreamNonBlocking)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Destroy()); require.NoError(t, s.Destroy()) }()
	start, err := c.NewEvent(EventDefault)
	require.NoError(t, err)
	defer func() { require.NoError(t, start.Destroy()) }()
	end, err := c.NewEvent(EventDefault)
	require.NoError(t, err)
	defer func() { require.NoError(t, end.Destroy()) }()

	const n = 4 << 20
	d, err := c.MemAlloc(n)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.MemFree(d)) }()
	h, err := c.MemAllocHost(n, HostAllocPortable)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.MemFreeHost(h)) }()
	host := unsafe.Slice((*byte)(h), n)
	for i := range host {
		host[i] = byte(i % 251)
	}

	require.NoError(t, start.Record(s))
	require.NoError(t, c.MemcpyHtoDAsync(d, h, n, s))
	require.NoError(t, c.MemsetD32Async(d+n/2, 0xcafef00d, n/8, s))
	require.NoError(t, c.MemsetD8Async(d, 0x42, 16, s))
	require.NoError(t, c.MemcpyDtoDAsync(d+n-4096, d, 16, s))
	require.NoError(t, c.MemcpyDtoHAsync(h, d, n, s))
	require.NoError(t, end.Record(s))
	require.NoError(t, end.Wait(gpuWait))
	require.NoError(t, s.Wait(gpuWait))
	require.NoError(t, s.Synchronize())
	require.NoError(t, end.Synchronize())
	done, err := s.Query()
	require.NoError(t, err)
	require.True(t, done)
	done, err = end.Query()
	require.NoError(t, err)
	require.True(t, done)

	require.Equal(t, bytes.Repeat([]byte{0x42}, 16), host[:16])
	require.Equal(t, byte(16%251), host[16])
	require.Equal(t, uint32(0xcafef00d), binary.LittleEndian.Uint32(host[n/2:]))
	require.Equal(t, uint32(0xcafef00d), binary.LittleEndian.Uint32(host[n-4:]))
	require.Equal(t, bytes.Repeat([]byte{0x42}, 16), host[n-4096:n-4096+16])

	el, err := ElapsedTime(start, end)
	require.NoError(t, err)
	require.Greater(t, el, time.Duration(0))
	require.Less(t, el, gpuWait)
	t.Logf("4 MiB HtoD + memsets + 4 MiB DtoH: %v", el)
}

// TestGPUWaitTimeout launches a kernel that spins on a flag in mapped host
// memory: Stream.Wait must time out while the flag is clear and succeed once
// the CPU sets it; the kernel's report proves the GPU read the CPU's store.
func TestGPUWaitTimeout(t *testing.T) {
	c := newCtx(t)
	m := loadKernels(t, c)
	f, err := m.Function("wait_flag")
	require.NoError(t, err)
	h, err := c.MemAllocHost(4096, HostAllocPortable|HostAllocDeviceMap)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.MemFreeHost(h)) }()
	flag := (*[2]uint32)(h)
	flag[0], flag[1] = 0, 0
	dp, err := c.HostGetDevicePointer(h)
	require.NoError(t, err)
	s, err := c.NewStream(StreamNonBlocking)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Destroy()) }()

	// The kernel gives up after 5M reads (a few seconds over PCIe) so that a
	// failing test cannot hang the process.
	require.NoError(t, c.LaunchKernel(f, Dim3{X: 1}, Dim3{X: 1}, 0, s, dp, uint32(5_000_000)))
	err = s.Wait(50 * time.Millisecond)
	require.ErrorIs(t, err, ErrTimeout)
	done, err := s.Query()
	require.NoError(t, err)
	require.False(t, done)
	(*atomicU32)(unsafe.Pointer(&flag[0])).store(1)
	require.NoError(t, s.Wait(gpuWait))
	require.Equal(t, uint32(1), (*atomicU32)(unsafe.Pointer(&flag[1])).load(), "the kernel saw the CPU's flag")
}

func TestGPUContextRules(t *testing.T) {
	d := gpuDevice(t)
	c, err := d.PrimaryContext()
	require.NoError(t, err)
	p, err := c.MemAlloc(4096)
	require.NoError(t, err)
	require.ErrorIs(t, c.Release(), ErrInUse, "release refuses with live allocations")

	// Do runs code with the context current and may call methods inside.
	require.NoError(t, c.Do(func() error {
		q, err := c.MemAlloc(4096)
		if err != nil {
			return err
		}
		return c.MemFree(q)
	}))
	sentinel := errors.New("from fn")
	require.ErrorIs(t, c.Do(func() error { return sentinel }), sentinel)

	// Concurrent use from many goroutines (run with -race).
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			q, err := c.MemAlloc(64 << 10)
			if err != nil {
				errs <- err
				return
			}
			defer func() { _ = c.MemFree(q) }()
			if err := c.MemsetD32(q, uint32(g), 16<<10); err != nil {
				errs <- err
				return
			}
			b := make([]byte, 4)
			if err := c.MemcpyDtoH(b, q+4*1000); err != nil {
				errs <- err
				return
			}
			if v := binary.LittleEndian.Uint32(b); v != uint32(g) {
				errs <- fmt.Errorf("goroutine %d read %d", g, v)
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	require.NoError(t, c.MemFree(p))
	require.Equal(t, Live{}, c.Live())
	require.NoError(t, c.Release())
	require.NoError(t, c.Release(), "second release is a no-op")
	_, err = c.MemAlloc(16)
	require.ErrorIs(t, err, ErrReleased)
}

func TestGPUDevices(t *testing.T) {
	d := gpuDevice(t)
	list, err := Devices()
	require.NoError(t, err)
	require.NotEmpty(t, list)
	info, err := d.Info()
	require.NoError(t, err)
	require.Equal(t, list[d.Ordinal()], info)
	bus, err := d.PCIBusID()
	require.NoError(t, err)
	require.Equal(t, bus, info.BusID)
	name, err := d.Name()
	require.NoError(t, err)
	require.Equal(t, name, info.Name)
	node, err := d.NUMANode()
	require.NoError(t, err)
	require.Equal(t, node, info.NUMANode)
	require.GreaterOrEqual(t, info.NUMANode, -1)
	for _, i := range list {
		t.Logf("GPU %d: %s %s %s, %d MiB, NUMA node %d", i.Ordinal, i.BusID, i.Name, i.Arch(), i.TotalMem>>20, i.NUMANode)
	}
}

// structEchoSource stores every field of a wqe_args passed by value, and
// the scalars after it, as 64-bit words.
const structEchoSource = wqeArgsC + `
extern "C" __global__ void echo_struct(unsigned long long *out, wqe_args p, float f, unsigned long long ptr, signed char c)
{
	out[0] = p.opcode;
	out[1] = p.lane;
	out[2] = p.key;
	out[3] = p.addr;
	out[4] = p.sizes[0] | (unsigned)p.sizes[1] << 16 | (unsigned long long)p.sizes[2] << 32;
	out[5] = (long long)p.inner.a;
	out[6] = __double_as_longlong(p.inner.b);
	out[7] = p.last;
	out[8] = __float_as_uint(f);
	out[9] = ptr;
	out[10] = (long long)c;
}
`

// TestGPUNVRTCLaunch compiles a kernel with NVRTC for the device's own
// architecture (sm_90 on an H100) and as PTX for the driver's JIT, launches
// both with a Go struct and named scalar types, and checks every field the
// kernel saw.
func TestGPUNVRTCLaunch(t *testing.T) {
	c := newCtx(t)
	needNVRTC(t)
	dev := c.Device()
	native, err := Compile(structEchoSource, "echo_struct.cu", &CompileOptions{Device: &dev})
	require.NoError(t, err)
	info, err := dev.Info()
	require.NoError(t, err)
	t.Logf("NVRTC compiled echo_struct.cu for %s on a %s (%s): %d bytes of cubin", native.Arch, info.Name, info.Arch(), len(native.CUBIN))
	// PTX for the oldest architecture this NVRTC still targets (CUDA 13 dropped
	// compute_70), so the driver's JIT has to translate it for the GPU.
	archs, err := NVRTCSupportedArchs()
	require.NoError(t, err)
	require.NotEmpty(t, archs)
	oldest := fmt.Sprintf("compute_%d", slices.Min(archs))
	ptxOnly, err := Compile(structEchoSource, "echo_struct.cu", &CompileOptions{Arch: oldest})
	require.NoError(t, err, oldest)

	w := wqeArgs{Opcode: 8, Lane: 0x1234, Key: 0xabcdef01, Addr: 0x7f00_0000_1000, Sizes: [3]uint16{1, 2, 3}, Last: true}
	w.Inner.A, w.Inner.B = -5, 1.25
	for _, img := range []*Compiled{native, ptxOnly} {
		m, err := c.ModuleLoadData(img.Image())
		require.NoError(t, err, img.Arch)
		f, err := m.Function("echo_struct")
		require.NoError(t, err)
		out, err := Alloc[uint64](c, 11)
		require.NoError(t, err)
		require.NoError(t, out.Zero())
		require.NoError(t, c.LaunchKernel(f, Dim3{X: 1}, Dim3{X: 1}, 0, nil, out.Ptr(), w, temp(2.5), devAddr(0x1234_5678), level(-7)))
		require.NoError(t, c.Synchronize())
		got, err := out.Elements()
		require.NoError(t, err)
		require.Equal(t, []uint64{8, 0x1234, 0xabcdef01, 0x7f00_0000_1000, 1 | 2<<16 | 3<<32,
			uint64(math.MaxUint64 - 4), math.Float64bits(1.25), 1, uint64(math.Float32bits(2.5)), 0x1234_5678,
			uint64(math.MaxUint64 - 6)}, got, "arch %s", img.Arch)
		require.NoError(t, out.Free())
		require.NoError(t, m.Unload())
	}
}

// TestGPUCopyStructField copies into and out of a []byte that slices an
// array field of a struct holding Go pointers, and across several staging
// pieces. Handing such memory to cgo directly panics the process ("Go pointer
// to unpinned Go pointer"), which is how the emulator's WQE reads from GPU
// rings crashed before the copies were staged.
func TestGPUCopyStructField(t *testing.T) {
	c := newCtx(t)
	var holder struct {
		next *int
		name string
		buf  [4096]byte
		tail []byte
	}
	holder.next, holder.name, holder.tail = new(int), "pointers live here", make([]byte, 1)
	n := uintptr(3*stageSize + 100)
	d, err := c.MemAlloc(n)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.MemFree(d)) }()
	for i := range holder.buf {
		holder.buf[i] = byte(i * 7)
	}
	require.NoError(t, c.MemcpyHtoD(d+DevPtr(stageSize-8), holder.buf[:]), "HtoD from a struct field")
	clear(holder.buf[:])
	require.NoError(t, c.MemcpyDtoH(holder.buf[:], d+DevPtr(stageSize-8)), "DtoH into a struct field")
	for i := range holder.buf {
		require.Equal(t, byte(i*7), holder.buf[i], "byte %d", i)
	}
	big := make([]byte, n)
	for i := range big {
		big[i] = byte(i ^ i>>9)
	}
	require.NoError(t, c.MemcpyHtoD(d, big))
	back := make([]byte, n)
	require.NoError(t, c.MemcpyDtoH(back, d))
	require.True(t, bytes.Equal(big, back), "a copy of several staging pieces round-trips")
	require.NotNil(t, holder.next)
}

// TestGPUBuffer round-trips typed data through a Buffer and checks its
// bounds and lifetime against the driver.
func TestGPUBuffer(t *testing.T) {
	c := newCtx(t)
	type rec struct {
		A uint32
		B float32
		C int64
	}
	b, err := Alloc[rec](c, 1000)
	require.NoError(t, err)
	require.Equal(t, uintptr(16000), b.Size())
	start, size, err := c.PointerRange(b.Ptr())
	require.NoError(t, err)
	require.Equal(t, b.Ptr(), start)
	require.Equal(t, b.Size(), size)
	require.NoError(t, b.Zero())
	src := make([]rec, 10)
	for i := range src {
		src[i] = rec{uint32(i), float32(i) / 2, -int64(i)}
	}
	require.NoError(t, b.Write(990, src))
	all, err := b.Elements()
	require.NoError(t, err)
	require.Equal(t, src, all[990:])
	require.Equal(t, make([]rec, 990), all[:990])
	require.ErrorIs(t, b.Write(991, src), ErrorInvalidValue, "past the end")
	// The raw typed copies agree with the buffer.
	p, err := b.At(995)
	require.NoError(t, err)
	one := make([]rec, 1)
	require.NoError(t, CopyFromDevice(c, one, p))
	require.Equal(t, src[5], one[0])
	require.NoError(t, b.Free())
	require.NoError(t, b.Free())
	require.ErrorIs(t, b.Read(0, one), ErrReleased)
}

// TestGPULiveObjects checks that a live allocation, module and stream are
// reported with the stack that created them, and vanish once freed.
func TestGPULiveObjects(t *testing.T) {
	c := newCtx(t)
	p, err := c.MemAlloc(4096)
	require.NoError(t, err)
	m := loadKernelsNoCleanup(t, c)
	s, err := c.NewStream(StreamDefault)
	require.NoError(t, err)
	found := map[string]bool{}
	for _, o := range LiveObjects() {
		if strings.Contains(o.Stack, "cuda.TestGPULiveObjects") {
			found[o.Kind] = true
		}
	}
	require.Equal(t, map[string]bool{"context": true, "device memory": true, "module": true, "stream": true}, found)
	require.Contains(t, LeakReport(), fmt.Sprintf("4096 bytes at %#x, created at:", uintptr(p)))
	require.NoError(t, s.Destroy())
	require.NoError(t, m.Unload())
	require.NoError(t, c.MemFree(p))
	for _, o := range LiveObjects() {
		if o.Kind != "context" { // newCtx's context is released at cleanup
			require.NotContains(t, o.Stack, "cuda.TestGPULiveObjects", "%s still listed", o.Kind)
		}
	}
}

func loadKernelsNoCleanup(t *testing.T, c *Context) *Module {
	t.Helper()
	m, err := c.ModuleLoadData(kernelsPTX)
	require.NoError(t, err)
	return m
}
